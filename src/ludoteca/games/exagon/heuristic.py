"""EXAGON heuristic: many connections, bonuses used well, no gift to the next player.

The player plans its whole turn greedily and judges where the turn would end:

* a placement that wins (perfect fit, or the last tile) is played at once, and so is giving away
  one's last tile (with a bonus, to an opponent holding one tile: an emptied hand wins);
* otherwise the placements touching the most tiles come first — two connections keep the turn
  going, three to five also earn bonuses — and among equals the tile that is hardest to place
  later (an Exagon side, few numbers that occur on the table's open sides) goes first, a Jolly
  tile is kept for later;
* with a bonus in hand and an opponent down to one tile, a tile is *given* to them (their last
  tile would win their next turn); otherwise a bonus lets a one-connection tile keep the turn
  going;
* ``stop`` is played deliberately when every remaining placement would end the turn in a worse
  position — above all one where the next player wins at once (a hole surrounded by six tiles
  that a tile of theirs fits, or their last tile) — and never by accident while a placement
  with two or more connections is available.

Under ``matching="lenient"`` a placement's connections are its matching sides, so they belong to
each tile and rotation, not to the cell: they are read from the state's ``links`` (kept beside the
open cells' candidates), and the same rules rank them.

Candidates are ranked by a cheap key; the best few are played out to the end of the turn
(greedy) and the next player's turn is simulated the same way, so a move that hands them a
perfect fit or a last-tile finish is seen and avoided. Hands are public in EXAGON, so this
reads nothing hidden (the tiles set aside never enter play).
"""

from __future__ import annotations

import math
import random

from ludoteca.core.choice import best_of
from ludoteca.core.game import Action
from ludoteca.games.exagon import ExagonGame, ExagonState

TOP_K = 10
"""Candidates of the root decision played out to the end of the turn (and the reply)."""
WIN = 1000.0
VALUE_K = 0.6
"""Sharpness of :func:`value`: winning odds per tile of difference."""


def decode(g: ExagonGame, a: int) -> tuple[int, int]:
    """(tile index, cell) of a placement action."""
    t, rest = divmod(a - g.place0, g.n_cells * 6)
    return t, rest // 6


def conn(g: ExagonGame, board: dict[int, tuple[int, int]], c: int) -> int:
    """The tiles next to cell ``c`` (the connections of any tile placed there under strict matching)."""
    return sum(1 for _, nc in g.nbrs[c] if nc in board)


def difficulties(g: ExagonGame) -> list[float]:
    """How hard each tile is to place later: Exagon sides hurt, a Jolly helps (cached on the game)."""
    d = g._h_difficulty
    if d is None:
        d = []
        for sides in g.sides:
            x = sum(1 for s in sides if s == 11)
            j = sum(1 for s in sides if s == 10)
            distinct = len({s for s in sides if s <= 9})
            d.append(0.6 * x - 0.5 * j - 0.03 * distinct)
        g._h_difficulty = d
    return d


def difficulty(g: ExagonGame, t: int) -> float:
    """How hard tile ``t`` is to place later."""
    return difficulties(g)[t]


def placements(s: ExagonState, p: int) -> list[tuple[int, int, int, int]]:
    """Every placement of ``p`` as (action, tile, cell, connections)."""
    g = s.game
    owner = s.owner
    board = s.board
    out = []
    if g.lenient:  # the connections of each placement are kept beside the cell's candidates
        links = s.links
        for c, lst in s.cand.items():
            for (t, a), k in zip(lst, links[c], strict=True):
                if owner[t] == p:
                    out.append((a, t, c, k))
        return out
    for c, lst in s.cand.items():
        k = -1
        for t, a in lst:
            if owner[t] == p:
                if k < 0:
                    k = conn(g, board, c)
                out.append((a, t, c, k))
    return out


def _key(g: ExagonGame, hand_size: int, bonus: int, t: int, k: int) -> float:
    if k == 6 or hand_size == 1:
        return WIN
    go_on = k >= g.go_on or bonus > 0
    return (10.0 if go_on else 0.0) + 1.5 * min(k, 5) + difficulty(g, t)


def _give_target(s: ExagonState, p: int) -> list[int]:
    return [q for q in range(s.game.num_players) if q != p and len(s.hands[q]) == 1]


def greedy_action(s: ExagonState, p: int) -> Action:
    """The greedy choice of ``p`` (to move in ``s``, opening or turn): a winning placement,
    else a give when an opponent is on one tile, else the placement touching the most tiles
    (the hardest tile first), else stop (or pass)."""
    g = s.game
    hand = s.hands[p]
    diff = difficulties(g)
    if not s.table:  # opening tile: the hardest tile goes first
        t = max(hand, key=lambda t: (diff[t], -t))
        return g.place0 + (t * g.n_cells + g.origin) * 6
    going = s.phase == 2 and s.placed > 0
    if going and s.bonus:
        to = _give_target(s, p)
        if to:  # with one tile left, giving it away wins at once (RULES.md section 4, End)
            t = max(hand, key=lambda t: (diff[t], -t))
            return g.give0 + t * g.num_players + to[0]
    owner = s.owner
    board = s.board
    nbrs = g.nbrs
    one = len(hand) == 1
    best = None
    bk = -1
    bd = -math.inf
    if g.lenient:  # the connections belong to each placement: the first winning one, else the most
        links = s.links
        for c, lst in s.cand.items():
            for (t, a), k in zip(lst, links[c], strict=True):
                if owner[t] != p:
                    continue
                if k == 6 or one:
                    return a
                d = diff[t]
                if k > bk or (k == bk and d > bd):
                    best, bk, bd = a, k, d
        return (g.stop_action if going else g.pass_action) if best is None else best
    for c, lst in s.cand.items():
        k = -1
        for t, a in lst:
            if owner[t] != p:
                continue
            if k < 0:
                k = 0
                for _, nc in nbrs[c]:
                    if nc in board:
                        k += 1
                if k == 6 or one:
                    return a
            d = diff[t]
            if k > bk or (k == bk and d > bd):
                best, bk, bd = a, k, d
    if best is None:
        return g.stop_action if going else g.pass_action
    return best


