"""exactly in the terminal: the coloured board (Rich) and the texts of its events.

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

COINS = ("5", "10", "20", "50")

TEXTS: dict[str, str] = {
    "rolloff_tie": N_("players {seats} tie with {face} and roll again"),
    "starter": N_("player {seat} takes the first turn"),
    "coin_moved": "",  # the move's own line says it
    "pass": N_("player {seat} cannot move and passes"),
    "euro": N_("exactly 100 cents: a euro for player(s) {seats} (euros now {euros})"),
    "new_round": N_("a new round: every coin back to the bank; player {seat} rolls first"),
    "start_coins": N_("each player takes a {coin}-cent coin from the bank"),
}
"""Texts of exactly's events (kinds and fields: the engine's docstring); "" hides a kind."""


def draw(state: State, data: dict[str, Any]) -> RenderableType:
    """The bank, each player's pile, its total and euros, the die."""
    table = Table(title="exactly — " + _("collect exactly 100 cents"), title_style="bold")
    table.add_column(_("pile"))
    for c in COINS:
        table.add_column(f"{c}c", justify="right")
    table.add_column(_("total"), justify="right")
    table.add_column(_("euros"))
    bank = data["bank"]
    table.add_row(_("bank"), *(str(bank[c]) for c in COINS), "", "")
    for i, pile in enumerate(data["piles"]):
        total = sum(int(c) * pile[c] for c in COINS)
        style = "bold green" if total == 100 else ("red" if total > 150 else "")
        name = Text(_("player {seat}").format(seat=i) + " ")
        name.append_text(seat(i))
        table.add_row(name, *(str(pile[c]) for c in COINS), Text(f"{total}c", style=style),
                      Text("€" * data["euros"][i], style="bold yellow"))
    return Group(table, status(data, die_text(data)))
