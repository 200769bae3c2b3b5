"""Coloured terminal boards (Rich), drawn from the canonical position JSON of each game."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

SEAT_COLOURS = ["bold red", "bold blue", "bold green", "bold magenta", "bold yellow", "bold cyan"]
SEAT_MARKS = "ABCDEF"
# EXAGON: a fixed colour per number 1-9 (as on the tiles); J = Jolly, X = Exagon.
NUMBER_COLOURS = {1: "red", 2: "dark_orange", 3: "yellow", 4: "green", 5: "cyan", 6: "blue",
                  7: "magenta", 8: "bright_white", 9: "grey62", "J": "bold white on dark_green",
                  "X": "bold white on black"}


def seat(i: int | None) -> Text:
    if i is None:
        return Text("·", style="dim")
    return Text(SEAT_MARKS[i], style=SEAT_COLOURS[i % len(SEAT_COLOURS)])


def _status(data: dict[str, Any], extra: str = "") -> Text:
    t = Text()
    t.append(f"turn {data.get('turn', 0)}  phase {data.get('phase')}  ")
    to_move = data.get("to_move")
    if isinstance(to_move, int):
        t.append("to move: ")
        t.append_text(seat(to_move))
        t.append(f" (player {to_move})")
    if extra:
        t.append("  " + extra)
    return t


def exactly_board(data: dict[str, Any]) -> Group:
    coins = ("5", "10", "20", "50")
    table = Table(title="exactly — collect exactly 100 cents", title_style="bold")
    table.add_column("pile")
    for c in coins:
        table.add_column(f"{c}c", justify="right")
    table.add_column("total", justify="right")
    table.add_column("euros")
    bank = data["bank"]
    table.add_row("bank", *(str(bank[c]) for c in coins), "", "")
    for i, pile in enumerate(data["piles"]):
        total = sum(int(c) * pile[c] for c in coins)
        style = "bold green" if total == 100 else ("red" if total > 150 else "")
        name = Text(f"player {i} ")
        name.append_text(seat(i))
        table.add_row(name, *(str(pile[c]) for c in coins), Text(f"{total}c", style=style),
                      Text("€" * data["euros"][i], style="bold yellow"))
    roll = data.get("roll")
    die = f"die: {roll}" if roll is not None else ""
    return Group(table, _status(data, die))


def tohm_board(data: dict[str, Any]) -> Group:
    grid = Table(show_header=True, show_lines=True, title="TOHM", title_style="bold")
    grid.add_column("")
    for c in range(data["cols"]):
        grid.add_column(str(c), justify="center")
    for r in range(data["rows"]):
        cells = []
        for c in range(data["cols"]):
            owner = data["board"][r][c]
            num = data["layout"][r][c]
            number = Text(f"{num}", style="dim")
            cells.append(number if owner is None else Text.assemble(seat(owner), number))
        grid.add_row(str(r), *cells)
    info = Text()
    for i, (sup, tro) in enumerate(zip(data["supply"], data["trophies"], strict=False)):
        info.append_text(seat(i))
        info.append(f" player {i}: {sup} tokens in supply, {tro} trophies  ")
        info.append("🏆" * tro if tro else "")
        info.append("\n")
    info.append(f"trophies left: {data['trophies_left']}")
    roll = data.get("roll")
    return Group(grid, info, _status(data, f"die: {roll}" if roll is not None else ""))


def _shown(part: dict[str, Any], key: str, prefix: str = "") -> str:
    """A value of an observation as a reader sees it: ``?`` when kept secret, ``-`` when not yet set."""
    value = part.get(key)
    if value is not None:
        return f"{prefix}{value}"
    return "?" if key in (part.get("hidden") or ()) else "-"


def tri_board(data: dict[str, Any]) -> Group:
    size = data["size"]
    owner: dict[str, int] = data["owner"]

    def o(r: int, c: int, d: str) -> Text:
        return seat(owner.get(f"{r},{c},{d}"))

    lines = [Text("TRI — each square:  N on top, W and E at the sides, S below", style="bold")]
    header = Text("     ")
    for c in range(size):
        header.append(f" {c:^5}")
    lines.append(header)
    for r in range(size):
        top, mid, bot = Text("     "), Text(f" {r:>2}  "), Text("     ")
        for c in range(size):
            closed = all(f"{r},{c},{d}" in owner and owner[f"{r},{c},{d}"] == owner.get(f"{r},{c},N") for d in "NESW")
            frame = "bold" if closed else "dim"
            top.append(" ╲", style=frame)
            top.append_text(o(r, c, "N"))
            top.append("╱ ", style=frame)
            mid.append("  ")
            mid.append_text(o(r, c, "W"))
            mid.append("■" if closed else "×", style=frame)
            mid.append_text(o(r, c, "E"))
            mid.append(" ")
            bot.append(" ╱", style=frame)
            bot.append_text(o(r, c, "S"))
            bot.append("╲ ", style=frame)
        lines += [top, mid, bot]
    info = Text()
    for i, hand in enumerate(data["hands"]):
        units = sum(1 for v in owner.values() if v == i)
        info.append_text(seat(i))
        alive = "" if data["alive"][i] else " (out)"
        info.append(f" player {i}{alive}: {units} units, cards {' '.join('+' + str(c) for c in hand) or '-'}\n")
    battle = data.get("battle")
    if battle:
        info.append(
            f"battle: player {battle['attacker']} attacks {battle['target']} held by player {battle['defender']} "
            f"with {battle['dice']} dice — step {battle['step']}; "
            f"rolls {_shown(battle, 'attacker_roll')} vs {_shown(battle, 'defender_roll')}; "
            f"cards {_shown(battle, 'attacker_card', '+')} vs {_shown(battle, 'defender_card', '+')}\n",
            style="bold",
        )
    return Group(*lines, info, _status(data, f"round {data.get('round')}"))


def _tile_text(sides: list[Any]) -> Text:
    t = Text()
    for v in sides:
        t.append(f"{v}", style=NUMBER_COLOURS.get(v, ""))
    return t


def exagon_board(data: dict[str, Any], legal_spots: set[tuple[int, int]] | None = None) -> Group:
    tiles = {t["id"]: t for t in data["tiles"]}
    placed = {tuple(p["at"]): p for p in data["table"]}
    spots = legal_spots or set()
    lines: list[Text] = [Text("EXAGON — the table (axial q,r; * = a legal spot)", style="bold")]
    cells = set(placed) | spots
    if cells:
        rs = [r for _, r in cells]
        qs = [q for q, _ in cells]
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
            tile = tiles[p["tile"]]
            k = p["rot"]
            facing = [tile["sides"][(d - k) % 6] for d in range(6)]
            t = Text(f"  tile {p['tile']:>2} at {q},{r} rot {k}: facing 0-5 ")
            t.append_text(_tile_text(facing))
            lines.append(t)
    info = Text()
    for i, hand in enumerate(data["hands"]):
        info.append_text(seat(i))
        info.append(f" player {i}: {len(hand)} tiles ")
        for tid in hand:
            info.append(f" {tid}:")
            info.append_text(_tile_text(tiles[tid]["sides"]))
        info.append("\n")
    extra = f"placed {data.get('placed_this_turn', 0)}  bonus {data.get('bonus', 0)}"
    if data.get("time_left") is not None:
        extra += f"  ⏳ {data['time_left']:.0f}s"
    if data.get("scores") is not None:
        extra += f"  tournament {data['scores']}"
    return Group(*lines, info, _status(data, extra))


def board(state: Any, seat_view: int | None = None, everything: bool = False) -> Group:
    """A coloured board for ``state`` as ``seat_view`` may see it (``None``: a spectator).

    Drawn from ``state.observation(seat_view)``, or from the whole position with ``everything``.
    """
    data = state.to_json() if everything else state.observation(seat_view)
    name = data["game"]
    if name == "exactly":
        return exactly_board(data)
    if name == "tohm":
        return tohm_board(data)
    if name == "tri":
        return tri_board(data)
    if name == "exagon":
        spots: set[tuple[int, int]] = set()
        if not state.is_terminal() and not state.is_chance_node():
            for a in state.legal_actions():
                j = state.action_to_json(a)
                if "place" in j:
                    spots.add(tuple(j["place"]["at"]))
        return exagon_board(data, spots)
    return Group(Text(state.render()))
