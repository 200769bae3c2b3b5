"""The luck share of a game under the agents played (``ludoteca lab … --luck N``; docs/lab.md).

For each variant, ``N`` of the run's games are played again (game ``i`` with the run's own seeds: the
same dice, the same agents, so the same game as the run's row ``i``) and at every chance event the
analysis (ludoteca.analysis, docs/analysis.md) measures its **luck** for each seat: the seat's expected
result after the outcome minus its expectation over all the node's outcomes. A seat's summed luck
``L`` over a game is the part of its result the chance events handed it; its result ``Y`` is the
rules' return (1 a win, a share of a shared win, 0 a loss).

**Luck share** = the share of the variance of the result explained by the summed luck: the squared
correlation of ``Y`` and ``L`` over every (game, seat) of the variant (the R² of the least-squares
line of ``Y`` on ``L``). 0: the dice never tell who wins; 1: they alone do. The rest is the players'
decisions and the estimates' noise (where the game is not solved the expected results are a search's
estimates, :func:`budget` simulations a position; a deal of tile after tile is estimated by the
analysis's coupled completions, whose luck over a run of chance events adds up to the change of one
estimate, so the noise does not pile up with the number of events). The interval: a percentile bootstrap over the
games (:data:`RESAMPLES` resamples, seeded). The idea of luck as the change of expected result at a
chance event is GNU Backgammon's (its "luck rate"); measuring how much of the outcome chance explains
follows Duersch, Lambrecht and Oechssler, "Measuring skill and chance in games" (European Economic
Review 127, 2020).

Where a variant is solved (its game's ``solve`` part answers for these options), the first
player's exact expected result under perfect play is given too (:func:`exact_first`).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from ludoteca.analysis.evaluators import COMPILED_FACTOR, ExactEvaluator, compiled_values, evaluator_for
from ludoteca.analysis.review import Memo, expected, luck
from ludoteca.core.chance import sample_outcome
from ludoteca.core.constants import TERMINAL
from ludoteca.core.game import Game
from ludoteca.lab.runner import RunSpec, _game_and_probe, setup_game

ITERATIONS = 100
"""Simulations a position of the search that values the positions after each chance outcome (a
quarter of it, at least 50, as in the analysis), where a game is not solved; ``COMPILED_FACTOR``
times that where the game's search is compiled (:func:`budget`)."""
RESAMPLES = 1000
LEVEL = 0.95

Progress = Callable[[int, int], None]


def budget(game: Game, iterations: int | None = None) -> int:
    """The search's simulations a position for ``game``: ``iterations``, else :data:`ITERATIONS`
    (:data:`~ludoteca.analysis.evaluators.COMPILED_FACTOR` times it where the search is compiled)."""
    if iterations is not None:
        return iterations
    return ITERATIONS * COMPILED_FACTOR if compiled_values(game) is not None else ITERATIONS


def game_luck(spec: RunSpec, v: int, i: int, iterations: int | None = None) -> dict[str, Any]:
    """Game ``i`` of variant ``v`` played again with the run's seeds: each seat's result and summed luck."""
    game, _probe = _game_and_probe(spec, v)
    n = spec.players_of(v)
    _gseed, rng, _specs, agents = setup_game(spec, i, n)
    ev = evaluator_for(game, iterations=budget(game, iterations), seed=i)
    state = game.new_initial_state()
    total = [0.0] * n
    events = 0
    memo: Memo = {}
    while True:
        player = state.current_player()
        if player == TERMINAL:
            break
        if player < 0:
            outcome = sample_outcome(state.chance_outcomes(), rng)
            if len(state.chance_outcomes()) > 1:
                gained, _after = luck(ev, state, outcome, memo)
                total = [t + g for t, g in zip(total, gained, strict=True)]
                events += 1
            state.apply_unchecked(outcome)
        else:
            state.apply_unchecked(agents[player].step(state))
    return {"returns": [float(r) for r in state.returns()], "luck": total, "events": events}


def share(games: Sequence[dict[str, Any]]) -> float | None:
    """The squared correlation of result and summed luck over every (game, seat); None when either
    never varies."""
    ys = [y for g in games for y in g["returns"]]
    ls = [x for g in games for x in g["luck"]]
    if len(ys) < 3 or statistics.pvariance(ys) == 0 or statistics.pvariance(ls) == 0:
        return None
    return float(statistics.correlation(ys, ls) ** 2)


def bootstrap(games: Sequence[dict[str, Any]], seed: int = 0, resamples: int = RESAMPLES,
              level: float = LEVEL) -> tuple[float, float] | None:
    """The percentile interval of :func:`share` over resampled games."""
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        value = share([games[rng.randrange(len(games))] for _ in games])
        if value is not None:
            values.append(value)
    if len(values) < resamples // 2:
        return None
    values.sort()
    low = values[int((1 - level) / 2 * len(values))]
    high = values[min(len(values) - 1, int((1 + level) / 2 * len(values)))]
    return (low, high)


