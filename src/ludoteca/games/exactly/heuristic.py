"""exactly heuristic: reach 100 exactly, never hand a pile to an opponent, mind the cap.

A position is read through each player's *scoring faces*: the die faces with which that
player could bring their own pile to exactly 100 cents on their roll (adding a coin of the
missing value from any other pile, or sending away a coin of the excess value; ``?`` works
whenever any value does). The cap matters: a pile above 150 cents accepts no coin, so its
owner can only come down by sending coins away, and nobody can spoil it by adding one.

The player looks one move ahead with an expectation over the next player's die: for each of
its moves it lets the next player answer every face (scoring if they can, otherwise making
the move best for them by the same static reading), and keeps the move with the best average.
A move that makes us score is taken at once (a winning one above all); a move that leaves an
opponent exactly at 100 is never made unless it scores for us too.
"""

from __future__ import annotations

import math
import random

from ludoteca.core.choice import best_of
from ludoteca.core.game import Action
from ludoteca.games.exactly import MOVE, OVER, QUESTION, ROLL, VALUES, ExactlyState

EURO = 1.0
MINE_W = 0.8
"""Weight of my scoring chance on my next roll in the static reading."""
OTHER_W = 1.0
"""Weight of an opponent's scoring chance (the next one rolls before I can react)."""


def scoring_faces(state: ExactlyState, seat: int) -> int:
    """How many of the die's faces (six on RULES.md's die) let ``seat`` bring their own pile to exactly
    the target (100 cents)."""
    g = state.game
    P = g.piles
    target = g.target
    cap = g.cap
    counts = state.counts
    pile = seat + 1
    total = state.totals[pile]
    n = 0
    any_ok = False
    for v in range(4):
        d = VALUES[v]
        ok = False
        if total - d == target and counts[v * P + pile]:
            ok = True
        elif total + d == target and total <= cap:
            base = v * P
            for f in range(P):
                if f != pile and counts[base + f]:
                    ok = True
                    break
        if ok:
            any_ok = True
            n += g.die[5 - v]  # the faces of that value (50, 20, 10, 5 are faces 2..5)
    return n + g.die[QUESTION] if any_ok else n  # "?" works when any value does


def static(state: ExactlyState, me: int) -> float:
    """The position for ``me`` when ``state`` is at the start of someone's roll."""
    if state.phase == OVER:
        return 100.0 * (state.returns()[me] - 0.5)
    n = state.game.num_players
    euros = state.euros
    lead = euros[me] - max(euros[p] for p in range(n) if p != me)
    sides = sum(state.game.die)
    last = state.game.euros_to_win - 1
    v = 1.5 * EURO * euros[me] + 0.5 * EURO * lead
    to_move = state.to_move
    for p in range(n):
        f = scoring_faces(state, p) / sides
        if p == me:
            v += MINE_W * f * (1.0 if p == to_move else 0.7)
        else:
            near = 1.0 if euros[p] >= last else 0.8  # an opponent one euro from the win counts more
            v -= OTHER_W * near * f * (1.0 if p == to_move else 0.6)
    return v


def _after(state: ExactlyState, action: Action) -> ExactlyState:
    s = state._copy()  # clone() without the cache of legal actions, which the action resets
    s.apply_unchecked(action)  # a legal action or chance outcome: the fast path
    return s


def _reply_value(s: ExactlyState, me: int) -> float:
    """Expected static value for ``me`` after the next player (to roll in ``s``) answers."""
    if s.phase != ROLL:  # over, or not at a roll (cannot happen after a move)
        return static(s, me)
    total = 0.0
    for face, prob in s.chance_outcomes():
        r = _after(s, face)
        if r.phase != MOVE:  # a 0: the turn passes
            total += prob * static(r, me)
            continue
        q = r.current_player()
        best_q = -math.inf
        best_me = 0.0
        for b in r.legal_actions():
            t = _after(r, b)
            vq = static(t, q)
            if vq > best_q:
                best_q, best_me = vq, static(t, me)
        total += prob * best_me
    return total


def choose(state: ExactlyState, rng: random.Random) -> Action:
    me = state.current_player()
    legal = state.legal_actions()
    deep = len(legal) <= 40 and state.game.num_players <= 4
    score = (lambda a: _reply_value(_after(state, a), me)) if deep else (lambda a: static(_after(state, a), me))
    return best_of(legal, score, rng)


def value(state: ExactlyState) -> list[float]:
    """Winning chances per seat: a softmax of euros and scoring chances."""
    if state.phase == OVER:
        return state.returns()
    n = state.game.num_players
    sides = sum(state.game.die)
    s = []
    for p in range(n):
        f = scoring_faces(state, p) / sides
        s.append(state.euros[p] + 0.5 * f * (1.0 if p == state.to_move else 0.6))
    m = max(s)
    e = [math.exp(1.5 * (x - m)) for x in s]
    tot = sum(e)
    return [x / tot for x in e]
