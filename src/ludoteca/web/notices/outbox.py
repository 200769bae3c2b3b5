"""The notices waiting to be sent: rows of ``ludo_notice_outbox`` shared by every worker.

A row is one notice for one channel of one account. :meth:`Outbox.claim` hands a batch of due rows
to one worker: a row is claimed with a conditional UPDATE (``pending``, due, and no live claim), so
two workers never claim the same row; a claim lasts :data:`CLAIM_FOR` seconds, so the rows of a worker
killed while sending are claimed again once it expires. :meth:`Outbox.sent` marks a row sent only while
its claim is still this worker's; :meth:`Outbox.retry` puts it back with a later ``not_before``
(backoff) until :data:`MAX_ATTEMPTS`, then marks it ``failed``. Sent and failed rows are deleted after
:data:`KEEP`. Synchronous storage calls: run them through ``lobby.db`` or a thread.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Row

from ludoteca.web.notices.prefs import reading
from ludoteca.web.repository.notices import outbox_t, table_hooks_t
from ludoteca.web.repository.store import Repository

PENDING, SENT, FAILED = "pending", "sent", "failed"
CLAIM_FOR = 120.0
"""Seconds a claim lasts: longer than any send's timeouts (a row is retried only after its claim ends)."""
MAX_ATTEMPTS = 6
BACKOFF = 30.0
"""The first retry's delay in seconds; each next one doubles it (30 s, 1 min, 2 min, 4 min, 8 min)."""
BATCH = 100
KEEP = 7 * 24 * 3600.0


@dataclass(frozen=True)
class Row_:
    """One claimed row."""

    id: int
    account_id: int
    channel: str
    kind: str
    table_id: str
    game: str
    seat: int
    player: str
    due: float | None
    created_at: float
    attempts: int
    seq: int | None = None


def _row(r: Row[Any]) -> Row_:
    return Row_(id=int(r.id), account_id=int(r.account_id), channel=r.channel, kind=r.kind, table_id=r.table_id,
                game=r.game, seat=int(r.seat), player=r.player, due=r.due, created_at=r.created_at,
                attempts=int(r.attempts), seq=r.seq)


def backoff(attempts: int) -> float:
    """Seconds before the next try after ``attempts`` failed ones."""
    return BACKOFF * 2 ** max(0, attempts - 1)


