"""Backups of a server's database, taken while it runs, and their restoration.

Two kinds of file, each the database's own, told apart by their first bytes:

- **SQLite** (``SQLite format 3``): SQLite's online backup API (``sqlite3.Connection.backup``)
  copies the database page by page inside a read transaction, so the copy is one consistent
  moment even while the server writes (it reads the write-ahead log too: every acknowledged
  action is in it). The copy is an ordinary SQLite database.
- **PostgreSQL** (``PGDMP``): ``pg_dump --format=custom`` (one consistent snapshot, a
  serializable read transaction) and ``pg_restore``.

A restore goes into an **empty** database (no table, account or rating yet; the server is not
running on it): a backup is never merged into live data. A SQLite backup restores into SQLite
(the backup API again) or into PostgreSQL (every row of the server's tables copied through
SQLAlchemy, then PostgreSQL's id sequences moved past the copied ids); a PostgreSQL dump restores
into PostgreSQL. Login sessions are copied too, so players stay logged in; the tables' leases
(several workers) are not: workers take the tables again when they start.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Integer, create_engine, func, insert, select, text
from sqlalchemy.engine import URL, Engine, make_url

from ludoteca.core.i18n import _
from ludoteca.web.repository.store import Repository, accounts_t, actions_t, metadata, tables_t

SQLITE_MAGIC = b"SQLite format 3\x00"
PG_MAGIC = b"PGDMP"
COPY_BATCH = 2000
"""Rows inserted per statement when copying a SQLite backup into PostgreSQL."""


class BackupError(Exception):
    """A backup or restore that cannot be done, with a message for the person running it."""


@dataclass(frozen=True)
class Summary:
    """What a database holds, as counted after a backup or a restore."""

    tables: int
    actions: int
    accounts: int

    def text(self) -> str:
        return _("tables: {tables}, actions: {actions}, accounts: {accounts}").format(
            tables=self.tables, actions=self.actions, accounts=self.accounts)


def _url(database: str) -> URL:
    try:
        return make_url(database)
    except Exception:
        raise BackupError(_("{url} is not a database URL (e.g. sqlite:///data/ludoteca.sqlite3 or "
                            "postgresql+psycopg://user@host/db)").format(url=database)) from None


def _sqlite_path(url: URL) -> Path:
    if not url.database or url.database == ":memory:":
        raise BackupError(_("a SQLite URL names a file: sqlite:///path/to/ludoteca.sqlite3"))
    return Path(url.database)


def _libpq(url: URL) -> tuple[str, dict[str, str]]:
    """A libpq connection string for pg_dump/pg_restore (the password in the environment)."""
    env = dict(os.environ)
    if url.password:
        env["PGPASSWORD"] = str(url.password)
    plain = url.set(drivername="postgresql", password=None)
    return plain.render_as_string(hide_password=False), env


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise BackupError(_("{tool} is not installed (it comes with PostgreSQL's client: apt-get install "
                            "postgresql-client)").format(tool=name))
    return found


def kind_of_file(path: Path) -> str:
    """``"sqlite"`` or ``"postgresql"``, from the file's first bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise BackupError(_("cannot read {path}: {error}").format(path=path, error=exc.strerror)) from None
    if head.startswith(SQLITE_MAGIC):
        return "sqlite"
    if head.startswith(PG_MAGIC):
        return "postgresql"
    raise BackupError(_("{path} is not a ludoteca backup (neither a SQLite database nor a pg_dump file)").format(
        path=path))


def summary(database: str) -> Summary:
    """Counts of tables, actions and accounts in ``database``."""
    engine = create_engine(database)
    try:
        with engine.connect() as conn:
            def count(table: Any) -> int:
                return int(conn.execute(select(func.count()).select_from(table)).scalar_one())
            return Summary(count(tables_t), count(actions_t), count(accounts_t))
    finally:
        engine.dispose()


