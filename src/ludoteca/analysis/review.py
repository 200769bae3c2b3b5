"""The move-by-move analysis of a game record: losses and labels of decisions, luck of chance.

For every decision of the record: the mover's expected result after the move played and after the
best move found, the loss (their difference, never below 0) and a label by :data:`THRESHOLDS`. For
every chance outcome: its luck for each seat, the expected result after it minus the expected
result before it (the mean over the outcomes, weighted by their probabilities), so the luck of a
chance node's outcomes sums to zero in expectation (exactly where the node is weighed outcome by
outcome; a deal of tile after tile is estimated by coupled completions, :func:`completions`, whose
noise cancels between consecutive estimates). The figures come from an
:mod:`~ludoteca.analysis.evaluators` evaluator (exact where the game is solved, else a search over
what the seat to move could see). The three moments that decided the game: the three steps that
moved the winner's expected result the most (a mistake of the loser, a blunder of the winner, a
lucky or unlucky roll), told in words in the current language.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ludoteca.analysis.evaluators import Evaluator, evaluator_for
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_, _
from ludoteca.core.records import Record

THRESHOLDS: tuple[tuple[float, str], ...] = ((0.15, "blunder"), (0.10, "mistake"), (0.05, "inaccuracy"))
"""Loss of win chance (0-1) from which a decision is labelled; lichess's thresholds in win chance."""
LABELS = {"blunder": N_("blunder"), "mistake": N_("mistake"), "inaccuracy": N_("inaccuracy")}
WEIGHED_OUTCOMES = 12
"""A chance node of more outcomes (a draw from a bag of tiles) is never weighed outcome by outcome
(see :func:`weighable`)."""
CHANCE_DEPTH = 2
"""Chance nodes in a row weighed outcome by outcome (two dice); deeper chains are estimated by
:func:`completions`."""
MOST_WEIGHED = 36
"""Most positions weighed for one chance node's expectation, over chance nodes in a row (two dice)."""
COMPLETIONS = 32
"""Coupled completions that estimate the expectation at a chance node too wide or too deep to weigh
outcome by outcome (:func:`completions`); a node met inside a weighed expectation with probability
``p`` gets ``p`` times as many (at least one)."""
LEFT_OVER = 0.25
"""A chance node is weighed outcome by outcome when at most this share of its probability is left to
completions below it (:func:`weighable`)."""

Memo = dict[tuple[int, str], list[float]]
"""Expected results at chance nodes already estimated, by evaluator and position (one analysis's)."""

Progress = Callable[[int, int], None]


@dataclass
class Step:
    """One action of the record, analysed."""

    step: int
    kind: str  # "decision" or "chance"
    seat: int  # the mover, or the seat whose turn the chance outcome falls in
    action: dict[str, Any]
    text: str
    values: list[float]  # each seat's expected result after this step
    played: float | None = None  # decision: the mover's expected result after the move played
    best: float | None = None  # decision: after the best move found
    best_action: dict[str, Any] | None = None
    best_text: str | None = None
    loss: float | None = None
    label: str | None = None
    luck: list[float] | None = None  # chance: per seat


@dataclass
class Analysis:
    """A game, analysed: every step, a summary per seat, the decisive moments."""

    game: str
    evaluator: str
    steps: list[Step] = field(default_factory=list)
    summary: list[dict[str, Any]] = field(default_factory=list)
    moments: list[str] = field(default_factory=list)
    returns: list[float] | None = None
    iterations: int | None = None  # the search's simulations per position (None: exact)
    players: int = 0
    start: list[float] | None = None  # each seat's expected result before the first step

    def to_json(self) -> dict[str, Any]:
        return {"format": "ludoteca-analysis", "version": 1, "game": self.game, "evaluator": self.evaluator,
                "iterations": self.iterations, "returns": self.returns, "summary": self.summary,
                "moments": self.moments, "players": self.players, "start": self.start,
                "decisive": [s.step for s in decisive(self, self.players)] if self.players else [],
                "steps": [{k: v for k, v in asdict(s).items() if v is not None} for s in self.steps]}


def label_for(loss: float) -> str | None:
    """The label of a decision that lost ``loss`` of win chance (None under every threshold)."""
    for threshold, name in THRESHOLDS:
        if loss >= threshold - 1e-12:
            return name
    return None


def seat_name(seat: int) -> str:
    """A seat as a person reads it: "Player 1" for seat 0."""
    return _("Player {n}").format(n=seat + 1)


