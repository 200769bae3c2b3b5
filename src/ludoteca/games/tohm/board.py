"""TOHM in the terminal: the coloured board (Rich) and the texts of its events.

Found by convention by :mod:`ludoteca.play.boards`: ``draw(state, data)`` draws the position
``data`` (what the viewer may see of ``state``); ``TEXTS`` maps an event kind to a format
string over the event's fields (texts live at the edge, never in the engine).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ludoteca.core.drawing import die_text, seat, status
from ludoteca.core.game import State
from ludoteca.core.i18n import N_, _

TEXTS: dict[str, str] = {
    "placed": "",  # the move's own line says it
    "removed": "",
    "moved": "",
    "pass": N_("player {seat} passes"),
    "tris": N_("a tris of player {owner} ({line} {cells}): the tokens go back to the supply; "
               "{trophies_left} trophies left"),
}
"""Texts of TOHM's events (kinds and fields: the engine's docstring); "" hides a kind."""


def draw(state: State, data: dict[str, Any]) -> RenderableType:
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
        info.append(" " + _("player {seat}: {tokens} tokens in supply, {trophies} trophies").format(
            seat=i, tokens=sup, trophies=tro) + "  ")
        info.append("🏆" * tro if tro else "")
        info.append("\n")
    info.append(_("trophies left: {count}").format(count=data["trophies_left"]))
    return Group(grid, info, status(data, die_text(data)))
