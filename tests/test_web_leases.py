"""Table leases with fencing tokens (web/leases.py), on SQLite and on a real PostgreSQL server.

The PostgreSQL cases (``@pytest.mark.postgres``) need ``LUDOTECA_TEST_POSTGRES_URL`` (scripts/test
starts a server and sets it); each test uses table ids of its own, so runs never collide.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, func, insert, select
from sqlalchemy.engine import Engine

from ludoteca.web.leases import MAX_TTL, FencedOut, Lease, LeaseStore, check_fence, check_fences, leases_t

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")

pytestmark = pytest.mark.timeout(300)

writes_meta = MetaData()
writes_t = Table(  # stands for the actions table: what a table's holder writes
    "test_lease_writes", writes_meta,
    Column("table_id", String(64), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("writer", String(64), nullable=False),
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        return create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
    return create_engine(url, pool_pre_ping=True)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'leases.sqlite3'}"
    if not PG_URL:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    return PG_URL


@pytest.fixture
def pg_url() -> str:
    if not PG_URL:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    return PG_URL


@pytest.fixture
def engines(db_url: str) -> Iterator[Callable[[], Engine]]:
    """Separate engines on the same database (as separate workers have)."""
    yield from _engines(db_url)


@pytest.fixture
def pg_engines(pg_url: str) -> Iterator[Callable[[], Engine]]:
    yield from _engines(pg_url)


def _engines(db_url: str) -> Iterator[Callable[[], Engine]]:
    made: list[Engine] = []

    def new() -> Engine:
        engine = _engine(db_url)
        made.append(engine)
        writes_meta.create_all(engine)
        return engine

    yield new
    for engine in made:
        engine.dispose()


def tid(label: str = "t") -> str:
    return f"{label}-{uuid.uuid4().hex[:20]}"


def write(engine: Engine, lease: Lease, seq: int) -> None:
    """What a holder does for each action: the fence, then the write, in one transaction."""
    with engine.begin() as conn:
        check_fence(conn, lease.table, lease.token)
        conn.execute(insert(writes_t).values(table_id=lease.table, seq=seq, writer=lease.owner))


def written(engine: Engine, table: str) -> list[tuple[int, str]]:
    with engine.connect() as conn:
        rows = conn.execute(select(writes_t.c.seq, writes_t.c.writer).where(writes_t.c.table_id == table)
                            .order_by(writes_t.c.seq)).all()
    return [(r.seq, r.writer) for r in rows]


# --- the life of a lease -----------------------------------------------------------------------

def test_one_holder_at_a_time_and_every_acquire_raises_the_token(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    a, b = LeaseStore(engines(), clock), LeaseStore(engines(), clock)
    table = tid()
    first = a.acquire(table, "worker-a", 10)
    assert first == Lease(table, "worker-a", 1, clock.now + 10)
    assert b.acquire(table, "worker-b", 10) is None  # held
    assert b.current(table) == first
    clock.now += 5
    renewed = a.renew(first, 10)
    assert renewed is not None and renewed.token == 1 and renewed.expires_at == clock.now + 10
    again = a.acquire(table, "worker-a", 10)  # the holder acquiring again: a new token
    assert again is not None and again.token == 2
    assert a.renew(first, 10) is None  # the older token is gone
    assert a.release(again)
    assert b.current(table) is None
    second = b.acquire(table, "worker-b", 10)  # released: taken at once
    assert second is not None and second.token == 3 and second.owner == "worker-b"
    assert not a.release(again) and a.renew(again, 10) is None
    assert b.release(second)
    third = a.acquire(table, "worker-a", 10)
    assert third is not None and third.token == 4  # tokens never go back, release or not


def test_an_expired_lease_is_taken_over_with_a_higher_token(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    a, b = LeaseStore(engines(), clock), LeaseStore(engines(), clock)
    table = tid()
    old = a.acquire(table, "worker-a", 5)
    assert old is not None
    clock.now += 4.9
    assert b.acquire(table, "worker-b", 5) is None
    clock.now += 0.2  # worker-a stopped renewing
    assert b.current(table) is None
    new = b.acquire(table, "worker-b", 5)
    assert new is not None and new.token == old.token + 1
    assert a.renew(old, 5) is None and not a.release(old)  # worker-a learns it lost the table


def test_an_expired_lease_nobody_took_can_still_be_renewed(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    store = LeaseStore(engines(), clock)
    lease = store.acquire(tid(), "worker-a", 5)
    assert lease is not None
    clock.now += 60  # a long pause, but no other worker came
    renewed = store.renew(lease, 5)
    assert renewed is not None and renewed.token == lease.token


def test_steal_expired_takes_only_the_tables_of_a_silent_worker(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    a, b = LeaseStore(engines(), clock), LeaseStore(engines(), clock)
    dead = [tid("dead") for _ in range(4)]
    for table in dead:
        assert a.acquire(table, "worker-a", 5) is not None
    released = a.acquire(tid("released"), "worker-a", 5)
    assert released is not None and a.release(released)
    mine = b.acquire(tid("mine"), "worker-b", 5)
    alive = tid("alive")
    clock.now += 6  # worker-a and worker-b's leases expire; worker-c's is fresh
    assert b.acquire(alive, "worker-c", 30) is not None
    taken = b.steal_expired("worker-b", 10, limit=3)
    assert len(taken) == 3 and all(t.owner == "worker-b" and t.token == 2 for t in taken)
    rest = b.steal_expired("worker-b", 10, limit=100)
    got = {t.table for t in taken + rest}
    assert set(dead) <= got
    assert mine is not None and mine.table not in got  # its own expired lease: renew it, not steal it
    assert released.table not in got and alive not in got
    assert b.steal_expired("worker-b", 10) == []


def test_a_stale_holders_fenced_write_is_refused(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    eng_a, eng_b = engines(), engines()
    a, b = LeaseStore(eng_a, clock), LeaseStore(eng_b, clock)
    table = tid()
    old = a.acquire(table, "worker-a", 5)
    assert old is not None
    write(eng_a, old, 1)
    clock.now += 10  # worker-a paused past its lease; worker-b takes over
    new = b.acquire(table, "worker-b", 5)
    assert new is not None
    write(eng_b, new, 2)
    with pytest.raises(FencedOut) as refused:
        write(eng_a, old, 3)  # worker-a wakes up and tries to go on
    assert refused.value.table == table and refused.value.token == old.token
    assert "another worker took over" in str(refused.value)
    assert written(eng_b, table) == [(1, "worker-a"), (2, "worker-b")]  # nothing of the stale write
    assert b.release(new)
    with pytest.raises(FencedOut):  # released: not even the last holder writes
        write(eng_b, new, 3)


def test_a_group_commit_with_one_stale_table_stores_nothing(engines: Callable[[], Engine]) -> None:
    clock = Clock()
    eng = engines()
    a, b = LeaseStore(eng, clock), LeaseStore(engines(), clock)
    good, stale = tid("good"), tid("stale")
    lease_good = a.acquire(good, "worker-a", 30)
    lease_stale = a.acquire(stale, "worker-a", 5)
    assert lease_good is not None and lease_stale is not None
    clock.now += 10
    assert a.renew(lease_good, 30) is not None
    assert b.acquire(stale, "worker-b", 5) is not None
    with pytest.raises(FencedOut) as refused, eng.begin() as conn:
        check_fences(conn, [(good, lease_good.token), (stale, lease_stale.token)])
        conn.execute(insert(writes_t).values(table_id=good, seq=1, writer="worker-a"))
    assert refused.value.table == stale
    assert written(eng, good) == []
    with eng.begin() as conn:
        check_fences(conn, [(good, lease_good.token)])
        check_fences(conn, [])


@pytest.mark.parametrize(("table", "worker", "ttl"), [
    ("", "w", 5), ("x" * 65, "w", 5), ("t", "", 5), ("t", "w" * 129, 5),
    ("t", "w", 0), ("t", "w", -1), ("t", "w", MAX_TTL + 1),
])
def test_bad_arguments_are_refused_and_store_nothing(engines: Callable[[], Engine], table: str, worker: str,
                                                     ttl: float) -> None:
    eng = engines()
    store = LeaseStore(eng)
    with eng.connect() as conn:
        before = conn.execute(select(func.count()).select_from(leases_t)).scalar_one()
    with pytest.raises(ValueError):
        store.acquire(table, worker, ttl)
    if 0 < len(table) <= 64:  # the worker or the ttl is wrong
        with pytest.raises(ValueError):
            store.steal_expired(worker, ttl)
    with eng.connect() as conn:
        assert conn.execute(select(func.count()).select_from(leases_t)).scalar_one() == before


# --- races -------------------------------------------------------------------------------------

def _race(stores: list[LeaseStore], action: Callable[[LeaseStore, str], object]) -> list[object]:
    """Run ``action`` in one thread per store, released at the same instant."""
    barrier = threading.Barrier(len(stores))
    results: list[object] = [None] * len(stores)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(10)
            results[i] = action(stores[i], f"worker-{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return results


def _acquire(store: LeaseStore, worker: str, table: str) -> Lease | None:
    return store.acquire(table, worker, 30)


@pytest.mark.postgres
def test_two_workers_acquiring_at_once_exactly_one_wins_postgres(pg_engines: Callable[[], Engine]) -> None:
    clock = Clock()
    stores = [LeaseStore(pg_engines(), clock) for _ in range(2)]
    for trial in range(60):
        table = tid(f"race{trial}")
        if trial % 2:  # half the trials race for a row that exists and has expired
            assert stores[0].acquire(table, "dead-worker", 1) is not None
            clock.now += 2
        got = _race(stores, functools.partial(_acquire, table=table))
        winners = [g for g in got if g is not None]
        assert len(winners) == 1, f"trial {trial}: {got}"
        lease = winners[0]
        assert isinstance(lease, Lease) and lease.token == (2 if trial % 2 else 1)
        assert stores[0].current(table) == lease


@pytest.mark.postgres
def test_two_workers_stealing_at_once_take_each_table_once_postgres(pg_engines: Callable[[], Engine]) -> None:
    clock = Clock()
    stores = [LeaseStore(pg_engines(), clock) for _ in range(2)]
    for trial in range(10):
        tables = [tid(f"steal{trial}") for _ in range(15)]
        for table in tables:
            assert stores[0].acquire(table, "dead-worker", 1) is not None
        clock.now += 2
        got = _race(stores, lambda store, worker: store.steal_expired(worker, 30, limit=1000))
        taken = [lease for leases in got for lease in leases if lease.table in tables]  # type: ignore[attr-defined]
        assert sorted(lease.table for lease in taken) == sorted(tables), f"trial {trial}"
        assert all(lease.token == 2 for lease in taken)


def test_a_takeover_waits_for_the_write_under_way_then_wins(engines: Callable[[], Engine]) -> None:
    """The fence locks the lease row: a takeover that starts during the holder's write waits for
    its commit (and its write is kept); the holder's next write is refused."""
    clock = Clock()
    eng_a, eng_b = engines(), engines()
    a, b = LeaseStore(eng_a, clock), LeaseStore(eng_b, clock)
    table = tid()
    old = a.acquire(table, "worker-a", 5)
    assert old is not None
    clock.now += 10
    fenced = threading.Event()
    committed_at: list[float] = []

    def slow_write() -> None:
        with eng_a.begin() as conn:
            check_fence(conn, table, old.token)
            fenced.set()
            time.sleep(0.5)
            conn.execute(insert(writes_t).values(table_id=table, seq=1, writer="worker-a"))
        committed_at.append(time.monotonic())

    writer = threading.Thread(target=slow_write)
    writer.start()
    assert fenced.wait(10)
    new = b.acquire(table, "worker-b", 5)
    acquired_at = time.monotonic()
    writer.join(10)
    assert new is not None and new.token == old.token + 1
    assert committed_at and committed_at[0] <= acquired_at
    assert written(eng_b, table) == [(1, "worker-a")]
    with pytest.raises(FencedOut):
        write(eng_a, old, 2)
    write(eng_b, new, 2)
    assert written(eng_b, table) == [(1, "worker-a"), (2, "worker-b")]