def exact_first(game: Game) -> float | None:
    """The first seat's exact expected result under perfect play, where ``game`` is solved."""
    part = game.part("solve")
    if part is None or part.unsupported(game):
        return None
    return float(expected(ExactEvaluator(part.solution(game)), game.new_initial_state())[0])


def luck_report(spec: RunSpec, games: int, iterations: int | None = None,
                progress: Progress | None = None) -> dict[str, Any]:
    """``games`` games of every variant: the luck share with its interval (the report's section)."""
    variants = []
    done, total = 0, games * len(spec.variants)
    for v, variant in enumerate(spec.variants):
        played = []
        for i in range(games):
            played.append(game_luck(spec, v, i, iterations))
            done += 1
            if progress is not None:
                progress(done, total)
        game, _probe = _game_and_probe(spec, v)
        value = share(played)
        first_rate = statistics.fmean(g["returns"][0] for g in played) if played else None
        variants.append({
            "key": variant.key, "games": len(played), "share": value,
            "ci": bootstrap(played, seed=spec.seed + v) if value is not None else None,
            "mean_abs_luck": statistics.fmean(abs(x) for g in played for x in g["luck"]) if played else None,
            "events": statistics.fmean(g["events"] for g in played) if played else None,
            "exact_first": exact_first(game), "sampled_first": first_rate,
            "evaluator": "exact" if exact_first(game) is not None else "search",
        })
    first, _probe = _game_and_probe(spec, 0)
    return {"games": games, "iterations": budget(first, iterations), "agents": list(spec.lineup),
            "variants": variants}


def measure(spec: RunSpec, games: int, progress: bool = True, console: Any = None) -> dict[str, Any]:
    """:func:`luck_report` with a progress bar on ``console`` (the lab command's)."""
    from rich.progress import Progress

    from ludoteca.core.i18n import _

    with Progress(console=console, disable=not progress, transient=True) as bar:
        task = bar.add_task(_("luck of the chance events"), total=games * len(spec.variants))
        return luck_report(spec, games, progress=lambda done, total: bar.update(task, completed=done, total=total))


def section(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The report's section (report_html.py): heading, definition, one row per variant; None when the
    run measured no luck."""
    from ludoteca.core.i18n import _
    from ludoteca.lab.report import ci_num, dec, pct

    data = summary.get("luck")
    if not data:
        return None
    body = []
    for v in data["variants"]:
        exact = pct(v["exact_first"], 2) if v.get("exact_first") is not None else "-"
        body.append([v["key"], str(v["games"]), "-" if v["share"] is None else dec(v["share"], 2),
                     ci_num(v["ci"]), "-" if v["mean_abs_luck"] is None else dec(100 * v["mean_abs_luck"], 1),
                     pct(v["sampled_first"]), exact])
    head = [_("variant"), _("games"), _("luck share"), _("95% interval"), _("mean |luck| (points)"),
            _("first seat's result, sampled"), _("under perfect play (exact)")]
    note = _("Luck share: the share of the variance of a seat's result explained by the luck the chance events "
             "gave it over the game (the squared correlation of result and summed luck over every game and seat; "
             "0: chance never decides, 1: it alone decides). The luck of an outcome is the seat's expected result "
             "after it minus the expectation over the node's outcomes, as in GNU Backgammon's luck rate; measuring "
             "how much chance explains follows Duersch, Lambrecht and Oechssler (2020). {games} games of each "
             "variant played again with the run's seeds; expected results exact where the game is solved, else a "
             "search of {iterations} simulations a position. Interval: bootstrap over the games.").format(
        games=data["games"], iterations=data["iterations"])
    return {"heading": _("Skill or luck: the luck share"), "note": note,
            "table": {"head": head, "body": body, "cell_class": {}}}


def print_luck(summary: dict[str, Any], console: Any) -> None:
    """The section as lines on the terminal."""
    from ludoteca.core.i18n import _
    from ludoteca.lab.report import ci_num, dec, pct

    data = summary.get("luck")
    if not data:
        return
    for v in data["variants"]:
        line = _("Luck share ({key}, {games} games): {share} {ci}").format(
            key=v["key"], games=v["games"], share="-" if v["share"] is None else dec(v["share"], 2), ci=ci_num(v["ci"]))
        if v.get("exact_first") is not None:
            line += "; " + _("first seat's result under perfect play (exact): {exact}, sampled here: {sampled}").format(
                exact=pct(v["exact_first"], 2), sampled=pct(v["sampled_first"]))
        console.print(line, markup=False)


__all__ = ["ITERATIONS", "RESAMPLES", "bootstrap", "budget", "exact_first", "game_luck", "luck_report", "measure",
           "print_luck", "section", "share"]
