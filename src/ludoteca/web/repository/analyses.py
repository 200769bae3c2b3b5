"""The analyses of finished tables and their queue, shared by every worker of the server.

One row per table in ``ludo_analyses``: ``queued`` (requested, waiting for a worker), ``running``
(claimed by a worker until ``claimed_until``; the worker renews its claim while it runs), ``ready``
(``result`` holds the analysis as JSON) or ``failed``. A table is queued at most once: the row's key is
the table. A worker claims a row with one conditional update (``queued``, or ``running`` with an
expired claim: a worker that was killed), so two workers never claim the same row; a worker whose
claim expired and was taken over stores nothing.

The table is declared on the schema's metadata (listed in schema.py's ``TABLE_MODULES``, created with
the others) and :func:`ensure` creates it where a database was made before it existed.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, Float, ForeignKey, String, Table, Text, and_, func, insert, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from ludoteca.web.repository.schema import metadata
from ludoteca.web.repository.store import Repository

QUEUED = "queued"
RUNNING = "running"
READY = "ready"
FAILED = "failed"

analyses_t = Table(
    "ludo_analyses", metadata,
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True),
    Column("status", String(16), nullable=False, index=True),
    Column("requested_at", Float, nullable=False),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_until", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    Column("result", Text, nullable=True),
)

_ensured: set[int] = set()


@dataclass(frozen=True)
class AnalysisRow:
    table_id: str
    status: str
    requested_at: float
    result: dict[str, Any] | None = None


def ensure(repo: Repository) -> None:
    """Create the table where the database predates it (once per engine)."""
    if id(repo.engine) not in _ensured:
        analyses_t.create(repo.engine, checkfirst=True)
        _ensured.add(id(repo.engine))


def _engine(repo: Repository) -> Engine:
    ensure(repo)
    return repo.engine


def request(repo: Repository, table_id: str, now: float | None = None, again: bool = False) -> bool:
    """Queue ``table_id`` unless it already has a row (queued, running, ready); ``again``: a failed
    analysis is queued again. True when this call queued it."""
    now = time.time() if now is None else now
    try:
        with _engine(repo).begin() as conn:
            conn.execute(insert(analyses_t).values(table_id=table_id, status=QUEUED, requested_at=now))
        return True
    except IntegrityError:
        pass
    if not again:
        return False
    with repo.engine.begin() as conn:
        done = conn.execute(update(analyses_t).where(and_(analyses_t.c.table_id == table_id,
                                                          analyses_t.c.status == FAILED))
                            .values(status=QUEUED, requested_at=now, claimed_by=None, claimed_until=None))
        return bool(done.rowcount)


def get(repo: Repository, table_id: str) -> AnalysisRow | None:
    """The table's analysis row (its result parsed when ready), None when never requested."""
    with _engine(repo).connect() as conn:
        row = conn.execute(select(analyses_t.c.status, analyses_t.c.requested_at, analyses_t.c.result)
                           .where(analyses_t.c.table_id == table_id)).first()
    if row is None:
        return None
    result = json.loads(row.result) if row.status == READY and row.result else None
    return AnalysisRow(table_id, row.status, row.requested_at, result)


def claim(repo: Repository, worker: str, lease: float, now: float | None = None) -> str | None:
    """Claim the oldest queued table (or one whose claim expired) for ``lease`` seconds: its id, or
    None when there is nothing to do. One conditional update per try, so a row is claimed once."""
    now = time.time() if now is None else now
    claimable = or_(analyses_t.c.status == QUEUED,
                    and_(analyses_t.c.status == RUNNING, analyses_t.c.claimed_until < now))
    engine = _engine(repo)
    for _try in range(5):
        with engine.connect() as conn:
            found = conn.execute(select(analyses_t.c.table_id).where(claimable)
                                 .order_by(analyses_t.c.requested_at).limit(1)).first()
        if found is None:
            return None
        with engine.begin() as conn:
            done = conn.execute(update(analyses_t).where(and_(analyses_t.c.table_id == found.table_id, claimable))
                                .values(status=RUNNING, claimed_by=worker, claimed_until=now + lease))
        if done.rowcount:
            return str(found.table_id)
    return None  # others took every row we saw: the next round will look again


def renew(repo: Repository, table_id: str, worker: str, lease: float, now: float | None = None) -> bool:
    """Extend ``worker``'s claim on ``table_id``; False when the claim is no longer its own."""
    now = time.time() if now is None else now
    with _engine(repo).begin() as conn:
        done = conn.execute(update(analyses_t).where(and_(
            analyses_t.c.table_id == table_id, analyses_t.c.claimed_by == worker, analyses_t.c.status == RUNNING))
            .values(claimed_until=now + lease))
        return bool(done.rowcount)


def finish(repo: Repository, table_id: str, worker: str, result: dict[str, Any] | None,
           now: float | None = None) -> bool:
    """Store ``worker``'s analysis of ``table_id`` (None: it failed). False when its claim had been
    taken over (the other worker's result counts)."""
    now = time.time() if now is None else now
    values: dict[str, Any] = {"status": READY, "result": json.dumps(result, separators=(",", ":"))} \
        if result is not None else {"status": FAILED}
    with _engine(repo).begin() as conn:
        done = conn.execute(update(analyses_t).where(and_(
            analyses_t.c.table_id == table_id, analyses_t.c.claimed_by == worker, analyses_t.c.status == RUNNING))
            .values(finished_at=now, claimed_until=None, **values))
        return bool(done.rowcount)


def release(repo: Repository, worker: str) -> int:
    """Give back ``worker``'s claims (a worker stopping mid-analysis): its tables are queued again at
    once instead of waiting for the claims to expire. The number given back."""
    with _engine(repo).begin() as conn:
        done = conn.execute(update(analyses_t).where(and_(analyses_t.c.claimed_by == worker,
                                                          analyses_t.c.status == RUNNING))
                            .values(status=QUEUED, claimed_by=None, claimed_until=None))
        return int(done.rowcount or 0)


def pending(repo: Repository) -> int:
    """Tables waiting for a worker (queued)."""
    with _engine(repo).connect() as conn:
        return int(conn.execute(select(func.count()).select_from(analyses_t)
                                .where(analyses_t.c.status == QUEUED)).scalar_one())


__all__ = ["FAILED", "QUEUED", "READY", "RUNNING", "AnalysisRow", "analyses_t", "claim", "ensure", "finish",
           "get", "pending", "release", "renew", "request"]
