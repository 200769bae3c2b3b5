"""Hints for the cross-game tests (optional part: tests/conftest.py ``hint`` reads it; without this module
every hint has its default). Pig's games are short and its only options are numbers, so the defaults
would do; the values are written out here to show the hints a game may give."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PROPERTY_GAMES = 12
"""Random games per player count in the property tests (position round trips)."""
VARIANTS: tuple[dict[str, Any], ...] = ({}, {"target": 20})
"""The option sets the property tests cycle through."""
MCTS_SMALL = "mcts:iterations=12:cap=8"
"""A small MCTS for behaviour tests (they check legality and determinism, not strength)."""
SHORT_OPTIONS: dict[int, dict[str, Any]] = {}
"""Options by player count that keep random games short for the slow tests (none needed)."""
RANDOM_PLAY_SLOW = False
"""True when each random step is slow: the adapters' API checks then run fewer cycles."""
GUIDE_SHOT_STEP = 4
"""The guide's step photographed by the browser tests (a bust: a 1 loses the turn's points)."""


def taps(action: Mapping[str, Any]) -> list[str]:
    """The CSS selectors a player taps, in order, to make ``action`` (a decision) on the board: the browser
    tests of the guide play it so (client.js marks each choice with its ``data-cell``)."""
    choice = action["choose"]
    return [f'#board .legal[data-cell="{choice}"]']
