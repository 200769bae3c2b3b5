"""Turn-based tables at scale: 10,000 tables with pending deadlines in PostgreSQL.

    python benchmarks/turn_based.py [--tables 10000] [--due 300] [--window 30] [--workers both]
                                    [--database URL] [--redis URL] [--json]

For each configuration (1 worker, then 2 workers with Redis; ``--workers 1|2|both``) a fresh database
on the PostgreSQL server of ``--database`` (default ``$LUDOTECA_TEST_POSTGRES_URL``) is filled with
``--tables`` started two-player *exactly* tables, turn-based, each with its row in ``ludo_deadlines``
(``web/repository/deadlines.py``): ``--due`` of them fall due during the ``--window`` seconds after the
server is ready (spread evenly), the others days later. Then ``ludoteca serve`` starts on it and the
benchmark measures:

- **re-arm**: seconds from the server's start to ready (a restarted worker resumes no turn-based table:
  the deadlines stay rows, asked for once a second), and from ready to the firing of a deadline that
  was already due at start (with several workers this includes the workers' own start-up); the
  window's dues are set only then, so that they measure the scheduler, not the start-up;
- **memory**: the resident memory (MiB, every process of the server) once ready, with 10,000 tables
  pending, and at the end (the tables fired meanwhile are loaded for 120 s);
- **lateness**: for every deadline fired, ``fired_at − due`` (the claim's time, stored in the row),
  p50 / p99 / max. The bar: p99 within 5 s of due.

Bounded: ``--window`` seconds plus start-up and a drain of 10 s per configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from ludoteca.core.chance import sample_chance  # noqa: E402
from ludoteca.registry import load_game  # noqa: E402
from ludoteca.web.launch import fresh_database, server_process  # noqa: E402

GAME = "exactly"
BAR_P99 = 5.0
"""Seconds: a deadline fires at most this late at p99."""
DRAIN = 10.0


def fill(url: str, tables: int, due: int, window: float, start: float) -> None:
    """``tables`` started turn-based tables with their deadline rows, in bulk."""
    from sqlalchemy import insert

    from ludoteca.web.master.tables import hash_token
    from ludoteca.web.repository.deadlines import deadlines_t
    from ludoteca.web.repository.schema import actions_t, seats_t, tables_t
    from ludoteca.web.repository.store import Repository

    repo = Repository(url)
    game = load_game(GAME, players=2)
    options = game.record_options()
    settings = json.dumps({"abandon_after": 180, "abandoned": "ai", "chat": "shared", "pace": "turn-based",
                           "move_time": 86_400, "reserve": 0, "on_timeout": "ai_move"})
    rng = random.Random(1)
    t_rows, s_rows, a_rows, d_rows = [], [], [], []
    for k in range(tables):
        table_id = f"bench{k:05d}"
        seed = rng.getrandbits(62)
        state = game.new_initial_state()
        seq = 0
        while state.is_chance_node():  # the opening chance, drawn as the server draws it (master.py)
            outcome = sample_chance(state, random.Random(f"{seed}:{seq}"))
            a_rows.append({"table_id": table_id, "seq": seq, "seat": None, "action": json.dumps(
                state.action_to_json(outcome)), "created_at": start})
            state.apply_action(outcome)
            seq += 1
        to_move = state.current_player()
        t_rows.append({"id": table_id, "game": GAME, "options": json.dumps(options), "seed": seed, "status": "playing",
                       "created_at": start, "updated_at": start, "n_actions": seq, "result": None, "rematch_id": None,
                       "rematch_of": None, "unlisted": True, "settings": settings})
        for seat, name in enumerate(("Ann", "Bob")):
            s_rows.append({"table_id": table_id, "seat": seat, "kind": "human", "level": None, "name": name,
                           "token_hash": hash_token(secrets.token_urlsafe(8)), "away_since": None, "account_id": None})
        when = start + 86_400 + k  # the window's dues are set once the server fires (:func:`open_window`)
        if k == 0:
            when = time.time()  # due already when the server starts (re-arm)
        d_rows.append({"table_id": table_id, "seq": seq, "seat": to_move, "ai": False, "armed_at": start - 3600,
                       "due": when, "remind_at": when + 1e9, "reminded": True, "fired": False, "fired_at": None,
                       "reserves": "[0.0, 0.0]", "misses": "[0, 0]"})
    with repo.engine.begin() as conn:
        for table, rows in ((tables_t, t_rows), (seats_t, s_rows), (actions_t, a_rows), (deadlines_t, d_rows)):
            for i in range(0, len(rows), 2000):
                conn.execute(insert(table), rows[i:i + 2000])
    repo.close()


def fired(url: str) -> list[tuple[str, float, float]]:
    """(table, due, when it fired) of every deadline fired: the ``timed_out`` notices (their ``due``)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT table_id, data, created_at FROM ludo_notes WHERE kind = 'timed_out'"))
        out = [(r.table_id, float(json.loads(r.data)["due"]), float(r.created_at)) for r in rows]
    engine.dispose()
    return out


