"""A table's timers: the hourglass of the seat to move and the AI seats (web/master/ai.py), armed
again after every change (a listener of the table) and run only by the worker holding the table's
lease (cluster.py)."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING

from ludoteca.web.errors import WebError
from ludoteca.web.master import pace, pace_clock
from ludoteca.web.master.ai import agent_seed
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import AI, HUMAN, PLAYING, Conflicted, Master

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")


def charge_clock(master: Master, clustered: bool, turn_based: bool = False) -> None:
    """The hourglass of the seat to move: with several workers it is charged from the time of the
    last stored action (a worker taking the table over charges what was spent already); with one,
    from now (the time the server was down is not charged)."""
    if master.status != PLAYING:
        return
    spent = max(0.0, time.time() - master.last_move_at) if clustered else 0.0
    if turn_based:
        spent = 0.0  # a turn-based table's hourglass counts only while its player has it open (pace_clock.py)
    master.clock.restart(master.state.time_left(), spent)


class Timers:
    """The hourglass and the AI seats of one table."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.ai_task: asyncio.Task[None] | None = None

    # --- a listener of the table ------------------------------------------------------------------------
    def changed(self, table: Table, change: Change) -> None:
        """After every change: the hourglass restarted, the AI seat to move woken, the abandon timer
        armed again."""
        self.arm()

    def arm(self) -> None:
        table = self.table
        clock = table.master.clock
        clock.cancel()
        pace_clock.hold(table)  # a turn-based table: the hourglass runs only while its player is there
        if table.status == PLAYING and not table.host.closing and table.runs_timers():
            clock.arm(self._on_clock)  # nothing when no hourglass runs
        self.schedule_ai()
        table.presence.arm()

    def charge(self) -> None:
        """The hourglass charged from the last stored action (several workers) or from now."""
        charge_clock(self.table.master, self.table.host.cluster is not None, pace.turn_based(self.table.settings))

    def resume(self) -> None:
        """After loading from storage: restart the clock and wake AI seats."""
        if self.table.status == PLAYING:
            self.charge()
            self.arm()

    def lease_gained(self) -> None:
        """This worker now runs the table's timers: start them (the hourglass from the stored time)."""
        if self.table.status == PLAYING:
            if self.table.master.clock.time_left is None:
                self.charge()
            self.arm()

    def stop(self) -> None:
        """Another worker runs the table's timers now (or the table closes): stop ours."""
        self.table.master.clock.cancel()
        self.table.presence.cancel()
        if self.ai_task is not None and not self.ai_task.done():
            self.ai_task.cancel()
        self.ai_task = None

    # --- the hourglass ---------------------------------------------------------------------------------
    def _on_clock(self) -> None:
        if not self.table.host.closing:
            self.table.spawn(self._timeout())

    async def _timeout(self) -> None:
        table = self.table
        try:
            runs, fence = table.lease()
            played = False
            if runs:
                try:
                    played = await table.master.timeout(fence) is not None
                except Conflicted:
                    await table.following.refresh()  # another worker stored first: read it
            if not played and table.status == PLAYING:
                self.arm()  # fired a little early: wait for the rest
        except WebError as exc:
            log.warning("table %s: timeout not applied: %s", table.id, exc.message)

    # --- AI seats --------------------------------------------------------------------------------------
    def schedule_ai(self) -> None:
        table = self.table
        if table.host.closing or not table.runs_timers():
            return
        to_move = table.to_move()
        if table.status != PLAYING or to_move is None or table.seats[to_move].kind != AI:
            return
        if self.ai_task is not None and not self.ai_task.done():
            return
        self.ai_task = asyncio.ensure_future(self._ai_move(table.master.seq))

    async def _ai_move(self, seq: int) -> None:
        table = self.table
        master = table.master
        delay = table.host.ai_delay
        if delay > 0:
            await asyncio.sleep(delay)
        seat = table.to_move()
        if seq != master.seq or table.status != PLAYING or seat is None:
            self.ai_task = None
            return
        level = table.seats[seat].level or "random"
        state = table.state
        try:
            action = await table.host.ai.choose(
                table.id, table.game_name, table.options, state.clone(), master.actions, level,
                agent_seed(master.seed, seq, seat), interactive=any(s.kind == HUMAN for s in table.seats))
        except Exception:
            log.exception("table %s: the %s AI failed; it plays a random move", table.id, level)
            legal = state.legal_actions()
            action = legal[random.Random(seq).randrange(len(legal))]
        self.ai_task = None
        try:
            runs, fence = table.lease()
            if not runs or await master.play(seat, action, seq, only_ai=True, fence=fence) is None:
                self.schedule_ai()
        except Conflicted:
            await table.following.refresh()
            self.schedule_ai()
        except WebError as exc:
            log.warning("table %s: AI move %s refused: %s", table.id, action, exc.message)
            self.schedule_ai()
