"""Finding games by name (see :mod:`ludoteca.core.registry`: the games are discovered)."""

from __future__ import annotations

from ludoteca.core.registry import game_class, games, load_game

GAMES: tuple[str, ...] = games()
"""The installed games' names, in catalogue order."""

__all__ = ["GAMES", "game_class", "games", "load_game"]
