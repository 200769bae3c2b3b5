"""Turn-based tables' deadlines in storage: one row per turn-based table (``ludo_deadlines``).

A row says who is to move at which action count (``seq``), when their time runs out (``due``) and
when they are reminded (``remind_at``), each seat's reserve and missed moves. Both times are
indexed: every worker asks for the rows due (web/master/deadlines.py), so nothing about an idle
table is held in memory. **Exactly once**: a deadline is fired by the one conditional
``UPDATE … SET fired = true WHERE seq = :seq AND NOT fired`` that succeeds (:meth:`DeadlineStore.claim`);
a reminder likewise (:meth:`DeadlineStore.claim_reminder`). A row armed for an older ``seq`` than
the table's (a worker stopped between a move's commit and the row's update), or a finished table's row
not marked ``over``, is repaired by :meth:`DeadlineStore.stale`.

**The notices owed are written in the same transaction** as the row's change (the ``then`` callbacks of
:meth:`~DeadlineStore.advance`, :meth:`~DeadlineStore.finish`, :meth:`~DeadlineStore.claim`,
:meth:`~DeadlineStore.claim_reminder`: web/notices/service.py stores the outbox rows on the same
connection): a row at the table's ``seq`` has its notice stored, a row behind it has not, and the repair
that arms it stores it then, once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.engine import Connection, Engine, Row

from ludoteca.web.repository.notices import table_hooks_t
from ludoteca.web.repository.schema import metadata, tables_t

AI_GRACE = 30.0
"""Seconds after which an AI seat's turn not played yet (its worker stopped) makes a worker load the table."""

deadlines_t = Table(
    "ludo_deadlines", metadata,
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True),
    Column("seq", Integer, nullable=False),
    Column("seat", Integer, nullable=True),
    Column("ai", Boolean, nullable=False, default=False),
    Column("armed_at", Float, nullable=False),
    Column("due", Float, nullable=True),
    Column("remind_at", Float, nullable=True),
    Column("reminded", Boolean, nullable=False, default=False),
    Column("fired", Boolean, nullable=False, default=False),
    Column("fired_at", Float, nullable=True),
    Column("reserves", Text, nullable=False),
    Column("misses", Text, nullable=False),
    Column("over", Boolean, nullable=True),
    Column("missed_seq", Integer, nullable=True),
    Column("creator_account", Integer, nullable=True),
    Column("creator_seat", Integer, nullable=True),
    Index("ludo_deadlines_due", "fired", "due"),
    Index("ludo_deadlines_remind", "reminded", "remind_at"),
)
"""One row per turn-based table (web/master/pace.py): who is to move (``seat``; ``ai`` when an AI
seat is, due after :data:`AI_GRACE`: if the AI has not played by then, a worker loads the table and it
plays), until when, each seat's reserve
(JSON list of seconds) and missed moves (JSON list of counts); ``missed_seq``: the action count whose
miss was counted last (a deadline fired again at the same ``seq`` counts no second miss); ``over``: the
game's end was handled (its notices stored; null on rows older than the column: never repaired);
``creator_account`` / ``creator_seat``: who made the table (their account, the seat they took at creation),
the only one who may see or change the table's webhook (web/notices/table_hook.py; both null: nobody)."""

Then = Callable[[Connection, "Deadline"], None]
"""Work done in the transaction that changes a row (the notices it owes stored), given the row after it."""


@dataclass
class Deadline:
    """One stored deadline."""

    table_id: str
    seq: int
    seat: int | None
    ai: bool
    armed_at: float
    due: float | None
    remind_at: float | None
    reminded: bool
    fired: bool
    fired_at: float | None
    reserves: list[float]
    misses: list[int]
    over: bool = False
    missed_seq: int | None = None


@dataclass(frozen=True)
class Turn:
    """What a committed change left: the action count, the seat to move (None: nobody — the game is
    drawing or over), whether an AI plays it, and the seats that moved in the change."""

    seq: int
    to_move: int | None
    ai: bool
    movers: tuple[int, ...]
    players: int


def _row(r: Row[Any]) -> Deadline:
    return Deadline(table_id=r.table_id, seq=int(r.seq), seat=r.seat, ai=bool(r.ai), armed_at=float(r.armed_at),
                    due=r.due, remind_at=r.remind_at, reminded=bool(r.reminded), fired=bool(r.fired),
                    fired_at=r.fired_at, reserves=[float(x) for x in json.loads(r.reserves)],
                    misses=[int(x) for x in json.loads(r.misses)], over=bool(r.over),
                    missed_seq=r.missed_seq)


