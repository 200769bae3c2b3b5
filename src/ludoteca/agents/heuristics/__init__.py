"""Per-game heuristic players, evaluation functions and rollout policies.

One module per game (``exactly``, ``tohm``, ``tri``, ``exagon``), each defining

* ``choose(state, rng) -> action``: the heuristic player's move (fast: a static reading of the
  position, at most a shallow lookahead with an expectation over the die);
* ``value(state) -> list[float]``: estimated winning chances per seat (they sum to about 1),
  used by MCTS to score rollouts cut short;
* optionally ``rollout(state, rng) -> action``: a light policy for ``mcts:rollout=heuristic``.

The agent ``heuristic`` picks the module from the ``game`` it is made for, or from
``state.game.name`` at each step.
"""

from __future__ import annotations

import importlib
import math
import random
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from ludoteca.agents.base import Agent, register
from ludoteca.core.game import Action, State

GAMES = ("exactly", "tohm", "tri", "exagon")
_MODULES: dict[str, ModuleType] = {}


def best_of(actions: Iterable[Action], score: Callable[[Action], float], rng: random.Random) -> Action:
    """The action of highest ``score`` (within 1e-9); ties broken uniformly with ``rng``."""
    best: list[Action] = []
    best_v = -math.inf
    for a in actions:
        v = score(a)
        if v > best_v + 1e-9:
            best_v, best = v, [a]
        elif v > best_v - 1e-9:
            best.append(a)
    return best[rng.randrange(len(best))] if len(best) > 1 else best[0]


def module(game_name: str) -> ModuleType:
    """The heuristics module of a game; ValueError for a game without one."""
    mod = _MODULES.get(game_name)
    if mod is None:
        if game_name not in GAMES:
            raise ValueError(f"no heuristic for the game {game_name!r}; the games are: {', '.join(GAMES)}")
        mod = _MODULES[game_name] = importlib.import_module(f"ludoteca.agents.heuristics.{game_name}")
    return mod


def _even(state: State) -> list[float]:
    n = state.num_players
    return [1.0 / n] * n


def value_function(game_name: str) -> Callable[[State], list[float]]:
    """Winning chances per seat for a position (MCTS leaf evaluation)."""
    try:
        return module(game_name).value
    except (ValueError, AttributeError):
        return _even


def rollout_policy(game_name: str) -> Callable[[State, Any], Action] | None:
    """A light policy for rollouts, or None (uniformly random)."""
    try:
        return getattr(module(game_name), "rollout", None)
    except ValueError:
        return None


def candidates_function(game_name: str) -> Callable[[State, int], list[Action]] | None:
    """``candidates(state, k)``: the ``k`` most promising actions, or None (all are searched)."""
    try:
        return getattr(module(game_name), "candidates", None)
    except ValueError:
        return None


class HeuristicAgent(Agent):
    """The per-game heuristic player (``heuristic``)."""

    name = "heuristic"
    wants_game = True

    def __init__(self, seed: int | None = None, game: str | None = None, **params: Any) -> None:
        super().__init__(seed, **params)
        if game is not None:
            module(game)  # unknown game -> ValueError now, not at the first step
        self.game_name = game

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return module(state.game.name).choose(state, self.rng)


register("heuristic", HeuristicAgent)
