"""EXAGON (seed ``004_…``), 2 to 5 players.

Hexagonal tiles carry a number 1-9 on each of their six sides (three tiles have a Jolly area,
three an Exagon area). Players attach tiles from their hand to the table so that every touching
side matches; a tile touching 2+ tiles lets the turn go on, 3/4/5 earn bonuses, a tile touching
one tile ends the turn unless a bonus is spent on it. Placing one's last tile or a tile touching
six tiles (the perfect fit) wins. Rules: RULES.md section 4 and ``docs/rules/exagon.md``. Option
``matching="lenient"`` (RULES.md, amended) needs only one matching side and counts the matching
sides as connections; ``carry_cap`` bounds the time a turn passes on to the next.

Action encoding (``N`` tiles, tile *index* ``t`` = its position in the tile list, ``R = N - 1``,
``W = 2R + 1``, cell ``[q, r]`` with ``|q|, |r| <= R`` has index ``c = (q + R) * W + (r + R)``,
``C = W * W`` cells, ``n`` players). Actions are always ints:

* ``t``                             deal tile ``t`` (chance outcomes, ``0 <= t < N``)
* ``N + (t * C + c) * 6 + rot``     place tile ``t`` on cell ``c`` with rotation ``rot``
* ``P + t * n + seat``              give tile ``t`` to ``seat``        (``P = N + N * C * 6``)
* ``P + N * n``                     stop
* ``P + N * n + 1``                 pass
* ``P + N * n + 2``                 timeout (accepted, never listed)
* ``F + (pair(z(q), z(r)) * N + t) * 6 + rot``  place tile ``t`` on a cell ``[q, r]`` *off the
  table* (outside the window: no tile can ever reach it), ``F = num_distinct_actions()``;
  ``z`` is the zigzag map of the integers onto ``0, 1, 2, ...`` and ``pair`` Cantor's pairing, so
  every such placement has a code, decodable for the error message. ``action_from_json`` reads
  such a well-formed placement; ``apply_action`` always refuses it (RULES.md: "action_from_json
  rejects only ill-formed actions").

The ranges are disjoint, so an int (and its JSON) means the same in every position; deals are
tile indices (the tile ids for the default set). Time spent on an action is not part of it: it
enters through ``apply_action(action, elapsed=seconds)`` (``State.apply_json`` reads the
``"elapsed"`` key of a JSON action and passes it on).

Events (``apply_action`` returns them; every EXAGON event is public: hands are face up, and
the deal is public too, see ``docs/rules/exagon.md``). First the action's own event: ``move``; ``chance``
``{"outcome": {"deal": id}, "seat"}`` for a tile dealt to a seat (no ``seat`` for the table
tile); or ``timeout`` for the host's timeout. Then, in order:

* ``set_aside`` ``{"count"}``: the leftover tiles set aside unseen at the end of the deal (how
  many, never which);
* ``table_tile`` ``{"tile", "at", "rot"}``: the leftover tile put on the table at ``[0, 0]``;
* ``placed`` ``{"seat", "tile", "at", "rot", "connections", "opening", "next_to"}``: a tile placed
  (``opening``: true for the opening steps; ``next_to``: the ids of the tiles it touches, whose
  facing sides all match it: ``connections`` of them; under ``matching="lenient"`` only the tiles
  whose facing side matches);
* ``bonus_earned`` ``{"seat", "count"}``: bonuses earned by 3, 4 or 5 connections (1, 2, 3);
* ``bonus_spent`` ``{"seat"}``: a bonus spent (automatically) on a one-connection tile;
* ``given`` ``{"seat", "tile", "to", "bonus_spent"}``: a tile given (``bonus_spent`` is 1);
* ``perfect_fit`` ``{"seat", "tile", "at"}``: a tile placed with six connections;
* ``pass`` ``{"seat", "in_a_row"}``: a pass and the turns in a row now ended without a tile;
* ``stop`` ``{"seat"}``: the player ended their turn;
* ``bonuses_lost`` ``{"seat", "count"}``: unspent bonuses lost when a turn ended by ``stop``;
* ``timeout`` (the action's own event) ``{"seat", "action", "bonuses_lost", "counts_as_pass"}``;
* ``hourglass`` ``{"seat", "carry", "time_left"}``: a clocked turn begins (``carry``: seconds
  carried from the previous turn, at most ``carry_cap``; ``time_left = clock + carry``);
* ``tournament_game`` ``{"winners", "reason", "change", "scores"}``: a one-shot game of a
  tournament is over (``change``: each seat's points won or lost, ``scores``: the totals);
* ``new_game`` ``{"scores"}``: the next game of the tournament is dealt;
* ``end`` (shared) with ``reason`` = :meth:`ExagonState.end_reason`: ``last_tile``,
  ``perfect_fit``, ``blocked``, ``turn_limit``, or ``tournament`` (someone reached 50 points).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, NotRequired, TypedDict, cast

from ludoteca.core import events as ev
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Action, Counter, Game, State, Worlds, as_action_int
from ludoteca.core.i18n import N_, _
from ludoteca.core.jsonutil import need, need_int
from ludoteca.core.options import Choice, Option, as_bool, as_int, one_of, parse_option_text
from ludoteca.core.shape import Between, read

J, X = 10, 11
"""Internal codes of the Jolly and Exagon areas (numbers are 1-9)."""
SYMBOLS = {J: "J", X: "X"}
CODES = {"J": J, "X": X}

DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
"""Axial offsets of directions 0-5 (RULES.md)."""

DEAL, OPENING, TURN, OVER = 0, 1, 2, 3
PHASES = ("deal", "opening", "turn", "over")

IN_TABLE, ASIDE, UNDEALT = -1, -2, -3
"""Owner codes of tiles not in a hand."""

MAX_TILES = 100
"""Most tiles in a set (default bound; the seed has 40). The table window, and with it the action
space, grows with the square of the tile count: 100 tiles take about 0.2 s and 25 MB to set up."""
MAX_TILES_BYTES = 1024 * 1024
"""Largest tile-set JSON text or file read (the default 40-tile set takes about 4 KB)."""

WIN_POINTS = 20
TOURNAMENT_TARGET = 50
JOLLY_PENALTY = 3
END_REASONS = ("last_tile", "perfect_fit", "blocked", "turn_limit")
"""Why a one-shot game ended (``result["end"]`` of a finished position)."""
TOURNAMENT_OVER = "tournament"
""":meth:`ExagonState.end_reason` of a finished tournament (someone reached 50 points)."""

COUNTERS: tuple[Counter, ...] = (
    Counter("last_tile_wins", "share_per_game", N_("one-shot games won by placing (or giving away) a last tile")),
    Counter("perfect_fit_wins", "share_per_game", N_("one-shot games won by a perfect fit")),
    Counter("blocked_games", "share_per_game", N_("one-shot games blocked (every player passed in a row)")),
    Counter("turn_limit_games", "share_per_game", N_("one-shot games stopped by turn_limit")),
    Counter("perfect_fits", "mean_per_game", N_("tiles placed with 6 connections, per game")),
    Counter("bonuses_earned", "ratio_per_event", N_("bonus tiles earned (3/4/5 connections: 1/2/3) / player turns"),
            of="turns"),
    Counter("bonuses_spent", "ratio_per_event", N_("bonuses spent (to go on after a one-connection tile, or to give "
                                                   "a tile) / player turns"), of="turns"),
    Counter("tiles_given", "mean_per_game", N_("tiles given to a player holding one, per game")),
    Counter("placements", "ratio_per_event", N_("tiles placed / player turns"), of="turns"),
    Counter("passes", "ratio_per_event", N_("turns ended by pass (no legal placement) / player turns"), of="turns"),
    Counter("timeouts", "mean_per_game", N_("turns ended by the hourglass running out, per game")),
)
"""The figures the balance lab reports for EXAGON (``State.counters()``, ``Game.counters``); ``of="turns"``
is the lab's count of player turns (the position's ``turn`` at the end)."""

LAB_NAMES = (N_("last tile wins"), N_("perfect fit wins"), N_("blocked games"), N_("turn limit games"),
             N_("perfect fits"), N_("bonuses earned"), N_("bonuses spent"), N_("tiles given"), N_("placements"),
             N_("passes"), N_("timeouts"), N_("last tile"), N_("perfect fit"), N_("blocked"), N_("turn limit"),
             N_("tournament"), N_("tiles"))
"""The names of the counters, the end reasons and the score as the lab report shows them (translated
there with ``_``; the names themselves stay the identifiers of ``counters()`` and ``end_reason()``)."""
_ENDED = {"last_tile": "last_tile_wins", "perfect_fit": "perfect_fit_wins", "blocked": "blocked_games",
          "turn_limit": "turn_limit_games"}
"""The counter of each end reason of a one-shot game."""


def _zigzag(x: int) -> int:
    """The integers onto 0, 1, 2, ...: 0, -1, 1, -2, 2, ... -> 0, 1, 2, 3, 4, ..."""
    return 2 * x if x >= 0 else -2 * x - 1


def _unzigzag(z: int) -> int:
    return z // 2 if z % 2 == 0 else -(z + 1) // 2


def _pair(a: int, b: int) -> int:
    """Cantor's pairing of two naturals (a bijection onto the naturals)."""
    return (a + b) * (a + b + 1) // 2 + b


def _unpair(z: int) -> tuple[int, int]:
    w = (math.isqrt(8 * z + 1) - 1) // 2
    b = z - w * (w + 1) // 2
    return w - b, b


# --- tile sets ------------------------------------------------------------------------

def _canonical(sides: tuple[int, ...]) -> tuple[int, ...]:
    return min(sides[i:] + sides[:i] for i in range(6))


class PositionTiles(list):  # type: ignore[type-arg]
    """The tile list of a position read from JSON: already checked tile by tile, but not as a set
    (RULES.md: "its tiles list may hold any tiles")."""


def _tile_name(tid: int) -> str:
    """A tile in an error message (``where`` stays English for the JSON readers' messages)."""
    return _("tile {id}").format(id=tid)


