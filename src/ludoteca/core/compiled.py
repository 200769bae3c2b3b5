"""What every game's compiled engine (``games/<game>/compiled.py``) shares on the Python side.

:class:`CompiledEngine` is a game's compiled engine as its ``compiled.py`` offers it: whether the
extension is built (:meth:`~CompiledEngine.available`), what it cannot play
(:meth:`~CompiledEngine.unsupported`), the compiled copy of a state or None with one warning per
process (:meth:`~CompiledEngine.compile_state`), and seeded playouts in C or, after that warning, in
Python (:meth:`~CompiledEngine.playouts`). A game gives it only what differs: its name, the
extension, the options it plays and a hook for its own bounds.

:class:`CompiledView` holds one position of a game's Cython ``CState`` (whose common methods are
``core/_cstate.pxi``'s ``_CStateBase``) and reads it through the protocol's methods; each game's
``CompiledState`` subclasses it with what is its own (building from a Python state and back, the
position JSON, counters). :func:`python_playouts` is the fallback every game uses when its compiled
engine cannot play.
"""

from __future__ import annotations

import logging
import os
import random
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, Generic, Self, TypeVar, cast

from ludoteca.core.chance import random_action
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.game import Game, State

SEED_MASK = 0xFFFFFFFFFFFFFFFF
"""Seeds are taken modulo 2**64 (the compiled generator's state)."""


GameT = TypeVar("GameT", bound=Game)
StateT = TypeVar("StateT", bound=State)
ViewT = TypeVar("ViewT", bound="CompiledView[Any, Any]")


