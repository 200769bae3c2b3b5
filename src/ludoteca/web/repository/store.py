"""Persistent tables through SQLAlchemy Core: SQLite by default, PostgreSQL with a URL.

The tables are declared in web/repository/schema.py (which says how a new part of the server adds
its own), the data read and written in records.py; accounts and sessions in account_store.py.

A table is rebuilt by replaying its actions, so the actions are the source of truth. Every
statement is built with SQLAlchemy Core (compiled once and cached by SQLAlchemy), so the same
code runs on every database; one exception, the server's hot path on SQLite: a move's two
statements run through the DB-API cursor (:meth:`Repository._append_direct`).

:class:`Repository` is synchronous. :class:`GroupCommit` (group_commit.py) is its asynchronous
front for the server's hot path: appends that arrive while a commit runs are committed together in
the next transaction, and when that transaction fails each one is retried alone.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    and_,
    bindparam,
    create_engine,
    event,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError

from ludoteca.web.codec import dumps as _dumps_fast
from ludoteca.web.hub.leases import FencedOut, check_fences
from ludoteca.web.repository import direct
from ludoteca.web.repository.account_store import AccountStore, name_key
from ludoteca.web.repository.deadlines import deadlines_t
from ludoteca.web.repository.group_commit import GroupCommit
from ludoteca.web.repository.records import (
    AccountData,
    AppendRequest,
    Conflict,
    DuplicateName,
    NoteData,
    SeatData,
    SessionData,
    TableData,
    TableDelta,
)
from ludoteca.web.repository.schema import (
    NOTES_LOADED,
    OPEN,
    PLAYING,
    WAITING,
    accounts_t,
    actions_t,
    admin_log_t,
    attempts_t,
    create_schema,
    metadata,
    notes_t,
    rating_history_t,
    ratings_t,
    seats_t,
    sessions_t,
    tables_t,
)

__all__ = [
    "NOTES_LOADED", "OPEN", "PLAYING", "SQLITE_FILE", "WAITING", "AccountData", "AppendRequest", "Conflict",
    "DuplicateName", "GroupCommit", "NoteData", "Repository", "SeatData", "SessionData", "TableData", "TableDelta",
    "accounts_t", "actions_t", "admin_log_t", "attempts_t", "database_url", "metadata", "name_key", "notes_t",
    "rating_history_t", "ratings_t", "seats_t", "sessions_t", "tables_t",
]

SQLITE_FILE = "ludoteca.sqlite3"

_INSERT_ACTION = insert(actions_t)
_ADVANCE = (
    update(tables_t).where(tables_t.c.id == bindparam("t_id"))
    .values(n_actions=bindparam("n_actions"), updated_at=bindparam("now"))
)
"""The usual end of an append: the table's action count and time (one executemany per batch)."""
_TAKE_SEAT = (
    update(seats_t)
    .where(seats_t.c.table_id == bindparam("t_id"), seats_t.c.seat == bindparam("t_seat"), seats_t.c.kind == OPEN)
    .values(kind=bindparam("kind"), level=bindparam("level"), name=bindparam("name"),
            token_hash=bindparam("token_hash"), account_id=bindparam("account_id"))
)
_REPLACE_VALUES: dict[str, Any] = {"kind": bindparam("kind"), "level": bindparam("level"), "name": bindparam("name"),
                   "token_hash": bindparam("token_hash"), "away_since": None,
                   "account_id": bindparam("account_id")}
_REPLACE_SEAT = (
    update(seats_t)
    .where(seats_t.c.table_id == bindparam("t_id"), seats_t.c.seat == bindparam("t_seat"),
           seats_t.c.token_hash == bindparam("old_hash"))
    .values(**_REPLACE_VALUES)
)
_REPLACE_TOKENLESS_SEAT = (
    update(seats_t)
    .where(seats_t.c.table_id == bindparam("t_id"), seats_t.c.seat == bindparam("t_seat"),
           seats_t.c.token_hash.is_(None))
    .values(**_REPLACE_VALUES)
)
"""A seat changed by the table's life (resigned, left, handed to an AI, taken back): only while it
still holds the token it had when the change was decided."""


