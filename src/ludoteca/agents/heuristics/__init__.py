"""Per-game heuristic players, evaluation functions and rollout policies.

Each game keeps its heuristic in its own package, as the module ``heuristic`` next to the engine
(``ludoteca.games.<game>.heuristic``, found with :meth:`Game.part <ludoteca.core.game.Game.part>`;
no game is named here). Such a module defines

* ``choose(state, rng) -> action``: the heuristic player's move (fast: a static reading of the
  position, at most a shallow lookahead with an expectation over the die);
* ``value(state) -> list[float]``: estimated winning chances per seat (they sum to about 1),
  used by MCTS to score rollouts cut short;
* optionally ``rollout(state, rng) -> action``: a light policy for ``mcts:rollout=heuristic``;
* optionally ``candidates(state, k) -> list[action]``: the ``k`` most promising actions, best
  first (MCTS pruning).

The agent ``heuristic`` picks the module from the ``game`` it is made for, or from
``state.game`` at each step.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from ludoteca.agents.base import Agent, register
from ludoteca.core.game import Action, Game, State
from ludoteca.registry import game_class

GameRef = Game | type[Game] | str
"""A game, its class, or its name."""

_MODULES: dict[type[Game], ModuleType | None] = {}


def _class_of(game: GameRef) -> type[Game]:
    if isinstance(game, Game):
        return type(game)
    if isinstance(game, type):
        return game
    return game_class(game)  # ValueError for an unknown name


def find_module(game: GameRef) -> ModuleType | None:
    """The heuristic module of a game (``<the game's package>.heuristic``), or None."""
    cls = _class_of(game)
    if cls not in _MODULES:
        _MODULES[cls] = cls.part("heuristic")
    return _MODULES[cls]


def module(game: GameRef) -> ModuleType:
    """The heuristic module of a game; ValueError for a game without one."""
    mod = find_module(game)
    if mod is None:
        raise ValueError(f"the game {_class_of(game).name!r} has no heuristic (no module 'heuristic' in its package)")
    return mod


def _even(state: State) -> list[float]:
    n = state.num_players
    return [1.0 / n] * n


def value_function(game: GameRef) -> Callable[[State], list[float]]:
    """Winning chances per seat for a position (MCTS leaf evaluation); even chances when the
    game has no heuristic."""
    return getattr(find_module(game), "value", _even)


def rollout_policy(game: GameRef) -> Callable[[State, Any], Action] | None:
    """A light policy for rollouts, or None (uniformly random)."""
    return getattr(find_module(game), "rollout", None)


def candidates_function(game: GameRef) -> Callable[[State, int], list[Action]] | None:
    """``candidates(state, k)``: the ``k`` most promising actions, or None (all are searched)."""
    return getattr(find_module(game), "candidates", None)


class HeuristicAgent(Agent):
    """The per-game heuristic player (``heuristic``)."""

    name = "heuristic"
    wants_game = True

    def __init__(self, seed: int | None = None, game: str | None = None, **params: Any) -> None:
        super().__init__(seed, **params)
        if game is not None:
            module(game)  # unknown game or no heuristic -> ValueError now, not at the first step
        self.game_name = game

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return module(state.game).choose(state, self.rng)


register("heuristic", HeuristicAgent)