def test_renewing_all_of_a_workers_leases_at_once_keeps_the_held_and_reports_the_lost(
        engines: Callable[[], Engine]) -> None:
    from ludoteca.web import leases as leases_module

    clock = Clock()
    a, b = LeaseStore(engines(), clock), LeaseStore(engines(), clock)
    tables = [tid() for _ in range(7)]
    held = [a.acquire(t, "worker-a", 1) for t in tables]
    assert all(lease is not None for lease in held)
    clock.now += 2  # worker-a paused: worker-b takes the first table over
    stolen = b.acquire(tables[0], "worker-b", 5)
    assert stolen is not None
    a.release(held[1])  # released (and not taken): lost to worker-a too
    old_chunk = leases_module.RENEW_CHUNK
    leases_module.RENEW_CHUNK = 2  # several statements
    try:
        out = a.renew_all([lease for lease in held if lease is not None], 5)
    finally:
        leases_module.RENEW_CHUNK = old_chunk
    assert out[tables[0]] is None and out[tables[1]] is None
    for t, lease in zip(tables[2:], held[2:], strict=True):
        renewed = out[t]
        assert lease is not None and renewed is not None and renewed.token == lease.token
        assert renewed.expires_at == clock.now + 5
        assert b.acquire(t, "worker-b", 5) is None  # still worker-a's
    assert b.current(tables[0]).owner == "worker-b"  # the stolen one was not pushed on