def _text(state: State, action: Action) -> str:
    board = state.game.part("board")
    words = getattr(board, "action_text", None)
    if words is not None:
        text = words(state, action, [seat_name(p) for p in range(state.num_players)])
        if text:
            return str(text)
    return state.action_to_string(action)


def decision(evaluator: Evaluator, state: State, action: Action) -> tuple[float, float, Action]:
    """(expected result of ``action``, of the best action, the best action) for the mover."""
    values = evaluator.action_values(state)
    best_action = max(values, key=lambda a: values[a])
    if action in values:
        played = values[action]
    else:  # an action the search never tried: what it leads to
        seat = state.current_player()
        after = state.clone()
        after.apply_unchecked(action)
        played = after.returns()[seat] if after.is_terminal() else expected(evaluator, after)[seat]
    return played, values[best_action], best_action


def _left_over(state: State, budget: int, levels: int) -> float:
    """The probability that a chance node's outcomes, weighed one by one down to ``levels`` chance
    nodes in a row and ``budget`` positions, leave a chance node that is not weighed."""
    outcomes = state.chance_outcomes()
    if levels <= 0 or len(outcomes) > min(WEIGHED_OUTCOMES, budget):
        return 1.0
    share = budget // len(outcomes)
    left = 0.0
    for outcome, p in outcomes:
        after = state.clone()
        after.apply_unchecked(outcome)
        if after.is_chance_node():
            left += p * _left_over(after, share, levels - 1)
    return left


def weighable(state: State) -> bool:
    """Whether the expectation at chance node ``state`` is taken outcome by outcome: at most
    :data:`WEIGHED_OUTCOMES` outcomes, and weighing them down to :data:`CHANCE_DEPTH` chance nodes in a
    row and :data:`MOST_WEIGHED` positions leaves at most :data:`LEFT_OVER` of the probability to
    estimate by completions (a die: yes; two dice: yes; a roll that may be rolled again: yes; a deal
    of tile after tile: no). A function of the position alone."""
    return _left_over(state, MOST_WEIGHED, CHANCE_DEPTH) <= LEFT_OVER


_MASK = (1 << 64) - 1


def _mix(x: int, word: int) -> int:
    """SplitMix64's finalizer of ``x`` combined with ``word``: 64 well-mixed bits."""
    x = ((x ^ (word & _MASK)) * 0xBF58476D1CE4E5B9 + 0x94D049BB133111EB) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def coupled_outcome(outcomes: Sequence[tuple[Action, float]], seed: int, chain: int, repeat: int) -> Action:
    """The outcome completion ``chain`` draws at a chance node of these ``outcomes``: the smallest
    ``-ln(u) / p`` over the outcomes, ``u`` a fixed function of (seed, chain, outcome, number of
    outcomes, ``repeat``: how many nodes of that many outcomes the chain met before). Each outcome is
    drawn with its probability (the exponential race, the Gumbel-max trick), and the same chain
    draws almost the same outcomes from a position and from the position one outcome later (a tile
    dealt): common random numbers, so the difference of two estimates carries little of their noise."""
    node = _mix(_mix(_mix(_mix(0x9E3779B97F4A7C15, seed), chain), len(outcomes)), repeat)
    best, best_key = outcomes[0][0], math.inf
    for outcome, p in outcomes:
        if p > 0:
            u = ((_mix(node, outcome) >> 11) + 0.5) / (1 << 53)
            key = -math.log(u) / p
            if key < best_key:
                best, best_key = outcome, key
    return best


def completed(state: State, seed: int, chain: int) -> State:
    """Where completion ``chain`` takes chance node ``state``: a copy whose chance nodes are played with
    :func:`coupled_outcome` up to the next decision (or the end)."""
    walk = state.clone()
    met: dict[int, int] = {}
    while walk.is_chance_node():
        outcomes = walk.chance_outcomes()
        repeat = met.get(len(outcomes), 0)
        met[len(outcomes)] = repeat + 1
        walk.apply_unchecked(coupled_outcome(outcomes, seed, chain, repeat))
    return walk


def completions(evaluator: Evaluator, state: State, count: int | None = None) -> list[float]:
    """Each seat's expected result at chance node ``state`` estimated by ``count`` (default
    :data:`COMPLETIONS`) completions: completion ``i`` plays the chance nodes from ``state`` to the
    next decision with :func:`coupled_outcome` (chain ``i``: :func:`completed`) and takes the
    evaluator's values there, its search drawing from stream ``i`` (common random numbers); their mean.
    Unbiased, reproducible, and coupled: the luck of an outcome (a difference of two such estimates)
    keeps little of their noise."""
    seed = int(getattr(evaluator, "seed", 0))
    count = COMPLETIONS if count is None else count
    total = [0.0] * state.num_players
    for chain in range(count):
        walk = completed(state, seed, chain)
        values = walk.returns() if walk.is_terminal() else evaluator.values(walk, chain)
        for i, v in enumerate(values):
            total[i] += v / count
    return total