class CompiledView(Generic[GameT, StateT]):
    """A position in a game's compiled engine (``core``: its ``CState``), read like a State.

    A game's subclass builds it from a Python state (:meth:`from_state`, the one constructor it must
    write) and goes back (``to_state``, ``to_json``); :meth:`apply_action` checks legality
    (IllegalActionError); events are not produced (use the Python engine where events matter)."""

    __slots__ = ("_c", "game")

    def __init__(self, game: GameT, core: Any) -> None:
        self.game = game
        self._c = core

    @classmethod
    def from_state(cls, state: StateT) -> Self:
        """The compiled copy of ``state`` (RuntimeError when the compiled engine cannot play its game)."""
        raise NotImplementedError

    def to_state(self) -> StateT:
        """The same position as a Python state (counters included)."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        return self.to_state().to_json()

    def counters(self) -> dict[str, float]:
        """The lab's counters of this game so far (``State.counters``)."""
        return self.to_state().counters()

    @classmethod
    def from_json(cls, game: GameT, data: Mapping[str, Any]) -> Self:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(cast(StateT, game.state_from_json(data)))

    @classmethod
    def initial(cls, game: GameT) -> Self:
        """The initial position of ``game``, compiled."""
        return cls.from_state(cast(StateT, game.new_initial_state()))

    def clone(self) -> Self:
        return type(self)(self.game, self._c.copy())

    def current_player(self) -> int:
        return int(self._c.current_player())

    def is_terminal(self) -> bool:
        return bool(self._c.is_terminal())

    def is_chance_node(self) -> bool:
        return bool(self._c.is_chance_node())

    def legal_actions(self) -> list[int]:
        return list(self._c.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(self._c.chance_outcomes())

    def apply_unchecked(self, action: int) -> None:
        """Play a legal ``action`` without checking it (anything else leaves the state undefined;
        an id the position cannot hold at all may raise ValueError)."""
        self._c.apply(action)

    def apply_action(self, action: int) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        core = self._c
        if not core.play(action):
            raise IllegalActionError("the game is over" if core.is_terminal() else f"{action!r} is not legal here")

    def returns(self) -> list[float]:
        return list(self._c.returns())

    def value(self) -> list[float]:
        """The game's ``heuristic.value`` of this position (the evaluation of a cut-off rollout), in C."""
        return list(self._c.value())

    def search(self, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True) -> int:
        """The action the compiled MCTS (``core/_mcts.pxi``) plays here (a player to move; the
        position is left unchanged): ``iterations`` UCT simulations with constant ``c``, random
        rollouts of at most ``cap`` actions scored by :meth:`value` when cut short (``evaluate=False``:
        even shares), seeded by ``seed`` (the same seed, the same action). ValueError at a chance
        node or at the end."""
        return int(self._c.search(iterations, c, cap, seed & SEED_MASK, evaluate))

    def search_values(self, iterations: int, c: float, cap: int, seed: int,
                      evaluate: bool = True) -> dict[int, tuple[int, float]]:
        """:meth:`search`'s root statistics (the same search and seed): each root action's visits and
        sum of the returns of the seat to move (its estimate: sum / visits)."""
        return {int(a): (int(n), float(w)) for a, n, w in self._c.search_values(
            iterations, c, cap, seed & SEED_MASK, evaluate)}

    def sample_action(self, seed: int) -> int:
        """The action the C playout loop would play here with ``seed`` (uniform over the legal ones;
        by its probability at a chance node)."""
        return int(self._c.sample_action(seed & SEED_MASK))

    def playouts(self, n: int, seed: int) -> list[list[float]]:
        """``n`` random playouts in C from this position (left unchanged): their returns."""
        return list(self._c.playouts(n, seed & SEED_MASK))

    def playout_actions(self, n: int, seed: int) -> int:
        """``n`` random playouts in C; only the number of actions played (benchmarks)."""
        return int(self._c.playout_actions(n, seed & SEED_MASK))


ENGINE_VARIABLE = "LUDOTECA_ENGINE"
"""The environment variable that makes :func:`compiled_copy` answer None everywhere when set to
``python`` (the lab's loop and the research adapters then play the Python engine, as without a
compiler): for comparisons and for finding a difference between the engines."""


def compiled_copy(state: State) -> CompiledView[Any, Any] | None:
    """The compiled copy of ``state`` when its game has a compiled engine that is built and plays its
    options and the environment does not ask for Python (:data:`ENGINE_VARIABLE`), else None,
    silently (the Python engine is a complete answer, only slower).

    The one place where the lab's game loop and the OpenSpiel and PettingZoo adapters choose their
    engine: the compiled copy plays the same actions (ids and order), chance outcomes and returns,
    and ``to_state()`` gives the Python state back (docs/compiled.md)."""
    if os.environ.get(ENGINE_VARIABLE, "").strip().lower() == "python":
        return None
    module = state.game.compiled()
    engine = getattr(module, "ENGINE", None)
    if not isinstance(engine, CompiledEngine) or not engine.supports(state.game):
        return None
    return cast(CompiledView[Any, Any], engine.view.from_state(state))


def python_playouts(state: State, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged) with the Python
    engine and ``random.Random(seed)``: the compiled engines' fallback (the same distribution of
    games, other random numbers)."""
    rng = random.Random(seed)
    out: list[list[float]] = []
    for _ in range(n):
        s = state.clone()
        while not s.is_terminal():
            s.apply_unchecked(random_action(s, rng))
        out.append(s.returns())
    return out


class CompiledEngine(Generic[GameT, StateT, ViewT]):
    """A game's compiled engine as its ``compiled.py`` offers it (module functions are its methods)::

        ENGINE = CompiledEngine(__name__, "TOHM", _compiled, CompiledState, SUPPORTED_OPTIONS, _bounds)
        available, unsupported, supports = ENGINE.available, ENGINE.unsupported, ENGINE.supports

    ``module`` is the game's ``compiled`` module (``__name__``): its logger gives the one warning of
    the fallback, and its ``_warned`` says whether it was given. ``extension`` is the imported
    ``_compiled`` (None: not built). ``bounds(game)`` names what else the engine cannot play
    ("" when it can), beyond the options and the player count every engine checks."""

    def __init__(self, module: str, label: str, extension: ModuleType | None, view: type[ViewT],
                 options: Iterable[str], bounds: Callable[[GameT], str] | None = None) -> None:
        self.label = label
        self.extension = extension
        self.view = view
        self.options = frozenset(options)
        self.bounds = bounds
        self.log = logging.getLogger(module)
        self._namespace = vars(sys.modules[module])
        self._namespace["_warned"] = False

    def available(self) -> bool:
        """True when the compiled extension is built and importable."""
        return self.extension is not None

    def unsupported(self, game: GameT) -> str:
        """Why the compiled engine cannot play ``game`` ("" when it can)."""
        if self.extension is None:
            return f"the compiled {self.label} engine is not built (see docs/compiled.md)"
        extra = sorted(set(game.options) - self.options)
        if extra:
            return f"the compiled {self.label} engine does not support the option(s) {', '.join(extra)}"
        most = int(self.extension.MAX_PLAYERS)
        if game.num_players > most:
            return f"the compiled {self.label} engine plays at most {most} players"
        return self.bounds(game) if self.bounds is not None else ""

    def supports(self, game: GameT) -> bool:
        """True when :meth:`unsupported` has nothing to say: callers then may use the compiled engine."""
        return not self.unsupported(game)

    def warn_once(self, reason: str) -> None:
        """One warning per process that the Python engine plays instead, with ``reason``."""
        if not self._namespace.get("_warned"):
            self._namespace["_warned"] = True
            self.log.warning("%s; using the Python %s engine (slower)", reason, self.label)

    def compile_state(self, state: StateT) -> ViewT | None:
        """The compiled copy of ``state``, or None (with one warning per process) when the compiled
        engine is not built or cannot play this game: the caller then uses the Python engine."""
        reason = self.unsupported(cast(GameT, state.game))
        if reason:
            self.warn_once(reason)
            return None
        return self.view.from_state(state)

    def playouts(self, state: StateT, n: int, seed: int) -> list[list[float]]:
        """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

        In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
        one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
        games, other random numbers, so other results for the same seed."""
        c = self.compile_state(state)
        if c is not None:
            return c.playouts(n, seed)
        return python_playouts(state, n, seed)

    def functions(self) -> tuple[Callable[[], bool], Callable[[GameT], str], Callable[[GameT], bool],
                                 Callable[[StateT], ViewT | None], Callable[[StateT, int, int], list[list[float]]]]:
        """The module functions of a game's ``compiled.py``:
        ``available, unsupported, supports, compile_state, playouts = ENGINE.functions()``."""
        return self.available, self.unsupported, self.supports, self.compile_state, self.playouts

    def checked(self, game: GameT) -> ModuleType:
        """The extension, for building a position of ``game`` (RuntimeError with the reason when the
        compiled engine cannot play it)."""
        reason = self.unsupported(game)
        if reason or self.extension is None:
            raise RuntimeError(reason)
        return self.extension
