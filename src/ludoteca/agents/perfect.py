"""``perfect``: the best move by the game's exact solution, where the game has one.

The agent asks the game for its ``solve`` part (``Game.part("solve")``, never the game's name): a
module whose ``unsupported(game)`` says whether these options are solved and whose
``solution(game)`` gives ``action_values(state)``, the mover's exact win chance after each legal
action (TOHM for two players on a 3x3 board: ``games/tohm/solve.py``). It plays the action of
highest value; among actions equal to within :data:`TIE` it draws one with its seeded generator,
so it is reproducible for a given seed and not predictable between seeds. A game or variant with no
solution is refused with a clear, translated error when the agent first meets it.
"""

from __future__ import annotations

from typing import Any

from ludoteca.agents.base import Agent, register
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import _

TIE = 1e-9
"""Actions whose values differ by less than this are equally good (the solution is exact to 1e-12)."""


def solver(game: Game) -> Any:
    """The solved ``game`` (its ``solve`` part's ``Solution``), or a translated ValueError saying why
    there is none."""
    part = game.part("solve")
    if part is None:
        raise ValueError(_("the perfect player needs a solved game, and {game} is not solved").format(
            game=game.title))
    reason = part.unsupported(game)
    if reason:
        raise ValueError(_("the perfect player cannot play this game: {reason}").format(reason=reason))
    return part.solution(game)


def unavailable(game: Game, build: bool = True) -> str:
    """Why ``perfect`` cannot play ``game`` ("" when it can), translated.

    ``build=False`` (a server): also refused where the solution is not at hand and would have to be
    computed first (the ``solve`` part's ``ready(game)`` is false: a board never solved here, about a
    minute of a core), so that an AI move never waits for a solver."""
    part = game.part("solve")
    if part is None:
        return _("the perfect player needs a solved game, and {game} is not solved").format(game=game.title)
    reason = str(part.unsupported(game) or "")
    if reason or build:
        return reason
    ready = getattr(part, "ready", None)
    if ready is not None and not ready(game):
        return _("this board is not solved on this server yet: the perfect player plays only a solved board")
    return ""


class PerfectAgent(Agent):
    """Plays the move of highest exact win chance (ties drawn at random, seeded)."""

    name = "perfect"
    wants_game = True

    def __init__(self, seed: int | None = None, game: str | None = None, **params: Any) -> None:
        super().__init__(seed, **params)
        self._game: Game | None = None
        self._solution: Any = None

    def step(self, state: State) -> Action:
        if state.game is not self._game:
            self._solution = solver(state.game)
            self._game = state.game
        values = self._solution.action_values(state)
        best = max(values.values())
        choices = [a for a, v in values.items() if v >= best - TIE]
        return choices[0] if len(choices) == 1 else choices[self.rng.randrange(len(choices))]


register("perfect", PerfectAgent)
