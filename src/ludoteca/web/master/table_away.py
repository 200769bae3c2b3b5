"""Away players (docs/web.md, "Table life"): since when each human seat has no connection (stored,
so that a restart counts from the same time), the abandon timer, and an abandoned seat handed to the
easiest AI or ending the table, as its creator chose."""

from __future__ import annotations

import asyncio
import logging
import time

from ludoteca.web.accounts import ratings
from ludoteca.web.errors import WebError
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, Seat
from ludoteca.web.master.table_core import TableCore

log = logging.getLogger("ludoteca.web")


class Away(TableCore):
    """Away players and abandoned seats."""

    def presence_changed(self) -> None:
        """A seated connection came or went (the hub): note since when each human seat is away
        (stored, so that a restart counts from the same time) and arm the abandon timer."""
        if not self.host.closing:
            self._track_away()
            self._arm_abandon()
            if self.host.cluster is not None:
                self.tell_presence()

    def _track_away(self) -> None:
        """Note (and store) since when each human seat without a connection is away."""
        if self.host.closing:
            return
        connected = self.hub.connected_seats()
        now = time.time()
        store = self.runs_timers()  # several workers: the one running the timers stores who is away
        for i, seat in enumerate(self.seats):
            if seat.kind != HUMAN or i in connected:
                if self.away.pop(i, None) is not None and seat.kind == HUMAN and store:
                    self._spawn(self._store_away(i, None))
            elif i not in self.away:
                self.away[i] = now
                if store:
                    self._spawn(self._store_away(i, now))

    async def _store_away(self, seat: int, since: float | None) -> None:
        try:
            await self.host.db(self.host.repo.set_away, self.id, seat, since)
        except Exception as exc:  # the timer still runs in memory
            log.warning("table %s: presence of seat %d not stored: %s", self.id, seat, exc)

    def _abandon_at(self, since: float) -> float:
        return max(since, self.playing_since) + float(self.settings["abandon_after"])

    def _arm_abandon(self) -> None:
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
            self._abandon_timer = None
        if self.status != PLAYING or self.host.closing or not self.runs_timers():
            return
        connected = self.hub.connected_seats()
        due = [self._abandon_at(since) for i, since in self.away.items()
               if self.seats[i].kind == HUMAN and i not in connected]
        if not due:
            return
        delay = max(0.0, min(due) - time.time()) + 0.05
        self._abandon_timer = asyncio.get_running_loop().call_later(
            delay, lambda: self._spawn(self._abandon_due()))

    async def _abandon_due(self) -> None:
        """The abandon timer fired: every human seat away for ``abandon_after`` seconds is abandoned."""
        try:
            async with self.master.lock:
                now = time.time()
                for seat in sorted(self.away):
                    if (self.status == PLAYING and self.seats[seat].kind == HUMAN
                            and seat not in self.hub.connected_seats() and self._abandon_at(self.away[seat]) <= now):
                        if not self.master.fenced():
                            return  # another worker runs this table's timers now
                        try:
                            await self._abandon(seat, left=False)
                        finally:
                            self.master.unfence()
        except WebError as exc:
            log.warning("table %s: abandoned seat not handled: %s", self.id, exc.message)
        self._arm_abandon()

    async def _abandon(self, seat: int, left: bool) -> None:
        """``seat``'s player is gone (lock held): the easiest AI plays it (a player who only went
        away keeps the token and may take it back), or the table ends without a winner."""
        name = self._name(seat)
        why = "left" if left else "away"
        if self.settings["abandoned"] == "end":
            result = {"returns": [0.0] * self.n_players, "winners": [], "reason": "abandoned", "seat": seat}
            await self._change(status=OVER, result=result,
                               notes=[self._note("abandoned", {"seat": seat, "name": name, "why": why})])
        else:
            level = self.easiest_level()
            token = None if left else self.seats[seat].token_hash
            account = self.seats[seat].account_id  # the account may take it back too
            if left:  # no way back; a rated table still ranks the account (last: web/accounts/ratings.py)
                account = ratings.kept_account(self.settings, self.seats[seat])
            await self._change({seat: Seat(AI, level, name, token, account)},
                               notes=[self._note("ai_took_over", {"seat": seat, "name": name, "level": level,
                                                                  "why": why})])
        self.away.pop(seat, None)
