"""After every change the master commits: the viewers told (and the other workers), the hourglass
restarted, the AI seat to move woken (web/master/ai.py), the abandon timer armed again."""

from __future__ import annotations

import asyncio
import logging
import random
import time

from ludoteca.web.accounts import ratings
from ludoteca.web.errors import WebError
from ludoteca.web.master.ai import agent_seed
from ludoteca.web.master.master import AI, HUMAN, PLAYING
from ludoteca.web.master.table_away import Away

log = logging.getLogger("ludoteca.web")


class Turns(Away):
    """What follows a committed change: publishing it, the hourglass and the AI seats."""

    def publish(self, log_from: int, everything: bool = False) -> None:
        """The master committed a change: tell the viewers, restart the hourglass, wake an AI
        (and, with several workers, tell the other workers)."""
        ratings.table_changed(self)  # a rated table just ended: its players' ratings (issue 14)
        self._show(log_from, everything)
        news, self.master.news = self.master.news, None
        if news is not None:
            self.announce(rows=news)  # the other workers replay the actions without reading them back
        else:
            self.announce()

    def _show(self, log_from: int, everything: bool = False) -> None:
        self._legal = None
        started = self.status == PLAYING and not self._was_playing
        if started:
            self.playing_since = time.time()
        self._was_playing = self.status == PLAYING
        self._track_away()  # a seat taken by someone not connected (a join over HTTP) is away from now
        self.hub.publish(log_from, everything)
        shared = self.host.cluster
        if shared is not None and not self.host.closing:
            if started:
                shared.claim(self)  # a game begins: one worker runs its timers
            elif self.status != PLAYING and shared.holds(self.id):
                shared.release(self.id)
        self._after_change()

    def _after_change(self) -> None:
        clock = self.master.clock
        clock.cancel()
        if self.status == PLAYING and not self.host.closing and self.runs_timers():
            clock.arm(self._on_clock)  # nothing when no hourglass runs
        self.schedule_ai()
        self._arm_abandon()

    def _restart_clock(self) -> None:
        """The hourglass of the seat to move: with several workers it is charged from the time of
        the last stored action (a worker taking the table over charges what was spent already);
        with one, from now (the time the server was down is not charged)."""
        if self.status != PLAYING:
            return
        spent = max(0.0, time.time() - self.master.last_move_at) if self.host.cluster is not None else 0.0
        self.master.clock.restart(self.state.time_left(), spent)

    def resume(self) -> None:
        """After loading from storage: restart the clock and wake AI seats."""
        if self.status == PLAYING:
            self._restart_clock()
            self._after_change()

    def _on_clock(self) -> None:
        if not self.host.closing:
            self._spawn(self._timeout())

    async def _timeout(self) -> None:
        try:
            if not await self.master.timeout() and self.status == PLAYING:
                self._after_change()  # fired a little early: wait for the rest
        except WebError as exc:
            log.warning("table %s: timeout not applied: %s", self.id, exc.message)

    def schedule_ai(self) -> None:
        if self.host.closing or not self.runs_timers():
            return
        to_move = self.to_move()
        if self.status != PLAYING or to_move is None or self.seats[to_move].kind != AI:
            return
        if self.ai_task is not None and not self.ai_task.done():
            return
        self.ai_task = asyncio.ensure_future(self._ai_move(self.master.seq))

    async def _ai_move(self, seq: int) -> None:
        delay = self.host.ai_delay
        if delay > 0:
            await asyncio.sleep(delay)
        seat = self.to_move()
        if seq != self.master.seq or self.status != PLAYING or seat is None:
            self.ai_task = None
            return
        level = self.seats[seat].level or "random"
        state = self.state
        try:
            action = await self.host.ai.choose(
                self.id, self.game_name, self.options, state.clone(), self.master.actions, level,
                agent_seed(self.master.seed, seq, seat), interactive=any(s.kind == HUMAN for s in self.seats))
        except Exception:
            log.exception("table %s: the %s AI failed; it plays a random move", self.id, level)
            legal = state.legal_actions()
            action = legal[random.Random(seq).randrange(len(legal))]
        self.ai_task = None
        try:
            if not await self.master.play(seat, action, seq, only_ai=True):
                self.schedule_ai()
        except WebError as exc:
            log.warning("table %s: AI move %s refused: %s", self.id, action, exc.message)
            self.schedule_ai()