class DeadlineStore:
    """The ``ludo_deadlines`` rows (synchronous: run them in the lobby's storage thread)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _locked(self, conn: Connection, table_id: str) -> Deadline | None:
        q = select(deadlines_t).where(deadlines_t.c.table_id == table_id)
        if self.engine.dialect.name == "postgresql":
            q = q.with_for_update()
        row = conn.execute(q).first()
        return _row(row) if row is not None else None

    def get(self, table_id: str) -> Deadline | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(deadlines_t).where(deadlines_t.c.table_id == table_id)).first()
        return _row(row) if row is not None else None

    def of_tables(self, ids: Sequence[str]) -> dict[str, Deadline]:
        if not ids:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(select(deadlines_t).where(deadlines_t.c.table_id.in_(list(ids))))
            return {r.table_id: _row(r) for r in rows}

    def create(self, table_id: str, players: int, now: float, hook: tuple[str, str] | None = None,
               hook_of: str | None = None, creator: tuple[int | None, int | None] = (None, None)) -> None:
        """The row of a new turn-based table: nobody to move yet (``seq`` -1: the start, at ``seq`` 0 when
        the game opens without a chance outcome, is still a turn to arm). ``hook``: the table's webhook
        and its language; ``hook_of``: a table whose webhook it takes (the game it is a rematch of);
        ``creator``: the creator's account and the seat they took (each None when none; a rematch made by
        the server keeps the creator of the game it follows: the players keep their seats and tokens)."""
        with self.engine.begin() as conn:
            if creator == (None, None) and hook_of is not None:
                before = conn.execute(select(deadlines_t.c.creator_account, deadlines_t.c.creator_seat)
                                      .where(deadlines_t.c.table_id == hook_of)).first()
                if before is not None:
                    creator = (before.creator_account, before.creator_seat)
            conn.execute(insert(deadlines_t).values(
                table_id=table_id, seq=-1, seat=None, ai=False, armed_at=now, due=None, remind_at=None,
                reminded=False, fired=False, fired_at=None, reserves=json.dumps([0.0] * players),
                misses=json.dumps([0] * players), over=False, creator_account=creator[0],
                creator_seat=creator[1]))
            if hook is None and hook_of is not None:
                found = conn.execute(select(table_hooks_t.c.url, table_hooks_t.c.lang)
                                     .where(table_hooks_t.c.table_id == hook_of)).first()
                hook = (str(found.url), str(found.lang)) if found is not None else None
            if hook is not None:
                conn.execute(insert(table_hooks_t).values(table_id=table_id, url=hook[0], lang=hook[1],
                                                          created_at=now))

    def advance(self, table_id: str, turn: Turn, now: float, seconds: Any, reserve_after: Any,
                then: Then | None = None) -> Deadline | None:
        """Arm the row for ``turn`` (one transaction, the row locked): the turn of the seat that was to
        move ends (``reserve_after(reserve, spent)`` is its new reserve) and the next seat's begins
        (``seconds(reserve)`` long); a seat that moved and is still to move keeps its deadline. None when
        the row is already at ``turn.seq`` or beyond (another worker or an earlier call armed it).
        ``then(conn, row)`` runs in the same transaction when a human seat's turn begins (its notice)."""
        with self.engine.begin() as conn:
            row = self._locked(conn, table_id)
            if row is None:
                conn.execute(insert(deadlines_t).values(
                    table_id=table_id, seq=-1, seat=None, ai=False, armed_at=now, reminded=False, fired=False,
                    reserves=json.dumps([0.0] * turn.players), misses=json.dumps([0] * turn.players)))
                row = self._locked(conn, table_id)
                assert row is not None
            elif row.seq >= turn.seq:
                return None
            values: dict[str, Any] = {"seq": turn.seq}
            same = (row.seat is not None and row.seat == turn.to_move and not row.ai and not turn.ai
                    and set(turn.movers) <= {row.seat} and row.due is not None and not row.fired)
            if not same:
                if row.seat is not None and not row.ai and row.due is not None:
                    row.reserves[row.seat] = float(reserve_after(row.reserves[row.seat], now - row.armed_at))
                due: float | None = None
                remind: float | None = None
                if turn.to_move is not None and turn.ai:
                    due = now + AI_GRACE
                elif turn.to_move is not None:
                    length = float(seconds(row.reserves[turn.to_move]))
                    due = now + length
                    remind = due - 0.25 * length
                values.update(seat=turn.to_move, ai=turn.ai, armed_at=now, due=due, remind_at=remind,
                              reminded=False, fired=False, fired_at=None, reserves=json.dumps(row.reserves),
                              over=False)
            conn.execute(update(deadlines_t).where(deadlines_t.c.table_id == table_id).values(**values))
            row = self._locked(conn, table_id)
            assert row is not None
            if not same and then is not None and row.seat is not None and not row.ai:
                then(conn, row)
        return row

    def due(self, now: float, limit: int = 200) -> list[Deadline]:
        """The deadlines due at ``now`` not fired yet, the oldest first."""
        q = (select(deadlines_t).where(deadlines_t.c.fired.is_(False), deadlines_t.c.due <= now)
             .order_by(deadlines_t.c.due).limit(limit))
        with self.engine.connect() as conn:
            return [_row(r) for r in conn.execute(q)]

    def next_due(self) -> float | None:
        """The earliest deadline or reminder not fired yet (None: none)."""
        with self.engine.connect() as conn:
            a = conn.execute(select(deadlines_t.c.due).where(deadlines_t.c.fired.is_(False),
                                                              deadlines_t.c.due.is_not(None))
                             .order_by(deadlines_t.c.due).limit(1)).scalar()
            b = conn.execute(select(deadlines_t.c.remind_at).where(deadlines_t.c.reminded.is_(False),
                                                                    deadlines_t.c.remind_at.is_not(None))
                             .order_by(deadlines_t.c.remind_at).limit(1)).scalar()
        times = [float(x) for x in (a, b) if x is not None]
        return min(times) if times else None

    def reminders(self, now: float, limit: int = 200) -> list[Deadline]:
        q = (select(deadlines_t).where(deadlines_t.c.reminded.is_(False), deadlines_t.c.remind_at <= now,
                                       deadlines_t.c.fired.is_(False))
             .order_by(deadlines_t.c.remind_at).limit(limit))
        with self.engine.connect() as conn:
            return [_row(r) for r in conn.execute(q)]

    def claim(self, table_id: str, seq: int, now: float, miss: int | None, then: Then | None = None) -> int | None:
        """Take the deadline of ``table_id`` at ``seq`` to fire it: True for exactly one caller. With
        ``miss`` (a seat), that seat's missed moves count one more — once per ``seq``: a deadline fired
        again at the same ``seq`` (its worker stopped before the move was played) counts no second miss;
        returns its count then (0 without ``miss``), None when the deadline was fired already or moved
        on. ``then(conn, row)`` runs in the same transaction when it is taken."""
        with self.engine.begin() as conn:
            row = self._locked(conn, table_id)
            if row is None or row.seq != seq or row.fired:
                return None
            values: dict[str, Any] = {"fired": True, "fired_at": now}
            count = 0
            if miss is not None:
                if row.missed_seq != seq:
                    row.misses[miss] += 1
                    values.update(misses=json.dumps(row.misses), missed_seq=seq)
                count = row.misses[miss]
            done = conn.execute(update(deadlines_t).where(deadlines_t.c.table_id == table_id,
                                                          deadlines_t.c.seq == seq,
                                                          deadlines_t.c.fired.is_(False)).values(**values))
            if done.rowcount != 1:
                return None
            if then is not None:
                then(conn, row)
            return count

    def unclaim(self, table_id: str, seq: int, miss: int | None) -> None:
        """The firing of a claimed deadline failed: due again (and the miss not counted)."""
        with self.engine.begin() as conn:
            row = self._locked(conn, table_id)
            if row is None or row.seq != seq or not row.fired:
                return
            values: dict[str, Any] = {"fired": False, "fired_at": None}
            if miss is not None and row.missed_seq == seq:
                row.misses[miss] = max(0, row.misses[miss] - 1)
                values.update(misses=json.dumps(row.misses), missed_seq=None)
            conn.execute(update(deadlines_t).where(deadlines_t.c.table_id == table_id,
                                                   deadlines_t.c.seq == seq).values(**values))

    def claim_reminder(self, table_id: str, seq: int, then: Then | None = None) -> bool:
        """Take the reminder of ``table_id`` at ``seq`` (True for exactly one caller); ``then(conn, row)``
        runs in the same transaction when it is taken (the reminder's notice)."""
        with self.engine.begin() as conn:
            done = conn.execute(update(deadlines_t).where(
                deadlines_t.c.table_id == table_id, deadlines_t.c.seq == seq,
                deadlines_t.c.reminded.is_(False)).values(reminded=True))
            if done.rowcount != 1:
                return False
            if then is not None:
                row = self._locked(conn, table_id)
                if row is not None:
                    then(conn, row)
            return True

    def stale(self, now: float, grace: float, limit: int = 200) -> list[str]:
        """Tables whose row needs a worker: armed for fewer actions than the table has (a worker stopped
        between a move's commit and the row's update), nobody armed while the table plays, fired more
        than ``grace`` seconds ago and still at the same action count (a worker stopped while firing), or
        a game over whose end was not handled (a worker stopped before its notices were stored)."""
        q = (select(deadlines_t.c.table_id).join(tables_t, tables_t.c.id == deadlines_t.c.table_id)
             .where(or_(and_(tables_t.c.status == "playing",
                             or_(deadlines_t.c.seq < tables_t.c.n_actions,
                                 and_(deadlines_t.c.seat.is_(None), deadlines_t.c.due.is_(None)),
                                 and_(deadlines_t.c.fired.is_(True), deadlines_t.c.fired_at < now - grace,
                                      deadlines_t.c.seq == tables_t.c.n_actions))),
                        and_(tables_t.c.status == "over", deadlines_t.c.over.is_(False))))
             .limit(limit))
        with self.engine.connect() as conn:
            return [r.table_id for r in conn.execute(q)]

    def refire(self, table_id: str, seq: int) -> None:
        """A deadline claimed by a worker that stopped before firing it: due again (its miss stays counted)."""
        with self.engine.begin() as conn:
            conn.execute(update(deadlines_t).where(deadlines_t.c.table_id == table_id, deadlines_t.c.seq == seq)
                         .values(fired=False, fired_at=None))

    def finish(self, table_id: str, seq: int, then: Then | None = None) -> bool:
        """The game is over at ``seq``: nothing is due any more. ``then(conn, row)`` runs in the same
        transaction, the first time only (the game's end told once); True then."""
        with self.engine.begin() as conn:
            row = self._locked(conn, table_id)
            if row is None or row.over:
                return False
            conn.execute(update(deadlines_t).where(deadlines_t.c.table_id == table_id)
                         .values(seq=max(row.seq, seq), seat=None, ai=False, due=None, remind_at=None, fired=False,
                                 over=True))
            if then is not None:
                then(conn, row)
            return True

    def creator(self, table_id: str) -> tuple[int | None, int | None] | None:
        """The account and the seat of a turn-based table's creator (each None when none); None: no row."""
        with self.engine.connect() as conn:
            row = conn.execute(select(deadlines_t.c.creator_account, deadlines_t.c.creator_seat)
                               .where(deadlines_t.c.table_id == table_id)).first()
        return (row.creator_account, row.creator_seat) if row is not None else None

    def hook(self, table_id: str) -> str | None:
        """The table's webhook (None: none)."""
        with self.engine.connect() as conn:
            url = conn.execute(select(table_hooks_t.c.url).where(table_hooks_t.c.table_id == table_id)).scalar()
        return str(url) if url is not None else None

    def set_hook(self, table_id: str, hook: tuple[str, str] | None, now: float) -> None:
        """Replace the table's webhook by ``hook`` (its URL, its language), or remove it (None): the notices
        not sent yet go to the new one, or are dropped (web/notices/service.py reads it when sending)."""
        with self.engine.begin() as conn:
            conn.execute(delete(table_hooks_t).where(table_hooks_t.c.table_id == table_id))
            if hook is not None:
                conn.execute(insert(table_hooks_t).values(table_id=table_id, url=hook[0], lang=hook[1],
                                                          created_at=now))

    def forget(self, table_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(deadlines_t).where(deadlines_t.c.table_id == table_id))

    def pending(self) -> int:
        """Deadlines armed and not fired."""
        with self.engine.connect() as conn:
            q = (select(func.count()).select_from(deadlines_t)
                 .where(deadlines_t.c.fired.is_(False), deadlines_t.c.due.is_not(None)))
            return int(conn.execute(q).scalar() or 0)
