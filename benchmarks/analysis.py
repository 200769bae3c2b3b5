"""The analysis of finished games and the TOHM solver, measured on one core (docs/analysis.md).

    python benchmarks/analysis.py [--games exactly,tohm,tri,exagon] [--iterations N] [--solve]
                                  [--perfect-games 1000] [--calibration 300 [--calibration-agent strong]
                                  [--plot FILE]] [--latency [--tables 50] [--seconds 20] [--busy 8]]

* **analysis**: CPU seconds (``time.process_time``) to analyse one typical two-player game per game (a
  game between two ``strong`` players, seeded), with the evaluator the analysis picks (exact for
  TOHM on its 2-player 3x3 board, else the search at ``--iterations`` simulations a position, by
  default the analysis's: the game's tuned ``mcts`` budget, at most 400).
  Goals: exactly and TOHM <= 10 s, EXAGON <= 30 s, TRI <= 60 s.
* **solver** (``--solve``): TOHM two-player 3x3 solved from scratch in a child process: CPU seconds,
  sweeps and peak memory (``ru_maxrss`` of the child).
* **turn limit**: ``--perfect-games`` games between two ``perfect`` players (seeded dice): their
  lengths in player turns, and how many reach TOHM's default turn limit (1000).
* **calibration** (``--calibration N``): the search's estimates (what the analysis uses where a game
  is not solved) against the exact values on N TOHM 2p decisions: mean absolute error, the exact loss
  of the search's choice, and a calibration table; ``--calibration-agent strong``: ``strong``'s estimates
  (its TOHM settings, run by the Python engine: the compiled search returns only its move); ``--plot
  FILE`` draws it (docs/strength-calibration.png).
* **live play beside the analyses** (``--latency``): ``benchmarks/server_load.py``'s load (``--tables``
  tables of two websocket clients playing random moves on TOHM, ``--seconds`` measured) on a server
  with ``--analysis off``, then on one with ``--analysis all --analysis-workers 2`` that was handed
  ``--busy`` finished games of exactly to analyse first (they keep both analysis processes busy during the
  measurement); the action-to-broadcast latency (p50, p99, max) side by side, the CPU seconds of the
  server's process tree (the analysis processes included) and the analyses finished.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

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


def _finished_games(base: str, count: int) -> list[str]:
    """``count`` games of exactly between two random AIs, played to the end (the analysis's work)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from server_load import post

    ids = [post(base, "/api/tables", {"game": "exactly", "players": 2,
                                      "seats": [{"kind": "ai", "level": "random"}] * 2})["id"] for _ in range(count)]
    deadline = time.monotonic() + 120
    for table_id in ids:
        while _get(base, f"/api/tables/{table_id}")["status"] != "over":
            if time.monotonic() > deadline:
                raise SystemExit("the AI games did not end")
            time.sleep(0.2)
    return ids


def _get(base: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://{base}{path}", timeout=30) as res:
        data: dict[str, Any] = json.load(res)
        return data


def latency(tables: int, seconds: float, think: float, busy: int) -> dict[str, object]:
    """Live play's latency with and without analyses running (see the module's documentation)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from ludoteca.web.launch import server_process
    from server_load import load

    out: dict[str, object] = {}
    for mode in ("off", "all"):
        with tempfile.TemporaryDirectory(prefix="ludoteca-analysis-") as tmp, server_process(
                tmp, "--ai-delay", "0", "--create-burst", str(4 * tables + busy), "--analysis", mode,
                "--analysis-workers", "2", timeout=60) as (url, proc, _output):
            base = url.removeprefix("http://")
            games = _finished_games(base, busy) if mode == "all" else []
            args = argparse.Namespace(tables=tables, seconds=seconds, think=think, ramp=False, client_procs=1,
                                      game="tohm", seed=1)
            result = load(args, base, proc.pid)
            step = result["steps"][0]
            states = [_get(base, f"/api/tables/{g}/analysis")["status"] for g in games]
            out[mode] = {k: step[k] for k in ("actions_per_s", "p50_ms", "p99_ms", "max_ms", "peer_p99_ms", "cpu_s")
                         if k in step} | {"analyses_ready": states.count("ready"),
                                          "analyses_running": states.count("running"), "analyses_queued": len(games)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default="exactly,tohm,tri,exagon")
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--solve", action="store_true", help="also solve TOHM 2p from scratch (about a minute)")
    parser.add_argument("--perfect-games", type=int, default=0)
    parser.add_argument("--calibration", type=int, default=0, help="TOHM 2p positions: search vs exact")
    parser.add_argument("--calibration-agent", choices=("search", "strong"), default="search",
                        help="whose estimates: the analysis's search (--iterations) or strong's settings")
    parser.add_argument("--plot", default=None, metavar="FILE", help="--calibration: draw it (matplotlib) to FILE")
    parser.add_argument("--latency", action="store_true",
                        help="live play's action-to-broadcast latency with and without analyses running")
    parser.add_argument("--tables", type=int, default=50, help="--latency: tables of live play")
    parser.add_argument("--seconds", type=float, default=20.0, help="--latency: seconds measured")
    parser.add_argument("--think", type=float, default=0.5, help="--latency: clients' mean think time")
    parser.add_argument("--busy", type=int, default=8, help="--latency: finished games handed to the analysis")
    args = parser.parse_args()
    if args.latency:
        figures = latency(args.tables, args.seconds, args.think, args.busy)
        print(json.dumps({"latency": figures}), flush=True)
        print(f"{'':28}{'analysis off':>14}{'analysing':>14}")
        for key in ("actions_per_s", "p50_ms", "p99_ms", "max_ms", "peer_p99_ms", "analyses_ready"):
            row = [figures[m].get(key, "") for m in ("off", "all")]  # type: ignore[attr-defined]
            print(f"{key:28}{row[0]!s:>14}{row[1]!s:>14}")
        return
    for name in [g for g in args.games.split(",") if g]:
        print(json.dumps({"analysis": analysis_seconds(name, args.iterations, args.seed)}), flush=True)
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
