"""A table followed by several workers (cluster.py, docs/web.md): the lease says which worker runs
its timers; the others take in each change from the bus's news (or read the database when a message
is missing or is about a change around the game), and every worker says which seats are connected
through it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ludoteca.web.accounts.moderation import apply_removals
from ludoteca.web.master.master import BROKEN, OVER, PLAYING, Seat
from ludoteca.web.master.table_turns import Turns

log = logging.getLogger("ludoteca.web")

NEWS_QUEUED = 256
"""Several workers: messages of the other workers waiting per table; beyond, they are dropped and
the table reads the database once instead."""


class Following(Turns):
    """Several workers: the lease, the other workers' news and presence, catching up."""

    def lease_gained(self) -> None:
        """This worker now runs the table's timers: start them (the hourglass from the stored time)."""
        if self.status == PLAYING:
            self._arm_or_keep_clock()
            self._after_change()

    def _arm_or_keep_clock(self) -> None:
        if self.master.clock.time_left is None:
            self._restart_clock()

    def lease_lost(self) -> None:
        """Another worker runs the table's timers now: stop ours."""
        self.master.clock.cancel()
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
            self._abandon_timer = None
        if self.ai_task is not None and not self.ai_task.done():
            self.ai_task.cancel()
        self.ai_task = None

    async def refresh(self) -> bool:
        """Read what other workers stored since (actions, seats, status, notes) and show it."""
        async with self.master.lock:
            return await self._catch_up()

    async def _catch_up(self) -> bool:
        """Catch up with the database (lock held): replay the actions stored after our ``seq``
        (their chance outcomes were drawn with the same seeded generators, so the positions are
        the same), take the seats, status, result and new notes; True when something changed."""
        master = self.master
        delta = await self.host.db(self.host.repo.delta, self.id, master.seq, self.note_id)
        if delta is None:
            return False
        first = master.seq
        changed = master.absorb(delta.actions) > 0
        if delta.action_times:
            master.last_move_at = delta.action_times[-1]
        seats = [Seat(s.kind, s.level, s.name, s.token_hash, s.account_id) for s in delta.seats]
        if seats != master.seats[:len(seats)] and len(seats) == len(master.seats):
            master.seats[:] = seats
            changed = True
        if delta.status != master.status and master.status != BROKEN:
            master.status = delta.status
            changed = True
        if delta.result is not None and delta.result != master.result:
            master.result = delta.result
            changed = True
        if delta.rematch_id is not None and delta.rematch_id != self.rematch_id:
            self.rematch_id = delta.rematch_id
            self.hub.push_all({"type": "rematch", "table": delta.rematch_id})
        self.note_id = delta.last_note_id
        known = {(n.kind, n.channel, n.at_seq, round(n.created_at, 3)) for n in self.notes}
        fresh = [n for n in delta.notes if (n.kind, n.channel, n.at_seq, round(n.created_at, 3)) not in known]
        if fresh:
            apply_removals(self.notes, fresh)
            self.notes.extend(fresh)
            self.offer = self._offer_of(list(self.notes))
            self.hub.push_notes([(n.channel, n.to_json()) for n in fresh])
            changed = True
        if changed:
            self._restart_clock()
            self._show(first, everything=master.result is not None and master.secrets)
        return changed

    def hear(self, body: dict[str, Any], origin: str) -> None:
        """A message of another worker about this table (cluster.py). Presence is taken at once;
        news of a change is queued and taken in order by a task of the table, so the bus's
        subscriber, shared by every table, never waits for this table's lock or for the database."""
        if "presence" in body:
            seats = body.get("presence")
            if isinstance(seats, list):
                self.hub.remote[origin] = frozenset(s for s in seats if isinstance(s, int))
                self._presence_seen()
            return
        if body.get("ask"):  # a worker loaded the table: tell it who is connected here
            self.tell_presence()
            return
        if "gone" in body:
            gone = body.get("gone")
            if isinstance(gone, str):
                self.worker_gone(gone)
            return
        if not body and self._news and not self._news[-1]:
            return  # a read of the database is queued already (hints come as empty news, cluster.py)
        if len(self._news) >= NEWS_QUEUED:
            self._news.clear()  # far behind: one read of the database catches up with all of it
        self._news.append(body)
        if self._news_task is None or self._news_task.done():
            self._news_task = asyncio.ensure_future(self._take_news())

    async def on_bus(self, body: dict[str, Any], origin: str) -> None:
        """:meth:`hear`, then wait until the news is taken in."""
        self.hear(body, origin)
        task = self._news_task
        if task is not None and not task.done():
            await asyncio.shield(task)

    async def _take_news(self) -> None:
        while self._news:
            body = self._news.popleft()
            try:
                async with self.master.lock:
                    if not self._apply_news(body.get("rows")):
                        self.news_read += 1
                        await self._catch_up()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("table %s: news of another worker not taken in", self.id, exc_info=True)

    def _apply_news(self, rows: Any) -> bool:
        """Take in the actions another worker stored, from its message (lock held): ``rows`` is
        ``master.news`` of that worker (``{"from": seq, "a": [[seat, action], ...], "at": time}``).
        They are replayed like actions read from the database (chance outcomes are seeded by
        ``seq``). False when the database must be read instead: no actions in the message, a
        malformed one, or one that does not follow on from our ``seq`` (a message missed, or late:
        the database heals the gap)."""
        master = self.master
        if not isinstance(rows, dict):
            return False
        first, actions, at = rows.get("from"), rows.get("a"), rows.get("at")
        if type(first) is not int or not isinstance(actions, list) or not actions \
                or not isinstance(at, (int, float)) or isinstance(at, bool):
            return False
        if first + len(actions) <= master.seq:
            self.news_applied += 1
            return True  # already known (read from the database meanwhile)
        if first > master.seq or master.status != PLAYING:
            return False
        tail: list[tuple[int | None, dict[str, Any]]] = []
        for item in actions[master.seq - first:]:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict)
                    and (item[0] is None or (type(item[0]) is int and 0 <= item[0] < self.n_players))):
                return False
            tail.append((item[0], item[1]))
        log_from = master.seq
        master.absorb(tail)
        master.last_move_at = float(at)
        if master.result is not None and master.status == PLAYING:
            master.status = OVER  # the actions ended the game (the sender stored exactly that)
        self.news_applied += 1
        self._restart_clock()
        self._show(log_from, everything=master.result is not None and master.secrets)
        return True

    def worker_gone(self, worker: str) -> None:
        """``worker`` stopped (it died: its lease was taken over; or it shut down): the seats
        connected through it are not any more, and count as away from now. Said of this very
        worker (its lease expired while it was only slow): it tells who is connected here again."""
        cluster = self.host.cluster
        if cluster is not None and worker == cluster.worker:
            self.tell_presence()
        elif self.hub.remote.pop(worker, None) is not None:
            self._presence_seen()

    def _presence_seen(self) -> None:
        if not self.host.closing:
            self._track_away()
            self._arm_abandon()
        self.hub.publish_seats()