def backup(database: str, out: Path) -> Summary:
    """Write a consistent backup of ``database`` (a SQLAlchemy URL) to ``out`` while it may be in use."""
    url = _url(database)
    if out.exists():
        raise BackupError(_("{path} exists already; a backup never overwrites a file").format(path=out))
    out.parent.mkdir(parents=True, exist_ok=True)
    backend = url.get_backend_name()
    if backend == "sqlite":
        source = _sqlite_path(url)
        if not source.exists():
            raise BackupError(_("there is no database at {path}").format(path=source))
        partial = out.with_name(out.name + ".partial")
        try:
            src = sqlite3.connect(source, timeout=30)
            dst = sqlite3.connect(partial)
            try:
                src.backup(dst, pages=1024)
            finally:
                dst.close()
                src.close()
            partial.replace(out)
        finally:
            partial.unlink(missing_ok=True)
        return summary(f"sqlite:///{out}")
    if backend == "postgresql":
        conninfo, env = _libpq(url)
        done = subprocess.run([_tool("pg_dump"), "--format=custom", "--no-owner", "--no-privileges",
                               "--file", str(out), "--dbname", conninfo], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            out.unlink(missing_ok=True)
            raise BackupError(_("pg_dump failed: {error}").format(error=done.stderr.strip()))
        return summary(database)
    raise BackupError(_("backups are for SQLite and PostgreSQL databases, not {backend}").format(backend=backend))


def _is_empty(engine: Engine) -> bool:
    from sqlalchemy import inspect

    names = set(inspect(engine).get_table_names())
    if not names & {t.name for t in metadata.sorted_tables}:
        return True
    with engine.connect() as conn:
        for table in (tables_t, accounts_t):
            if table.name in names and conn.execute(select(func.count()).select_from(table)).scalar_one():
                return False
    return True


def restore(file: Path, database: str) -> Summary:
    """Restore the backup ``file`` into the empty database ``database`` (a SQLAlchemy URL)."""
    kind = kind_of_file(file)
    url = _url(database)
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise BackupError(_("backups restore into SQLite or PostgreSQL, not {backend}").format(backend=backend))
    if backend == "sqlite":
        target = _sqlite_path(url)
        if target.exists() and target.stat().st_size > 0:
            probe = create_engine(database)
            try:
                empty = _is_empty(probe)
            finally:
                probe.dispose()
            if not empty:
                raise BackupError(_("{path} already holds tables or accounts; restore into a new database").format(
                    path=target))
    else:
        probe = create_engine(database)
        try:
            empty = _is_empty(probe)
        except Exception as exc:
            raise BackupError(_("cannot reach {url}: {error}").format(
                url=url.render_as_string(hide_password=True), error=exc)) from None
        finally:
            probe.dispose()
        if not empty:
            raise BackupError(_("that database already holds tables or accounts; restore into a new database"))

    if kind == "sqlite" and backend == "sqlite":
        target = _sqlite_path(url)
        target.parent.mkdir(parents=True, exist_ok=True)
        src = sqlite3.connect(file)
        dst = sqlite3.connect(target)
        try:
            src.backup(dst)
        finally:
            dst.close()
            src.close()
    elif kind == "sqlite":
        _copy_rows(f"sqlite:///{file}", database)
    elif backend == "postgresql":
        conninfo, env = _libpq(url)
        done = subprocess.run([_tool("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error",
                               "--dbname", conninfo, str(file)], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise BackupError(_("pg_restore failed: {error}").format(error=done.stderr.strip()))
    else:
        raise BackupError(_("a PostgreSQL backup restores into PostgreSQL (give a postgresql:// URL)"))
    Repository(database).close()  # the schema of this version (columns added by a newer one)
    return summary(database)


def _copy_rows(source: str, target: str) -> None:
    """Every row of the server's tables from ``source`` into the empty ``target``, in one transaction."""
    Repository(target).close()  # creates the schema
    src = create_engine(source)
    dst = create_engine(target)
    try:
        with src.connect() as read, dst.begin() as write:
            present = set(_table_names(src))
            for table in metadata.sorted_tables:  # parents before children
                if table.name not in present:
                    continue
                columns = [c for c in table.columns if c.name in _columns_of(src, table.name)]
                rows = read.execute(select(*columns)).mappings()
                batch: list[dict[str, Any]] = []
                for row in rows:
                    batch.append(dict(row))
                    if len(batch) >= COPY_BATCH:
                        write.execute(insert(table), batch)
                        batch = []
                if batch:
                    write.execute(insert(table), batch)
            if dst.dialect.name == "postgresql":
                for table in metadata.sorted_tables:
                    column = table.autoincrement_column
                    if column is not None and isinstance(column.type, Integer):
                        write.execute(text(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'), "
                            f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false)"))
    finally:
        src.dispose()
        dst.dispose()


def _table_names(engine: Engine) -> list[str]:
    from sqlalchemy import inspect

    return list(inspect(engine).get_table_names())


def _columns_of(engine: Engine, table: str) -> set[str]:
    from sqlalchemy import inspect

    return {c["name"] for c in inspect(engine).get_columns(table)}
