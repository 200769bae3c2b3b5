"""Shared test fixtures and helpers."""

from __future__ import annotations

import random
from collections.abc import Iterator

import ludoteca
from ludoteca.core.chance import random_action
from ludoteca.core.game import State
from tests.ci_required import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (CI: no skips)

# Every game with every player count it supports (EXAGON without clock for random play).
PLAYER_COUNTS = {"exactly": range(2, 7), "tri": range(2, 5), "tohm": range(2, 6), "exagon": range(2, 6)}
GAME_CASES = [(g, n) for g in ludoteca.GAMES for n in PLAYER_COUNTS[g]]


def options_for(game: str, players: int) -> dict:
    opts: dict = {"players": players}
    if game == "exagon":
        opts["clock"] = None
    return opts


def random_states(state: State, rng: random.Random, max_actions: int = 3000) -> Iterator[tuple[State, object]]:
    """Play ``state`` randomly, yielding ``(state_before, action)`` for each action."""
    for _ in range(max_actions):
        if state.is_terminal():
            return
        action = random_action(state, rng)
        yield state, action
        state.apply_action(action)
