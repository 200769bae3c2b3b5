"""Live play's latency with and without the analysis of finished games running, side by side in one run.

    python benchmarks/analysis_latency.py [--rounds 6] [--seconds 15] [--tables 50] [--think 0.5]
                                          [--busy 30] [--analysis-game exactly] [--json OUT]

The issue's promise: "an AI move or a table's action never waits for analysis". One server
(``--analysis request --analysis-workers 2``: the pool of two processes at ``SCHED_IDLE`` and nice 19,
web/analysis/work.py) is handed ``--busy`` finished games (two random AIs playing
``--analysis-game``) to analyse, enough to keep both analysis processes busy for the whole run. Then
``benchmarks/server_load.py``'s clients play ``--tables`` tables of TOHM (two websocket clients each,
random moves after a mean think of ``--think`` s) without a break, and the run alternates, every
``--seconds`` s, between the two conditions:

* **analysing**: the analysis processes run (they take whatever CPU live play leaves);
* **not analysing**: the same processes stopped (``SIGSTOP``: they hold their work and use no CPU),
  so the server, its tables, its clients and the machine are the same and only the analysis differs.

The conditions go off, on, on, off, off, on, … (each pair in turn reversed: a drift of the machine's
load over the run falls on both alike). Each round prints the action-to-broadcast latency (p50, p99,
max: from a client's action to the broadcast reaching it; p99 to the opponent too), actions per second,
the CPU seconds the analysis processes got in it and the load average at its end; the first second of
a round is left out (the condition just changed). Then, per condition: the median of the rounds' p99 and
p50, the p99 of all its actions pooled, and the median of the paired differences (a round with analysis
minus the round without next to it). The machine is shared: the load average says how busy it was (the
run's own server and clients count in it, about 1.5 at 50 tables).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from ludoteca.web.launch import server_process
from server_load import SETUP_LIMIT, _proc_stat, client_process, percentile, post, process_tree, summary

ON, OFF = "analysing", "not analysing"
SCHED_IDLE = 5
"""Linux's number for the idle scheduling class (``/proc/PID/stat`` field 41)."""


