"""The analysis of finished games and the TOHM solver, measured on one core (docs/analysis.md).

    python benchmarks/analysis.py [--games exactly,tohm,tri,exagon] [--iterations N] [--solve]
                                  [--perfect-games 1000] [--calibration 300]

* **analysis**: CPU seconds (``time.process_time``) to analyse one typical two-player game per game (a
  game between two ``strong`` players, seeded), with the evaluator the analysis picks (exact for
  TOHM on its 2-player 3x3 board, else the search at ``--iterations`` simulations a position, by
  default the analysis's: the game's tuned ``mcts`` budget, at most 400).
  Goals (issue 26): exactly and TOHM <= 10 s, EXAGON <= 30 s, TRI <= 60 s.
* **solver** (``--solve``): TOHM two-player 3x3 solved from scratch in a child process: CPU seconds,
  sweeps and peak memory (``ru_maxrss`` of the child).
* **turn limit**: ``--perfect-games`` games between two ``perfect`` players (seeded dice): their
  lengths in player turns, and how many reach TOHM's default turn limit (1000).
* **calibration** (``--calibration N``): the search's estimates (what the analysis uses where a game
  is not solved) against the exact values on N TOHM 2p decisions: mean absolute error, the exact loss
  of the search's choice, and a calibration table.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time

from ludoteca.agents import make_agent
from ludoteca.core.records import Record
from ludoteca.registry import load_game

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


def analysis_seconds(name: str, iterations: int | None, seed: int) -> dict[str, object]:
    from ludoteca.analysis import analyse

    record = typical_game(name, seed)
    start = time.process_time()
    result = analyse(record, iterations=iterations)
    cpu = time.process_time() - start
    return {"game": name, "actions": len(record.actions), "evaluator": result.evaluator,
            "iterations": result.iterations, "cpu_seconds": round(cpu, 2), "goal": GOALS.get(name)}


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


def calibration(positions: int, iterations: int, seed: int) -> dict[str, object]:
    """The search's estimates (the analysis's evaluator where a game is not solved) against the exact
    values, on TOHM 2p decisions met in random games: mean absolute error of a position's value, and a
    calibration table (estimated win chance in tenths -> mean exact value)."""
    from ludoteca.analysis import SearchEvaluator, evaluator_for

    game = load_game("tohm", players=2)
    exact = evaluator_for(game)
    search = SearchEvaluator(game, iterations=iterations, seed=seed)
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
    return {"positions": positions, "iterations": iterations, "mae": round(sum(errors) / len(errors), 4),
            "mean_exact_loss_of_search_choice": round(sum(losses) / len(losses), 4),
            "search_choice_within_1_point": round(sum(x < 0.01 for x in losses) / len(losses), 3),
            "calibration": table}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="exactly,tohm,tri,exagon")
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--solve", action="store_true", help="also solve TOHM 2p from scratch (about a minute)")
    parser.add_argument("--perfect-games", type=int, default=0)
    parser.add_argument("--calibration", type=int, default=0, help="TOHM 2p positions: search vs exact")
    args = parser.parse_args()
    for name in [g for g in args.games.split(",") if g]:
        print(json.dumps({"analysis": analysis_seconds(name, args.iterations, args.seed)}), flush=True)
    if args.solve:
        print(json.dumps({"solver": solver()}), flush=True)
    if args.perfect_games:
        print(json.dumps({"turn_limit": turn_limit(args.perfect_games)}), flush=True)
    if args.calibration:
        budget = args.iterations or 400
        print(json.dumps({"calibration": calibration(args.calibration, budget, args.seed)}), flush=True)
    print(json.dumps({"peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
