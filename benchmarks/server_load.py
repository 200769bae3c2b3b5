"""Load test of ``ludoteca serve``: many tables of websocket clients playing random legal moves.

    python benchmarks/server_load.py [--tables 200] [--seconds 20] [--think 0.5] [--game tohm]
                                     [--database URL] [--workers 1|2|both --redis URL]
                                     [--ramp] [--client-procs 1] [--json] [--pauses [FILE] [--census]]

With ``--workers`` the server runs on PostgreSQL (``--database``, default
``$LUDOTECA_TEST_POSTGRES_URL``; each run gets a fresh database on that server, dropped after)
and Redis (``--redis``, default ``$LUDOTECA_TEST_REDIS_URL``) as ``ludoteca serve --workers N``,
every worker on the one shared socket; ``both`` (the default when PostgreSQL and Redis are
given) runs 1 and then 2 workers with the same load and prints them side by side. With two
workers a table's two clients are usually on different workers (the kernel hands each
connection to either), so a move crosses the bus. Without ``--workers`` and without PostgreSQL
and Redis: one worker on SQLite, as before.

Starts the server as a subprocess on the loopback interface (SQLite in a temporary directory
unless ``--database`` is given), creates ``--tables`` tables with two human seats, connects two
websocket clients per table, and lets every client answer its turn after a random "thinking"
pause (uniform in [0, 2 * think] seconds) with a random legal move. It measures, for every
action, the time from sending it to receiving its broadcast (the update carrying the new
position) and to the *opponent's* client receiving it, and prints p50 / p99 / max latency and the
actions per second the server accepted. When a game ends its two clients start a new table, so
the load stays constant.

The clients run in ``--client-procs`` processes of their own (a table's two clients in the same
one), not in the process that measures the server. The CPU seconds spent during the measurement
are printed per part: the server's processes, the clients', PostgreSQL's and Redis's (every
process of those servers on the machine), and the whole machine (``/proc/stat``), so that a
saturated machine is visible as such: with 2 cores, the clients, the database and Redis take
their share of the cores the workers would use.

``--think`` fixes the offered load (each table moves about once per think time), so at a light
load both configurations carry the same actions per second. ``--ramp`` measures how much each
configuration *can* carry: the think time is halved step after step (``--seconds`` each, from
``--think`` down to 0), and the result is the highest actions/s of a step whose p99 (to the
sender and to the opponent) is at most 50 ms.

``--pauses``: the server records its garbage collector's passes and its event loop's stalls
(web/pauses.py), the client processes theirs, and the share of the moves slower than 10 ms sent
during or right after one is printed. Once every table is under way the clients stop their own
collector until the load ends (``LUDOTECA_LOAD_GC=on`` keeps it), so that their pauses are not
counted as the server's latency.

Bounded: it stops by itself after its steps of load (plus set-up), and stops the server.
The bars: 200 concurrent tables with p99 <= 50 ms on a 2-core machine; 2 workers carry
at least 1.6x the actions per second of one at p99 <= 50 ms, and 1,000 tables are held at
p99 <= 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ludoteca.web.launch import fresh_database, server_process
from ludoteca.web.pauses import CENSUS_ENV, RECORD_ENV, Recorder

try:  # the clients parse every message they receive: orjson when installed (the web extra)
    from orjson import loads as _loads
except ImportError:  # pragma: no cover
    _loads = json.loads  # type: ignore[assignment]

P99_BAR_MS = 50.0
SETUP_LIMIT = 240.0
"""Seconds the clients may take to open every table and sit down before the load is measured."""
RAMP_FLOOR = 0.004
"""The last step of ``--ramp`` before think 0."""


def post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(f"http://{base}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        data: dict[str, Any] = json.load(res)
        return data


# --- the clients (in their own processes) ---------------------------------------------------------

class Stats:
    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        """(wall time the action was sent, seconds until its broadcast reached the sender)."""
        self.peer_samples: list[tuple[float, float]] = []
        """(wall time sent, seconds until the *other* client of the table received it: with several
        workers usually through the bus, from another worker)."""
        self.pending: dict[str, tuple[int, float, float, str]] = {}
        self.errors: dict[str, int] = {}
        self.games = 0
        self.started: set[str] = set()
        """Tables whose first game is under way (both clients connected and seated)."""


class Plan:
    """When each step of the load begins and when it stops: sent by the measuring process once
    every table is under way (until then: the first step's think time, and no end)."""

    def __init__(self, think: float) -> None:
        self.schedule: list[tuple[float, float]] = [(0.0, think)]
        self.stop_at = float("inf")

    def think(self, now: float) -> float:
        """The think time of the step under way at wall time ``now``."""
        value = self.schedule[0][1]
        for start, think in self.schedule:
            if now >= start:
                value = think
        return value


async def new_table(base: str, game: str) -> tuple[str, list[str]]:
    loop = asyncio.get_running_loop()
    made = await loop.run_in_executor(None, post, base, "/api/tables",
                                      {"game": game, "players": 2, "seats": [{"kind": "open"}] * 2, "sit": 0,
                                       "name": "bench0"})
    joined = await loop.run_in_executor(None, post, base, f"/api/tables/{made['id']}/join",
                                        {"seat": 1, "name": "bench1"})
    return made["id"], [made["token"], joined["token"]]


async def player(base: str, table: str, token: str, plan: Plan, rng: random.Random, stats: Stats) -> bool:
    """Play one seat until the game ends (True) or the load stops (False)."""
    from websockets.asyncio.client import connect as ws_connect

    async with ws_connect(f"ws://{base}/ws/{table}", max_size=2**22, ping_interval=None, compression=None) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        sent: tuple[float, float] | None = None  # (wall, perf_counter)
        sent_seq = -1
        turn_task: asyncio.Task[None] | None = None

        async def play(message: dict[str, Any]) -> None:
            nonlocal sent, sent_seq
            think = plan.think(time.time())
            if think > 0:
                await asyncio.sleep(rng.uniform(0, 2 * think))
            else:
                await asyncio.sleep(0)
            if time.time() >= plan.stop_at:
                return
            sent_seq = message["seq"]
            sent = (time.time(), time.perf_counter())
            stats.pending[table] = (sent_seq, sent[0], sent[1], token)
            await ws.send(json.dumps({"type": "action", "action": rng.choice(message["legal"]), "seq": sent_seq}))

        try:
            while time.time() < plan.stop_at:
                try:  # asyncio.timeout, not wait_for: no task per message (Python 3.11)
                    async with asyncio.timeout(min(60.0, max(0.05, plan.stop_at - time.time()))):
                        text = await ws.recv()
                except TimeoutError:
                    break
                message = _loads(text)
                kind = message["type"]
                if kind == "error":
                    stats.errors[message["code"]] = stats.errors.get(message["code"], 0) + 1
                    sent = None
                    continue
                if kind not in ("snapshot", "update"):
                    continue
                if message["status"] == "playing" and message["you"] is not None:
                    stats.started.add(table)
                now = time.perf_counter()
                pending = stats.pending.get(table)
                if pending is not None and pending[3] != token and message["seq"] > pending[0]:
                    stats.peer_samples.append((pending[1], now - pending[2]))
                    stats.pending.pop(table, None)
                if sent is not None and message["seq"] > sent_seq:
                    stats.samples.append((sent[0], now - sent[1]))
                    sent = None
                if message["status"] == "over":
                    return True
                idle = turn_task is None or turn_task.done()
                if message.get("legal") and message["you"] == message["to_move"] and idle:
                    turn_task = asyncio.ensure_future(play(message))
        finally:
            if turn_task is not None:
                turn_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await turn_task
    return False


async def table_loop(base: str, game: str, plan: Plan, seed: int, stats: Stats) -> None:
    rng = random.Random(seed)
    while time.time() < plan.stop_at:
        try:
            table, tokens = await new_table(base, game)
            over = await asyncio.gather(*(player(base, table, tok, plan, random.Random(rng.random()), stats)
                                          for tok in tokens))
            stats.games += any(over)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # counted, and the table is replaced
            name = f"client:{type(exc).__name__}"
            stats.errors[name] = stats.errors.get(name, 0) + 1
            await asyncio.sleep(0.5)


async def clients(base: str, game: str, seeds: list[int], think: float, link: Any,
                  pauses: str | None = None) -> Stats:
    """Open the tables, say when every one is under way, take the plan, play it, stop (``pauses``: a
    file where this process records its own collections and stalls, as the server does)."""
    stats = Stats()
    recorder = Recorder(pauses) if pauses else None
    if recorder is not None:
        recorder.start()
    plan = Plan(think)
    tasks = []
    for i, seed in enumerate(seeds):
        tasks.append(asyncio.ensure_future(table_loop(base, game, plan, seed, stats)))
        if i % 20 == 19:
            await asyncio.sleep(0.05)
    deadline = time.time() + SETUP_LIMIT
    while len(stats.started) < len(seeds) and time.time() < deadline:
        await asyncio.sleep(0.1)
    collecting = _quiet_collector()
    link.send(len(stats.started))
    schedule, stop_at = await asyncio.get_running_loop().run_in_executor(None, link.recv)
    plan.schedule, plan.stop_at = schedule, stop_at
    await asyncio.sleep(max(0.0, stop_at - time.time()) + 0.2)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    if recorder is not None:
        await recorder.stop()
    if collecting:
        gc.enable()
    return stats


def _quiet_collector() -> bool:
    """Once every table is under way, the clients' collector is stopped until the load ends (what lives
    then is frozen first), so that the load's own pauses do not count as the server's latency: with
    2,000 connections in one process, Python's default thresholds made about 70 collections in 30 s,
    full ones of 220,000-330,000 objects among them (130 ms of CPU each), during which no message was
    read (docs/web.md, "Speed against boardgame.io"). The clients make almost no cyclic garbage (129
    objects in that run), so nothing piles up. ``LUDOTECA_LOAD_GC=on`` keeps the collector on.
    True when it was stopped."""
    if os.environ.get("LUDOTECA_LOAD_GC", "off") == "on":
        return False
    gc.collect()
    gc.freeze()
    gc.disable()
    return True


def client_process(link: Any, base: str, game: str, seeds: list[int], think: float,
                   pauses: str | None = None) -> None:
    """One client process: plays its tables, then sends back its samples and its CPU seconds.
    Its event loop is uvloop when installed (as the server's), so that the clients take less of
    the cores they share with the server; ``LUDOTECA_LOAD_LOOP=asyncio`` keeps asyncio's own."""
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        stats = runner.run(clients(base, game, seeds, think, link, pauses))
    link.send({"samples": stats.samples, "peer": stats.peer_samples, "errors": stats.errors, "games": stats.games,
               "cpu": time.process_time()})
    link.close()


def _loop_factory() -> Any:
    if os.environ.get("LUDOTECA_LOAD_LOOP", "uvloop") == "uvloop":
        with contextlib.suppress(ImportError):
            import uvloop

            return uvloop.new_event_loop
    return None


# --- CPU accounting (Linux /proc) ------------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: int) -> tuple[str, int, float] | None:
    """(command name, parent pid, CPU seconds so far) of ``pid``; None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return name, int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def process_tree(root: int) -> set[int]:
    """``root`` and every process below it."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _proc_stat(int(entry))) is not None:
            parents[int(entry)] = info[1]
    tree = {root}
    grown = True
    while grown:
        grown = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grown = True
    return tree


def rss_mib(root: int) -> float:
    """Resident memory of ``root``'s process tree, in MiB (VmRSS of each process)."""
    total = 0
    for pid in process_tree(root):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return round(total / 1024, 1)


def cpu_by_part(server_pid: int, client_pids: list[int]) -> dict[str, float]:
    """CPU seconds used so far: the server's process tree, the clients, PostgreSQL, Redis, and the
    whole machine (busy time of every core)."""
    procs: dict[int, tuple[str, int, float]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (info := _proc_stat(int(entry))) is not None:
            procs[int(entry)] = info
    tree = {server_pid}
    grown = True
    while grown:
        grown = False
        for pid, (_, parent, _) in procs.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grown = True
    parts = {"server": sum(procs[p][2] for p in tree if p in procs),
             "clients": sum(procs[p][2] for p in client_pids if p in procs),
             "postgres": sum(cpu for name, _, cpu in procs.values() if name.startswith("postgres")),
             "redis": sum(cpu for name, _, cpu in procs.values() if name.startswith("redis-server"))}
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    parts["machine"] = (sum(values[:8]) - idle) / TICK
    return parts


# --- one run ----------------------------------------------------------------------------------------

def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def summary(lat: list[float], peer: list[float], seconds: float) -> dict[str, Any]:
    return {
        "seconds": round(seconds, 1), "actions": len(lat), "actions_per_s": round(len(lat) / seconds, 1),
        "p50_ms": round(1000 * percentile(lat, 0.50), 2), "p99_ms": round(1000 * percentile(lat, 0.99), 2),
        "max_ms": round(1000 * max(lat), 2) if lat else None,
        "mean_ms": round(1000 * statistics.fmean(lat), 2) if lat else None,
        "peer_p50_ms": round(1000 * percentile(peer, 0.50), 2),
        "peer_p99_ms": round(1000 * percentile(peer, 0.99), 2),
    }


def thinks(args: argparse.Namespace) -> list[float]:
    if not args.ramp:
        return [args.think]
    values = []
    think = args.think
    while think >= RAMP_FLOOR:
        values.append(think)
        think /= 2
    return [*values, 0.0]


def plan(steps: list[float], seconds: float) -> tuple[float, list[tuple[float, float]], float]:
    """When the measured load begins (after a short warm-up), each step's (start, think) and the end."""
    t0 = time.time() + min(3.0, seconds / 4)
    schedule = [(t0 + k * seconds, think) for k, think in enumerate(steps)]
    schedule[0] = (0.0, steps[0])
    return t0, schedule, t0 + len(steps) * seconds


def measure_cpu(server_pid: int, client_pids: list[int], t0: float, n_steps: int,
                seconds: float) -> list[dict[str, float]]:
    """The CPU seconds of each part during each step (sleeps through the steps)."""
    windows = []
    for k in range(n_steps):
        start = t0 + k * seconds
        time.sleep(max(0.0, start - time.time()))
        before = cpu_by_part(server_pid, client_pids)
        time.sleep(max(0.0, start + seconds - time.time()))
        after = cpu_by_part(server_pid, client_pids)
        windows.append({part: round(after[part] - before[part], 2) for part in after})
    return windows


def measured_steps(steps: list[float], t0: float, seconds: float, samples: list[Any], peer: list[Any],
                   windows: list[dict[str, float]]) -> list[dict[str, Any]]:
    """Each step's latencies (from the samples sent within it) and its CPU window."""
    measured = []
    for k, think in enumerate(steps):
        start = t0 + k * seconds + (1.0 if k else 0.0)  # a step's first second: the load changes
        end = t0 + (k + 1) * seconds
        lat = [d for at, d in samples if start <= at < end]
        near = [d for at, d in peer if start <= at < end]
        measured.append({"think_s": think, **summary(lat, near, end - start), "cpu_s": windows[k]})
    return measured


def load(args: argparse.Namespace, base: str, server_pid: int) -> dict[str, Any]:
    """Play ``args.tables`` tables from the client processes; the measured steps and the CPU."""
    steps = thinks(args)
    ctx = multiprocessing.get_context("spawn")
    procs, links = [], []
    began = time.time()
    for k in range(args.client_procs):
        seeds = [args.seed + i for i in range(args.tables) if i % args.client_procs == k]
        here, there = ctx.Pipe()
        client_pauses = getattr(args, "client_pauses", None)
        proc = ctx.Process(target=client_process, daemon=True,
                           args=(there, base, args.game, seeds, steps[0], client_pauses and f"{client_pauses}.{k}"))
        proc.start()
        there.close()
        procs.append(proc)
        links.append(here)
    started = sum(link.recv() if link.poll(SETUP_LIMIT + 60) else 0 for link in links)
    setup = time.time() - began
    t0, schedule, stop_at = plan(steps, args.seconds)
    for link in links:
        link.send((schedule, stop_at))
    client_pids = [p.pid for p in procs if p.pid is not None]
    cpu_windows = measure_cpu(server_pid, client_pids, t0, len(steps), args.seconds)
    rss = rss_mib(server_pid)
    results = []
    for link, proc in zip(links, procs, strict=True):
        if link.poll(args.seconds + 120):
            results.append(link.recv())
        proc.join(30)
    errors: dict[str, int] = {}
    for r in results:
        for code, n in r["errors"].items():
            errors[code] = errors.get(code, 0) + n
    samples = [s for r in results for s in r["samples"]]
    peer = [s for r in results for s in r["peer"]]
    measured = measured_steps(steps, t0, args.seconds, samples, peer, cpu_windows)
    return {"steps": measured, "peer_samples": peer, "window": (t0, stop_at), "errors": errors,
            "games_finished": sum(r["games"] for r in results),
            "client_procs": args.client_procs, "client_results": len(results), "setup_s": round(setup, 1),
            "tables_started": started, "rss_mib": rss}


@contextlib.contextmanager
def _environment(values: dict[str, str | None]) -> Iterator[None]:
    """``values`` in the environment the server inherits (None: unset), as before afterwards."""
    def put(settings: dict[str, str | None]) -> None:
        for name, value in settings.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    before = {name: os.environ.get(name) for name in values}
    put(values)
    try:
        yield
    finally:
        put(before)


# --- the server's pauses (--pauses: web/pauses.py records them in the server) -----------------------

SLOW_MS = 10.0
"""A move slower than this to the opponent is a slow one (the goal at 1,000 matches: p99 <= 10 ms)."""
AFTER_MS = 10.0
"""A move sent this long after a pause ended (or as long as the pause, if longer) still waited for it:
the moves that arrived during the pause are handled first."""


def _windows(records: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Each pause's span, from its start to :data:`AFTER_MS` (or its own length) after its end."""
    return sorted((r["at"], r["at"] + (r["ms"] + max(AFTER_MS, r["ms"])) / 1000) for r in records)


def _hit(at: float, seconds: float, windows: list[tuple[float, float]], starts: list[float]) -> bool:
    """Whether a move sent at ``at`` and received ``seconds`` later overlaps one of ``windows``."""
    k = bisect.bisect_left(starts, at + seconds)
    while k > 0:
        k -= 1
        start, end = windows[k]
        if end > at:
            return True
        if start < at - 5.0:  # no pause lasts that long
            return False
    return False


def _share(moves: list[tuple[float, float]], windows: list[tuple[float, float]]) -> float:
    starts = [w[0] for w in windows]
    hits = sum(1 for at, d in moves if _hit(at, d, windows, starts))
    return round(hits / len(moves), 3) if moves else float("nan")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def pause_report(path: Path, clients: list[Path], peer: list[tuple[float, float]], start: float,
                 end: float) -> dict[str, Any]:
    """The server's collections and stalls between ``start`` and ``end``, and the share of the slow
    moves (to the opponent) that fell in or right after one, beside the share of every move; the
    same for the load's own client processes (``clients``: their records)."""
    records = _read(path)
    theirs = [r for f in clients for r in _read(f) if start <= r["at"] < end]
    their_gcs = [r for r in theirs if r["kind"] == "gc"]
    gcs = [r for r in records if r["kind"] == "gc" and start <= r["at"] < end]
    gc_windows = _windows(gcs)
    gc_starts = [w[0] for w in gc_windows]
    stalls = [r for r in records if r["kind"] == "stall" and start <= r["at"] < end]
    other = [r for r in stalls if not _hit(r["at"], r["ms"] / 1000, gc_windows, gc_starts)]
    moves = [(at, d) for at, d in peer if start <= at < end]
    slow = [(at, d) for at, d in moves if d > SLOW_MS / 1000]
    calm = [d for at, d in moves if not _hit(at, d, gc_windows, gc_starts)]
    report: dict[str, Any] = {
        "collections_outside": sum(1 for r in records if r["kind"] == "gc") - len(gcs),
        "collections": [{k: (round(v, 2) if isinstance(v, float) and k != "at" else v) for k, v in r.items()
                         if k not in ("kind", "types")} for r in gcs],
        "gc_ms": round(sum(r["ms"] for r in gcs), 1), "gc_cpu_ms": round(sum(r["cpu_ms"] for r in gcs), 1),
        "stalls": len(stalls), "stalls_ms": round(sum(r["ms"] for r in stalls), 1),
        "other_stalls": len(other), "other_stalls_ms": round(sum(r["ms"] for r in other), 1),
        "longest_other_stalls_ms": sorted((round(r["ms"], 1) for r in other), reverse=True)[:8],
        "moves": len(moves), "slow": len(slow),
        "slow_in_gc": _share(slow, gc_windows), "moves_in_gc": _share(moves, gc_windows),
        "slow_in_other_stall": _share(slow, _windows(other)), "slow_in_any_stall": _share(slow, _windows(stalls)),
        "p99_outside_gc_ms": round(1000 * percentile(calm, 0.99), 2),
        "client_gcs": len(their_gcs), "client_gc_ms": round(sum(r["ms"] for r in their_gcs), 1),
        "client_stalls_ms": round(sum(r["ms"] for r in theirs if r["kind"] == "stall"), 1),
        "slow_in_client_gc": _share(slow, _windows(their_gcs)),
        "slow_in_client_stall": _share(slow, _windows([r for r in theirs if r["kind"] == "stall"])),
        "slow_in_any": _share(slow, _windows(stalls + theirs)),
    }
    census = [r for r in gcs if "types" in r]
    if census:
        report["census"] = max(census, key=lambda r: r.get("young", 0))["types"]
    return report


def show_pauses(report: dict[str, Any]) -> None:
    gen = [f"gen{c['gen']} {c['ms']} ms ({c['cpu_ms']} CPU{', ' + str(c['young']) + ' young' if 'young' in c else ''})"
           for c in report["collections"]]
    print(f"  collections: {len(gen)}, {report['gc_ms']} ms in all: {'; '.join(gen) or 'none'} "
          f"(and {report['collections_outside']} before or after the measured seconds)")
    print(f"  stalls of the loop > 4 ms: {report['stalls']} ({report['stalls_ms']} ms), of which not a collection: "
          f"{report['other_stalls']} ({report['other_stalls_ms']} ms; longest {report['longest_other_stalls_ms']})")
    print(f"  moves slower than {SLOW_MS:g} ms to the opponent: {report['slow']} of {report['moves']}; "
          f"in or right after a collection: {report['slow_in_gc']:.1%} (of every move: {report['moves_in_gc']:.1%}); "
          f"after another stall: {report['slow_in_other_stall']:.1%}; after any: {report['slow_in_any_stall']:.1%}")
    print(f"  p99 to the opponent of the moves clear of any collection: {report['p99_outside_gc_ms']} ms")
    print(f"  the load's clients: {report['client_gcs']} collections ({report['client_gc_ms']} ms), stalls "
          f"{report['client_stalls_ms']} ms; slow moves in or right after a client's collection: "
          f"{report['slow_in_client_gc']:.1%}, a client's stall: {report['slow_in_client_stall']:.1%}; "
          f"after any pause of either side: {report['slow_in_any']:.1%}")
    if "census" in report:
        print(f"  young objects of the largest collection, by type: {report['census']}")


def one_run(args: argparse.Namespace, workers: int | None) -> dict[str, Any]:
    """Start the server (``workers`` None: the plain one-process server), load it, stop it.
    ``args.pauses``: the server records its pauses (web/pauses.py), reported with the moves they held."""
    record = getattr(args, "pauses", False)
    with tempfile.TemporaryDirectory(prefix="ludoteca-load-") as tmp, contextlib.ExitStack() as stack:
        pauses_file = Path(record) if isinstance(record, str) else Path(tmp) / "pauses.jsonl"
        for old in (pauses_file, *pauses_file.parent.glob(pauses_file.with_suffix(".clients").name + ".*")):
            old.unlink(missing_ok=True)  # this run's alone
        if record:
            stack.enter_context(_environment({RECORD_ENV: str(pauses_file),
                                              CENSUS_ENV: "1" if getattr(args, "census", False) else None}))
            args.client_pauses = str(pauses_file.with_suffix(".clients"))
        # one client address opens every table: lift the per-address creation limit (docs/web.md)
        # (the burst for the set-up, the rate for the matches replaced as they finish, even at think time 0)
        options = ["--ai-delay", "0", "--create-burst", str(4 * args.tables), "--create-rate", str(600 * args.tables)]
        if workers is None:
            options += ["--database", args.database] if args.database else []
        else:
            database = stack.enter_context(fresh_database(args.database, "ludo_load"))
            options += ["--database", database, "--redis", args.redis, "--workers", str(workers),
                        "--bus-secret", os.urandom(16).hex()]  # the workers' shared secret (docs/web.md)
        with server_process(tmp, *options, timeout=60) as (url, proc, _output):
            result = load(args, url.removeprefix("http://"), proc.pid)
        if record:
            clients_files = sorted(pauses_file.parent.glob(pauses_file.with_suffix(".clients").name + ".*"))
            result["pauses"] = pause_report(pauses_file, clients_files, result.pop("peer_samples"),
                                            *result["window"])
            args.client_pauses = None
    result.pop("peer_samples", None)
    result.update(workers=workers or 1, game=args.game, tables=args.tables, clients=2 * args.tables)
    best = [s for s in result["steps"] if worst_p99(s) <= P99_BAR_MS]
    result["capacity"] = max((s["actions_per_s"] for s in best), default=0.0)
    return result


CPU_RATIO_BAR = 1.25
"""Several workers' bar: the CPU seconds per action of 2 workers (with PostgreSQL and Redis, whose work
grows with the workers' news) at most 1.25x those of one worker, so a second core adds throughput in
proportion (docs/web.md, "Several workers")."""


def cpu_per_thousand(step: dict[str, Any]) -> dict[str, float]:
    """CPU seconds per 1,000 actions of the serving parts: the workers, PostgreSQL, Redis, and the three."""
    n = max(1, step["actions"])
    cpu = step["cpu_s"]
    parts = {part: round(1000 * float(cpu[part]) / n, 3) for part in ("server", "postgres", "redis")}
    parts["serving"] = round(sum(parts.values()), 3)
    return parts


def worst_p99(step: dict[str, Any]) -> float:
    """The p99 of an action reaching every client: its sender's and its opponent's."""
    value = max(step["p99_ms"], step["peer_p99_ms"])
    return value if value == value else float("inf")  # no sample: not within the bar


def show(result: dict[str, Any]) -> None:
    print(f"server_load: {result['workers']} worker(s), {result['tables']} tables, {result['clients']} websocket "
          f"clients in {result['client_procs']} process(es), {result['game']}; set-up {result['setup_s']} s, "
          f"{result['tables_started']} tables under way")
    for step in result["steps"]:
        cpu = step["cpu_s"]
        print(f"  think {step['think_s']} s, measured {step['seconds']} s: {step['actions']} actions "
              f"({step['actions_per_s']} actions/s accepted and broadcast)")
        print(f"    latency action -> broadcast: p50 {step['p50_ms']} ms  p99 {step['p99_ms']} ms  "
              f"max {step['max_ms']} ms  mean {step['mean_ms']} ms")
        print(f"    latency action -> the opponent's client: p50 {step['peer_p50_ms']} ms  "
              f"p99 {step['peer_p99_ms']} ms")
        print(f"    CPU seconds: server {cpu['server']}  clients {cpu['clients']}  PostgreSQL {cpu['postgres']}  "
              f"Redis {cpu['redis']}  machine {cpu['machine']} (of {round(step['seconds'] * (os.cpu_count() or 1))})")
    print(f"  errors: {result['errors'] or 'none'}  games finished: {result['games_finished']}")
    if "pauses" in result:
        show_pauses(result["pauses"])


def side_by_side(one: dict[str, Any], two: dict[str, Any]) -> None:
    print(f"\n{'':34}{'1 worker':>12}{'2 workers':>12}")
    rows = (("actions/s", "actions_per_s"), ("p50 action->broadcast ms", "p50_ms"),
            ("p99 action->broadcast ms", "p99_ms"), ("max ms", "max_ms"),
            ("p50 action->opponent ms", "peer_p50_ms"), ("p99 action->opponent ms", "peer_p99_ms"))
    for a, b in zip(one["steps"], two["steps"], strict=True):
        print(f"think {a['think_s']} s")
        for label, key in rows:
            print(f"  {label:32}{a[key]!s:>12}{b[key]!s:>12}")
        for part in ("server", "clients", "postgres", "redis", "machine"):
            print(f"  {'CPU s ' + part:32}{a['cpu_s'][part]!s:>12}{b['cpu_s'][part]!s:>12}")
        per = [cpu_per_thousand(step) for step in (a, b)]
        for part, label in (("server", "workers"), ("postgres", "PostgreSQL"), ("redis", "Redis"),
                            ("serving", "workers + PostgreSQL + Redis")):
            print(f"  {'CPU s / 1,000 actions ' + label:32}{per[0][part]!s:>12}{per[1][part]!s:>12}")
        if per[0]["serving"] and per[1]["serving"]:
            ratio = per[1]["serving"] / per[0]["serving"]
            print(f"  CPU per action, 2 workers / 1: {ratio:.2f}x; bar (<= 1.25x): "
                  f"{'met' if ratio <= CPU_RATIO_BAR else 'NOT met'}")
    print(f"{'games finished':34}{one['games_finished']!s:>12}{two['games_finished']!s:>12}")
    print(f"{'actions/s at p99 <= 50 ms':34}{one['capacity']!s:>12}{two['capacity']!s:>12}")
    if one["capacity"] and two["capacity"]:
        ratio = two["capacity"] / one["capacity"]
        print(f"2 workers / 1 worker: {ratio:.2f}x the actions/s carried at p99 <= 50 ms; "
              f"bar (>= 1.6x): {'met' if ratio >= 1.6 else 'NOT met'}")
    else:
        missing = " and ".join(f"{r['workers']} worker(s)" for r in (one, two) if not r["capacity"])
        first = two["steps"][0]["actions_per_s"] / max(1e-9, one["steps"][0]["actions_per_s"])
        print(f"bar (2 workers >= 1.6x one at p99 <= 50 ms): NOT met (no step within p99 <= 50 ms for {missing}); "
              f"actions/s of the first step: {first:.2f}x")
    if len(one["steps"]) == 1:
        print("  (one fixed load: both carry what the clients offer; --ramp measures what each can carry)")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured load duration (of each --ramp step)")
    parser.add_argument("--think", type=float, default=0.5,
                        help="mean seconds a client waits before its move (--ramp: of the first step)")
    parser.add_argument("--ramp", action="store_true",
                        help="halve the think time step after step down to 0: the most each configuration carries")
    parser.add_argument("--client-procs", type=int, default=1, help="processes running the clients (1..8)")
    parser.add_argument("--game", default="tohm")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default=None,
                        help="SQLAlchemy URL (default: SQLite in a temp dir; with --workers, a PostgreSQL server, "
                             "default $LUDOTECA_TEST_POSTGRES_URL, on which each run makes a fresh database)")
    parser.add_argument("--redis", default=None, help="Redis URL for --workers (default $LUDOTECA_TEST_REDIS_URL)")
    parser.add_argument("--workers", choices=("1", "2", "both"), default=None,
                        help="ludoteca serve --workers N on PostgreSQL + Redis; 'both': 1 then 2, side by side "
                             "(the default when PostgreSQL and Redis are at hand)")
    parser.add_argument("--json", action="store_true", help="print one JSON line per run only")
    parser.add_argument("--pauses", nargs="?", const=True, default=False, metavar="FILE",
                        help="the server records its collections and stalls (web/pauses.py; kept in FILE if "
                             "given): which slow moves fell in or right after one")
    parser.add_argument("--census", action="store_true",
                        help="with --pauses: count each collection's young objects by type (slows the server)")
    args = parser.parse_args()
    if not 1 <= args.tables <= 2000 or not 1 <= args.seconds <= 600 or not 0 <= args.think <= 60 \
            or not 1 <= args.client_procs <= 8:
        parser.error("--tables 1..2000, --seconds 1..600, --think 0..60 and --client-procs 1..8")
    if args.workers is not None or (args.database is None and os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
                                    and os.environ.get("LUDOTECA_TEST_REDIS_URL")):
        args.workers = args.workers or "both"
        args.database = args.database or os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
        args.redis = args.redis or os.environ.get("LUDOTECA_TEST_REDIS_URL")
        if not args.database or not args.database.startswith("postgresql") or not args.redis:
            parser.error("--workers needs PostgreSQL (--database postgresql+psycopg://...) and --redis URL")
    plans: dict[str | None, list[int | None]] = {None: [None], "1": [1], "2": [2], "both": [1, 2]}
    plan = plans[args.workers]
    load_before = os.getloadavg()
    results = []
    for workers in plan:
        result = one_run(args, workers)
        result["loadavg_before"] = [round(v, 2) for v in load_before]
        result["loadavg_after"] = [round(v, 2) for v in os.getloadavg()]
        results.append(result)
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            show(result)
    if args.json:
        return 0
    print(f"load average before {results[0]['loadavg_before']}, after {results[-1]['loadavg_after']} "
          f"({os.cpu_count()} cores)")
    if len(results) == 2:
        side_by_side(*results)
    worst = max(worst_p99(s) for r in results for s in r["steps"][:1])
    if args.tables >= 1000:
        print(f"bar (1,000 tables, p99 <= 100 ms at think {args.think} s): {'met' if worst <= 100 else 'NOT met'}")
    elif plan == [None]:
        bar = results[0]["tables"] >= 200 and worst <= P99_BAR_MS
        print(f"  bar (200 tables, p99 <= 50 ms): {'met' if bar else 'NOT met'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
