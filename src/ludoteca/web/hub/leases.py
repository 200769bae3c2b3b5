"""One writer per table: leases with fencing tokens, in the repository's database.

Several workers may serve the same table; only the one holding the table's **lease** commits its
actions and runs its AI seats and timers. A lease is one row of ``ludo_leases``::

    table_id (key) | owner (worker id, NULL when released) | token (fencing token) | expires_at

- :meth:`LeaseStore.acquire` takes the lease when nobody holds it, it was released, it has
  expired, or the caller already holds it; **every successful acquire adds one to the token**.
  It is one conditional ``INSERT`` or ``UPDATE … WHERE expired``, so of two workers acquiring at
  once exactly one wins (PostgreSQL re-checks the ``WHERE`` on the row the other committed;
  SQLite has one writer at a time).
- :meth:`LeaseStore.renew` pushes ``expires_at`` on while the holder works (every ttl/3, say);
  :meth:`LeaseStore.release` hands the table over at once (graceful shutdown);
  :meth:`LeaseStore.steal_expired` takes over the tables of a worker that stopped renewing.
- **Fencing.** A lease can expire under a holder that is still alive (a long pause, a cut
  network), and another worker then takes the table with a higher token. The old holder must not
  write any more, whatever its clock says: every write of a table's actions runs, in its own
  transaction, :func:`check_fence` with the token its holder got, which is
  ``UPDATE ludo_leases SET token = token WHERE table_id = :t AND token = :token AND owner IS NOT
  NULL``. No matching row (a newer token, or released) raises :class:`FencedOut` and the
  transaction rolls back: the stale write is refused. The row stays locked until the transaction
  ends, so a takeover waits for a write under way and then sees it; a takeover that committed
  first makes the write fail. Correctness thus rests on the database alone; clocks (each worker's
  ``time.time()``) only decide *when* an expired lease may be taken over, so workers' clocks
  should agree within a small part of the ttl (NTP).

Rows are never deleted (a new row would start the token again at 1, below what a stale holder
may still have). Works on PostgreSQL and SQLite (the repository's engine or its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    MetaData,
    String,
    Table,
    and_,
    bindparam,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

lease_metadata = MetaData()

leases_t = Table(
    "ludo_leases", lease_metadata,
    Column("table_id", String(64), primary_key=True),
    Column("owner", String(128), nullable=True),
    Column("token", BigInteger, nullable=False),
    Column("expires_at", Float, nullable=False, index=True),
)

MAX_TTL = 3600.0
"""Longest lease, in seconds."""
MAX_STEAL = 1000
"""Most tables one :meth:`LeaseStore.steal_expired` call takes over."""


class FencedOut(Exception):
    """A write with a fencing token that is no longer the table's: another worker holds it now."""

    def __init__(self, table: str, token: int) -> None:
        super().__init__(f"table {table}: the lease with token {token} is no longer held (another worker took over)")
        self.table = table
        self.token = token


RENEW_CHUNK = 500
"""Leases renewed by one statement at most (:meth:`LeaseStore.renew_all`)."""


@dataclass(frozen=True)
class Lease:
    """A lease as its holder got it."""

    table: str
    owner: str
    token: int
    expires_at: float
    previous: str | None = field(default=None, compare=False)
    """Taken over from another worker that let it expire (it died or is cut off): that worker."""


def _check(table: str, worker: str, ttl: float | None = None) -> None:
    if not isinstance(table, str) or not 0 < len(table) <= 64:
        raise ValueError("a table id is 1 to 64 characters")
    if not isinstance(worker, str) or not 0 < len(worker) <= 128:
        raise ValueError("a worker id is 1 to 128 characters")
    if ttl is not None and not 0 < ttl <= MAX_TTL:
        raise ValueError(f"a lease's ttl is more than 0 and at most {MAX_TTL:g} seconds")


