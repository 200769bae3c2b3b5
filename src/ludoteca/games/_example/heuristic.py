"""Pig's heuristic (optional part; agents find it with ``Game.part("heuristic")``).

Hold at 20 points in a turn — the classic rule that maximises the points a turn is expected to bank —
or as soon as holding wins. ``choose`` is the ``heuristic`` agent's move, ``value`` the winning chances
MCTS gives a position it stops reading, ``rollout`` the light policy of ``mcts:rollout=heuristic``.
"""

from __future__ import annotations

import math
import random

from ludoteca.core.game import Action

from . import HOLD, OVER, ROLL, PigState  # relative: a copy of the example runs under any folder name

HOLD_AT = 20
"""The turn total at which the heuristic holds."""


def choose(state: PigState, rng: random.Random) -> Action:
    legal = state.legal_actions()
    if HOLD not in legal:
        return legal[0]
    seat = state.to_move
    if state.scores_[seat] + state.turn_total >= state.game.target or state.turn_total >= HOLD_AT:
        return HOLD
    return ROLL


rollout = choose


def value(state: PigState) -> list[float]:
    """Winning chances per seat: a softmax of the points still missing, in tens."""
    if state.phase == OVER:
        return state.returns()
    target = state.game.target
    banked = [float(x) for x in state.scores_]
    banked[state.to_move] += state.turn_total / 2  # half a turn total is as good as banked
    e = [math.exp(-(target - x) / 10.0) for x in banked]
    total = sum(e)
    return [x / total for x in e]
