"""TOHM for two players on a 3x3 board, solved: the exact win chance of every position.

Found without naming the game through ``Game.part("solve")`` (the ``perfect`` agent, the analysis
library). The interface every game's ``solve`` part offers:

* :func:`unsupported` ``(game) -> str``: why these options have no solution here ("" when they have);
* :func:`ready` ``(game) -> bool``: solved, and the values at hand without solving (a server offers
  ``perfect`` only then);
* :func:`solution` ``(game, progress=None) -> Solution``: the solved game (loaded from the package,
  the cache, or built on first use, reporting ``progress(done, total)``);
* ``Solution.values(state) -> list[float]``: each seat's win chance in ``state`` under perfect play
  (a shared win counts as the rules' returns, 1/2 each);
* ``Solution.action_values(state) -> dict[action, float]``: the mover's win chance after each legal
  action (a decision node).

**What is solved.** Two players, a 3x3 board (the default one of RULES.md section 3, or any 3x3
``layout``), five tokens each, ten trophies. A position is the board (3^9), the trophies ``(t0,
t1)`` with ``t0 + t1 <= 9`` and the seat to move, before its roll; the supplies follow from the
board. Both seats play the same game, so a position is stored as the seat to move sees it (its own
tokens and trophies first): 19,683 x 55 = 1,082,565 values (about 2.2 million positions with the seat
to move). ``_solve.pyx`` computes them by Gauss-Seidel value iteration with chance nodes (each die
face 1/6) until no value changes by ``1e-12`` in a sweep.

**Endless play.** The solution has no turn limit (the turn count would be part of the position).
Iteration starts from 1/2 everywhere, so a line of play that never ends keeps the value it started
with: endless play is scored as a shared win, 1/2 each, like a tie on trophies. Started from 0 or 1
instead, the iteration reaches the same values (docs/strength.md: the figures), so under perfect
play the game ends with probability 1 and the choice does not change a value. ``turn_limit`` (default
1000) is ignored by the values; between ``perfect`` players it almost never binds (docs/strength.md).

**Where the values come from.** The default layout's table ships with the package
(``solved-2p-<layout>.f64.xz``: the exact float64 values, xz-compressed, 1.3 MB, read in half a
second). Another 3x3 layout is solved on first use (about a minute of one core, with progress) and
kept in ``$LUDOTECA_CACHE`` or ``~/.cache/ludoteca`` (``tohm-solved-2p-<layout>.f64``, 8.7 MB).
"""

from __future__ import annotations

import array
import lzma
import os
import sys
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from ludoteca.core.constants import CHANCE
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import _
from ludoteca.games.tohm import OVER, TROPHIES, TohmGame, TohmState

try:
    from ludoteca.games.tohm import _solve
except ImportError:  # not built: only the shipped table (the default layout) is available
    _solve = None  # type: ignore[assignment]

SIZE = 19683 * 55
"""Values in a table: 3^9 boards x 55 trophy pairs."""
TOLERANCE = 1e-12
"""Value iteration stops when a sweep changes no value by this much."""

Progress = Callable[[int, int], None]
"""``progress(done, total)``: the levels of trophies solved so far, out of ten."""

_POW3 = tuple(3 ** i for i in range(9))


def layout_key(game: TohmGame) -> str:
    """The nine cell numbers, row by row, as the digits naming a table (``345563436`` by default)."""
    return "".join(str(x) for x in game.numbers)


def unsupported(game: Game) -> str:
    """Why ``game`` has no solution here ("" when it has one): two players on a 3x3 board only."""
    if not isinstance(game, TohmGame):
        return _("{game} has no solved variant").format(game=game.title)
    if game.num_players != 2 or (game.rows, game.cols) != (3, 3):
        return _("TOHM is solved for two players on a 3x3 board only, not {players} players on {rows}x{cols}").format(
            players=game.num_players, rows=game.rows, cols=game.cols)
    standard = TohmGame(players=2, layout=[list(row) for row in game.layout]).options
    changed = sorted(k for k, v in game.options.items() if k not in ("layout", "turn_limit") and v != standard.get(k))
    if changed:
        return _("TOHM is solved with the rules' own numbers and die only, not with the option(s) {options}").format(
            options=", ".join(changed))
    if _packaged(layout_key(game)) is None and _solve is None and not _cache_path(layout_key(game)).is_file():
        return _("this TOHM board is not solved yet and the compiled solver is not built (see docs/compiled.md)")
    return ""


def ready(game: Game) -> bool:
    """True when ``game`` is solved and its values are at hand without solving (shipped with the
    package or in the cache): a server offers ``perfect`` only then (solving a new board costs a minute)."""
    if unsupported(game):
        return False
    assert isinstance(game, TohmGame)
    key = layout_key(game)
    page = resources.files(__package__ or "ludoteca.games.tohm").joinpath(f"solved-2p-{key}.f64.xz")
    return key in _LOADED or page.is_file() or _cache_path(key).is_file()