_FENCE = (update(leases_t)
          .where(and_(leases_t.c.table_id == bindparam("f_table"), leases_t.c.token == bindparam("f_token"),
                      leases_t.c.owner.is_not(None)))
          .values(token=leases_t.c.token))
"""The fencing check: touches (and locks) the lease row only if the token is still the table's."""


def check_fence(conn: Connection, table: str, token: int) -> None:
    """Inside the caller's write transaction: raise :class:`FencedOut` unless ``token`` is still
    ``table``'s lease token (and the lease is held). Locks the lease row until the transaction
    ends, so no takeover commits in between."""
    check_fences(conn, [(table, token)])


def check_fences(conn: Connection, fences: Iterable[tuple[str, int]]) -> None:
    """:func:`check_fence` for several tables at once (a group commit); FencedOut names the first
    stale one."""
    wanted = list(fences)
    if not wanted:
        return
    done = conn.execute(_FENCE, [{"f_table": t, "f_token": k} for t, k in wanted])
    if done.rowcount == len(wanted):
        return
    for table, token in wanted:  # which one (rare: only when something is wrong)
        row = conn.execute(select(leases_t.c.token, leases_t.c.owner).where(leases_t.c.table_id == table)).first()
        if row is None or row.token != token or row.owner is None:
            raise FencedOut(table, token)
    raise FencedOut(*wanted[0])


