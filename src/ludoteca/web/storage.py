"""Persistent tables through SQLAlchemy: SQLite by default, PostgreSQL with a URL.

Three tables (a column added by a newer version is added to an older database at start-up):

- ``ludo_tables``: one row per game table (game, options, seed, status, result, rematch link);
- ``ludo_seats``: one row per seat (open / human / ai, the AI level, the player's name, the
  SHA-256 of the seat's secret token — the token itself is never stored);
- ``ludo_actions``: every accepted action in order, as canonical JSON (chance outcomes too).

A table is rebuilt by replaying its actions, so the actions are the source of truth. The
:class:`Repository` is synchronous; the server calls it from one dedicated thread so that a
slow commit never blocks the event loop and writes are never concurrent.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    inspect,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

SQLITE_FILE = "ludoteca.sqlite3"


class Base(DeclarativeBase):
    pass


class TableRow(Base):
    __tablename__ = "ludo_tables"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    options: Mapped[str] = mapped_column(Text)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), index=True)
    created_at: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[float] = mapped_column(Float)
    n_actions: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[str | None] = mapped_column(Text, nullable=True)
    rematch_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    rematch_of: Mapped[str | None] = mapped_column(String(32), nullable=True)
    unlisted: Mapped[bool | None] = mapped_column(Boolean, nullable=True, default=False)


class SeatRow(Base):
    __tablename__ = "ludo_seats"

    table_id: Mapped[str] = mapped_column(ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(8))
    level: Mapped[str | None] = mapped_column(String(64), nullable=True)
    name: Mapped[str | None] = mapped_column(String(64), nullable=True)
    token_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ActionRow(Base):
    __tablename__ = "ludo_actions"

    table_id: Mapped[str] = mapped_column(ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    action: Mapped[str] = mapped_column(Text)
    created_at: Mapped[float] = mapped_column(Float)


@dataclass
class SeatData:
    kind: str  # "open", "human" or "ai"
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None


@dataclass
class TableData:
    """Everything stored about one table, as plain data."""

    id: str
    game: str
    options: dict[str, Any]
    seed: int
    status: str
    created_at: float
    updated_at: float
    seats: list[SeatData]
    actions: list[dict[str, Any]] = field(default_factory=list)
    action_seats: list[int | None] = field(default_factory=list)
    action_times: list[float] = field(default_factory=list)
    result: dict[str, Any] | None = None
    rematch_id: str | None = None
    rematch_of: str | None = None
    unlisted: bool = False


@dataclass
class AppendRequest:
    """Actions to store for one table (see :meth:`Repository.append_batch`)."""

    table_id: str
    first_seq: int
    actions: list[tuple[int | None, dict[str, Any]]]
    status: str | None = None
    result: dict[str, Any] | None = None
    seats: list[tuple[int, SeatData]] = field(default_factory=list)
    """Open seats taken in the same transaction (the last join and the game's start are one)."""
    expect_status: str | None = None
    """Store nothing unless the table still has this status (e.g. a join to a table that expired)."""


class Conflict(Exception):
    """A conditional write found the table changed (a seat taken, a status changed): nothing stored."""


def database_url(data_dir: str | Path | None, url: str | None) -> str:
    """The SQLAlchemy URL to use: ``url`` if given, else a SQLite file in ``data_dir``."""
    if url:
        return url
    directory = Path(data_dir or "data")
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(directory / SQLITE_FILE).resolve()}"


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=False)


