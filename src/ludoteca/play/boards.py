"""Coloured terminal boards (Rich): each game draws its own, in ``games/<name>/board.py``.

A game's board module is found by convention next to its engine (``Game.part("board")``). It
provides ``draw(state, data)`` (``data``: the position as the viewer may see it) and may provide
``TEXTS`` (event kind -> format string, see :mod:`ludoteca.play.texts`) and ``REVEALS`` (kinds
of public events that make every earlier secret public, see :class:`ludoteca.play.session.Session`).
A game without one is shown as its ``render()`` text.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ludoteca.core.drawing import seat
from ludoteca.core.game import Game, State

__all__ = ["board", "board_module", "seat"]


def board_module(game: Game) -> ModuleType | None:
    """The ``board`` module beside the game's engine (``<the game's package>.board``), or None."""
    return game.part("board")


def board(state: State, seat_view: int | None = None, everything: bool = False) -> RenderableType:
    """A coloured board for ``state`` as ``seat_view`` may see it (``None``: a spectator).

    Drawn from ``state.observation(seat_view)``, or from the whole position with ``everything``.
    """
    data: dict[str, Any] = state.to_json() if everything else state.observation(seat_view)
    draw = getattr(board_module(state.game), "draw", None)
    if draw is None:
        return Group(Text(state.render()))
    drawn: RenderableType = draw(state, data)
    return drawn