class LeaseStore:
    """The leases of the tables, in ``engine``'s database (``ludo_leases`` is created if missing).
    ``clock`` gives the time in seconds (tests move it by hand)."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock
        try:
            lease_metadata.create_all(engine)
        except (OperationalError, ProgrammingError, IntegrityError):
            # another worker created it at the same moment: it must be there now
            lease_metadata.create_all(engine)

    def acquire(self, table: str, worker: str, ttl: float) -> Lease | None:
        """Take ``table``'s lease for ``ttl`` seconds with a new token; None if another worker
        holds it and it has not expired."""
        _check(table, worker, ttl)
        now = self.clock()
        expires = now + ttl
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(leases_t).values(table_id=table, owner=worker, token=1, expires_at=expires))
            return Lease(table, worker, 1, expires)
        except IntegrityError:
            pass  # the row exists: take it over if it is free
        with self.engine.begin() as conn:
            # who had it: another worker whose lease expired (a hint for the caller, Lease.previous)
            had = conn.execute(select(leases_t.c.owner, leases_t.c.expires_at)
                               .where(leases_t.c.table_id == table)).first()
            done = conn.execute(
                update(leases_t)
                .where(and_(leases_t.c.table_id == table,
                            or_(leases_t.c.owner.is_(None), leases_t.c.owner == worker, leases_t.c.expires_at <= now)))
                .values(owner=worker, token=leases_t.c.token + 1, expires_at=expires))
            if done.rowcount != 1:
                return None
            token = conn.execute(select(leases_t.c.token).where(leases_t.c.table_id == table)).scalar_one()
        previous = had.owner if had is not None and had.owner not in (None, worker) and had.expires_at <= now else None
        return Lease(table, worker, int(token), expires, previous)

    def renew(self, lease: Lease, ttl: float) -> Lease | None:
        """The same lease (same token) until ``ttl`` seconds from now; None if it was lost (another
        worker acquired it, or it was released). A lease that expired but that nobody took is
        renewed: no one wrote with a newer token meanwhile."""
        _check(lease.table, lease.owner, ttl)
        expires = self.clock() + ttl
        with self.engine.begin() as conn:
            done = conn.execute(
                update(leases_t)
                .where(and_(leases_t.c.table_id == lease.table, leases_t.c.owner == lease.owner,
                            leases_t.c.token == lease.token))
                .values(expires_at=expires))
        return Lease(lease.table, lease.owner, lease.token, expires) if done.rowcount == 1 else None

    def renew_all(self, leases: Iterable[Lease], ttl: float) -> dict[str, Lease | None]:
        """:meth:`renew` for many leases of one owner with one statement per :data:`RENEW_CHUNK`
        leases (a worker renews every lease it holds each round: one UPDATE per table would load
        the storage thread that also commits the moves). Table id -> the renewed lease, or None
        for a lease that was lost."""
        held = list(leases)
        out: dict[str, Lease | None] = {lease.table: None for lease in held}
        for owner in {lease.owner for lease in held}:
            mine = [lease for lease in held if lease.owner == owner]
            for start in range(0, len(mine), RENEW_CHUNK):
                chunk = mine[start:start + RENEW_CHUNK]
                for lease in chunk:
                    _check(lease.table, lease.owner, ttl)
                expires = self.clock() + ttl
                with self.engine.begin() as conn:
                    rows = conn.execute(
                        update(leases_t)
                        .where(and_(leases_t.c.owner == owner,
                                    tuple_(leases_t.c.table_id, leases_t.c.token).in_(
                                        [(lease.table, lease.token) for lease in chunk])))
                        .values(expires_at=expires)
                        .returning(leases_t.c.table_id)).all()
                renewed = {row[0] for row in rows}
                for lease in chunk:
                    if lease.table in renewed:
                        out[lease.table] = Lease(lease.table, lease.owner, lease.token, expires)
        return out

    def release(self, lease: Lease) -> bool:
        """Give the table up now (another worker may acquire it at once); False if it was not held
        any more. The token is kept, so the next holder's is higher."""
        with self.engine.begin() as conn:
            done = conn.execute(
                update(leases_t)
                .where(and_(leases_t.c.table_id == lease.table, leases_t.c.owner == lease.owner,
                            leases_t.c.token == lease.token))
                .values(owner=None, expires_at=0.0))
        return done.rowcount == 1

    def steal_expired(self, worker: str, ttl: float, limit: int = 100) -> list[Lease]:
        """Take over up to ``limit`` tables whose holder let the lease expire (a worker that
        died); each with a new token. Released leases are not taken here (their tables were
        handed over on purpose: whoever needs one acquires it)."""
        _check("-", worker, ttl)
        limit = max(0, min(limit, MAX_STEAL))
        now = self.clock()
        with self.engine.connect() as conn:
            expired = conn.execute(
                select(leases_t.c.table_id, leases_t.c.owner)
                .where(and_(leases_t.c.owner.is_not(None), leases_t.c.owner != worker, leases_t.c.expires_at <= now))
                .order_by(leases_t.c.expires_at).limit(limit)).all()
        taken: list[Lease] = []
        expires = now + ttl
        for table, previous in expired:
            with self.engine.begin() as conn:
                done = conn.execute(
                    update(leases_t)
                    .where(and_(leases_t.c.table_id == table, leases_t.c.owner.is_not(None),
                                leases_t.c.expires_at <= now))
                    .values(owner=worker, token=leases_t.c.token + 1, expires_at=expires))
                if done.rowcount == 1:
                    token = conn.execute(select(leases_t.c.token).where(leases_t.c.table_id == table)).scalar_one()
                    taken.append(Lease(table, worker, int(token), expires, previous))
        return taken

    def free_among(self, tables: Iterable[str]) -> list[str]:
        """Which of ``tables`` nobody holds now: no lease row yet, released, or expired (a worker
        takes these over, cluster.py)."""
        wanted = list(dict.fromkeys(tables))
        if not wanted:
            return []
        now = self.clock()
        with self.engine.connect() as conn:
            held = set(conn.execute(
                select(leases_t.c.table_id)
                .where(and_(leases_t.c.table_id.in_(wanted), leases_t.c.owner.is_not(None),
                            leases_t.c.expires_at > now))).scalars())
        return [t for t in wanted if t not in held]

    def current(self, table: str) -> Lease | None:
        """Who holds ``table`` now (None: nobody, released or expired)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(leases_t).where(leases_t.c.table_id == table)).first()
        if row is None or row.owner is None or row.expires_at <= self.clock():
            return None
        return Lease(row.table_id, row.owner, int(row.token), float(row.expires_at))