class Outbox:
    """The outbox in ``repo``'s database."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    def add(self, rows: list[dict[str, Any]], conn: Connection | None = None) -> None:
        """Store rows (the columns of :data:`outbox_t` but the bookkeeping ones), pending; on ``conn``,
        in the caller's transaction. A row stored already (the same table, ``seq``, seat, event, account
        and channel: ``ludo_notice_outbox_once``) is not stored again."""
        if not rows:
            return
        full = [dict(r, status=PENDING, attempts=0) for r in rows]
        dialect = self.repo.engine.dialect.name
        q: Any = insert(outbox_t)
        if dialect == "postgresql":
            q = postgresql.insert(outbox_t).on_conflict_do_nothing()
        elif dialect == "sqlite":
            q = sqlite.insert(outbox_t).on_conflict_do_nothing()
        if conn is not None:
            conn.execute(q, full)
            return
        with self.repo.engine.begin() as own:
            own.execute(q, full)

    def hook(self, table_id: str) -> tuple[str, str] | None:
        """A table's own webhook and its language (None: it has none)."""
        with self.repo.engine.connect() as conn:
            found = conn.execute(select(table_hooks_t.c.url, table_hooks_t.c.lang)
                                 .where(table_hooks_t.c.table_id == table_id)).first()
        return (str(found.url), str(found.lang)) if found is not None else None

    def hooked(self, table_ids: list[str], conn: Connection | None = None) -> set[str]:
        """Which of the tables have a webhook of their own."""
        if not table_ids:
            return set()
        with reading(self.repo.engine, conn) as c:
            return {str(t) for t in c.execute(select(table_hooks_t.c.table_id)
                                              .where(table_hooks_t.c.table_id.in_(table_ids))).scalars()}

    def claim(self, worker: str, now: float, limit: int = BATCH) -> tuple[str, list[Row_]]:
        """Due rows, claimed for ``worker`` until ``now + CLAIM_FOR``: (the claim's own token, the rows).
        The token (the worker's id and a random part) is what :meth:`sent` and :meth:`retry` check."""
        claim = f"{worker[:40]}/{secrets.token_hex(6)}"
        free = and_(outbox_t.c.status == PENDING, outbox_t.c.not_before <= now,
                    or_(outbox_t.c.claimed_until.is_(None), outbox_t.c.claimed_until < now))
        with self.repo.engine.begin() as conn:
            ids = [int(i) for i in conn.execute(select(outbox_t.c.id).where(free)
                                                .order_by(outbox_t.c.not_before).limit(limit)).scalars()]
            if not ids:
                return claim, []
            # the same conditions again: a row another worker claimed meanwhile is left to it
            conn.execute(update(outbox_t).where(outbox_t.c.id.in_(ids), free)
                         .values(claimed_by=claim, claimed_until=now + CLAIM_FOR))
        with self.repo.engine.connect() as conn:
            rows = conn.execute(select(outbox_t).where(outbox_t.c.id.in_(ids), outbox_t.c.claimed_by == claim,
                                                       outbox_t.c.status == PENDING)
                                .order_by(outbox_t.c.id))
            return claim, [_row(r) for r in rows]

    def sent(self, claim: str, ids: list[int], now: float) -> int:
        """Mark rows sent (those still held by the claim ``claim``); how many were."""
        with self.repo.engine.begin() as conn:
            done = conn.execute(update(outbox_t).where(outbox_t.c.id.in_(ids), outbox_t.c.claimed_by == claim,
                                                       outbox_t.c.status == PENDING)
                                .values(status=SENT, done_at=now, claimed_until=None))
            return int(done.rowcount)

    def drop(self, claim: str, ids: list[int], now: float, reason: str) -> None:
        """Rows that will never be sent (the channel was turned off, the subscription is gone)."""
        with self.repo.engine.begin() as conn:
            conn.execute(update(outbox_t).where(outbox_t.c.id.in_(ids), outbox_t.c.claimed_by == claim,
                                                outbox_t.c.status == PENDING)
                         .values(status=FAILED, done_at=now, error=reason[:500], claimed_until=None))

    def hold(self, claim: str, ids: list[int], until: float) -> None:
        """Rows claimed during the account's quiet hours: due again when they end (no attempt counted)."""
        with self.repo.engine.begin() as conn:
            conn.execute(update(outbox_t).where(outbox_t.c.id.in_(ids), outbox_t.c.claimed_by == claim,
                                                outbox_t.c.status == PENDING)
                         .values(not_before=until, claimed_until=None))

    def retry(self, claim: str, rows: list[Row_], now: float, error: str) -> None:
        """Rows whose send failed: tried again after :func:`backoff`, or given up after :data:`MAX_ATTEMPTS`."""
        with self.repo.engine.begin() as conn:
            for row in rows:
                attempts = row.attempts + 1
                values: dict[str, Any] = {"attempts": attempts, "error": error[:500], "claimed_until": None}
                if attempts >= MAX_ATTEMPTS:
                    values.update(status=FAILED, done_at=now)
                else:
                    values["not_before"] = now + backoff(attempts)
                conn.execute(update(outbox_t).where(outbox_t.c.id == row.id, outbox_t.c.claimed_by == claim,
                                                    outbox_t.c.status == PENDING).values(**values))

    def prune(self, now: float) -> None:
        with self.repo.engine.begin() as conn:
            conn.execute(delete(outbox_t).where(outbox_t.c.status != PENDING, outbox_t.c.done_at < now - KEEP))

    def rows(self, account_id: int | None = None) -> list[dict[str, Any]]:
        """Every row (of one account): for tests and the operator."""
        q = select(outbox_t).order_by(outbox_t.c.id)
        if account_id is not None:
            q = q.where(outbox_t.c.account_id == account_id)
        with self.repo.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(q)]

    def mail_times(self, account_ids: list[int], channel: str = "email",
                   conn: Connection | None = None) -> dict[int, tuple[float, float | None]]:
        """Per account: when its last row of ``channel`` was sent (0: never) and when its earliest pending
        one is due (None: none is pending) — what gathers a player's mails into digests."""
        if not account_ids:
            return {}
        mine = and_(outbox_t.c.account_id.in_(account_ids), outbox_t.c.channel == channel)
        sent = (select(outbox_t.c.account_id, func.max(outbox_t.c.done_at))
                .where(mine, outbox_t.c.status == SENT).group_by(outbox_t.c.account_id))
        pending = (select(outbox_t.c.account_id, func.min(outbox_t.c.not_before))
                   .where(mine, outbox_t.c.status == PENDING).group_by(outbox_t.c.account_id))
        with reading(self.repo.engine, conn) as c:
            last = {int(a): float(t or 0.0) for a, t in c.execute(sent)}
            due = {int(a): float(t) for a, t in c.execute(pending)}
        return {a: (last.get(a, 0.0), due.get(a)) for a in account_ids}

    def next_due(self, now: float) -> float | None:
        """When the earliest pending row is due (None: none is pending)."""
        with self.repo.engine.connect() as conn:
            found = conn.execute(select(outbox_t.c.not_before).where(outbox_t.c.status == PENDING)
                                 .order_by(outbox_t.c.not_before).limit(1)).scalar()
        return float(found) if found is not None else None
