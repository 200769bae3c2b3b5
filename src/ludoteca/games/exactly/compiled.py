"""exactly's compiled engine (Cython, ``_compiled.pyx``), seen from Python (issue 15).

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

import logging
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, python_playouts
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.exactly import FACES, MOVE, PHASES, START_ROLL, ExactlyGame, ExactlyState

try:
    from ludoteca.games.exactly import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SUPPORTED_OPTIONS = frozenset({"players", "start_coin", "turn_limit", "target", "euros_to_win", "cap", "die_zero",
                               "die_question", "die_50", "die_20", "die_10", "die_5"})
"""The options the compiled engine plays (all of exactly's)."""
MAX_TURN_LIMIT = 2**31 - 1
"""The largest ``turn_limit`` the compiled engine counts to (a C int)."""
VALUE_KEYS = ("5", "10", "20", "50")

_warned = False


def available() -> bool:
    """True when the compiled extension is built and importable."""
    return _compiled is not None


def unsupported(game: ExactlyGame) -> str:
    """Why the compiled engine cannot play ``game`` ("" when it can)."""
    if _compiled is None:
        return "the compiled exactly engine is not built (see docs/compiled.md)"
    extra = sorted(set(game.record_options()) - SUPPORTED_OPTIONS)
    if extra:
        return f"the compiled exactly engine does not support the option(s) {', '.join(extra)}"
    if game.num_players > _compiled.MAX_PLAYERS:
        return f"the compiled exactly engine plays at most {_compiled.MAX_PLAYERS} players"
    if game.turn_limit > MAX_TURN_LIMIT:
        return f"the compiled exactly engine plays a turn_limit up to {MAX_TURN_LIMIT}, not {game.turn_limit}"
    return ""


def supports(game: ExactlyGame) -> bool:
    """True when :func:`unsupported` has nothing to say: callers then may use the compiled engine."""
    return not unsupported(game)


def _core(game: ExactlyGame) -> Any:
    """A compiled initial position of ``game``, with every option of its rules."""
    return _compiled.CState(game.num_players, game.start_coin, game.turn_limit, game.target, game.euros_to_win,
                            game.cap, game.die)


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("%s; using the Python exactly engine (slower)", reason)


class CompiledState(CompiledView[ExactlyGame]):
    """An exactly position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError), events
    are not produced (use the Python engine where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: ExactlyState) -> CompiledState:
        game = state.game
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
        core = _core(game)
        core.load(state.counts, state.euros, state.to_move, state.phase, state.face, state.turn,
                  state.ro_seats, state.ro_rolls,
                  (state.c_rounds, state.c_euros, state.c_question, state.c_cap))
        return cls(game, core)

    @classmethod
    def from_json(cls, game: ExactlyGame, data: Mapping[str, Any]) -> CompiledState:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(game.state_from_json(data))

    @classmethod
    def initial(cls, game: ExactlyGame) -> CompiledState:
        """The initial position, built by the compiled engine itself (the roll-off of every seat)."""
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
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
        }

    def counters(self) -> dict[str, float]:
        names = ("rounds", "euros", "question_rounds", "cap_blocks")
        return dict(zip(names, self._c.fields()[8], strict=True))

    def apply_action(self, action: int) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        if isinstance(action, bool) or not isinstance(action, int) or action not in self._c.legal_actions():
            raise IllegalActionError(f"{action!r} is not legal here")
        self._c.apply(action)

    def value(self) -> list[float]:
        """``ludoteca.games.exactly.heuristic.value`` of this position, computed in C."""
        return list(self._c.value())


def compile_state(state: ExactlyState) -> CompiledState | None:
    """The compiled copy of ``state``, or None (with one warning per process) when the compiled
    engine is not built or cannot play this game: the caller then uses the Python engine."""
    reason = unsupported(state.game)
    if reason:
        _warn_once(reason)
        return None
    return CompiledState.from_state(state)


def search(state: ExactlyState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged): ``iterations`` UCT simulations with constant ``c``, random rollouts of at most
    ``cap`` actions scored by the heuristic's evaluation (``heuristic.value``, in C) when cut short
    (``evaluate=False``: even shares), seeded by ``seed`` (the same seed, the same action).
    RuntimeError when the compiled engine cannot play this game (:func:`unsupported`); ValueError
    at a roll or at the end."""
    core = CompiledState.from_state(state)._c
    return int(core.search(iterations, c, cap, seed & 0xFFFFFFFFFFFFFFFF, evaluate))


def playouts(state: ExactlyState, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

    In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
    one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
    games, other random numbers, so other results for the same seed."""
    c = compile_state(state)
    if c is not None:
        return c.playouts(n, seed)
    return python_playouts(state, n, seed)
