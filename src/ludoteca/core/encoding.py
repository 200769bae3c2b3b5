"""Fixed-size observation vectors: the base every game's ``encoding`` module builds on.

A game may offer, in its package, a module ``encoding`` (``ludoteca.games.<game>.encoding``,
found with :meth:`Game.part("encoding") <ludoteca.core.game.Game.part>`) defining

* ``ENCODER``: a subclass of :class:`Encoder` that turns the JSON of ``state.observation(seat)``
  into a flat list of floats whose length depends only on the game's options;
* optionally ``OPTION_TEXTS``: ``{option: (to_text, from_text)}``, comma-free text forms of
  list-valued options (``to_text(game) -> str`` from a loaded game, ``from_text(text) -> value``
  or the text unchanged when it is not in that form), for game strings that split on commas
  (OpenSpiel);
* optionally ``UNOFFERED_OPTIONS``: options the research adapters do not offer (e.g. a mode
  whose length has no bound), left at their defaults;
* optionally ``decisions_per_turn(game) -> int``: an upper bound on the player decisions in one
  turn (default 1), for the adapters' bound on a game's length.

No numpy here nor in the games: the research adapters (:mod:`ludoteca.interop`) turn the lists
into arrays. Reading the canonical JSON, not engine internals, means an encoder never sees a
secret the engine hides and keeps working when an engine's internals change.

Conventions, the same for every game:

* Seats are **relative** to the observer: block ``k`` of a per-seat feature describes seat
  ``(seat + k) % players`` (block 0 is the observer itself; a spectator, ``seat=None``, sees
  the seats in their own order).
* One-hot blocks are 0/1. Counts are scaled by a fixed factor and are not clipped: the upper
  bound of such an element (:attr:`Encoder.high`) is ``inf``. Coordinates may be negative
  (:attr:`Encoder.low`).
* :meth:`Encoder.segments` names every block (name, offset, length) for anyone building a
  network on the vector.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.game import Game

INF = float("inf")


class Encoder:
    """Position JSON -> flat vector of floats of a fixed size (:attr:`size`)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.num_players = game.num_players
        self._segments: list[tuple[str, int, int]] = []
        self.low: list[float] = []
        """The least value of each element."""
        self.high: list[float] = []
        """The greatest value of each element (``inf`` for unclipped counts)."""
        self.size = 0
        self._layout()

    # --- layout ------------------------------------------------------------------------
    def _add(self, name: str, length: int, low: float = 0.0, high: float = 1.0) -> int:
        """Append a block of ``length`` elements; return its offset."""
        offset = self.size
        self._segments.append((name, offset, length))
        self.low.extend([low] * length)
        self.high.extend([high] * length)
        self.size += length
        return offset

    def _layout(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def segments(self) -> list[tuple[str, int, int]]:
        """``[(name, offset, length)]`` of every block of the vector, in order."""
        return list(self._segments)

    # --- encoding ----------------------------------------------------------------------
    def encode(self, obs: Mapping[str, Any], seat: int | None) -> list[float]:
        """The vector of ``obs`` (``state.observation(seat)``) as ``seat`` sees it."""
        out = [0.0] * self.size
        self.fill(obs, seat, out)
        return out

    def fill(self, obs: Mapping[str, Any], seat: int | None, out: MutableSequence[float]) -> None:
        """Write the vector of ``obs`` into ``out`` (``size`` zeros: a list or an array)."""
        self._fill(obs, 0 if seat is None else seat, out)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:  # pragma: no cover
        raise NotImplementedError

    def rel(self, who: int, seat: int) -> int:
        """``who``'s seat relative to the observer ``seat``."""
        return (who - seat) % self.num_players
