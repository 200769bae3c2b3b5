"""The database's tables, declared once on one ``MetaData`` (SQLAlchemy Core).

The tables of the core (web/repository/store.py reads and writes them):

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

**Adding a table** (a new part of the server): declare it in a NEW module of web/repository/ on
this module's :data:`metadata` (``Table("ludo_x", metadata, ...)``) and add that module's name to
:data:`TABLE_MODULES`; :func:`create_schema` imports every module listed there before it creates
the missing tables (and the missing nullable columns of older databases), so every process —
server, worker, ``ludoteca backup`` — creates the same schema.
"""

from __future__ import annotations

import importlib
import time
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
    inspect,
    text,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.schema import CreateColumn

from ludoteca.web.repository.indexes import add_missing_indexes

SCHEMA_TRIES = 10
"""Tries at creating the tables while another process creates them too."""
TABLE_MODULES: tuple[str, ...] = (
    "ludoteca.web.repository.deadlines",
    "ludoteca.web.repository.notices",
    "ludoteca.web.repository.lab_runs",
    "ludoteca.web.repository.analyses",
)
"""Modules of web/repository/ that declare more tables on :data:`metadata` (imported by
:func:`create_schema`): add yours here."""
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
"""An account's rating per game and player count (web/accounts/ratings.py)."""

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



def create_schema(engine: Engine) -> None:
    """Create the missing tables (those of :data:`TABLE_MODULES` too), the missing nullable
    columns and the missing indexes (indexes.py), retrying while another process creates them at the same moment."""
    for module in TABLE_MODULES:
        importlib.import_module(module)
    for attempt in range(SCHEMA_TRIES):
        try:
            metadata.create_all(engine)
            break
        except (OperationalError, ProgrammingError, IntegrityError):
            # another process (a worker, a test, `ludoteca backup`) is creating them at the same
            # moment: what it made is there on the next try
            if attempt == SCHEMA_TRIES - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    _add_missing_columns(engine)
    add_missing_indexes(engine, metadata)


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
