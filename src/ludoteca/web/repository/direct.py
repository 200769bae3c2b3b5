"""SQLite's usual append of a move through the DB-API cursor: the server's hot path.

:meth:`Repository.append_batch <ludoteca.web.repository.store.Repository.append_batch>` sends here
a batch that only adds actions (no seat, notice, status or lease's fence: :func:`bare`). Its two
statements (``INSERT`` the actions, ``UPDATE`` the table's count and time) run with the ``sqlite3``
cursor's ``executemany`` and are committed, without SQLAlchemy's execution around each (a
transaction of one move costs about 40 % of the same through SQLAlchemy Core: docs/web.md, "Speed
against boardgame.io"). Every other write, and every other database, keeps SQLAlchemy Core.
"""

from __future__ import annotations

import contextlib
import sqlite3

from ludoteca.web.codec import dumps
from ludoteca.web.repository.records import AppendRequest, Conflict
from ludoteca.web.repository.schema import actions_t, tables_t

INSERT_ACTION = f"INSERT INTO {actions_t.name} (table_id, seq, seat, action, created_at) VALUES (?, ?, ?, ?, ?)"
ADVANCE = f"UPDATE {tables_t.name} SET n_actions = ?, updated_at = ? WHERE id = ?"


def bare(req: AppendRequest) -> bool:
    """An append of actions alone: no seat, notice or lease's fence, nothing about the status."""
    return (req.status is None and req.result is None and req.expect_status is None and not req.seats
            and not req.replace and not req.notes and req.fence is None)


def append(raw: sqlite3.Connection, batch: list[AppendRequest], now: float) -> None:
    """Store ``batch`` (every request :func:`bare`) in one transaction on ``raw``, or nothing.

    :class:`Conflict` when a table of the batch is no longer stored; ``sqlite3.IntegrityError``
    when an action is already stored at one of these positions. On any error the transaction is
    rolled back before the error goes up."""
    try:
        cur = raw.cursor()
        cur.executemany(INSERT_ACTION, [(req.table_id, req.first_seq + k, seat, dumps(action), now)
                                        for req in batch for k, (seat, action) in enumerate(req.actions)])
        cur.executemany(ADVANCE, [(req.first_seq + len(req.actions), now, req.table_id) for req in batch])
        if cur.rowcount != len(batch):
            raise Conflict("a table of this batch is no longer stored")
        raw.commit()
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            raw.rollback()
        raise
