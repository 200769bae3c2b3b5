"""Tables shared between workers (the core): two applications in one process on the same
real PostgreSQL database and the same real Redis, each with its own event loop (Starlette's
TestClient), like two ``ludoteca serve`` workers.

- players of one table connected to different workers see each other's moves at once;
- the same action sent to both workers at once is applied exactly once (many trials);
- the worker running a table's AI stops without releasing its lease: the other one takes the AI
  over within a few seconds, nothing lost or played twice;
- Redis restarted mid-game: the workers catch up from the database, the clients see every move.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from tests.test_web_api import WS, connect, create, make_app, open_seats, play_random

POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
REDIS = os.environ.get("LUDOTECA_TEST_REDIS_URL")
BUS_SECRET = "the workers' shared test secret"

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not POSTGRES, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)"),
    pytest.mark.skipif(not REDIS, reason="LUDOTECA_TEST_REDIS_URL is not set (no Redis server to test)"),
]


@contextmanager
def database() -> Iterator[str]:
    pytest.importorskip("psycopg")
    pytest.importorskip("redis")
    from tests.cluster import fresh_database

    assert POSTGRES is not None
    with fresh_database(POSTGRES) as url:
        yield url


@contextmanager
def workers(url: str, redis: str, n: int = 2, **kwargs: Any) -> Iterator[list[Any]]:
    from starlette.testclient import TestClient

    with ExitStack() as stack:
        clients = [stack.enter_context(TestClient(make_app(None, url, redis_url=redis, worker_id=f"w{i + 1}",
                                                           bus_secret=BUS_SECRET, freeze_gc=False, **kwargs)))
                   for i in range(n)]
        yield clients


def lobby(client: Any) -> Any:
    return client.app.state.lobby


def stored(client: Any, table_id: str) -> Any:
    return lobby(client).repo.load_table(table_id)


def wait_for(pred: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


def test_players_on_two_workers_play_to_the_end_and_both_see_every_move() -> None:
    assert REDIS is not None
    with database() as url, workers(url, REDIS) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = b.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]  # through B
        with connect(a, table, made["token"]) as ann, connect(b, table, bob) as bobws, \
                connect(a, table) as watch_a, connect(b, table) as watch_b:
            playing(ann, bobws, watch_a, watch_b)
            final = play_random({0: ann, 1: bobws}, [watch_a, watch_b], random.Random(5))
            for ws in (watch_a, watch_b, ann, bobws):
                last = ws.last
                if last is None or last["status"] != "over":
                    last = ws.until(lambda m: m["type"] in ("snapshot", "update") and m["status"] == "over")
                assert last["seq"] == final["seq"]
        data = stored(a, table)
        assert data.status == "over" and len(data.actions) == final["seq"]
        # the lobby of either worker lists the table as it is
        assert {t["id"]: t["status"] for t in b.get(f"/api/tables?ids={table}").json()["tables"]} == {table: "over"}


def playing(*sockets: WS) -> None:
    """Wait until each socket was told the game began (a join through the other worker reaches
    this one through the bus)."""
    for ws in sockets:
        if ws.last is None or ws.last["status"] != "playing":
            ws.until(lambda m: m["type"] in ("snapshot", "update") and m["status"] == "playing")


def _errors(ws: WS, ref: str) -> list[dict[str, Any]]:
    """The errors ``ws`` got for the action sent with ``ref`` (a ping sent after it is answered after
    it: a connection's messages are handled in order)."""
    start = len(ws.messages)
    ws.send({"type": "ping", "ref": f"{ref}-ping"})
    ws.until(lambda m: m["type"] == "pong" and m["ref"] == f"{ref}-ping")
    return [m for m in ws.messages[start:] if m["type"] == "error" and m.get("ref") == ref]


def test_the_same_action_sent_to_both_workers_at_once_is_applied_once() -> None:
    assert REDIS is not None
    rng = random.Random(13)
    trials = 0
    refused: dict[str, int] = {}
    with database() as url, workers(url, REDIS) as (a, b):
        while trials < 60:
            made = create(a, "tohm", open_seats(2))
            table = made["id"]
            bob = a.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
            tokens = {0: made["token"], 1: bob}
            with connect(a, table, tokens[0]) as a0, connect(b, table, tokens[0]) as b0, \
                    connect(a, table, tokens[1]) as a1, connect(b, table, tokens[1]) as b1:
                on = {0: (a0, b0), 1: (a1, b1)}
                state = a0.last
                assert state is not None
                b0.state_at_least(state["seq"])
                while state["status"] == "playing" and trials < 60:
                    seq, mover = state["seq"], state["to_move"]
                    via_a, via_b = on[mover]
                    via_b.state_at_least(seq)
                    legal = via_a.last["legal"]
                    assert legal
                    ref = f"t{trials}"
                    message = {"type": "action", "action": rng.choice(legal), "ref": ref}
                    if trials % 2 == 0:
                        message["seq"] = seq  # half the trials say which position they saw, half do not
                    via_a.send(message)
                    via_b.send(message)
                    errors = _errors(via_a, ref) + _errors(via_b, ref)
                    assert len(errors) == 1, f"trial {trials}: {errors}"
                    for e in errors:
                        refused[e["code"]] = refused.get(e["code"], 0) + 1
                    now = stored(a, table)
                    played = [i for i in range(seq, len(now.actions)) if now.action_seats[i] == mover]
                    assert len(played) == 1, f"trial {trials}: the action was stored {len(played)} times"
                    for ws in (a0, b0, a1, b1):
                        ws.state_at_least(len(now.actions))
                    state = a0.last
                    trials += 1
    assert trials >= 50
    assert sum(refused.values()) >= 1, "the second copy was refused at least sometimes"
    assert set(refused) <= {"stale", "not_your_turn", "conflict"}, refused


def test_the_ai_goes_on_on_the_other_worker_when_its_worker_stops_without_releasing() -> None:
    assert REDIS is not None
    rng = random.Random(21)
    with database() as url, workers(url, REDIS, ai_delay=0.05) as (a, b):
        made = create(a, "tohm", [{"kind": "open"}, {"kind": "ai", "level": "random"}])
        table = made["id"]
        cluster_a, cluster_b = a.app.state.cluster, b.app.state.cluster
        wait_for(lambda: cluster_a.holds(table) or cluster_b.holds(table), 10, "a worker takes the table's lease")
        holder, other = (a, b) if cluster_a.holds(table) else (b, a)
        with connect(other, table, made["token"]) as ann:

            played = [-1]

            def move(ws: WS) -> int:
                """Ann's next move (once it is her turn again); -1 when the game is over."""
                def ready(m: dict[str, Any]) -> bool:
                    return m["type"] in ("snapshot", "update") and (
                        m["status"] != "playing" or (m["to_move"] == 0 and m["seq"] > played[0]))
                state = ws.last if ws.last is not None and ready(ws.last) else ws.until(ready)
                if state["status"] != "playing":
                    return -1
                ws.send({"type": "action", "action": rng.choice(state["legal"]), "seq": state["seq"]})
                played[0] = int(state["seq"])
                return played[0]

            for _ in range(3):
                assert move(ann) >= 0
            # the holder dies: its timers and lease loop stop, nothing is released
            holder_cluster = holder.app.state.cluster
            holder.portal.call(_crash, holder_cluster)
            seq = move(ann)
            assert seq >= 0, "the game went on long enough"
            ann.state_at_least(seq + 2)  # Ann's move and the AI's answer, now from the other worker
            # (how late a takeover may be: test_web_leases.py, with an injected clock)
            assert other.app.state.cluster.holds(table)
            final = None
            while final is None:
                if move(ann) < 0:
                    final = ann.last
        data = stored(other, table)
        assert data is not None and data.status == "over" and final is not None
        assert len(data.actions) == final["seq"]  # load_table checked: no gap, no duplicate seq
        # every action replays: nothing was played twice (the engine refuses a move out of turn)
        from ludoteca.registry import load_game

        state = load_game("tohm", **data.options).new_initial_state()
        for action in data.actions:
            state.apply_json(action)
        assert state.is_terminal()


async def _crash(cluster: Any) -> None:
    """What a ``kill -9`` leaves of a worker for its tables: no timers, no renewals, no release."""
    if cluster._loop_task is not None:
        cluster._loop_task.cancel()
    for table_id in list(cluster.held):
        table = cluster.lobby.tables.get(table_id)
        if table is not None:
            table.lease_lost()
    cluster.held.clear()
    cluster.closed = True


def test_redis_restarted_mid_game_clients_see_every_move(tmp_path: Path) -> None:
    pytest.importorskip("redis")
    from tests.cluster import private_redis

    rng = random.Random(8)
    with database() as url, private_redis(tmp_path / "redis") as redis, workers(url, redis.url) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = b.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(a, table, made["token"]) as ann, connect(b, table, bob) as bobws:
            playing(ann, bobws)
            play_random({0: ann, 1: bobws}, [], rng, stop=lambda s: s["seq"] >= 4)
            state = ann.last
            assert state is not None and state["status"] == "playing"
            redis.stop()
            # a move while Redis is away: stored, shown on its own worker at once
            mover = {0: ann, 1: bobws}[state["to_move"]]
            seq = state["seq"]
            mover.send({"type": "action", "action": rng.choice(mover.last["legal"]), "seq": seq})
            mover.state_at_least(seq + 1)
            redis.start()
            for ws in (ann, bobws):  # the other worker catches up when its bus is back
                ws.state_at_least(seq + 1)
            final = play_random({0: ann, 1: bobws}, [], rng)
        assert final["status"] == "over"
        assert len(stored(a, table).actions) == final["seq"]


def test_news_carries_the_actions_the_other_worker_replays_them_without_reading_the_database() -> None:
    assert REDIS is not None
    rng = random.Random(31)
    with database() as url, workers(url, REDIS) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = b.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(a, table, made["token"]) as ann, connect(b, table, bob) as bobws, connect(b, table) as watch_b:
            playing(ann, bobws, watch_b)
            # the lease taken and its taker's read of the table done, the moves alone are left to tell
            wait_for(lambda: a.app.state.cluster.gained + b.app.state.cluster.gained >= 1, 10,
                     "a worker takes the table's lease")
            on_b = lobby(b).tables[table]
            reads = [0]
            delta = lobby(b).repo.delta

            def counted(*args: Any) -> Any:  # the real read, counted
                reads[0] += 1
                return delta(*args)

            lobby(b).repo.delta = counted
            applied = on_b.news_applied
            seq = ann.last["seq"]
            final = play_random({0: ann, 1: bobws}, [watch_b], rng, stop=lambda s: s["seq"] >= seq + 12)
            watch_b.state_at_least(final["seq"])
            data = stored(a, table)
            by_ann = sum(1 for i in range(seq, final["seq"]) if data.action_seats[i] != 1)
            assert by_ann > 0
            # every action stored through worker A (Ann's and the chance that followed) reached B
            # in A's messages: B replayed them, read nothing, and shows the same position as A
            assert reads[0] == 0 and on_b.news_read == 0
            assert on_b.news_applied > applied
            assert on_b.master.seq == final["seq"]
            assert watch_b.last is not None and watch_b.last["seq"] == final["seq"]
            assert on_b.master.actions() == data.actions[:final["seq"]]


def test_a_missed_message_is_healed_from_the_database() -> None:
    assert REDIS is not None
    rng = random.Random(32)
    with database() as url, workers(url, REDIS) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = a.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(a, table, made["token"]) as ann, connect(a, table, bob) as bobws, \
                connect(b, table) as watch_b:
            playing(ann, bobws, watch_b)
            players = {0: ann, 1: bobws}
            on_b = lobby(b).tables[table]
            cluster_b = b.app.state.cluster
            # B stops hearing the table (as if a message were lost on the way) during one move
            b.portal.call(cluster_b.bus.unsubscribe, table, on_b.bus_handler)
            missed = ann.last["seq"]
            play_random(players, [], rng, stop=lambda s: s["seq"] > missed)
            time.sleep(0.3)
            assert on_b.master.seq == missed, "B heard nothing of that move"
            b.portal.call(cluster_b.bus.subscribe, table, on_b.bus_handler)
            read = on_b.news_read
            final = play_random(players, [], rng, stop=lambda s: s["seq"] >= missed + 6)
            # the next message did not follow on from B's position: B read the gap from the database
            watch_b.state_at_least(final["seq"])
            assert on_b.news_read > read
            assert on_b.master.actions() == stored(a, table).actions[:on_b.master.seq]


def test_a_table_busy_on_one_worker_does_not_hold_up_the_news_of_the_others() -> None:
    assert REDIS is not None
    rng = random.Random(33)
    with database() as url, workers(url, REDIS) as (a, b):
        tables = []
        for _ in range(2):
            made = create(a, "tohm", open_seats(2))
            bob = a.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
            tables.append((made["id"], {0: made["token"], 1: bob}))
        (busy, busy_tokens), (free, free_tokens) = tables
        with connect(b, busy) as watch_busy, connect(b, free) as watch_free, \
                connect(a, busy, busy_tokens[0]) as ann, connect(a, busy, busy_tokens[1]) as bobws:
            playing(ann, bobws, watch_busy)
            busy_b = lobby(b).tables[busy]
            b.portal.call(busy_b.master.lock.acquire)  # the busy table's lock is held on B ...
            try:
                seq = ann.last["seq"]
                play_random({0: ann, 1: bobws}, [], rng, stop=lambda s: s["seq"] > seq)
                time.sleep(0.2)  # ... while news of it arrives there: it waits for the lock
                assert busy_b.master.seq == seq
                with connect(a, free, free_tokens[0]) as ann2, connect(a, free, free_tokens[1]) as bob2:
                    playing(ann2, bob2)
                    final = play_random({0: ann2, 1: bob2}, [], rng, stop=lambda s: s["seq"] >= 6)
                    # the other table's news comes through while the busy table's lock is still held
                    # (held up behind it, it would never come before the lock is released below)
                    watch_free.state_at_least(final["seq"])
            finally:
                b.portal.call(_release, busy_b.master.lock)
            watch_busy.state_at_least(seq + 1)  # and the busy table's news once its lock was free


async def _release(lock: Any) -> None:
    lock.release()


def test_the_seats_of_a_dead_worker_count_as_away_once_its_lease_is_taken_over() -> None:
    assert REDIS is not None
    with database() as url, workers(url, REDIS) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = a.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        cluster_a, cluster_b = a.app.state.cluster, b.app.state.cluster
        wait_for(lambda: cluster_a.holds(table) or cluster_b.holds(table), 10, "a worker takes the table's lease")
        holder, other = (a, b) if cluster_a.holds(table) else (b, a)
        lobby(other).tables.get(table) or other.get(f"/api/tables/{table}")
        with connect(other, table, made["token"]) as ann, connect(holder, table, bob) as bobws:
            playing(ann, bobws)
            on_other = lobby(other).tables[table]
            wait_for(lambda: 1 not in on_other.away, 5, "Bob, connected through the holder, is seen as present")
            # the holder dies (kill -9): no timers, no renewals, no bus; Bob's connection is gone with it
            holder.portal.call(_crash, holder.app.state.cluster)
            holder.portal.call(holder.app.state.cluster.bus.close)
            wait_for(lambda: other.app.state.cluster.holds(table), 10, "the other worker takes the lease over")
            wait_for(lambda: 1 in on_other.away, 5, "Bob's seat counts as away")
            assert 0 not in on_other.away


def test_a_worker_unloads_a_table_it_does_not_serve_and_loads_it_again_when_asked() -> None:
    assert REDIS is not None
    rng = random.Random(34)
    with database() as url, workers(url, REDIS) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = b.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]  # loads it on B
        wait_for(lambda: a.app.state.cluster.holds(table) or b.app.state.cluster.holds(table), 10,
                 "a worker takes the table's lease")
        holder, other = (a, b) if a.app.state.cluster.holds(table) else (b, a)
        cluster = other.app.state.cluster
        assert table in lobby(other).tables
        cluster.idle = 0.5
        with connect(holder, table, made["token"]) as ann, connect(holder, table, bob) as bobws:
            playing(ann, bobws)
            # no connection, no lease, not asked for: the other worker drops the table and its news
            wait_for(lambda: table not in lobby(other).tables and table not in cluster.watched, 10,
                     "the other worker unloads it")
            final = play_random({0: ann, 1: bobws}, [], rng, stop=lambda s: s["seq"] >= 8)
            assert table not in lobby(other).tables
            with connect(other, table) as watch:  # asked for again: loaded from the database, up to date
                assert watch.last is not None and watch.last["seq"] == final["seq"]
                time.sleep(1.0)  # a connection keeps it loaded and heard
                assert table in lobby(other).tables and table in cluster.watched
                seq = final["seq"]
                final = play_random({0: ann, 1: bobws}, [watch], rng, stop=lambda s: s["seq"] >= seq + 4)
                assert watch.last["seq"] == final["seq"]
        # the holder keeps the table loaded, connected or not
        holder.app.state.cluster.idle = 0.0
        time.sleep(1.5)
        assert table in lobby(holder).tables
