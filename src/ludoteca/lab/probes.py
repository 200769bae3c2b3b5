"""What the lab reads from a position, game by game: the turn count and each seat's score.

The engine contract gives every position a canonical JSON form with ``turn`` and each game's
score (RULES.md, "Score for turn_limit"): exactly — 1-euro tokens; TRI — units owned;
TOHM — trophies; EXAGON — fewer tiles in hand is better (so the score is minus the hand
size). Reading the JSON at every turn would slow the simulation down, so a :class:`Probe`
looks for the same figures in the state's attributes (``turn``, ``euros``, ``trophies``,
``hands``, TRI's ``units()``) and uses them only after checking, on a short random game,
that they agree with the JSON. An engine that stores them differently still works, more
slowly.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from ludoteca.core.chance import random_action
from ludoteca.core.game import Game, State

Scores = tuple[float, ...]


def _json_scores(name: str, n: int) -> Callable[[dict[str, Any]], Scores]:
    """Each seat's score (higher is better) from the canonical position JSON."""
    if name == "exactly":
        return lambda d: tuple(d["euros"])
    if name == "tohm":
        return lambda d: tuple(d["trophies"])
    if name == "tri":
        def tri(d: dict[str, Any]) -> Scores:
            units = [0] * n
            for seat in d["owner"].values():
                units[seat] += 1
            return tuple(units)
        return tri
    if name == "exagon":
        return lambda d: tuple(-len(h) for h in d["hands"])
    # an unknown game: no score (drama is then not measured)
    return lambda d: (0,) * n


def _identity(value: Any) -> Scores:
    return tuple(value)


def _minus_lengths(value: Any) -> Scores:
    return tuple(-len(h) for h in value)


def _copy_lists(value: Any) -> Any:
    return [x[:] for x in value]


def _score_attrs(name: str) -> list[tuple[str, Callable[[Any], Scores], Callable[[Any], Any]]]:
    """Candidate ``(attribute, conversion, snapshot)``: the score is
    ``conversion(state.<attribute>)``; ``snapshot`` copies the attribute's value."""
    if name == "exactly":
        return [("euros", _identity, list)]
    if name == "tohm":
        return [("trophies", _identity, list)]
    if name == "exagon":
        return [("hands", _minus_lengths, _copy_lists)]
    return []


def _score_methods(name: str, n: int) -> list[Callable[[State], Scores]]:
    """Candidate score readers calling the state's methods, checked before use."""
    if name == "tri":
        return [lambda s: tuple(s.units())]  # type: ignore[attr-defined]
    return []


class Probe:
    """Fast read-outs of a game's positions, checked once against the canonical JSON."""

    def __init__(self, game: Game, check_seed: int = 12345) -> None:
        self.name = game.name
        self.n = n = game.num_players
        self.turn_limit: int | None = game.options.get("turn_limit")
        self._json_scores = _json_scores(self.name, n)
        samples = _sample_states(game, check_seed)
        jsons = [s.to_json() for s in samples]

        def turn_from_json(s: State) -> int:
            return int(s.to_json()["turn"])

        self.turn: Callable[[State], int] = turn_from_json
        if _agrees(lambda s: s.turn, samples, [d["turn"] for d in jsons]):  # type: ignore[attr-defined]
            self.turn = _attr_turn

        def scores_from_json(s: State) -> Scores:
            return self._json_scores(s.to_json())

        self.scores: Callable[[State], Scores] = scores_from_json
        self.score_attr: str | None = None
        """With ``score_convert``: the score read from one attribute (the fastest way)."""
        self.score_convert: Callable[[Any], Scores] = _identity
        self.score_snapshot: Callable[[Any], Any] = list
        try:
            expected = [self._json_scores(d) for d in jsons]
        except (KeyError, TypeError, IndexError):
            self.scores = lambda s: (0,) * n
        else:
            for attr, convert, snapshot in _score_attrs(self.name):
                if _agrees(lambda s, a=attr, c=convert: c(getattr(s, a)), samples, expected):
                    self.score_attr, self.score_convert, self.score_snapshot = attr, convert, snapshot
                    self.scores = lambda s, a=attr, c=convert: c(getattr(s, a))
                    break
            else:
                for cand in _score_methods(self.name, n):
                    if _agrees(cand, samples, expected):
                        self.scores = cand
                        break
        self.fast = self.turn is _attr_turn and self.score_attr is not None
        """``state.turn`` and ``state.<score_attr>`` can be read directly."""

    def rounds(self, state: State, turns: int, counters: dict[str, Any]) -> int:
        """Rounds played: the game's own count if it has one (exactly: scoring rounds, from
        ``counters()['rounds']``; TRI: the position's ``round``), else turns / players
        rounded up."""
        r = counters.get("rounds")
        if isinstance(r, int) and not isinstance(r, bool):
            return r
        r = getattr(state, "round", None)
        if isinstance(r, int) and not isinstance(r, bool):
            return r
        return math.ceil(turns / self.n)


def _attr_turn(s: State) -> int:
    return s.turn  # type: ignore[attr-defined,no-any-return]


def _agrees(reader: Callable[[State], Any], states: list[State], expected: list[Any]) -> bool:
    try:
        return all(reader(s) == e for s, e in zip(states, expected, strict=True))
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        return False


def _sample_states(game: Game, seed: int, limit: int = 400) -> list[State]:
    """Positions of one short random game (every 7th, and the last) to check readers on."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    out = [state.clone()]
    for i in range(limit):
        if state.is_terminal():
            break
        state.apply_action(random_action(state, rng))
        if i % 7 == 6:
            out.append(state.clone())
    out.append(state.clone())
    return out
