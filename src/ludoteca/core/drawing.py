"""Shared pieces of the coloured terminal boards (Rich) that each game draws in its ``board.py``.

A game's ``games/<name>/board.py`` draws its own position (as python-chess ships ``chess.svg``)
from these helpers; the terminal (``ludoteca.play.boards``) finds that module by convention.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def status(data: dict[str, Any], extra: str = "", names: Sequence[str] | None = None,
           phases: Mapping[str, str] | None = None) -> Text:
    """The line under a board: turn, phase, who is to move, and ``extra``. ``names``: the seats'
    names (else "player N"); ``phases``: the game's texts of its phases (``N_`` marked)."""
    t = Text()
    phase = data.get("phase")
    shown = _(phases[phase]) if phases and isinstance(phase, str) and phase in phases else phase
    t.append(_("turn {turn}  phase {phase}").format(turn=data.get("turn", 0), phase=shown) + "  ")
    to_move = data.get("to_move")
    if isinstance(to_move, int) and not isinstance(to_move, bool) and phase != "over":
        t.append(_("to move:") + " ")
        t.append_text(seat(to_move))
        name = names[to_move] if names and 0 <= to_move < len(names) else _("player {seat}").format(seat=to_move)
        t.append(" (" + name + ")")
    if extra:
        t.append("  " + extra)
    return t


def die_text(data: dict[str, Any]) -> str:
    """``die: 4`` when the position shows a roll, else ``""``."""
    roll = data.get("roll")
    return _("die: {roll}").format(roll=roll) if roll is not None else ""
