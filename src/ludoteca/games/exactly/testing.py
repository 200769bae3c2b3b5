"""Hints for the cross-game tests (tests/conftest.py ``hint``; docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from typing import Any

VARIANTS: tuple[dict[str, Any], ...] = ({"start_coin": "round"}, {"start_coin": "game"}, {"start_coin": "never"})
"""The option sets the property tests cycle through: every way of taking the 5-cent coin."""
GUIDE_SHOT_STEP = 4
"""The guide's step photographed by the browser tests (a euro scored)."""
CLIENT_GAME: dict[str, Any] = {"seed": 3, "players": 3, "steps": 600, "options": {}}
"""The seeded random game whose log the browser client's texts are checked on (tests/test_game_clients.py)."""
