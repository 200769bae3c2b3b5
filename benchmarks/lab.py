"""The balance lab's speed: games per second with 1 and 2 jobs, and its overhead per game.

    python benchmarks/lab.py [--game tohm] [--players 2] [--agents random] [--games 4000]
    python benchmarks/lab.py --kinds random,heuristic,mcts,strong [--kind-games mcts=4,strong=400]

Bars: 2 jobs >= 1.7 x one job; the lab's overhead per game <= 10% of bare playouts
of the same agents.

**Overhead.** Game by game, the lab's work on game ``i`` — ``runner.play_game`` (deriving the
seeds, making the agents, the bookkeeping, building the row) and encoding its JSON line — is
timed against a bare loop playing the very same game: the same agents with the same seeds,
made before the clock starts, actions played on the same fast path
(``apply_unchecked``), nothing counted or stored. Each game is timed ``--repeat`` times
and the fastest time kept (the machine may be shared: the minimum is the run least disturbed
by others); the overhead sums over ``--sample`` games. Writing rows to ``games.jsonl`` (one
write, flush and fsync per batch of about 0.25 s of games) is timed the same way and added
per game. The default is TOHM with 2 random players: the fastest engine with the cheapest
agent, so the worst case for the lab's own cost.

**Agent kinds** (``--kinds random,heuristic,mcts,strong``): games per second of the
lab with each agent kind in every seat, 1 and 2 jobs side by side (``--kind-games
mcts=4,strong=400`` sets the games per kind; the default is 200, mcts 4), and for each kind the
share of a game's time spent in the agents' ``step`` (the rest is the Python engine playing the
game and the lab's bookkeeping): what a faster agent can still gain.

**Scaling.** Wall-clock time of ``runner.execute`` for ``--games`` games with 1 and 2 jobs,
storing every row, alternating, median over ``--repeat`` runs. It needs two otherwise idle
cores: the load average is printed alongside.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any

from ludoteca.core.chance import sample_outcome
from ludoteca.core.constants import TERMINAL
from ludoteca.lab.plan import build_spec
from ludoteca.lab.runner import TARGET_SECONDS, RunSpec, Task, execute, play_game, setup_game
from ludoteca.lab.store import ResultStore
from ludoteca.registry import game_class, load_game

ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def bare_game(spec: RunSpec, game: Any, i: int) -> float:
    """Seconds for the plainest loop to play game ``i`` with the lab's agents and seeds."""
    _, rng, _, agents = setup_game(spec, i)
    start = time.perf_counter()
    state = game.new_initial_state()
    while True:
        player = state.current_player()
        if player < 0:
            if player == TERMINAL:
                break
            action = sample_outcome(state.chance_outcomes(), rng)
        else:
            action = agents[player].step(state)
        state.apply_unchecked(action)
    return time.perf_counter() - start


def lab_game(spec: RunSpec, i: int) -> float:
    """Seconds for the lab to play game ``i`` and encode its row."""
    start = time.perf_counter()
    ENCODE(play_game(spec, 0, i))
    return time.perf_counter() - start


def lab(spec: RunSpec, tasks: list[Task], jobs: int) -> float:
    """Wall-clock seconds for the lab to play and store ``tasks`` with ``jobs`` jobs."""
    clock = time.perf_counter
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(tmp)
        store.open(spec, max(i for _, i in tasks) + 1)
        done = 0

        def on_lines(lines: list[str]) -> None:
            nonlocal done
            store.append(lines)
            done += len(lines)

        start = clock()
        execute(spec, tasks, on_lines, jobs=jobs)
        elapsed = clock() - start
        store.close()
        assert done == len(tasks)
        return elapsed


def step_share(spec: RunSpec, game: Any, games: int) -> tuple[float, float]:
    """(CPU seconds per game, share of them inside the agents' ``step``) over ``games`` games
    played by the plainest loop (the lab's own cost is measured apart: see the overhead)."""
    clock = time.process_time
    total = inside = 0.0
    for i in range(games):
        _, rng, _, agents = setup_game(spec, i)
        start = clock()
        state = game.new_initial_state()
        while True:
            player = state.current_player()
            if player < 0:
                if player == TERMINAL:
                    break
                action = sample_outcome(state.chance_outcomes(), rng)
            else:
                t0 = clock()
                action = agents[player].step(state)
                inside += clock() - t0
            state.apply_unchecked(action)
        total += clock() - start
    return total / games, inside / total if total else 0.0