def expected(evaluator: Evaluator, state: State, memo: Memo | None = None) -> list[float]:
    """Each seat's expected result at any position: a decision's values; at a chance node the mean
    over its outcomes weighted by their probabilities, outcome by outcome where :func:`weighable`
    (:func:`weighed`), else estimated by :data:`COMPLETIONS` :func:`completions`. ``memo`` keeps the
    figures of the chance nodes estimated by completions (one analysis's)."""
    if state.is_terminal():
        return state.returns()
    if not state.is_chance_node():
        return evaluator.values(state)
    if weighable(state):
        return weighed(evaluator, state)
    key = (id(evaluator), json.dumps(state.to_json(), sort_keys=True, default=str)) if memo is not None else None
    if key is not None and memo is not None and key in memo:
        return list(memo[key])
    total = completions(evaluator, state)
    if key is not None and memo is not None:
        memo[key] = list(total)
    return total


def weighed(evaluator: Evaluator, state: State) -> list[float]:
    """The expectation at a :func:`weighable` chance node: the mean of :func:`below` its outcomes,
    weighted by their probabilities."""
    outcomes = state.chance_outcomes()
    total = [0.0] * state.num_players
    for outcome, p in outcomes:
        for i, v in enumerate(below(evaluator, state, outcome, len(outcomes), p)):
            total[i] += p * v
    return total


def below(evaluator: Evaluator, state: State, outcome: Action, breadth: int, weight: float,
          depth: int = 1) -> list[float]:
    """Each seat's expected result after ``outcome`` inside the expectation of a weighed chance node
    (``breadth`` positions weighed above, reached with probability ``weight``, ``depth`` chance nodes
    in a row): a decision's values; a chance node weighed on, outcome by outcome, within
    :data:`CHANCE_DEPTH` and :data:`MOST_WEIGHED`; beyond, ``weight`` times :data:`COMPLETIONS`
    completions (at least one)."""
    after = state.clone()
    after.apply_unchecked(outcome)
    if after.is_terminal():
        return after.returns()
    if not after.is_chance_node():
        return evaluator.values(after)
    outcomes = after.chance_outcomes()
    if depth >= CHANCE_DEPTH or len(outcomes) > WEIGHED_OUTCOMES or breadth * len(outcomes) > MOST_WEIGHED:
        return completions(evaluator, after, max(1, round(COMPLETIONS * weight)))
    total = [0.0] * state.num_players
    for o, p in outcomes:
        for i, v in enumerate(below(evaluator, after, o, breadth * len(outcomes), weight * p, depth + 1)):
            total[i] += p * v
    return total


def luck(evaluator: Evaluator, state: State, outcome: Action,
         memo: Memo | None = None) -> tuple[list[float], list[float]]:
    """(luck per seat, values after) of chance ``outcome`` at ``state``: each seat's expected result
    after it minus the expected result before it (the mean over the node's outcomes), both with the
    evaluator of chance positions. At a :func:`weighable` node, before is :func:`weighed` and after
    is :func:`below` the outcome, so the luck of its outcomes sums to zero exactly; elsewhere both are
    :func:`expected` (completions), so the luck of chance events in a row adds up to the change of
    one estimate: their noise does not pile up, and the luck sums to zero in expectation."""
    evaluator = evaluator.for_chance()
    if weighable(state):
        outcomes = state.chance_outcomes()
        before = weighed(evaluator, state)
        p = next((q for o, q in outcomes if o == outcome), 0.0)
        got = below(evaluator, state, outcome, len(outcomes), p)
    else:
        before = expected(evaluator, state, memo)
        after = state.clone()
        after.apply_unchecked(outcome)
        got = expected(evaluator, after, memo)
    return [got[i] - before[i] for i in range(state.num_players)], got