def open_window(engine: Any, due: int, window: float, start: float) -> None:
    """The ``due`` tables after the first fall due evenly over ``window`` seconds from ``start``."""
    from sqlalchemy import bindparam, update

    from ludoteca.web.repository.deadlines import deadlines_t

    q = update(deadlines_t).where(deadlines_t.c.table_id == bindparam("t")).values(due=bindparam("d"))
    with engine.begin() as conn:
        conn.execute(q, [{"t": f"bench{k:05d}", "d": start + window * k / due} for k in range(1, due)])


def rss_mib(root: int) -> float:
    from benchmarks.server_load import rss_mib as tree_rss

    return float(tree_rss(root))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else float("nan")


def one_run(args: argparse.Namespace, workers: int) -> dict[str, Any]:
    with fresh_database(args.database, "ludo_turns") as url, tempfile.TemporaryDirectory() as tmp:
        from ludoteca.web.repository.store import Repository

        Repository(url).close()  # the schema
        fill(url, args.tables, args.due, args.window, time.time())
        options = ["--database", url, "--ai-delay", "0", *(["--log-level", "info"] if args.verbose else [])]
        if workers > 1:
            options += ["--redis", args.redis, "--workers", str(workers), "--bus-secret", os.urandom(16).hex()]
        t0 = time.time()
        with server_process(tmp, *options, timeout=120) as (_base, proc, _out):
            ready = time.time() - t0
            from sqlalchemy import create_engine, text

            engine = create_engine(url)
            first = None
            limit = time.time() + 120
            while first is None and time.time() < limit:  # the workers are up: the deadline due at start fired
                with engine.connect() as conn:
                    told = conn.execute(text("SELECT created_at FROM ludo_notes WHERE table_id = 'bench00000' "
                                             "AND kind = 'timed_out'")).scalar()
                if told is not None:
                    first = float(told) - (t0 + ready)
                else:
                    time.sleep(0.25)
            memory_ready = rss_mib(proc.pid)
            start = time.time() + 2.0
            open_window(engine, args.due, args.window, start)
            time.sleep(max(0.0, start + args.window + DRAIN - time.time()))
            engine.dispose()
            memory_end = rss_mib(proc.pid)
            if args.verbose:
                print("\n".join(_out), file=sys.stderr)
        rows = fired(url)
    late = [f - d for table, d, f in rows if table != "bench00000"]  # not the one due before the start
    return {"workers": workers, "tables": args.tables, "due": args.due, "fired": len(rows),
            "ready_s": round(ready, 2), "first_due_fired_after_ready_s": round(first, 2) if first is not None else None,
            "memory_ready_mib": memory_ready, "memory_end_mib": memory_end,
            "late_p50_s": pct(late, 0.5), "late_p99_s": pct(late, 0.99), "late_max_s": pct(late, 1.0),
            "bar_p99_s": BAR_P99, "ok": bool(late) and pct(late, 0.99) <= BAR_P99}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--due", type=int, default=300)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--workers", choices=("1", "2", "both"), default="both")
    parser.add_argument("--database", default=os.environ.get("LUDOTECA_TEST_POSTGRES_URL"))
    parser.add_argument("--redis", default=os.environ.get("LUDOTECA_TEST_REDIS_URL"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true", help="print the server's last lines of output")
    args = parser.parse_args()
    if not args.database:
        parser.error("--database (a PostgreSQL URL) or $LUDOTECA_TEST_POSTGRES_URL is needed")
    counts = [1, 2] if args.workers == "both" else [int(args.workers)]
    if 2 in counts and not args.redis:
        parser.error("two workers need --redis or $LUDOTECA_TEST_REDIS_URL")
    results = [one_run(args, n) for n in counts]
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(f"{r['workers']} worker(s): {r['tables']} tables pending, {r['fired']} of {r['due']} due fired; "
                  f"ready in {r['ready_s']} s, a deadline due at start fired {r['first_due_fired_after_ready_s']} s "
                  f"after; memory {r['memory_ready_mib']} MiB ready, {r['memory_end_mib']} MiB at the end; "
                  f"late p50 {r['late_p50_s']} s, p99 {r['late_p99_s']} s, max {r['late_max_s']} s "
                  f"({'within' if r['ok'] else 'OVER'} the {BAR_P99} s bar)")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
