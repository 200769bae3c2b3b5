"""What the analysis asks of a position: each seat's expected result, and the mover's per action.

Two evaluators, chosen by :func:`evaluator_for` without naming a game:

* :class:`ExactEvaluator`: the game's exact solution (its ``solve`` part, where these options are
  solved: TOHM for two players on a 3x3 board). The figures are the exact win chances under perfect
  play.
* :class:`SearchEvaluator`: a Monte-Carlo tree search (the ``mcts`` agent's search, the game's tuned
  exploration constant and rollouts, ``iterations`` simulations per position, seeded): an action's
  value is the mean result its simulations brought the mover. Where the game's compiled engine
  offers its search's root statistics (``search_values`` in the module ``game.compiled()`` names)
  and the seat to move sees everything that matters, the same search runs in C (tens of times
  faster); else the Python ``mcts``. Where something is hidden from the seat to move, the search runs
  over the worlds that seat cannot tell apart (``state.worlds(seat)``, the information-set search of
  ``strong``), and the seed comes from what the seat sees, so nothing the seat could not see enters
  its figures.

An expected result is the seat's share of the win as the rules' returns give it (a shared win:
its share). The search estimates the mover's result; with more than two players the others are
given an equal share of the rest (an approximation, documented in docs/analysis.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Callable
from typing import Any, Protocol

from ludoteca.agents import ismcts
from ludoteca.agents.mcts import FALLBACKS, MCTSAgent, Node
from ludoteca.core.chance import random_action
from ludoteca.core.compiled import ENGINE_VARIABLE, CompiledEngine
from ludoteca.core.game import Action, Game, State

MOST_ITERATIONS = 400
"""The search's default budget per position is the game's tuned ``mcts`` one, at most this."""
COMPILED_FACTOR = 5
"""Where the search is compiled (tens of times faster), its default budget is this many times the
Python one: the labels gain precision (docs/analysis.md, "Speed")."""
CHANCE_SHARE = 4
"""The search after a chance outcome spends a quarter of a decision's simulations (each outcome of
the node is searched, so luck costs as many searches as the node has outcomes)."""
FORWARD = 10_000
"""Most actions played forward from a forced move to the next real choice (then: an even share)."""
ENGINES = ("auto", "python")
"""The search's engines: ``auto`` (the compiled search where the game offers it, else Python),
``python`` (always the Python ``mcts``: the benchmark's "before" column, and a check)."""

RootValues = Callable[[State, int, float, int, int], dict[int, tuple[int, float]]]
"""A compiled engine's ``search_values(state, iterations, c, cap, seed)``: per root action, its
visits and the sum of the mover's returns."""


def compiled_values(game: Game) -> RootValues | None:
    """The compiled search's root statistics of ``game`` (its compiled module's ``search_values``)
    when the engine is built, plays these options and ``LUDOTECA_ENGINE`` does not ask for Python;
    else None."""
    if os.environ.get(ENGINE_VARIABLE, "").strip().lower() == "python":
        return None
    module = game.compiled()
    found = getattr(module, "search_values", None)
    engine = getattr(module, "ENGINE", None)
    if found is None or not isinstance(engine, CompiledEngine) or not engine.supports(game):
        return None
    return found  # type: ignore[no-any-return]


class Evaluator(Protocol):
    """Expected results of positions (see the module's documentation)."""

    kind: str

    def values(self, state: State, stream: int | None = None) -> list[float]:
        """Each seat's expected result at a decision or a finished game. ``stream``: a search draws its
        random numbers from this stream instead of from the position's own (common random numbers
        for positions compared with each other: the analysis's completions of a chance node)."""

    def action_values(self, state: State, stream: int | None = None) -> dict[Action, float]:
        """The mover's expected result after each action it may play (a decision)."""

    def for_chance(self) -> Evaluator:
        """The evaluator of the positions after chance outcomes (luck, values over the game): every
        outcome of a node is weighed, so a search may spend less on each."""


class ExactEvaluator:
    """The game's exact solution."""

    kind = "exact"

    def __init__(self, solution: Any) -> None:
        self.solution = solution

    def values(self, state: State, stream: int | None = None) -> list[float]:
        return list(self.solution.values(state))

    def action_values(self, state: State, stream: int | None = None) -> dict[Action, float]:
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

    def __init__(self, game: Game, iterations: int = 400, seed: int = 0, chance_share: int = CHANCE_SHARE,
                 engine: str = "auto") -> None:
        if engine not in ENGINES:
            raise ValueError(f"the search's engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        self.game = game
        self.iterations = iterations
        self.seed = seed
        self._memo: dict[str, dict[Action, float]] = {}
        self._chance: SearchEvaluator | None = None
        self.chance_share = chance_share
        self.engine = engine
        self._compiled = compiled_values(game) if engine == "auto" else None
        settings = MCTSAgent(game=game.name).settings(game) if self._compiled is not None else dict(FALLBACKS)
        self._c = float(settings["c"])
        self._cap = int(settings["cap"])

    def for_chance(self) -> Evaluator:
        """The same search with ``1 / chance_share`` of the simulations (at least 50), for the
        positions after each outcome of a chance node."""
        if self.chance_share <= 1:
            return self
        if self._chance is None:
            self._chance = SearchEvaluator(self.game, max(50, self.iterations // self.chance_share), self.seed, 1,
                                           self.engine)
        return self._chance

    def _seed(self, key: str) -> int:
        return int.from_bytes(hashlib.sha256(f"{self.seed}:{key}".encode()).digest()[:8], "big")

    def action_values(self, state: State, stream: int | None = None) -> dict[Action, float]:
        seat = state.current_player()
        seen = state.observation(seat) if state.game.has_hidden_information() else state.to_json()
        key = json.dumps(seen, sort_keys=True, default=str)
        if stream is not None:
            key = f"stream {stream}: {key}"
        if key in self._memo:
            return dict(self._memo[key])
        seed = self._seed(key if stream is None else f"stream {stream}")
        legal = state.legal_actions()
        if len(legal) == 1:  # a forced move: as good as the position it leads to
            out = {legal[0]: self._forced(state, legal[0], seat, seed, stream)}
        elif self._compiled is not None and ismcts.worlds(state, seat) is None:
            stats = self._compiled(state, self.iterations, self._c, self._cap, seed)
            out = {a: w / n for a, (n, w) in stats.items() if n}
        else:
            search = _RootSearch(seed=seed, iterations=self.iterations, game=self.game.name)
            search.step(state)
            root = search.root
            assert root is not None
            out = {a: root.children[a].w / root.children[a].n for a in legal
                   if a in root.children and root.children[a].n}
        self._memo[key] = out
        return dict(out)

    def _forced(self, state: State, action: Action, seat: int, seed: int, stream: int | None) -> float:
        """Play on from a forced move (chance outcomes drawn by a generator seeded with what the seat
        sees, or with ``stream``; forced moves played) to the next real choice, and search there."""
        walk = state.clone()
        walk.apply_unchecked(action)
        rng = random.Random(seed)
        for _step in range(FORWARD):
            if walk.is_terminal():
                return walk.returns()[seat]
            if walk.is_chance_node():
                walk.apply_unchecked(random_action(walk, rng))
            elif len(walk.legal_actions_view()) == 1:
                walk.apply_unchecked(walk.legal_actions_view()[0])
            else:
                return self.values(walk, stream)[seat]
        return 1.0 / state.num_players

    def values(self, state: State, stream: int | None = None) -> list[float]:
        if state.is_terminal():
            return state.returns()
        seat = state.current_player()
        return spread(max(self.action_values(state, stream).values()), seat, state.num_players)


def spread(value: float, seat: int, players: int) -> list[float]:
    """``seat`` expects ``value``; the other seats share the rest equally."""
    rest = (1.0 - value) / (players - 1) if players > 1 else 0.0
    return [value if p == seat else rest for p in range(players)]


def default_iterations(game: Game, engine: str = "auto") -> int:
    """The search's simulations per position by default: the game's tuned ``mcts`` budget, at most
    :data:`MOST_ITERATIONS`; :data:`COMPILED_FACTOR` times that where the search is compiled
    (:func:`compiled_values`; ``engine`` "python": never)."""
    tuned = game.agent_defaults.get("mcts", {}).get("iterations")
    base = min(MOST_ITERATIONS, tuned) if isinstance(tuned, int) and tuned > 0 else MOST_ITERATIONS
    return base * COMPILED_FACTOR if engine == "auto" and compiled_values(game) is not None else base


def evaluator_for(game: Game, iterations: int | None = None, seed: int = 0, engine: str = "auto") -> Evaluator:
    """The exact solution of ``game`` where it has one for these options, else the search
    (``iterations`` simulations per position, default :func:`default_iterations`; ``engine``:
    :data:`ENGINES`)."""
    part = game.part("solve")
    if part is not None and not part.unsupported(game):
        return ExactEvaluator(part.solution(game))
    return SearchEvaluator(game, iterations=iterations or default_iterations(game, engine), seed=seed, engine=engine)


__all__ = ["Evaluator", "ExactEvaluator", "SearchEvaluator", "default_iterations", "evaluator_for", "spread"]