def validate_tiles(data: Any, players: int | None = None, as_set: bool = True) -> list[dict[str, Any]]:
    """A designer's tile list checked against RULES.md; returns it normalized.

    With ``as_set`` false (the tiles of a position), only each tile's form is checked, not the
    set's constraints (all different under rotation, enough tiles for the players).
    Raises ValueError saying which tile is wrong and why.
    """
    if not isinstance(data, list):
        raise ValueError(_("the tile set must be a list of tiles, not {type}").format(type=type(data).__name__))
    if not data:
        raise ValueError(_("the tile set is empty"))
    if len(data) > MAX_TILES:
        raise ValueError(_(
            "the tile set has {count} tiles; a set has at most {max_tiles}"
        ).format(count=len(data), max_tiles=MAX_TILES))
    out: list[dict[str, Any]] = []
    seen_ids: dict[int, int] = {}
    shapes: dict[tuple[int, ...], int] = {}
    for i, tile in enumerate(data):
        where = f"tile #{i}"
        if not isinstance(tile, Mapping):
            raise ValueError(_("tile #{i} must be an object with id, sides, star, star_points").format(i=i))
        tid = need(tile, "id", int, where)
        where = f"tile {tid}"
        if tid in seen_ids:
            raise ValueError(_(
                "tile id {tid} is used twice (tiles #{first} and #{i})"
            ).format(tid=tid, first=seen_ids[tid], i=i))
        seen_ids[tid] = i
        sides = need(tile, "sides", list, where)
        if len(sides) != 6:
            raise ValueError(_("{where} must have 6 sides, not {count}").format(
                where=_tile_name(tid), count=len(sides)))
        codes = []
        for s in sides:
            if isinstance(s, str) and s in CODES:
                codes.append(CODES[s])
            elif isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 9:
                codes.append(s)
            else:
                raise ValueError(_(
                    "{where}: a side must be a number 1-9, \"J\" or \"X\", not {s}"
                ).format(where=_tile_name(tid), s=repr(s)))
        specials = sum(c > 9 for c in codes)
        if specials > 1:
            raise ValueError(_(
                "{where} has {specials} Jolly/Exagon areas; a tile may have at most one"
            ).format(where=_tile_name(tid), specials=specials))
        total = sum(c for c in codes if c <= 9)
        star = need(tile, "star", int, where)
        if star != total:
            raise ValueError(_(
                "{where}: star {star} is not the sum of its numbers ({total})"
            ).format(where=_tile_name(tid), star=star, total=total))
        points = need(tile, "star_points", int, where)
        if not 0 <= points <= 6:
            raise ValueError(_("{where}: star_points must be 0 to 6, not {points}").format(
                where=_tile_name(tid), points=points))
        shape = _canonical(tuple(codes))
        if as_set and shape in shapes:
            raise ValueError(_(
                "tiles {other} and {tid} are the same tile (up to rotation)"
            ).format(other=shapes[shape], tid=tid))
        shapes[shape] = tid
        out.append({"id": tid, "sides": list(sides), "star": star, "star_points": points})
    if as_set and players is not None and len(out) < players:
        raise ValueError(_(
            "{count} tiles are not enough for {players} players (at least one each)"
        ).format(count=len(out), players=players))
    return out


@lru_cache(maxsize=1)
def _default_text() -> str:
    return resources.files("ludoteca.games.exagon").joinpath("tiles.json").read_text(encoding="utf-8")


def default_tiles() -> list[dict[str, Any]]:
    """A fresh copy of the default 40-tile set."""
    return validate_tiles(json.loads(_default_text()))


_DEFAULT: list[dict[str, Any]] | None = None


def _default_set() -> list[dict[str, Any]]:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = default_tiles()
    return _DEFAULT


def load_tiles(value: Any, players: int | None = None) -> list[dict[str, Any]]:
    """The ``tiles`` option: None/"default", a file path, JSON text, or a list of tiles."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "default", "null", "none")):
        return _default_set()  # 40 tiles: enough for 5 players
    if isinstance(value, str):
        text = value.strip()
        if text.startswith(("[", "{")):
            source = _("the tiles JSON text")
            if len(text) > MAX_TILES_BYTES:
                raise ValueError(_(
                    "{source} has {count} characters; at most {max_tiles_bytes}"
                ).format(source=source, count=len(text), max_tiles_bytes=MAX_TILES_BYTES))
        else:
            path = Path(value)
            source = _("tiles file {path}").format(path=repr(str(path)))
            try:
                with path.open("rb") as f:
                    raw = f.read(MAX_TILES_BYTES + 1)  # never more: a huge file costs nothing
                if len(raw) > MAX_TILES_BYTES:
                    raise ValueError(_(
                        "{source} is too big: a tiles file holds at most {max_tiles_bytes} bytes"
                    ).format(source=source, max_tiles_bytes=MAX_TILES_BYTES))
                text = raw.decode("utf-8")
            except FileNotFoundError:
                raise ValueError(_("{source} not found").format(source=source)) from None
            except IsADirectoryError:
                raise ValueError(_("{source} is a directory, not a file").format(source=source)) from None
            except (OSError, UnicodeDecodeError) as exc:
                raise ValueError(_("cannot read {source}: {exc}").format(source=source, exc=exc)) from None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(_(
                "{source} is not valid JSON: {error} (line {line})"
            ).format(source=source, error=exc.msg, line=exc.lineno)) from None
        except RecursionError:
            raise ValueError(_("{source} is nested too deeply to be a tile list").format(source=source)) from None
    if isinstance(value, Mapping) and "tiles" in value:
        value = value["tiles"]
    if isinstance(value, tuple):
        value = list(value)
    tiles = validate_tiles(value, players)
    default = _default_set()
    return default if tiles == default else tiles


def _resolve_tiles(value: Any, resolved: Mapping[str, Any]) -> list[dict[str, Any]]:
    if isinstance(value, PositionTiles):  # a sibling game built for a position read from JSON
        return value
    return load_tiles(value, resolved.get("players"))


def _resolve_clock(value: Any, _resolved: Mapping[str, Any]) -> float | int | None:
    if isinstance(value, str):
        value = parse_option_text(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ValueError(_("expected a positive number of seconds or null, got {value}").format(value=repr(value)))
    return value


def _hand_default(resolved: Mapping[str, Any]) -> int:
    """RULES.md, Deal: every tile dealt evenly (40 tiles: 20, 13, 10 or 8 by player count)."""
    tiles = resolved.get("tiles") or _default_set()  # asked without the tiles (an adapter): the default set
    return len(tiles) // int(resolved["players"])


def _resolve_hand(value: Any, resolved: Mapping[str, Any]) -> int:
    """``hand``: 1 tile or more, at most the tile set shared evenly."""
    most = _hand_default(resolved)
    hand: int = as_int(1)(value, resolved)
    if hand > most:
        raise ValueError(_("{players} players can hold at most {most} tiles each from a set of {tiles}, not "
                           "{value}").format(players=resolved["players"], most=most, tiles=len(resolved["tiles"]),
                                             value=hand))
    return hand


RULEBOOK_OPTIONS = frozenset({"hand", "bonus_3", "bonus_4", "bonus_5", "go_on", "tournament_target", "win_points",
                              "jolly_penalty"})
"""The rulebook's numbers as options: left out of records at RULES.md's values."""
TOURNAMENT_NUMBERS = frozenset({"tournament_target", "win_points"})
"""The rulebook numbers that only a tournament reads (a one-shot position does not write them)."""


def _bonus_option(conn: int) -> Option:
    return Option(f"bonus_{conn}", f"bonus tiles a placement with {conn} connections earns (RULES.md: {conn - 2})",
                  conn - 2, kind="int", low=0, high=6, label=f"bonus for {conn} connections",
                  help=f"the bonus tiles a tile touching {conn} tiles earns", variant=True)


def _carry_cap_default(resolved: Mapping[str, Any]) -> float | int | None:
    """``carry_cap``'s default: one full hourglass (the clock), RULES.md section 4."""
    clock: float | int | None = resolved.get("clock")
    return clock


