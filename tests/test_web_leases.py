"""Table leases with fencing tokens (web/hub/leases.py), on SQLite and on a real PostgreSQL server.

The PostgreSQL cases (``@pytest.mark.postgres``) need ``LUDOTECA_TEST_POSTGRES_URL`` (scripts/test
starts a server and sets it); each test has a fresh database of its own on it, so runs at the same
time never collide (a takeover takes every expired lease it finds, another run's too).
"""

from __future__ import annotations

import functools
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, func, insert, select
from sqlalchemy.engine import Engine

from ludoteca.web.hub.leases import MAX_TTL, FencedOut, Lease, LeaseStore, check_fence, check_fences, leases_t

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
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'leases.sqlite3'}"
        return
    yield from _fresh_pg()


@pytest.fixture
def pg_url() -> Iterator[str]:
    yield from _fresh_pg()


def _fresh_pg() -> Iterator[str]:
    """A new database on the test server, dropped at the end."""
    if not PG_URL:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    from ludoteca.web.launch import fresh_database

    with fresh_database(PG_URL, "ludo_leases") as url:
        yield url


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

    def slow_write() -> None:
        with eng_a.begin() as conn:
            check_fence(conn, table, old.token)
            fenced.set()
            time.sleep(0.5)  # gives a takeover that does not wait the time to show it
            conn.execute(insert(writes_t).values(table_id=table, seq=1, writer="worker-a"))

    writer = threading.Thread(target=slow_write)
    writer.start()
    assert fenced.wait(10)
    new = b.acquire(table, "worker-b", 5)
    # Order, not timestamps of two threads: when the takeover returns, the write under way has
    # committed already (a takeover that did not wait would return while it is still open).
    seen_then = written(eng_b, table)
    writer.join(10)
    assert new is not None and new.token == old.token + 1
    assert seen_then == [(1, "worker-a")]
    with pytest.raises(FencedOut):
        write(eng_a, old, 2)
    write(eng_b, new, 2)
    assert written(eng_b, table) == [(1, "worker-a"), (2, "worker-b")]


def test_renewing_all_of_a_workers_leases_at_once_keeps_the_held_and_reports_the_lost(
        engines: Callable[[], Engine]) -> None:
    from ludoteca.web.hub import leases as leases_module

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


# --- how late a timeout may come when the lease holder dies -----------------------------------------

def _clocked_games() -> list[str]:
    from ludoteca.registry import GAMES, game_class

    return [g for g in GAMES if game_class(g).clock_option is not None]


def _hourglass_running(game: str, seed: int) -> tuple[Any, float]:
    """A state of ``game`` (with its clock) where the hourglass of the seat to move runs, and its time."""
    import random as _random

    from ludoteca.core.chance import random_action
    from ludoteca.registry import game_class, load_game

    option = game_class(game).clock_option
    assert option is not None
    g = load_game(game)
    if g.clock() is None:
        g = load_game(game, **{option: 30})
    rng = _random.Random(seed)
    state = g.new_initial_state()
    for _ in range(3000):
        left = state.time_left()
        if left is not None and not state.is_terminal():
            return state, float(left)
        state.apply_action(random_action(state, rng))
    raise AssertionError(f"{game}: no hourglass ran in 3000 random actions")


