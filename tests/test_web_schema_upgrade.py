"""A database made by an older version opens with a newer one: the missing columns and indexes appear.

The rule (docs/web.md, "Notices": "a notice is stored once per table, action count, seat, event, account
and channel", the unique index ``ludo_notice_outbox_once``) must hold on a server upgraded in place, not
only on a fresh database: its start-up (``create_schema``) creates the index the older schema lacked. The
older databases are made the old way — the outbox as the previous version declared it, by its own DDL —
never by the current code. An upgrade never fails: rows the new unique index would refuse (an older
version let them in) are removed first, the first stored of each kept; nothing else is touched."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import Engine

from ludoteca.web.repository.schema import create_schema

POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
ONCE = "ludo_notice_outbox_once"

OLD_OUTBOX = """CREATE TABLE ludo_notice_outbox (
    id {serial} PRIMARY KEY, account_id INTEGER NOT NULL, channel VARCHAR(16) NOT NULL,
    kind VARCHAR(16) NOT NULL, table_id VARCHAR(32) NOT NULL, game VARCHAR(32) NOT NULL, seat INTEGER NOT NULL,
    player VARCHAR(64) NOT NULL, due FLOAT, created_at FLOAT NOT NULL, status VARCHAR(8) NOT NULL,
    not_before FLOAT NOT NULL, attempts INTEGER NOT NULL, claimed_by VARCHAR(64), claimed_until FLOAT,
    done_at FLOAT, error TEXT{more})"""
"""The outbox of the version before ``seq`` (and, with ``more``, of one that had ``seq`` but no unique index)."""
OLD_INDEXES = ("CREATE INDEX ludo_notice_outbox_due ON ludo_notice_outbox (status, not_before)",
               "CREATE INDEX ludo_notice_outbox_account ON ludo_notice_outbox (account_id, channel, status)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        made = create_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
        yield made
        made.dispose()
        return
    if not POSTGRES:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    from tests.cluster import fresh_database

    with fresh_database(POSTGRES) as url:
        made = create_engine(url)
        yield made
        made.dispose()


def old_outbox(engine: Engine, with_seq: bool, rows: list[dict[str, Any]]) -> None:
    serial = "SERIAL" if engine.dialect.name == "postgresql" else "INTEGER"
    with engine.begin() as conn:
        conn.execute(text(OLD_OUTBOX.format(serial=serial, more=", seq INTEGER" if with_seq else "")))
        for ddl in OLD_INDEXES:
            conn.execute(text(ddl))
        for row in rows:
            names = ", ".join(row)
            conn.execute(text(f"INSERT INTO ludo_notice_outbox ({names}) VALUES "
                              f"({', '.join(':' + k for k in row)})"), row)


def row(seat: int, seq: int | None = None, channel: str = "email", **more: Any) -> dict[str, Any]:
    values = {"account_id": 7, "channel": channel, "kind": "your_turn", "table_id": "abc123", "game": "tri",
              "seat": seat, "player": "Ann", "due": None, "created_at": 1.0, "status": "sent", "not_before": 1.0,
              "attempts": 1}
    if seq is not None:
        values["seq"] = seq
    return {**values, **more}


def unique_index(engine: Engine) -> dict[str, Any] | None:
    found = [ix for ix in inspect(engine).get_indexes("ludo_notice_outbox") if ix["name"] == ONCE]
    return dict(found[0]) if found else None


def stored(engine: Engine) -> list[tuple[Any, ...]]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT id, seat, seq, channel, status FROM ludo_notice_outbox ORDER BY id"))]


def test_the_outbox_before_seq_gets_the_column_and_the_unique_index(engine: Engine) -> None:
    old_outbox(engine, with_seq=False, rows=[row(0), row(0), row(1, status="pending")])
    assert unique_index(engine) is None
    create_schema(engine)
    index = unique_index(engine)
    assert index is not None and index["unique"]
    assert index["column_names"] == ["table_id", "seq", "seat", "kind", "account_id", "channel"]
    # the rows of before keep a null seq: never duplicates of each other, all kept
    assert stored(engine) == [(1, 0, None, "email", "sent"), (2, 0, None, "email", "sent"),
                              (3, 1, None, "email", "pending")]
    # the index now refuses a notice stored twice for the same turn
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO ludo_notice_outbox (account_id, channel, kind, table_id, game, seat, player,"
                          " created_at, status, not_before, attempts, seq) VALUES (7, 'email', 'your_turn', 'abc123',"
                          " 'tri', 0, 'Ann', 2.0, 'pending', 2.0, 0, 5)"))
    with pytest.raises(Exception, match=r"(?i)unique|duplicate"), engine.begin() as conn:
        conn.execute(text("INSERT INTO ludo_notice_outbox (account_id, channel, kind, table_id, game, seat, player,"
                          " created_at, status, not_before, attempts, seq) VALUES (7, 'email', 'your_turn', 'abc123',"
                          " 'tri', 0, 'Ann', 3.0, 'pending', 3.0, 0, 5)"))


def test_duplicates_an_older_version_let_in_are_removed_first_keeping_the_first(engine: Engine) -> None:
    old_outbox(engine, with_seq=True, rows=[
        row(0, seq=4), row(0, seq=4, status="pending"), row(0, seq=4, channel="push"), row(1, seq=5),
        row(0, seq=4, status="failed"), row(1, seq=5), row(1)])
    create_schema(engine)
    assert unique_index(engine) is not None
    # of each group equal on the index's columns, the first stored stays; other channels and null seqs too
    assert stored(engine) == [(1, 0, 4, "email", "sent"), (3, 0, 4, "push", "sent"), (4, 1, 5, "email", "sent"),
                              (7, 1, None, "email", "sent")]
    create_schema(engine)  # a second start-up (or another worker's) changes nothing
    assert len(stored(engine)) == 4


def test_every_declared_index_exists_after_an_upgrade(engine: Engine) -> None:
    old_outbox(engine, with_seq=False, rows=[])
    create_schema(engine)
    from ludoteca.web.repository.schema import metadata

    seen = inspect(engine)
    for table in metadata.sorted_tables:
        names = {ix["name"] for ix in seen.get_indexes(table.name)}
        assert {str(ix.name) for ix in table.indexes} <= names, table.name
