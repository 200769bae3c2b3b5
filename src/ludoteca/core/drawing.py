"""Shared pieces of the coloured terminal boards (Rich) that each game draws in its ``board.py``.

A game's ``games/<name>/board.py`` draws its own position (as python-chess ships ``chess.svg``)
from these helpers; the terminal (``ludoteca.play.boards``) finds that module by convention.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from ludoteca.core.i18n import _

SEAT_COLOURS = ("bold red", "bold blue", "bold green", "bold magenta", "bold yellow", "bold cyan")
SEAT_MARKS = "ABCDEF"


def seat(i: int | None) -> Text:
    """A seat's coloured mark (``A`` for seat 0, ...); a dim ``·`` for nobody."""
    if i is None:
        return Text("·", style="dim")
    return Text(SEAT_MARKS[i % len(SEAT_MARKS)], style=SEAT_COLOURS[i % len(SEAT_COLOURS)])


def status(data: dict[str, Any], extra: str = "") -> Text:
    """The line under a board: turn, phase, who is to move, and ``extra``."""
    t = Text()
    t.append(_("turn {turn}  phase {phase}").format(turn=data.get("turn", 0), phase=data.get("phase")) + "  ")
    to_move = data.get("to_move")
    if isinstance(to_move, int) and not isinstance(to_move, bool):
        t.append(_("to move:") + " ")
        t.append_text(seat(to_move))
        t.append(" (" + _("player {seat}").format(seat=to_move) + ")")
    if extra:
        t.append("  " + extra)
    return t


def die_text(data: dict[str, Any]) -> str:
    """``die: 4`` when the position shows a roll, else ``""``."""
    roll = data.get("roll")
    return _("die: {roll}").format(roll=roll) if roll is not None else ""
