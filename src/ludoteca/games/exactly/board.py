"""exactly in the terminal: the coloured board (Rich) and the texts of its events.

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
from ludoteca.games.exactly import CAP, MOST_COINS, TARGET, WIN_EUROS

COINS = ("5", "10", "20", "50")

TEXTS: dict[str, str] = {
    "rolloff_tie": N_("{seats}: a tie at {face}, they roll again"),
    "starter": N_("first turn: {seat}"),
    "coin_moved": "",  # the move's own line says it
    "pass": N_("{seat}: no coin can move, the turn passes"),
    "euro": N_("{seats}: exactly {target} cents, one euro more (euros now {euros})"),
    "new_round": N_("a new round: every coin back to the bank; {seat} rolls first"),
    "start_coins": N_("each player takes a {coin}-cent coin from the bank"),
}
"""Texts of exactly's events (kinds and fields: the engine's docstring); "" hides a kind."""

SEAT_FIELDS = frozenset({"seat", "seats"})
"""The event fields that hold a seat (or a list of seats): the terminal shows the player's name."""

PHASES: dict[str, str] = {"start_roll": N_("who starts"), "roll": N_("roll"), "move": N_("move a coin"),
                          "over": N_("game over")}

END_REASONS: dict[str, str] = {"three_euros": N_("enough euros to win"),
                               "turn_limit": N_("the turn limit was reached")}


def _player(names: Sequence[str] | None, i: Any) -> str:
    if isinstance(i, int) and names and 0 <= i < len(names):
        return names[i]
    return _("player {seat}").format(seat=i)


def _pile(names: Sequence[str] | None, pile: Any) -> str:
    return _("bank") if pile == "bank" else _player(names, pile)


def action_text(state: State, action: Action, names: Sequence[str] | None = None) -> str | None:
    """An action in a player's words (``state``: the position before it), without who made it."""
    data = state.action_to_json(action)
    if "roll" in data:
        roller = state.to_json().get("to_move")
        face = data["roll"]
        shown = _("question mark") if face == "?" else (_("blank") if face == 0 else f"{face}")
        return _("{name}: die {face}").format(name=_player(names, roller), face=shown)
    if "pass" in data:
        return _("pass")
    return _("a {coin}-cent coin moved: {source} → {target}").format(
        coin=data["coin"], source=_pile(names, data["from"]), target=_pile(names, data["to"]))


def rule_numbers(data: dict[str, Any]) -> tuple[int, int, int]:
    """The table's target, cap and euros to win as its position says them (a key the position leaves
    out is RULES.md's value: ``rule_keys`` in the engine)."""
    return (int(data.get("target", TARGET)), int(data.get("cap", CAP)),
            int(data.get("euros_to_win", WIN_EUROS)))


def draw(state: State, data: dict[str, Any], names: Sequence[str] | None = None) -> RenderableType:
    """The bank, each player's pile, its total and euros, the die; the title says the table's target,
    cap and euros to win (options ``target``, ``cap``, ``euros_to_win``)."""
    target, cap, to_win = rule_numbers(data)
    table = Table(title="exactly — " + _("collect exactly {target} cents").format(target=target), title_style="bold")
    rules = _("euros to win: {euros}").format(euros=to_win)
    if cap < MOST_COINS:
        rules += "; " + _("a pile above {cap} cents takes no coin").format(cap=cap)
    table.add_column(_("pile"))
    for c in COINS:
        table.add_column(f"{c}c", justify="right")
    table.add_column(_("total"), justify="right")
    table.add_column(_("euros"))
    bank = data["bank"]
    table.add_row(_("bank"), *(str(bank[c]) for c in COINS), "", "")
    for i, pile in enumerate(data["piles"]):
        total = sum(int(c) * pile[c] for c in COINS)
        style = "bold green" if total == target else ("red" if total > cap else "")
        name = Text(_player(names, i) + " ")
        name.append_text(seat(i))
        table.add_row(name, *(str(pile[c]) for c in COINS), Text(f"{total}c", style=style),
                      Text(("€" * data["euros"][i] + f" {data['euros'][i]}/{to_win}").strip(),
                           style="bold yellow"))
    return Group(table, Text(rules), status(data, die_text(data), names=names, phases=PHASES))
