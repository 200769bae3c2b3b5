"""EXAGON in the terminal: the coloured board (Rich), short names for moves, the texts of its events.

Found by convention by :mod:`ludoteca.play.boards` (which documents every name below). The table
is drawn as hexes whose six sides carry their numbers in their colours, so two touching sides that
match show as two equal numbers side by side (``4 4``) or one above the other; the empty places
where a tile fits now carry a number. The hand of the player to move is drawn as small hexes too,
each with its star and a letter: ``b3`` puts tile *b* on place *3* (and asks which way to turn it
when it fits more than one way; ``b3 2`` picks the second of those ways at once).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ludoteca.core.drawing import seat, status
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_, _
from ludoteca.games.exagon import TOURNAMENT_TARGET

# A fixed colour per number 1-9 (as on the tiles); J = Jolly, X = Exagon.
NUMBER_COLOURS: dict[Any, str] = {
    1: "bold red", 2: "bold dark_orange", 3: "bold yellow", 4: "bold green", 5: "bold cyan", 6: "bold blue",
    7: "bold magenta", 8: "bold bright_white", 9: "bold grey62", "J": "bold white on dark_green",
    "X": "bold white on red",
}

TEXTS: dict[str, str] = {
    "dealt": "",  # the deal's own line says it
    "placed": "",  # the move's own line says it
    "stop": "",
    "set_aside": N_("tiles set aside unseen: {count}"),
    "table_tile": N_("a tile starts the table"),
    "bonus_earned": N_("{seat}: bonus tiles earned: {count}"),
    "bonus_spent": N_("{seat}: a bonus spent to go on"),
    "given": "",  # the move's own line says it
    "perfect_fit": N_("{seat}: a perfect fit, six sides touching!"),
    "pass": N_("{seat}: no tile can go on the table, the turn passes (turns in a row without a tile: "
               "{in_a_row})"),
    "bonuses_lost": N_("{seat}: unspent bonuses lost: {count}"),
    "hourglass": N_("{seat}: the hourglass starts, {time_left:.0f} s"),
    "timeout": N_("{seat}: the hourglass ran out, the turn ends"),
    "tournament_game": N_("a game of the tournament is over; winners: {winners}; points: {scores}"),
    "new_game": N_("the next game of the tournament is dealt (points: {scores})"),
}
"""Texts of EXAGON's events (kinds and fields: the engine's docstring); "" hides a kind."""

SEAT_FIELDS = frozenset({"seat", "to", "winners"})
"""The event fields that hold a seat (or a list of seats): the terminal shows the player's name."""

PHASES: dict[str, str] = {"deal": N_("dealing"), "opening": N_("opening"), "turn": N_("play"),
                          "over": N_("game over")}

END_REASONS: dict[str, str] = {
    "last_tile": N_("the last tile of a hand is gone"),
    "perfect_fit": N_("a perfect fit"),
    "blocked": N_("nobody could place a tile: fewest tiles wins"),
    "turn_limit": N_("the turn limit was reached"),
    "tournament": N_("someone reached the points that end the tournament"),
}

GROUPED: dict[str, str] = {"deal": N_("tiles dealt: {count} (hands are face up)")}
"""Chance outcomes told in one line per run (``{count}``: how many in a row)."""

EXAMPLE = "b3"


# --- short names ---------------------------------------------------------------------------------------

