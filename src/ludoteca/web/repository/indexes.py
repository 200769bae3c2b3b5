"""The indexes a newer version declares, created on a database made by an older one (``create_all``
creates the missing tables with their indexes, never the missing indexes of a table already there).

A missing **unique** index is preceded by the removal of the rows it would refuse — of each group of rows
equal on the index's columns, the first stored (the lowest key) is kept — so that an upgrade never fails on
the duplicates an older version let in. Rows with a null in one of those columns are never duplicates (SQL's
unique indexes let nulls repeat; SQLite and PostgreSQL alike) and are kept. Several processes starting at
once may create the same index: ``IF NOT EXISTS``, and the loser's error is taken as "made already".
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import Index, MetaData, Table, and_, delete, func, inspect, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError
from sqlalchemy.schema import CreateIndex

log = logging.getLogger("ludoteca.web")


def add_missing_indexes(engine: Engine, metadata: MetaData) -> list[str]:
    """Create the indexes of ``metadata``'s tables that the database lacks; their names."""
    existing = inspect(engine)
    made: list[str] = []
    for table in metadata.sorted_tables:
        if not existing.has_table(table.name):
            continue
        present = {ix["name"] for ix in existing.get_indexes(table.name)}
        for index in sorted(table.indexes, key=lambda ix: str(ix.name)):
            if index.name in present:
                continue
            try:
                with engine.begin() as conn:
                    removed = _remove_duplicates(conn, table, index) if index.unique else 0
                    conn.execute(CreateIndex(index, if_not_exists=True))
            except (OperationalError, ProgrammingError, IntegrityError):
                # another process made it at the same moment: it is there now, or the error is real
                if str(index.name) not in {ix["name"] for ix in inspect(engine).get_indexes(table.name)}:
                    raise
                continue
            if removed:
                log.warning("%s: %d duplicate rows removed before the unique index %s was made",
                            table.name, removed, index.name)
            made.append(str(index.name))
    return made


def _remove_duplicates(conn: Connection, table: Table, index: Index) -> int:
    """Delete the rows that the unique ``index`` would refuse, keeping the first of each group."""
    key = list(table.primary_key.columns)
    if len(key) != 1:
        return 0  # no single key to tell the first row from the others: the index is tried as it is
    first = key[0]
    columns: list[Any] = [table.c[c.name] for c in index.columns]
    complete = and_(*(c.is_not(None) for c in columns))
    keep = select(func.min(first)).where(complete).group_by(*columns)
    done = conn.execute(delete(table).where(complete, first.not_in(keep)))
    return int(done.rowcount or 0)
