"""Persistent tables through SQLAlchemy Core: SQLite by default, PostgreSQL with a URL.

Four tables (a column added by a newer version is added to an older database at start-up):

- ``ludo_tables``: one row per game table (game, options, seed, status, result, rematch link);
- ``ludo_seats``: one row per seat (open / human / ai, the AI level, the player's name, the
  SHA-256 of the seat's secret token — the token itself is never stored);
- ``ludo_actions``: every accepted action in order, as canonical JSON (chance outcomes too);
- ``ludo_notes``: the table's life around the game: chat lines and notices (a resignation, a seat
  left or handed to an AI, rematch offers), each with its channel and the action count it follows;
- ``ludo_accounts`` and ``ludo_sessions``: optional accounts (argon2 hash of the password, never the
  password) and their login sessions (SHA-256 of the cookie's token); a seat taken by a logged-in
  player holds its ``account_id`` (web/accounts/accounts.py);
- ``ludo_ratings`` and ``ludo_rating_history``: each account's rating per game and player count, and
  its value after each rated table, one row per (account, table) (web/accounts/ratings.py).

A table is rebuilt by replaying its actions, so the actions are the source of truth. Every
statement is built with SQLAlchemy Core (compiled once and cached by SQLAlchemy), so the same
code runs on every database.

:class:`Repository` is synchronous. :class:`GroupCommit` is its asynchronous front for the
server's hot path: appends that arrive while a commit runs are committed together in the next
transaction, and when that transaction fails each one is retried alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    and_,
    bindparam,
    create_engine,
    event,
    insert,
    inspect,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.schema import CreateColumn

from ludoteca.web.hub.leases import FencedOut, check_fences

SQLITE_FILE = "ludoteca.sqlite3"
SCHEMA_TRIES = 10
"""Tries at creating the tables while another process creates them too."""
OPEN = "open"
WAITING = "waiting"
PLAYING = "playing"

metadata = MetaData()

tables_t = Table(
    "ludo_tables", metadata,
    Column("id", String(32), primary_key=True),
    Column("game", String(32), nullable=False),
    Column("options", Text, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("n_actions", Integer, nullable=False, default=0),
    Column("result", Text, nullable=True),
    Column("rematch_id", String(32), nullable=True),
    Column("rematch_of", String(32), nullable=True),
    Column("unlisted", Boolean, nullable=True, default=False),
    Column("settings", Text, nullable=True),
)

seats_t = Table(
    "ludo_seats", metadata,
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("kind", String(8), nullable=False),
    Column("level", String(64), nullable=True),
    Column("name", String(64), nullable=True),
    Column("token_hash", String(64), nullable=True),
    Column("away_since", Float, nullable=True),
    Column("account_id", Integer, nullable=True),
)

actions_t = Table(
    "ludo_actions", metadata,
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("seat", Integer, nullable=True),
    Column("action", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

notes_t = Table(
    "ludo_notes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("kind", String(16), nullable=False),
    Column("channel", String(16), nullable=False),
    Column("at_seq", Integer, nullable=False),
    Column("data", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)

accounts_t = Table(
    "ludo_accounts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(64), nullable=False),
    Column("name_key", String(64), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("role", String(16), nullable=True),
    Column("suspended_at", Float, nullable=True),
)
"""Accounts (web/accounts/accounts.py): ``name_key`` is the casefolded name (names are unique whatever their case);
``role`` is ``admin`` for the club's moderators (web/accounts/moderation.py), else null; a suspended account
(``suspended_at``) cannot log in and its sessions no longer count."""

admin_log_t = Table(
    "ludo_admin_log", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", Float, nullable=False, index=True),
    Column("admin_id", Integer, nullable=True),
    Column("admin", String(64), nullable=False),
    Column("action", String(32), nullable=False),
    Column("target", String(128), nullable=False),
    Column("detail", Text, nullable=True),
)
"""Every moderator's action, who did it and to what (web/accounts/moderation.py): kept, never edited."""

