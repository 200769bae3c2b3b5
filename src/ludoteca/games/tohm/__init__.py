"""TOHM — Tris Of Horrible Monsters (seed ``003_…``), 2 to 5 players.

Each turn the active player rolls a die: ``1`` removes any token from the board, ``2`` moves
any token to any empty cell, ``3``-``6`` places one of the player's own tokens on an empty
cell carrying that number. Three or more tokens of one player in a row or column through the
cell just filled form a *tris*: the tokens go back to their owner, who takes a trophy per
tris. When the ten trophies are given, most trophies wins. Rules: RULES.md section 3 and
``docs/rules/tohm.md``. Every number and switch of the rulebook is an option (``tokens``,
``trophies``, ``tris``, ``face_1`` .. ``face_6``, ``place_anywhere``), RULES.md's value by default.

Action encoding (``N = rows * cols``, cell index ``i = r * cols + c``):

* ``i``                        place a token on cell ``i``           (``0 <= i < N``)
* ``N + i``                    remove the token on cell ``i``
* ``2N + f * N + t``           move the token on cell ``f`` to cell ``t``
* ``2N + N * N``               pass

Chance outcomes are the die faces ``1``-``6`` themselves.

Events (:mod:`ludoteca.core.events`; every one public; a cell is ``[row, col]``), in the order
``apply_action`` returns them:

* ``chance`` ``{"outcome": {"roll": face}, "seat", "face"}``: ``seat`` rolled ``face`` (1-6).
* ``move`` ``{"seat", "action"}``: the player's action, then one of:
* ``placed`` ``{"seat", "cell"}``: ``seat`` placed one of their tokens on ``cell``;
* ``removed`` ``{"seat", "cell", "owner"}``: ``seat`` removed ``owner``'s token from ``cell``
  (it goes back to ``owner``'s supply);
* ``moved`` ``{"seat", "from", "to", "owner"}``: ``seat`` moved ``owner``'s token;
* ``pass`` ``{"seat"}``: nothing to do with this die (or nothing possible).
* ``tris`` ``{"owner", "by", "line", "cells", "trophy", "trophies_left"}``, after a placement or
  a move, once per run of three or more: ``owner``'s tokens on ``cells`` (a ``"row"`` or a
  ``"column"``, through the cell just filled; ``by`` made the move) go back to ``owner``, who takes
  a trophy if one is left (``trophy``); ``trophies_left`` counts the trophies still to give after
  it. A row and a column through the same cell are two events (the shared cell is in both).
* ``end`` ``{"reason", "returns", "winners"}``: ``reason`` is ``"all_trophies_given"`` or
  ``"turn_limit"``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

from ludoteca.core import events as ev
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Counter, Game, State, as_action_int
from ludoteca.core.i18n import N_, _
from ludoteca.core.jsonutil import need_int, per_seat
from ludoteca.core.options import Option, as_int
from ludoteca.core.shape import read

TOKENS = 5
"""Tokens per player (seed; option ``tokens``)."""
TROPHIES = 10
"""Trophies in the game (seed: "10 mostrocoppa"; option ``trophies``)."""
TRIS = 3
"""Tokens in a row that score (seed: a *tris*, three; option ``tris``)."""

NOTHING, REMOVE, MOVE, PLACE, ANY = 0, 1, 2, 3, 4
"""What a die face does (``TohmGame.face_kind``): nothing (the turn passes; option ``face_<d>``
off), remove any token (a 1), move any token (a 2), place one of yours on an empty cell carrying the
face's number (3-6), place one of yours on any empty cell (3-6 with option ``place_anywhere``)."""
RULEBOOK_KINDS = (NOTHING, REMOVE, MOVE, PLACE, PLACE, PLACE, PLACE)
"""RULES.md's die by face (index 1 to 6): 1 removes, 2 moves, 3-6 place."""
RULEBOOK_OPTIONS = frozenset({"tokens", "trophies", "tris", "place_anywhere", *(f"face_{d}" for d in range(1, 7))})
"""The rulebook's numbers and switches as options: left out of records at RULES.md's values."""

DEFAULT_BOARD: tuple[tuple[int, ...], ...] = (
    (3, 4, 5, 6, 4),
    (5, 6, 3, 4, 6),
    (4, 3, 6, 5, 3),
    (6, 5, 4, 3, 5),
    (5, 3, 6, 4, 4),
)
"""The 5x5 board of RULES.md; fewer players use its top-left corner."""

AREA_BY_PLAYERS: dict[int, tuple[int, int]] = {2: (3, 3), 3: (3, 4), 4: (4, 4), 5: (5, 5)}
"""(rows, cols) of the board area by player count (seed)."""

MAX_SIDE = 10
"""Most rows and most columns of a ``layout`` (default bound; RULES.md fixes only "at least 3x3").
The action space grows with the fourth power of the side (moves are cell pairs), so a bound keeps
every game small: 10x10 has 100 cells and 10,207 action ids."""
MAX_LAYOUT_BYTES = 64 * 1024
"""Largest layout JSON text or file read (a 10x10 grid takes a few hundred bytes)."""

ROLL, ACT, OVER = 0, 1, 2
PHASES = ("roll", "act", "over")
SEAT_LETTERS = "ABCDE"

END_TROPHIES = "all_trophies_given"
END_TURN_LIMIT = "turn_limit"

