"""Finding games by name."""

from __future__ import annotations

import importlib
from typing import Any

from ludoteca.core.game import Game

GAMES: tuple[str, ...] = ("exactly", "tri", "tohm", "exagon")

_CLASSES = {
    "exactly": ("ludoteca.games.exactly", "ExactlyGame"),
    "tri": ("ludoteca.games.tri", "TriGame"),
    "tohm": ("ludoteca.games.tohm", "TohmGame"),
    "exagon": ("ludoteca.games.exagon", "ExagonGame"),
}


def game_class(name: str) -> type[Game]:
    """The Game class of ``name``; ValueError for an unknown game."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _CLASSES:
        raise ValueError(f"unknown game {name!r}; the games are: {', '.join(GAMES)}")
    module, cls = _CLASSES[key]
    return getattr(importlib.import_module(module), cls)


def load_game(name: str, **options: Any) -> Game:
    """``load_game("tri", players=3, size=5)``: a game with its options validated."""
    return game_class(name)(**options)
