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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ludoteca.web.errors import Code, WebError
from ludoteca.web.master import pace
from ludoteca.web.master.ai import agent_seed
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, Conflicted, Seat
from ludoteca.web.notices.events import Notice, Notifier, NullNotifier
from ludoteca.web.repository.deadlines import Deadline, DeadlineStore, Turn

if TYPE_CHECKING:
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
TIMED_OUT = "timed_out"
"""The notice of a seat whose time ran out: ``{"seat", "name", "then": ai_move | ai_seat | claim}``."""
CLAIMED = "claimed"
"""The notice of a win claimed over a late opponent: ``{"seat", "name", "late", "late_name"}``."""


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

    # --- the listener ------------------------------------------------------------------------------
    def changed(self, table: Table, change: Change) -> None:
        """A committed change (listeners.py): arm the deadline, tell the notifier."""
        if not change.local or self.lobby.closing:
            return
        timed = pace.turn_based(table.settings)
        if change.ended:
            self._notify(self._game_over(table))
            if timed:
                self._spawn(self._db(self.store.finish, table.id))
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
            self._notify([self._notice(table, "your_turn", to_move, None)])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def settled(self) -> None:
        """Wait until every row armed by the changes so far is stored."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)

    async def _advance(self, table: Table, turn: Turn) -> Deadline | None:
        now = self.clock()
        settings = table.settings
        try:
            row: Deadline | None = await self._db(
                self.store.advance, table.id, turn, now, lambda r: pace.turn_seconds(settings, r),
                lambda r, spent: pace.next_reserve(settings, r, spent))
        except Exception:
            log.warning("table %s: deadline not stored (repaired later)", table.id, exc_info=True)
            return None
        if row is not None and row.seat is not None and not row.ai and row.armed_at == now:
            self._notify([self._notice(table, "your_turn", row.seat, row.due)])
        return row

    def _notice(self, table: Table, kind: Any, seat: int, due: float | None) -> Notice:
        s = table.seats[seat]
        return Notice(kind=kind, table=table.id, game=table.game_name, seat=seat, account=s.account_id,
                      player=s.name or f"Player {seat + 1}", due=due, watching=seat in table.hub.connected_seats())

    def _game_over(self, table: Table) -> list[Notice]:
        return [self._notice(table, "game_over", i, None) for i, s in enumerate(table.seats)
                if s.kind == HUMAN or (s.kind == AI and s.token_hash is not None)]

    def _notify(self, notices: Sequence[Notice]) -> None:
        """Hand ``notices`` to the server's notifier (``lobby.notifier``: web/notices/; it stores them)."""
        notifier: Notifier = getattr(self.lobby, "notifier", None) or NullNotifier()
        if notices:
            try:
                notifier.notify(notices)
            except Exception:
                log.warning("notices not stored", exc_info=True)

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
                count = await self._db(self.store.claim, table.id, row.seq, self.clock(), seat)
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
        """``seat``'s time ran out at ``seq``: what the creator chose, told in the log."""
        then = table.settings.get("on_timeout", pace.AI_MOVE)
        if then == pace.AI_SEAT and misses >= pace.MISSES_FOR_SEAT:
            await self._seat_to_ai(table, seat)
            return
        async with table.master.lock:
            if table.master.seq != seq or table.to_move() != seat:
                return
            told = any(n.kind == TIMED_OUT and n.at_seq == seq and n.data.get("seat") == seat for n in table.notes)
            if not told:  # (said once, when a firing is tried again)
                note = table.talk.note(TIMED_OUT, {"seat": seat, "name": table.name_of(seat), "then": then,
                                                   "misses": misses, "due": due})
                await table.talk.store([note])
                table.talk.told([note])
        if then == pace.CLAIM:
            if table.n_players == 2:
                self._notify([self._notice(table, "your_turn", 1 - seat, None)])
            return
        await self._play_for(table, seat, seq)

    async def _play_for(self, table: Table, seat: int, seq: int) -> None:
        """The easiest AI plays ``seat``'s move at ``seq`` (the seat stays its player's)."""
        level = table.easiest_level()
        state = table.state.clone()
        action = await self.lobby.ai.choose(table.id, table.game_name, table.options, state, table.master.actions,
                                            level, agent_seed(table.master.seed, seq, seat), interactive=False)
        runs, fence = table.lease()
        try:
            played = runs and await table.master.play(seat, action, seq, fence=fence) is not None
        except Conflicted:
            await table.following.refresh()
            played = False
        if not played:
            log.info("table %s: the move played for seat %d was not needed", table.id, seat)

    async def _seat_to_ai(self, table: Table, seat: int) -> None:
        async with table.master.lock:
            if table.status != PLAYING or table.seats[seat].kind != HUMAN:
                return
            level = table.easiest_level()
            name = table.name_of(seat)
            account = table.seats[seat].account_id
            runs, fence = table.lease()
            if not runs:
                return
            await table.change({seat: Seat(AI, level, name, None, account)}, fence=fence,
                               notes=[table.talk.note("ai_took_over", {"seat": seat, "name": name, "level": level,
                                                                       "why": "time"})])

    async def _remind(self, row: Deadline, leader: bool) -> None:
        cluster = self.lobby.cluster
        if row.seat is None or row.ai or (cluster is not None and not cluster.holds(row.table_id) and not leader):
            return
        if not await self._db(self.store.claim_reminder, row.table_id, row.seq):
            return
        seats = await self._db(self.lobby.repo.seats_of, row.table_id)
        if row.seat >= len(seats):
            return
        s = seats[row.seat]
        live = self.lobby.tables.get(row.table_id)
        watching = live is not None and row.seat in live.hub.connected_seats()
        game = live.game_name if live is not None else await self._game_of(row.table_id)
        self._notify([Notice(kind="reminder", table=row.table_id, game=game, seat=row.seat, account=s.account_id,
                             player=s.name or f"Player {row.seat + 1}", due=row.due, watching=watching)])

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

    # --- a win claimed over a late opponent --------------------------------------------------------
    async def claim_win(self, table: Table, seat: int) -> None:
        """``seat`` claims the win: its opponent's time ran out (``on_timeout`` ``claim``, two players)."""
        if table.settings.get("on_timeout") != pace.CLAIM or table.n_players != 2:
            raise WebError(Code.BAD_REQUEST, "this table does not let a player claim the win over a late opponent")
        late = 1 - seat
        row = await self._db(self.store.get, table.id)
        async with table.master.lock:
            if table.status != PLAYING:
                raise WebError(Code.NOT_PLAYING, "the game is over")
            if (row is None or not row.fired or row.seat != late or row.seq != table.master.seq
                    or table.to_move() != late):
                raise WebError(Code.NOT_YOUR_TURN, "you can claim the win only when your opponent's time has run out")
            result = {"returns": [1.0 if i == seat else -1.0 for i in range(2)], "winners": [seat],
                      "reason": "time", "seat": late}
            await table.change(status=OVER, result=result, notes=[table.talk.note(CLAIMED, {
                "seat": seat, "name": table.name_of(seat), "late": late, "late_name": table.name_of(late)})])


def _spawn_close(table: Table) -> None:
    task = asyncio.ensure_future(table.close())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


__all__ = ["CLAIMED", "OVER", "TIMED_OUT", "Deadlines"]
