"""TOHM heuristic: complete your lines, block and break the others', punish the leader.

A position is read per player through the cells where one more of their tokens would make a
tris (a *threat*), and the die faces that would let them fill one on their next turn: a
3–6 whose cell is free (with a token in supply), or a 2 moving a spare token of theirs in.
The player picks the move whose resulting position maximises

    trophies lead  +  my chance to score next time  -  the others' chances to score first

(the next player, who rolls before anyone can react, counts most; the leader counts more than
the others). With a 1 this removes the most dangerous token of the leader; with a 2 it either
completes a line of ours or breaks the best line of an opponent; with 3–6 it places where it
scores, blocks a threat, or builds towards two threats at once.
"""

from __future__ import annotations

import math
import random

from ludoteca.core.choice import best_of
from ludoteca.core.game import Action
from ludoteca.games.tohm import ANY, MOVE, OVER, PLACE, TohmGame, TohmState

NEXT_W = 1.0
"""Weight of the next player's chance to score (they roll before anyone can react)."""
LATER_W = 0.7
"""Weight of the later opponents' chances (someone may break their line first)."""
MINE_W = 0.55
"""Weight of my own chance to score on my next turn (every opponent can react first)."""
BUILD_W = 0.04
"""Per pair of own tokens in a free window: material for future threats."""


def _run_through(g: TohmGame, b: list[int], i: int, p: int) -> bool:
    """Whether a token of ``p`` on cell ``i`` makes a tris (``b[i]`` is ignored)."""
    length = g.tris_length
    n = 1
    for x in g.left[i]:
        if b[x] != p:
            break
        n += 1
    for x in g.right[i]:
        if b[x] != p:
            break
        n += 1
    if n >= length:
        return True
    n = 1
    for x in g.up[i]:
        if b[x] != p:
            break
        n += 1
    for x in g.down[i]:
        if b[x] != p:
            break
        n += 1
    return n >= length


def threat_cells(g: TohmGame, b: list[int], p: int) -> list[int]:
    """Empty cells where one more token of ``p`` makes a tris."""
    return [i for i, o in enumerate(b) if o < 0 and _run_through(g, b, i, p)]


def score_chance(g: TohmGame, b: list[int], supply: list[int], p: int) -> tuple[float, int]:
    """(probability that ``p`` scores on their next roll if the board stays, threat cells)."""
    cells = threat_cells(g, b, p)
    if not cells:
        return 0.0, 0
    faces = 0
    kinds = g.face_kind
    if supply[p]:
        numbers = {g.numbers[i] for i in cells}
        faces += sum(1 for d in range(1, 7) if (kinds[d] == PLACE and d in numbers) or kinds[d] == ANY)
    movers = sum(1 for d in range(1, 7) if kinds[d] == MOVE)
    if not movers:
        return faces / 6.0, len(cells)
    # a 2: move a token of p from elsewhere onto a threat cell, keeping the run
    own = [i for i, o in enumerate(b) if o == p]
    ok = False
    for e in cells:
        for f in own:
            b[f] = -1
            good = _run_through(g, b, e, p)
            b[f] = p
            if good:
                ok = True
                break
        if ok:
            break
    if ok:
        faces += movers
    return faces / 6.0, len(cells)


_WINDOWS: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}
"""The windows of a tris's length (three cells by default) in a line, by (rows, cols, length)."""


def _windows(g: TohmGame) -> list[tuple[int, ...]]:
    rows, cols, length = g.rows, g.cols, g.tris_length
    wins = _WINDOWS.get((rows, cols, length))
    if wins is None:
        wins = []
        for r in range(rows):
            for c in range(cols - length + 1):
                i = r * cols + c
                wins.append(tuple(i + k for k in range(length)))
        for r in range(rows - length + 1):
            for c in range(cols):
                i = r * cols + c
                wins.append(tuple(i + k * cols for k in range(length)))
        _WINDOWS[rows, cols, length] = wins
    return wins


def _builds(g: TohmGame, b: list[int], n: int) -> list[int]:
    """Per seat: windows of a tris's length holding one empty cell and the rest their tokens (two
    of three by default)."""
    out = [0] * n
    for w in _windows(g):
        owners = [b[x] for x in w if b[x] >= 0]
        if len(owners) == len(w) - 1 and all(o == owners[0] for o in owners):
            out[owners[0]] += 1
    return out


def scores(state: TohmState) -> list[float]:
    """Per seat: trophies plus the weighted chances to score soon (the position's promise)."""
    g = state.game
    n = g.num_players
    b = state.board
    supply = state.supply
    to_move = state.to_move
    builds = _builds(g, b, n)
    out = []
    for p in range(n):
        chance, _ = score_chance(g, b, supply, p)
        order = (p - to_move) % n  # 0: rolls next
        w = NEXT_W if order == 0 else LATER_W if order < n - 1 else MINE_W
        out.append(state.trophies[p] + w * chance + BUILD_W * builds[p])
    return out


def evaluate_for(state: TohmState, me: int) -> float:
    """How good the position is for ``me``: my promise against the strongest opponent's."""
    if state.phase == OVER:
        return 100.0 * state.returns()[me]
    s = scores(state)
    others = [s[p] for p in range(len(s)) if p != me]
    best = max(others)
    # the leader matters most; the rest of the field a little
    rest = (sum(others) - best) / max(1, len(others) - 1) if len(others) > 1 else 0.0
    left = state.trophies_left
    urgency = 1.0 + 2.0 / (1 + left)  # late in the game every trophy decides more
    return urgency * (s[me] - 0.8 * best - 0.2 * rest)


def choose(state: TohmState, rng: random.Random) -> Action:
    me = state.current_player()

    def score(a: Action) -> float:
        s = state._copy()  # clone() without the cache of legal actions, which the action resets
        s.apply_unchecked(a)  # a legal action: the fast path
        return evaluate_for(s, me)

    return best_of(state.legal_actions(), score, rng)


def value(state: TohmState) -> list[float]:
    """Winning chances per seat: a softmax of trophies plus promise."""
    if state.phase == OVER:
        return state.returns()
    s = scores(state)
    k = 1.2 + 3.0 / (1 + state.trophies_left)
    m = max(s)
    e = [math.exp(k * (x - m)) for x in s]
    tot = sum(e)
    return [x / tot for x in e]


def rollout(state: TohmState, rng: random.Random) -> Action:
    """Light policy for MCTS rollouts: complete a tris of ours, else block the next threat of
    someone else, else play at random."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    g = state.game
    b = state.board
    p = state.to_move
    kind = g.face_kind[state.roll or 0]  # the die of phase act (never None at a decision)
    n = g.n_cells
    if kind in (PLACE, ANY):
        place0 = g.place0
        for a in legal:
            if _run_through(g, b, a - place0, p):
                return a
        for q in range(g.num_players):
            if q != p:
                for a in legal:
                    if _run_through(g, b, a - place0, q):
                        return a
    elif kind == MOVE:
        cells = threat_cells(g, b, p)
        if cells:
            move0 = g.move0
            for a in legal:
                f, t = divmod(a - move0, n)
                if t in cells and b[f] == p:
                    b[f] = -1
                    ok = _run_through(g, b, t, p)
                    b[f] = p
                    if ok:
                        return a
    return legal[rng.randrange(len(legal))]
