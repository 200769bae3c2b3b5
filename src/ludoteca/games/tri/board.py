"""TRI in the terminal: the coloured board (Rich) and the texts of its events.

Found by convention by :mod:`ludoteca.play.boards`: ``draw(state, data)`` draws the position
``data`` (what the viewer may see of ``state``: a battle's secret rolls and cards show as ``?``);
``TEXTS`` maps an event kind to a format string over the event's fields (texts live at the edge,
never in the engine).
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ludoteca.core.drawing import seat, status
from ludoteca.core.game import State
from ludoteca.core.i18n import N_, _

TEXTS: dict[str, str] = {
    "chance (secret)": N_("roll (secret)"),  # what the others see of a battle roll
    "move (secret)": N_("card (secret)"),  # ... and of the attacker's card
    "place": "",  # the move's own line says it
    "expand": "",
    "income": N_("income die {face}: player(s) {seats} gain card {cards}"),
    "attack": N_("player {attacker} attacks {target} held by player {defender}, rolling {dice} die(s)"),
    "battle": N_("battle at {target}: player {attacker} rolled {attacker_roll} + card {attacker_card} = "
                 "{attacker_total}, player {defender} rolled {defender_roll} + card {defender_card} = "
                 "{defender_total}: player {winner} wins"),
    "taken": N_("player {seat} takes {triangle} from player {from}"),
    "void": N_("player {seat} empties player {owner}'s unit on {triangle}"),
    "teleport": N_("player {seat} teleports from square {square} to {to}"),
    "square_closed": N_("player {seat} closes square {square}"),
    "tiebreak": N_("players {seats} are tied weakest: a draw decides who is out"),
    "eliminated": N_("player {seat} is out ({why}); {units} units leave the board"),
    "elimination_income": N_("player(s) {seats} gain card(s) {cards}"),
}
"""Texts of TRI's events (kinds and fields: the engine's docstring); "" hides a kind."""

REVEALS = frozenset({"battle"})
"""Kinds of public events that make every earlier secret public: the battle's reveal carries both
rolls and both cards (RULES.md TRI, Battles)."""


def shown(part: dict[str, Any], key: str, prefix: str = "") -> str:
    """A value of an observation as a reader sees it: ``?`` when kept secret, ``-`` when not yet set."""
    value = part.get(key)
    if value is not None:
        return f"{prefix}{value}"
    return "?" if key in (part.get("hidden") or ()) else "-"


def _rows(size: int, owner: dict[str, int]) -> list[Text]:
    def mark(r: int, c: int, d: str) -> Text:
        return seat(owner.get(f"{r},{c},{d}"))

    header = Text("     ")
    for c in range(size):
        header.append(f" {c:^5}")
    lines = [header]
    for r in range(size):
        top, mid, bot = Text("     "), Text(f" {r:>2}  "), Text("     ")
        for c in range(size):
            sides = [owner.get(f"{r},{c},{d}") for d in "NESW"]
            closed = sides[0] is not None and all(x == sides[0] for x in sides)
            frame = "bold" if closed else "dim"
            top.append(" ╲", style=frame)
            top.append_text(mark(r, c, "N"))
            top.append("╱ ", style=frame)
            mid.append("  ")
            mid.append_text(mark(r, c, "W"))
            mid.append("■" if closed else "×", style=frame)
            mid.append_text(mark(r, c, "E"))
            mid.append(" ")
            bot.append(" ╱", style=frame)
            bot.append_text(mark(r, c, "S"))
            bot.append("╲ ", style=frame)
        lines += [top, mid, bot]
    return lines


def draw(state: State, data: dict[str, Any]) -> RenderableType:
    """The squares with each triangle's owner, hands, and the battle as the viewer may see it."""
    owner: dict[str, int] = data["owner"]
    lines = [Text("TRI — " + _("each square:  N on top, W and E at the sides, S below"), style="bold"),
             *_rows(data["size"], owner)]
    info = Text()
    for i, hand in enumerate(data["hands"]):
        units = sum(1 for v in owner.values() if v == i)
        info.append_text(seat(i))
        cards = " ".join("+" + str(c) for c in hand) or "-"
        line = _("player {seat}: {units} units, cards {cards}") if data["alive"][i] else \
            _("player {seat} (out): {units} units, cards {cards}")
        info.append(" " + line.format(seat=i, units=units, cards=cards) + "\n")
    battle = data.get("battle")
    if battle:
        info.append(
            _("battle: player {attacker} attacks {target} held by player {defender} with {dice} dice — step {step}; "
              "rolls {attacker_roll} vs {defender_roll}; cards {attacker_card} vs {defender_card}").format(
                attacker=battle["attacker"], target=battle["target"], defender=battle["defender"],
                dice=battle["dice"], step=battle["step"], attacker_roll=shown(battle, "attacker_roll"),
                defender_roll=shown(battle, "defender_roll"), attacker_card=shown(battle, "attacker_card", "+"),
                defender_card=shown(battle, "defender_card", "+")) + "\n",
            style="bold",
        )
    return Group(*lines, info, status(data, _("round {round}").format(round=data.get("round"))))