def cache_dir() -> Path:
    """Where solved tables are kept: ``$LUDOTECA_CACHE``, else ``~/.cache/ludoteca``."""
    env = os.environ.get("LUDOTECA_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ludoteca"


def _cache_path(key: str) -> Path:
    return cache_dir() / f"tohm-solved-2p-{key}.f64"


def _packaged(key: str) -> bytes | None:
    page = resources.files(__package__ or "ludoteca.games.tohm").joinpath(f"solved-2p-{key}.f64.xz")
    if not page.is_file():
        return None
    return page.read_bytes()


def _table(raw: bytes) -> array.array[float]:
    values = array.array("d")
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    if len(values) != SIZE:
        raise ValueError(f"a solved TOHM table holds {SIZE} values, not {len(values)}")
    return values


def build(numbers: tuple[int, ...], progress: Progress | None = None,
          start: float = 0.5) -> tuple[array.array[float], int]:
    """Solve the 3x3 board ``numbers`` (value iteration from ``start``): the table and the sweeps."""
    if _solve is None:
        raise RuntimeError(_("this TOHM board is not solved yet and the compiled solver is not built "
                             "(see docs/compiled.md)"))
    values = array.array("d", [start]) * SIZE

    def step(level: int, sweep: int, delta: float) -> None:
        if progress is not None and delta < TOLERANCE:
            progress(TROPHIES - level, TROPHIES)

    sweeps = _solve.solve(values, list(numbers), TOLERANCE, step)
    return values, sweeps


_LOADED: dict[str, array.array[float]] = {}


def _load(key: str, progress: Progress | None) -> array.array[float]:
    if key not in _LOADED:
        _LOADED[key] = _read_or_build(key, progress)
    return _LOADED[key]


def _read_or_build(key: str, progress: Progress | None) -> array.array[float]:
    packed = _packaged(key)
    if packed is not None:
        return _table(lzma.decompress(packed))
    path = _cache_path(key)
    if path.is_file():
        return _table(path.read_bytes())
    values, _sweeps = build(tuple(int(x) for x in key), progress)
    raw = values.tobytes() if sys.byteorder == "little" else _swapped(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:  # whole or absent
        tmp.write(raw)
    os.replace(tmp.name, path)
    return values


def _swapped(values: array.array[float]) -> bytes:
    copy = array.array("d", values)
    copy.byteswap()
    return copy.tobytes()


def index(mine: int, theirs: int, tm: int, to: int) -> int:
    """The place in a table of a position seen by the seat to move (masks of cells, trophies)."""
    s = tm + to
    return (s * (s + 1) // 2 + tm) * 19683 + _ternary(mine) + 2 * _ternary(theirs)


def _ternary(mask: int) -> int:
    total = 0
    i = 0
    while mask:
        if mask & 1:
            total += _POW3[i]
        mask >>= 1
        i += 1
    return total


class Solution:
    """The solved game: exact win chances of a TOHM two-player 3x3 game."""

    def __init__(self, game: TohmGame, values: array.array[float]) -> None:
        self.game = game
        self.table = values

    def _roll_value(self, state: TohmState, p: int) -> float:
        """The win chance of seat ``p`` in ``state`` when ``p`` is about to roll."""
        mine = theirs = 0
        for i, owner in enumerate(state.board):
            if owner == p:
                mine |= 1 << i
            elif owner >= 0:
                theirs |= 1 << i
        return self.table[index(mine, theirs, state.trophies[p], state.trophies[1 - p])]

    def values(self, state: State) -> list[float]:
        """Each seat's win chance in ``state`` under perfect play, without the turn limit (a game
        already over: its returns)."""
        assert isinstance(state, TohmState)
        if state.phase == OVER:
            return state.returns()
        p = state.to_move
        if state.current_player() == CHANCE:
            v = self._roll_value(state, p)
        else:
            v = max(self.action_values(state).values())
        return [v, 1.0 - v] if p == 0 else [1.0 - v, v]

    def action_values(self, state: State) -> dict[Action, float]:
        """The mover's win chance after each legal action of a decision node, in legal order."""
        assert isinstance(state, TohmState)
        p = state.current_player()
        out: dict[Action, float] = {}
        for action in state.legal_actions():
            after = state.clone()
            after.apply_unchecked(action)
            assert isinstance(after, TohmState)
            out[action] = self.after_value(after, p)
        return out

    def after_value(self, after: TohmState, seat: int) -> float:
        """``seat``'s win chance in ``after``: its returns when over, else the solved value (the
        turn limit ignored: a game stopped by it is valued as if play went on)."""
        if after.phase == OVER and after.trophies_left == 0:
            return after.returns()[seat]
        # the next seat to roll (when the turn limit stopped the game, the one who would have)
        nxt = 1 - after.to_move if after.phase == OVER else after.to_move
        v = self._roll_value(after, nxt)
        return v if nxt == seat else 1.0 - v


def solution(game: Game, progress: Progress | None = None) -> Solution:
    """The solved ``game`` (ValueError with :func:`unsupported`'s reason when there is none)."""
    reason = unsupported(game)
    if reason:
        raise ValueError(reason)
    assert isinstance(game, TohmGame)
    return Solution(game, _load(layout_key(game), progress))


__all__ = ["SIZE", "Solution", "build", "cache_dir", "index", "ready", "solution", "unsupported"]
