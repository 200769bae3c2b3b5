"""Hints for the cross-game tests (tests/conftest.py ``hint``; docs/architecture.md, "Adding a game")."""

from __future__ import annotations

from typing import Any

GUIDE_SHOT_STEP = 2
"""The guide's step photographed by the browser tests (a tris)."""
CLIENT_GAME: dict[str, Any] = {"seed": 7, "players": 2, "steps": 900, "options": {}}
"""The seeded random game whose log the browser client's texts are checked on (tests/test_game_clients.py)."""