def database_url(data_dir: str | Path | None, url: str | None) -> str:
    """The SQLAlchemy URL to use: ``url`` if given, else a SQLite file in ``data_dir``."""
    if url:
        return url
    directory = Path(data_dir or "data")
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(directory / SQLITE_FILE).resolve()}"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


def _seat(row: Row[Any]) -> SeatData:
    return SeatData(kind=row.kind, level=row.level, name=row.name, token_hash=row.token_hash,
                    away_since=row.away_since, account_id=row.account_id)


def _note(row: Row[Any]) -> NoteData:
    return NoteData(kind=row.kind, channel=row.channel, at_seq=row.at_seq, data=json.loads(row.data),
                    created_at=row.created_at)


def _note_rows(table_id: str, notes: list[NoteData]) -> list[dict[str, Any]]:
    return [{"table_id": table_id, "kind": n.kind, "channel": n.channel, "at_seq": n.at_seq, "data": _dumps(n.data),
             "created_at": n.created_at or time.time()} for n in notes]

class Repository(AccountStore):
    """Synchronous storage of tables, seats and actions."""

    def __init__(self, url: str, echo: bool = False) -> None:
        self.url = url
        kwargs: dict[str, Any] = {"echo": echo}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            kwargs["pool_pre_ping"] = True
        self.engine: Engine = create_engine(url, **kwargs)
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        create_schema(self.engine)
        self._writer: Connection | None = None
        """The connection of :meth:`append_batch` (the hot path), kept open between commits and
        replaced after any failure; appends never run concurrently (one storage thread)."""

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self._drop_writer()
        self.engine.dispose()

    def _writer_connection(self) -> Connection:
        conn = self._writer
        if conn is None or conn.closed or conn.invalidated:
            conn = self._writer = self.engine.connect()
        return conn

    def _drop_writer(self) -> None:
        conn, self._writer = self._writer, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    # --- writes ------------------------------------------------------------------------
    def create_table(self, data: TableData) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(tables_t).values(
                id=data.id, game=data.game, options=_dumps(data.options), seed=data.seed,
                status=data.status, created_at=data.created_at, updated_at=data.updated_at,
                n_actions=0, result=None, rematch_id=None, rematch_of=data.rematch_of,
                unlisted=data.unlisted, settings=_dumps(data.settings) if data.settings else None,
            ))
            conn.execute(insert(seats_t), [
                {"table_id": data.id, "seat": i, "kind": s.kind, "level": s.level, "name": s.name,
                 "token_hash": s.token_hash, "account_id": s.account_id}
                for i, s in enumerate(data.seats)
            ])

    def append_batch(self, batch: list[AppendRequest]) -> None:
        """Several tables' appends in one transaction (group commit): all stored, or none.

        A seat taken by someone else, a table whose status is no longer ``expect_status``, or a
        duplicate sequence number (two writers) makes the whole transaction fail (:class:`Conflict`
        or the database's integrity error): nothing is stored."""
        now = time.time()
        conn = self._writer_connection()
        if self.dialect == "sqlite" and all(direct.bare(req) for req in batch):
            self._append_direct(conn, batch, now)
            return
        rows = [
            {"table_id": req.table_id, "seq": req.first_seq + k, "seat": seat, "action": _dumps_fast(action),
             "created_at": now}
            for req in batch for k, (seat, action) in enumerate(req.actions)
        ]
        try:
            with conn.begin():
                fences = [req.fence for req in batch if req.fence is not None]
                if fences:
                    check_fences(conn, fences)
                self._append(conn, batch, rows, now)
        except IntegrityError as exc:  # another worker stored an action at one of these seqs first
            self._drop_writer()
            raise Conflict(f"another worker stored the table's next action first ({type(exc.orig).__name__})") \
                from exc
        except FencedOut as exc:
            self._drop_writer()
            raise Conflict(str(exc)) from exc
        except BaseException:
            self._drop_writer()  # a fresh connection for the next try (e.g. the server went away)
            raise

    def _append_direct(self, conn: Connection, batch: list[AppendRequest], now: float) -> None:
        """SQLite, a batch that only adds actions (the usual move): its two statements through
        the DB-API connection (direct.py), in one transaction; the same errors as :meth:`_append`."""
        try:
            direct.append(cast(sqlite3.Connection, conn.connection.driver_connection), batch, now)
        except BaseException as exc:
            self._drop_writer()
            if isinstance(exc, sqlite3.IntegrityError):  # an action already stored at one of these seqs
                raise Conflict(f"another worker stored the table's next action first ({type(exc).__name__})") \
                    from exc
            raise

    def _append(self, conn: Connection, batch: list[AppendRequest], rows: list[dict[str, Any]], now: float) -> None:
        for req in batch:
            self._take_seats(conn, req)
            self._replace_seats(conn, req)
            if req.notes:
                conn.execute(insert(notes_t), _note_rows(req.table_id, req.notes))
        if rows:
            conn.execute(_INSERT_ACTION, rows)
        plain = [req for req in batch if _plain(req)]
        if plain:  # the usual case, one statement for the whole batch
            done = conn.execute(_ADVANCE, [{"t_id": r.table_id, "n_actions": r.first_seq + len(r.actions),
                                            "now": now} for r in plain])
            if done.rowcount != len(plain):
                raise Conflict("a table of this batch is no longer stored")
        for req in batch:
            if not _plain(req):
                self._advance(conn, req, now)

    @staticmethod
    def _take_seats(conn: Connection, req: AppendRequest) -> None:
        for seat, data in req.seats:
            done = conn.execute(_TAKE_SEAT, {"t_id": req.table_id, "t_seat": seat, "kind": data.kind,
                                             "level": data.level, "name": data.name,
                                             "token_hash": data.token_hash, "account_id": data.account_id})
            if done.rowcount != 1:
                raise Conflict(f"table {req.table_id}: seat {seat} is no longer open")

    @staticmethod
    def _replace_seats(conn: Connection, req: AppendRequest) -> None:
        for seat, data, old_hash in req.replace:
            values = {"t_id": req.table_id, "t_seat": seat, "kind": data.kind, "level": data.level,
                      "name": data.name, "token_hash": data.token_hash, "account_id": data.account_id}
            if old_hash is None:
                done = conn.execute(_REPLACE_TOKENLESS_SEAT, values)
            else:
                done = conn.execute(_REPLACE_SEAT, {**values, "old_hash": old_hash})
            if done.rowcount != 1:
                raise Conflict(f"table {req.table_id}: seat {seat} changed meanwhile")

    def add_notes(self, table_id: str, notes: list[NoteData]) -> None:
        """Store chat lines (a table's notices go with its changes: :class:`AppendRequest`)."""
        with self.engine.begin() as conn:
            conn.execute(insert(notes_t), _note_rows(table_id, notes))

    def set_away(self, table_id: str, seat: int, away_since: float | None) -> None:
        """Since when the seat's player has had no connection (None: connected now)."""
        with self.engine.begin() as conn:
            conn.execute(update(seats_t).where(seats_t.c.table_id == table_id, seats_t.c.seat == seat)
                         .values(away_since=away_since))

    def notes_of(self, table_id: str, limit: int = NOTES_LOADED) -> list[NoteData]:
        """The most recent ``limit`` notes of a table, oldest first."""
        with self.engine.connect() as conn:
            return self._notes(conn, table_id, limit)

    @staticmethod
    def _notes(conn: Connection, table_id: str, limit: int) -> list[NoteData]:
        q = select(notes_t).where(notes_t.c.table_id == table_id).order_by(notes_t.c.id.desc()).limit(limit)
        return [_note(r) for r in reversed(list(conn.execute(q)))]

    @staticmethod
    def _advance(conn: Connection, req: AppendRequest, now: float) -> None:
        values: dict[str, Any] = {"n_actions": req.first_seq + len(req.actions), "updated_at": now}
        if req.status is not None:
            values["status"] = req.status
        if req.result is not None:
            values["result"] = _dumps(req.result)
        where = tables_t.c.id == req.table_id
        if req.expect_status is not None:
            where = and_(where, tables_t.c.status == req.expect_status)
        done = conn.execute(update(tables_t).where(where).values(**values))
        if done.rowcount != 1:
            raise Conflict(f"table {req.table_id} is no longer {req.expect_status or 'stored'}")

    def checkpoint(self) -> None:
        """SQLite: copy the write-ahead log into the database (PASSIVE: never blocks writers).

        The server turns automatic checkpoints off and calls this from its storage thread, so
        the fsync of a checkpoint never stalls a move."""
        if self.dialect == "sqlite":
            with self.engine.connect() as conn:
                conn.execute(text("PRAGMA wal_checkpoint(PASSIVE)"))

    def set_status(self, table_id: str, status: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(tables_t).where(tables_t.c.id == table_id)
                         .values(status=status, updated_at=time.time()))

    def expire_waiting(self, before: float, status: str = "expired") -> list[str]:
        """Mark every table still waiting whose last change is older than ``before`` (epoch
        seconds) as ``status``; returns their ids."""
        stamp = time.time()
        with self.engine.begin() as conn:  # one conditional UPDATE: a join committed meanwhile wins
            conn.execute(update(tables_t).where(tables_t.c.status == WAITING, tables_t.c.updated_at < before)
                         .values(status=status, updated_at=stamp))
            rows = conn.execute(select(tables_t.c.id).where(tables_t.c.status == status,
                                                            tables_t.c.updated_at == stamp))
            return [r.id for r in rows]

    def set_rematch(self, table_id: str, rematch_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(tables_t).where(tables_t.c.id == table_id).values(rematch_id=rematch_id))

    # --- reads -------------------------------------------------------------------------
    def load_table(self, table_id: str) -> TableData | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(tables_t).where(tables_t.c.id == table_id)).first()
            if row is None:
                return None
            seats = self._seats(conn, table_id)
            actions = list(conn.execute(
                select(actions_t.c.seq, actions_t.c.seat, actions_t.c.action, actions_t.c.created_at)
                .where(actions_t.c.table_id == table_id).order_by(actions_t.c.seq)))
            notes = self._notes(conn, table_id, NOTES_LOADED)
            last_note = int(conn.execute(select(notes_t.c.id).where(notes_t.c.table_id == table_id)
                                         .order_by(notes_t.c.id.desc()).limit(1)).scalar() or 0)
        for k, a in enumerate(actions):
            if a.seq != k:
                raise ValueError(f"table {table_id}: stored action {k} is missing")
        return TableData(
            id=row.id, game=row.game, options=json.loads(row.options), seed=row.seed, status=row.status,
            created_at=row.created_at, updated_at=row.updated_at, seats=seats,
            actions=[json.loads(a.action) for a in actions],
            action_seats=[a.seat for a in actions],
            action_times=[a.created_at for a in actions],
            result=json.loads(row.result) if row.result else None,
            rematch_id=row.rematch_id, rematch_of=row.rematch_of, unlisted=bool(row.unlisted),
            settings=json.loads(row.settings) if row.settings else {}, notes=notes,
            last_note_id=last_note,
        )

    def delta(self, table_id: str, seq: int, note_id: int) -> TableDelta | None:
        """What a worker holding the table at ``seq`` (and the notes up to ``note_id``) has not
        seen: the actions from ``seq`` on, the notes after ``note_id``, the seats, status and
        result now (None: no such table). A few small indexed reads in one snapshot (REPEATABLE
        READ on PostgreSQL: the status and the actions agree)."""
        with self.engine.connect() as conn:
            if self.dialect == "postgresql":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            conn.begin()
            row = conn.execute(select(tables_t.c.status, tables_t.c.result, tables_t.c.rematch_id,
                                      tables_t.c.n_actions).where(tables_t.c.id == table_id)).first()
            if row is None:
                return None
            actions = list(conn.execute(
                select(actions_t.c.seq, actions_t.c.seat, actions_t.c.action, actions_t.c.created_at)
                .where(actions_t.c.table_id == table_id, actions_t.c.seq >= seq).order_by(actions_t.c.seq)))
            seats = self._seats(conn, table_id)
            notes = list(conn.execute(select(notes_t).where(notes_t.c.table_id == table_id, notes_t.c.id > note_id)
                                      .order_by(notes_t.c.id).limit(NOTES_LOADED)))
        taken = []
        for k, a in enumerate(actions):
            if a.seq != seq + k:
                break  # a gap: read again later
            taken.append(a)
        return TableDelta(
            status=row.status, result=json.loads(row.result) if row.result else None, rematch_id=row.rematch_id,
            seats=seats, actions=[(a.seat, json.loads(a.action)) for a in taken],
            action_times=[a.created_at for a in taken], notes=[_note(n) for n in notes],
            last_note_id=max([note_id, *(int(n.id) for n in notes)]))

    def table_ids(self, statuses: tuple[str, ...], limit: int | None = None) -> list[str]:
        """Ids of the tables in ``statuses``, oldest first (the ``limit`` most recently changed). Turn-based
        tables are left out: their deadlines load them when due (web/master/deadlines.py)."""
        q = (select(tables_t.c.id, tables_t.c.created_at)
             .where(tables_t.c.status.in_(statuses), tables_t.c.id.not_in(select(deadlines_t.c.table_id))))
        if limit is not None:
            q = q.order_by(tables_t.c.updated_at.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = sorted(conn.execute(q), key=lambda r: r.created_at)
        return [r.id for r in rows]

    def full_waiting_ids(self, limit: int | None = None) -> list[str]:
        """Tables still ``waiting`` whose seats are all taken (a start that was never stored)."""
        open_seat = select(seats_t.c.table_id).where(seats_t.c.kind == OPEN)
        q = (select(tables_t.c.id).where(tables_t.c.status == WAITING, tables_t.c.id.not_in(open_seat))
             .order_by(tables_t.c.created_at))
        if limit is not None:
            q = q.limit(limit)
        with self.engine.connect() as conn:
            return [r.id for r in conn.execute(q)]

    def list_tables(self, limit: int = 50, statuses: tuple[str, ...] | None = None,
                    active_since: float | None = None, ids: list[str] | None = None) -> list[dict[str, Any]]:
        """Summaries of the most recently updated listed tables (newest first). With ``active_since``,
        tables in play that last changed before it are left out (abandoned games). With ``ids``: those
        tables, listed or not, whatever their status."""
        if ids is not None:
            q = select(tables_t).where(tables_t.c.id.in_(ids))
        else:
            q = select(tables_t).where(or_(tables_t.c.unlisted.is_(None), tables_t.c.unlisted.is_(False)))
        if statuses:
            q = q.where(tables_t.c.status.in_(statuses))
        if active_since is not None:  # a turn-based table waits days for a move: listed while in play
            q = q.where(or_(tables_t.c.status != PLAYING, tables_t.c.updated_at >= active_since,
                            tables_t.c.id.in_(select(deadlines_t.c.table_id))))
        q = q.order_by(tables_t.c.updated_at.desc()).limit(limit)
        with self.engine.connect() as conn:
            rows = list(conn.execute(q))
            ids = [r.id for r in rows]
            seats: dict[str, list[Row[Any]]] = {i: [] for i in ids}
            if ids:
                for seat in conn.execute(select(seats_t).where(seats_t.c.table_id.in_(ids))
                                         .order_by(seats_t.c.seat)):
                    seats[seat.table_id].append(seat)
        return [
            {
                "id": r.id, "game": r.game, "status": r.status, "created_at": r.created_at,
                "updated_at": r.updated_at, "n_actions": r.n_actions,
                "result": json.loads(r.result) if r.result else None,
                "seats": [{"kind": x.kind, "level": x.level, "name": x.name} for x in seats[r.id]],
                "rated": '"rated":true' in (r.settings or ""),  # a rated table (web/accounts/ratings.py)
                **pace_of(r.settings),
            }
            for r in rows
        ]

    def seats_of(self, table_id: str) -> list[SeatData]:
        """The seats of a table (an empty list if there is no such table)."""
        with self.engine.connect() as conn:
            return self._seats(conn, table_id)

    @staticmethod
    def _seats(conn: Connection, table_id: str) -> list[SeatData]:
        q = select(seats_t).where(seats_t.c.table_id == table_id).order_by(seats_t.c.seat)
        return [_seat(r) for r in conn.execute(q)]



def pace_of(settings: str | None) -> dict[str, Any]:
    """A stored table's pace as the lobby lists it (web/master/pace.py): ``pace`` and, turn-based,
    ``move_time``."""
    try:
        data = json.loads(settings) if settings else {}
    except ValueError:
        data = {}
    if isinstance(data, dict) and data.get("pace") == "turn-based":
        return {"pace": "turn-based", "move_time": data.get("move_time")}
    return {"pace": "live"}


def _plain(req: AppendRequest) -> bool:
    """An append that only adds actions (no status, result or condition on the status)."""
    return req.status is None and req.result is None and req.expect_status is None


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
