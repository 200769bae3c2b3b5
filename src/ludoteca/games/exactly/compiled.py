"""exactly's compiled engine (Cython, ``_compiled.pyx``), seen from Python.

The compiled engine plays exactly the rules of the Python engine (``ludoteca.games.exactly``: the
readable reference) on C arrays: the same legal actions (the same ids in the same order), the same
chance outcomes and probabilities, the same positions (``to_json``), returns and lab counters —
``tests/test_compiled_exactly.py`` proves it over thousands of seeded games per player count, over
random options and on every golden playthrough. Its use is random playouts in C, for the lab and MCTS
rollouts, and the compiled MCTS (``core/_mcts.pxi``) on it::

    from ludoteca.games.exactly import compiled
    returns = compiled.playouts(state, 1000, seed=7)   # [[r0, r1, ...], ...], one per playout
    action = compiled.search(state, 1000, 0.4, 10, seed=7)   # a player to move in ``state``

:func:`available` says whether the extension is built (``pip install -e .`` builds it with the
system compiler; see docs/compiled.md). When it is not, :func:`playouts` logs one warning and plays
the playouts with the Python engine (the same distribution; other random numbers).

Every option of exactly is supported (``players`` 2-6, ``start_coin``, the rulebook's numbers
``target``, ``euros_to_win``, ``cap`` and the die's faces, ``turn_limit`` up to 2**31 - 1);
:func:`unsupported` names what the compiled engine cannot play.
"""

from __future__ import annotations

from typing import Any

from ludoteca.core.compiled import CompiledEngine, CompiledView
from ludoteca.games.exactly import FACES, MOVE, PHASES, START_ROLL, ExactlyGame, ExactlyState, rule_keys

try:
    from ludoteca.games.exactly import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

SUPPORTED_OPTIONS = frozenset({"players", "start_coin", "turn_limit", "target", "euros_to_win", "cap", "die_zero",
                               "die_question", "die_50", "die_20", "die_10", "die_5"})
"""The options the compiled engine plays (all of exactly's)."""
MAX_TURN_LIMIT = 2**31 - 1
"""The largest ``turn_limit`` the compiled engine counts to (a C int)."""
VALUE_KEYS = ("5", "10", "20", "50")


def _bounds(game: ExactlyGame) -> str:
    if game.turn_limit > MAX_TURN_LIMIT:
        return f"the compiled exactly engine plays a turn_limit up to {MAX_TURN_LIMIT}, not {game.turn_limit}"
    return ""


def _core(game: ExactlyGame) -> Any:
    """A compiled initial position of ``game``, with every option of its rules."""
    return ENGINE.checked(game).CState(game.num_players, game.start_coin, game.turn_limit, game.target,
                                       game.euros_to_win, game.cap, game.die)


class CompiledState(CompiledView[ExactlyGame, ExactlyState]):
    """An exactly position in the compiled engine, with the protocol's reading methods (see CompiledView)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: ExactlyState) -> CompiledState:
        core = _core(state.game)
        core.load(state.counts, state.euros, state.to_move, state.phase, state.face, state.turn,
                  state.ro_seats, state.ro_rolls,
                  (state.c_rounds, state.c_euros, state.c_question, state.c_cap))
        return cls(state.game, core)

    @classmethod
    def initial(cls, game: ExactlyGame) -> CompiledState:
        """The initial position, built by the compiled engine itself (the roll-off of every seat)."""
        return cls(game, _core(game))

    def to_state(self) -> ExactlyState:
        """The same position as a Python state (counters included)."""
        counts, euros, to_move, phase, face, turn, ro_seats, ro_rolls, counters = self._c.fields()
        s = ExactlyState(self.game)
        s.counts = counts
        s.totals = self._c.totals()
        s._set_bank_total()
        s.euros = euros
        s.to_move = to_move
        s.phase = phase
        s.face = face
        s.turn = turn
        s.ro_seats = ro_seats
        s.ro_rolls = ro_rolls
        s.c_rounds, s.c_euros, s.c_question, s.c_cap = counters
        return s

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        g = self.game
        n = g.num_players
        p = g.piles
        counts, euros, to_move, phase, face, turn, ro_seats, ro_rolls, _ = self._c.fields()

        def pile(i: int) -> dict[str, int]:
            return {VALUE_KEYS[v]: counts[v * p + i] for v in range(4)}

        rolloff = None
        if phase == START_ROLL:
            rolloff = {"seats": ro_seats, "rolls": [FACES[r] for r in ro_rolls]}
        return {
            "game": "exactly",
            "players": n,
            "bank": pile(0),
            "piles": [pile(s + 1) for s in range(n)],
            "euros": euros,
            "to_move": to_move,
            "phase": PHASES[phase],
            "roll": FACES[face] if phase == MOVE else None,
            "turn": turn,
            "rolloff": rolloff,
            **rule_keys(g),
        }

    def counters(self) -> dict[str, float]:
        names = ("rounds", "euros", "question_rounds", "cap_blocks")
        return dict(zip(names, self._c.fields()[8], strict=True))


ENGINE: CompiledEngine[ExactlyGame, ExactlyState, CompiledState] = CompiledEngine(
    __name__, "exactly", _compiled, CompiledState, SUPPORTED_OPTIONS, _bounds)
available, unsupported, supports, compile_state, playouts = ENGINE.functions()


def search(state: ExactlyState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged; :meth:`CompiledView.search`), rollouts cut short scored by ``heuristic.value``
    in C. RuntimeError when the compiled engine cannot play this game (:func:`unsupported`)."""
    return CompiledState.from_state(state).search(iterations, c, cap, seed, evaluate)


def search_values(state: ExactlyState, iterations: int, c: float, cap: int, seed: int,
                  evaluate: bool = True) -> dict[int, tuple[int, float]]:
    """:func:`search`'s root statistics (the same search and seed): each root action's visits and sum
    of the mover's returns (the analysis's per-action estimates, ``ludoteca.analysis``)."""
    return CompiledState.from_state(state).search_values(iterations, c, cap, seed, evaluate)
