"""TOHM's compiled engine (Cython, ``_compiled.pyx``), seen from Python (issue 15).

The compiled engine plays exactly the rules of the Python engine (``ludoteca.games.tohm``: the
readable reference) on C arrays: the same legal actions (the same ids in the same order), the same
chance outcomes and probabilities, the same positions (``to_json``) and returns —
``tests/test_compiled_tohm.py`` proves it over thousands of seeded games per player count and
every golden playthrough. Its uses are random playouts in C, and the compiled MCTS of the
``strong`` agent (``core/_mcts.pxi``, found through ``TohmGame.compiled()``)::

    from ludoteca.games.tohm import compiled
    returns = compiled.playouts(state, 1000, seed=7)   # [[r0, r1, ...], ...], one per playout
    action = compiled.search(state, 3000, 0.4, 60, seed=7)   # a player to move in ``state``

:func:`available` says whether the extension is built (``pip install -e .`` builds it with the
system compiler; see docs/compiled.md). When it is not, :func:`playouts` logs one warning and plays
the playouts with the Python engine (the same distribution; other random numbers).

Every option of TOHM is supported (``layout`` up to 10x10 = 100 cells, ``turn_limit``);
:func:`unsupported` names what the compiled engine cannot play, should a future option appear.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, python_playouts
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.tohm import PHASES, TohmGame, TohmState

try:
    from ludoteca.games.tohm import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SUPPORTED_OPTIONS = frozenset({"players", "layout", "turn_limit", "tokens", "trophies", "tris", "place_anywhere",
                               "face_1", "face_2", "face_3", "face_4", "face_5", "face_6"})
"""The options the compiled engine plays (all of TOHM's)."""

_warned = False


def available() -> bool:
    """True when the compiled extension is built and importable."""
    return _compiled is not None


def unsupported(game: TohmGame) -> str:
    """Why the compiled engine cannot play ``game`` ("" when it can)."""
    if _compiled is None:
        return "the compiled TOHM engine is not built (see docs/compiled.md)"
    extra = sorted(set(game.record_options()) - SUPPORTED_OPTIONS)
    if extra:
        return f"the compiled TOHM engine does not support the option(s) {', '.join(extra)}"
    if game.n_cells > _compiled.MAX_CELLS:
        return f"the compiled TOHM engine plays at most {_compiled.MAX_CELLS} cells, not {game.n_cells}"
    if game.num_players > _compiled.MAX_PLAYERS:
        return f"the compiled TOHM engine plays at most {_compiled.MAX_PLAYERS} players"
    return ""


def supports(game: TohmGame) -> bool:
    """True when :func:`unsupported` has nothing to say: callers then may use the compiled engine."""
    return not unsupported(game)


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("%s; using the Python TOHM engine (slower)", reason)


class CompiledState(CompiledView[TohmGame]):
    """A TOHM position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError), events
    are not produced (use the Python engine where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: TohmState) -> CompiledState:
        game = state.game
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
        core = _compiled.CState(game.rows, game.cols, list(game.numbers), game.num_players, game.turn_limit,
                                game.tokens, game.trophies_total, game.tris_length, list(game.face_kind))
        core.load(state.board, state.supply, state.trophies, state.trophies_left, state.to_move, state.phase,
                  state.roll, state.turn,
                  (state.n_tris, state.n_tris_others, state.n_trophies, state.n_removes, state.n_moves,
                   state.n_places, state.n_passes))
        return cls(game, core)

    @classmethod
    def from_json(cls, game: TohmGame, data: Mapping[str, Any]) -> CompiledState:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(game.state_from_json(data))

    @classmethod
    def initial(cls, game: TohmGame) -> CompiledState:
        return cls.from_state(game.new_initial_state())

    def to_state(self) -> TohmState:
        """The same position as a Python state (counters included)."""
        board, supply, trophies, left, to_move, phase, roll, turn, counters = self._c.fields()
        s = TohmState(self.game)
        s.board = board
        s.supply = supply
        s.filled = sum(1 for x in board if x >= 0)
        s.trophies = trophies
        s.trophies_left = left
        s.to_move = to_move
        s.phase = phase
        s.roll = roll
        s.turn = turn
        s._cur = (CHANCE, to_move, TERMINAL)[phase]
        (s.n_tris, s.n_tris_others, s.n_trophies, s.n_removes, s.n_moves, s.n_places, s.n_passes) = counters
        return s

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        g = self.game
        board, supply, trophies, left, to_move, phase, roll, turn, _ = self._c.fields()
        cols = g.cols
        return {
            "game": g.name,
            "players": g.num_players,
            "rows": g.rows,
            "cols": cols,
            "layout": [list(row) for row in g.layout],
            "board": [[None if b < 0 else b for b in board[r * cols:r * cols + cols]] for r in range(g.rows)],
            "supply": supply,
            "trophies": trophies,
            "trophies_left": left,
            "to_move": to_move,
            "phase": PHASES[phase],
            "roll": roll,
            "turn": turn,
        }

    def counters(self) -> dict[str, float]:
        names = ("tris", "tris_for_others", "trophies_given", "removes", "moves", "places", "passes")
        return dict(zip(names, self._c.fields()[8], strict=True))

    def apply_action(self, action: int) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        if action not in self._c.legal_actions():
            raise IllegalActionError(f"{action!r} is not legal here")
        self._c.apply(action)


def compile_state(state: TohmState) -> CompiledState | None:
    """The compiled copy of ``state``, or None (with one warning per process) when the compiled
    engine is not built or cannot play this game: the caller then uses the Python engine."""
    reason = unsupported(state.game)
    if reason:
        _warn_once(reason)
        return None
    return CompiledState.from_state(state)


def search(state: TohmState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged): ``iterations`` UCT simulations with constant ``c``, random rollouts of at most
    ``cap`` actions scored by the heuristic's evaluation when cut short (``evaluate=False``: even
    shares), seeded by ``seed`` (the same seed, the same action). RuntimeError when the compiled
    engine cannot play this game (:func:`unsupported`); ValueError at a roll or at the end.
    The game's hook for agents: ``game.compiled()`` is this module (``strong`` uses it)."""
    return int(CompiledState.from_state(state)._c.search(iterations, c, cap, seed & 0xFFFFFFFFFFFFFFFF, evaluate))


def playouts(state: TohmState, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

    In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
    one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
    games, other random numbers, so other results for the same seed."""
    c = compile_state(state)
    if c is not None:
        return c.playouts(n, seed)
    return python_playouts(state, n, seed)