def tile_name(k: int) -> str:
    """The letter of the ``k``-th tile of a hand: ``a`` ... ``z``, then ``aa``, ``ab`` ..."""
    letters = string.ascii_lowercase
    return letters[k] if k < 26 else letters[k // 26 - 1] + letters[k % 26]


def _hand_of_mover(state: State, data: dict[str, Any]) -> list[int]:
    to_move = data.get("to_move")
    if state.is_terminal() or state.is_chance_node() or not isinstance(to_move, int):
        return []
    hand: list[int] = data["hands"][to_move]
    return hand


class _Options:
    """The legal placements now, by tile id and place: ``{(tile, (q, r)): [(rot, action), ...]}``."""

    def __init__(self, state: State) -> None:
        self.places: dict[tuple[int, tuple[int, int]], list[tuple[int, Action]]] = {}
        self.gives: dict[int, list[tuple[int, Action]]] = {}
        self.stop: Action | None = None
        self.passing: Action | None = None
        if state.is_terminal() or state.is_chance_node():
            return
        for a in state.legal_actions():
            j = state.action_to_json(a)
            if "place" in j:
                p = j["place"]
                self.places.setdefault((p["tile"], (p["at"][0], p["at"][1])), []).append((p["rot"], a))
            elif "give" in j:
                self.gives.setdefault(j["give"]["tile"], []).append((j["give"]["to"], a))
            elif "stop" in j:
                self.stop = a
            elif "pass" in j:
                self.passing = a
        for ways in self.places.values():
            ways.sort()

    def spots(self) -> list[tuple[int, int]]:
        """The places a tile fits now, top row first, left to right: place 1, 2, ..."""
        return sorted({at for _t, at in self.places}, key=lambda at: (at[1], at[0]))


def _labels(state: State, data: dict[str, Any]) -> tuple[dict[str, int], dict[int, tuple[int, int]], _Options]:
    options = _Options(state)
    hand = _hand_of_mover(state, data)
    tiles = {tile_name(k): tid for k, tid in enumerate(hand)}
    spots = {n: at for n, at in enumerate(options.spots(), 1)}
    return tiles, spots, options


def _empty_table(data: dict[str, Any]) -> bool:
    return not data["table"]


# --- drawing -------------------------------------------------------------------------------------------

Cell = tuple[str, str]
"""A character and its style."""

CELL_W = 6
"""Width of a hex on the table; a row of hexes is shifted by half of it from the next."""
# Where each side's number goes in a table hex (line, column), by the direction it faces
# (RULES.md: 0 east, 1 north-east, 2 north-west, 3 west, 4 south-west, 5 south-east). Touching
# sides land next to each other: east|west on one line, the others one above the other.
SIDE_AT = {0: (1, 5), 1: (0, 4), 2: (0, 1), 3: (1, 0), 4: (2, 1), 5: (2, 4)}


def _side(value: Any) -> Cell:
    return (str(value), NUMBER_COLOURS.get(value, ""))


def _facing(sides: Sequence[Any], rot: int) -> list[Any]:
    """The numbers facing directions 0-5 of a tile turned ``rot`` steps."""
    return [sides[(d - rot) % 6] for d in range(6)]


def _hex(grid: dict[tuple[int, int], Cell], y: int, x: int, facing: Sequence[Any], middle: str = "",
         middle_style: str = "dim") -> None:
    for d, (dy, dx) in SIDE_AT.items():
        grid[(y + dy, x + dx)] = _side(facing[d])
    grid[(y, x + 2)] = ("╱", "dim")
    grid[(y, x + 3)] = ("╲", "dim")
    grid[(y + 2, x + 2)] = ("╲", "dim")
    grid[(y + 2, x + 3)] = ("╱", "dim")
    for i, ch in enumerate(middle[:4]):
        grid[(y + 1, x + 1 + i)] = (ch, middle_style)


def _spot(grid: dict[tuple[int, int], Cell], y: int, x: int, label: int) -> None:
    grid[(y, x + 2)] = ("╱", "green")
    grid[(y, x + 3)] = ("╲", "green")
    grid[(y + 2, x + 2)] = ("╲", "green")
    grid[(y + 2, x + 3)] = ("╱", "green")
    for i, ch in enumerate(f"{label:^4}"):
        grid[(y + 1, x + 1 + i)] = (ch, "bold reverse green" if ch != " " else "")


def _lines(grid: dict[tuple[int, int], Cell]) -> list[Text]:
    if not grid:
        return []
    y0 = min(y for y, _x in grid)
    y1 = max(y for y, _x in grid)
    x0 = min(x for _y, x in grid)
    out = []
    for y in range(y0, y1 + 1):
        row = sorted((x, cell) for (yy, x), cell in grid.items() if yy == y)
        line = Text(no_wrap=True, overflow="crop")
        at = x0
        for x, (ch, style) in row:
            line.append(" " * (x - at))
            line.append(ch, style=style)
            at = x + 1
        out.append(line)
    return out


def _table(data: dict[str, Any], tiles: dict[int, Any], spots: dict[int, tuple[int, int]],
           width: int = 80, before: dict[str, Any] | None = None) -> list[Text]:
    grid: dict[tuple[int, int], Cell] = {}
    if before is not None and before.get("tiles") == data["tiles"]:
        seen = {p["tile"] for p in before["table"]}
        new = {p["tile"] for p in data["table"]} - seen
    else:
        new = {data["table"][-1]["tile"]} if data["table"] else set()
    for p in data["table"]:
        q, r = p["at"]
        facing = _facing(tiles[p["tile"]]["sides"], p["rot"])
        mark = "◆◆" if p["tile"] in new else "  "
        _hex(grid, 3 * r, CELL_W // 2 * (2 * q + r), facing, f" {mark} ", "bold yellow")
    for label, (q, r) in spots.items():
        _spot(grid, 3 * r, CELL_W // 2 * (2 * q + r), label)
    return _bands(_lines(grid), width)


def _bands(lines: list[Text], width: int) -> list[Text]:
    """A table wider than the terminal, cut into bands drawn one under the other (each band's
    columns follow the previous one's; a hex cut in two shows in both)."""
    widest = max((line.cell_len for line in lines), default=0)
    if widest <= width:
        return lines
    step = max(CELL_W, (width - CELL_W) // (CELL_W // 2) * (CELL_W // 2))
    out: list[Text] = []
    for start in range(0, widest, step):
        out.append(Text(_("the table, columns {first} to {last} of {count}:").format(
            first=start + 1, last=min(widest, start + step + CELL_W), count=widest), style="dim italic"))
        band = [line[start:start + step + CELL_W] for line in lines]
        while band and not band[-1].plain.strip():
            band.pop()
        while band and not band[0].plain.strip():
            band.pop(0)
        out += band
    return out


HAND_AT = {0: (1, 8), 1: (0, 6), 2: (0, 3), 3: (1, 1), 4: (2, 3), 5: (2, 6)}
"""Where each side's number goes in a tile drawn on its own (a hand's, a choice's)."""
HAND_W = 10


def tile_drawing(sides: Sequence[Any], rot: int = 0, label: str = "", star: int | None = None) -> list[Text]:
    """One tile as a small hex (its numbers in their colours, turned ``rot`` steps) with its short
    name and its star in the middle: three lines of ``HAND_W`` columns."""
    grid: dict[tuple[int, int], Cell] = {(y, x): (" ", "") for y in range(3) for x in range(HAND_W)}
    for d, (y, x) in HAND_AT.items():
        grid[(y, x)] = _side(_facing(sides, rot)[d])
    for y, x, ch in ((0, 4, "╱"), (0, 5, "╲"), (2, 4, "╲"), (2, 5, "╱")):
        grid[(y, x)] = (ch, "dim")
    for i, ch in enumerate(label[:3]):
        grid[(1, 3 + i)] = (ch, "bold reverse")
    if star is not None:
        for i, ch in enumerate(f"{star:>2}"[-2:]):
            grid[(1, 5 + i)] = (ch, "italic yellow")
    return _lines(grid)


def _row_of_tiles(drawings: list[list[Text]], width: int) -> list[Text]:
    """Small tile drawings side by side, as many per row as ``width`` holds."""
    per_row = max(1, width // (HAND_W + 1))
    out: list[Text] = []
    for k in range(0, len(drawings), per_row):
        chunk = drawings[k:k + per_row]
        for i in range(len(chunk[0])):
            line = Text(no_wrap=True, overflow="crop")
            for d in chunk:
                line.append_text(d[i])
                line.append(" ")
            out.append(line)
    return out


def _name(names: Sequence[str] | None, i: int) -> str:
    return names[i] if names and i < len(names) else _("player {seat}").format(seat=i)


def draw(state: State, data: dict[str, Any], names: Sequence[str] | None = None, width: int = 80,
         height: int = 50, before: dict[str, Any] | None = None) -> RenderableType:
    """The table as hexes with the places a tile fits now numbered (``◆◆``: the tiles placed since
    the position ``before``, else the last one), the hand of the player to move as small lettered
    hexes, the other hands (their tiles too when the terminal is ``height`` >= 40 lines tall or the
    game is over), the hourglass."""
    tiles = {t["id"]: t for t in data["tiles"]}
    hand_names, spots, _options = _labels(state, data)
    title = Text("EXAGON — " + _("the table"), style="bold")
    if spots:
        title.append("  " + _("green numbers: where a tile of yours fits"), style="green")
    lines: list[RenderableType] = [title, *_table(data, tiles, spots, width, before)]
    to_move = data.get("to_move")
    for i, hand in enumerate(data["hands"]):
        info = Text()
        info.append_text(seat(i))
        info.append(" " + _("{name}: tiles in hand: {count}").format(name=_name(names, i), count=len(hand)))
        lines.append(info)
        if hand and i == to_move and hand_names:
            lines += _row_of_tiles([tile_drawing(tiles[tid]["sides"], 0, label, tiles[tid]["star"])
                                    for label, tid in hand_names.items()], width)
        elif hand and (state.is_terminal() or (i != to_move and height >= 40)):
            lines.append(_compact(hand, tiles))
    extra = ""
    if data.get("phase") == "turn" and not state.is_terminal():
        extra = _("placed: {placed}  bonuses: {bonus}").format(
            placed=data.get("placed_this_turn", 0), bonus=data.get("bonus", 0))
    if data.get("time_left") is not None and not state.is_terminal():
        extra += "  ⏳ " + _("{seconds:.0f} s left").format(seconds=data["time_left"])
    elif data.get("clock") is None:
        extra += "  " + _("no hourglass")
    if data.get("scores") is not None:
        extra += "  " + _("tournament points: {scores} (the tournament ends at {target})").format(
            scores=", ".join(f"{_name(names, i)} {p}" for i, p in enumerate(data["scores"])),
            target=data.get("tournament_target", TOURNAMENT_TARGET))
    lines.append(status(data, extra.strip(), names=names, phases=PHASES))
    return Group(*lines)


def _compact(hand: list[int], tiles: dict[int, Any]) -> Text:
    """A hand on one line: each tile's six numbers in their colours."""
    t = Text("   ", no_wrap=False)
    for tid in hand:
        for v in tiles[tid]["sides"]:
            t.append(str(v), style=NUMBER_COLOURS.get(v, ""))
        t.append("  ")
    return t


# --- the moves in words --------------------------------------------------------------------------------

def moves_help(state: State, data: dict[str, Any], names: Sequence[str] | None = None) -> RenderableType:
    """What the player to move may type now, with the placements that fit."""
    hand_names, spots, options = _labels(state, data)
    by_id = {tid: label for label, tid in hand_names.items()}
    at_label = {at: n for n, at in spots.items()}
    lines: list[Text] = []
    fits: dict[str, list[int]] = {}
    for (tid, at) in options.places:
        if tid in by_id:
            fits.setdefault(by_id[tid], []).append(at_label[at])
    if fits:
        if _empty_table(data):
            lines.append(Text(_("Your first tile starts the table: type a tile's letter and 1, e.g. {example}.")
                              .format(example="b1")))
        elif data.get("placed_this_turn"):
            lines.append(Text(_("Your turn goes on: place another tile, or stop."), style="bold"))
        elif data.get("turn", 0) <= 4:  # a newcomer's first turns
            lines.append(Text(_("Type a tile's letter and a place's number, e.g. {example}; if it fits more than "
                                "one way you choose how to turn it.").format(example=EXAMPLE)))
        fit_line = Text(_("Fits now:") + " ", style="bold")
        order = list(hand_names)
        for label in sorted(fits, key=order.index):
            fit_line.append(label, style="bold")
            fit_line.append("→" + ",".join(str(n) for n in sorted(fits[label])) + "  ")
        lines.append(fit_line)
    words = []
    if options.stop is not None:
        words.append(_("stop: end your turn"))
    if options.passing is not None:
        words.append(_("pass: no tile of yours fits, the turn passes"))
    if options.gives:
        words.append(_("give b: give tile b to a player who holds one tile (spends a bonus)"))
    if words:
        lines.append(Text("  ·  ".join(words)))
    return Group(*lines)


_PLACE = re.compile(r"([a-z]{1,2})\s*(\d+)(?:\s*[ /]\s*(\d+))?")


def read_move(state: State, text: str) -> list[Action] | None:
    """The actions a short name means now: one, or several to choose from (the ways a tile can be
    turned, the players it can be given to); None when ``text`` is not a short name.
    ValueError with a message for a person when it names no move possible now."""
    data = state.observation(state.current_player())
    hand_names, spots, options = _labels(state, data)
    low = " ".join(text.lower().split())
    if low in ("stop", _("stop").lower()):
        if options.stop is None:
            raise ValueError(_("You can stop only after placing a tile this turn."))
        return [options.stop]
    if low in ("pass", _("pass").lower()):
        if options.passing is None:
            raise ValueError(_("You cannot pass: one of your tiles fits (see 'Fits now')."))
        return [options.passing]
    first, _sep, rest = low.partition(" ")
    if first in ("give", _("give").lower()) and rest:
        label = rest.split()[0]
        if label not in hand_names:
            raise ValueError(_("You have no tile {label}.").format(label=label))
        gives = options.gives.get(hand_names[label])
        if not gives:
            raise ValueError(_("You can give a tile only with a bonus, to a player who holds exactly one tile."))
        return [a for _to, a in sorted(gives)]
    m = _PLACE.fullmatch(low)
    if not m or not hand_names:
        return None
    label, number = m.group(1), int(m.group(2))
    if label not in hand_names:
        raise ValueError(_("You have no tile {label}: your tiles are {first} to {last}.").format(
            label=label, first=next(iter(hand_names)), last=list(hand_names)[-1]))
    if number not in spots:
        raise ValueError(_("There is no place {number}: the places are numbered 1 to {count} on the table.")
                         .format(number=number, count=len(spots)))
    ways = options.places.get((hand_names[label], spots[number]))
    if not ways:
        rule = (_("at least one side it touches must match") if getattr(state.game, "lenient", False)
                else _("every side it touches must match"))
        raise ValueError(_("Tile {label} does not fit in place {number}: {rule}.")
                         .format(label=label, number=number, rule=rule))
    actions = [a for _rot, a in ways]
    if _empty_table(data):
        actions = actions[:1]  # the first tile alone: every way of turning it is the same
    if m.group(3):
        k = int(m.group(3))
        if not 1 <= k <= len(actions):
            raise ValueError(_("Tile {label} fits place {number} in {count} ways: choose 1 to {count}.")
                             .format(label=label, number=number, count=len(actions)))
        return [actions[k - 1]]
    return actions


def move_name(state: State, action: Action) -> str | None:
    """The short name a player types for ``action`` now (``b3``, ``b3 2``, ``stop``), or None."""
    data = state.observation(state.current_player())
    hand_names, spots, options = _labels(state, data)
    if action == options.stop:
        return _("stop")
    if action == options.passing:
        return _("pass")
    by_id = {tid: label for label, tid in hand_names.items()}
    at_label = {at: n for n, at in spots.items()}
    for (tid, at), ways in options.places.items():
        actions = [a for _rot, a in ways]
        if action in actions and tid in by_id:
            name = f"{by_id[tid]}{at_label[at]}"
            if len(actions) > 1 and not _empty_table(data):
                name += f" {actions.index(action) + 1}"
            return name
    for tid, gives in options.gives.items():
        if tid in by_id and any(a == action for _to, a in gives):
            return f"{_('give')} {by_id[tid]}"
    return None


def draw_choices(state: State, actions: list[Action], names: Sequence[str] | None = None,
                 width: int = 80) -> RenderableType:
    """The choices a short name left open, numbered from 1: the tile turned each way it fits, or
    the players it can be given to."""
    tiles = {t["id"]: t for t in state.observation(None)["tiles"]}
    drawings = []
    others: list[Text] = []
    for k, a in enumerate(actions, 1):
        j = state.action_to_json(a)
        if "place" in j:
            tile = tiles[j["place"]["tile"]]
            drawings.append(tile_drawing(tile["sides"], j["place"]["rot"], f"[{k}]"))
        elif "give" in j:
            others.append(Text(f"{k}) " + _name(names, j["give"]["to"])))
    head = Text(_("It fits in more than one way: which one? (the numbers touching the table match)")
                if drawings else _("To whom?"), style="bold")
    return Group(head, *_row_of_tiles(drawings, width), *others)


def action_text(state: State, action: Action, names: Sequence[str] | None = None) -> str | None:
    """An action in a player's words (``state``: the position before it), without who made it."""
    try:
        j = state.action_to_json(action)
    except IllegalActionError:
        return None
    if "deal" in j:
        return _("a tile dealt")
    if "place" in j:
        if not state.observation(None)["table"]:
            return _("the first tile on the table")
        after = state.clone()
        try:
            events = after.apply_action(action)
        except IllegalActionError:
            return None
        matched = next((e.data["connections"] for e in events if e.kind == "placed"), 0)
        if after.is_terminal():
            return _("a tile placed; matching sides: {count}").format(count=matched)
        if after.current_player() != state.current_player():
            return _("a tile placed; matching sides: {count}; the turn ends").format(count=matched)
        return _("a tile placed; matching sides: {count}; the turn goes on").format(count=matched)
    if "give" in j:
        return _("a tile given to: {name}").format(name=_name(names, j["give"]["to"]))
    if "stop" in j:
        return _("end of the turn")
    if "pass" in j:
        return _("pass")
    if "timeout" in j:
        return _("out of time")
    return None


__all__ = ["END_REASONS", "GROUPED", "PHASES", "SEAT_FIELDS", "TEXTS", "action_text", "draw", "draw_choices",
           "move_name", "moves_help", "read_move", "tile_drawing", "tile_name"]