class _FakeTime:
    """The wall clock and the monotonic clock of every part under test, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now


class _Table:
    """What the takeover touches of a table: it is in play, its last action was stored at
    ``stored_at`` (wall clock); ``lease_gained`` charges the hourglass as the server's table does
    (``timers.charge_clock``: from the time of the last stored action) and notes when it runs out."""

    def __init__(self, table_id: str, state: Any, stored_at: float, fake: _FakeTime) -> None:
        from types import SimpleNamespace

        from ludoteca.web.master.clock import TurnClock
        from ludoteca.web.master.master import PLAYING

        self.id = table_id
        self.status = PLAYING
        self.state = state
        self.fake = fake
        self.master = SimpleNamespace(clock=TurnClock(fake.monotonic), last_move_at=stored_at, status=PLAYING,
                                      state=state)
        self.host = SimpleNamespace(cluster=None)
        self.hub = SimpleNamespace(remote={}, conns=())
        self.fires_at: float | None = None

    async def refresh(self) -> bool:
        return False  # the last stored action is known already

    def lease_gained(self) -> None:
        from ludoteca.web.master.clock import TIMEOUT_GRACE
        from ludoteca.web.master.timers import charge_clock

        charge_clock(self.master, clustered=self.host.cluster is not None)  # type: ignore[arg-type]
        remaining = self.master.clock.remaining()
        assert remaining is not None
        self.fires_at = self.fake.now + remaining + TIMEOUT_GRACE

    def lease_lost(self) -> None:
        self.master.clock.cancel()


class _Lobby:
    def __init__(self, engine: Engine, table: _Table) -> None:
        from types import SimpleNamespace

        self.table = table
        self.tables: dict[str, Any] = {}
        self.resume_limit = 2000
        self.repo = SimpleNamespace(engine=engine, table_ids=lambda statuses, limit: [table.id])

    async def get(self, table_id: str) -> _Table | None:
        return self.table if table_id == self.table.id else None


@pytest.mark.parametrize("game", _clocked_games())
def test_a_timeout_due_after_the_holder_died_comes_late_by_at_most_ttl_plus_a_round_never_early(
        game: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound docs/web.md gives ('Leases and timeouts'): the holder of a table's lease renews it
    every ``EVERY`` seconds for ``TTL`` seconds and runs the hourglass; killed at K (kill -9), its
    lease expires at most TTL after K (its last renewal was at K or before), and another worker,
    whose rounds come every EVERY seconds, takes it over at its first round after that: by
    K + TTL + EVERY. The new holder charges the hourglass from the time of the last stored action,
    so the timeout due at D comes at max(D, takeover) (+ the grace): late by at most TTL + EVERY,
    never early. Here with the real lease rounds (Cluster.tick on SQLite) and the real hourglass
    arithmetic, on a clock the test moves (each round takes no time: on a real machine add a
    round's database work), for kills at seeded moments around the deadline."""
    import asyncio
    import random as _random

    from ludoteca.web.hub.bus import LocalBus
    from ludoteca.web.hub.cluster import EVERY, TTL, Cluster
    from ludoteca.web.master import timers
    from ludoteca.web.master.clock import TIMEOUT_GRACE

    fake = _FakeTime()
    monkeypatch.setattr(timers, "time", fake)
    engine = _engine(f"sqlite:///{tmp_path / 'takeover.sqlite3'}")
    rng = _random.Random(23)
    lateness: list[float] = []

    async def one_kill(k: int) -> None:
        state, hourglass = _hourglass_running(game, k)
        stored_at = fake.now + rng.uniform(0, EVERY)  # the action that began the turn was stored then
        due = stored_at + hourglass
        killed_at = due - rng.uniform(0, TTL + 2 * EVERY)  # the holder dies shortly before the deadline
        fake.now = killed_at - rng.uniform(2 * EVERY, 3 * EVERY)
        table_id = tid(f"clock{k}")
        clusters = []
        for name in ("holder", "other"):
            table = _Table(table_id, state, stored_at, fake)
            cluster = Cluster(_Lobby(engine, table), None, name, bus=LocalBus(name), clock=fake.time)  # type: ignore[arg-type]
            table.host.cluster = cluster
            clusters.append((cluster, table))
        (holder, holder_table), (other, other_table) = clusters
        lease = holder.leases.acquire(table_id, holder.worker, TTL)
        assert lease is not None
        await holder._gained(lease)
        assert holder_table.fires_at is not None and holder_table.fires_at == pytest.approx(due + TIMEOUT_GRACE)
        # each worker's rounds, every EVERY seconds, at a phase of its own
        rounds = [(fake.now + rng.uniform(0, EVERY) + i * EVERY, holder, "holder") for i in range(100)]
        rounds += [(fake.now + rng.uniform(0, EVERY) + i * EVERY, other, "other") for i in range(100)]
        fired_at = None
        for at, cluster, _ in sorted(rounds, key=lambda r: r[0]):
            if cluster is holder and at >= killed_at:
                continue  # dead: no more rounds
            fake.now = at
            await cluster.tick()
            if other.gained:
                assert other_table.fires_at is not None
                fired_at = other_table.fires_at
                break
        assert fired_at is not None, "the other worker never took the table over"
        if killed_at >= due + TIMEOUT_GRACE:
            fired_at = due + TIMEOUT_GRACE  # the holder applied it itself, on time
        assert fired_at >= due + TIMEOUT_GRACE - 1e-6, f"kill {k}: the timeout came {due - fired_at:.3f} s early"
        lateness.append(fired_at - (due + TIMEOUT_GRACE))

    async def scenario() -> None:
        for k in range(40):
            await one_kill(k)

    try:
        asyncio.run(scenario())
    finally:
        engine.dispose()
    print(f"{game}: {len(lateness)} kills, the latest timeout {max(lateness):.3f} s late")
    assert max(lateness) <= TTL + EVERY + 1e-6, f"{game}: a timeout came {max(lateness):.3f} s late"
    assert max(lateness) > TTL, "the kills came at moments that show the bound"
    assert min(lateness) == 0.0  # a holder dying early enough hands over before the deadline
