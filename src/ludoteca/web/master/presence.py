"""Who is at a table (docs/web.md, "Table life"): since when each human seat has no connection
(stored, so that a restart counts from the same time), the abandon timer, and an abandoned seat
handed to the easiest AI or ending the table, as its creator chose."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

from ludoteca.web.accounts import ratings
from ludoteca.web.errors import WebError
from ludoteca.web.master import pace
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, Seat
from ludoteca.web.repository.store import TableData

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")


class Presence:
    """Away players and abandoned seats."""

    def __init__(self, table: Table, data: TableData) -> None:
        self.table = table
        now = time.time()
        self.away: dict[int, float] = {i: s.away_since if s.away_since is not None else now
                                       for i, s in enumerate(data.seats) if s.kind == HUMAN}
        """Human seats without a connection: seat -> since when (epoch seconds). A seat whose stored
        ``away_since`` is empty was connected when the server stopped: it counts from the load."""
        self.playing_since = data.action_times[0] if data.action_times else data.updated_at
        """When the game began (abandoned seats count from then at the earliest)."""
        self._timer: asyncio.TimerHandle | None = None

    # --- a listener of the table ------------------------------------------------------------------------
    def changed(self, table: Table, change: Change) -> None:
        """A change committed: a game that begins counts its away seats from now, and a seat taken by
        someone not connected (a join over HTTP) is away from now."""
        if change.started:
            self.playing_since = time.time()
        self.track()

    def connections_changed(self) -> None:
        """A seated connection came or went (the hub): note since when each human seat is away
        (stored, so that a restart counts from the same time) and arm the abandon timer."""
        table = self.table
        if not table.host.closing:
            self.track()
            self.arm()
            if pace.turn_based(table.settings):
                table.timers.arm()  # its hourglass runs only while the player to move is there (pace_clock.py)
            if table.host.cluster is not None:
                table.following.tell_presence()

    def seen(self) -> None:
        """Another worker said which seats are connected through it."""
        if not self.table.host.closing:
            self.track()
            self.arm()
            if pace.turn_based(self.table.settings):
                self.table.timers.arm()  # the hourglass of a turn-based table (pace_clock.py)
        self.table.hub.publish_seats()

    def track(self) -> None:
        """Note (and store) since when each human seat without a connection is away."""
        table = self.table
        if table.host.closing:
            return
        connected = table.hub.connected_seats()
        now = time.time()
        store = table.runs_timers()  # several workers: the one running the timers stores who is away
        for i, seat in enumerate(table.seats):
            if seat.kind != HUMAN or i in connected:
                if self.away.pop(i, None) is not None and seat.kind == HUMAN and store:
                    table.spawn(self._store(i, None))
            elif i not in self.away:
                self.away[i] = now
                if store:
                    table.spawn(self._store(i, now))

    async def _store(self, seat: int, since: float | None) -> None:
        host = self.table.host
        try:
            await host.db(host.repo.set_away, self.table.id, seat, since)
        except Exception as exc:  # the timer still runs in memory
            log.warning("table %s: presence of seat %d not stored: %s", self.table.id, seat, exc)

    def abandon_at(self, since: float) -> float:
        return max(since, self.playing_since) + float(self.table.settings["abandon_after"])

    # --- the abandon timer -------------------------------------------------------------------------------
    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def arm(self) -> None:
        """The abandon timer, for the first away seat due (only where the table's timers run)."""
        self.cancel()
        table = self.table
        if table.status != PLAYING or table.host.closing or not table.runs_timers():
            return
        if pace.turn_based(table.settings):
            return  # a turn-based table's players are offline for days: its deadlines apply (deadlines.py)
        connected = table.hub.connected_seats()
        due = [self.abandon_at(since) for i, since in self.away.items()
               if table.seats[i].kind == HUMAN and i not in connected]
        if not due:
            return
        delay = max(0.0, min(due) - time.time()) + 0.05
        self._timer = asyncio.get_running_loop().call_later(delay, lambda: table.spawn(self._due()))

    async def _due(self) -> None:
        """The abandon timer fired: every human seat away for ``abandon_after`` seconds is abandoned."""
        table = self.table
        try:
            async with table.master.lock:
                now = time.time()
                for seat in sorted(self.away):
                    if (table.status == PLAYING and table.seats[seat].kind == HUMAN
                            and seat not in table.hub.connected_seats() and self.abandon_at(self.away[seat]) <= now):
                        runs, fence = table.lease()
                        if not runs:
                            return  # another worker runs this table's timers now
                        await self.abandon(seat, left=False, fence=fence)
        except WebError as exc:
            log.warning("table %s: abandoned seat not handled: %s", table.id, exc.message)
        self.arm()

    async def abandon(self, seat: int, left: bool, fence: tuple[str, int] | None = None) -> None:
        """``seat``'s player is gone (lock held): the easiest AI plays it (a player who only went
        away keeps the token and may take it back), or the table ends without a winner."""
        table = self.table
        name = table.name_of(seat)
        why = "left" if left else "away"
        if table.settings["abandoned"] == "end":
            result = {"returns": [0.0] * table.n_players, "winners": [], "reason": "abandoned", "seat": seat}
            await table.change(status=OVER, result=result, fence=fence,
                               notes=[table.talk.note("abandoned", {"seat": seat, "name": name, "why": why})])
        else:
            level = table.easiest_level()
            token = None if left else table.seats[seat].token_hash
            account = table.seats[seat].account_id  # the account may take it back too
            if left:  # no way back; a rated table still ranks the account (last: web/accounts/ratings.py)
                account = ratings.kept_account(table.settings, table.seats[seat])
            await table.change({seat: Seat(AI, level, name, token, account)}, fence=fence,
                               notes=[table.talk.note("ai_took_over", {"seat": seat, "name": name,
                                                                        "level": level, "why": why})])
        self.away.pop(seat, None)
