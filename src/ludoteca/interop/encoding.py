"""Fixed-size ``float32`` observation tensors for the research adapters (OpenSpiel, PettingZoo).

Each game describes its vector in its own package (``ludoteca.games.<game>.encoding``: an
:class:`ludoteca.core.encoding.Encoder` that writes plain floats, no numpy); this module finds it
by convention (:meth:`Game.part <ludoteca.core.game.Game.part>`) and gives it numpy arrays. The
conventions (relative seats, one-hot blocks, scaled counts, named segments) are in
:mod:`ludoteca.core.encoding`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from ludoteca.core import encoding as core_encoding
from ludoteca.core.game import Game


class Encoder:
    """Position JSON -> flat float32 vector of a fixed size (a game's encoder, as numpy)."""

    def __init__(self, base: core_encoding.Encoder) -> None:
        self.base = base
        """The game's own encoder (plain Python floats)."""
        self.game = base.game
        self.num_players = base.num_players
        self.size = base.size
        self.low = np.asarray(base.low, dtype=np.float32)
        self.high = np.asarray(base.high, dtype=np.float32)

    def segments(self) -> list[tuple[str, int, int]]:
        """``[(name, offset, length)]`` of every block of the vector, in order."""
        return self.base.segments()

    def encode(self, obs: Mapping[str, Any], seat: int | None, out: np.ndarray | None = None) -> np.ndarray:
        """The vector of ``obs`` (``state.observation(seat)``) as ``seat`` sees it (written into
        ``out`` when given)."""
        vec = self.base.encode(obs, seat)
        if out is None:
            return np.array(vec, dtype=np.float32)
        out[:] = vec
        return out


def encoding_module(game: Game) -> ModuleType:
    """The game's ``encoding`` module; ValueError for a game without an observation encoder."""
    module = game.part("encoding")
    if module is None or not hasattr(module, "ENCODER"):
        raise ValueError(f"no observation encoder for the game {game.name!r} "
                         "(its package has no module 'encoding' with an ENCODER)")
    return module


def make_encoder(game: Game) -> Encoder:
    """The encoder of ``game`` (a ludoteca Game with its options resolved)."""
    return Encoder(encoding_module(game).ENCODER(game))
