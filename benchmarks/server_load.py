"""Load test of ``ludoteca serve``: many tables of websocket clients playing random legal moves.

    python benchmarks/server_load.py [--tables 200] [--seconds 20] [--think 0.5] [--game tohm]
                                     [--database URL] [--json]

Starts the server as a subprocess on the loopback interface (SQLite in a temporary directory
unless ``--database`` is given), creates ``--tables`` tables with two human seats, connects two
websocket clients per table, and lets every client answer its turn after a random "thinking"
pause (uniform in [0, 2 * think] seconds) with a random legal move. It measures, for every
action, the time from sending it to receiving its broadcast (the update carrying the new
position), and prints p50 / p99 / max latency and the actions per second the server accepted.
When a game ends its two clients start a new table, so the load stays constant.

Bounded: it stops by itself after ``--seconds`` of load (plus set-up), and stops the server.
The bar (issue 4): 200 concurrent tables with p99 <= 50 ms on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
import urllib.request
from typing import Any

from ludoteca.web.launch import running_server

try:
    from websockets.asyncio.client import connect as ws_connect
except ImportError:  # websockets < 13
    from websockets import connect as ws_connect  # type: ignore[no-redef]


def post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(f"http://{base}{path}", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.load(res)


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.games = 0
        self.measuring = False


async def new_table(base: str, game: str) -> tuple[str, list[str]]:
    loop = asyncio.get_running_loop()
    made = await loop.run_in_executor(None, post, base, "/api/tables",
                                      {"game": game, "players": 2, "seats": [{"kind": "open"}] * 2, "sit": 0,
                                       "name": "bench0"})
    joined = await loop.run_in_executor(None, post, base, f"/api/tables/{made['id']}/join",
                                        {"seat": 1, "name": "bench1"})
    return made["id"], [made["token"], joined["token"]]


async def player(base: str, table: str, token: str, think: float, rng: random.Random, stats: Stats,
                 stop_at: float, done: asyncio.Event) -> None:
    async with ws_connect(f"ws://{base}/ws/{table}", max_size=2**22, ping_interval=None, compression=None) as ws:
        await ws.send(json.dumps({"type": "auth", "token": token}))
        sent_at: float | None = None
        sent_seq = -1
        turn_task: asyncio.Task | None = None

        async def play(message: dict[str, Any]) -> None:
            nonlocal sent_at, sent_seq
            await asyncio.sleep(rng.uniform(0, 2 * think))
            if time.monotonic() >= stop_at:
                return
            sent_seq = message["seq"]
            sent_at = time.perf_counter()
            await ws.send(json.dumps({"type": "action", "action": rng.choice(message["legal"]), "seq": sent_seq}))

        try:
            while time.monotonic() < stop_at:
                try:
                    text = await asyncio.wait_for(ws.recv(), timeout=max(0.05, stop_at - time.monotonic()))
                except TimeoutError:
                    break
                message = json.loads(text)
                kind = message["type"]
                if kind == "error":
                    stats.errors[message["code"]] = stats.errors.get(message["code"], 0) + 1
                    sent_at = None
                    continue
                if kind not in ("snapshot", "update"):
                    continue
                if sent_at is not None and message["seq"] > sent_seq:
                    if stats.measuring:
                        stats.latencies.append(time.perf_counter() - sent_at)
                    sent_at = None
                if message["status"] == "over":
                    break
                idle = turn_task is None or turn_task.done()
                if message.get("legal") and message["you"] == message["to_move"] and idle:
                    turn_task = asyncio.ensure_future(play(message))
        finally:
            if turn_task is not None:
                turn_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await turn_task
    done.set()


async def table_loop(base: str, game: str, think: float, seed: int, stats: Stats, stop_at: float) -> None:
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        try:
            table, tokens = await new_table(base, game)
            done = asyncio.Event()
            await asyncio.gather(*(player(base, table, tok, think, random.Random(rng.random()), stats, stop_at, done)
                                   for tok in tokens))
            stats.games += 1
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # counted, and the table is replaced
            name = f"client:{type(exc).__name__}"
            stats.errors[name] = stats.errors.get(name, 0) + 1
            await asyncio.sleep(0.5)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


async def run(args: argparse.Namespace, base: str) -> dict[str, Any]:
    stats = Stats()
    warmup = min(3.0, args.seconds / 4)
    stop_at = time.monotonic() + args.seconds + warmup + 30  # set-up included; reset below
    tasks = []
    t0 = time.monotonic()
    for i in range(args.tables):
        tasks.append(asyncio.ensure_future(table_loop(base, args.game, args.think, args.seed + i, stats, stop_at)))
        if i % 20 == 19:
            await asyncio.sleep(0.05)
    setup = time.monotonic() - t0
    await asyncio.sleep(warmup)
    stats.measuring = True
    measure_start = time.perf_counter()
    end = time.monotonic() + args.seconds
    # everyone stops at `end`
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    stats.measuring = False
    measured = time.perf_counter() - measure_start
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    lat = stats.latencies
    return {
        "game": args.game, "tables": args.tables, "clients": 2 * args.tables, "think_s": args.think,
        "seconds": round(measured, 1), "setup_s": round(setup, 1), "actions": len(lat),
        "actions_per_s": round(len(lat) / measured, 1),
        "p50_ms": round(1000 * percentile(lat, 0.50), 2), "p99_ms": round(1000 * percentile(lat, 0.99), 2),
        "max_ms": round(1000 * max(lat), 2) if lat else None,
        "mean_ms": round(1000 * statistics.fmean(lat), 2) if lat else None,
        "errors": stats.errors, "games_finished": stats.games,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="measured load duration")
    parser.add_argument("--think", type=float, default=0.5, help="mean seconds a client waits before its move")
    parser.add_argument("--game", default="tohm")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default=None, help="SQLAlchemy URL (default: SQLite in a temp dir)")
    parser.add_argument("--json", action="store_true", help="print one JSON line only")
    args = parser.parse_args()
    if not 1 <= args.tables <= 2000 or not 1 <= args.seconds <= 600:
        parser.error("--tables 1..2000 and --seconds 1..600")
    with tempfile.TemporaryDirectory(prefix="ludoteca-load-") as tmp:
        # one client address opens every table: lift the per-address creation limit (docs/web.md)
        options = ["--ai-delay", "0", "--create-burst", str(2 * args.tables)] \
            + (["--database", args.database] if args.database else [])
        with running_server(tmp, *options) as url:
            base = url.removeprefix("http://")
            result = asyncio.run(asyncio.wait_for(run(args, base), timeout=args.seconds + 120))
    if args.json:
        print(json.dumps(result))
    else:
        print(f"server_load: {result['tables']} tables, {result['clients']} websocket clients, {result['game']}, "
              f"think {result['think_s']} s, measured {result['seconds']} s (set-up {result['setup_s']} s)")
        print(f"  actions: {result['actions']}  ({result['actions_per_s']} actions/s accepted and broadcast)")
        print(f"  latency action -> broadcast: p50 {result['p50_ms']} ms  p99 {result['p99_ms']} ms  "
              f"max {result['max_ms']} ms  mean {result['mean_ms']} ms")
        print(f"  errors: {result['errors'] or 'none'}  games finished: {result['games_finished']}")
        bar = result["tables"] >= 200 and result["p99_ms"] <= 50
        print(f"  bar (200 tables, p99 <= 50 ms): {'met' if bar else 'NOT met'}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