COUNTERS = (
    Counter("trophies_given", "ratio_per_event", N_("trophies given per player turn (a row and a column through "
                                                    "one cell give two)"), of="turns"),
    Counter("tris", "mean_per_game", N_("tris scored, per game (a row and a column through one cell count two)")),
    Counter("tris_for_others", "share_per_event", N_("tris scored by a move of another player than the owner "
                                                     "(a 2 moved someone else's token into line)"), of="tris"),
    Counter("places", "share_per_event", N_("turns in which a token was placed (a 3 to 6)"), of="turns"),
    Counter("removes", "share_per_event", N_("turns in which a token was removed (a 1)"), of="turns"),
    Counter("moves", "share_per_event", N_("turns in which a token was moved (a 2)"), of="turns"),
    Counter("passes", "share_per_event", N_("turns passed (nothing possible with the die)"), of="turns"),
)
"""The figures the balance lab reports for TOHM (``State.counters()``, ``Game.counters``)."""

LAB_NAMES = (N_("trophies given"), N_("tris"), N_("tris for others"), N_("places"), N_("removes"), N_("moves"),
             N_("passes"), N_("all trophies given"), N_("turn limit"), N_("trophies"))
"""The names of the counters, the end reasons and the score as the lab report shows them (translated
there with ``_``; the names themselves stay the identifiers of ``counters()`` and ``end_reason()``)."""


# --- the layout option ------------------------------------------------------------------

def default_layout(players: int) -> list[list[int]]:
    """The RULES.md board cut to the area used by ``players`` players."""
    rows, cols = AREA_BY_PLAYERS[players]
    return [list(DEFAULT_BOARD[r][:cols]) for r in range(rows)]


