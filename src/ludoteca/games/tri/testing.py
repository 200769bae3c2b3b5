"""Hints for the cross-game tests (tests/conftest.py ``hint``; docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from typing import Any

PROPERTY_GAMES = 6
"""Random games per player count in the property tests: TRI's games are long."""
MCTS_SMALL = "mcts:iterations=8:cap=4"
"""A small MCTS for behaviour tests (they check legality and determinism, not strength)."""
SHORT_OPTIONS: dict[int, dict[str, Any]] = {3: {"turn_limit": 150}, 4: {"turn_limit": 150}}
"""Random games of three or four players run to about 1000 turns: the slow tests stop them at 150."""
GUIDE_SHOT_STEP = 8
"""The guide's step photographed by the browser tests (a battle)."""
CLIENT_GAME: dict[str, Any] = {"seed": 5, "players": 3, "steps": 900, "options": {}}
"""The seeded random game whose log the browser client's texts are checked on (tests/test_game_clients.py)."""
