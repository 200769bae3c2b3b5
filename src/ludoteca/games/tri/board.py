"""TRI in the terminal: the coloured board (Rich) and the texts of its events.

Found by convention by :mod:`ludoteca.play.boards`: ``draw(state, data)`` draws the position
``data`` (what the viewer may see of ``state``: a battle's secret rolls and cards show as ``?``);
``TEXTS`` maps an event kind to a format string over the event's fields (texts live at the edge,
never in the engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ludoteca.core.drawing import seat, status
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_, _

TEXTS: dict[str, str] = {
    "chance (secret)": N_("roll (secret)"),  # what the others see of a battle roll
    "move (secret)": N_("card (secret)"),  # ... and of the attacker's card
    "place": "",  # the move's own line says it
    "expand": "",
    "income": N_("{seats}: card {cards} from the income die ({face})"),
    "attack": N_("{attacker}: attack on {target} (defender: {defender}), dice: {dice}"),
    "battle": N_("battle at {target}: {attacker} {attacker_roll} + card {attacker_card} = {attacker_total}; "
                 "{defender} {defender_roll} + card {defender_card} = {defender_total}; winner: {winner}"),
    "taken": N_("{seat}: {triangle} conquered (from: {from})"),
    "void": N_("{seat}: {triangle} emptied (unit of: {owner})"),
    "teleport": N_("{seat}: teleport from square {square} to {to}"),
    "square_closed": N_("{seat}: square {square} closed"),
    "tiebreak": N_("tied weakest: {seats}; a draw decides who is out"),
    "eliminated": N_("{seat}: out of the game; units leaving the board: {units}"),
    "elimination_income": N_("{seats}: cards gained: {cards}"),
}
"""Texts of TRI's events (kinds and fields: the engine's docstring); "" hides a kind."""

SEAT_FIELDS = frozenset({"seat", "seats", "attacker", "defender", "winner", "from", "owner"})
"""The event fields that hold a seat (or a list of seats): the terminal shows the player's name."""

PHASES: dict[str, str] = {"place": N_("placing units"), "act": N_("move"), "battle": N_("battle"),
                          "income_roll": N_("income"), "tiebreak": N_("tie-break"), "over": N_("game over")}

END_REASONS: dict[str, str] = {"last_player": N_("one player is left"),
                               "board_full": N_("no empty triangle is left"),
                               "turn_limit": N_("the turn limit was reached")}


def _player(names: Sequence[str] | None, i: Any) -> str:
    if isinstance(i, int) and names and 0 <= i < len(names):
        return names[i]
    return _("player {seat}").format(seat=i)


def _triangle(value: Any) -> str:
    return ",".join(str(x) for x in value) if isinstance(value, list | tuple) else str(value)


def action_text(state: State, action: Action, names: Sequence[str] | None = None) -> str | None:
    """An action in a player's words (``state``: the position before it), without who made it."""
    data = state.action_to_json(action)
    ((key, value),) = data.items()
    if key == "roll":
        return _("die: {face}").format(face=value)
    if key == "income":
        return _("income die: {face}").format(face=value)
    if key == "out":
        return _("drawn out: {name}").format(name=_player(names, value))
    texts = {"place": N_("unit on {triangle}"), "expand": N_("expand to {triangle}"),
             "attack": N_("attack {triangle}"), "void": N_("empty {triangle}")}
    if key in texts:
        return _(texts[key]).format(triangle=_triangle(value))
    if key == "teleport":
        return _("teleport {square} → {to}").format(square=_triangle(value["square"]), to=_triangle(value["to"]))
    if key == "card":
        return _("card +{value}").format(value=value)
    if key == "pass":
        return _("pass")
    return None


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


def draw(state: State, data: dict[str, Any], names: Sequence[str] | None = None) -> RenderableType:
    """The squares with each triangle's owner, hands, and the battle as the viewer may see it."""
    owner: dict[str, int] = data["owner"]
    lines = [Text("TRI — " + _("each square:  N on top, W and E at the sides, S below"), style="bold"),
             *_rows(data["size"], owner)]
    info = Text()
    for i, hand in enumerate(data["hands"]):
        units = sum(1 for v in owner.values() if v == i)
        info.append_text(seat(i))
        cards = " ".join("+" + str(c) for c in hand) or "-"
        line = _("{name}: units: {units}, cards: {cards}") if data["alive"][i] else \
            _("{name} (out): units: {units}, cards: {cards}")
        info.append(" " + line.format(name=_player(names, i), units=units, cards=cards) + "\n")
    if data.get("teleports") is False:  # option teleports off (the position says it only then)
        info.append(_("no teleports at this table: a closed square gives none") + "\n")
    battle = data.get("battle")
    if battle:
        info.append(
            _("battle at {target} — attacker: {attacker}, defender: {defender}, dice: {dice}; "
              "rolls {attacker_roll} vs {defender_roll}; cards {attacker_card} vs {defender_card}").format(
                attacker=_player(names, battle["attacker"]), target=battle["target"],
                defender=_player(names, battle["defender"]),
                dice=battle["dice"], attacker_roll=shown(battle, "attacker_roll"),
                defender_roll=shown(battle, "defender_roll"), attacker_card=shown(battle, "attacker_card", "+"),
                defender_card=shown(battle, "defender_card", "+")) + "\n",
            style="bold",
        )
    return Group(*lines, info, status(data, _("round {round}").format(round=data.get("round")), names=names,
                                      phases=PHASES))