class Repository:
    """Synchronous storage of tables, seats and actions."""

    def __init__(self, url: str, echo: bool = False) -> None:
        self.url = url
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            kwargs["pool_pre_ping"] = True
        self.engine: Engine = create_engine(url, **kwargs)
        if url.startswith("sqlite"):
            event.listen(self.engine, "connect", _sqlite_pragmas)
        Base.metadata.create_all(self.engine)
        _add_missing_columns(self.engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    # --- writes ------------------------------------------------------------------------
    def create_table(self, data: TableData) -> None:
        with Session(self.engine) as s, s.begin():
            s.add(TableRow(
                id=data.id, game=data.game, options=_dumps(data.options), seed=data.seed,
                status=data.status, created_at=data.created_at, updated_at=data.updated_at,
                n_actions=0, result=None, rematch_id=None, rematch_of=data.rematch_of,
                unlisted=data.unlisted,
            ))
            s.flush()
            for i, seat in enumerate(data.seats):
                s.add(SeatRow(table_id=data.id, seat=i, kind=seat.kind, level=seat.level,
                              name=seat.name, token_hash=seat.token_hash))

    def update_seat(self, table_id: str, seat: int, data: SeatData) -> None:
        with Session(self.engine) as s, s.begin():
            s.execute(update(SeatRow).where(SeatRow.table_id == table_id, SeatRow.seat == seat).values(
                kind=data.kind, level=data.level, name=data.name, token_hash=data.token_hash))
            s.execute(update(TableRow).where(TableRow.id == table_id).values(updated_at=time.time()))

    def append_actions(
        self,
        table_id: str,
        first_seq: int,
        actions: list[tuple[int | None, dict[str, Any]]],
        status: str | None = None,
        result: dict[str, Any] | None = None,
    ) -> None:
        """Store ``actions`` (``(seat, action_json)``) from ``first_seq`` on, in one transaction.

        A duplicate sequence number (two writers) makes the transaction fail: nothing is stored.
        """
        self.append_batch([AppendRequest(table_id, first_seq, actions, status, result)])

    def append_batch(self, batch: list[AppendRequest]) -> None:
        """Several tables' appends in one transaction (group commit): all stored, or none.

        This is the hot path of the server: plain driver SQL, no statement compilation."""
        now = time.time()
        rows = [
            (req.table_id, req.first_seq + k, seat, _dumps(action), now)
            for req in batch for k, (seat, action) in enumerate(req.actions)
        ]
        mark = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        insert_sql = ("INSERT INTO ludo_actions (table_id, seq, seat, action, created_at) "
                      f"VALUES ({mark}, {mark}, {mark}, {mark}, {mark})")
        seat_sql = (f"UPDATE ludo_seats SET kind = {mark}, level = {mark}, name = {mark}, token_hash = {mark} "
                    f"WHERE table_id = {mark} AND seat = {mark} AND kind = 'open'")
        with self.engine.begin() as conn:
            for req in batch:
                for seat, data in req.seats:
                    done = conn.exec_driver_sql(seat_sql, (data.kind, data.level, data.name, data.token_hash,
                                                           req.table_id, seat))
                    if done.rowcount != 1:
                        raise Conflict(f"table {req.table_id}: seat {seat} is no longer open")
            if rows:
                conn.exec_driver_sql(insert_sql, rows)
            for req in batch:
                sets = [f"n_actions = {mark}", f"updated_at = {mark}"]
                params: list[Any] = [req.first_seq + len(req.actions), now]
                if req.status is not None:
                    sets.append(f"status = {mark}")
                    params.append(req.status)
                if req.result is not None:
                    sets.append(f"result = {mark}")
                    params.append(_dumps(req.result))
                where = f"id = {mark}"
                params.append(req.table_id)
                if req.expect_status is not None:
                    where += f" AND status = {mark}"
                    params.append(req.expect_status)
                done = conn.exec_driver_sql(f"UPDATE ludo_tables SET {', '.join(sets)} WHERE {where}", tuple(params))
                if done.rowcount != 1:
                    raise Conflict(f"table {req.table_id} is no longer {req.expect_status or 'stored'}")

    def checkpoint(self) -> None:
        """SQLite: copy the write-ahead log into the database (PASSIVE: never blocks writers).

        The server turns automatic checkpoints off and calls this from its storage thread, so
        the fsync of a checkpoint never stalls a move."""
        if self.dialect == "sqlite":
            with self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def set_status(self, table_id: str, status: str, result: dict[str, Any] | None = None) -> None:
        values: dict[str, Any] = {"status": status, "updated_at": time.time()}
        if result is not None:
            values["result"] = _dumps(result)
        with Session(self.engine) as s, s.begin():
            s.execute(update(TableRow).where(TableRow.id == table_id).values(**values))

    def expire_waiting(self, before: float, status: str = "expired") -> list[str]:
        """Mark every table still waiting whose last change is older than ``before`` (epoch
        seconds) as ``status``; returns their ids."""
        stamp = time.time()
        with Session(self.engine) as s, s.begin():  # one conditional UPDATE: a join committed meanwhile wins
            s.execute(update(TableRow).where(TableRow.status == "waiting", TableRow.updated_at < before)
                      .values(status=status, updated_at=stamp))
            rows = s.execute(select(TableRow.id).where(TableRow.status == status, TableRow.updated_at == stamp))
            return [r[0] for r in rows]

    def set_rematch(self, table_id: str, rematch_id: str) -> None:
        with Session(self.engine) as s, s.begin():
            s.execute(update(TableRow).where(TableRow.id == table_id).values(rematch_id=rematch_id))

    # --- reads -------------------------------------------------------------------------
    def load_table(self, table_id: str) -> TableData | None:
        with Session(self.engine) as s:
            row = s.get(TableRow, table_id)
            if row is None:
                return None
            return self._table_data(s, row)

    def table_ids(self, statuses: tuple[str, ...], limit: int | None = None) -> list[str]:
        """Ids of the tables in ``statuses``, oldest first (the ``limit`` most recently changed)."""
        with Session(self.engine) as s:
            q = select(TableRow.id, TableRow.created_at).where(TableRow.status.in_(statuses))
            if limit is not None:
                q = q.order_by(TableRow.updated_at.desc()).limit(limit)
            rows = sorted(s.execute(q), key=lambda r: r[1])
            return [r[0] for r in rows]

    def full_waiting_ids(self, limit: int | None = None) -> list[str]:
        """Tables still ``waiting`` whose seats are all taken (a start that was never stored)."""
        with Session(self.engine) as s:
            open_seat = select(SeatRow.table_id).where(SeatRow.kind == "open")
            q = (select(TableRow.id).where(TableRow.status == "waiting", TableRow.id.not_in(open_seat))
                 .order_by(TableRow.created_at))
            if limit is not None:
                q = q.limit(limit)
            return [r[0] for r in s.execute(q)]

    def list_tables(self, limit: int = 50, statuses: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
        """Summaries of the most recently updated tables (newest first)."""
        with Session(self.engine) as s:
            q = select(TableRow).where(or_(TableRow.unlisted.is_(None), TableRow.unlisted.is_(False)))
            q = q.order_by(TableRow.updated_at.desc()).limit(limit)
            if statuses:
                q = q.where(TableRow.status.in_(statuses))
            rows = list(s.scalars(q))
            ids = [r.id for r in rows]
            seats: dict[str, list[SeatRow]] = {i: [] for i in ids}
            if ids:
                for seat in s.scalars(select(SeatRow).where(SeatRow.table_id.in_(ids)).order_by(SeatRow.seat)):
                    seats[seat.table_id].append(seat)
            return [
                {
                    "id": r.id, "game": r.game, "status": r.status, "created_at": r.created_at,
                    "updated_at": r.updated_at, "n_actions": r.n_actions,
                    "result": json.loads(r.result) if r.result else None,
                    "seats": [{"kind": x.kind, "level": x.level, "name": x.name} for x in seats[r.id]],
                }
                for r in rows
            ]

    def _table_data(self, s: Session, row: TableRow) -> TableData:
        seats = [
            SeatData(kind=x.kind, level=x.level, name=x.name, token_hash=x.token_hash)
            for x in s.scalars(select(SeatRow).where(SeatRow.table_id == row.id).order_by(SeatRow.seat))
        ]
        actions = list(s.execute(
            select(ActionRow.seq, ActionRow.seat, ActionRow.action, ActionRow.created_at)
            .where(ActionRow.table_id == row.id).order_by(ActionRow.seq)))
        for k, a in enumerate(actions):
            if a.seq != k:
                raise ValueError(f"table {row.id}: stored action {k} is missing")
        return TableData(
            id=row.id, game=row.game, options=json.loads(row.options), seed=row.seed, status=row.status,
            created_at=row.created_at, updated_at=row.updated_at, seats=seats,
            actions=[json.loads(a.action) for a in actions],
            action_seats=[a.seat for a in actions],
            action_times=[a.created_at for a in actions],
            result=json.loads(row.result) if row.result else None,
            rematch_id=row.rematch_id, rematch_of=row.rematch_of, unlisted=bool(row.unlisted),
        )

    def seats_of(self, table_id: str) -> list[SeatData]:
        """The seats of a table (an empty list if there is no such table)."""
        with Session(self.engine) as s:
            return [SeatData(kind=x.kind, level=x.level, name=x.name, token_hash=x.token_hash)
                    for x in s.scalars(select(SeatRow).where(SeatRow.table_id == table_id).order_by(SeatRow.seat))]


def _add_missing_columns(engine: Engine) -> None:
    """Add the columns a newer version declares to tables created by an older one (``create_all``
    creates missing tables, never missing columns). Only nullable columns are added, empty."""
    existing = inspect(engine)
    with engine.begin() as conn:
        for table in Base.metadata.sorted_tables:
            if not existing.has_table(table.name):
                continue
            present = {c["name"] for c in existing.get_columns(table.name)}
            for column in table.columns:
                if column.name in present or not column.nullable:
                    continue
                kind = column.type.compile(dialect=engine.dialect)
                conn.exec_driver_sql(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}')


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
