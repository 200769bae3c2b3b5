"""What the analysis asks of a position: each seat's expected result, and the mover's per action.

Two evaluators, chosen by :func:`evaluator_for` without naming a game:

* :class:`ExactEvaluator`: the game's exact solution (its ``solve`` part, where these options are
  solved: TOHM for two players on a 3x3 board). The figures are the exact win chances under perfect
  play.
* :class:`SearchEvaluator`: a Monte-Carlo tree search (the ``mcts`` agent's search, the game's tuned
  exploration constant and rollouts, ``iterations`` simulations per position, seeded): an action's
  value is the mean result its simulations brought the mover. Where something is hidden from the
  seat to move, the search runs over the worlds that seat cannot tell apart (``state.worlds(seat)``,
  the information-set search of ``strong``), and the seed comes from what the seat sees, so nothing
  the seat could not see enters its figures.

An expected result is the seat's share of the win as the rules' returns give it (a shared win:
its share). The search estimates the mover's result; with more than two players the others are
given an equal share of the rest (an approximation, documented in docs/analysis.md).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Protocol

from ludoteca.agents.mcts import MCTSAgent, Node
from ludoteca.core.chance import random_action
from ludoteca.core.game import Action, Game, State

MOST_ITERATIONS = 400
"""The search's default budget per position is the game's tuned ``mcts`` one, at most this."""
CHANCE_SHARE = 4
"""The search after a chance outcome spends a quarter of a decision's simulations (each outcome of
the node is searched, so luck costs as many searches as the node has outcomes)."""
FORWARD = 10_000
"""Most actions played forward from a forced move to the next real choice (then: an even share)."""


class Evaluator(Protocol):
    """Expected results of positions (see the module's documentation)."""

    kind: str

    def values(self, state: State) -> list[float]:
        """Each seat's expected result at a decision or a finished game."""

    def action_values(self, state: State) -> dict[Action, float]:
        """The mover's expected result after each action it may play (a decision)."""

    def for_chance(self) -> Evaluator:
        """The evaluator of the positions after chance outcomes (luck, values over the game): every
        outcome of a node is weighed, so a search may spend less on each."""


class ExactEvaluator:
    """The game's exact solution."""

    kind = "exact"

    def __init__(self, solution: Any) -> None:
        self.solution = solution

    def values(self, state: State) -> list[float]:
        return list(self.solution.values(state))

    def action_values(self, state: State) -> dict[Action, float]:
        return dict(self.solution.action_values(state))

    def for_chance(self) -> Evaluator:
        return self


class _RootSearch(MCTSAgent):
    """The ``mcts`` search, keeping the root of its last tree (the mover's statistics per action)."""

    root: Node | None = None

    def _best(self, root: Node, legal: list[Action]) -> Action:  # type: ignore[override]
        self.root = root
        return MCTSAgent._best(root, legal)


class SearchEvaluator:
    """Monte-Carlo tree search estimates (``iterations`` simulations a position, seeded by what the
    seat to move sees, so the same position always gets the same figures)."""

    kind = "search"

    def __init__(self, game: Game, iterations: int = 400, seed: int = 0, chance_share: int = CHANCE_SHARE) -> None:
        self.game = game
        self.iterations = iterations
        self.seed = seed
        self._memo: dict[str, dict[Action, float]] = {}
        self._chance: SearchEvaluator | None = None
        self.chance_share = chance_share

    def for_chance(self) -> Evaluator:
        """The same search with ``1 / chance_share`` of the simulations (at least 50), for the
        positions after each outcome of a chance node."""
        if self.chance_share <= 1:
            return self
        if self._chance is None:
            self._chance = SearchEvaluator(self.game, max(50, self.iterations // self.chance_share), self.seed, 1)
        return self._chance

    def _seed(self, key: str) -> int:
        return int.from_bytes(hashlib.sha256(f"{self.seed}:{key}".encode()).digest()[:8], "big")

    def action_values(self, state: State) -> dict[Action, float]:
        seat = state.current_player()
        seen = state.observation(seat) if state.game.has_hidden_information() else state.to_json()
        key = json.dumps(seen, sort_keys=True, default=str)
        if key in self._memo:
            return dict(self._memo[key])
        legal = state.legal_actions()
        if len(legal) == 1:  # a forced move: as good as the position it leads to
            out = {legal[0]: self._forced(state, legal[0], seat, key)}
        else:
            search = _RootSearch(seed=self._seed(key), iterations=self.iterations, game=self.game.name)
            search.step(state)
            root = search.root
            assert root is not None
            out = {a: root.children[a].w / root.children[a].n for a in legal
                   if a in root.children and root.children[a].n}
        self._memo[key] = out
        return dict(out)

    def _forced(self, state: State, action: Action, seat: int, key: str) -> float:
        """Play on from a forced move (chance outcomes drawn by a generator seeded with what the seat
        sees, forced moves played) to the next real choice, and search there."""
        walk = state.clone()
        walk.apply_unchecked(action)
        rng = random.Random(self._seed(key))
        for _step in range(FORWARD):
            if walk.is_terminal():
                return walk.returns()[seat]
            if walk.is_chance_node():
                walk.apply_unchecked(random_action(walk, rng))
            elif len(walk.legal_actions_view()) == 1:
                walk.apply_unchecked(walk.legal_actions_view()[0])
            else:
                return self.values(walk)[seat]
        return 1.0 / state.num_players

    def values(self, state: State) -> list[float]:
        if state.is_terminal():
            return state.returns()
        seat = state.current_player()
        return spread(max(self.action_values(state).values()), seat, state.num_players)


def spread(value: float, seat: int, players: int) -> list[float]:
    """``seat`` expects ``value``; the other seats share the rest equally."""
    rest = (1.0 - value) / (players - 1) if players > 1 else 0.0
    return [value if p == seat else rest for p in range(players)]


def default_iterations(game: Game) -> int:
    """The search's simulations per position by default: the game's tuned ``mcts`` budget, at most
    :data:`MOST_ITERATIONS`."""
    tuned = game.agent_defaults.get("mcts", {}).get("iterations")
    return min(MOST_ITERATIONS, tuned) if isinstance(tuned, int) and tuned > 0 else MOST_ITERATIONS


def evaluator_for(game: Game, iterations: int | None = None, seed: int = 0) -> Evaluator:
    """The exact solution of ``game`` where it has one for these options, else the search
    (``iterations`` simulations per position; default :func:`default_iterations`)."""
    part = game.part("solve")
    if part is not None and not part.unsupported(game):
        return ExactEvaluator(part.solution(game))
    return SearchEvaluator(game, iterations=iterations or default_iterations(game), seed=seed)


__all__ = ["Evaluator", "ExactEvaluator", "SearchEvaluator", "default_iterations", "evaluator_for", "spread"]