sessions_t = Table(
    "ludo_sessions", metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("account_id", Integer, ForeignKey("ludo_accounts.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("csrf", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False, index=True),
)
"""Login sessions: the SHA-256 of the session cookie's token (never the token), its CSRF token, its expiry."""

NOTES_LOADED = 300
"""Notes (chat and notices) loaded with a table: the most recent ones."""

ratings_t = Table(
    "ludo_ratings", metadata,
    Column("account_id", Integer, primary_key=True),
    Column("game", String(32), primary_key=True),
    Column("players", Integer, primary_key=True),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("games", Integer, nullable=False),
    Column("wins", Integer, nullable=False),
    Column("updated_at", Float, nullable=False),
)
"""An account's rating per game and player count (web/accounts/ratings.py: issue 14)."""

rating_history_t = Table(
    "ludo_rating_history", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("account_id", Integer, nullable=False),
    Column("table_id", String(32), nullable=False),
    Column("game", String(32), nullable=False),
    Column("players", Integer, nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("display", Integer, nullable=False),
    Column("rank", Integer, nullable=False),
    Column("at", Float, nullable=False),
    UniqueConstraint("account_id", "table_id", name="ludo_rating_history_once"),
    Index("ludo_rating_history_account", "account_id", "game", "players", "at"),
)
"""One row per account and rated table, after its rating was updated: a table is rated once."""

attempts_t = Table(
    "ludo_attempts", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(200), nullable=False),
    Column("at", Float, nullable=False, index=True),
    Index("ludo_attempts_key", "key", "at"),
)
"""Counted attempts every worker shares (web/accounts/attempts.py): failed log-ins, sign-ups; one row each."""


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


@dataclass
class SeatData:
    kind: str  # "open", "human" or "ai"
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None
    away_since: float | None = None
    """Since when (epoch seconds) the seat's player has had no connection, when stored (tables.py)."""
    account_id: int | None = None
    """The account of the logged-in player who took the seat (None: a typed name, an AI, open)."""


@dataclass
class AccountData:
    """One stored account (``ludo_accounts``)."""

    id: int
    name: str
    created_at: float
    password_hash: str
    role: str | None = None
    """``admin`` for a moderator, else None."""
    suspended_at: float | None = None
    """When a moderator suspended the account (None: active)."""


@dataclass
class SessionData:
    """One stored login session with its account."""

    account: AccountData
    csrf: str
    expires_at: float


class DuplicateName(Exception):
    """:meth:`Repository.create_account`: an account with that name (whatever its case) exists."""


@dataclass
class NoteData:
    """A chat line or a notice of a table (stored in ``ludo_notes``)."""

    kind: str
    """``chat``, or a notice: ``resigned``, ``left``, ``ai_took_over``, ``took_back``, ``abandoned``,
    ``rematch_offer``, ``rematch_accept``, ``rematch_decline``."""
    channel: str
    """``all`` (every viewer) or ``spectators`` (spectators only: separate chat)."""
    at_seq: int
    """The number of actions played when it happened (where it goes in the log)."""
    data: dict[str, Any]
    created_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "channel": self.channel, "at": self.at_seq, "time": round(self.created_at, 3),
                **self.data}


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
    settings: dict[str, Any] = field(default_factory=dict)
    """The table's own settings (tables.py ``TableSettings``): abandoned seats, chat channels."""
    notes: list[NoteData] = field(default_factory=list)
    """The most recent notes (at most :data:`NOTES_LOADED`), oldest first."""
    last_note_id: int = 0
    """The id of the newest stored note (a worker catching up asks for the notes after it)."""


@dataclass
class TableDelta:
    """What changed in a table's stored data since a worker last read it (:meth:`Repository.delta`):
    the actions after the given ``seq``, the seats, status and result, the notes after a note id."""

    status: str
    result: dict[str, Any] | None
    rematch_id: str | None
    seats: list[SeatData]
    actions: list[tuple[int | None, dict[str, Any]]]
    action_times: list[float]
    notes: list[NoteData]
    last_note_id: int


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
    replace: list[tuple[int, SeatData, str | None]] = field(default_factory=list)
    """Seats changed by the table's life: (seat, new data, the token hash it must still hold)."""
    notes: list[NoteData] = field(default_factory=list)
    """Notices stored in the same transaction."""
    fence: tuple[str, int] | None = None
    """(table, lease token): store nothing unless that lease is still held with that token
    (appends made by a table's timers: the AI, the hourglass, abandoned seats; leases.py)."""


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


def _seat(row: Row[Any]) -> SeatData:
    return SeatData(kind=row.kind, level=row.level, name=row.name, token_hash=row.token_hash,
                    away_since=row.away_since, account_id=row.account_id)


def _account(row: Row[Any]) -> AccountData:
    return AccountData(id=int(row.id), name=row.name, created_at=row.created_at, password_hash=row.password_hash,
                       role=row.role, suspended_at=row.suspended_at)


def name_key(name: str) -> str:
    """The form of an account name that must be unique: casefolded."""
    return name.casefold()


def _note(row: Row[Any]) -> NoteData:
    return NoteData(kind=row.kind, channel=row.channel, at_seq=row.at_seq, data=json.loads(row.data),
                    created_at=row.created_at)


def _note_rows(table_id: str, notes: list[NoteData]) -> list[dict[str, Any]]:
    return [{"table_id": table_id, "kind": n.kind, "channel": n.channel, "at_seq": n.at_seq, "data": _dumps(n.data),
             "created_at": n.created_at or time.time()} for n in notes]


class Repository:
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
        for attempt in range(SCHEMA_TRIES):
            try:
                metadata.create_all(self.engine)
                break
            except (OperationalError, ProgrammingError, IntegrityError):
                # another process (a worker, a test, `ludoteca backup`) is creating them at the same
                # moment: what it made is there on the next try
                if attempt == SCHEMA_TRIES - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))
        _add_missing_columns(self.engine)
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
        rows = [
            {"table_id": req.table_id, "seq": req.first_seq + k, "seat": seat, "action": _dumps(action),
             "created_at": now}
            for req in batch for k, (seat, action) in enumerate(req.actions)
        ]
        conn = self._writer_connection()
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
        """Ids of the tables in ``statuses``, oldest first (the ``limit`` most recently changed)."""
        q = select(tables_t.c.id, tables_t.c.created_at).where(tables_t.c.status.in_(statuses))
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
        if active_since is not None:
            q = q.where(or_(tables_t.c.status != PLAYING, tables_t.c.updated_at >= active_since))
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
                "rated": '"rated":true' in (r.settings or ""),  # issue 14: a rated table (web/accounts/ratings.py)
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

    # --- accounts and sessions (web/accounts/accounts.py) -----------------------------------------
    def create_account(self, name: str, password_hash: str) -> int:
        """A new account; returns its id. :class:`DuplicateName` if the casefolded name is taken. The
        club's first account is its first moderator (``role`` admin)."""
        try:
            with self.engine.begin() as conn:
                first = conn.execute(select(accounts_t.c.id).limit(1)).first() is None
                done = conn.execute(insert(accounts_t).values(
                    name=name, name_key=name_key(name), password_hash=password_hash, created_at=time.time(),
                    role="admin" if first else None))
                key = done.inserted_primary_key
                return int(key[0]) if key is not None else 0
        except IntegrityError as exc:
            raise DuplicateName(name) from exc

    def account_by_id(self, account_id: int) -> AccountData | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(accounts_t).where(accounts_t.c.id == account_id)).first()
        return _account(row) if row is not None else None

    def account_by_name(self, name: str) -> AccountData | None:
        """The account with that name, whatever its case."""
        with self.engine.connect() as conn:
            row = conn.execute(select(accounts_t).where(accounts_t.c.name_key == name_key(name))).first()
        return _account(row) if row is not None else None

    def set_password_hash(self, account_id: int, password_hash: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(accounts_t).where(accounts_t.c.id == account_id).values(password_hash=password_hash))

    def create_session(self, token_hash: str, account_id: int, csrf: str, expires_at: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(sessions_t).values(token_hash=token_hash, account_id=account_id, csrf=csrf,
                                                   created_at=time.time(), expires_at=expires_at))

    def session(self, token_hash: str, now: float) -> SessionData | None:
        """The session with that token hash and its account, unless it expired before ``now``."""
        q = (select(sessions_t.c.csrf, sessions_t.c.expires_at, accounts_t)
             .join(accounts_t, accounts_t.c.id == sessions_t.c.account_id)
             .where(sessions_t.c.token_hash == token_hash, sessions_t.c.expires_at > now,
                    accounts_t.c.suspended_at.is_(None)))
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        if row is None:
            return None
        return SessionData(account=_account(row), csrf=row.csrf, expires_at=row.expires_at)

    def extend_session(self, token_hash: str, expires_at: float) -> None:
        """Sliding expiry: the session lasts until ``expires_at``."""
        with self.engine.begin() as conn:
            conn.execute(update(sessions_t).where(sessions_t.c.token_hash == token_hash)
                         .values(expires_at=expires_at))

    def delete_session(self, token_hash: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(sessions_t.delete().where(sessions_t.c.token_hash == token_hash))

    def delete_expired_sessions(self, now: float) -> int:
        """Forget the sessions expired before ``now``; returns how many."""
        with self.engine.begin() as conn:
            return int(conn.execute(sessions_t.delete().where(sessions_t.c.expires_at <= now)).rowcount or 0)

    def account_seat(self, table_id: str, account_id: int) -> int | None:
        """The first seat of the table taken by that account (None: none)."""
        q = (select(seats_t.c.seat).where(seats_t.c.table_id == table_id, seats_t.c.account_id == account_id,
                                          seats_t.c.kind == "human").order_by(seats_t.c.seat).limit(1))
        with self.engine.connect() as conn:
            seat = conn.execute(q).scalar()
        return int(seat) if seat is not None else None


class GroupCommit:
    """The asynchronous front of :meth:`Repository.append_batch` (the server's hot path).

    ``run(fn, *args)`` runs a storage call (inline for SQLite, in a storage thread otherwise).
    :meth:`append` stores one table's request: requests that arrive while a commit is running
    are committed together in the next transaction; if that transaction fails, each request is
    retried alone, so that one table's failure never loses another's move."""

    def __init__(self, repo: Repository, run: Callable[..., Awaitable[Any]]) -> None:
        self.repo = repo
        self.run = run
        self._pending: list[tuple[AppendRequest, asyncio.Future[None]]] = []
        self._draining = False
        self._drainer: asyncio.Future[None] | None = None
        self.transactions = 0
        """Transactions committed or tried (tests)."""

    async def append(self, request: AppendRequest) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((request, fut))
        if not self._draining:
            self._draining = True
            self._drainer = asyncio.ensure_future(self._drain())
        await fut

    async def _drain(self) -> None:
        try:
            await asyncio.sleep(0)  # let the actions that arrived in this loop turn join the batch
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    self.transactions += 1
                    await self.run(self.repo.append_batch, [req for req, _ in batch])
                    for _, fut in batch:
                        _resolve(fut, None)
                except Exception:
                    await self._one_by_one(batch)
        finally:
            self._draining = False

    async def _one_by_one(self, batch: list[tuple[AppendRequest, asyncio.Future[None]]]) -> None:
        for req, fut in batch:
            try:
                self.transactions += 1
                await self.run(self.repo.append_batch, [req])
                _resolve(fut, None)
            except Exception as exc:
                if not fut.done():
                    fut.set_exception(exc)


def _plain(req: AppendRequest) -> bool:
    """An append that only adds actions (no status, result or condition on the status)."""
    return req.status is None and req.result is None and req.expect_status is None


def _resolve(fut: asyncio.Future[None], value: None) -> None:
    if not fut.done():
        fut.set_result(value)


def _add_missing_columns(engine: Engine) -> None:
    """Add the columns a newer version declares to tables created by an older one (``create_all``
    creates missing tables, never missing columns). Only nullable columns are added, empty."""
    existing = inspect(engine)
    with engine.begin() as conn:
        for table in metadata.sorted_tables:
            if not existing.has_table(table.name):
                continue
            present = {c["name"] for c in existing.get_columns(table.name)}
            for column in table.columns:
                if column.name not in present and column.nullable:
                    conn.execute(_add_column(engine, table, column))


def _add_column(engine: Engine, table: Table, column: Column[Any]) -> Any:
    """``ALTER TABLE ... ADD COLUMN``: SQLAlchemy 2.0 has no construct for it; the column's DDL
    (name quoted, type compiled) comes from the dialect itself (``CreateColumn``)."""
    prep = engine.dialect.identifier_preparer
    ddl = CreateColumn(column).compile(dialect=engine.dialect)
    return text(f"ALTER TABLE {prep.format_table(table)} ADD COLUMN {ddl}")


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA wal_autocheckpoint=0")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
