"""The analysis of finished games and the TOHM solver, measured on one core (docs/analysis.md).

    python benchmarks/analysis.py [--games exactly,tohm,tri,exagon] [--iterations N] [--repeat 3]
                                  [--engine auto|python|both] [--luck-noise GAME] [--solve]
                                  [--perfect-games 1000] [--calibration 300 [--calibration-agent strong]
                                  [--plot FILE]] [--latency [--rounds 6] [--seconds 15] [--tables 50] [--busy 40]]

* **analysis**: CPU seconds (``time.process_time``) to analyse ``--repeat`` typical two-player games per
  game (games between two ``strong`` players, seeded), with the evaluator the analysis picks (exact for
  TOHM on its 2-player 3x3 board, else the search at ``--iterations`` simulations a position, by
  default the analysis's: the game's tuned ``mcts`` budget, at most 400, five times that where the
  search is compiled); ``--engine both`` times the Python search (the path without a compiler) and the
  compiled one on the same games, side by side. Goals: exactly and TOHM <= 10 s, EXAGON <= 30 s, TRI <= 60 s.
* **luck noise** (``--luck-noise GAME``): how much of the luck figures is the estimates' noise (every
  chance event of a typical game with ``--noise-seeds`` evaluator seeds; single-outcome events; the
  mean luck over all the outcomes of ``--noise-nodes`` nodes), see :func:`luck_noise`.
* **solver** (``--solve``): TOHM two-player 3x3 solved from scratch in a child process: CPU seconds,
  sweeps and peak memory (``ru_maxrss`` of the child).
* **turn limit**: ``--perfect-games`` games between two ``perfect`` players (seeded dice): their
  lengths in player turns, and how many reach TOHM's default turn limit (1000).
* **calibration** (``--calibration N``): the search's estimates (what the analysis uses where a game
  is not solved) against the exact values on N TOHM 2p decisions: mean absolute error, the exact loss
  of the search's choice, and a calibration table; ``--calibration-agent strong``: ``strong``'s estimates
  (its TOHM settings, run by the Python engine: the compiled search returns only its move); ``--plot
  FILE`` draws it (docs/strength-calibration.png).
* **live play beside the analyses** (``--latency [--rounds 6] [--seconds 15] [--tables 50] [--busy 40]``):
  ``benchmarks/analysis_latency.py``: one server whose two analysis processes (SCHED_IDLE, nice 19) have
  work for the whole run, ``benchmarks/server_load.py``'s clients playing TOHM tables, and rounds
  alternating between the analysis running and stopped (SIGSTOP); the action-to-broadcast p50/p99 of
  every round, the load average, and per condition the medians and the pooled p99.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from ludoteca.agents import make_agent
from ludoteca.core.records import Record
from ludoteca.registry import load_game
from text_tables import table

OPTIONS = {"tohm": {"players": 2}, "exactly": {"players": 2}, "tri": {"players": 2}, "exagon": {"players": 2}}
GOALS = {"exactly": 10.0, "tohm": 10.0, "exagon": 30.0, "tri": 60.0}


def typical_game(name: str, seed: int) -> Record:
    """A game between two ``strong`` players (chance drawn by a seeded generator)."""
    game = load_game(name, **OPTIONS.get(name, {}))
    rng = random.Random(seed)
    agents = [make_agent("strong", seed=seed + p, game=name) for p in range(game.num_players)]
    state = game.new_initial_state()
    record = Record.start(game)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            x = rng.random()
            action = outcomes[-1][0]
            for o, p in outcomes:
                x -= p
                if x < 0:
                    action = o
                    break
        else:
            action = agents[state.current_player()].step(state)
        record.add(state, action)
        state.apply_action(action)
    return record


def analysis_seconds(name: str, iterations: int | None, seed: int, engine: str = "auto") -> dict[str, object]:
    """CPU seconds to analyse the typical game of ``seed`` (``engine``: the search's, see
    ``ludoteca.analysis.evaluators.ENGINES``)."""
    from ludoteca.analysis import analyse, evaluator_for

    record = typical_game(name, seed)
    game = record.load_game()
    start = time.process_time()
    result = analyse(record, evaluator_for(game, iterations=iterations, engine=engine))
    cpu = time.process_time() - start
    return {"game": name, "seed": seed, "engine": engine, "actions": len(record.actions),
            "evaluator": result.evaluator, "iterations": result.iterations, "cpu_seconds": round(cpu, 2),
            "goal": GOALS.get(name)}


def speed_table(names: list[str], iterations: int | None, seed: int, games: int, engines: list[str]) -> None:
    """Every game's analysis timed on ``games`` typical games per engine, printed as JSON lines, then
    side by side: the median and range of the CPU seconds per engine, and the goal."""
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for name in names:
        for g in range(games):
            for engine in engines:
                found = analysis_seconds(name, iterations, seed + g, engine)
                rows.setdefault((name, engine), []).append(found)
                print(json.dumps({"analysis": found}), flush=True)
    lines = []
    for name in names:
        cells = []
        for engine in engines:
            cpu = sorted(float(r["cpu_seconds"]) for r in rows[(name, engine)])
            sims = rows[(name, engine)][0]["iterations"]
            cells.append(f"{statistics.median(cpu):.2f} [{cpu[0]:.2f}-{cpu[-1]:.2f}]/{sims or 'exact'}")
        lines.append([name, *cells, GOALS.get(name, 0)])
    print(table(["game", *(f"{e} (s/sims)" for e in engines), "goal"], lines, [10, *[24] * len(engines), 8]))


def luck_noise(name: str, seed: int, seeds: int, nodes: int) -> dict[str, object]:
    """How much of the luck figures is the estimates' noise, on the chance events of the typical game
    of ``seed``: every event's luck for seat 0 computed with ``seeds`` evaluator seeds (other search
    seeds, other completions), its standard deviation across them (the noise) beside the mean |luck|;
    the luck of the events with a single outcome; the summed luck of the game per seed; and, at
    ``nodes`` chance nodes spread over the game, the mean luck over all their outcomes (0 in
    expectation)."""
    from ludoteca.analysis import evaluator_for
    from ludoteca.analysis.review import Memo, luck

    record = typical_game(name, seed)
    game = record.load_game()
    events = [(state, state.action_from_json(data)) for state, data in record.states()
              if data is not None and state.is_chance_node()]
    start = time.process_time()
    per_seed: list[list[float]] = []
    single: list[float] = []
    for k in range(seeds):
        ev = evaluator_for(game, seed=k)
        memo: Memo = {}
        lucks = []
        for state, outcome in events:
            gained = luck(ev, state, outcome, memo)[0][0]
            if len(state.chance_outcomes()) > 1:
                lucks.append(gained)
            else:
                single.append(gained)
        per_seed.append(lucks)
    cpu = time.process_time() - start
    spread = [statistics.stdev(per_seed[k][e] for k in range(seeds)) for e in range(len(per_seed[0]))]
    ev = evaluator_for(game, seed=0)
    memo = {}
    means = []
    wide = [state for state, _o in events if len(state.chance_outcomes()) > 1]
    for state in wide[:: max(1, len(wide) // nodes)][:nodes]:
        outcomes = state.chance_outcomes()
        means.append(sum(p * luck(ev, state, o, memo)[0][0] for o, p in outcomes))
    summed = [sum(lucks) for lucks in per_seed]
    return {"game": name, "seed": seed, "events": len(per_seed[0]), "seeds": seeds,
            "noise_sd_per_event": round(statistics.fmean(spread), 4),
            "mean_abs_luck_per_event": round(statistics.fmean(abs(x) for lucks in per_seed for x in lucks), 4),
            "single_outcome_luck_max_abs": max((abs(x) for x in single), default=None),
            "summed_luck_by_seed": [round(x, 4) for x in summed],
            "summed_luck_sd": round(statistics.stdev(summed), 4) if seeds > 1 else None,
            "mean_luck_over_all_outcomes": [round(x, 4) for x in means], "cpu_seconds": round(cpu, 1)}


SOLVE = """
import json, resource, time
from ludoteca.games.tohm import TohmGame, solve
start = time.process_time()
values, sweeps = solve.build(TohmGame(players=2).numbers)
print(json.dumps({"cpu_seconds": round(time.process_time() - start, 1), "sweeps": sweeps,
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "first_player": values[solve.index(0, 0, 0, 0)]}))
"""


def solver() -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", SOLVE], capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def turn_limit(games: int) -> dict[str, object]:
    game = load_game("tohm", players=2)
    lengths = []
    for g in range(games):
        agents = [make_agent("perfect", seed=2 * g + p, game="tohm") for p in range(2)]
        rng = random.Random(g)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.randrange(1, 7))
            else:
                state.apply_action(agents[state.current_player()].step(state))
        lengths.append(state.turn)  # type: ignore[attr-defined]
    lengths.sort()
    return {"games": games, "limit": game.turn_limit,  # type: ignore[attr-defined]
            "reached_limit": sum(n >= game.turn_limit for n in lengths),  # type: ignore[attr-defined]
            "mean_turns": round(sum(lengths) / len(lengths), 1), "median_turns": lengths[len(lengths) // 2],
            "p99_turns": lengths[int(0.99 * (len(lengths) - 1))], "longest": lengths[-1]}


class StrongEstimates:
    """``strong``'s search with its TOHM settings (``agent_defaults["strong"]``: iterations, c, cap;
    random rollouts scored by the game's evaluation when cut short), run by the Python engine: the
    compiled search returns only its chosen move, the same algorithm in Python gives the per-action
    estimates (the mean result of each root action's simulations)."""

    def __init__(self, game: Any, seed: int) -> None:
        self.game = game
        self.settings = dict(game.agent_defaults["strong"])
        self.seed = seed
        self.calls = 0

    def action_values(self, state: Any) -> dict[Any, float]:
        from ludoteca.analysis.evaluators import _RootSearch

        self.calls += 1
        search = _RootSearch(seed=self.seed * 1_000_003 + self.calls, rollout="random", game=self.game.name,
                             **self.settings)
        search.step(state)
        root = search.root
        assert root is not None
        return {a: n.w / n.n for a, n in root.children.items() if n.n}


def calibration(positions: int, iterations: int, seed: int, agent: str = "search") -> dict[str, object]:
    """The search's estimates (the analysis's evaluator where a game is not solved; ``agent`` "strong":
    :class:`StrongEstimates`) against the exact values, on TOHM 2p decisions met in random games: mean
    absolute error of a position's value, and a calibration table (estimated win chance in tenths ->
    mean exact value)."""
    from ludoteca.analysis import SearchEvaluator, evaluator_for

    game = load_game("tohm", players=2)
    exact = evaluator_for(game)
    search: Any = StrongEstimates(game, seed) if agent == "strong" else SearchEvaluator(
        game, iterations=iterations, seed=seed)
    rng = random.Random(seed)
    errors: list[float] = []
    losses: list[float] = []
    bins: dict[int, list[tuple[float, float]]] = {}
    while len(errors) < positions:
        state = game.new_initial_state()
        while not state.is_terminal() and len(errors) < positions:
            if not state.is_chance_node() and len(state.legal_actions()) > 1 and rng.random() < 0.2:
                est = search.action_values(state)
                true = exact.action_values(state)
                best = max(est, key=lambda a: est[a])
                errors.append(abs(est[best] - max(true.values())))
                losses.append(max(true.values()) - true[best])
                for a, v in est.items():
                    bins.setdefault(min(9, int(v * 10)), []).append((v, true[a]))
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    table = {f"{k / 10:.1f}-{(k + 1) / 10:.1f}": {"n": len(v), "estimated": round(sum(e for e, _ in v) / len(v), 3),
                                                "exact": round(sum(t for _, t in v) / len(v), 3)}
             for k, v in sorted(bins.items())}
    pairs = [pair for v in bins.values() for pair in v]
    return {"positions": positions, "agent": agent,
            "iterations": search.settings["iterations"] if agent == "strong" else iterations,
            "mae": round(sum(errors) / len(errors), 4),
            "action_mae": round(sum(abs(e - t) for e, t in pairs) / len(pairs), 4),
            "mean_exact_loss_of_search_choice": round(sum(losses) / len(losses), 4),
            "search_choice_within_1_point": round(sum(x < 0.01 for x in losses) / len(losses), 3),
            "calibration": table}


def calibration_plot(found: dict[str, Any], path: str) -> None:
    """The calibration as a plot: mean exact value against mean estimate per tenth, marker size by count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(found["calibration"].values())  # type: ignore[union-attr]
    fig, ax = plt.subplots(figsize=(4.6, 4.2), dpi=120)
    ax.plot([0, 1], [0, 1], color="#999", linestyle="--", linewidth=1, label="perfectly calibrated")
    ax.plot([r["estimated"] for r in rows], [r["exact"] for r in rows], color="#1b6ca8", linewidth=1.5)
    ax.scatter([r["estimated"] for r in rows], [r["exact"] for r in rows], s=[8 + r["n"] / 4 for r in rows],
               color="#1b6ca8", zorder=3, label=f"{found['agent']} ({found['iterations']} simulations)")
    ax.set_xlabel("estimated win chance (mean of the tenth)")
    ax.set_ylabel("exact win chance (TOHM 2p, solved)")
    ax.set_title(f"Calibration on {found['positions']} TOHM 2p decisions; MAE {found['mae']}", fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def latency(args: argparse.Namespace) -> None:
    """Live play's latency with and without analyses running: ``benchmarks/analysis_latency.py``."""
    import analysis_latency

    found = analysis_latency.run(args)
    print(json.dumps({"latency": found}), flush=True)
    analysis_latency.show(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="exactly,tohm,tri,exagon")
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=1, help="typical games per game (seeds seed, seed+1, ...)")
    parser.add_argument("--engine", choices=("auto", "python", "both"), default="auto",
                        help="the analysis's search: compiled where offered (auto), the Python mcts, or both "
                             "side by side")
    parser.add_argument("--solve", action="store_true", help="also solve TOHM 2p from scratch (about a minute)")
    parser.add_argument("--perfect-games", type=int, default=0)
    parser.add_argument("--luck-noise", default=None, metavar="GAME",
                        help="the luck figures' noise on GAME's typical game (--noise-seeds, --noise-nodes)")
    parser.add_argument("--noise-seeds", type=int, default=4, help="--luck-noise: evaluator seeds compared")
    parser.add_argument("--noise-nodes", type=int, default=3, help="--luck-noise: nodes whose outcomes are all weighed")
    parser.add_argument("--calibration", type=int, default=0, help="TOHM 2p positions: search vs exact")
    parser.add_argument("--calibration-agent", choices=("search", "strong"), default="search",
                        help="whose estimates: the analysis's search (--iterations) or strong's settings")
    parser.add_argument("--plot", default=None, metavar="FILE", help="--calibration: draw it (matplotlib) to FILE")
    parser.add_argument("--latency", action="store_true",
                        help="live play's action-to-broadcast latency with and without analyses running, "
                             "alternating (benchmarks/analysis_latency.py)")
    parser.add_argument("--rounds", type=int, default=6, help="--latency: pairs of rounds (with, without)")
    parser.add_argument("--tables", type=int, default=50, help="--latency: tables of live play")
    parser.add_argument("--seconds", type=float, default=15.0, help="--latency: seconds a round")
    parser.add_argument("--think", type=float, default=0.5, help="--latency: clients' mean think time")
    parser.add_argument("--busy", type=int, default=40, help="--latency: finished games handed to the analysis")
    parser.add_argument("--analysis-game", default="exactly", help="--latency: the game of the games analysed")
    parser.add_argument("--ai-tables", type=int, default=5, help="--latency: tables of a person against the hard AI")
    args = parser.parse_args()
    if args.latency:
        latency(args)
        return
    names = [g for g in args.games.split(",") if g]
    if names:
        engines = ["python", "auto"] if args.engine == "both" else [args.engine]
        speed_table(names, args.iterations, args.seed, args.repeat, engines)
    if args.luck_noise:
        print(json.dumps({"luck_noise": luck_noise(args.luck_noise, args.seed, args.noise_seeds, args.noise_nodes)}),
              flush=True)
    if args.solve:
        print(json.dumps({"solver": solver()}), flush=True)
    if args.perfect_games:
        print(json.dumps({"turn_limit": turn_limit(args.perfect_games)}), flush=True)
    if args.calibration:
        budget = args.iterations or 400
        found = calibration(args.calibration, budget, args.seed, args.calibration_agent)
        print(json.dumps({"calibration": found}), flush=True)
        if args.plot:
            calibration_plot(found, args.plot)
    print(json.dumps({"peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