def play_turn(s: ExagonState, p: int, limit: int = 40) -> ExagonState:
    """Play ``p``'s turn greedily on ``s`` (modified in place) until it passes on."""
    for _ in range(limit):
        if s.phase == 3 or s.to_move != p or s.phase == 0:
            break
        turn = s.turn
        s.apply_unchecked(greedy_action(s, p))  # a legal action: the fast path
        if s.turn != turn:
            break
    return s


def immediate_win(s: ExagonState, q: int) -> bool:
    """Whether ``q`` (to move in ``s``) can win with one placement."""
    if s.phase == 3 or s.phase == 0:
        return False
    one = len(s.hands[q]) == 1
    return any(one or k == 6 for _a, _t, _c, k in placements(s, q))


def judge_end(s: ExagonState, me: int) -> float:
    """The position after my turn ended (someone else to move): simulate the next turn."""
    if s.phase == 3:
        return WIN * (2 * s.returns()[me] - 1)
    n = s.game.num_players
    q = s.to_move
    r = play_turn(s.clone(), q)
    if r.phase == 3:
        return WIN * (2 * r.returns()[me] - 1) * 0.9
    mine = len(r.hands[me])
    others = [len(r.hands[x]) for x in range(n) if x != me]
    v = float(min(others) - mine)
    # later opponents who could finish at once count too
    for x in range(n):
        if x != me and x != q and len(r.hands[x]) == 1:
            v -= 2.0
    # my own chances next turn: room to place
    v += 0.05 * min(10, len({c for _a, _t, c, _k in placements(r, me)}))
    return v


def evaluate_action(s: ExagonState, me: int, a: Action) -> float:
    t = s.clone()
    t.apply_unchecked(a)  # a legal candidate: the fast path
    if t.phase == 3:
        return WIN * (2 * t.returns()[me] - 1)
    if t.to_move == me and t.phase == 2 and t.turn == s.turn:
        play_turn(t, me)
    return judge_end(t, me)


def candidates(s: ExagonState, limit: int = TOP_K) -> list[Action]:
    """The most promising actions by the cheap key (wins, connections, gives, stop), best
    first; ``stop`` is always among them when legal."""
    g = s.game
    p = s.to_move
    legal = s.legal_actions()
    hand = s.hands[p]
    scored: list[tuple[float, int]] = []
    if not s.table:
        for a in legal:
            t = decode(g, a)[0]
            scored.append((difficulty(g, t), a))
    else:
        board = s.board
        links = {a: k for a, _t, _c, k in placements(s, p)} if g.lenient else None
        for a in legal:
            if a < g.give0:
                t, c = decode(g, a)
                k = conn(g, board, c) if links is None else links[a]
                scored.append((_key(g, len(hand), s.bonus, t, k), a))
            elif a < g.stop_action:
                # a give is rare and important; giving away one's last tile wins at once
                scored.append((WIN if len(hand) == 1 else 50.0, a))
            else:
                scored.append((5.0, a))  # stop: always considered
    scored.sort(key=lambda x: (-x[0], x[1]))
    out = [a for _, a in scored[:limit]]
    if g.stop_action in legal and g.stop_action not in out:
        out[-1] = g.stop_action
    return out


def choose(state: ExagonState, rng: random.Random) -> Action:
    me = state.current_player()
    return best_of(candidates(state), lambda a: evaluate_action(state, me, a), rng)


def rollout(state: ExagonState, rng: random.Random) -> Action:
    """Light policy for MCTS rollouts: the greedy choice."""
    return greedy_action(state, state.to_move)


def value(state: ExagonState) -> list[float]:
    """Winning chances per seat: a turn in progress is finished greedily, then tiles left
    (fewer is better) and whether the next player can win at once."""
    if state.phase == 3:
        return state.returns()
    n = state.game.num_players
    if state.phase == 0:
        return [1.0 / n] * n
    if state.phase == 2 and state.placed:
        state = play_turn(state.clone(), state.to_move)
        if state.phase == 3:
            return state.returns()
    s = [-float(len(h)) for h in state.hands]
    q = state.to_move
    if immediate_win(state, q):
        s[q] += 6.0
    else:
        s[q] += 1.0  # the player to move places next
    m = max(s)
    e = [math.exp(VALUE_K * (x - m)) for x in s]
    tot = sum(e)
    return [x / tot for x in e]
