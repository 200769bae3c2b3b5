"""The analysis of finished games: was it skill or luck? (docs/analysis.md)

:func:`analyse` reads a game record and gives, for every decision, the expected result of the move
played and of the best move found, the loss and a label; for every chance outcome, its luck for each
seat; a summary per seat and the three moments that decided the game. The figures are exact where
the game is solved (its ``solve`` part), else a search's estimates from what the seat to move could
see. This package sits below the web, the terminal and the lab (they show its figures): it imports
agents, games and core.
"""

from ludoteca.analysis.evaluators import Evaluator, ExactEvaluator, SearchEvaluator, evaluator_for
from ludoteca.analysis.review import THRESHOLDS, Analysis, Step, analyse, label_for, luck

__all__ = ["THRESHOLDS", "Analysis", "Evaluator", "ExactEvaluator", "SearchEvaluator", "Step", "analyse",
           "evaluator_for", "label_for", "luck"]
