"""Turn-based tables' deadlines and the notices of every table: a table listener and a scheduler.

**The listener** (:meth:`Deadlines.changed`, registered on every table by the lobby) hears each change
this worker commits: a turn-based table's row in ``ludo_deadlines`` is armed for the seat to move
(web/repository/deadlines.py: due after the time per move plus the seat's reserve, a reminder when a
quarter of it is left), and the notifier (web/notices/events.py) is told when it becomes a seat's turn
and when a game ends (``watching`` when the player has the table open now).

**The scheduler** (:meth:`Deadlines.tick`, every :data:`EVERY` second on every worker) asks the database
for the deadlines and reminders due; nothing about an idle turn-based table is held in memory (it is
loaded when its deadline fires or someone opens it, and unloaded again after :data:`IDLE` seconds
without a viewer). A deadline is fired by the worker holding the table's lease, or — the table held
by nobody — by whichever worker takes its lease first (``Cluster.take``: one conditional update, so
the work spreads over the workers; the table is loaded, fired and its lease given back at once);
with one worker, by it. The one worker holding the scheduler's own lease (:data:`SCHEDULER`) repairs
the rows stopped workers left. Firing claims the row with one conditional update (exactly once), then
does what the creator chose (web/master/pace.py) and says so in the table's log: the AI plays the move, or the seat goes
to the AI at its second miss, or the opponent may claim the win. A worker stopped before it fired a
claimed deadline, or between a move's commit and its row's update, leaves a row that
:meth:`DeadlineStore.stale` finds: the next round repairs it (nothing lost, nothing fired twice).

**A turn-based table's notices are stored with its row**: the "your move" of a new turn in the transaction
that arms the row, the game's end in the one that finishes it, a reminder or a claimable win in the one
that claims it (``Notifier.write``). A worker that stops before that transaction leaves the row behind the
table, and the repair that arms it stores the notice then: told once, never lost. A live table's notices
are handed to the notifier after the commit (``Notifier.notify``); those a worker killed in between lost are
told by the repair rounds of the worker that plays the table next (live_notices.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ludoteca.i18n import LANGUAGES
from ludoteca.web.errors import Code, WebError
from ludoteca.web.master import pace, pace_timeouts
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.live_notices import LiveNotices
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING
from ludoteca.web.master.pace_timeouts import CLAIMED, TIMED_OUT
from ludoteca.web.notices.events import Notice, Notifier, NullNotifier
from ludoteca.web.repository.deadlines import Deadline, DeadlineStore, Turn

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

    from ludoteca.web.lobby.lobby import Lobby
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

EVERY = 1.0
"""Seconds between two rounds of the scheduler (a deadline fires at most this late, plus the work)."""
IDLE = 120.0
"""Seconds a turn-based table with no viewer stays in memory after its last use."""
GRACE = 60.0
"""Seconds after which a deadline claimed but not fired (its worker stopped) is fired again."""
REPAIR_EVERY = 10
"""Rounds between two searches for rows a stopped worker left behind."""
FIRING = 16
"""Deadlines fired at once in a round (their tables load, their AI moves are stored, in parallel)."""
OVERLAP = 3
"""Rounds at most running at once (a round still firing when the next begins)."""
SCHEDULER = "~deadlines"
"""The lease (web/hub/leases.py) of the one worker that repairs the rows stopped workers left."""


class Deadlines:
    """The deadlines of turn-based tables and the notices of every table (one per lobby)."""

    def __init__(self, lobby: Lobby, clock: Callable[[], float] = time.time, every: float = EVERY,
                 idle: float = IDLE) -> None:
        self.lobby = lobby
        self.clock = clock
        self.every = every
        self.idle = idle
        self.store = DeadlineStore(lobby.repo.engine)
        self.fired = 0
        """Deadlines fired here (tests, the benchmark)."""
        self.late: deque[float] = deque(maxlen=100_000)
        """Seconds after its due time each deadline fired here was claimed (the benchmark)."""
        self.rounds = 0
        self._task: asyncio.Task[None] | None = None
        self._lease: Any = None
        self._keeper: asyncio.Task[None] | None = None
        self._closed = False
        self._pending: set[asyncio.Future[Any]] = set()
        self._firing: set[str] = set()
        """The tables whose deadline a round of this worker is firing now (rounds overlap)."""
        self.live = LiveNotices(self)

    # --- the listener ------------------------------------------------------------------------------
    def changed(self, table: Table, change: Change) -> None:
        """A committed change (listeners.py): arm the deadline, tell the notifier."""
        if not change.local or self.lobby.closing:
            return
        timed = pace.turn_based(table.settings)
        if change.ended:
            if timed:
                self._spawn(self._finish(table, change.seq))
            else:
                self._notify(self._game_over(table, change.seq))
            return
        if change.status != PLAYING:
            return
        to_move = table.to_move()
        movers = tuple(s for s, _ in change.actions if s is not None)
        ai = to_move is not None and table.seats[to_move].kind == AI
        if timed:
            turn = Turn(change.seq, to_move, ai, movers, table.n_players)
            self._spawn(self._advance(table, turn))
        elif to_move is not None and not ai and (change.started or to_move in change.seats
                                                 or (movers and movers[-1] != to_move)):
            self._notify([self._notice(table, "your_turn", to_move, None, change.seq)])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def settled(self) -> None:
        """Wait until every row armed by the changes so far is stored."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def _advance(self, table: Table, turn: Turn) -> Deadline | None:
        """Arm the row for ``turn``; a human seat's new turn stores its "your move" in the same transaction."""
        now = self.clock()
        settings = table.settings
        told = (self._notice(table, "your_turn", turn.to_move, None, turn.seq)
                if turn.to_move is not None and not turn.ai else None)

        def then(conn: Connection, row: Deadline) -> None:
            if told is not None and row.seat == told.seat:
                self._write(conn, [replace(told, due=row.due)], now)

        try:
            row: Deadline | None = await self._db(
                self.store.advance, table.id, turn, now, lambda r: pace.turn_seconds(settings, r),
                lambda r, spent: pace.next_reserve(settings, r, spent), then)
        except Exception:
            log.warning("table %s: deadline not stored (repaired later)", table.id, exc_info=True)
            return None
        if row is not None and told is not None:
            self._notifier().wake()
        return row

    async def _finish(self, table: Table, seq: int) -> None:
        """The game is over: the row says so, and the game's end is stored for every player, in one
        transaction (once)."""
        notices = self._game_over(table, seq)
        now = self.clock()
        try:
            if await self._db(self.store.finish, table.id, seq, lambda conn, _row: self._write(conn, notices, now)):
                self._notifier().wake()
        except Exception:
            log.warning("table %s: the game's end not stored (repaired later)", table.id, exc_info=True)

    def _notice(self, table: Table, kind: Any, seat: int, due: float | None, seq: int | None) -> Notice:
        s = table.seats[seat]
        return Notice(kind=kind, table=table.id, game=table.game_name, seat=seat, account=s.account_id,
                      player=s.name or f"Player {seat + 1}", due=due, watching=seat in table.hub.connected_seats(),
                      seq=seq)

    def _game_over(self, table: Table, seq: int) -> list[Notice]:
        return [self._notice(table, "game_over", i, None, seq) for i, s in enumerate(table.seats)
                if s.kind == HUMAN or (s.kind == AI and s.token_hash is not None)]

    async def hook_of(self, request: dict[str, Any], lang: str | None) -> tuple[str, str] | None:
        """A turn-based table's webhook from its creation request, checked where it points (as an account's:
        http(s), not this server, not an inside address; a clear 400 and nothing stored when it cannot be)
        and its language (the creator's); None when there is none."""
        url = pace.webhook_of(request)
        if url is None:
            return None
        try:
            checked = await asyncio.to_thread(self._notifier().check_hook, url)
        except WebError as exc:
            raise WebError(Code.BAD_OPTIONS, exc.template, **exc.params) from None
        return checked, lang or LANGUAGES[0]

    def _notifier(self) -> Notifier:
        notifier: Notifier = getattr(self.lobby, "notifier", None) or NullNotifier()
        return notifier

    def _notify(self, notices: Sequence[Notice]) -> None:
        """Hand a live table's ``notices`` to the server's notifier (``lobby.notifier``: web/notices/; it
        stores them a moment later)."""
        if notices:
            try:
                self._notifier().notify(notices)
            except Exception:
                log.warning("notices not stored", exc_info=True)

    def _write(self, conn: Connection, notices: Sequence[Notice], now: float) -> None:
        """Store a turn-based table's ``notices`` in the transaction of ``conn`` (its row's change)."""
        self._notifier().write(conn, notices, now)

    async def _db(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await self.lobby.db(fn, *args)

    # --- the scheduler -----------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())
        if self.lobby.cluster is not None:
            self._keeper = asyncio.ensure_future(self._keep_lease())

    async def close(self) -> None:
        self._closed = True
        for task in (self._task, self._keeper):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.settled(), 5.0)  # the rows of the last moves stored
        cluster = self.lobby.cluster
        if self._lease is not None and cluster is not None:
            with contextlib.suppress(Exception):
                await asyncio.get_running_loop().run_in_executor(None, cluster.leases.release, self._lease)
            self._lease = None

    async def _loop(self) -> None:
        """A round every :data:`EVERY` seconds. The next round begins on time even while the last one
        still fires (a slow table does not hold back the deadlines falling due meanwhile; a table
        being fired is not fired again), at most :data:`OVERLAP` rounds at once."""
        rounds: set[asyncio.Task[None]] = set()
        try:
            while not self._closed and not self.lobby.closing:
                began = time.monotonic()
                task = asyncio.ensure_future(self._round())
                rounds.add(task)
                task.add_done_callback(rounds.discard)
                await asyncio.wait({task}, timeout=self.every)
                while len(rounds) >= OVERLAP:
                    await asyncio.wait(set(rounds), return_when=asyncio.FIRST_COMPLETED)
                await asyncio.sleep(max(0.05, self.every - (time.monotonic() - began)))
        finally:
            for task in list(rounds):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.gather(*rounds, return_exceptions=True)

    async def _round(self) -> None:
        try:
            await self.tick()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning("deadlines round failed", exc_info=True)

    async def _keep_lease(self) -> None:
        """Several workers: renew the scheduler's lease every round of the cluster, whatever a round of
        firing lasts (a long round must not let the lease expire under it)."""
        cluster = self.lobby.cluster
        while cluster is not None and not self._closed:
            await asyncio.sleep(cluster.every)
            try:
                await self._leader()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("the scheduler's lease was not renewed", exc_info=True)

    async def _leader(self) -> bool:
        """Whether this worker fires the deadlines of tables no worker holds (its own lease)."""
        cluster = self.lobby.cluster
        if cluster is None:
            return True
        run = asyncio.get_running_loop().run_in_executor
        if self._lease is not None:
            self._lease = await run(None, cluster.leases.renew, self._lease, cluster.ttl)
        if self._lease is None:
            self._lease = await run(None, cluster.leases.acquire, SCHEDULER, cluster.worker, cluster.ttl)
        return self._lease is not None

    async def tick(self) -> None:
        """One round: the deadlines due fired, the reminders due sent, left rows repaired (every
        :data:`REPAIR_EVERY` rounds), idle turn-based tables unloaded."""
        self.rounds += 1
        leader = await self._leader()
        now = self.clock()
        gate = asyncio.Semaphore(FIRING)

        async def fire(row: Deadline) -> None:
            if row.table_id in self._firing:
                return  # an earlier round is firing it
            self._firing.add(row.table_id)
            try:
                async with gate:
                    await self._fire(row, leader)
            except Exception:
                log.warning("table %s: deadline not fired", row.table_id, exc_info=True)
            finally:
                self._firing.discard(row.table_id)

        await asyncio.gather(*(fire(row) for row in self._order(await self._db(self.store.due, now))))
        await self.settled()  # the rows the moves just played armed again
        for row in await self._db(self.store.reminders, now):
            await self._remind(row, leader)
        if leader and (self.rounds % REPAIR_EVERY == 1 or REPAIR_EVERY <= 1):
            for table_id in await self._db(self.store.stale, now, GRACE):
                if table_id not in self._firing:
                    await self._repair(table_id)
        if self.rounds % REPAIR_EVERY == 1 or REPAIR_EVERY <= 1:
            await self.live.repair(starting=self.rounds == 1)  # live tables' notices a killed worker lost
        self._unload_idle()

    def _order(self, rows: list[Deadline]) -> list[Deadline]:
        """Several workers read the same rows due: each fires those due in the same second in its own
        order (a hash salted with its id), so that they seldom reach for the same table at once."""
        cluster = self.lobby.cluster
        if cluster is None:
            return rows
        salt = cluster.worker
        return sorted(rows, key=lambda r: (int(r.due or 0.0), zlib.crc32(f"{salt}:{r.table_id}".encode())))

    async def _hold(self, table_id: str) -> Table | None:
        """The table, loaded, when this worker may fire its deadlines: it holds the table's lease or
        takes it now (``Cluster.take``); None when another worker holds it (that one fires them)."""
        cluster = self.lobby.cluster
        if cluster is not None and not cluster.holds(table_id):
            return await cluster.take(table_id)
        return await self.lobby.get(table_id)

    async def _fire(self, row: Deadline, leader: bool) -> None:
        cluster = self.lobby.cluster
        if cluster is not None and not cluster.holds(row.table_id):
            # every worker reads the same rows due: one the other fired meanwhile is not taken again
            now = await self._db(self.store.get, row.table_id)
            if now is None or now.fired or now.seq != row.seq or now.due != row.due:
                return
        table = await self._hold(row.table_id)
        if table is None:
            # a table that cannot be loaded any more (another worker holding it is the usual case: only
            # a row left overdue long is looked at)
            overdue = row.due is not None and self.clock() - row.due > GRACE
            if (cluster is None or (leader and overdue)) and await self._gone(row.table_id):
                await self._db(self.store.forget, row.table_id)
            return
        if row.ai:
            table.timers.schedule_ai()  # the table is loaded: its AI seat plays (tables.py), which re-arms the row
            return
        seat = row.seat
        count: int | None = None
        async with table.master.lock:
            current = (table.status == PLAYING and seat is not None and table.master.seq == row.seq
                       and table.to_move() == seat and table.seats[seat].kind == HUMAN)
            if current and seat is not None:
                now = self.clock()
                told: list[Notice] = []
                if table.settings.get("on_timeout") == pace.CLAIM and table.n_players == 2:
                    told = [self._notice(table, "your_turn", 1 - seat, None, row.seq)]  # may claim the win

                def then(conn: Connection, _row: Deadline) -> None:
                    if told:
                        self._write(conn, told, now)

                count = await self._db(self.store.claim, table.id, row.seq, now, seat, then)
                if count is not None and told:
                    self._notifier().wake()
        if not current:
            await self._repair(table.id)
            return
        if count is None:
            self._let_go(table)
            return  # fired already (another worker, an earlier round)
        assert seat is not None and row.due is not None
        self.fired += 1
        self.late.append(max(0.0, self.clock() - row.due))
        try:
            await self._timed_out(table, seat, row.seq, count, row.due)
        except Exception:
            await self._db(self.store.unclaim, table.id, row.seq, seat)
            raise
        if (table.settings.get("on_timeout") != pace.CLAIM and table.status == PLAYING and table.master.seq == row.seq
                and table.to_move() == seat and table.seats[seat].kind == HUMAN):
            # nothing was played (another worker took the table's lease meanwhile): due again at once
            self.fired -= 1
            await self._db(self.store.unclaim, table.id, row.seq, seat)
        self._let_go(table)

    def _let_go(self, table: Table) -> None:
        """Several workers: a table fired here that nobody watches here gives its lease back at once
        (another worker may take it; this one unloads it when idle)."""
        cluster = self.lobby.cluster
        if cluster is not None and cluster.holds(table.id) and not table.hub.conns:
            cluster.release(table.id)

    async def _gone(self, table_id: str) -> bool:
        return await self.lobby.db(self.lobby.repo.seats_of, table_id) == []

    async def _timed_out(self, table: Table, seat: int, seq: int, misses: int, due: float) -> None:
        await pace_timeouts.timed_out(self.lobby, table, seat, seq, misses, due)

    async def claim_win(self, table: Table, seat: int) -> None:
        """``seat`` claims the win over a late opponent (pace_timeouts.py)."""
        await pace_timeouts.claim_win(table, seat, await self._db(self.store.get, table.id))

    async def _remind(self, row: Deadline, leader: bool) -> None:
        cluster = self.lobby.cluster
        if row.seat is None or row.ai or (cluster is not None and not cluster.holds(row.table_id) and not leader):
            return
        seats = await self._db(self.lobby.repo.seats_of, row.table_id)
        if row.seat >= len(seats):
            return
        s = seats[row.seat]
        live = self.lobby.tables.get(row.table_id)
        watching = live is not None and row.seat in live.hub.connected_seats()
        game = live.game_name if live is not None else await self._game_of(row.table_id)
        notice = Notice(kind="reminder", table=row.table_id, game=game, seat=row.seat, account=s.account_id,
                        player=s.name or f"Player {row.seat + 1}", due=row.due, watching=watching, seq=row.seq)
        now = self.clock()
        if await self._db(self.store.claim_reminder, row.table_id, row.seq,
                          lambda conn, _row: self._write(conn, [notice], now)):
            self._notifier().wake()

    async def _game_of(self, table_id: str) -> str:
        rows = await self.lobby.db(self.lobby.repo.list_tables, 1, None, None, [table_id])
        return str(rows[0]["game"]) if rows else ""

    async def _repair(self, table_id: str) -> None:
        """A row a stopped worker left: armed again from the table's position (a claimed deadline
        whose firing never happened is due again)."""
        table = await self._hold(table_id)
        if table is None:
            return
        row = await self._db(self.store.get, table_id)
        if row is None:
            return
        if table.status == OVER and not row.over:
            await self._finish(table, table.master.seq)  # a worker stopped before it told the game's end
            return
        if (row.fired and table.master.seq == row.seq and table.settings.get("on_timeout") != pace.CLAIM
                and row.fired_at is not None and self.clock() - row.fired_at >= GRACE):
            await self._db(self.store.refire, table_id, row.seq)
            return
        if table.status != PLAYING or row.seq >= table.master.seq:
            return
        to_move = table.to_move()
        ai = to_move is not None and table.seats[to_move].kind == AI
        await self._advance(table, Turn(table.master.seq, to_move, ai, (), table.n_players))

    def _unload_idle(self) -> None:
        """Turn-based tables nobody watches here and nobody used for ``idle`` seconds leave memory
        (their deadlines stay in the database)."""
        now = time.monotonic()
        cluster = self.lobby.cluster
        for table in list(self.lobby.tables.values()):
            if (not pace.turn_based(table.settings) or table.hub.conns or now - table.used_at < self.idle
                    or self._pending
                    or (table.timers.ai_task is not None and not table.timers.ai_task.done())
                    or table.master.lock.locked()):
                continue
            if cluster is not None:
                if cluster.holds(table.id):
                    cluster.release(table.id)
                cluster.forget(table)
            if self.lobby.tables.get(table.id) is table:
                del self.lobby.tables[table.id]
                _spawn_close(table)

def _spawn_close(table: Table) -> None:
    task = asyncio.ensure_future(table.close())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


__all__ = ["CLAIMED", "OVER", "TIMED_OUT", "Deadlines"]
