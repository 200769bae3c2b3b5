"""One worker among several sharing tables through the database and a bus.

Any worker may accept an action for any table: the database serializes the writers (the actions
table's unique ``(table_id, seq)``: an append at a ``seq`` another worker stored first fails, and
the losing worker catches up and checks the action again, master.py). After every commit the
worker announces it on the bus (bus.py); a commit that only added actions carries them (seat,
action JSON, time), and every other worker that has the table loaded replays them from the
message (``Table.hear``: no database read); any other change, and a message that does not follow on
from the table's ``seq`` (one was missed), makes it read what changed from the database
(``Table.refresh``) instead. Either way it sends the change to its own connections.

The timers of a table (its AI seats, the hourglass, abandoned seats) run only on the worker holding
the table's **lease** (leases.py): ``ttl`` seconds, renewed every ``every`` seconds. Every worker,
every ``every`` seconds, takes over the expired leases (a worker that died) and the released ones
(a worker that shut down) of the tables in play, loads those tables and starts their timers; the
hourglass is charged from the time of the last stored action. A lease that cannot be renewed
stops the timers, and the appends of the timers carry the lease's fencing token, so a stale holder
cannot write. :meth:`Cluster.shutdown` releases every lease, so that another worker takes over at
once (graceful shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ludoteca.web.hub.bus import BusMessage, BusUnavailable, make_bus, new_worker_id
from ludoteca.web.hub.leases import Lease, LeaseStore
from ludoteca.web.master.master import PLAYING
from ludoteca.web.metrics import bus_heard

if TYPE_CHECKING:
    from ludoteca.web.lobby.lobby import Lobby
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

TTL = 3.0
"""Seconds a lease lasts without being renewed."""
EVERY = 1.0
"""Seconds between two rounds of renewing, taking over and releasing leases."""
IDLE = 30.0
"""Seconds after which a table loaded here without a connection here, without its lease and not
asked for is unloaded (it no longer costs this worker its news; it is loaded again when needed)."""


class Cluster:
    """This worker's bus, leases and timers' ownership (one per application)."""

    def __init__(self, lobby: Lobby, redis_url: str | None, worker: str | None = None, *,
                 ttl: float = TTL, every: float = EVERY, bus: Any = None, idle: float = IDLE,
                 bus_secret: str | None = None, clock: Callable[[], float] = time.time) -> None:
        self.lobby = lobby
        self.worker = worker or new_worker_id()
        self.bus = bus if bus is not None else make_bus(redis_url, self.worker, on_reconnect=self._reconnected,
                                                        secret=bus_secret)
        if bus is not None and hasattr(bus, "on_reconnect"):
            bus.on_reconnect = self._reconnected
        self.leases = LeaseStore(lobby.repo.engine, clock)
        self.ttl = ttl
        self.every = every
        self.idle = idle
        self.held: dict[str, Lease] = {}
        self.watched: set[str] = set()
        self._claiming: set[str] = set()
        self._dead: dict[str, None] = {}
        """Workers known to have died (the last 64, in order)."""
        self._tasks: set[asyncio.Future[Any]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self.closed = False
        self.gained = 0
        """Leases gained here whose table was then read and its timers started (tests wait on it)."""

    # --- life -------------------------------------------------------------------------------------
    async def start(self) -> None:
        await self.bus.start()
        wait = getattr(self.bus, "wait_connected", None)
        if wait is not None:
            await wait(5.0)
        self._loop_task = asyncio.ensure_future(self._loop())

    async def shutdown(self) -> None:
        """Hand every table over: stop the timers and release the leases (another worker takes
        them at once). Safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._loop_task
        # the connections here are about to close: the other workers count their seats as away
        seated = [t for t in self.lobby.tables.values() if t.hub.local_seats()]
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*(self.bus.publish(t.id, t.master.seq, {"gone": self.worker})
                                                    for t in seated), return_exceptions=True), 2.0)
        for table_id, lease in list(self.held.items()):
            self.held.pop(table_id, None)
            table = self.lobby.tables.get(table_id)
            if table is not None:
                table.lease_lost()
            with contextlib.suppress(Exception):
                await self._db(self.leases.release, lease)

    async def close(self) -> None:
        await self.shutdown()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await self.bus.close()

    async def _db(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- tables (host.Shared) --------------------------------------------------------------------------
    def holds(self, table_id: str) -> bool:
        return not self.closed and table_id in self.held

    def fence(self, table_id: str) -> tuple[str, int] | None:
        lease = self.held.get(table_id) if not self.closed else None
        return (lease.table, lease.token) if lease is not None else None

    def announce(self, table_id: str, seq: int, body: dict[str, Any]) -> None:
        """Tell the other workers (in the background; a bus that is down loses nothing: the others
        catch up when it is back, ``on_reconnect``)."""
        self._spawn(self._publish(table_id, seq, body))

    async def _publish(self, table_id: str, seq: int, body: dict[str, Any]) -> None:
        try:
            try:
                await self.bus.publish(table_id, seq, body)
            except ValueError:  # too large for the bus: the others read the actions from the database
                if "rows" not in body:
                    raise
                await self.bus.publish(table_id, seq, {k: v for k, v in body.items() if k != "rows"})
        except BusUnavailable as exc:
            log.info("table %s: news not published (%s)", table_id, exc)
        except ValueError as exc:
            log.warning("table %s: news not published (%s)", table_id, exc)

    def claim(self, table: Table) -> None:
        """Try to take the lease of ``table`` (a game begins, a table in play is loaded)."""
        if self.closed or table.id in self.held or table.id in self._claiming:
            return
        self._claiming.add(table.id)
        self._spawn(self._claim(table.id))

    async def _claim(self, table_id: str) -> None:
        try:
            lease = await self._db(self.leases.acquire, table_id, self.worker, self.ttl)
            if lease is not None:
                await self._gained(lease)
        except Exception:
            log.warning("table %s: lease not acquired", table_id, exc_info=True)
        finally:
            self._claiming.discard(table_id)

    def release(self, table_id: str) -> None:
        lease = self.held.pop(table_id, None)
        if lease is not None:
            table = self.lobby.tables.get(table_id)
            if table is not None:
                table.lease_lost()
            self._spawn(self._db(self.leases.release, lease))

    async def take(self, table_id: str) -> Table | None:
        """Take the lease of ``table_id`` now, for work that cannot wait for a round (a turn-based
        table's deadline, web/master/deadlines.py): the table, loaded and caught up, its lease held
        here; None when another worker holds it (that one does the work), the table is gone or not
        in play. Lighter than a round's take-over: a table loaded for it is read once (its load
        reads what was stored and starts its timers); a table already loaded here catches up and
        starts its timers. The caller may :meth:`release` it at once."""
        if self.closed:
            return None
        if table_id in self.held:
            return await self.lobby.get(table_id)
        lease = await self._db(self.leases.acquire, table_id, self.worker, self.ttl)
        if lease is None:
            return None
        if lease.previous is not None:
            self.worker_died(lease.previous)  # it let the lease expire
        self.held[table_id] = lease
        loaded = self.lobby.tables.get(table_id)
        table = await self.lobby.get(table_id)
        held = self.held.get(table_id)  # a renewal while the table loaded replaced the lease, same token
        if table is None or held is None or held.token != lease.token:
            self.release(table_id)
            return None
        if table is loaded:  # it followed the others' news without running its timers
            await table.refresh()
            table.lease_gained()
        if table.status != PLAYING:
            self.release(table_id)
            return None
        return table

    async def _gained(self, lease: Lease) -> None:
        """``lease`` is ours: load the table, read what was stored and start its timers."""
        if self.closed:
            await self._db(self.leases.release, lease)
            return
        if lease.previous is not None:
            self.worker_died(lease.previous)  # it let the lease expire
        self.held[lease.table] = lease
        table = await self.lobby.get(lease.table)
        held = self.held.get(lease.table)  # a renewal while the table loaded replaced the lease, same token
        if table is None or held is None or held.token != lease.token:
            self.release(lease.table)
            return
        await table.refresh()
        if table.status != PLAYING:
            self.release(lease.table)
            return
        table.lease_gained()
        self.gained += 1

    async def watch(self, table: Table) -> None:
        """Hear the other workers' news of ``table`` (a table loaded or created here)."""
        if table.id in self.watched:
            return
        self.watched.add(table.id)

        def heard(message: BusMessage) -> None:
            # never waits: the table takes its news in its own task (the subscriber serves every table).
            # A hint (a message that did not check, bus.py) is news without content: read the database.
            live = self.lobby.tables.get(message.table)
            if live is not None:
                if message.verified:
                    bus_heard(self.lobby, message.body)  # its lag, for /metrics
                try:
                    live.hear(message.body if message.verified else {}, message.origin)
                except Exception:
                    log.warning("table %s: news from %s not handled", message.table, message.origin, exc_info=True)

        table.bus_handler = heard
        await self.bus.subscribe(table.id, heard)
        table.announce(ask=True)  # who is connected on the other workers

    def forget(self, table: Table) -> None:
        """``table`` left this worker's memory: no more news of it."""
        self._spawn(self.unwatch(table))

    async def unwatch(self, table: Table) -> None:
        self.watched.discard(table.id)
        handler = getattr(table, "bus_handler", None)
        if handler is not None:
            with contextlib.suppress(Exception):
                await self.bus.unsubscribe(table.id, handler)

    def unload_idle(self) -> list[str]:
        """Unload the tables nobody uses through this worker: no connection here, no lease here,
        not asked for in the last ``idle`` seconds. Only the workers that serve a table (its
        connections, its timers) hear its news and replay its moves; another one loads it again
        from the database when asked (``Lobby.get``)."""
        now = time.monotonic()
        gone = [t for t in self.lobby.tables.values()
                if not t.hub.conns and t.id not in self.held and t.id not in self._claiming
                and now - t.used_at >= self.idle]
        for table in gone:
            if self.lobby.tables.get(table.id) is table:
                del self.lobby.tables[table.id]
                self.forget(table)
        return [t.id for t in gone]

    def worker_died(self, worker: str) -> None:
        """``worker`` let a lease expire (it died, or is cut off): the seats connected through it
        are not connected any more, on every table loaded here, and the other workers are told so
        (a worker only slow, told that of itself, says who is connected through it again)."""
        if worker == self.worker or worker in self._dead:
            return
        self._dead[worker] = None
        if len(self._dead) > 64:
            del self._dead[next(iter(self._dead))]
        for table in list(self.lobby.tables.values()):
            if worker in table.hub.remote:
                table.worker_gone(worker)
                self.announce(table.id, table.master.seq, {"gone": worker})

    async def _reconnected(self, tables: frozenset[str]) -> None:
        """The bus was away: messages may have been missed; every loaded table catches up."""
        for table_id in tables:
            table = self.lobby.tables.get(table_id)
            if table is not None:
                try:
                    await table.refresh()
                    table.tell_presence()
                except Exception:
                    log.warning("table %s: not caught up after the bus came back", table_id, exc_info=True)

    # --- leases -------------------------------------------------------------------------------------
    async def _loop(self) -> None:
        while not self.closed:
            await asyncio.sleep(self.every)
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("worker %s: lease round failed", self.worker, exc_info=True)

    async def tick(self) -> None:
        """One round: renew our leases (a lost one stops its timers), take over the expired and
        released leases of tables in play, and unload the tables idle here."""
        self.unload_idle()
        held = dict(self.held)
        renewals = await self._db(self.leases.renew_all, list(held.values()), self.ttl) if held else {}
        for table_id, lease in held.items():
            renewed = renewals.get(table_id)
            if self.held.get(table_id) is not lease:
                continue
            if renewed is None:
                log.warning("table %s: lease lost; another worker runs its timers", table_id)
                self.release(table_id)
            else:
                self.held[table_id] = renewed
        if self.closed:
            return
        for lease in await self._db(self.leases.steal_expired, self.worker, self.ttl, 50):
            await self._gained(lease)
        playing = await self._db(self.lobby.repo.table_ids, (PLAYING,), self.lobby.resume_limit)
        free = await self._db(self.leases.free_among, [t for t in playing if t not in self.held])
        for table_id in free:
            if self.closed:
                return
            lease = await self._db(self.leases.acquire, table_id, self.worker, self.ttl)
            if lease is not None:
                await self._gained(lease)
