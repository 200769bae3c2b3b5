"""TOHM's compiled engine (Cython, ``_compiled.pyx``), seen from Python.

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

from ludoteca.core.compiled import CompiledEngine, CompiledView
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.games.tohm import TohmGame, TohmState

try:
    from ludoteca.games.tohm import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

SUPPORTED_OPTIONS = frozenset({"players", "layout", "turn_limit", "tokens", "trophies", "tris", "place_anywhere",
                               "face_1", "face_2", "face_3", "face_4", "face_5", "face_6"})
"""The options the compiled engine plays (all of TOHM's)."""


def _bounds(game: TohmGame) -> str:
    if game.n_cells > _compiled.MAX_CELLS:
        return f"the compiled TOHM engine plays at most {_compiled.MAX_CELLS} cells, not {game.n_cells}"
    return ""


class CompiledState(CompiledView[TohmGame, TohmState]):
    """A TOHM position in the compiled engine, with the protocol's reading methods (see CompiledView)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: TohmState) -> CompiledState:
        game = state.game
        core = ENGINE.checked(game).CState(game.rows, game.cols, list(game.numbers), game.num_players,
                                           game.turn_limit, game.tokens, game.trophies_total, game.tris_length,
                                           list(game.face_kind))
        core.load(state.board, state.supply, state.trophies, state.trophies_left, state.to_move, state.phase,
                  state.roll, state.turn,
                  (state.n_tris, state.n_tris_others, state.n_trophies, state.n_removes, state.n_moves,
                   state.n_places, state.n_passes))
        return cls(game, core)

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

    def counters(self) -> dict[str, float]:
        names = ("tris", "tris_for_others", "trophies_given", "removes", "moves", "places", "passes")
        return dict(zip(names, self._c.fields()[8], strict=True))


ENGINE: CompiledEngine[TohmGame, TohmState, CompiledState] = CompiledEngine(
    __name__, "TOHM", _compiled, CompiledState, SUPPORTED_OPTIONS, _bounds)
available, unsupported, supports, compile_state, playouts = ENGINE.functions()


def search(state: TohmState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged; :meth:`CompiledView.search`): random rollouts scored by the heuristic's
    evaluation when cut short. RuntimeError when the compiled engine cannot play this game
    (:func:`unsupported`). The game's hook for agents: ``game.compiled()`` is this module
    (``strong`` uses it)."""
    return CompiledState.from_state(state).search(iterations, c, cap, seed, evaluate)


def search_values(state: TohmState, iterations: int, c: float, cap: int, seed: int,
                  evaluate: bool = True) -> dict[int, tuple[int, float]]:
    """:func:`search`'s root statistics (the same search and seed): each root action's visits and sum
    of the mover's returns (the analysis's per-action estimates, ``ludoteca.analysis``)."""
    return CompiledState.from_state(state).search_values(iterations, c, cap, seed, evaluate)
