"""Turn-based deadlines across two workers: the real PostgreSQL database and the real Redis
of tests/test_web_cluster.py, two applications in one process, the deadlines' clock injected.

The worker running the scheduler dies (what a ``kill -9`` leaves: no timers, no renewals, no release)
with deadlines pending — one of them claimed but never fired: the other worker takes over, fires every
deadline, none twice (docs/web.md, "Turn-based tables": exactly once, nothing lost)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from tests.test_web_cluster import POSTGRES, REDIS, _crash, database, lobby, stored, workers
from tests.test_web_turn_based import HOUR, Clock, Recorder, tick, two_player_table

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not POSTGRES, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)"),
    pytest.mark.skipif(not REDIS, reason="LUDOTECA_TEST_REDIS_URL is not set (no Redis server to test)"),
]


async def _kill(deadlines: Any) -> None:
    """The scheduler of a killed worker: it stops, its lease is not released."""
    deadlines._closed = True
    for task in (deadlines._task, deadlines._keeper):
        if task is not None:
            task.cancel()


def test_a_worker_killed_with_deadlines_pending_loses_none_and_fires_none_twice() -> None:
    assert REDIS is not None
    with database() as url, workers(url, REDIS) as (a, b):
        clock = Clock()
        for client in (a, b):
            client.portal.call(lobby(client).deadlines.close)  # the test runs the rounds
            lobby(client).deadlines.clock = clock
            lobby(client).notifier = Recorder()
        tables = [two_player_table(a, move_time=HOUR)[0] for _ in range(4)]
        store = lobby(a).deadlines.store
        rows = {t: store.get(t) for t in tables}
        assert all(r.due is not None and r.seat is not None for r in rows.values())
        tick(a, lobby(a))
        tick(b, lobby(b))
        assert lobby(a).deadlines._lease is not None and lobby(b).deadlines._lease is None  # one scheduler
        # worker a claims the first deadline and is killed before it fires it
        first = tables[0]
        late = max(r.due for r in rows.values()) + 1
        assert store.claim(first, rows[first].seq, late, rows[first].seat) == 1
        a.portal.call(_crash, a.app.state.cluster)
        a.portal.call(_kill, lobby(a).deadlines)
        clock.now = late + 120  # past every deadline, and past the grace of the claimed one
        fired = lambda: all(  # noqa: E731
            any(n.kind == "timed_out" for n in stored(b, t).notes) for t in tables)
        limit = time.monotonic() + 60
        while not fired():
            assert time.monotonic() < limit, "every deadline fired after the takeover"
            tick(b, lobby(b))
            time.sleep(0.2)  # a's leases expire after their ttl (3 s, real time)
        for _ in range(25):  # more rounds (repairs included): nothing fires again
            tick(b, lobby(b))
        for t in tables:
            data = stored(b, t)
            notes = [n for n in data.notes if n.kind == "timed_out"]
            assert len(notes) == 1, (t, notes)
            row = rows[t]
            assert data.action_seats[row.seq] == row.seat  # the AI played the late seat's move, once
            assert data.seats[row.seat].kind == "human"
            after = store.get(t)
            assert after.seq > row.seq  # armed again for the next turn
        assert lobby(b).deadlines.fired == len(tables)



async def _let_go(cluster: Any, tables: list[str]) -> None:
    """The worker gives the tables' leases back (as after a deadline it fired: nobody watches there)."""
    for t in tables:
        cluster.release(t)
    while cluster._tasks:
        await asyncio.gather(*list(cluster._tasks), return_exceptions=True)


def test_every_worker_fires_the_deadlines_of_the_tables_it_holds_or_can_take_each_once() -> None:
    assert REDIS is not None
    with database() as url, workers(url, REDIS) as (a, b):
        clock = Clock()
        for client in (a, b):
            client.portal.call(lobby(client).deadlines.close)  # the test runs the rounds
            lobby(client).deadlines.clock = clock
            lobby(client).notifier = Recorder()
        tick(a, lobby(a))
        assert lobby(a).deadlines._lease is not None  # a is the scheduler (it repairs); b fires too
        store = lobby(a).deadlines.store

        def due(tables: list[str]) -> dict[str, Any]:
            rows = {t: store.get(t) for t in tables}
            clock.now = max(r.due for r in rows.values()) + 1
            return rows

        def fired_once(tables: list[str], rows: dict[str, Any]) -> None:
            for t in tables:
                data = stored(b, t)
                assert len([n for n in data.notes if n.kind == "timed_out"]) == 1, t
                assert data.action_seats[rows[t].seq] == rows[t].seat  # the AI played the late seat's move
                assert store.get(t).seq > rows[t].seq  # armed again for the next turn

        # a holds the tables it created: it gives three back; b, not the scheduler, fires those
        tables = [two_player_table(a, move_time=HOUR)[0] for _ in range(6)]
        a.portal.call(_let_go, a.app.state.cluster, tables[:3])
        rows = due(tables)
        tick(b, lobby(b))
        assert lobby(b).deadlines.fired == 3  # the other three are a's: a fires them
        tick(a, lobby(a))
        assert lobby(a).deadlines.fired == 3
        fired_once(tables, rows)
        # nobody holds six more: both workers' rounds at once fire each once, whichever takes it
        more = [two_player_table(a, move_time=HOUR)[0] for _ in range(6)]
        a.portal.call(_let_go, a.app.state.cluster, more)
        rows = due(more)
        rounds = [threading.Thread(target=tick, args=(c, lobby(c))) for c in (a, b)]
        for r in rounds:
            r.start()
        for r in rounds:
            r.join()
        for _ in range(3):
            tick(a, lobby(a))
            tick(b, lobby(b))
        # the six more, and the first six again: their next turn was armed when the six more were made
        assert lobby(a).deadlines.fired + lobby(b).deadlines.fired == 6 + 6 + 6
        fired_once(more, rows)