def kinds(args: argparse.Namespace) -> None:
    """Games per second per agent kind, 1 and 2 jobs side by side, and the agents' share of a game."""
    counts = {"mcts": 4}
    for item in filter(None, args.kind_games.split(",")):
        name, _, value = item.partition("=")
        counts[name] = int(value)
    clock = game_class(args.game).clock_option
    options = {clock: None} if clock else {}
    print(f"# {args.game}, {args.players} players; load average {os.getloadavg()[0]:.2f} at the start "
          f"({os.cpu_count()} CPUs)", flush=True)
    print("| agents | games | 1 job games/s | 2 jobs games/s | 2 vs 1 | CPU ms/game | in the agents |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
    for kind in filter(None, args.kinds.split(",")):
        spec = build_spec(args.game, args.players, [kind], options, [], seed=1)
        game = load_game(spec.game, **spec.variants[0].options)
        n = counts.get(kind.split(":")[0], counts.get(kind, 200))
        play_game(spec, 0, 0)  # warm up: imports, tables, the compiled engine
        one = lab(spec, spec.tasks(n), 1)
        two = lab(spec, spec.tasks(n), 2)
        cpu, share = step_share(spec, game, max(1, min(n, 50)))
        print(f"| {kind} | {n} | {n / one:.3g} | {n / two:.3g} | {one / two:.2f} | {cpu * 1e3:.1f} | "
              f"{share:.0%} |", flush=True)
    print(f"# load average {os.getloadavg()[0]:.2f} at the end", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="tohm")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--agents", default="random")
    parser.add_argument("--games", type=int, default=4000, help="games per scaling measurement")
    parser.add_argument("--sample", type=int, default=400, help="games timed for the overhead")
    parser.add_argument("--repeat", type=int, default=3, help="timings per game, and scaling runs")
    parser.add_argument("--kinds", default="", help="compare agent kinds instead, e.g. random,heuristic,mcts,strong")
    parser.add_argument("--kind-games", default="", help="games per kind with --kinds, e.g. mcts=4,strong=400")
    args = parser.parse_args()
    if args.kinds:
        kinds(args)
        return
    clock = game_class(args.game).clock_option
    options = {clock: None} if clock else {}
    spec = build_spec(args.game, args.players, args.agents.split(","), options, [], seed=1)

    load_before = os.getloadavg()[0]
    game = load_game(spec.game, **spec.variants[0].options)
    lab_game(spec, 0)  # warm up: imports, the engine's tables, the probe
    bare_total = lab_total = 0.0
    for i in range(1, args.sample + 1):
        b = min(bare_game(spec, game, i) for _ in range(args.repeat))
        t = min(lab_game(spec, i) for _ in range(args.repeat))
        bare_total += b
        lab_total += t
    per_game = bare_total / args.sample
    batch = max(1, int(TARGET_SECONDS / per_game))  # rows per batch, as the runner sizes them
    lines = [ENCODE(play_game(spec, 0, i)) for i in range(batch)]
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultStore(tmp)
        store.open(spec, batch)
        writes = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            store.append(lines)
            writes.append(time.perf_counter() - start)
        store.close()
    store_per_game = min(writes) / batch
    overhead = (lab_total / args.sample + store_per_game) / per_game - 1

    n = args.games
    ones, twos = [], []
    for _ in range(args.repeat):
        ones.append(lab(spec, spec.tasks(n), 1))
        twos.append(lab(spec, spec.tasks(n), 2))
    scaling = statistics.median(o / t for o, t in zip(ones, twos, strict=True))
    print(json.dumps({
        "game": args.game, "players": args.players, "agents": args.agents,
        "lab_1_job_games_per_s": round(n / statistics.median(ones), 1),
        "lab_2_jobs_games_per_s": round(n / statistics.median(twos), 1),
        "scaling_2_vs_1": round(scaling, 3),
        "scaling_best": round(max(o / t for o, t in zip(ones, twos, strict=True)), 3),
        "scaling_ok": scaling >= 1.7,
        "bare_game_us": round(per_game * 1e6, 1),
        "lab_game_us": round(lab_total / args.sample * 1e6, 1),
        "store_per_game_us": round(store_per_game * 1e6, 1),
        "overhead": round(overhead, 4), "overhead_ok": overhead <= 0.10,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }), flush=True)


if __name__ == "__main__":
    main()
