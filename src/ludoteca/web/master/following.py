"""A table followed by several workers (cluster.py, docs/web.md): the lease says which worker runs
its timers; the others take in each change from the bus's news (or read the database when a message
is missing or is about a change around the game), and every worker says which seats are connected
through it. A change taken in reaches the table's listeners like a local one, with ``local`` False."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import OVER, PLAYING, Conflicted, Seat

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

NEWS_QUEUED = 256
"""Several workers: messages of the other workers waiting per table; beyond, they are dropped and
the table reads the database once instead."""

T = TypeVar("T")


class Following:
    """Several workers: the other workers' news and presence, catching up, telling the others."""

    def __init__(self, table: Table, note_id: int) -> None:
        self.table = table
        self.note_id = note_id
        """The newest stored note this table has read (catching up reads the next)."""
        self.bus_handler: Any = None
        """This table's handler of the bus (cluster.py)."""
        self._news: deque[dict[str, Any]] = deque()
        """The other workers' messages not yet taken in, in order (:meth:`hear`)."""
        self._news_task: asyncio.Task[None] | None = None
        self.news_applied = 0
        """Messages of other workers taken in from their own content (no database read)."""
        self.news_read = 0
        """Messages of other workers that needed a database read (a gap, a change around the game)."""

    # --- telling the other workers (listeners of the table) ---------------------------------------------
    def announce(self, **body: Any) -> None:
        """Tell the other workers that this table changed (they read it from the database)."""
        cluster = self.table.host.cluster
        if cluster is not None:
            cluster.announce(self.table.id, self.table.master.seq, body)

    def tell_presence(self) -> None:
        self.announce(presence=sorted(self.table.hub.local_seats()))

    def lease_changed(self, table: Table, change: Change) -> None:
        """A game begins: one worker claims its lease and runs its timers; one ends: released."""
        cluster = table.host.cluster
        if cluster is not None and not table.host.closing:
            if change.started:
                cluster.claim(table)
            elif table.status != PLAYING and cluster.holds(table.id):
                cluster.release(table.id)

    def tell_others(self, table: Table, change: Change) -> None:
        """A change committed here: the other workers replay its actions from the message when it
        only added actions, else read the database."""
        if not change.local:
            return
        if change.only_actions:
            self.announce(rows={"from": change.log_from, "a": [[s, a] for s, a in change.actions], "at": change.at})
        else:
            self.announce()

    # --- catching up ----------------------------------------------------------------------------------
    async def caught_up(self, commit: Awaitable[T]) -> T:
        """``commit`` (a change of the master, lock held); when another worker stored first, read
        what it stored (memory never runs ahead of the database), then raise :class:`Conflicted`."""
        try:
            return await commit
        except Conflicted:
            await self.catch_up()
            raise

    async def refresh(self) -> bool:
        """Read what other workers stored since (actions, seats, status, notes) and show it."""
        async with self.table.master.lock:
            return await self.catch_up()

    async def catch_up(self) -> bool:
        """Catch up with the database (lock held): replay the actions stored after our ``seq``
        (their chance outcomes were drawn with the same seeded generators, so the positions are
        the same), take the seats, status, result and new notes; True when something changed."""
        table = self.table
        master = table.master
        delta = await table.host.db(table.host.repo.delta, table.id, master.seq, self.note_id)
        if delta is None:
            return False
        first, previous = master.seq, master.status
        changed = master.absorb(delta.actions) > 0
        if delta.action_times:
            master.last_move_at = delta.action_times[-1]
        seats = [Seat(s.kind, s.level, s.name, s.token_hash, s.account_id) for s in delta.seats]
        changed = master.adopt(seats, delta.status, delta.result) or changed
        if delta.rematch_id is not None and delta.rematch_id != table.rematch_id:
            table.rematch_id = delta.rematch_id
            table.hub.push_all({"type": "rematch", "table": delta.rematch_id})
        self.note_id = delta.last_note_id
        fresh = table.talk.heard(delta.notes)
        changed = changed or bool(fresh)
        if changed:
            self._taken_in(first, previous, tuple(delta.actions[:master.seq - first]), tuple(fresh))
        return changed

    def _taken_in(self, first: int, previous: str, actions: tuple[tuple[int | None, dict[str, Any]], ...],
                  notes: tuple[Any, ...] = ()) -> None:
        """A change another worker stored, now in memory: the hourglass charged from the stored
        time, and the table's listeners told (``local`` False)."""
        table = self.table
        master = table.master
        table.timers.charge()
        table.listeners.committed(Change(
            table.id, first, master.seq, master.status, previous, actions=actions, notes=notes,
            everything=master.result is not None and master.secrets, at=master.last_move_at, local=False))

    # --- the other workers' news ------------------------------------------------------------------------
    def hear(self, body: dict[str, Any], origin: str) -> None:
        """A message of another worker about this table (cluster.py). Presence is taken at once;
        news of a change is queued and taken in order by a task of the table, so the bus's
        subscriber, shared by every table, never waits for this table's lock or for the database."""
        table = self.table
        if "presence" in body:
            seats = body.get("presence")
            if isinstance(seats, list):
                table.hub.remote[origin] = frozenset(s for s in seats if isinstance(s, int))
                table.presence.seen()
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
                async with self.table.master.lock:
                    if not self._apply_news(body.get("rows")):
                        self.news_read += 1
                        await self.catch_up()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("table %s: news of another worker not taken in", self.table.id, exc_info=True)

    def _apply_news(self, rows: Any) -> bool:
        """Take in the actions another worker stored, from its message (lock held): ``rows`` is
        ``{"from": seq, "a": [[seat, action], ...], "at": time}`` (:meth:`tell_others` of that
        worker). They are replayed like actions read from the database (chance outcomes are seeded
        by ``seq``). False when the database must be read instead: no actions in the message, a
        malformed one, or one that does not follow on from our ``seq`` (a message missed, or late:
        the database heals the gap)."""
        master = self.table.master
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
                    and (item[0] is None or (type(item[0]) is int and 0 <= item[0] < self.table.n_players))):
                return False
            tail.append((item[0], item[1]))
        log_from = master.seq
        done = master.absorb(tail)
        master.last_move_at = float(at)
        if master.result is not None and master.status == PLAYING:
            master.status = OVER  # the actions ended the game (the sender stored exactly that)
        self.news_applied += 1
        self._taken_in(log_from, PLAYING, tuple(tail[:done]))
        return True

    def worker_gone(self, worker: str) -> None:
        """``worker`` stopped (it died: its lease was taken over; or it shut down): the seats
        connected through it are not any more, and count as away from now. Said of this very
        worker (its lease expired while it was only slow): it tells who is connected here again."""
        cluster = self.table.host.cluster
        if cluster is not None and worker == cluster.worker:
            self.tell_presence()
        elif self.table.hub.remote.pop(worker, None) is not None:
            self.table.presence.seen()

    def close(self) -> list[asyncio.Task[None]]:
        """The table closes: no more news; the task taking it in, to cancel."""
        self._news.clear()
        return [self._news_task] if self._news_task is not None else []
