"""Live play's latency with and without the analysis of finished games running, side by side in one run.

    python benchmarks/analysis_latency.py [--rounds 6] [--seconds 15] [--tables 50] [--think 0.5]
                                          [--busy 40] [--analysis-game exactly] [--ai-tables 5] [--json OUT]
    python benchmarks/analysis_latency.py --pingpong

The issue's promise: "an AI move or a table's action never waits for analysis". One server
(``--analysis request --analysis-workers 2``: the pool of two processes at ``SCHED_IDLE`` and nice 19,
web/analysis/work.py) is handed ``--busy`` finished games (two random AIs playing
``--analysis-game``) to analyse, enough to keep both analysis processes busy for the whole run. Then
``benchmarks/server_load.py``'s clients play ``--tables`` tables of TOHM (two websocket clients each,
random moves after a mean think of ``--think`` s) without a break, and the run alternates, every
``--seconds`` s, between the two conditions:

* **analysing**: the analysis processes are left to the server, which stops them itself while live
  play needs the CPU (web/analysis/gate.py: an AI search running, or a table's change in the last
  second; a new analysis is not even started then) and lets them run otherwise. Under a steady load
  they stay stopped: the comparison shows that the server's pauses leave live play as fast as with
  the analysis stopped by hand (the earlier runs without the gate, docs/analysis.md, are the baseline);
* **not analysing**: the same processes stopped by the benchmark (``SIGSTOP``, sent again every 20 ms
  in case the server resumed them: they hold their work and use no CPU), so the server, its tables, its
  clients and the machine are the same and only the analysis differs.

Beside them, ``--ai-tables`` tables where a client plays against the ``hard`` AI (the AI pool, normal
priority) time each AI reply: from the client's move to its turn coming back (its move's broadcast, the
dice, the AI's search, the AI's move's broadcast, the dice).

The conditions go off, on, on, off, off, on, … (each pair in turn reversed: a drift of the machine's
load over the run falls on both alike). Each round prints the action-to-broadcast latency (p50, p99,
max: from a client's action to the broadcast reaching it; p99 to the opponent too), actions per second,
the AI replies' p50 and p99, the CPU seconds the analysis processes got in it and the load average at its
end; the first second of a round is left out (the condition just changed). Then, per condition: the
median of the rounds' p99 and p50, the p99 of all its actions pooled, and the paired differences (a
round with analysis minus the round without next to it: their median and a sign test). The machine is
shared: the load average says how busy it was (the run's own server and clients count in it).

``--pingpong`` measures the mechanism alone, without the server: round trips through a pipe to another
process beside two busy loops at the analysis's priority, running and stopped in turn (then at nice 19
only, for comparison).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import random
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
from server_load import SETUP_LIMIT, TICK, _proc_stat, client_process, percentile, post, process_tree, summary
from text_tables import table

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


def niceness(pid: int) -> int | None:
    """``pid``'s nice value (``/proc/PID/stat`` field 19), None when it is gone."""
    with contextlib.suppress(OSError, IndexError, ValueError):
        text = Path(f"/proc/{pid}/stat").read_text()
        return int(text[text.rindex(")") + 2:].split()[16])
    return None


