"""EXAGON in the terminal: the coloured board (Rich) and the texts of its events.

Found by convention by :mod:`ludoteca.play.boards`: ``draw(state, data)`` draws the position
``data`` (what the viewer may see of ``state``), with the spots where a tile may be placed now;
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

# A fixed colour per number 1-9 (as on the tiles); J = Jolly, X = Exagon.
NUMBER_COLOURS: dict[Any, str] = {
    1: "red", 2: "dark_orange", 3: "yellow", 4: "green", 5: "cyan", 6: "blue", 7: "magenta",
    8: "bright_white", 9: "grey62", "J": "bold white on dark_green", "X": "bold white on black",
}

TEXTS: dict[str, str] = {
    "dealt": "",  # the deal's own line says it
    "placed": "",  # the move's own line says it
    "stop": "",
    "set_aside": N_("{count} tiles set aside unseen"),
    "table_tile": N_("tile {tile} starts the table"),
    "bonus_earned": N_("player {seat} earns {count} bonus(es)"),
    "bonus_spent": N_("player {seat} spends a bonus"),
    "given": N_("player {seat} gives tile {tile} to player {to}"),
    "perfect_fit": N_("player {seat} places tile {tile} with six connections: a perfect fit"),
    "pass": N_("player {seat} passes ({in_a_row} turn(s) in a row without a tile)"),
    "bonuses_lost": N_("player {seat} loses {count} unspent bonus(es)"),
    "hourglass": N_("player {seat}'s turn: {time_left:.0f}s on the hourglass"),
    "tournament_game": N_("a game of the tournament is over ({reason}): winners {winners}, points {scores}"),
    "new_game": N_("the next game of the tournament is dealt (points {scores})"),
}
"""Texts of EXAGON's events (kinds and fields: the engine's docstring); "" hides a kind."""


def tile_text(sides: list[Any]) -> Text:
    t = Text()
    for v in sides:
        t.append(f"{v}", style=NUMBER_COLOURS.get(v, ""))
    return t


def legal_spots(state: State) -> set[tuple[int, int]]:
    """The cells where the player to move may place a tile now."""
    spots: set[tuple[int, int]] = set()
    if state.is_terminal() or state.is_chance_node():
        return spots
    for a in state.legal_actions():
        j = state.action_to_json(a)
        if "place" in j:
            q, r = j["place"]["at"]
            spots.add((q, r))
    return spots


def _table(data: dict[str, Any], tiles: dict[int, Any], spots: set[tuple[int, int]]) -> list[Text]:
    placed = {(p["at"][0], p["at"][1]): p for p in data["table"]}
    cells = set(placed) | spots
    if not cells:
        return []
    lines = []
    rs = [r for _q, r in cells]
    qs = [q for q, _r in cells]
    for r in range(min(rs), max(rs) + 1):
        line = Text(" " * (2 * (r - min(rs))))
        for q in range(min(qs), max(qs) + 1):
            if (q, r) in placed:
                line.append(f"[{placed[(q, r)]['tile']:>2}]", style="bold")
            elif (q, r) in spots:
                line.append("  * ", style="green")
            else:
                line.append("  . ", style="dim")
        lines.append(line)
    for (q, r), p in sorted(placed.items()):
        sides = tiles[p["tile"]]["sides"]
        k = p["rot"]
        t = Text("  " + _("tile {tile} at {at} rot {rot}: facing 0-5").format(
            tile=f"{p['tile']:>2}", at=f"{q},{r}", rot=k) + " ")
        t.append_text(tile_text([sides[(d - k) % 6] for d in range(6)]))
        lines.append(t)
    return lines


def draw(state: State, data: dict[str, Any]) -> RenderableType:
    """The table of placed tiles (axial coordinates), the legal spots, hands, hourglass."""
    tiles = {t["id"]: t for t in data["tiles"]}
    lines = [Text("EXAGON — " + _("the table (axial q,r; * = a legal spot)"), style="bold"),
             *_table(data, tiles, legal_spots(state))]
    info = Text()
    for i, hand in enumerate(data["hands"]):
        info.append_text(seat(i))
        info.append(" " + _("player {seat}: {count} tiles").format(seat=i, count=len(hand)) + " ")
        for tid in hand:
            info.append(f" {tid}:")
            info.append_text(tile_text(tiles[tid]["sides"]))
        info.append("\n")
    extra = _("placed {placed}  bonus {bonus}").format(placed=data.get("placed_this_turn", 0),
                                                       bonus=data.get("bonus", 0))
    if data.get("time_left") is not None:
        extra += f"  ⏳ {data['time_left']:.0f}s"
    if data.get("scores") is not None:
        extra += "  " + _("tournament {scores}").format(scores=data["scores"])
    return Group(*lines, info, status(data, extra))
