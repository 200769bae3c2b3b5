"""Hints for the cross-game tests (tests/conftest.py ``hint``; docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from typing import Any

PROPERTY_GAMES = 40
"""Random games per player count in the property tests: EXAGON's games are short (about 75 actions) and
its position readers have the most phase-dependent keys."""
VARIANTS: tuple[dict[str, Any], ...] = ({"clock": None}, {"clock": 60}, {"clock": 5})
"""The option sets the property tests cycle through: no hourglass, a long one, a short one."""
MCTS_SMALL = "mcts:iterations=6:cap=3"
"""A small MCTS for behaviour tests (they check legality and determinism, not strength)."""
RANDOM_PLAY_SLOW = True
"""Each random step is slow (the tile placements): the adapters' API checks run fewer cycles."""
GUIDE_SHOT_STEP = 5
"""The guide's step photographed by the browser tests (a perfect fit)."""
CLIENT_GAME: dict[str, Any] = {"seed": 1, "players": 2, "steps": 2000, "options": {"clock": None, "tournament": True}}
"""The seeded random game whose log the browser client's texts are checked on (tests/test_game_clients.py)."""
