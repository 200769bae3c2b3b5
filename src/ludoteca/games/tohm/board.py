"""TOHM in the terminal: the coloured board (Rich) and the texts of its events.

Found by convention by :mod:`ludoteca.play.boards`: ``draw(state, data)`` draws the position
``data`` (what the viewer may see of ``state``); ``TEXTS`` maps an event kind to a format
string over the event's fields (texts live at the edge, never in the engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ludoteca.core.drawing import die_text, seat, status
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_, _

TEXTS: dict[str, str] = {
    "placed": "",  # the move's own line says it
    "removed": "",
    "moved": "",
    "pass": N_("{seat}: nothing possible with this die, the turn passes"),
    "tris": N_("{owner}: a tris (row or column through {cells}), the tokens go back to the supply; "
               "trophies left: {trophies_left}"),
}
"""Texts of TOHM's events (kinds and fields: the engine's docstring); "" hides a kind."""

SEAT_FIELDS = frozenset({"seat", "owner"})
"""The event fields that hold a seat: the terminal shows the player's name."""

PHASES: dict[str, str] = {"roll": N_("roll"), "act": N_("move"), "over": N_("game over")}

END_REASONS: dict[str, str] = {"all_trophies_given": N_("every trophy is taken"),
                               "turn_limit": N_("the turn limit was reached")}


FACE_WORDS: dict[str, str] = {"nothing": N_("nothing, the turn passes"), "remove": N_("remove a token"),
                              "move": N_("move a token"), "place": N_("place a token on an empty cell of its number"),
                              "place_anywhere": N_("place a token on any empty cell")}
"""What a die face does, by the words of the position's ``faces`` (written when the die is not RULES.md's)."""


def _player(names: Sequence[str] | None, i: Any) -> str:
    if isinstance(i, int) and names and 0 <= i < len(names):
        return names[i]
    return _("player {seat}").format(seat=i)


def action_text(state: State, action: Action, names: Sequence[str] | None = None) -> str | None:
    """An action in a player's words (``state``: the position before it), without who made it."""
    data = state.action_to_json(action)
    if "roll" in data:
        return _("{name}: die {face}").format(name=_player(names, state.to_json().get("to_move")), face=data["roll"])
    if "pass" in data:
        return _("pass")
    if "place" in data:
        r, c = data["place"]
        return _("token placed on row {row}, column {col}").format(row=r, col=c)
    if "remove" in data:
        r, c = data["remove"]
        return _("token removed from row {row}, column {col}").format(row=r, col=c)
    (r, c), (r2, c2) = data["move"]
    return _("token moved from row {row}, column {col} to row {row2}, column {col2}").format(
        row=r, col=c, row2=r2, col2=c2)


def draw(state: State, data: dict[str, Any], names: Sequence[str] | None = None) -> RenderableType:
    """The grid of numbers with each owner's mark, supplies, trophies, the die."""
    grid = Table(show_header=True, show_lines=True, title="TOHM", title_style="bold")
    grid.add_column("")
    for c in range(data["cols"]):
        grid.add_column(str(c), justify="center")
    for r in range(data["rows"]):
        cells = []
        for c in range(data["cols"]):
            owner = data["board"][r][c]
            number = Text(f"{data['layout'][r][c]}", style="dim")
            cells.append(number if owner is None else Text.assemble(seat(owner), number))
        grid.add_row(str(r), *cells)
    info = Text()
    for i, (sup, tro) in enumerate(zip(data["supply"], data["trophies"], strict=False)):
        info.append_text(seat(i))
        info.append(" " + _("{name}: tokens in supply: {tokens}, trophies: {trophies}").format(
            name=_player(names, i), tokens=sup, trophies=tro) + "  ")
        info.append("🏆" * tro if tro else "")
        info.append("\n")
    total = data["trophies_left"] + sum(data["trophies"])
    info.append(_("trophies left: {count} of {total}").format(count=data["trophies_left"], total=total))
    for face, kind in enumerate(data.get("faces") or (), start=1):
        info.append("\n" + _("die {face}: {effect}").format(face=face, effect=_(FACE_WORDS.get(kind, kind))))
    return Group(grid, info, status(data, die_text(data), names=names, phases=PHASES))