def machine_times() -> dict[str, float]:
    """The machine's CPU seconds so far (every core, ``/proc/stat``): idle (with waiting for I/O) and
    stolen by the hypervisor (the virtual machine's cores held by other guests)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return {"idle_s": (values[3] + values[4]) / TICK, "steal_s": (values[7] if len(values) > 7 else 0) / TICK}


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


# --- the AI's replies: a person against the hard AI ------------------------------------------------

async def ai_table(base: str, rng: random.Random, stop_at: float, replies: list[tuple[float, float]],
                   errors: dict[str, int]) -> None:
    """Play seat 1 of TOHM tables against the ``hard`` AI until ``stop_at``: after each move of ours,
    the seconds until our turn comes back (our move's broadcast, the dice, the AI's search in the AI
    pool, its move's broadcast, the dice again)."""
    from websockets.asyncio.client import connect as ws_connect

    loop = asyncio.get_running_loop()
    while time.time() < stop_at:
        try:
            made = await loop.run_in_executor(None, post, base, "/api/tables", {
                "game": "tohm", "players": 2, "seats": [{"kind": "open"}, {"kind": "ai", "level": "hard"}],
                "sit": 0, "name": "bench"})
            async with ws_connect(f"ws://{base}/ws/{made['id']}", ping_interval=None, compression=None) as ws:
                await ws.send(json.dumps({"type": "auth", "token": made["token"]}))
                sent: tuple[float, float] | None = None
                while time.time() < stop_at:
                    async with asyncio.timeout(max(0.05, stop_at - time.time())):
                        message = json.loads(await ws.recv())
                    if message["type"] == "error":
                        errors[message["code"]] = errors.get(message["code"], 0) + 1
                        sent = None
                    if message["type"] not in ("snapshot", "update"):
                        continue
                    if message["status"] == "over":
                        break
                    if message.get("legal") and message["you"] == message["to_move"]:
                        if sent is not None:
                            replies.append((sent[0], time.perf_counter() - sent[1]))
                        await asyncio.sleep(rng.uniform(0, 0.6))  # a person's think
                        sent = (time.time(), time.perf_counter())
                        await ws.send(json.dumps({"type": "action", "action": rng.choice(message["legal"]),
                                                  "seq": message["seq"]}))
        except TimeoutError:
            return
        except Exception as exc:  # counted; a new table
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            await asyncio.sleep(0.5)


def ai_process(link: Any, base: str, tables: int, seed: int) -> None:
    """A process playing ``tables`` tables against the AI; told when to stop, sends back its samples."""
    stop_at = link.recv()
    replies: list[tuple[float, float]] = []
    errors: dict[str, int] = {}

    async def play() -> None:
        await asyncio.gather(*(ai_table(base, random.Random(seed + k), stop_at, replies, errors)
                               for k in range(tables)))

    asyncio.run(play())
    link.send({"replies": replies, "errors": errors})
    link.close()


def hold(pool: list[int], condition: str, until: float) -> None:
    """Keep the pool as ``condition`` wants until ``until``: stopped (again every 20 ms, against the
    server's resumes), or left to the server."""
    while (left := until - time.time()) > 0:
        if condition == OFF:
            signal_all(pool, signal.SIGSTOP)
        time.sleep(min(0.02, left) if condition == OFF else left)


def run(args: argparse.Namespace) -> dict[str, Any]:
    order = conditions(args.rounds)
    burst = str(4 * args.tables + args.busy + 20 * args.ai_tables)  # tables made from one address
    with tempfile.TemporaryDirectory(prefix="ludoteca-analysis-latency-") as tmp, server_process(
            tmp, "--ai-delay", "0", "--create-burst", burst, "--analysis", "request",
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
        nice = sorted({niceness(pid) for pid in pool}, key=str)
        try:
            return {**measure(args, base, proc.pid, pool, games, order), "pool_nice": nice}
        finally:
            signal_all(pool, signal.SIGCONT)


def measure(args: argparse.Namespace, base: str, server_pid: int, pool: list[int], games: list[str],
            order: list[str]) -> dict[str, Any]:
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
    ai_here, ai_there = ctx.Pipe()
    prober = ctx.Process(target=ai_process, args=(ai_there, base, args.ai_tables, args.seed), daemon=True)
    if args.ai_tables:
        prober.start()
        ai_there.close()
        ai_here.send(stop_at)
    rounds: list[dict[str, Any]] = []
    for k, condition in enumerate(order):
        start = t0 + k * seconds
        time.sleep(max(0.0, start - time.time()))
        if condition == OFF:
            signal_all(pool, signal.SIGSTOP)
        cpu_before, server_before, machine_before = cpu_of(pool), cpu_of([server_pid]), machine_times()
        hold(pool, condition, start + seconds)
        machine = {key: round(value - machine_before[key], 2) for key, value in machine_times().items()}
        rounds.append({"round": k + 1, "condition": condition, "start": start, "end": start + seconds,
                       "analysis_cpu_s": round(cpu_of(pool) - cpu_before, 2),
                       "server_cpu_s": round(cpu_of([server_pid]) - server_before, 2), **machine,
                       "load_1min": round(os.getloadavg()[0], 2)})
    signal_all(pool, signal.SIGSTOP)
    result: dict[str, Any] = (here.recv() if here.poll(seconds + 120)
                              else {"samples": [], "peer": [], "errors": {"no results": 1}})
    client.join(30)
    ai_result: dict[str, Any] = {"replies": [], "errors": {}}
    if args.ai_tables and ai_here.poll(120):
        ai_result = ai_here.recv()
        prober.join(30)
    replies: list[tuple[float, float]] = ai_result["replies"]
    states = [get(base, f"/api/tables/{g}/analysis")["status"] for g in games]
    samples: list[tuple[float, float]] = result["samples"]
    peer: list[tuple[float, float]] = result["peer"]
    for r in rounds:
        begin = r["start"] + 1.0  # the condition just changed: its first second is left out
        lat = [d for at, d in samples if begin <= at < r["end"]]
        near = [d for at, d in peer if begin <= at < r["end"]]
        r.update(summary(lat, near, r["end"] - begin))
        ai = [d for at, d in replies if begin <= at < r["end"]]
        r.update({"ai_replies": len(ai), "ai_p50_ms": round(1000 * percentile(ai, 0.5), 1),
                  "ai_p99_ms": round(1000 * percentile(ai, 0.99), 1)})
    pooled = {}
    for condition in (OFF, ON):
        lat = [d for r in rounds if r["condition"] == condition
               for at, d in samples if r["start"] + 1.0 <= at < r["end"]]
        ai = [d for r in rounds if r["condition"] == condition
              for at, d in replies if r["start"] + 1.0 <= at < r["end"]]
        pooled[condition] = {"p50_ms": round(1000 * percentile(lat, 0.5), 2),
                             "p99_ms": round(1000 * percentile(lat, 0.99), 2), "actions": len(lat),
                             "ai_p50_ms": round(1000 * percentile(ai, 0.5), 1),
                             "ai_p99_ms": round(1000 * percentile(ai, 0.99), 1), "ai_replies": len(ai)}
    return {"tables": args.tables, "tables_started": started, "think_s": args.think, "seconds": seconds,
            "analysis_game": args.analysis_game, "errors": {**result["errors"], **ai_result["errors"]},
            "ai_tables": args.ai_tables, "rounds": rounds, "pooled": pooled,
            "analyses": {s: states.count(s) for s in sorted(set(states))}, "cores": os.cpu_count()}


def sign_test(k: int, n: int) -> float:
    """The two-sided p-value of ``k`` successes in ``n`` fair coin tosses (exact binomial)."""
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def paired(rounds: list[dict[str, Any]], key: str) -> list[float]:
    """``key`` of the round with analysis minus the round without, for each pair of rounds."""
    out = []
    for a, b in zip(rounds[::2], rounds[1::2], strict=False):
        on, off = (a, b) if a["condition"] == ON else (b, a)
        out.append(float(on[key]) - float(off[key]))
    return out


MEDIANS = (("median of the rounds' p99, ms", "p99_ms"), ("median of the rounds' p50, ms", "p50_ms"),
           ("median actions/s", "actions_per_s"), ("median analysis CPU s a round", "analysis_cpu_s"),
           ("median server CPU s a round", "server_cpu_s"), ("median idle CPU s a round", "idle_s"),
           ("median stolen CPU s a round", "steal_s"), ("median load average (1 min)", "load_1min"))
"""The summary's rows (its label, the rounds' figure) with two decimals; then the AI's, with one."""
AI_MEDIANS = (("median of the rounds' AI reply p99, ms", "ai_p99_ms"),
              ("median of the rounds' AI reply p50, ms", "ai_p50_ms"))


def show(found: dict[str, Any]) -> None:
    rounds = found["rounds"]
    print(f"{found['tables']} TOHM tables ({found['tables_started']} started), think {found['think_s']} s, "
          f"rounds of {found['seconds']} s (first second left out); analysis of {found['analysis_game']} games "
          f"in 2 processes, read from /proc: SCHED_IDLE, nice {found.get('pool_nice')}; {found['cores']} cores; "
          f"{found.get('ai_tables', 0)} tables against the hard AI; with analysis: paused by the server while "
          "live play needs the CPU")
    print(f"{'round':>5}  {'condition':<14}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}"
          f"{'peer p99':>10}{'AI reply p50/p99':>18}{'CPU s: analysis/server/idle/steal':>36}{'load 1 min':>12}")
    for r in rounds:
        ai = f"{r['ai_p50_ms']}/{r['ai_p99_ms']}"
        cpu = f"{r['analysis_cpu_s']}/{r.get('server_cpu_s')}/{r.get('idle_s')}/{r.get('steal_s')}"
        print(f"{r['round']:>5}  {r['condition']:<14}{r['actions_per_s']:>10}{r['p50_ms']:>9}{r['p99_ms']:>9}"
              f"{r['max_ms']!s:>9}{r['peer_p99_ms']:>10}{ai:>18}{cpu:>36}{r['load_1min']:>12}")
    print()

    def medians(label: str, key: str) -> list[object]:
        """``label``, then the median of the rounds' ``key`` without and with the analysis."""
        return [label, *(float(statistics.median(r[key] for r in rounds if r["condition"] == c)) for c in (OFF, ON))]

    pooled = found["pooled"]
    rows = [medians(label, key) for label, key in MEDIANS]
    rows.append(["p99 of all actions pooled, ms", float(pooled[OFF]["p99_ms"]), float(pooled[ON]["p99_ms"])])
    print(table(["", OFF, ON], rows, [34, 16], digits=2))
    if found["ai_tables"]:
        rows = [medians(label, key) for label, key in AI_MEDIANS]
        rows.append(["AI replies pooled: p99, ms", float(pooled[OFF]["ai_p99_ms"]), float(pooled[ON]["ai_p99_ms"])])
        print(table(None, rows, [34, 16], digits=1))
    for key, what in (("p99_ms", "p99"), ("p50_ms", "p50"), ("ai_p99_ms", "AI reply p99"),
                      ("ai_p50_ms", "AI reply p50")):
        if key.startswith("ai_") and not found["ai_tables"]:
            continue
        diffs = paired(rounds, key)
        worse = sum(d > 0 for d in diffs)
        print(f"{what} with minus without, pair by pair (ms): {', '.join(f'{d:+.1f}' for d in diffs)}; "
              f"median {statistics.median(diffs):+.1f}; higher with analysis in {worse} of {len(diffs)} pairs "
              f"(sign test, two-sided: p = {sign_test(worse, len(diffs)):.3f})")
    print(f"analyses at the end: {found['analyses']} (queued or running: the pool had work in every round)")
    if found["errors"]:
        print(f"client errors: {found['errors']}")


# --- the mechanism, without the server: a pipe's round trip beside busy low-priority processes ------

def _busy(idle_class: bool) -> None:
    os.nice(19)
    if idle_class:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    while True:
        pass


def _echo(link: Any) -> None:
    while (message := link.recv()) is not None:
        link.send(message)


def pingpong(rounds: int = 4, trips: int = 400) -> None:
    """Round trips through a pipe to another process (each after a 2 ms pause, so both sleep and are
    woken, as the server and its AI processes are), with two busy loops on the cores stopped and
    running, in turn: first at SCHED_IDLE + nice 19 (the analysis's priority), then at nice 19 only."""
    ctx = multiprocessing.get_context("spawn")
    here, there = ctx.Pipe()
    echo = ctx.Process(target=_echo, args=(there,), daemon=True)
    echo.start()
    for idle_class in (True, False):
        hogs = [ctx.Process(target=_busy, args=(idle_class,), daemon=True) for _ in range(2)]
        for hog in hogs:
            hog.start()
        time.sleep(0.5)
        kind = "SCHED_IDLE + nice 19" if idle_class else "nice 19"
        for r in range(rounds):
            for condition in (OFF, ON):
                signal_all([h.pid for h in hogs if h.pid], signal.SIGCONT if condition == ON else signal.SIGSTOP)
                time.sleep(0.2)
                times = []
                for i in range(trips):
                    began = time.perf_counter()
                    here.send(i)
                    here.recv()
                    times.append(time.perf_counter() - began)
                    time.sleep(0.002)
                p50, p99 = 1e6 * percentile(times, 0.5), 1e6 * percentile(times, 0.99)
                print(f"busy loops at {kind:22} round {r + 1}  {'running' if condition == ON else 'stopped':8} "
                      f"round trip p50 {p50:7.0f} us  p99 {p99:7.0f} us  load {os.getloadavg()[0]:.1f}", flush=True)
        for hog in hogs:
            hog.kill()
    here.send(None)
    echo.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6, help="pairs of rounds (one with, one without analysis)")
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds a round")
    parser.add_argument("--tables", type=int, default=50, help="tables of live play")
    parser.add_argument("--think", type=float, default=0.5, help="clients' mean think time, s")
    parser.add_argument("--busy", type=int, default=40, help="finished games handed to the analysis")
    parser.add_argument("--analysis-game", default="exactly", help="the game of the games analysed")
    parser.add_argument("--ai-tables", type=int, default=5, help="tables of a person against the hard AI (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=None, metavar="OUT", help="also write the figures as JSON")
    parser.add_argument("--pingpong", action="store_true",
                        help="only the mechanism: a pipe's round trip beside two busy low-priority processes")
    args = parser.parse_args()
    if args.pingpong:
        pingpong()
        return
    if args.rounds < 1 or args.seconds < 3 or args.tables < 1 or args.busy < 2:
        parser.error("--rounds >= 1, --seconds >= 3, --tables >= 1 and --busy >= 2")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    found = run(args)
    show(found)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