def get(base: str, path: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://{base}{path}", timeout=30) as res:
        data: dict[str, Any] = json.load(res)
        return data


def finished_games(base: str, game: str, count: int, limit: float = 300.0) -> list[str]:
    """``count`` finished games of ``game`` between two random AIs (the analysis's work)."""
    ids = [post(base, "/api/tables", {"game": game, "players": 2,
                                      "seats": [{"kind": "ai", "level": "random"}] * 2})["id"] for _ in range(count)]
    deadline = time.monotonic() + limit
    for table_id in ids:
        while get(base, f"/api/tables/{table_id}")["status"] != "over":
            if time.monotonic() > deadline:
                raise SystemExit("the AI games did not end")
            time.sleep(0.2)
    return ids


def analysis_processes(server_pid: int) -> list[int]:
    """The server's analysis processes: its children in the idle scheduling class."""
    found = []
    for pid in process_tree(server_pid) - {server_pid}:
        with contextlib.suppress(OSError, IndexError, ValueError):
            text = Path(f"/proc/{pid}/stat").read_text()
            if int(text[text.rindex(")") + 2:].split()[38]) == SCHED_IDLE:
                found.append(pid)
    return sorted(found)


def cpu_of(pids: list[int]) -> float:
    return sum(info[2] for pid in pids if (info := _proc_stat(pid)) is not None)


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def conditions(rounds: int) -> list[str]:
    """off, on, on, off, off, on, …: ``rounds`` pairs, each pair the other way round from the last."""
    out: list[str] = []
    for r in range(rounds):
        out += [OFF, ON] if r % 2 == 0 else [ON, OFF]
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    order = conditions(args.rounds)
    with tempfile.TemporaryDirectory(prefix="ludoteca-analysis-latency-") as tmp, server_process(
            tmp, "--ai-delay", "0", "--create-burst", str(4 * args.tables + args.busy), "--analysis", "request",
            "--analysis-workers", "2", timeout=60) as (url, proc, _output):
        base = url.removeprefix("http://")
        print(f"# {args.busy} finished games of {args.analysis_game} to analyse …", file=sys.stderr, flush=True)
        games = finished_games(base, args.analysis_game, args.busy)
        for table_id in games:
            post(base, f"/api/tables/{table_id}/analysis", {})
        deadline = time.monotonic() + 60
        while len(pool := analysis_processes(proc.pid)) < 2:
            if time.monotonic() > deadline:
                raise SystemExit(f"the server's two analysis processes did not start (found {pool})")
            time.sleep(0.2)
        signal_all(pool, signal.SIGSTOP)  # the first round is without analysis
        try:
            return measure(args, base, pool, games, order)
        finally:
            signal_all(pool, signal.SIGCONT)


def measure(args: argparse.Namespace, base: str, pool: list[int], games: list[str], order: list[str]) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    seeds = [args.seed + i for i in range(args.tables)]
    client = ctx.Process(target=client_process, args=(there, base, "tohm", seeds, args.think), daemon=True)
    client.start()
    there.close()
    if not here.poll(SETUP_LIMIT + 60):
        raise SystemExit("the clients did not start their tables")
    started = here.recv()
    seconds = args.seconds
    t0 = time.time() + 3.0  # a short warm-up, without analysis
    stop_at = t0 + len(order) * seconds
    here.send(([(0.0, args.think)], stop_at))
    rounds: list[dict[str, Any]] = []
    for k, condition in enumerate(order):
        start = t0 + k * seconds
        time.sleep(max(0.0, start - time.time()))
        signal_all(pool, signal.SIGCONT if condition == ON else signal.SIGSTOP)
        cpu_before = cpu_of(pool)
        time.sleep(max(0.0, start + seconds - time.time()))
        rounds.append({"round": k + 1, "condition": condition, "start": start, "end": start + seconds,
                       "analysis_cpu_s": round(cpu_of(pool) - cpu_before, 2),
                       "load_1min": round(os.getloadavg()[0], 2)})
    signal_all(pool, signal.SIGSTOP)
    result: dict[str, Any] = (here.recv() if here.poll(seconds + 120)
                              else {"samples": [], "peer": [], "errors": {"no results": 1}})
    client.join(30)
    states = [get(base, f"/api/tables/{g}/analysis")["status"] for g in games]
    samples: list[tuple[float, float]] = result["samples"]
    peer: list[tuple[float, float]] = result["peer"]
    for r in rounds:
        begin = r["start"] + 1.0  # the condition just changed: its first second is left out
        lat = [d for at, d in samples if begin <= at < r["end"]]
        near = [d for at, d in peer if begin <= at < r["end"]]
        r.update(summary(lat, near, r["end"] - begin))
    pooled = {}
    for condition in (OFF, ON):
        lat = [d for r in rounds if r["condition"] == condition
               for at, d in samples if r["start"] + 1.0 <= at < r["end"]]
        pooled[condition] = {"p50_ms": round(1000 * percentile(lat, 0.5), 2),
                             "p99_ms": round(1000 * percentile(lat, 0.99), 2), "actions": len(lat)}
    return {"tables": args.tables, "tables_started": started, "think_s": args.think, "seconds": seconds,
            "analysis_game": args.analysis_game, "errors": result["errors"], "rounds": rounds, "pooled": pooled,
            "analyses": {s: states.count(s) for s in sorted(set(states))}, "cores": os.cpu_count()}


def show(found: dict[str, Any]) -> None:
    rounds = found["rounds"]
    print(f"{found['tables']} TOHM tables ({found['tables_started']} started), think {found['think_s']} s, "
          f"rounds of {found['seconds']} s (first second left out); analysis of {found['analysis_game']} games "
          f"in 2 processes at SCHED_IDLE + nice 19; {found['cores']} cores")
    print(f"{'round':>5}  {'condition':<14}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'peer p99':>10}{'analysis CPU s':>16}{'load 1 min':>12}")
    for r in rounds:
        print(f"{r['round']:>5}  {r['condition']:<14}{r['actions_per_s']:>10}{r['p50_ms']:>9}{r['p99_ms']:>9}"
              f"{r['max_ms']!s:>9}{r['peer_p99_ms']:>10}{r['analysis_cpu_s']:>16}{r['load_1min']:>12}")
    print()
    print(f"{'':34}{OFF:>16}{ON:>16}")
    for label, key in (("median of the rounds' p99, ms", "p99_ms"), ("median of the rounds' p50, ms", "p50_ms"),
                       ("median actions/s", "actions_per_s"), ("median analysis CPU s a round", "analysis_cpu_s"),
                       ("median load average (1 min)", "load_1min")):
        row = [statistics.median(r[key] for r in rounds if r["condition"] == c) for c in (OFF, ON)]
        print(f"{label:34}{row[0]:>16.2f}{row[1]:>16.2f}")
    pooled = found["pooled"]
    print(f"{'p99 of all actions pooled, ms':34}{pooled[OFF]['p99_ms']:>16.2f}{pooled[ON]['p99_ms']:>16.2f}")
    pairs = [(rounds[i], rounds[i + 1]) for i in range(0, len(rounds) - 1, 2)]
    diffs = [(b if b["condition"] == ON else a)["p99_ms"] - (a if a["condition"] == OFF else b)["p99_ms"]
             for a, b in pairs]
    print(f"p99 with minus without, pair by pair (ms): {', '.join(f'{d:+.1f}' for d in diffs)}; "
          f"median {statistics.median(diffs):+.1f}")
    print(f"analyses at the end: {found['analyses']} (queued or running: the pool had work in every round)")
    if found["errors"]:
        print(f"client errors: {found['errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="pairs of rounds (one with, one without analysis)")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds a round")
    parser.add_argument("--tables", type=int, default=50, help="tables of live play")
    parser.add_argument("--think", type=float, default=0.5, help="clients' mean think time, s")
    parser.add_argument("--busy", type=int, default=30, help="finished games handed to the analysis")
    parser.add_argument("--analysis-game", default="exactly", help="the game of the games analysed")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.rounds < 1 or args.seconds < 3 or args.tables < 1 or args.busy < 2:
        parser.error("--rounds >= 1, --seconds >= 3, --tables >= 1 and --busy >= 2")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    found = run(args)
    show(found)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
