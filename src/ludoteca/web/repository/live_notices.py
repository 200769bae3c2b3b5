"""Live tables whose last notices may have been lost: the rows web/master/live_notices.py repairs from.

A live table's notices are stored just after its change is committed (web/master/deadlines.py, ``notify``);
a worker killed in between loses them. They were owed to a player with an account who did not have the
table open at that change — and a player's absence is stored (``ludo_seats.away_since``, web/master/presence.py),
so the database says who was owed one: a human seat away since before the table's last change
(``away_since <= updated_at``, give or take :data:`SLACK`) and, at a game's end, a seat an AI took over
from its player too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import and_, exists, or_, select
from sqlalchemy.engine import Engine

from ludoteca.web.repository.deadlines import deadlines_t
from ludoteca.web.repository.schema import seats_t, tables_t

SLACK = 2.0
"""Seconds: a seat found away this soon after the change is taken as away at it (the absence is stored just
after the commit that made it, e.g. the join that starts a game with a player not connected)."""
LIMIT = 500
"""Tables looked at, at most, per call (the most recently changed)."""


@dataclass(frozen=True)
class OwedSeat:
    """A seat that was owed the notice of its table's last change."""

    seat: int
    kind: str
    name: str | None
    account_id: int


@dataclass(frozen=True)
class OwedTable:
    """A live table in play or over whose last change owed a notice to ``seats``."""

    table_id: str
    game: str
    status: str
    n_actions: int
    seats: tuple[OwedSeat, ...]


def _away_at_change() -> object:
    return and_(seats_t.c.kind == "human", seats_t.c.away_since.is_not(None),
                seats_t.c.away_since <= tables_t.c.updated_at + SLACK)


def owed(engine: Engine, statuses: Sequence[str], since: float | None = None, limit: int = LIMIT) -> list[OwedTable]:
    """Live tables in ``statuses`` (``playing``: a human seat away at the last change; ``over``: that, or a seat
    an AI took from its player) changed at ``since`` or later (None: whenever), with their owed seats."""
    away = _away_at_change()
    taken = and_(seats_t.c.kind == "ai", seats_t.c.token_hash.is_not(None))
    owing = seats_t.c.account_id.is_not(None) & or_(
        away, and_(tables_t.c.status == "over", taken))  # type: ignore[arg-type]
    q = (select(tables_t.c.id, tables_t.c.game, tables_t.c.status, tables_t.c.n_actions)
         .where(tables_t.c.status.in_(list(statuses)), tables_t.c.id.not_in(select(deadlines_t.c.table_id)),
                exists().where(seats_t.c.table_id == tables_t.c.id, owing))
         .order_by(tables_t.c.updated_at.desc()).limit(limit))
    if since is not None:
        q = q.where(tables_t.c.updated_at >= since)
    with engine.connect() as conn:
        found = list(conn.execute(q))
        if not found:
            return []
        seats = conn.execute(select(seats_t.c.table_id, seats_t.c.seat, seats_t.c.kind, seats_t.c.name,
                                    seats_t.c.account_id)
                             .select_from(seats_t.join(tables_t, tables_t.c.id == seats_t.c.table_id))
                             .where(seats_t.c.table_id.in_([r.id for r in found]), owing)
                             .order_by(seats_t.c.table_id, seats_t.c.seat))
        by_table: dict[str, list[OwedSeat]] = {}
        for s in seats:
            by_table.setdefault(s.table_id, []).append(OwedSeat(int(s.seat), str(s.kind), s.name, int(s.account_id)))
    return [OwedTable(r.id, str(r.game), str(r.status), int(r.n_actions), tuple(by_table.get(r.id, ())))
            for r in found]
