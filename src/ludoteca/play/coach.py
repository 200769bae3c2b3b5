"""``ludoteca play … --coach``: after each of a human's moves, its loss against the best move.

The coach asks the analysis (ludoteca.analysis, docs/analysis.md) what the move played and the best
move were worth to the mover — exact where the game is solved, else a search over what that seat
could see — and says it in the player's language: the win chance kept, the points lost, the label
(inaccuracy, mistake, blunder) and the better move in the game's words. A move that was the only
legal one is not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ludoteca.analysis.evaluators import Evaluator, evaluator_for
from ludoteca.analysis.review import LABELS, decision, label_for
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import _

QUIET = 0.005
"""A loss under half a point of win chance is the best move (the search's noise)."""


@dataclass(frozen=True)
class Verdict:
    """A move judged: the mover's expected result after it and after the best move found."""

    played: float
    best: float
    best_action: Action
    loss: float
    label: str | None


class Coach:
    """Judges moves with the analysis's evaluator of ``game`` (``iterations`` simulations a position
    where the game is not solved; default the analysis's)."""

    def __init__(self, game: Game, iterations: int | None = None, seed: int = 0,
                 evaluator: Evaluator | None = None) -> None:
        self.evaluator = evaluator or evaluator_for(game, iterations=iterations, seed=seed)

    def judge(self, state: State, action: Action) -> Verdict | None:
        """The verdict on ``action`` at ``state`` (a decision, before it is played); None for a forced
        move."""
        if state.is_terminal() or state.is_chance_node() or len(state.legal_actions()) < 2:
            return None
        played, best, best_action = decision(self.evaluator, state, action)
        loss = max(0.0, best - played)
        return Verdict(played, best, best_action, loss, label_for(loss))

    @staticmethod
    def says(verdict: Verdict, words: Callable[[Action], str]) -> str:
        """The verdict in the current language; ``words(action)``: a move as the player reads it."""
        chance = _("win chance {played}% (best move: {best}%)").format(
            played=round(100 * verdict.played), best=round(100 * verdict.best))
        if verdict.loss < QUIET:
            return _("Coach: the best move — {chance}.").format(chance=chance)
        lost = f"{100 * verdict.loss:.1f}"
        if verdict.label is None:
            return _("Coach: {points} points of win chance lost — {chance}; better: {best}.").format(
                points=lost, chance=chance, best=words(verdict.best_action))
        return _("Coach: {label}, {points} points of win chance lost — {chance}; better: {best}.").format(
            label=_(LABELS[verdict.label]), points=lost, chance=chance, best=words(verdict.best_action))


__all__ = ["QUIET", "Coach", "Verdict"]
