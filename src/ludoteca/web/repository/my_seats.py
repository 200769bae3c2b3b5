"""Where a person holds seats: by account (on every device) or by the seat tokens a browser keeps."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlalchemy import and_, or_, select
from sqlalchemy.engine import Engine

from ludoteca.web.repository.schema import seats_t, tables_t

MAX_SEATS = 200
"""Most seats one person's "Your games" lists."""


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def account_seats(engine: Engine, account_id: int, since: float, limit: int = MAX_SEATS) -> list[tuple[str, int]]:
    """(table id, seat) of every seat the account holds (human or played for it by an AI) on tables
    changed since ``since`` or still waiting or in play, the most recently changed first."""
    q = (select(seats_t.c.table_id, seats_t.c.seat).join(tables_t, tables_t.c.id == seats_t.c.table_id)
         .where(seats_t.c.account_id == account_id,
                or_(tables_t.c.status.in_(("waiting", "playing")), tables_t.c.updated_at >= since))
         .order_by(tables_t.c.updated_at.desc()).limit(limit))
    with engine.connect() as conn:
        return [(r.table_id, int(r.seat)) for r in conn.execute(q)]


def token_seats(engine: Engine, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, int]]:
    """(table id, seat) of the seats whose secret token a browser holds: ``pairs`` of (table id, token)."""
    if not pairs:
        return []
    wanted = [and_(seats_t.c.table_id == table, seats_t.c.token_hash == _hash(token)) for table, token in pairs]
    q = select(seats_t.c.table_id, seats_t.c.seat).where(or_(*wanted))
    with engine.connect() as conn:
        return [(r.table_id, int(r.seat)) for r in conn.execute(q)]
