"""A softened heuristic player: ``soft:p=0.5``.

At each decision the agent plays the game's heuristic move with probability ``p`` and a
uniformly random legal move otherwise, so ``soft:p=0`` is ``random`` and ``soft:p=1`` is
``heuristic``. The weak levels of the AI ladder (:mod:`ludoteca.agents.levels`) are such
agents: ``beginner`` is ``soft:p=0.5``, ``easy`` ``soft:p=0.8``. Seeded and reproducible like every agent: the same
seed and positions give the same moves (the coin and the random move come from the agent's own
generator, the heuristic draws from it too).
"""

from __future__ import annotations

from typing import Any

from ludoteca.agents.base import Agent, register
from ludoteca.agents.heuristics import module
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import _


class SoftAgent(Agent):
    """The heuristic's move with probability ``p``, a random legal move otherwise (``soft``)."""

    name = "soft"
    wants_game = True

    def __init__(self, seed: int | None = None, game: str | None = None, p: Any = 0.5, **params: Any) -> None:
        super().__init__(seed, **params)
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(_("agent {agent}: p must be a number from 0 to 1, not {value}").format(
                agent=repr(self.name), value=repr(p)))
        self.p = float(p)
        if game is not None:
            module(game)  # unknown game or no heuristic -> ValueError now, not at the first step
        self.game_name = game

    @property
    def spec(self) -> str:
        return f"{self.name}:p={self.p:g}"

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if self.rng.random() < self.p:
            return module(state.game).choose(state, self.rng)
        return legal[self.rng.randrange(len(legal))]


register("soft", SoftAgent)
