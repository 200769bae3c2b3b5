"""TRI's compiled engine (Cython, ``_compiled.pyx``), seen from Python (issue 15).

The compiled engine plays exactly the rules of the Python engine (``ludoteca.games.tri``: the
readable reference) on C arrays: the same legal actions (the same ids in the same order), the same
chance outcomes and probabilities, the same positions (``to_json``), counters and returns —
``tests/test_compiled_tri.py`` proves it over thousands of seeded games per player count, random
options and every golden playthrough. Like the Python state it holds the true position (battle
rolls and cards included); hiding them is the Python side's business (``observation``, ``worlds``).
Its use is random playouts in C, for the lab and MCTS rollouts::

    from ludoteca.games.tri import compiled
    returns = compiled.playouts(state, 1000, seed=7)   # [[r0, r1, ...], ...], one per playout

:func:`available` says whether the extension is built (see docs/compiled.md). When it is not,
:func:`playouts` logs one warning and plays the playouts with the Python engine (the same
distribution; other random numbers).

:func:`search` is the compiled MCTS (``core/_mcts.pxi``) on this engine, with ``_value`` (the mirror of
``heuristic.value``) scoring the rollouts it cuts short.

Every option of TRI is supported (``size`` 2 to 12, ``ties``, ``turn_limit``, ``teleport``
"claim" and "move"); :func:`unsupported` names what the compiled engine cannot play, should a
future option appear.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, python_playouts
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.tri import BATTLE, Battle, TriGame, TriState

try:
    from ludoteca.games.tri import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SUPPORTED_OPTIONS = frozenset({"players", "size", "ties", "turn_limit", "teleport"})
"""The options the compiled engine plays (all of TRI's today)."""

_warned = False


def available() -> bool:
    """True when the compiled extension is built and importable."""
    return _compiled is not None


def unsupported(game: TriGame) -> str:
    """Why the compiled engine cannot play ``game`` ("" when it can)."""
    if _compiled is None:
        return "the compiled TRI engine is not built (see docs/compiled.md)"
    extra = sorted(set(game.options) - SUPPORTED_OPTIONS)
    if extra:
        return f"the compiled TRI engine does not support the option(s) {', '.join(extra)}"
    if game.size > _compiled.MAX_SIZE:
        return f"the compiled TRI engine plays boards of size at most {_compiled.MAX_SIZE}, not {game.size}"
    if game.num_players > _compiled.MAX_PLAYERS:
        return f"the compiled TRI engine plays at most {_compiled.MAX_PLAYERS} players"
    return ""


def supports(game: TriGame) -> bool:
    """True when :func:`unsupported` has nothing to say: callers then may use the compiled engine."""
    return not unsupported(game)


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("%s; using the Python TRI engine (slower)", reason)


class CompiledState(CompiledView[TriGame]):
    """A TRI position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError), events
    are not produced (use the Python engine where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: TriState) -> CompiledState:
        game = state.game
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
        core = _compiled.CState(game.size, game.num_players, game.ties_attacker, game.turn_limit,
                                game.teleport_move)
        b = state.battle
        battle = None if b is None else (b.attacker, b.defender, b.target, b.dice, b.step, b.attacker_roll,
                                         b.defender_roll, b.attacker_card, b.defender_card)
        core.load(state.owner, state.hands, state.alive, state.used, state.to_move, state.round, state.turn,
                  state.phase, battle, list(state._counters))
        return cls(game, core)

    @classmethod
    def from_json(cls, game: TriGame, data: Mapping[str, Any]) -> CompiledState:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(game.state_from_json(data))

    @classmethod
    def initial(cls, game: TriGame) -> CompiledState:
        return cls.from_state(game.new_initial_state())

    def to_state(self) -> TriState:
        """The same position as a Python state (counters included)."""
        owner, hands, alive, used, to_move, rnd, turn, phase, battle, counters = self._c.fields()
        g = self.game
        s = TriState(g, blank=True)
        s.owner = owner
        s.owned = [set() for _ in range(g.num_players)]
        for t, o in enumerate(owner):
            if o >= 0:
                s.owned[o].add(t)
        s.hands = hands
        s.alive = alive
        s.n_alive = sum(alive)
        s.empty = owner.count(-1)
        s.used = used
        s.to_move = to_move
        s.round = rnd
        s.turn = turn
        s.phase = phase
        s.battle = None if battle is None or phase != BATTLE else Battle(*battle)
        s._counters = counters
        return s

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        return self.to_state().to_json()

    def counters(self) -> dict[str, float]:
        return self.to_state().counters()

    def apply_action(self, action: int) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        if self._c.is_terminal():
            raise IllegalActionError("the game is over")
        if isinstance(action, bool) or not isinstance(action, int) or action not in self._c.legal_actions():
            raise IllegalActionError(f"{action!r} is not legal here")
        self._c.apply(action)

    def value(self) -> list[float]:
        """``ludoteca.games.tri.heuristic.value`` of this position, in C: winning chances per seat
        (the leaf evaluation of TRI's MCTS)."""
        return list(self._c.value())


def compile_state(state: TriState) -> CompiledState | None:
    """The compiled copy of ``state``, or None (with one warning per process) when the compiled
    engine is not built or cannot play this game: the caller then uses the Python engine."""
    reason = unsupported(state.game)
    if reason:
        _warn_once(reason)
        return None
    return CompiledState.from_state(state)


def search(state: TriState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged): ``iterations`` UCT simulations with constant ``c``, random rollouts of at most
    ``cap`` actions scored by the heuristic's evaluation (``heuristic.value``, in C) when cut short
    (``evaluate=False``: even shares), seeded by ``seed`` (the same seed, the same action).
    RuntimeError when the compiled engine cannot play this game (:func:`unsupported`); ValueError
    at a chance node or at the end. The search reads the whole position, battle rolls and chosen
    cards included: for a fair player pass a position the seat may know (one of
    ``state.worlds(seat)``, or ``state`` itself when ``worlds`` is None)."""
    return int(CompiledState.from_state(state)._c.search(iterations, c, cap, seed & 0xFFFFFFFFFFFFFFFF, evaluate))


def playouts(state: TriState, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

    In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
    one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
    games, other random numbers, so other results for the same seed."""
    c = compile_state(state)
    if c is not None:
        return c.playouts(n, seed)
    return python_playouts(state, n, seed)
