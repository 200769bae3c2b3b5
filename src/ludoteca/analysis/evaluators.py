"""What the analysis asks of a position: each seat's expected result, and the mover's per action.

Two evaluators, chosen by :func:`evaluator_for` without naming a game:

* :class:`ExactEvaluator`: the game's exact solution (its ``solve`` part, where these options are
  solved: TOHM for two players on a 3x3 board). The figures are the exact win chances under perfect
  play.
* :class:`SearchEvaluator`: a Monte-Carlo tree search (the ``mcts`` agent's search, the game's tuned
  exploration constant and rollouts, ``iterations`` simulations per position, seeded): an action's
  value is the mean result its simulations brought the mover. Where something is hidden from the
  seat to move, the search runs over the worlds that seat cannot tell apart (``state.worlds(seat)``,
  the information-set search of ``strong``), so nothing the seat could not see enters its figures.

An expected result is the seat's share of the win as the rules' returns give it (a shared win:
its share). The search estimates the mover's result; with more than two players the others are
given an equal share of the rest (an approximation, documented in docs/analysis.md).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from ludoteca.agents.mcts import MCTSAgent, Node
from ludoteca.core.game import Action, Game, State


class Evaluator(Protocol):
    """Expected results of positions (see the module's documentation)."""

    kind: str

    def values(self, state: State) -> list[float]:
        """Each seat's expected result at a decision or a finished game."""

    def action_values(self, state: State) -> dict[Action, float]:
        """The mover's expected result after each action it may play (a decision)."""


class ExactEvaluator:
    """The game's exact solution."""

    kind = "exact"

    def __init__(self, solution: Any) -> None:
        self.solution = solution

    def values(self, state: State) -> list[float]:
        return list(self.solution.values(state))

    def action_values(self, state: State) -> dict[Action, float]:
        return dict(self.solution.action_values(state))


class _RootSearch(MCTSAgent):
    """The ``mcts`` search, keeping the root of its last tree (the mover's statistics per action)."""

    root: Node | None = None

    def _best(self, root: Node, legal: list[Action]) -> Action:  # type: ignore[override]
        self.root = root
        return MCTSAgent._best(root, legal)


class SearchEvaluator:
    """Monte-Carlo tree search estimates (``iterations`` simulations a position, seeded by the
    position's own text, so the same position always gets the same figures)."""

    kind = "search"

    def __init__(self, game: Game, iterations: int = 400, seed: int = 0) -> None:
        self.game = game
        self.iterations = iterations
        self.seed = seed
        self._memo: dict[str, dict[Action, float]] = {}

    def _seed(self, key: str) -> int:
        return int.from_bytes(hashlib.sha256(f"{self.seed}:{key}".encode()).digest()[:8], "big")

    def action_values(self, state: State) -> dict[Action, float]:
        seat = state.current_player()
        key = json.dumps(state.observation(seat) if state.game.has_hidden_information() else state.to_json(),
                         sort_keys=True, default=str)
        if key in self._memo:
            return dict(self._memo[key])
        legal = state.legal_actions()
        if len(legal) == 1:  # a forced move: as good as the position
            out = {legal[0]: self._forced(state, legal[0], seat)}
        else:
            search = _RootSearch(seed=self._seed(key), iterations=self.iterations, game=self.game.name)
            search.step(state)
            root = search.root
            assert root is not None
            out = {}
            for a in legal:
                child = root.children.get(a)
                if child is not None and child.n:
                    out[a] = child.w / child.n
        self._memo[key] = out
        return dict(out)

    def _forced(self, state: State, action: Action, seat: int) -> float:
        after = state.clone()
        after.apply_unchecked(action)
        if after.is_terminal():
            return after.returns()[seat]
        return self._value_of(after)[seat]

    def _value_of(self, state: State) -> list[float]:
        """Each seat's expected result at a decision, a chance node (a sample of its outcomes is
        not needed: the mean over all of them) or the end."""
        if state.is_terminal():
            return state.returns()
        if state.is_chance_node():
            total = [0.0] * state.num_players
            for outcome, p in state.chance_outcomes():
                after = state.clone()
                after.apply_unchecked(outcome)
                for i, v in enumerate(self._value_of(after)):
                    total[i] += p * v
            return total
        return self.values(state)

    def values(self, state: State) -> list[float]:
        if state.is_terminal():
            return state.returns()
        seat = state.current_player()
        v = max(self.action_values(state).values())
        return spread(v, seat, state.num_players)


def spread(value: float, seat: int, players: int) -> list[float]:
    """``seat`` expects ``value``; the other seats share the rest equally."""
    rest = (1.0 - value) / (players - 1) if players > 1 else 0.0
    return [value if p == seat else rest for p in range(players)]


def evaluator_for(game: Game, iterations: int = 400, seed: int = 0) -> Evaluator:
    """The exact solution of ``game`` where it has one for these options, else the search."""
    part = game.part("solve")
    if part is not None and not part.unsupported(game):
        return ExactEvaluator(part.solution(game))
    return SearchEvaluator(game, iterations=iterations, seed=seed)


__all__ = ["Evaluator", "ExactEvaluator", "SearchEvaluator", "evaluator_for", "spread"]
