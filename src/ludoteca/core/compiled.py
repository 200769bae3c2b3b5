"""What every game's compiled engine (``games/<game>/compiled.py``, issue 15) shares on the Python side.

:class:`CompiledView` holds one position of a game's Cython ``CState`` and reads it through the
protocol's methods; each game's ``CompiledState`` subclasses it with what is its own (building from
a Python state and back, the position JSON, counters, a checked ``apply_action``).
:func:`python_playouts` is the fallback every game uses when its compiled engine cannot play.
"""

from __future__ import annotations

import random
from typing import Any, Generic, Self, TypeVar

from ludoteca.core.chance import random_action
from ludoteca.core.game import Game, State

SEED_MASK = 0xFFFFFFFFFFFFFFFF
"""Seeds are taken modulo 2**64 (the compiled generator's state)."""


GameT = TypeVar("GameT", bound=Game)


class CompiledView(Generic[GameT]):
    """A position in a game's compiled engine (``core``: its ``CState``), read like a State."""

    __slots__ = ("_c", "game")

    def __init__(self, game: GameT, core: Any) -> None:
        self.game = game
        self._c = core

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

    def returns(self) -> list[float]:
        return list(self._c.returns())

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
