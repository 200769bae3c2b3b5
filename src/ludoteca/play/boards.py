"""Coloured terminal boards (Rich): each game draws its own, in ``games/<name>/board.py``.

A game's board module is found by convention next to its engine (``Game.part("board")``). It
provides ``draw(state, data, names)`` (``data``: the position as the viewer may see it; ``names``:
the players' names) and may provide:

- ``TEXTS`` (event kind -> format string, see :mod:`ludoteca.play.texts`) and ``SEAT_FIELDS``
  (the event fields that hold a seat or a list of seats: shown as the players' names);
- ``REVEALS`` (kinds of public events that make every earlier secret public, see
  :class:`ludoteca.play.session.Session`);
- ``PHASES`` and ``END_REASONS`` (the texts of the position's ``phase`` and of ``end_reason()``);
- ``action_text(state, action, names)``: an action in a player's words (the state before it;
  chance outcomes too); ``GROUPED``: kinds of chance actions told in one line per run
  (``{count}``), such as a deal;
- ``draw`` may also take ``width``, ``height`` (the terminal's) and ``before`` (the position as
  last shown, to mark what changed);
- ``moves_help(state, data, names)``, ``read_move(state, text)`` and ``draw_choices(state,
  actions, names, width)``: short names for moves a person can type instead of the numbered
  list (``read_move`` gives the actions a text means, several when the player must still
  choose, None when it is no short name; ValueError with a message for a person).

``move_name(state, action)`` gives the short name of a move (for ``hint``).
A game without a board module is shown as its ``render()`` text.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
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


def shown(state: State, seat_view: int | None = None, everything: bool = False) -> dict[str, Any]:
    """The position a board draws: ``state.observation(seat_view)``, or all of it."""
    data: dict[str, Any] = state.to_json() if everything else state.observation(seat_view)
    return data


def board(state: State, seat_view: int | None = None, everything: bool = False,
          names: Sequence[str] | None = None, width: int = 80, height: int = 50,
          before: dict[str, Any] | None = None) -> RenderableType:
    """A coloured board for ``state`` as ``seat_view`` may see it (``None``: a spectator), the
    players called ``names`` (default "player N"), for a terminal ``width`` x ``height``;
    ``before``: the position as last shown to the same screen (a board may mark what changed).

    Drawn from ``state.observation(seat_view)``, or from the whole position with ``everything``.
    """
    data = shown(state, seat_view, everything)
    draw = getattr(board_module(state.game), "draw", None)
    if draw is None:
        return Group(Text(state.render()))
    parameters = inspect.signature(draw).parameters
    given = (("names", names), ("width", width), ("height", height), ("before", before))
    extra = {k: v for k, v in given if k in parameters}
    drawn: RenderableType = draw(state, data, **extra)
    return drawn
