"""A live table's notices that a killed worker never stored, told by the next one (once).

A live table tells a player ``your_turn`` when their turn begins while they do not have the table open, and
``game_over`` at its end (web/master/deadlines.py ``changed``): stored just after the change's commit, so a
worker killed in between loses them — and an away player not told that it is their move loses their seat
to the abandon timer. The database says who was owed one (web/repository/live_notices.py: a seat away since
before the table's last change), and the outbox stores a notice once per table, action count, seat, event,
account and channel (``ludo_notice_outbox_once``): so telling them again is safe, and this pass does it:

- **in play**: every repair round (web/master/deadlines.py, every ten seconds) each worker looks at the
  live tables it plays (the ones it holds the lease of; all of its own with one worker) whose player to move
  was away at the last change and still has no connection: their ``your_turn`` at the table's action count is
  stored unless it is already (remembered per table here, so each turn is written at most once per worker);
- **ended**: at a worker's start, the live tables that ended in the last :data:`ENDED_WINDOW` seconds have
  the ``game_over`` of their players away at the end stored unless it is already.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ludoteca.web.master import pace
from ludoteca.web.master.master import HUMAN, OVER, PLAYING
from ludoteca.web.notices.events import Notice
from ludoteca.web.repository.live_notices import OwedTable, owed

if TYPE_CHECKING:
    from ludoteca.web.master.deadlines import Deadlines

log = logging.getLogger("ludoteca.web")

ENDED_WINDOW = 24 * 3600.0
"""Seconds: a live game that ended longer ago than this before a worker's start is not told any more."""
REMEMBERED = 50_000
"""Tables whose told turn is remembered (then forgotten at once: the outbox's index still stops a second)."""


class LiveNotices:
    """One worker's repair of its live tables' notices (a part of its :class:`Deadlines`)."""

    def __init__(self, deadlines: Deadlines) -> None:
        self.deadlines = deadlines
        self.told: dict[str, int] = {}
        """Table -> the action count whose ``your_turn`` this worker made sure of."""

    async def repair(self, starting: bool) -> int:
        """One pass (``starting``: the worker's first, which looks at recently ended games too); how many
        notices were handed to the outbox (a notice stored already is not stored again). A failure is
        logged: the next pass tries again."""
        try:
            return await self._repair(starting)
        except Exception:
            log.warning("live tables' notices not repaired (tried again later)", exc_info=True)
            return 0

    async def _repair(self, starting: bool) -> int:
        lobby = self.deadlines.lobby
        now = self.deadlines.clock()
        found: list[OwedTable] = await lobby.db(owed, lobby.repo.engine, (PLAYING,), None)
        if starting:
            found += await lobby.db(owed, lobby.repo.engine, (OVER,), now - ENDED_WINDOW)
        notices: list[Notice] = []
        for table in found:
            notices += self._game_over(table) if table.status == OVER else self._your_turn(table)
        if not notices:
            return 0
        await lobby.db(self._store, notices, now)
        self.deadlines._notifier().wake()
        return len(notices)

    def _your_turn(self, found: OwedTable) -> list[Notice]:
        """The table's ``your_turn`` when this worker plays it and its player to move was away at the last
        change and still is."""
        lobby = self.deadlines.lobby
        table = lobby.tables.get(found.table_id)
        cluster = lobby.cluster
        if (table is None or table.status != PLAYING or pace.turn_based(table.settings)
                or (cluster is not None and not cluster.holds(table.id))):
            return []
        seq = table.master.seq
        to_move = table.to_move()
        if self.told.get(table.id) == seq or to_move is None or table.seats[to_move].kind != HUMAN:
            return []
        if to_move not in {s.seat for s in found.seats} or to_move in table.hub.connected_seats():
            return []
        if len(self.told) >= REMEMBERED:
            self.told.clear()
        self.told[table.id] = seq
        return [self.deadlines._notice(table, "your_turn", to_move, None, seq)]

    @staticmethod
    def _game_over(found: OwedTable) -> list[Notice]:
        return [Notice(kind="game_over", table=found.table_id, game=found.game, seat=s.seat, account=s.account_id,
                       player=s.name or f"Player {s.seat + 1}", due=None, watching=False, seq=found.n_actions)
                for s in found.seats]

    def _store(self, notices: list[Notice], now: float) -> int:
        notifier: Any = self.deadlines._notifier()
        with self.deadlines.lobby.repo.engine.begin() as conn:
            return int(notifier.write(conn, notices, now))
