"""The lab's runs in storage (``/lab``, web/labs/): one row per run asked for in the browser.

The row is the run's queue entry and its record: who asked, what (the validated request), its
state (``queued`` → ``running`` → ``done`` / ``failed`` / ``cancelled``; ``cancelling`` while a
worker stops it), the games done so far and the worker playing it, which writes a heartbeat
(``beat_at``) with its progress. The games, the report and the downloads live in the run's folder
(the server's data folder, ``lab/<id>``). Every worker of a server shares the queue: a worker takes
a queued run with a conditional update (only one wins), and a run whose worker stopped beating is
queued again (the lab resumes a run where it stopped).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Column, Float, Integer, String, Table, Text, func, insert, select, update
from sqlalchemy.engine import Engine

from ludoteca.web.repository.schema import metadata

QUEUED = "queued"
RUNNING = "running"
CANCELLING = "cancelling"
DONE = "done"
FAILED = "failed"
CANCELLED = "cancelled"
ACTIVE = (QUEUED, RUNNING, CANCELLING)
"""The states of a run not yet over."""

lab_runs_t = Table(
    "ludo_lab_runs", metadata,
    Column("id", String(32), primary_key=True),
    Column("account_id", Integer, nullable=False, index=True),
    Column("owner", String(64), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("game", String(32), nullable=False),
    Column("request", Text, nullable=False),
    Column("lang", String(8), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("total", Integer, nullable=False),
    Column("done", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    Column("beat_at", Float, nullable=True),
    Column("worker", String(64), nullable=True),
    Column("message", Text, nullable=True),
)


def _row(r: Any) -> dict[str, Any]:
    data = dict(r._mapping)
    data["request"] = json.loads(data["request"])
    return data


def create_run(engine: Engine, run: dict[str, Any]) -> None:
    """Store a new queued run (``run``: the columns, ``request`` as a dict)."""
    values = {**run, "request": json.dumps(run["request"], separators=(",", ":")), "status": QUEUED, "done": 0}
    with engine.begin() as conn:
        conn.execute(insert(lab_runs_t).values(**values))


def get_run(engine: Engine, run_id: str) -> dict[str, Any] | None:
    with engine.connect() as conn:
        r = conn.execute(select(lab_runs_t).where(lab_runs_t.c.id == run_id)).first()
    return _row(r) if r is not None else None


def list_runs(engine: Engine, limit: int = 50) -> list[dict[str, Any]]:
    """The most recent runs, newest first."""
    with engine.connect() as conn:
        rows = conn.execute(select(lab_runs_t).order_by(lab_runs_t.c.created_at.desc()).limit(limit)).all()
    return [_row(r) for r in rows]


def active_count(engine: Engine, account_id: int | None = None) -> int:
    """Runs not over (queued, running, being cancelled): the server's, or one account's."""
    query = select(func.count()).select_from(lab_runs_t).where(lab_runs_t.c.status.in_(ACTIVE))
    if account_id is not None:
        query = query.where(lab_runs_t.c.account_id == account_id)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


def claim_next(engine: Engine, worker: str, now: float) -> dict[str, Any] | None:
    """The oldest queued run, now ``running`` on ``worker`` (None when none is queued, or another
    worker took it first)."""
    with engine.begin() as conn:
        r = conn.execute(select(lab_runs_t.c.id).where(lab_runs_t.c.status == QUEUED)
                         .order_by(lab_runs_t.c.created_at).limit(1)).first()
        if r is None:
            return None
        taken = conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == r.id, lab_runs_t.c.status == QUEUED)
                             .values(status=RUNNING, worker=worker, started_at=now, beat_at=now))
        if taken.rowcount != 1:
            return None
        row = conn.execute(select(lab_runs_t).where(lab_runs_t.c.id == r.id)).first()
    return _row(row) if row is not None else None


def beat(engine: Engine, run_id: str, done: int, now: float) -> str | None:
    """Record a running run's progress; its state now (``cancelling``: its owner asked it to stop)."""
    with engine.begin() as conn:
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id, lab_runs_t.c.status.in_(ACTIVE))
                     .values(done=done, beat_at=now))
        status = conn.execute(select(lab_runs_t.c.status).where(lab_runs_t.c.id == run_id)).scalar()
    return str(status) if status is not None else None


def finish(engine: Engine, run_id: str, status: str, done: int, now: float, message: str | None = None) -> None:
    with engine.begin() as conn:
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id)
                     .values(status=status, done=done, finished_at=now, beat_at=now, message=message))


def cancel(engine: Engine, run_id: str, now: float) -> str | None:
    """Stop a run: a queued one is cancelled at once, a running one is marked ``cancelling`` (its
    worker stops it). Returns the run's state afterwards (None: no such run)."""
    with engine.begin() as conn:
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id, lab_runs_t.c.status == QUEUED)
                     .values(status=CANCELLED, finished_at=now))
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id, lab_runs_t.c.status == RUNNING)
                     .values(status=CANCELLING))
        status = conn.execute(select(lab_runs_t.c.status).where(lab_runs_t.c.id == run_id)).scalar()
    return str(status) if status is not None else None


def requeue_stale(engine: Engine, before: float) -> int:
    """Runs whose worker stopped beating before ``before`` (it died or the server restarted): a running
    one is queued again (it resumes where it stopped), one being cancelled is cancelled."""
    stale = lab_runs_t.c.beat_at < before
    with engine.begin() as conn:
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.status == CANCELLING, stale)
                     .values(status=CANCELLED, finished_at=before))
        moved = conn.execute(update(lab_runs_t).where(lab_runs_t.c.status == RUNNING, stale)
                             .values(status=QUEUED, worker=None))
    return int(moved.rowcount or 0)


def release(engine: Engine, run_id: str, now: float) -> None:
    """A worker stopping (the server shuts down) gives its run back: queued again (it resumes where it
    stopped), or cancelled when its owner was cancelling it."""
    with engine.begin() as conn:
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id, lab_runs_t.c.status == CANCELLING)
                     .values(status=CANCELLED, finished_at=now))
        conn.execute(update(lab_runs_t).where(lab_runs_t.c.id == run_id, lab_runs_t.c.status == RUNNING)
                     .values(status=QUEUED, worker=None))