def _read_layout_file(path: str | os.PathLike[str]) -> Any:
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_LAYOUT_BYTES + 1)  # never more: a huge file costs nothing
        if len(raw) > MAX_LAYOUT_BYTES:
            raise ValueError(_(
                "layout file {path} is too big: a layout file holds at most {max_layout_bytes} bytes (a "
                "grid of at most {max_side}x{max_side})"
            ).format(path=repr(str(p)), max_layout_bytes=MAX_LAYOUT_BYTES, max_side=MAX_SIDE))
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise ValueError(_("layout file {path} not found").format(path=repr(str(p)))) from None
    except IsADirectoryError:
        raise ValueError(_("layout file {path} is a directory, not a file").format(path=repr(str(p)))) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ValueError(_(
            "cannot read layout file {path}: {reason}"
        ).format(path=repr(str(p)), reason=reason)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(_(
            "layout file {path} is not valid JSON: {error} (line {line})"
        ).format(path=repr(str(p)), error=exc.msg, line=exc.lineno)) from None
    except RecursionError:
        raise ValueError(_("layout file {path} is nested too deeply to be a grid").format(path=repr(str(p)))) from None


def parse_layout(value: Any, resolved: Mapping[str, Any]) -> list[list[int]]:
    """Resolve the ``layout`` option: a grid, JSON text, or a path to a JSON file.

    ``None`` means the default board for the player count. A JSON object
    ``{"layout": grid}`` (e.g. a position) is accepted in text and files too.
    """
    if value is None:
        return default_layout(resolved["players"])
    if isinstance(value, os.PathLike):
        value = _read_layout_file(value)
    elif isinstance(value, str):
        if len(value) > MAX_LAYOUT_BYTES:
            raise ValueError(_(
                "layout text has {count} characters; at most {max_layout_bytes} (a grid of at most "
                "{max_side}x{max_side})"
            ).format(count=len(value), max_layout_bytes=MAX_LAYOUT_BYTES, max_side=MAX_SIDE))
        text = value.strip()
        if text.startswith(("[", "{")):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(_("layout text is not valid JSON: {error}").format(error=exc.msg)) from None
            except RecursionError:
                raise ValueError(_("layout text is nested too deeply to be a grid")) from None
        elif not text:
            raise ValueError(_("layout is an empty string; give a grid, JSON text or a file path"))
        else:
            value = _read_layout_file(text)
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        shape = getattr(value, "shape", None)
        if isinstance(shape, tuple) and any(isinstance(k, int) and k > MAX_SIDE for k in shape):
            raise ValueError(_(
                "a layout has at most {max_side} rows and {max_side} columns, not {shape}"
            ).format(max_side=MAX_SIDE, shape=shape))
        value = value.tolist()  # e.g. a numpy array
    if isinstance(value, Mapping):
        if "layout" not in value:
            raise ValueError(_("a layout given as a JSON object needs a 'layout' key holding the grid"))
        value = value["layout"]
    return validate_grid(value)


def validate_grid(grid: Any) -> list[list[int]]:
    """Check a layout grid: rectangular, 3x3 to 10x10, numbers 3 to 6. Returns a copy.

    Sizes are checked before any row is copied, so an oversized grid costs nothing."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence):
        raise ValueError(_(
            "a layout is a grid (a list of rows of numbers 3-6), JSON text or a file path, not {value}"
        ).format(value=_short(grid)))
    if len(grid) < 3:
        raise ValueError(_("a layout needs at least 3 rows, got {count}").format(count=len(grid)))
    if len(grid) > MAX_SIDE:
        raise ValueError(_(
            "a layout has at most {max_side} rows, got {count}"
        ).format(max_side=MAX_SIDE, count=len(grid)))
    rows = list(grid)
    out: list[list[int]] = []
    width: int | None = None
    for r, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise ValueError(_("layout row {r} must be a list of numbers, not {value}").format(r=r, value=_short(row)))
        if len(row) > MAX_SIDE:
            raise ValueError(_(
                "a layout has at most {max_side} columns, but row {r} has {length}"
            ).format(max_side=MAX_SIDE, r=r, length=len(row)))
        row = list(row)
        if width is None:
            width = len(row)
            if width < 3:
                raise ValueError(_("a layout needs at least 3 columns, got {width}").format(width=width))
        elif len(row) != width:
            raise ValueError(_(
                "the layout is not rectangular: row 0 has {width} cells but row {r} has {length}"
            ).format(width=width, r=r, length=len(row)))
        for c, x in enumerate(row):
            if isinstance(x, bool) or not isinstance(x, int) or not 3 <= x <= 6:
                raise ValueError(_(
                    "layout cell [{r}, {c}] must be a number from 3 to 6, not {x}"
                ).format(r=r, c=c, x=repr(x)))
        out.append(row)
    return out


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters (error messages about huge values stay short)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the rulebook's numbers ----------------------------------------------------------------

def _resolve_tris(value: Any, resolved: Mapping[str, Any]) -> int:
    """``tris``: 2 or more tokens in a row, no longer than the board's longer side and no more than
    a player's tokens (else no tris could ever be made)."""
    length: int = as_int(2, MAX_SIDE)(value, resolved)
    grid = resolved["layout"]
    side = max(len(grid), len(grid[0]))
    if length > side:
        raise ValueError(_("a tris of {length} does not fit on a board of {rows}x{cols}").format(
            length=length, rows=len(grid), cols=len(grid[0])))
    if length > resolved["tokens"]:
        raise ValueError(_("a tris of {length} needs at least {length} tokens per player, not {tokens}").format(
            length=length, tokens=resolved["tokens"]))
    return length


FACE_WORDS = {1: ("a 1 removes a token", "a roll of 1 takes any token off the board, back to its owner; off: "
                                           "nothing happens and the turn passes"),
              2: ("a 2 moves a token", "a roll of 2 moves any token to any empty cell; off: nothing happens and the "
                                       "turn passes")}
"""The label and help of ``face_1`` and ``face_2``; faces 3 to 6 share :data:`PLACE_WORDS`."""
PLACE_WORDS = "a roll of {d} places a token on an empty cell; off: nothing happens and the turn passes"


def _face_option(d: int) -> Option:
    """``face_<d>``: whether the die's face ``d`` does what RULES.md says (1 removes, 2 moves, 3-6
    place); off, the face does nothing and the turn passes."""
    label, help_text = FACE_WORDS.get(d, (f"a {d} places a token", PLACE_WORDS.format(d=d)))
    return Option(f"face_{d}", f"whether a roll of {d} does what RULES.md says (false: nothing, the turn passes)",
                  True, kind="bool", label=label, help=help_text, variant=True)


# --- the game ---------------------------------------------------------------------------

class TohmGame(Game):
    """TOHM — Tris Of Horrible Monsters: roll; place, move or remove tokens; a tris wins a trophy."""

    name = "tohm"
    title = "TOHM"
    min_players = 2
    max_players = 5
    hidden_information = False
    score_name = "trophies"
    counters = COUNTERS
    agent_defaults = {"mcts": {"iterations": 3000, "cap": 60, "c": 0.4},
                      "strong": {"iterations": 1000, "cap": 10, "c": 0.4}}  # docs/strength.md: "strong"
    compiled_part = "compiled"
    rules_notes = "docs/rules/tohm.md"
    catalogue_order = 3
    OPTIONS = (
        Option(
            "layout",
            "the board: a rectangular grid (3x3 to 10x10) of numbers 3-6, as a list of rows, JSON text "
            "or a path to a JSON file; default the RULES.md 5x5 board cut to the player count "
            "(2: 3x3, 3: 3 rows x 4 cols, 4: 4x4, 5: 5x5). A given grid is the whole board.",
            default=lambda resolved: default_layout(resolved["players"]),
            resolve=parse_layout,
            kind="file",
            label="board",
            help="a board of your own: a JSON file holding a rectangular grid (3x3 to 10x10) of numbers 3 to 6, "
                 "as a list of rows; the whole grid is then the board",
            default_label="the board of the rules, cut to the number of players",
        ),
        Option("tokens", "tokens per player (RULES.md: 5)", TOKENS, kind="int", low=1, high=25,
               label="tokens per player", help="how many tokens each player has", variant=True),
        Option("trophies", "trophies in the box; the game ends when all are given (RULES.md: 10)", TROPHIES,
               kind="int", low=1, high=100, label="trophies",
               help="the trophies in the box; the game ends when the last one is given", variant=True),
        Option("tris", "tokens of one player in a row or column that score (RULES.md: 3, a tris)", TRIS,
               _resolve_tris, kind="int", low=2, high=MAX_SIDE, label="tokens in a row",
               help="how many tokens of one player in a row or column score; no longer than the board", variant=True),
        *(_face_option(d) for d in range(1, 7)),
        Option("place_anywhere", "a roll of 3 to 6 places on any empty cell, whatever its number (RULES.md: false, "
               "on a cell carrying the number rolled)", False, kind="bool", label="place anywhere",
               help="a roll of 3 to 6 places a token on any empty cell, whatever its number", variant=True),
        Option(
            "turn_limit",
            "the game ends after this many player turns; the leaders by trophies share the win",
            default=1000,
            kind="int",
            low=1,
            label="turn limit",
            help="the game stops after this many player turns; the players with the most trophies share the win",
        ),
    )

    def _setup(self) -> None:
        grid = self.options["layout"]
        self.layout: tuple[tuple[int, ...], ...] = tuple(tuple(row) for row in grid)
        self.rows = rows = len(grid)
        self.cols = cols = len(grid[0])
        self.n_cells = n = rows * cols
        self.turn_limit: int = self.options["turn_limit"]
        self.tokens: int = self.options["tokens"]
        self.trophies_total: int = self.options["trophies"]
        self.tris_length: int = self.options["tris"]
        place = ANY if self.options["place_anywhere"] else PLACE
        self.face_kind: tuple[int, ...] = (NOTHING, *(
            (place if d >= 3 else RULEBOOK_KINDS[d]) if self.options[f"face_{d}"] else NOTHING for d in range(1, 7)))
        """What each die face does (index 1 to 6): NOTHING, REMOVE, MOVE, PLACE or ANY."""
        self.numbers: tuple[int, ...] = tuple(x for row in grid for x in row)
        # cells carrying each die number (index = die face; 1 and 2 carry none)
        self.cells_of: tuple[tuple[int, ...], ...] = tuple(
            tuple(i for i in range(n) if self.numbers[i] == d) for d in range(7)
        )
        # the cells running away from each cell, nearest first, in the four directions
        self.left = tuple(tuple(i - k for k in range(1, i % cols + 1)) for i in range(n))
        self.right = tuple(tuple(i + k for k in range(1, cols - i % cols)) for i in range(n))
        self.up = tuple(tuple(i - k * cols for k in range(1, i // cols + 1)) for i in range(n))
        self.down = tuple(tuple(i + k * cols for k in range(1, rows - i // cols)) for i in range(n))
        # Action ids: 1-6 are the die faces (chance); player actions start at 7, so an
        # integer means the same action in every position (RULES.md: action_from_json
        # rejects only ill-formed actions, apply_action the illegal ones).
        self.place0 = p0 = 7
        self.remove0 = p0 + n
        self.move0 = p0 + 2 * n
        self.pass_id = p0 + 2 * n + n * n
        self.place_of: tuple[tuple[int, ...], ...] = tuple(tuple(p0 + i for i in cells) for cells in self.cells_of)
        self.remove_ids: tuple[int, ...] = tuple(range(self.remove0, self.remove0 + n))
        self.move_ids: tuple[tuple[int, ...], ...] = tuple(
            tuple(range(self.move0 + f * n, self.move0 + f * n + n)) for f in range(n)
        )
        self.chance_legal: tuple[int, ...] = (1, 2, 3, 4, 5, 6)
        self.chance_outcomes: tuple[tuple[int, float], ...] = tuple((d, 1 / 6) for d in range(1, 7))

    # --- description -----------------------------------------------------------------
    def num_distinct_actions(self) -> int:
        return self.pass_id + 1

    def max_chance_outcomes(self) -> int:
        return 7

    def record_options(self) -> dict[str, Any]:
        """Players, layout, turn limit, and the rulebook's numbers and faces only where they differ
        from RULES.md's (records written before those options existed stay as they were)."""
        out: dict[str, Any] = {
            "players": self.num_players,
            "layout": [list(row) for row in self.layout],
            "turn_limit": self.turn_limit,
        }
        for opt in self.OPTIONS:
            if opt.name in RULEBOOK_OPTIONS and self.options[opt.name] != opt.default:
                out[opt.name] = self.options[opt.name]
        return out

    def rulebook_changes(self) -> list[str]:
        """The rulebook's options (tokens, trophies, tris length, die faces) set to other values than
        RULES.md's: empty for the rulebook's game (what a solver or table of the default rules needs)."""
        return [o.name for o in self.OPTIONS if o.name in RULEBOOK_OPTIONS and self.options[o.name] != o.default]

    # --- cells -----------------------------------------------------------------------
    def cell(self, r: int, c: int) -> int:
        return r * self.cols + c

    def rc(self, i: int) -> tuple[int, int]:
        return divmod(i, self.cols)

    # --- states ----------------------------------------------------------------------
    def new_initial_state(self) -> TohmState:
        return TohmState(self)

    def state_from_json(self, data: Mapping[str, Any]) -> TohmState:
        return _state_from_json(self, data)


# --- the state --------------------------------------------------------------------------

class TohmState(State):
    """A TOHM position. ``board`` is flat (``r * cols + c``), ``-1`` for an empty cell."""

    __slots__ = (
        "_cur", "board", "filled", "n_moves", "n_passes", "n_places", "n_removes",
        "n_tris", "n_tris_others", "n_trophies", "phase", "roll", "supply",
        "to_move", "trophies", "trophies_left", "turn",
    )

    game: TohmGame

    def __init__(self, game: TohmGame) -> None:
        super().__init__(game)
        n = game.num_players
        self.board: list[int] = [-1] * game.n_cells
        self.supply: list[int] = [game.tokens] * n
        self.filled = 0
        """Tokens on the board."""
        self.trophies: list[int] = [0] * n
        self.trophies_left = game.trophies_total
        self.to_move = 0
        self.phase = ROLL
        self.roll: int | None = None
        self.turn = 0
        self._cur = CHANCE
        self.n_tris = self.n_tris_others = self.n_trophies = 0
        self.n_removes = self.n_moves = self.n_places = self.n_passes = 0

    # --- protocol --------------------------------------------------------------------
    def current_player(self) -> int:
        return self._cur

    def _legal_actions(self) -> list[int]:
        phase = self.phase
        g = self.game
        if phase == ROLL:
            return list(g.chance_legal)
        if phase == OVER:
            return []
        d: int = self.roll  # type: ignore[assignment]  # the die of phase act
        b = self.board
        kind = g.face_kind[d]
        if kind == PLACE:
            if self.supply[self.to_move]:
                acts = [a for i, a in zip(g.cells_of[d], g.place_of[d], strict=True) if b[i] < 0]
                if acts:
                    return acts
            return [g.pass_id]
        filled = self.filled
        if kind == ANY:
            if self.supply[self.to_move] and filled < g.n_cells:
                return [g.place0 + i for i, o in enumerate(b) if o < 0]
            return [g.pass_id]
        if kind == REMOVE:
            if filled:
                return [a for a, o in zip(g.remove_ids, b, strict=True) if o >= 0]
            return [g.pass_id]
        if kind == MOVE and 0 < filled < g.n_cells:
            empty = [i for i, o in enumerate(b) if o < 0]
            out: list[int] = []
            move_ids = g.move_ids
            for f, o in enumerate(b):
                if o >= 0:
                    ids = move_ids[f]
                    out.extend([ids[t] for t in empty])
            return out
        return [g.pass_id]

    def _apply(self, action: int) -> None:
        if self.phase == ROLL:
            self.roll = action
            self.phase = ACT
            self._cur = self.to_move
            return
        g = self.game
        n = g.n_cells
        p = self.to_move
        b = self.board
        if action < g.remove0:  # place
            action -= g.place0
            b[action] = p
            self.supply[p] -= 1
            self.filled += 1
            self.n_places += 1
            if self._events is not None:
                self._events.append(Event("placed", {"seat": p, "cell": list(divmod(action, g.cols))}))
            self._score(action, p, p)
        elif action < g.move0:  # remove
            i = action - g.remove0
            if self._events is not None:
                self._events.append(Event("removed", {"seat": p, "cell": list(divmod(i, g.cols)), "owner": b[i]}))
            self.supply[b[i]] += 1
            b[i] = -1
            self.filled -= 1
            self.n_removes += 1
        elif action < g.pass_id:  # move
            f, t = divmod(action - g.move0, n)
            owner = b[f]
            b[f] = -1
            b[t] = owner
            self.n_moves += 1
            if self._events is not None:
                self._events.append(Event("moved", {"seat": p, "from": list(divmod(f, g.cols)),
                                                    "to": list(divmod(t, g.cols)), "owner": owner}))
            self._score(t, owner, p)
        else:
            self.n_passes += 1
            if self._events is not None:
                self._emit("pass", seat=p)
        self.roll = None
        self.turn += 1
        if self.trophies_left == 0 or self.turn >= g.turn_limit:
            self.phase = OVER
            self._cur = TERMINAL
        else:
            p += 1
            self.to_move = p = 0 if p == self.game.num_players else p
            self.phase = ROLL
            self._cur = CHANCE

    def _score(self, i: int, owner: int, mover: int) -> None:
        """Tris through cell ``i`` just filled by a token of ``owner`` (RULES.md "Tris"; three or
        more, option ``tris``)."""
        g = self.game
        length = g.tris_length
        b = self.board
        row = [i]
        for x in g.left[i]:
            if b[x] != owner:
                break
            row.append(x)
        for x in g.right[i]:
            if b[x] != owner:
                break
            row.append(x)
        col = [i]
        for x in g.up[i]:
            if b[x] != owner:
                break
            col.append(x)
        for x in g.down[i]:
            if b[x] != owner:
                break
            col.append(x)
        tris = 0
        gone: list[int] = []
        if len(row) >= length:
            tris += 1
            gone = row
        if len(col) >= length:
            tris += 1
            gone = gone + col[1:] if gone else col
        if not tris:
            return
        # every token of every run goes back to its owner, trophies or not (docs gap G2)
        for x in gone:
            b[x] = -1
        k = len(gone)
        self.supply[owner] += k
        self.filled -= k
        given = tris if tris <= self.trophies_left else self.trophies_left
        if self._events is not None:
            self._emit_tris(owner, mover, row if len(row) >= length else None, col if len(col) >= length else None)
        self.trophies[owner] += given
        self.trophies_left -= given
        self.n_tris += tris
        self.n_trophies += given
        if owner != mover:
            self.n_tris_others += tris

    def _emit_tris(self, owner: int, mover: int, row: list[int] | None, col: list[int] | None) -> None:
        """One ``tris`` event per run, the row first; called before the trophies are given."""
        g = self.game
        left = self.trophies_left
        for line, run in (("row", row), ("column", col)):
            if run is None:
                continue
            trophy = left > 0
            left -= trophy
            self._emit("tris", owner=owner, by=mover, line=line, cells=[list(g.rc(x)) for x in sorted(run)],
                       trophy=trophy, trophies_left=left)

    def _copy(self) -> TohmState:
        s = TohmState.__new__(TohmState)
        s.game = self.game
        s._legal = None
        s._events = None
        s._cur = self._cur
        s.board = self.board[:]
        s.supply = self.supply[:]
        s.filled = self.filled
        s.trophies = self.trophies[:]
        s.trophies_left = self.trophies_left
        s.to_move = self.to_move
        s.phase = self.phase
        s.roll = self.roll
        s.turn = self.turn
        s.n_tris = self.n_tris
        s.n_tris_others = self.n_tris_others
        s.n_trophies = self.n_trophies
        s.n_removes = self.n_removes
        s.n_moves = self.n_moves
        s.n_places = self.n_places
        s.n_passes = self.n_passes
        return s

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase != ROLL:
            return []
        return list(self.game.chance_outcomes)

    def returns(self) -> list[float]:
        n = self.game.num_players
        if self.phase != OVER:
            return [0.0] * n
        best = max(self.trophies)
        winners = [p for p in range(n) if self.trophies[p] == best]
        share = 1.0 / len(winners)
        return [share if p in winners else 0.0 for p in range(n)]

    def turns_played(self) -> int:
        """Player turns completed (the position's ``turn``), read directly (the lab calls it often)."""
        return self.turn

    def scores(self) -> list[float]:
        """Trophies held (RULES.md: "Score for turn_limit")."""
        return [float(t) for t in self.trophies]

    def end_reason(self) -> str:
        """``"all_trophies_given"`` or ``"turn_limit"``; ``""`` before the end."""
        if self.phase != OVER:
            return ""
        return END_TROPHIES if self.trophies_left == 0 else END_TURN_LIMIT

    def _action_event(self, action: int) -> Event:
        """A roll says whose it is and its face."""
        if self.phase == ROLL:
            return Event(ev.CHANCE, {"outcome": {"roll": action}, "seat": self.to_move, "face": action})
        return super()._action_event(action)

    def counters(self) -> dict[str, float]:
        """Event counts since the initial state (a position read from JSON starts at 0): see
        :data:`COUNTERS`."""
        return {
            "tris": self.n_tris,
            "tris_for_others": self.n_tris_others,
            "trophies_given": self.n_trophies,
            "removes": self.n_removes,
            "moves": self.n_moves,
            "places": self.n_places,
            "passes": self.n_passes,
        }

    # --- actions as JSON and text ----------------------------------------------------
    def action_to_json(self, action: int) -> dict[str, Any]:
        if type(action) is not int:
            action = as_action_int(action)
        g = self.game
        if 1 <= action <= 6:
            return {"roll": action}
        n = g.n_cells
        if g.place0 <= action < g.remove0:
            return {"place": list(g.rc(action - g.place0))}
        if g.remove0 <= action < g.move0:
            return {"remove": list(g.rc(action - g.remove0))}
        if g.move0 <= action < g.pass_id:
            f, t = divmod(action - g.move0, n)
            return {"move": [list(g.rc(f)), list(g.rc(t))]}
        if action == g.pass_id:
            return {"pass": True}
        raise IllegalActionError(f"{action!r} is not a TOHM action (1 to {g.pass_id})")

    def _cell_from_json(self, value: Any, what: str) -> int:
        g = self.game
        if (
            not isinstance(value, (list, tuple))
            or len(value) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in value)
        ):
            raise IllegalActionError(f"{what} must be a cell [row, col] of two whole numbers, not {value!r}")
        r: int = value[0]
        c: int = value[1]
        if not (0 <= r < g.rows and 0 <= c < g.cols):
            raise IllegalActionError(
                f"{what} {[r, c]} is off the board (rows 0-{g.rows - 1}, cols 0-{g.cols - 1})"
            )
        return r * g.cols + c

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        if not isinstance(data, Mapping):
            raise IllegalActionError(f"a TOHM action is a JSON object, not {data!r}")
        keys = [k for k in ("roll", "place", "remove", "move", "pass") if k in data]
        extra = sorted(str(k) for k in data if k not in ("roll", "place", "remove", "move", "pass"))
        if extra:
            raise IllegalActionError(
                f"unknown key {extra[0]!r} in action {data!r}; a TOHM action has one of the keys "
                "roll, place, remove, move, pass"
            )
        if len(keys) != 1:
            raise IllegalActionError(
                f"a TOHM action has exactly one of the keys roll, place, remove, move, pass: {data!r}"
            )
        key = keys[0]
        value = data[key]
        g = self.game
        if key == "roll":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
                raise IllegalActionError(f"roll must be a die face 1 to 6, not {value!r}")
            return value
        if key == "pass":
            if value is not True:
                raise IllegalActionError(f'pass is written {{"pass": true}}, not {data!r}')
            action = g.pass_id
        elif key == "place":
            action = g.place0 + self._cell_from_json(value, "place")
        elif key == "remove":
            action = g.remove0 + self._cell_from_json(value, "remove")
        else:
            if not isinstance(value, (list, tuple)) or len(value) != 2:
                raise IllegalActionError(f"move must be [[row, col], [row, col]], not {value!r}")
            f = self._cell_from_json(value[0], "move origin")
            t = self._cell_from_json(value[1], "move destination")
            # a move onto its own cell is well-formed but never legal (the cell is not empty): it
            # is refused by apply_action (RULES.md: action_from_json rejects only ill-formed actions)
            action = g.move0 + f * g.n_cells + t
        return action

    def _who(self) -> str:
        if self.phase == OVER:
            return "nobody (the game is over)"
        return f"player {self.to_move}"

    def action_to_string(self, action: int) -> str:
        data = self.action_to_json(action)
        if "roll" in data:
            return f"roll {data['roll']}"
        if "pass" in data:
            return "pass"
        if "place" in data:
            return "place {},{}".format(*data["place"])
        if "remove" in data:
            return "remove {},{}".format(*data["remove"])
        (r, c), (r2, c2) = data["move"]
        return f"move {r},{c}-{r2},{c2}"

    _WORDS = {
        "roll": "roll", "r": "roll", "die": "roll",
        "place": "place", "p": "place", "pl": "place", "put": "place",
        "remove": "remove", "rm": "remove", "del": "remove",
        "move": "move", "mv": "move", "m": "move",
        "pass": "pass",
    }
    _CELL = r"(\d+)\s*[,\s]\s*(\d+)"
    _ARGS = {
        "roll": re.compile(r"(\d+)"),
        "place": re.compile(_CELL),
        "remove": re.compile(_CELL),
        "move": re.compile(_CELL + r"\s*(?:->|-|>|\s)\s*" + _CELL),
        "pass": re.compile(r""),
    }

    def action_from_string(self, text: str) -> int:
        """``roll 4``, ``place 1,2`` (``p 1 2``), ``remove 0,0`` (``rm``), ``move 0,0-2,2``
        (``mv 0,0 2,2``), ``pass``; or canonical JSON text."""
        if not isinstance(text, str):
            raise IllegalActionError(f"an action text is a string, not {text!r}")
        stripped = text.strip()
        if stripped.startswith("{"):
            return super().action_from_string(stripped)
        parts = stripped.split(None, 1)
        word = self._WORDS.get(parts[0].lower()) if parts else None
        match = self._ARGS[word].fullmatch(parts[1].strip() if len(parts) > 1 else "") if word else None
        if match is None:
            raise IllegalActionError(
                f"cannot read {text!r} as a TOHM action; try: roll 4, place 1,2, remove 0,0, "
                "move 0,0-2,2, pass (or JSON)"
            )
        nums = [int(x) for x in match.groups()]
        if word == "roll":
            return self.action_from_json({"roll": nums[0]})
        if word == "pass":
            return self.action_from_json({"pass": True})
        if word == "move":
            return self.action_from_json({"move": [nums[:2], nums[2:]]})
        return self.action_from_json({str(word): nums})

    # --- positions -------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        g = self.game
        cols = g.cols
        b = self.board
        return {
            "game": g.name,
            "players": g.num_players,
            "rows": g.rows,
            "cols": cols,
            "layout": [list(row) for row in g.layout],
            "board": [
                [None if b[i] < 0 else b[i] for i in range(r * cols, r * cols + cols)]
                for r in range(g.rows)
            ],
            "supply": list(self.supply),
            "trophies": list(self.trophies),
            "trophies_left": self.trophies_left,
            "to_move": self.to_move,
            "phase": PHASES[self.phase],
            "roll": self.roll,
            "turn": self.turn,
            **face_keys(g),
        }

    def render(self) -> str:
        g = self.game
        n = g.num_players
        lines = [
            f"TOHM  {n} players  board {g.rows}x{g.cols}  turn {self.turn}/{g.turn_limit}",
            "    " + "".join(f"{c:>4}" for c in range(g.cols)),
        ]
        for r in range(g.rows):
            cells = []
            for c in range(g.cols):
                i = r * g.cols + c
                o = self.board[i]
                cells.append(f"{g.numbers[i]}{'.' if o < 0 else SEAT_LETTERS[o]}".rjust(4))
            lines.append(f"{r:>4}" + "".join(cells))
        lines.append("(cell = its number, then the token: A = seat 0, B = seat 1, ...; . = empty)")
        lines.append(
            "supply:   " + "  ".join(f"{SEAT_LETTERS[p]}{p}={self.supply[p]}" for p in range(n))
        )
        lines.append(
            "trophies: " + "  ".join(f"{SEAT_LETTERS[p]}{p}={self.trophies[p]}" for p in range(n))
            + f"  (left {self.trophies_left})"
        )
        if self.phase == OVER:
            ret = self.returns()
            winners = ", ".join(f"{SEAT_LETTERS[p]}{p}" for p in range(n) if ret[p] > 0)
            lines.append(f"game over: winner(s) {winners}")
        elif self.phase == ROLL:
            lines.append(f"to move: {SEAT_LETTERS[self.to_move]}{self.to_move}  phase: roll  die: -")
        else:
            lines.append(
                f"to move: {SEAT_LETTERS[self.to_move]}{self.to_move}  phase: act  die: {self.roll}"
            )
        return "\n".join(lines)


# --- reading positions ------------------------------------------------------------------

class PositionJson(TypedDict):
    """A TOHM position (RULES.md section 3, "Position JSON"), as :mod:`ludoteca.core.shape` reads it."""

    game: Literal["tohm"]
    players: int
    rows: int
    cols: int
    layout: list[list[int]]
    board: list[list[int | None]]
    supply: list[int]
    trophies: list[int]
    trophies_left: int
    to_move: int
    phase: Literal["roll", "act", "over"]
    roll: int | None
    turn: int
    faces: NotRequired[list[str]]


FACE_KIND_NAMES = ("nothing", "remove", "move", "place", "place_anywhere")
"""The position's words for what a die face does (``faces``), by kind (NOTHING .. ANY)."""


def face_keys(g: TohmGame) -> dict[str, list[str]]:
    """The position's ``faces`` (what each die face 1 to 6 does, for a board to say), written only when
    the die is not RULES.md's (so a position of the default game is written as before those options
    existed); a board reads an absent key as RULES.md's die: 1 removes, 2 moves, 3-6 place."""
    if g.face_kind == RULEBOOK_KINDS:
        return {}
    return {"faces": [FACE_KIND_NAMES[k] for k in g.face_kind[1:]]}


def _state_from_json(game: TohmGame, data: Mapping[str, Any]) -> TohmState:
    pos = read(data, PositionJson)
    n = game.num_players
    if "faces" in pos and pos["faces"] != [FACE_KIND_NAMES[k] for k in game.face_kind[1:]]:
        raise ValueError(f"the position's die faces {pos['faces']} are not this game's")
    if pos["players"] != n:
        raise ValueError(f"the position has {pos['players']} players but this game has {n}")
    _check_layout(game, pos)
    board = _board_from_json(game, pos)
    tokens, total = game.tokens, game.trophies_total
    supply = per_seat(pos["supply"], "supply", n, 0, tokens)
    _check_tokens(board, supply, n, tokens)
    trophies = per_seat(pos["trophies"], "trophies", n, 0, total)
    left = need_int(pos["trophies_left"], "trophies_left", 0, total)
    if sum(trophies) + left != total:
        raise ValueError(f"trophies given ({sum(trophies)}) plus trophies_left ({left}) must be {total}")
    phase = PHASES.index(pos["phase"])
    to_move = pos["to_move"]
    if phase != OVER:
        to_move = need_int(to_move, "to_move", 0, n - 1)
    elif not 0 <= to_move < n:
        # RULES.md, "Reading a position": to_move at `over` is not fixed by the rules; any whole
        # number is read, and this engine writes its own convention (a seat) back.
        to_move = 0
    roll = pos["roll"]
    if phase == ACT:
        roll = need_int(roll, "roll (the die face during phase act)", 1, 6)
    elif roll is not None:
        raise ValueError(f"roll must be null during phase {pos['phase']}, not {roll!r}")
    turn = need_int(pos["turn"], "turn", 0, game.turn_limit)
    _check_end(game, pos["phase"], left, turn)
    state = TohmState(game)
    state.board = board
    state.supply = supply
    state.filled = tokens * n - sum(supply)
    state.trophies = trophies
    state.trophies_left = left
    state.to_move = to_move
    state.phase = phase
    state.roll = roll
    state.turn = turn
    state._cur = (CHANCE, to_move, TERMINAL)[phase]
    return state


def _check_layout(game: TohmGame, pos: PositionJson) -> None:
    """The position's board is this game's (size and numbers: the ``layout`` option)."""
    rows, cols = pos["rows"], pos["cols"]
    if (rows, cols) != (game.rows, game.cols):
        raise ValueError(f"the position's board is {rows}x{cols} but this game's board is {game.rows}x{game.cols}")
    try:
        grid = validate_grid(pos["layout"])
    except ValueError as exc:
        raise ValueError(f"position layout: {exc}") from None
    if tuple(tuple(row) for row in grid) != game.layout:
        raise ValueError(
            "the position's layout does not match this game's layout (load the game with the same layout option)"
        )


def _board_from_json(game: TohmGame, pos: PositionJson) -> list[int]:
    """The board, flat (``r * cols + c``), ``-1`` for an empty cell; tokens are seats."""
    rows, cols, n = game.rows, game.cols, game.num_players
    board_rows = pos["board"]
    if len(board_rows) != rows:
        raise ValueError(f"board must have {rows} rows, not {len(board_rows)}")
    board: list[int] = []
    for r, row in enumerate(board_rows):
        if len(row) != cols:
            raise ValueError(f"board row {r} must be a list of {cols} cells, not {row!r}")
        for c, x in enumerate(row):
            if x is None:
                board.append(-1)
            elif 0 <= x < n:
                board.append(x)
            else:
                raise ValueError(f"board[{r}][{c}] must be a seat 0 to {n - 1} or null, not {x}")
    return board


def _check_tokens(board: list[int], supply: list[int], n: int, tokens: int = TOKENS) -> None:
    """Each player's five tokens (option ``tokens``) are on the board or in supply."""
    for p in range(n):
        on_board = board.count(p)
        if on_board > tokens:
            raise ValueError(f"player {p} has {on_board} tokens on the board; a player has only {tokens}")
        if on_board + supply[p] != tokens:
            raise ValueError(
                f"player {p} has {on_board} tokens on the board and {supply[p]} in supply; they must add up to {tokens}"
            )


def _check_end(game: TohmGame, phase_name: str, left: int, turn: int) -> None:
    """``over`` exactly when every trophy is given or ``turn`` reached ``turn_limit``."""
    if phase_name == "over":
        if left > 0 and turn < game.turn_limit:
            raise ValueError(
                f"phase is over but {left} trophies are left and turn {turn} is below turn_limit {game.turn_limit}"
            )
        return
    if left == 0:
        raise ValueError(f"every trophy is given, so the phase must be over, not {phase_name}")
    if turn >= game.turn_limit:
        raise ValueError(f"turn {turn} has reached turn_limit {game.turn_limit}, so the phase must be over")