def analyse(record: Record, evaluator: Evaluator | None = None, progress: Progress | None = None,
            iterations: int | None = None, seed: int = 0) -> Analysis:
    """Analyse every step of ``record`` (see the module's documentation)."""
    game = record.load_game()
    ev = evaluator or evaluator_for(game, iterations=iterations, seed=seed)
    out = Analysis(game=game.name, evaluator=ev.kind, iterations=getattr(ev, "iterations", None),
                   players=game.num_players)
    pairs = list(record.states())
    total = len(pairs) - 1
    first = pairs[0][0]
    memo: Memo = {}
    out.start = expected(ev.for_chance() if first.is_chance_node() else ev, first, memo)
    last_seat = 0
    for step, (state, data) in enumerate(pairs):
        if data is None:
            out.returns = state.returns() if state.is_terminal() else None
            break
        after = pairs[step + 1][0]
        action = state.action_from_json({k: v for k, v in data.items() if k != "elapsed"})
        if state.is_chance_node():
            result = luck(ev, state, action, memo)
            values = result[1]
            roller = after.current_player() if after.current_player() >= 0 else last_seat
            out.steps.append(Step(step, "chance", roller, state.action_to_json(action), _text(state, action),
                                  values, luck=result[0]))
        else:
            seat = state.current_player()
            last_seat = seat
            played, best, best_action = decision(ev, state, action)
            loss = max(0.0, best - played)
            out.steps.append(Step(step, "decision", seat, state.action_to_json(action), _text(state, action),
                                  _after(ev, after, memo), played=played, best=best,
                                  best_action=state.action_to_json(best_action),
                                  best_text=_text(state, best_action), loss=loss, label=label_for(loss)))
        if progress is not None:
            progress(step + 1, total)
    out.summary = summary(out.steps, game.num_players)
    out.moments = moments(out, game.num_players)
    return out


def _after(ev: Evaluator, after: State, memo: Memo | None = None) -> list[float]:
    """Each seat's expected result after a step: a decision with the full evaluator (the next step
    searches it anyway), a chance node with the chance one (as its luck will)."""
    return expected(ev.for_chance() if after.is_chance_node() else ev, after, memo)


def summary(steps: Sequence[Step], players: int) -> list[dict[str, Any]]:
    """Per seat: decisions, inaccuracies, mistakes, blunders, average loss, total luck."""
    rows = []
    for seat in range(players):
        mine = [s for s in steps if s.kind == "decision" and s.seat == seat]
        losses = [s.loss or 0.0 for s in mine]
        rows.append({
            "seat": seat, "moves": len(mine),
            "inaccuracies": sum(s.label == "inaccuracy" for s in mine),
            "mistakes": sum(s.label == "mistake" for s in mine),
            "blunders": sum(s.label == "blunder" for s in mine),
            "average_loss": sum(losses) / len(losses) if losses else 0.0,
            "luck": sum(s.luck[seat] for s in steps if s.kind == "chance" and s.luck is not None),
        })
    return rows


def winner_of(analysis: Analysis, players: int) -> int | None:
    """The seat of the best result at the end (the first of them when shared); None without steps."""
    if not analysis.steps:
        return None
    ret = analysis.returns or analysis.steps[-1].values
    return max(range(players), key=lambda p: ret[p])


def decisive(analysis: Analysis, players: int, count: int = 3) -> list[Step]:
    """The ``count`` steps that moved the winner's expected result the most (in order of play): the
    costly moves (their loss) and the rolls of largest luck for the winner."""
    winner = winner_of(analysis, players)
    if winner is None:
        return []
    swings: list[tuple[float, Step]] = []
    for s in analysis.steps:
        if s.kind == "chance" and s.luck is not None:
            swings.append((abs(s.luck[winner]), s))
        elif s.kind == "decision" and s.loss:
            swings.append((s.loss, s))
    swings.sort(key=lambda x: (-x[0], x[1].step))
    return sorted((s for _size, s in swings[:count]), key=lambda s: s.step)


def moments(analysis: Analysis, players: int, count: int = 3) -> list[str]:
    """The ``count`` steps that moved the winner's expected result the most, in words."""
    winner = winner_of(analysis, players)
    if winner is None:
        return []
    texts = []
    for s in decisive(analysis, players, count):
        who = seat_name(s.seat)
        if s.kind == "chance":
            assert s.luck is not None
            gain = s.luck[winner]
            texts.append(_("Step {step}: {what}. Luck for the winner ({winner}): {sign}{points} points of win "
                           "chance.").format(step=s.step + 1, what=s.text, winner=seat_name(winner),
                                             sign="+" if gain >= 0 else "-", points=_points(abs(gain))))
        else:
            label = _(LABELS[s.label]) if s.label else _("a small loss")
            texts.append(_("Step {step}: {who} played “{move}” ({label}: {points} points of win chance lost); "
                           "better was “{best}”.").format(step=s.step + 1, who=who, move=s.text, label=label,
                                                         points=_points(s.loss or 0.0), best=s.best_text))
    return texts


def _points(x: float) -> str:
    """A win chance as percentage points, one decimal."""
    return f"{100 * x:.1f}"
