"""Finding games by name: every package under ``ludoteca.games`` is a game.

A game package defines one :class:`~ludoteca.core.game.Game` subclass in its ``__init__``; its
``name`` is how users and records call it, and ``catalogue_order`` places it in listings. Adding
a fifth game is writing its package: nothing here lists the games. The packages are imported
by name at run time (``importlib``), so ``core`` depends on no game statically.

A package whose name begins with an underscore is an *example* (``games/_example``: the worked case
of docs/architecture.md, "Adding a game"): it is found only when the environment variable
:data:`EXAMPLES_VARIABLE` is set to ``1`` — the tests set it (``tests/conftest.py``), so the whole
cross-game suite runs on the example too — and never in a user's lobby, ``ludoteca rules`` or lab.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from functools import cache
from typing import Any

from ludoteca.core.game import Game
from ludoteca.core.i18n import _

GAMES_PACKAGE = "ludoteca.games"
EXAMPLES_VARIABLE = "LUDOTECA_EXAMPLE_GAMES"
"""Set to ``1``, the registry also finds the example games (packages named ``_…`` under ``games/``)."""


def examples_included() -> bool:
    """True when the example games are found too (:data:`EXAMPLES_VARIABLE` is ``1``)."""
    return os.environ.get(EXAMPLES_VARIABLE, "").strip() == "1"


def _classes() -> dict[str, type[Game]]:
    return _discover(examples_included())


@cache
def _discover(examples: bool) -> dict[str, type[Game]]:
    package = importlib.import_module(GAMES_PACKAGE)
    found: list[type[Game]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if not info.ispkg or (info.name.startswith("_") and not examples):
            continue
        module = importlib.import_module(f"{GAMES_PACKAGE}.{info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Game) and value is not Game
                    and value.__module__ == module.__name__ and getattr(value, "name", None)):
                found.append(value)
    found.sort(key=lambda cls: (cls.catalogue_order, cls.name))
    return {cls.name: cls for cls in found}


def games() -> tuple[str, ...]:
    """The names of the installed games, in catalogue order."""
    return tuple(_classes())


def game_class(name: str) -> type[Game]:
    """The Game class of ``name``; ValueError for an unknown game."""
    key = name.lower() if isinstance(name, str) else name
    classes = _classes()
    if key not in classes:
        raise ValueError(_("unknown game {name}; the games are: {games}").format(
            name=repr(name), games=", ".join(classes)))
    return classes[key]


def load_game(name: str, **options: Any) -> Game:
    """``load_game("tri", players=3, size=5)``: a game with its options validated."""
    return game_class(name)(**options)
