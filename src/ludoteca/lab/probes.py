"""What the lab reads from a position: only the engine contract (:mod:`ludoteca.core.game`).

* each seat's score: :meth:`State.scores` (the game's own measure, the one ``turn_limit``
  uses; higher is better);
* the player turns: :meth:`State.turns_played` (the position JSON's ``turn``);
* why the game ended: :meth:`State.end_reason`;
* the game's figures: :meth:`State.counters`, as the game declares them in ``Game.counters``.

Nothing here knows a game by name: a new game gets every figure the lab reports by
implementing the contract. A game without ``scores()`` still runs; the lab then measures no
drama or lead changes (:attr:`Probe.has_scores` is False).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ludoteca.core.game import Counter, Game, State

TURN_LIMIT = "turn_limit"
"""The ``end_reason()`` of a game stopped by its ``turn_limit`` option."""
DEFAULT_END = "over"
"""The ``end_reason()`` of a game that gives no reason of its own (``State.end_reason``'s default)."""
ROUNDS = "rounds"
"""A counter of this name, when a game declares one, is the lab's count of rounds."""


class Probe:
    """What the lab can read from the positions of one game (its options resolved)."""

    def __init__(self, game: Game) -> None:
        self.n = game.num_players
        self.turn_limit: int | None = game.options.get("turn_limit")
        self.counters: tuple[Counter, ...] = tuple(game.counters)
        """The figures the game declares (``Game.counters``)."""
        initial = game.new_initial_state()
        self.has_scores = _has_scores(initial)
        """True when the game implements ``scores()`` (drama and lead changes need it)."""
        names = {d.name for d in self.counters}
        self.rounds_in_position = ROUNDS not in names and "round" in initial.to_json()
        """True when the rounds are read from the final position's ``round`` (no ``rounds`` counter)."""

    def scores(self, state: State) -> list[float]:
        """Each seat's score now (a new list); zeros for a game without ``scores()``."""
        if not self.has_scores:
            return [0] * self.n
        return list(state.scores())

    def stopped_by_limit(self, reason: str, turns: int) -> bool:
        """True when the game ended because it reached ``turn_limit``: its end reason says so, or
        (a game that gives no end reason) its turns reached the limit."""
        if reason == TURN_LIMIT:
            return True
        return reason == DEFAULT_END and self.turn_limit is not None and turns >= self.turn_limit

    def rounds(self, state: State, turns: int, counters: Mapping[str, Any]) -> int:
        """Rounds played: the game's ``rounds`` counter if it has one, else the position's
        ``round`` (RULES.md) if it has one, else turns / players rounded up."""
        value = state.to_json().get("round") if self.rounds_in_position else counters.get(ROUNDS)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
        return math.ceil(turns / self.n)


def _has_scores(state: State) -> bool:
    try:
        scores = state.scores()
    except NotImplementedError:
        return False
    return len(scores) == state.num_players