def _resolve_carry_cap(value: Any, _resolved: Mapping[str, Any]) -> float | int | None:
    if isinstance(value, str):
        value = parse_option_text(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(_("expected a number of seconds of 0 or more, or null for no cap, got {value}").format(
            value=repr(value)))
    return value


def _check_seconds(value: Any) -> float:
    """An ``elapsed`` value: a finite number of seconds >= 0, else IllegalActionError."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise IllegalActionError(f"elapsed must be a number of seconds >= 0, not {value!r}")
    return float(value)


@lru_cache(maxsize=16)
def _geometry(radius: int) -> tuple[int, tuple[tuple[int, int], ...], tuple[tuple[tuple[int, int], ...], ...]]:
    """(W, coords per cell, in-window neighbours ``(direction, cell)`` per cell)."""
    w = 2 * radius + 1
    coords = tuple((c // w - radius, c % w - radius) for c in range(w * w))
    nbrs = []
    for q, r in coords:
        row = []
        for d, (dq, dr) in enumerate(DIRECTIONS):
            nq, nr = q + dq, r + dr
            if -radius <= nq <= radius and -radius <= nr <= radius:
                row.append((d, (nq + radius) * w + nr + radius))
        nbrs.append(tuple(row))
    return w, coords, tuple(nbrs)


# --- the game -------------------------------------------------------------------------

class ExagonGame(Game):
    """EXAGON: attach hexagonal tiles by matching numbers; first to place every tile wins."""

    name = "exagon"
    title = "EXAGON"
    min_players = 2
    max_players = 5
    hidden_information = False  # see has_hidden_information(): only a set that leaves 2+ tiles aside
    clock_option = "clock"
    score_name = "tiles"
    counters = COUNTERS
    agent_defaults = {"mcts": {"iterations": 300, "cap": 10, "rollout": "heuristic", "prune": 8, "c": 0.3},
                      "strong": {"iterations": 1000, "cap": 10, "c": 0.3}}  # docs/strength.md: "strong"
    compiled_part = "compiled"
    rules_notes = "docs/rules/exagon.md"
    catalogue_order = 4
    OPTIONS = (
        Option("clock", "seconds of hourglass per turn; null for no clock", 60, _resolve_clock,
               kind="seconds_or_none", low=1, label="hourglass", none_label="no hourglass",
               help="the seconds each player has for a turn; time left over passes on to the next turn"),
        Option("tiles", "the tile set: a JSON file path, JSON text or a list of tiles (null: the default 40)",
               None, _resolve_tiles, kind="file", label="tile set", default_label="the 40 tiles of ludoteca",
               help="a tile set of your own: a JSON file holding a list of tiles, each with an id, six sides "
                    "(numbers 1 to 9, J for a Jolly, X for an Exagon), its star and its star points"),
        Option("tournament", "play one-shot games until someone has 50 points", False, as_bool,
               kind="bool", label="tournament",
               help="play games one after another until someone has 50 points"),
        Option("turn_limit", "player turns after which a one-shot game ends (scored as blocked)", 1000, as_int(1),
               kind="int", low=1, label="turn limit",
               help="a game stops after this many player turns and is scored like a blocked game"),
        Option("tournament_games", "one-shot games a tournament lasts at most; after the last one the highest "
               "score wins (ties share)", 1000, as_int(1), kind="int", low=1, label="games in a tournament",
               help="the most games a tournament lasts; after the last one the highest score wins"),
        Option("matching", "which placements are legal: 'strict' (every side a tile touches must match) or "
               "'lenient' (at least one touching side must match; connections are the matching sides)",
               "strict", one_of("strict", "lenient"), kind="choice", label="matching sides",
               help="which sides of a new tile must match the tiles it touches",
               choices=(Choice("strict", "every side", "every side the tile touches must match"),
                        Choice("lenient", "at least one side", "one matching side is enough; only matching "
                                                               "sides connect"))),
        Option("carry_cap", "most seconds of a turn's time left passed on to the next turn; null for no cap "
               "(default: the clock, one full hourglass; ignored without a clock)",
               _carry_cap_default, _resolve_carry_cap, kind="seconds_or_none", low=0,
               label="time carried over", none_label="no limit", default_label="one full hourglass",
               help="the most seconds left over from a turn that pass on to the next one"),
        Option("hand", "tiles dealt to each player (RULES.md: the set shared evenly, 20/13/10/8 of 40 for 2/3/4/5 "
               "players); one tile left over starts on the table, two or more are set aside unseen",
               _hand_default, _resolve_hand, kind="int", low=1, label="tiles per player",
               help="the tiles dealt to each player; one tile left over starts on the table, more are set aside",
                variant=True),
        *(_bonus_option(conn) for conn in (3, 4, 5)),
        Option("go_on", "connections a tile needs for the turn to go on; with fewer the turn ends unless a bonus "
               "is spent (RULES.md: 2)", 2, kind="int", low=1, high=6, label="connections to go on",
               help="the tiles a placed tile must touch for the turn to go on; with fewer, a bonus is spent or "
                    "the turn ends", variant=True),
        Option("tournament_target", "tournament points that end a tournament (RULES.md: 50)", TOURNAMENT_TARGET,
               kind="int", low=1, high=10000, label="points to win a tournament",
               help="a tournament ends when someone has this many points", variant=True),
        Option("win_points", "tournament points the winner of a game gains (RULES.md: 20)", WIN_POINTS, kind="int",
               low=0, high=1000, label="points for a win", help="the tournament points the winner of a game gains",
                variant=True),
        Option("jolly_penalty", "tournament points lost per Jolly tile left in hand, besides its star points "
               "(RULES.md: 3)", JOLLY_PENALTY, kind="int", low=0, high=100, label="penalty per Jolly tile",
               help="the points lost for each Jolly tile left in hand at the end of a game, besides its star points",
                variant=True),
    )

    def _setup(self) -> None:
        n = self.num_players
        tiles: list[dict[str, Any]] = self.options["tiles"]
        self.tiles = tiles
        self.n_tiles = N = len(tiles)
        self.ids = [t["id"] for t in tiles]
        self.index_of = {tid: i for i, tid in enumerate(self.ids)}
        self.sides = [tuple(CODES.get(s, s) for s in t["sides"]) for t in tiles]
        self.star = [t["star"] for t in tiles]
        self.nummask = [sum(1 << s for s in set(sd) if s <= 9) for sd in self.sides]
        self.jolly = [J in sd for sd in self.sides]
        self.penalty = [t["star_points"] + (self.options["jolly_penalty"] if jolly else 0)
                        for t, jolly in zip(tiles, self.jolly, strict=True)]
        self.penalty_total = sum(self.penalty)
        # faces[t][k][d]: the side of tile t, rotation k, facing direction d.
        self.faces = [[tuple(sd[(d - k) % 6] for d in range(6)) for k in range(6)] for sd in self.sides]
        clock = self.options["clock"]
        self.hourglass: float | None = None if clock is None else float(clock)
        self.turn_limit: int = self.options["turn_limit"]
        self.tournament: bool = self.options["tournament"]
        self.tournament_games: int = self.options["tournament_games"]
        """The bound on a tournament's one-shot games (docs/rules/exagon.md, Tournament): without it
        a tournament in which no one can reach 50 points (a very short turn_limit) never ends."""
        self.lenient: bool = self.options["matching"] == "lenient"
        """RULES.md, Matching, option ``matching="lenient"``: a tile needs one matching side, not all,
        and its connections are its matching sides."""
        cap = self.options["carry_cap"]
        self.carry_cap: float | None = None if clock is None or cap is None else float(cap)
        """The most seconds a turn passes on to the next (RULES.md, Hourglass, option ``carry_cap``);
        None: no cap, or no clock."""
        # Geometry: a square axial window of radius N - 1 holds every reachable cell.
        self.radius = R = max(N - 1, 1)
        self.width, self.coords, self.nbrs = _geometry(R)
        self.n_cells = C = self.width * self.width
        self.origin = R * self.width + R
        self.place0 = N  # ints below N are deals (chance outcomes): never a player action
        self.give0 = N + N * C * 6
        self.stop_action = self.give0 + N * n
        self.pass_action = self.stop_action + 1
        self.timeout_action = self.stop_action + 2
        self.off0 = self.timeout_action + 1
        """The first off-table placement code (= num_distinct_actions())."""
        self.per_seat: int = self.options["hand"]
        """Tiles dealt to each player (option ``hand``; RULES.md: N // players)."""
        self.leftover: int = N - self.per_seat * n
        self.bonus_for: tuple[int, ...] = (0, 0, 0, self.options["bonus_3"], self.options["bonus_4"],
                                           self.options["bonus_5"], 0)
        """Bonus tiles earned by a placement with each number of connections (RULES.md: 3, 4, 5 -> 1, 2, 3)."""
        self.go_on: int = self.options["go_on"]
        self.tournament_target: int = self.options["tournament_target"]
        self.win_points: int = self.options["win_points"]
        # Candidate index: by_face[d][v] = (t, k) whose side facing d matches a number v there.
        by_face: list[list[list[tuple[int, int]]]] = [[[] for _ in range(10)] for _ in range(6)]
        by_jolly: list[dict[int, list[tuple[int, int]]]] = [{} for _ in range(6)]
        jolly_tiles = [t for t in range(N) if self.jolly[t]]
        for t in range(N):
            for k in range(6):
                f = self.faces[t][k]
                for d in range(6):
                    s = f[d]
                    if s <= 9:
                        by_face[d][s].append((t, k))
                    elif s == J:
                        for v in range(1, 10):
                            if not self.nummask[t] >> v & 1:
                                by_face[d][v].append((t, k))
                    for t2 in jolly_tiles:
                        if s == J or (s <= 9 and not self.nummask[t2] >> s & 1):
                            by_jolly[d].setdefault(t2, []).append((t, k))
        self.by_face = [[tuple(v) for v in row] for row in by_face]
        self.by_jolly = [{t2: tuple(v) for t2, v in row.items()} for row in by_jolly]
        self._siblings: dict[str, ExagonGame] = {}
        self._h_difficulty: list[float] | None = None  # the heuristic's cache (games/exagon/heuristic.py)

    def num_distinct_actions(self) -> int:
        return self.off0

    def has_hidden_information(self) -> bool:
        """True only when the deal sets two or more tiles aside unseen (a designer's set): the
        aside is EXAGON's only secret (hands are face up, the deal is public)."""
        return self.leftover >= 2

    # --- off-table placements ------------------------------------------------------------
    def off_table_code(self, t: int, q: int, r: int, rot: int) -> int:
        """The int of a placement of tile index ``t`` on ``[q, r]`` outside the window."""
        return self.off0 + (_pair(_zigzag(q), _zigzag(r)) * self.n_tiles + t) * 6 + rot

    def off_table(self, action: int) -> tuple[int, int, int, int] | None:
        """``(t, q, r, rot)`` of an off-table placement code; None for any other int."""
        if action < self.off0:
            return None
        rest, rot = divmod(action - self.off0, 6)
        cell, t = divmod(rest, self.n_tiles)
        a, b = _unpair(cell)
        q, r = _unzigzag(a), _unzigzag(b)
        R = self.radius
        if -R <= q <= R and -R <= r <= R:
            return None  # inside the window: that placement has its own code
        return t, q, r, rot

    def max_chance_outcomes(self) -> int:
        return self.n_tiles

    def record_options(self) -> dict[str, Any]:
        """The options, without ``matching`` and ``carry_cap`` at their defaults (``"strict"``, the
        clock): records, lab results and golden playthroughs written before those options existed
        stay as they were (and read back the same)."""
        opts = dict(self.options)
        if not self.tournament:  # one one-shot game: the bound on a tournament's games plays no part
            del opts["tournament_games"]
        if opts["matching"] == "strict":
            del opts["matching"]
        if not self.explicit_carry_cap():
            del opts["carry_cap"]
        for opt in self.OPTIONS:
            if opt.name in RULEBOOK_OPTIONS and opts[opt.name] == opt.default_for(self.options):
                del opts[opt.name]
        if self.tiles is _default_set():
            del opts["tiles"]
        else:
            opts["tiles"] = [dict(t, sides=list(t["sides"])) for t in self.tiles]
        return opts

    @cached_property
    def rulebook_keys(self) -> dict[str, Any]:
        """The rulebook numbers a position of this game writes: those not at their defaults
        (``tournament_target`` and ``win_points`` only in a tournament, the only game that reads them)."""
        return {opt.name: self.options[opt.name] for opt in self.OPTIONS
                if opt.name in RULEBOOK_OPTIONS and (self.tournament or opt.name not in TOURNAMENT_NUMBERS)
                and self.options[opt.name] != opt.default_for(self.options)}

    def explicit_carry_cap(self) -> bool:
        """Whether ``carry_cap`` differs from its default (the clock, one hourglass)."""
        return bool(self.options["carry_cap"] != self.options["clock"])

    def connections(self, board: Mapping[int, tuple[int, int]], t: int, k: int, c: int) -> int:
        """The connections of tile ``t`` with rotation ``k`` placed on empty cell ``c`` of ``board``
        (cell -> (tile, rotation)): the tiles it touches, or under ``matching="lenient"`` the
        sides it touches that match (RULES.md, Matching)."""
        if not self.lenient:
            return sum(1 for _, nc in self.nbrs[c] if nc in board)
        faces = self.faces
        f = faces[t][k]
        conn = 0
        for d, nc in self.nbrs[c]:
            occ = board.get(nc)
            if occ is not None and _matches(self, f[d], t, faces[occ[0]][occ[1]][(d + 3) % 6], occ[0]):
                conn += 1
        return conn

    def new_initial_state(self) -> ExagonState:
        return ExagonState(self)

    # --- reading positions ------------------------------------------------------------
    def _sibling(self, players: int, tiles: list[dict[str, Any]], clock: Any, tournament: bool, matching: str,
                 carry_cap: Any, rulebook: Mapping[str, Any]) -> ExagonGame:
        """The game of a position: ``carry_cap`` is the position's, else this game's when it is not
        the default, else (``...``) the default, the position's clock; ``rulebook`` holds the
        rulebook numbers it does not leave at their defaults (:meth:`_position_rulebook`)."""
        if carry_cap is ...:
            carry_cap = self.options["carry_cap"] if self.explicit_carry_cap() else clock
        same_tiles = tiles is self.tiles or tiles == self.tiles
        if (same_tiles and players == self.num_players and clock == self.hourglass and tournament == self.tournament
                and matching == self.options["matching"] and carry_cap == self.options["carry_cap"]
                and all(self.options[name] == value for name, value in rulebook.items())):
            return self
        opts = {"players": players, "tiles": self.tiles if same_tiles else tiles, "clock": clock,
                "tournament": tournament, "turn_limit": self.turn_limit, "tournament_games": self.tournament_games,
                "matching": matching, "carry_cap": carry_cap, **rulebook}
        key = json.dumps(opts, sort_keys=True)
        game = self._siblings.get(key)
        if game is None:
            game = ExagonGame(**opts)
            self._siblings[key] = game
        return game

    def _position_rulebook(self, pos: PositionShape, tiles: list[dict[str, Any]]) -> dict[str, Any]:
        """The rulebook numbers (``RULEBOOK_OPTIONS``) of a position's game that are not their
        defaults: each one the position carries (checked like the option: ``position['go_on']: ...``),
        else this game's when it is not the default (``hand`` only for this game's players and tiles:
        it is a count for them)."""
        given = cast(Mapping[str, Any], pos)
        resolved = {"players": pos["players"], "tiles": tiles}
        same_deal = pos["players"] == self.num_players and (tiles is self.tiles or tiles == self.tiles)
        out: dict[str, Any] = {}
        for opt in self.OPTIONS:
            name = opt.name
            if name not in RULEBOOK_OPTIONS:
                continue
            if name in given:
                assert opt.resolve is not None
                try:
                    out[name] = opt.resolve(given[name], resolved)
                except ValueError as exc:
                    raise ValueError(f"position[{name!r}]: {exc}") from None
            elif (name != "hand" or same_deal) and self.options[name] != opt.default_for(self.options):
                out[name] = self.options[name]
        return out

    def state_from_json(self, data: Mapping[str, Any]) -> ExagonState:
        """Read a position (its shape: :class:`PositionShape`); its own players, tiles, clock,
        tournament mode, ``matching``, ``carry_cap`` and rulebook numbers (``hand``, ``bonus_3`` to
        ``bonus_5``, ``go_on``, ``tournament_target``, ``win_points``, ``jolly_penalty``; for each key
        the position lacks, this game's) define the game it belongs to (a sibling of this one, same
        turn_limit and tournament_games): a position is self-contained (RULES.md section 4), so any
        EXAGON game object reads it as a position of the game that wrote it."""
        pos = read(data, PositionShape)
        tiles = _position_tiles(pos)
        clock = _position_clock(pos, self.hourglass)
        matching = pos.get("matching", self.options["matching"])
        carry_cap: Any = ...
        if "carry_cap" in pos:
            try:
                carry_cap = _resolve_carry_cap(pos["carry_cap"], {})
            except ValueError as exc:
                raise ValueError(f"position['carry_cap']: {exc}") from None
        rulebook = self._position_rulebook(pos, tiles)
        game = self._sibling(pos["players"], tiles, clock, pos["scores"] is not None, matching, carry_cap, rulebook)
        return ExagonState._from_json(game, pos)


# --- the position's shape (read by ludoteca.core.shape; the rules' invariants are checked below) ---

class PlacedShape(TypedDict):
    """A tile on the table: ``{"tile": id, "at": [q, r], "rot": 0-5}``."""

    tile: int
    at: list[int]
    rot: Annotated[int, Between(0, 5)]


class ResultShape(TypedDict):
    """``result`` of a finished game (this engine's key)."""

    winners: list[int]
    end: Literal["last_tile", "perfect_fit", "blocked", "turn_limit"]


class PositionShape(TypedDict):
    """An EXAGON position (RULES.md section 4), plus this engine's optional keys."""

    game: Literal["exagon"]
    players: Annotated[int, Between(2, 5)]
    tiles: list[Any]
    """Each tile is checked by :func:`validate_tiles` (shared with the ``tiles`` option)."""
    table: list[PlacedShape]
    hands: list[list[int]]
    aside: list[int]
    to_move: int
    phase: Literal["deal", "opening", "turn", "over"]
    turn: Annotated[int, Between(0, None)]
    placed_this_turn: int
    bonus: int
    time_left: float | None
    carry: float | None
    scores: list[int] | None
    clock: NotRequired[Any]
    """Checked like the ``clock`` option (a positive number of seconds, or null)."""
    passes: NotRequired[Annotated[int, Between(0, None)]]
    result: NotRequired[ResultShape | None]
    games_played: NotRequired[Annotated[int, Between(0, None)] | None]
    """A tournament's one-shot games finished so far (0 when missing); null outside a tournament."""
    matching: NotRequired[Literal["strict", "lenient"]]
    """The ``matching`` option of the position's game (written when ``"lenient"``)."""
    carry_cap: NotRequired[Any]
    """The ``carry_cap`` option of the position's game (written when not the default, the clock);
    checked like the option (seconds >= 0, or null)."""
    tournament_target: NotRequired[int]
    """The ``tournament_target`` option of the position's game (written in a tournament when not
    RULES.md's 50), for a board to say."""
    win_points: NotRequired[int]
    """The ``win_points`` option of the position's game (written in a tournament when not RULES.md's 20)."""
    hand: NotRequired[int]
    """The ``hand`` option of the position's game (written when not the set shared evenly)."""
    bonus_3: NotRequired[int]
    """The ``bonus_3`` option of the position's game (written when not RULES.md's 1); likewise
    ``bonus_4`` (2), ``bonus_5`` (3), ``go_on`` (2) and ``jolly_penalty`` (3). Each of these keys is
    checked like its option; a position without one is read with the reading game's value."""
    bonus_4: NotRequired[int]
    bonus_5: NotRequired[int]
    go_on: NotRequired[int]
    jolly_penalty: NotRequired[int]


def _position_tiles(pos: PositionShape) -> list[dict[str, Any]]:
    """The position's tiles: "its tiles list may hold any tiles" — each tile is checked, the set
    is not (a designer's set is validated when given as the option)."""
    try:
        tiles = validate_tiles(pos["tiles"], as_set=False)
    except ValueError as exc:
        raise ValueError(f"position['tiles']: {exc}") from None
    default = _default_set()
    return default if tiles == default else PositionTiles(tiles)


def _position_clock(pos: PositionShape, own: float | None) -> float | None:
    """The clock of a position's game: its ``clock`` key; else, during the deal and the opening,
    the reading game's (``own``); else none when ``time_left`` is null, else ``own`` or 60."""
    if "clock" in pos:
        try:
            clock = _resolve_clock(pos["clock"], {})
        except ValueError as exc:
            raise ValueError(f"position['clock']: {exc}") from None
    elif pos["phase"] in ("deal", "opening"):
        clock = own  # time_left says nothing about the clock before the first turn
    elif pos["time_left"] is None:
        clock = None
    else:
        clock = own if own is not None else 60
    return None if clock is None else float(clock)


class _Layout(NamedTuple):
    """Where every tile of a position is (tile indices)."""

    hands: list[list[int]]
    aside: list[int]
    table: list[tuple[int, int, int]]
    board: dict[int, tuple[int, int]]
    placed: int
    """How many tiles the position places (hands + table + aside)."""


def _layout(g: ExagonGame, pos: PositionShape) -> _Layout:
    """Hands, aside and table as tile indices: known ids, each tile in one place, one tile a cell."""
    where_is: dict[int, str] = {}

    def tile(value: int, what: str) -> int:
        if value not in g.index_of:
            raise ValueError(f"{what}: {value!r} is not the id of a tile listed in position['tiles']")
        if value in where_is:
            raise ValueError(f"tile {value} is both in {where_is[value]} and in {what}")
        where_is[value] = what
        return g.index_of[value]

    n = g.num_players
    if len(pos["hands"]) != n:
        raise ValueError(f"position['hands'] must list {n} hands, not {len(pos['hands'])}")
    hands = [[tile(v, f"the hand of player {seat}") for v in h] for seat, h in enumerate(pos["hands"])]
    aside = [tile(v, "aside") for v in pos["aside"]]
    R = g.radius
    table: list[tuple[int, int, int]] = []
    board: dict[int, tuple[int, int]] = {}
    for i, e in enumerate(pos["table"]):
        t = tile(e["tile"], "the table")
        at, rot = e["at"], e["rot"]
        if len(at) != 2:
            raise ValueError(f"position['table'][{i}]['at'] must be [q, r], not {at!r}")
        if not (-R <= at[0] <= R and -R <= at[1] <= R):
            raise ValueError(f"position['table'][{i}]: cell {at} is outside the table (|q|, |r| <= {R})")
        c = (at[0] + R) * g.width + at[1] + R
        if c in board:
            raise ValueError(f"tiles {g.ids[board[c][0]]} and {g.ids[t]} overlap at {at}")
        board[c] = (t, rot)
        table.append((t, c, rot))
    return _Layout(hands, aside, table, board, len(where_is))


def _check_table(g: ExagonGame, board: Mapping[int, tuple[int, int]]) -> None:
    """Every touching pair of sides matches, and the table is one connected group. Under
    ``matching="lenient"`` touching sides may differ, but the tiles joined by matching sides form
    one group (each tile was placed with a matching side against one placed before it)."""
    linked: dict[int, list[int]] = {c: [] for c in board}
    for c, (t, k) in board.items():
        for d, nc in g.nbrs[c]:
            if nc in board and nc > c:
                t2, k2 = board[nc]
                a, b = g.faces[t][k][d], g.faces[t2][k2][(d + 3) % 6]
                if _matches(g, a, t, b, t2):
                    linked[c].append(nc)
                    linked[nc].append(c)
                elif not g.lenient:
                    raise ValueError(
                        f"tiles {g.ids[t]} at {list(g.coords[c])} and {g.ids[t2]} at {list(g.coords[nc])} "
                        f"touch with unmatched sides ({SYMBOLS.get(a, a)} against {SYMBOLS.get(b, b)})"
                    )
    if board:
        seen = {next(iter(board))}
        stack = list(seen)
        while stack:
            c = stack.pop()
            for nc in linked[c]:
                if nc not in seen:
                    seen.add(nc)
                    stack.append(nc)
        if len(seen) != len(board):
            if g.lenient:
                raise ValueError("the tiles on the table do not form one group joined by matching sides")
            raise ValueError("the tiles on the table do not form one connected group")


def _check_deal(g: ExagonGame, phase: int, lay: _Layout) -> int:
    """The tiles dealt: a round-robin deal during ``deal``, every tile placed afterwards."""
    n = g.num_players
    dealt = sum(len(h) for h in lay.hands)
    if phase == DEAL:
        if lay.table or lay.aside:
            raise ValueError("during the deal the table and aside are empty")
        expect = [dealt // n + (1 if seat < dealt % n else 0) for seat in range(n)]
        if dealt > n * g.per_seat or [len(h) for h in lay.hands] != expect:
            raise ValueError(f"hands of {[len(h) for h in lay.hands]} tiles are not a round-robin deal "
                             f"of {g.per_seat} each")
        if dealt == n * g.per_seat and g.leftover != 1:
            raise ValueError("every tile is dealt: the phase should be opening")
    elif lay.placed != g.n_tiles:
        listed = {g.ids[t] for h in lay.hands for t in h} | {g.ids[t] for t in lay.aside}
        listed |= {g.ids[t] for t, _, _ in lay.table}
        missing = [tid for tid in g.ids if tid not in listed]
        raise ValueError(f"tiles {missing} are in no hand, not on the table and not aside "
                         f"(hands + table + aside must hold every tile listed)")
    return dealt


def _read_turn(g: ExagonGame, phase: int, pos: PositionShape, dealt: int) -> tuple[int, int, int, int, int]:
    """``to_move``, ``turn``, ``placed_this_turn``, ``bonus``, ``passes``. RULES.md, "Reading a
    position": the rules do not fix to_move at a chance node (the deal) or at ``over``, nor the turn
    counters of a finished game: any whole number is read there, and this engine writes its own
    convention back (the seat dealt to next; a seat or 0; counters 0)."""
    n = g.num_players
    to_move, placed, bonus = pos["to_move"], pos["placed_this_turn"], pos["bonus"]
    if phase == DEAL:
        to_move = dealt % n
    elif phase == OVER:
        to_move = to_move if 0 <= to_move < n else 0
        placed = bonus = 0
    else:
        to_move = need_int(to_move, "position['to_move']", 0, n - 1)
    placed = need_int(placed, "position['placed_this_turn']", 0)
    bonus = need_int(bonus, "position['bonus']", 0)
    passes = need_int(pos.get("passes", 0), "position['passes']", 0, n)
    return to_move, pos["turn"], placed, bonus, passes


def _read_scores(g: ExagonGame, phase: int, pos: PositionShape) -> list[int] | None:
    """Tournament points: null outside a tournament; one per seat, under 50 until the end."""
    scores = pos["scores"]
    if scores is None:
        return None
    n = g.num_players
    if len(scores) != n:
        raise ValueError(f"position['scores'] must be null or a list of {n} whole numbers")
    if phase != OVER and max(scores) >= g.tournament_target:
        raise ValueError(f"a score of {g.tournament_target} ends the tournament: the phase should be over")
    return list(scores)


def _read_games_played(g: ExagonGame, phase: int, pos: PositionShape, scores: list[int] | None) -> int | None:
    """``games_played``: a tournament's one-shot games finished (0 when missing), fewer than
    ``tournament_games`` until the end; null (or missing) outside a tournament."""
    played = pos.get("games_played")
    if scores is None:
        if played is not None:
            raise ValueError("position['games_played'] is null outside a tournament (scores null)")
        return None
    played = 0 if played is None else played
    if phase != OVER and played >= g.tournament_games:
        raise ValueError(f"{played} games played reach the tournament's {g.tournament_games} (option "
                         f"tournament_games): the phase should be over")
    return played


def _check_turn_counters(g: ExagonGame, phase: int, hands: list[list[int]], turn: int, placed: int, bonus: int,
                         passes: int) -> None:
    """The turn counters agree with the phase: bonuses need placements, placements need phase
    turn, and a game that a hand, the passes or the turn limit has ended is ``over``."""
    if phase != TURN and (placed or bonus):
        raise ValueError("placed_this_turn and bonus are 0 outside the phase turn")
    if placed == 0 and bonus:
        raise ValueError("a bonus is earned by placing tiles: bonus must be 0 when placed_this_turn is 0")
    if phase in (OPENING, TURN) and not all(hands):
        empty = next(seat for seat, h in enumerate(hands) if not h)
        raise ValueError(f"player {empty} has no tile left: the phase should be over")
    if phase != OVER and passes >= g.num_players:
        raise ValueError(f"{passes} passes in a row block the game: the phase should be over")
    if phase != OVER and turn >= g.turn_limit:
        raise ValueError(f"turn {turn} reaches the turn limit {g.turn_limit}: the phase should be over")


def _read_time(g: ExagonGame, phase: int, pos: PositionShape) -> tuple[float | None, float | None]:
    """``time_left`` and ``carry``: not fixed by the rules during the deal and the opening (no
    hourglass runs then: read whatever they are, null written back); numbers >= 0 in a clocked
    turn (and at the end of a clocked game that got past the opening), null without a clock."""
    time_left, carry = pos["time_left"], pos["carry"]
    if phase in (DEAL, OPENING):
        return None, None
    if g.hourglass is None:
        if time_left is not None or carry is not None:
            raise ValueError("without a clock time_left and carry are null")
        return None, None
    if phase == OVER and time_left is None and carry is None:
        return None, None  # the game ended during the opening, before the hourglass started
    left, carried = _seconds("time_left", time_left), _seconds("carry", carry)
    if g.carry_cap is not None and carried > g.carry_cap:
        raise ValueError(f"position['carry'] is {carried} s, above the carry cap of {g.carry_cap} s "
                         f"(option carry_cap)")
    return left, carried


def _seconds(key: str, value: float | None) -> float:
    if value is None or value < 0:
        raise ValueError(f"position[{key!r}] must be a number of seconds >= 0, not {value!r}")
    return float(value)


def _read_result(s: ExagonState, phase: int, pos: PositionShape, hands: list[list[int]],
                 scores: list[int] | None) -> dict[str, Any] | None:
    """``result``: null until the end; at the end as written (seats checked), else derived: a
    player without tiles, else the blocked order."""
    result = pos.get("result")
    n = s.game.num_players
    if phase != OVER:
        if result is not None:
            raise ValueError("position['result'] is null until the game is over")
        return None
    if result is not None:
        winners = result["winners"]
        if not winners or any(not 0 <= w < n for w in winners) or len(set(winners)) != len(winners):
            raise ValueError(f"position['result']['winners'] must list seats 0 to {n - 1}")
        return {"winners": list(winners), "end": result["end"]}
    empty = [seat for seat, h in enumerate(hands) if not h]
    if scores is not None:  # the highest scores (at 50 or more, or after the last game allowed)
        best = max(scores)
        return {"winners": [i for i, v in enumerate(scores) if v == best], "end": "last_tile"}
    if empty:
        return {"winners": empty, "end": "last_tile"}
    s.hands = hands
    return {"winners": s._leaders(), "end": "blocked"}


# --- positions -------------------------------------------------------------------------

class ExagonState(State):
    """A position of EXAGON."""

    __slots__ = ("_charge", "aside", "board", "bonus", "cand", "carry", "clock_left", "counts", "dealt", "games",
                 "hands", "links", "owner", "passes", "phase", "placed", "points", "result", "table", "to_move", "turn")

    game: ExagonGame

    def __init__(self, game: ExagonGame) -> None:
        super().__init__(game)
        n = game.num_players
        self.points: list[int] | None = [0] * n if game.tournament else None
        """Tournament points (the position's ``scores``), None outside a tournament."""
        self.games: int | None = 0 if game.tournament else None
        """One-shot games of the tournament finished (the position's ``games_played``), None outside one."""
        self.result: dict[str, Any] | None = None
        self.counts: dict[str, int] = dict.fromkeys((c.name for c in COUNTERS), 0)
        self._charge = False
        self._new_deal()

    def _new_deal(self) -> None:
        g = self.game
        self.phase = DEAL
        self.owner = [UNDEALT] * g.n_tiles
        self.hands: list[list[int]] = [[] for _ in range(g.num_players)]
        self.aside: list[int] = []
        self.table: list[tuple[int, int, int]] = []
        self.board: dict[int, tuple[int, int]] = {}
        self.cand: dict[int, tuple[tuple[int, int], ...]] = {}
        self.links: dict[int, tuple[int, ...]] = {}
        """Under ``matching="lenient"``: the connections of each entry of ``cand[c]``, in its order."""
        self.dealt = 0
        self.to_move = 0
        self.turn = 0
        self.placed = 0
        self.bonus = 0
        self.passes = 0
        # RULES.md: "The opening steps have no clock" and "with no clock, time_left and carry
        # are null": the hourglass appears with the first turn after the opening.
        self.clock_left: float | None = None
        """The position's ``time_left``: seconds left in the turn (None: no hourglass running)."""
        self.carry: float | None = None

    def _copy(self) -> ExagonState:
        s = object.__new__(ExagonState)
        s.game = self.game
        s.phase = self.phase
        s.owner = self.owner[:]
        s.hands = [h[:] for h in self.hands]
        s.aside = self.aside[:]
        s.table = self.table[:]
        s.board = self.board.copy()
        s.cand = self.cand.copy()
        s.links = self.links.copy()
        s.dealt = self.dealt
        s.to_move = self.to_move
        s.turn = self.turn
        s.placed = self.placed
        s.bonus = self.bonus
        s.passes = self.passes
        s.clock_left = self.clock_left
        s.carry = self.carry
        s.points = None if self.points is None else self.points[:]
        s.games = self.games
        s.result = None if self.result is None else {"winners": self.result["winners"][:], "end": self.result["end"]}
        s.counts = self.counts.copy()
        s._charge = False
        return s

    if TYPE_CHECKING:
        def clone(self) -> ExagonState:  # the same method, typed for this game (no cost at run time)
            ...

    # --- the protocol -------------------------------------------------------------------
    def current_player(self) -> int:
        phase = self.phase
        if phase == DEAL:
            return CHANCE
        if phase == OVER:
            return TERMINAL
        return self.to_move

    def _legal_actions(self) -> list[Action]:
        phase = self.phase
        g = self.game
        if phase in (TURN, OPENING):
            p = self.to_move
            if not self.table:  # the opening tile: any tile of the hand at [0, 0], any rotation
                base = g.place0 + g.origin * 6
                stride = g.n_cells * 6
                return [t * stride + base + k for t in sorted(self.hands[p]) for k in range(6)]
            owner = self.owner
            acts = [a for lst in self.cand.values() for t, a in lst if owner[t] == p]
            acts.sort()
            if phase == TURN and self.placed:
                hand = self.hands[p]
                if self.bonus:  # any tile, the last one too (RULES.md makes no exception)
                    n = g.num_players
                    to = [s for s in range(n) if s != p and len(self.hands[s]) == 1]
                    if to:
                        acts.extend(g.give0 + t * n + s for t in sorted(hand) for s in to)
                acts.append(g.stop_action)
            elif not acts:
                acts.append(g.pass_action)
            return acts
        if phase == DEAL:
            owner = self.owner
            return [t for t in range(g.n_tiles) if owner[t] == UNDEALT]
        return []

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        if self.phase != DEAL:
            return []
        if self._legal is None:  # cached: apply_action checks the outcome against the same list
            self._legal = self._legal_actions()
        outcomes = self._legal
        p = 1.0 / len(outcomes)
        return [(t, p) for t in outcomes]

    def returns(self) -> list[float]:
        n = self.game.num_players
        if self.phase != OVER or self.result is None:
            return [0.0] * n
        winners = self.result["winners"]
        share = 1.0 / len(winners)
        return [share if s in winners else 0.0 for s in range(n)]

    def is_legal(self, action: Action) -> bool:
        """Listed by :meth:`legal_actions`, or the timeout when it is accepted (never listed)."""
        if super().is_legal(action):
            return True
        try:
            return self._accepts_unlisted(as_action_int(action))
        except IllegalActionError:
            return False

    # --- the contract's hooks (apply_action) ------------------------------------------------
    def _accepts_unlisted(self, action: Action) -> bool:
        """``{"timeout": true}``: accepted in phase ``turn`` whenever a clock is set (RULES.md)."""
        return action == self.game.timeout_action and self.phase == TURN and self.game.hourglass is not None

    def _check_elapsed(self, action: Action, elapsed: float) -> None:
        """``elapsed`` must be a number of seconds >= 0; in a clocked turn it must not exceed
        ``time_left`` ("the hourglass ran out"). The timeout ignores it, and so do the deal, the
        opening and a game without a clock (RULES.md, Hourglass)."""
        _check_seconds(elapsed)
        left = self.clock_left  # a number exactly in a clocked turn
        self._charge = False
        if self.phase == TURN and left is not None and action != self.game.timeout_action:
            if elapsed > left:
                raise IllegalActionError(
                    f"the hourglass ran out: {float(elapsed)} s elapsed but only {left} s were left")
            self._charge = True

    def _spend(self, elapsed: float) -> None:
        """``time_left`` loses ``elapsed`` when :meth:`_check_elapsed` found it charged."""
        left = self.clock_left
        if self._charge and left is not None:
            self._charge = False
            self.clock_left = left - elapsed

    def _action_event(self, action: Action) -> Event:
        """A tile dealt names its seat; the host's timeout is a ``timeout`` event."""
        g = self.game
        if self.phase == DEAL:  # a tile dealt, public (hands are face up; docs/rules/exagon.md)
            if self.dealt < g.num_players * g.per_seat:
                return Event(ev.CHANCE, {"outcome": {"deal": g.ids[action]}, "seat": self.dealt % g.num_players})
            return Event(ev.CHANCE, {"outcome": {"deal": g.ids[action]}})  # the table tile
        if action == g.timeout_action:
            return ev.event(ev.TIMEOUT, seat=self.to_move, action={"timeout": True}, bonuses_lost=self.bonus,
                            counts_as_pass=self.placed == 0)
        return Event(ev.MOVE, {"seat": self.to_move, "action": _action_json(g, action)})

    def illegal_message(self, action: Action) -> str:
        g = self.game
        off = g.off_table(action) if type(action) is int else None
        if off is not None:
            t, q, r, rot = off
            text = json.dumps({"place": {"tile": g.ids[t], "at": [q, r], "rot": rot}})
            return _("{action} is not legal: the cell [{q}, {r}] is too far from the table for any tile to reach "
                     "it").format(action=text, q=q, r=r)
        if action == g.timeout_action and self.phase in (OPENING, TURN):
            if g.hourglass is None:
                return _('{action} is not accepted now: this game has no clock').format(action='{"timeout": true}')
            return _('{action} is not accepted now: the opening steps have no clock').format(
                action='{"timeout": true}')
        return super().illegal_message(action)

    def _apply(self, action: Action) -> None:
        g = self.game
        if self.phase == DEAL:
            self._deal(action)
        elif action < g.give0:
            self._place(action)
        elif action < g.stop_action:
            self._give(action)
        elif action == g.stop_action:
            if self._events is not None:
                self._emit("stop", seat=self.to_move)
                if self.bonus:
                    self._emit("bonuses_lost", seat=self.to_move, count=self.bonus)
            self._end_turn()
        elif action == g.pass_action:
            self.counts["passes"] += 1
            self.passes += 1
            self._emit("pass", seat=self.to_move, in_a_row=self.passes)
            self._end_turn()
        else:  # the timeout (accepted in a clocked turn only)
            self.counts["timeouts"] += 1
            if not self.placed:
                self.passes += 1
            self._end_turn(timeout=True)

    # --- rules ----------------------------------------------------------------------------
    def _deal(self, t: int) -> None:
        g = self.game
        n = g.num_players
        full = n * g.per_seat
        if self.dealt < full:
            seat = self.dealt % n
            self.owner[t] = seat
            self.hands[seat].append(t)
            self.dealt += 1
            if self.dealt < full:
                self.to_move = self.dealt % n
                return
            left = [i for i in range(g.n_tiles) if self.owner[i] == UNDEALT]
            if len(left) == 1:
                self.to_move = 0  # the table-tile node
                return
            for i in left:
                self.owner[i] = ASIDE
            self.aside = left
            if left:
                self._emit("set_aside", count=len(left))
        else:  # the table tile
            self.dealt += 1
            self._put(t, g.origin, 0)
            self._emit("table_tile", tile=g.ids[t], at=[0, 0], rot=0)
        self._start_opening()

    def _start_opening(self) -> None:
        g = self.game
        self.phase = OPENING
        self.placed = self.bonus = self.passes = 0
        star = g.star
        holders = [s for s, h in enumerate(self.hands) if any(star[t] == 39 for t in h)]
        if holders:
            self.to_move = holders[0]
        elif self.table and star[self.table[0][0]] == 39:
            self.to_move = 0
        else:
            best = max(star[t] for h in self.hands for t in h)
            self.to_move = next(s for s, h in enumerate(self.hands) if any(star[t] == best for t in h))

    def _put(self, t: int, c: int, k: int) -> int:
        """Put tile ``t`` on cell ``c``; update the open cells; return its connections."""
        self.owner[t] = IN_TABLE
        board = self.board
        board[c] = (t, k)
        self.table.append((t, c, k))
        cand = self.cand
        cand.pop(c, None)
        g = self.game
        if g.lenient:
            self.links.pop(c, None)
            for _side, nc in g.nbrs[c]:
                if nc not in board:
                    self._open(nc)
            return g.connections(board, t, k, c)
        conn = 0
        for _side, nc in g.nbrs[c]:
            if nc in board:
                conn += 1
            else:
                cand[nc] = self._cell_cands(nc)
        return conn

    def _cell_cands_lenient(self, c: int) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
        """:meth:`_cell_cands` under ``matching="lenient"``: every (tile, action) with at least one
        side matching a tile it touches (RULES.md, Matching), in the order of tile, then rotation,
        and the connections of each (its matching sides: the neighbours whose index lists it)."""
        g = self.game
        board = self.board
        faces = g.faces
        owner = self.owner
        fits: dict[int, int] = {}
        for d, nc in g.nbrs[c]:
            occ = board.get(nc)
            if occ is None:
                continue
            t2, k2 = occ
            v = faces[t2][k2][(d + 3) % 6]
            if v == X:
                continue
            for t, k in (g.by_face[d][v] if v != J else g.by_jolly[d].get(t2, ())):
                if owner[t] >= 0:
                    i = t * 6 + k
                    fits[i] = fits.get(i, 0) + 1
        stride = g.n_cells * 6
        base = g.place0 + c * 6
        order = sorted(fits)
        return (tuple([(i // 6, i // 6 * stride + base + i % 6) for i in order]),
                tuple([fits[i] for i in order]))

    def _open(self, c: int) -> None:
        """Compute what may be placed on empty cell ``c`` under the game's ``matching``."""
        if self.game.lenient:
            self.cand[c], self.links[c] = self._cell_cands_lenient(c)
        else:
            self.cand[c] = self._cell_cands(c)

    def _cell_cands(self, c: int) -> tuple[tuple[int, int], ...]:
        """Every (tile, action) that may be placed on empty cell ``c`` (tiles in hands only)."""
        g = self.game
        board = self.board
        faces = g.faces
        cons = []
        for d, nc in g.nbrs[c]:
            occ = board.get(nc)
            if occ is not None:
                t2, k2 = occ
                v = faces[t2][k2][(d + 3) % 6]
                if v == X:
                    return ()
                cons.append((d, v, t2))
        best: tuple[tuple[int, int], ...] | None = None
        best_i = 0
        for i, (d, v, t2) in enumerate(cons):
            lst = g.by_face[d][v] if v != J else g.by_jolly[d].get(t2, ())
            if best is None or len(lst) < len(best):
                best, best_i = lst, i
        if not best:
            return ()
        others = cons[:best_i] + cons[best_i + 1:]
        owner = self.owner
        stride = g.n_cells * 6
        base = g.place0 + c * 6
        if not others:
            return tuple([(t, t * stride + base + k) for t, k in best if owner[t] >= 0])  # a list: faster
        nummask = g.nummask
        out = []
        for t, k in best:
            if owner[t] < 0:
                continue
            f = faces[t][k]
            for d, v, t2 in others:
                s = f[d]
                if s == v:
                    continue
                if s == J:
                    if v <= 9 and not nummask[t] >> v & 1:
                        continue
                elif v == J and s <= 9 and not nummask[t2] >> s & 1:
                    continue
                break
            else:
                out.append((t, t * stride + base + k))
        return tuple(out)

    def _place(self, action: int) -> None:
        g = self.game
        t, rest = divmod(action - g.place0, g.n_cells * 6)
        c, k = divmod(rest, 6)
        p = self.to_move
        hand = self.hands[p]
        hand.remove(t)
        conn = self._put(t, c, k)
        counts = self.counts
        counts["placements"] += 1
        self.passes = 0
        opening = self.phase == OPENING
        events = self._events
        if events is not None:
            q, r = g.coords[c]
            board = self.board
            next_to = [g.ids[board[nc][0]] for side, nc in g.nbrs[c] if nc in board
                       and (not g.lenient or _matches(g, g.faces[t][k][side], t,
                                                      g.faces[board[nc][0]][board[nc][1]][(side + 3) % 6],
                                                      board[nc][0]))]
            events.append(Event("placed", {"seat": p, "tile": g.ids[t], "at": [q, r], "rot": k, "connections": conn,
                                           "opening": opening, "next_to": next_to}))
            if conn == 6:
                events.append(Event("perfect_fit", {"seat": p, "tile": g.ids[t], "at": [q, r]}))
        if conn == 6:
            counts["perfect_fits"] += 1
        if not hand or conn == 6:
            self.turn += 1  # the winning turn is completed too, as in the other games
            self._finish([p], "perfect_fit" if conn == 6 else "last_tile")
            return
        if opening:
            self._end_turn()
            return
        self.placed += 1
        earned = g.bonus_for[conn]
        if earned:
            self.bonus += earned
            counts["bonuses_earned"] += earned
            self._emit("bonus_earned", seat=p, count=earned)
        if conn < g.go_on:
            if self.bonus:
                self.bonus -= 1
                counts["bonuses_spent"] += 1
                self._emit("bonus_spent", seat=p)
            else:
                self._end_turn()

    def _give(self, action: int) -> None:
        """Spend a bonus to give a tile; giving away one's last tile wins at once (RULES.md, End)."""
        g = self.game
        t, seat = divmod(action - g.give0, g.num_players)
        p = self.to_move
        hand = self.hands[p]
        hand.remove(t)
        self.hands[seat].append(t)
        self.owner[t] = seat
        self.bonus -= 1
        self.counts["bonuses_spent"] += 1
        self.counts["tiles_given"] += 1
        if self._events is not None:  # "to" is a field here, not _emit's visibility
            self._events.append(Event("given", {"seat": p, "tile": g.ids[t], "to": seat, "bonus_spent": 1}))
        if not hand:
            self.turn += 1  # the winning turn is completed, as with a last tile placed
            self._finish([p], "last_tile")

    def _end_turn(self, timeout: bool = False) -> None:
        g = self.game
        self.turn += 1
        n = g.num_players
        if self.passes >= n:
            self._finish(self._leaders(), "blocked")
            return
        if self.turn >= g.turn_limit:
            self._finish(self._leaders(), "turn_limit")
            return
        # Time left when a turn ends is carried to the next; a timeout carries nothing, and the
        # first turn after the opening starts with carry 0.
        carry = 0.0
        if self.phase == TURN and not timeout and self.clock_left is not None:
            carry = self.clock_left
            cap = g.carry_cap
            if cap is not None and carry > cap:  # RULES.md, Hourglass: at most carry_cap seconds
                carry = cap
        if self.phase == OPENING and len(self.table) >= 2:
            self.phase = TURN
        self.to_move = (self.to_move + 1) % n
        self.placed = 0
        self.bonus = 0
        hourglass = g.hourglass
        if hourglass is not None and self.phase == TURN:
            self.carry = carry
            self.clock_left = hourglass + carry
            self._emit("hourglass", seat=self.to_move, carry=carry, time_left=self.clock_left)

    def _leaders(self) -> list[int]:
        """The blocked-game order: fewest tiles, then lower tournament penalty; ties share."""
        pen = self.game.penalty
        keys = [(len(h), sum(pen[t] for t in h)) for h in self.hands]
        best = min(keys)
        return [s for s, key in enumerate(keys) if key == best]

    def _finish(self, winners: list[int], reason: str) -> None:
        self.counts[_ENDED[reason]] += 1
        # The turn in progress ends with the game: its counters go back to 0, so a finished game
        # is written with placed_this_turn and bonus 0 whether it ended mid-turn or not.
        self.placed = 0
        self.bonus = 0
        if self.points is None:
            self.phase = OVER
            self.result = {"winners": winners, "end": reason}
            return
        pen = self.game.penalty
        change = [self.game.win_points if s in winners else -sum(pen[t] for t in h)
                  for s, h in enumerate(self.hands)]
        for s, delta in enumerate(change):
            self.points[s] += delta
        self._emit("tournament_game", winners=winners[:], reason=reason, change=change, scores=self.points[:])
        self.games = games = (self.games or 0) + 1
        champions: list[int] = []
        best = max(self.points)
        if best >= self.game.tournament_target or games >= self.game.tournament_games:
            # Someone reached 50, or the last game allowed (option tournament_games) is over: the
            # highest score wins, equal highest scores share (RULES.md, Tournament).
            champions = [s for s, v in enumerate(self.points) if v == best]
        if champions:
            self.phase = OVER
            self.result = {"winners": champions, "end": reason}
        else:
            self._new_deal()
            self._emit("new_game", scores=self.points[:])

    # --- extras -------------------------------------------------------------------------
    def end_reason(self) -> str:
        """Why the game ended: ``last_tile``, ``perfect_fit``, ``blocked``, ``turn_limit`` (a one-shot
        game), ``tournament`` (someone reached 50 points); ``""`` while it goes on."""
        if self.phase != OVER or self.result is None:
            return ""
        return TOURNAMENT_OVER if self.points is not None else str(self.result["end"])

    def turns_played(self) -> int:
        """Player turns completed (the position's ``turn``), read directly (the lab calls it often)."""
        return self.turn

    def scores(self) -> list[float]:
        """The blocked-game order (RULES.md, the measure of ``turn_limit``) as a number per seat,
        higher is better: minus the tiles in hand, minus the tournament penalty of those tiles
        as a fraction below 1 (the tie-break). Equal numbers share the lead."""
        pen = self.game.penalty
        denom = self.game.penalty_total + 1
        return [-len(h) - sum(pen[t] for t in h) / denom for h in self.hands]

    def counters(self) -> dict[str, float]:
        """The figures of :data:`COUNTERS` since this state began (a state read from JSON starts
        at 0; clones copy them)."""
        return dict(self.counts)

    def time_left(self) -> float | None:
        """Seconds left in the turn in phase ``turn`` with a clock, else None."""
        if self.phase != TURN or self.game.hourglass is None:
            return None
        return self.clock_left

    def worlds(self, seat: int) -> Worlds | None:
        """None: no seat needs other worlds. The tiles set aside (a designer's set) are the only
        secret, kept to the letter (never in an observation or an event), but the whole set is
        public and every hand face up, so which tiles are aside follows from what a seat sees."""
        return None

    def legal_spots(self) -> list[tuple[int, int]]:
        """Cells where the player to move can place a tile now."""
        if self.phase not in (OPENING, TURN):
            return []
        g = self.game
        if not self.table:
            return [(0, 0)]
        p = self.to_move
        owner = self.owner
        cells = sorted(c for c, lst in self.cand.items() if any(owner[t] == p for t, _ in lst))
        return [g.coords[c] for c in cells]

    # --- JSON -----------------------------------------------------------------------------
    def action_to_json(self, action: Action) -> dict[str, Any]:
        """The canonical JSON of an int action (never with ``elapsed``: time is not part of it)."""
        return _action_json(self.game, action)

    def _tile_index(self, value: Any, what: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value not in self.game.index_of:
            raise IllegalActionError(f"{what}: {value!r} is not the id of a tile of this set")
        return self.game.index_of[value]

    def action_from_json(self, data: Mapping[str, Any]) -> Action:
        """The int of a canonical JSON action. ``"elapsed"`` (RULES.md: any action may carry it) is
        checked (a number of seconds >= 0) but is not part of the action: pass it to
        ``apply_action(action, elapsed=...)``, as :meth:`State.apply_json` does."""
        if not isinstance(data, Mapping):
            raise IllegalActionError(f"an action is a JSON object, not {data!r}")
        keys = [k for k in data if k != "elapsed"]
        if len(keys) != 1 or keys[0] not in ("deal", "place", "give", "stop", "pass", "timeout"):
            raise IllegalActionError(
                f"an EXAGON action has exactly one of deal, place, give, stop, pass, timeout "
                f"(plus an optional elapsed), not {json.dumps(data, default=str)}"
            )
        if "elapsed" in data:
            _check_seconds(data["elapsed"])
        key = keys[0]
        value = data[key]
        if key == "deal":
            return self._tile_index(value, "deal")
        if key == "place":
            return self._place_from_json(value)
        if key == "give":
            return self._give_from_json(value)
        if value is not True:
            raise IllegalActionError(f'{key} is written {{"{key}": true}}, not {json.dumps(data, default=str)}')
        g = self.game
        return {"stop": g.stop_action, "pass": g.pass_action, "timeout": g.timeout_action}[key]

    def _place_from_json(self, value: Any) -> int:
        g = self.game
        if not isinstance(value, Mapping) or set(value) != {"tile", "at", "rot"}:
            raise IllegalActionError('place is {"tile": id, "at": [q, r], "rot": 0-5}')
        t = self._tile_index(value["tile"], "place")
        at, rot = value["at"], value["rot"]
        if (not isinstance(at, list | tuple) or len(at) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in at)):
            raise IllegalActionError(f"place: at must be [q, r], not {at!r}")
        if isinstance(rot, bool) or not isinstance(rot, int) or not 0 <= rot <= 5:
            raise IllegalActionError(f"place: rot must be 0 to 5, not {rot!r}")
        q, r = int(at[0]), int(at[1])
        R = g.radius
        if not (-R <= q <= R and -R <= r <= R):
            # Any [q, r] is a cell; one this far out is never next to a tile: well-formed, with a
            # code above num_distinct_actions() that apply_action refuses.
            return g.off_table_code(t, q, r, rot)
        c = (q + R) * g.width + r + R
        return g.place0 + (t * g.n_cells + c) * 6 + rot

    def _give_from_json(self, value: Any) -> int:
        g = self.game
        if not isinstance(value, Mapping) or set(value) != {"tile", "to"}:
            raise IllegalActionError('give is {"tile": id, "to": seat}')
        t = self._tile_index(value["tile"], "give")
        to = value["to"]
        if isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < g.num_players:
            raise IllegalActionError(f"give: to must be a seat 0 to {g.num_players - 1}, not {to!r}")
        return g.give0 + t * g.num_players + to

    def action_to_string(self, action: Action) -> str:
        data = self.action_to_json(action)
        if "deal" in data:
            return f"deal t{data['deal']}"
        if "place" in data:
            p = data["place"]
            return f"t{p['tile']}@{p['at'][0]},{p['at'][1]}r{p['rot']}"
        if "give" in data:
            return f"give t{data['give']['tile']}>{data['give']['to']}"
        return next(iter(data))

    _PLACE_RE = re.compile(r"t?(-?\d+)\s*@\s*\[?\s*(-?\d+)\s*,\s*(-?\d+)\s*\]?\s*r\s*(\d+)")
    _GIVE_RE = re.compile(r"give\s+t?(-?\d+)\s*>\s*(\d+)")
    _DEAL_RE = re.compile(r"deal\s+t?(-?\d+)")

    def action_from_string(self, text: str) -> Action:
        """Read ``t5@1,-1r2``, ``give t5>2``, ``stop``, ``pass``, ``timeout``, ``deal t7`` or JSON text.
        A suffix `` +3.2s`` (time spent) is checked and, like ``"elapsed"``, not part of the action."""
        s = text.strip()
        if s.startswith("{"):
            return super().action_from_string(s)
        data: dict[str, Any]
        m = re.fullmatch(r"(.*?)\s+\+(\S+?)s", s)
        if m:
            s = m.group(1)
            try:
                _check_seconds(float(m.group(2)))
            except ValueError:
                raise IllegalActionError(f"cannot read the elapsed time in {text!r}") from None
        low = s.lower()
        if low in ("stop", "pass", "timeout"):
            data = {low: True}
        elif m := self._PLACE_RE.fullmatch(s):
            data = {"place": {"tile": int(m.group(1)), "at": [int(m.group(2)), int(m.group(3))],
                              "rot": int(m.group(4))}}
        elif m := self._GIVE_RE.fullmatch(low):
            data = {"give": {"tile": int(m.group(1)), "to": int(m.group(2))}}
        elif m := self._DEAL_RE.fullmatch(low):
            data = {"deal": int(m.group(1))}
        else:
            raise IllegalActionError(
                f"cannot read {text!r}: write t5@1,-1r2, give t5>2, stop, pass, timeout, deal t7 or JSON"
            )
        return self.action_from_json(data)

    def to_json(self) -> dict[str, Any]:
        g = self.game
        ids = g.ids
        coords = g.coords
        return {
            "game": "exagon",
            "players": g.num_players,
            "tiles": [{"id": t["id"], "sides": list(t["sides"]), "star": t["star"], "star_points": t["star_points"]}
                      for t in g.tiles],
            "table": [{"tile": ids[t], "at": list(coords[c]), "rot": k} for t, c, k in self.table],
            "hands": [[ids[t] for t in h] for h in self.hands],
            "aside": [ids[t] for t in self.aside],
            "to_move": self.to_move,
            "phase": PHASES[self.phase],
            "turn": self.turn,
            "placed_this_turn": self.placed,
            "bonus": self.bonus,
            "time_left": self.clock_left,
            "carry": self.carry,
            "scores": None if self.points is None else self.points[:],
            "clock": g.hourglass,
            "passes": self.passes,
            "result": None if self.result is None else {"winners": self.result["winners"][:],
                                                         "end": self.result["end"]},
            **({} if self.games is None else {"games_played": self.games}),
            **_option_keys(g),
        }

    def observation(self, seat: int | None) -> dict[str, Any]:
        """The position without the tiles set aside (the only hidden information)."""
        data = self.to_json()
        data["aside_count"] = len(data.pop("aside"))
        return data

    @classmethod
    def _from_json(cls, g: ExagonGame, pos: PositionShape) -> ExagonState:
        """A state of ``g`` (the position's own game) from a position whose shape is read: the
        rules' invariants are checked here (RULES.md, "Reading a position")."""
        s = cls(g)
        phase = PHASES.index(pos["phase"])
        lay = _layout(g, pos)
        _check_table(g, lay.board)
        dealt = _check_deal(g, phase, lay)
        to_move, turn, placed, bonus, passes = _read_turn(g, phase, pos, dealt)
        _check_turn_counters(g, phase, lay.hands, turn, placed, bonus, passes)
        scores = _read_scores(g, phase, pos)
        games = _read_games_played(g, phase, pos, scores)
        time_left, carry = _read_time(g, phase, pos)
        result = _read_result(s, phase, pos, lay.hands, scores)
        # Build the state.
        s.phase = phase
        owner = [UNDEALT] * g.n_tiles
        for seat, h in enumerate(lay.hands):
            for t in h:
                owner[t] = seat
        for t in lay.aside:
            owner[t] = ASIDE
        for t, _at, _rot in lay.table:
            owner[t] = IN_TABLE
        s.owner = owner
        s.hands, s.aside, s.table, s.board = lay.hands, lay.aside, lay.table, lay.board
        s.cand = {}
        for c in lay.board:
            for _side, nc in g.nbrs[c]:
                if nc not in lay.board and nc not in s.cand:
                    s._open(nc)
        s.dealt = dealt + (1 if phase != DEAL and g.leftover == 1 and lay.table else 0)
        s.to_move, s.turn, s.placed, s.bonus, s.passes = to_move, turn, placed, bonus, passes
        s.clock_left, s.carry = time_left, carry
        s.points = scores
        s.games = games
        s.result = result
        return s

    # --- text -------------------------------------------------------------------------------
    def _tile_text(self, t: int, k: int = 0) -> str:
        g = self.game
        sides = " ".join(str(SYMBOLS.get(v, v)) for v in g.faces[t][k])
        return f"t{g.ids[t]}[{sides}]*{g.star[t]}"

    def render(self) -> str:
        g = self.game
        n = g.num_players
        phase = PHASES[self.phase]
        lines = [f"EXAGON, {n} players - phase {phase}, turn {self.turn}"]
        if self.phase == DEAL:
            nxt = "the table tile" if self.dealt == n * g.per_seat else f"to seat {self.to_move}"
            lines.append(f"dealing: {self.dealt} tiles dealt, next {nxt}")
        elif self.phase == OVER:
            res = self.result or {}
            lines.append(f"game over ({res.get('end')}): winners {res.get('winners')}")
        else:
            info = f"player {self.to_move} to move"
            if self.phase == TURN:
                info += f"; placed this turn {self.placed}, bonus {self.bonus}"
            if g.hourglass is not None:
                if self.phase == OPENING:
                    info += "; no clock during the opening"
                else:
                    info += f"; {self.clock_left:g} s left (carry {self.carry:g})"
            lines.append(info)
        if self.points is not None:
            lines.append(f"tournament scores: {self.points}")
        if self.table:
            lines.append(f"table ({len(self.table)} tiles, sides listed facing directions 0-5):")
            lines.extend(self._drawing())
            for t, c, k in self.table:
                q, r = g.coords[c]
                lines.append(f"  [{q},{r}] rot {k}: {self._tile_text(t, k)}")
        else:
            lines.append("table: empty")
        spots = self.legal_spots()
        if spots:
            lines.append("legal spots: " + " ".join(f"[{q},{r}]" for q, r in spots))
        for seat, h in enumerate(self.hands):
            mark = ">" if seat == self.to_move and self.phase in (OPENING, TURN) else " "
            tiles = " ".join(self._tile_text(t) for t in h) or "-"
            lines.append(f"{mark}P{seat} ({len(h)}): {tiles}")
        if self.aside:
            lines.append(f"aside (hidden): {len(self.aside)} tiles")
        return "\n".join(lines)

    def _drawing(self) -> list[str]:
        """A small hex map: tile ids where placed, ``.`` on the legal spots."""
        g = self.game
        cells: dict[tuple[int, int], str] = {g.coords[c]: f"t{g.ids[t]}" for t, c, _ in self.table}
        for q, r in self.legal_spots():
            cells[(q, r)] = "."
        xs = [2 * q + r for q, r in cells]
        rs = [r for _, r in cells]
        x0 = min(xs)
        out = []
        for r in range(min(rs), max(rs) + 1):
            row = [(2 * q + r - x0, label) for (q, rr), label in cells.items() if rr == r]
            line = ""
            for x, label in sorted(row):
                line = line.ljust(3 * x) + label
            out.append("    " + line.rstrip())
        return out


def _option_keys(g: ExagonGame) -> dict[str, Any]:
    """The position's keys for ``matching``, ``carry_cap`` and the rulebook numbers (``hand``,
    ``bonus_3`` to ``bonus_5``, ``go_on``, ``jolly_penalty``; in a tournament ``tournament_target`` and
    ``win_points`` too), each written only when not its default (so a position of the default game
    is written as before those options existed)."""
    keys: dict[str, Any] = {}
    if g.lenient:
        keys["matching"] = "lenient"
    if g.explicit_carry_cap():
        keys["carry_cap"] = g.options["carry_cap"]
    keys.update(g.rulebook_keys)
    return keys


def _action_json(g: ExagonGame, action: int) -> dict[str, Any]:
    """The canonical JSON of an int action of ``g`` (see :meth:`ExagonState.action_to_json`)."""
    a = action
    if isinstance(a, bool) or not isinstance(a, int) or a < 0:
        raise ValueError(f"{a!r} is not an action of EXAGON")
    if a < g.place0:
        return {"deal": g.ids[a]}
    if a < g.give0:
        t, rest = divmod(a - g.place0, g.n_cells * 6)
        c, k = divmod(rest, 6)
        q, r = g.coords[c]
        return {"place": {"tile": g.ids[t], "at": [q, r], "rot": k}}
    if a < g.stop_action:
        t, s = divmod(a - g.give0, g.num_players)
        return {"give": {"tile": g.ids[t], "to": s}}
    if a == g.stop_action:
        return {"stop": True}
    if a == g.pass_action:
        return {"pass": True}
    if a == g.timeout_action:
        return {"timeout": True}
    off = g.off_table(a)
    if off is not None:
        t, q, r, k = off
        return {"place": {"tile": g.ids[t], "at": [q, r], "rot": k}}
    raise ValueError(f"{a!r} is not an action of EXAGON")


def _matches(g: ExagonGame, a: int, ta: int, b: int, tb: int) -> bool:
    """Do side ``a`` of tile ``ta`` and side ``b`` of tile ``tb`` match? (seed rules)"""
    if a == X or b == X:
        return False
    if a == b:
        return True
    if a == J:
        return not g.nummask[ta] >> b & 1
    if b == J:
        return not g.nummask[tb] >> a & 1
    return False
