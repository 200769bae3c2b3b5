"""The master of one table: validate → apply on a copy → commit → publish, one way.

Like boardgame.io's ``Master``, it owns the authoritative position of a table and is the only
thing that changes it. A move (from a browser, an AI seat or the hourglass) goes:

1. **validate** the request: the table is playing, the mover's seat is to move, ``seq`` says the
   mover saw the latest position; the canonical JSON becomes an ``int`` once
   (``state.action_from_json``);
2. **apply on a copy**: ``work = state.clone()``; ``work.apply_action(action, elapsed=...)``
   checks legality (once) and the time spent, and returns the action's events; the chance
   outcomes that follow are drawn with a generator seeded per table and per step
   (``Random(f"{seed}:{step}")``), so a table rebuilt from its stored actions after a restart goes
   on drawing exactly as it would have;
3. **commit**: the actions (canonical JSON, with ``elapsed`` when time was spent) are stored
   through the ``store`` — nothing changes in memory when that fails, so the request can be
   sent again;
4. **publish**: ``work`` becomes the position, each action's events join the log, and the
   commit's :class:`~ludoteca.web.master.listeners.Change` is handed to the ``publisher`` (the
   table's listeners: the viewers told, the timers, the other workers...) and returned.

The master gets its store and its publisher as two small interfaces (:class:`Store`,
:class:`Publisher`) and never calls back into whoever called it: when another worker stored first,
it raises :class:`Conflicted` with nothing changed, and the caller reads the database and tries
again (tables.py). It knows no game by name: the clock is ``game.clock()`` / ``state.time_left()``,
secrecy is in the events and in ``observation(seat)`` (the hub's business).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ludoteca.core.chance import sample_chance
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import N_
from ludoteca.i18n import Message
from ludoteca.web.codec import dumps
from ludoteca.web.errors import Code, WebError, refusal
from ludoteca.web.master.clock import TurnClock
from ludoteca.web.master.listeners import Change
from ludoteca.web.repository.store import AppendRequest, Conflict, NoteData, SeatData

log = logging.getLogger("ludoteca.web")

WAITING, PLAYING, OVER, BROKEN, EXPIRED = "waiting", "playing", "over", "broken", "expired"
OPEN, HUMAN, AI = "open", "human", "ai"
TIMEOUT_JSON: dict[str, Any] = {"timeout": True}
"""The action the host plays when a seat's time runs out (RULES.md: shared by every game)."""


class Conflicted(WebError):
    """Another worker changed the table first: nothing was stored and nothing changed in memory;
    the caller reads what was stored (``Following.catch_up``) and may check the request again."""


class Store(Protocol):
    """Where the master commits (the server's group commit; a list in tests)."""

    async def append(self, request: AppendRequest) -> None: ...


class Publisher(Protocol):
    """Who is told of each committed change (the table's listeners; a recorder in tests)."""

    def committed(self, change: Change) -> None: ...

Fence = tuple[str, int]
"""Several workers: the (table, token) of the lease a timer's append carries (AppendRequest.fence)."""


@dataclass
class Seat:
    kind: str
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None
    account_id: int | None = None
    """The account of the logged-in player who took the seat (web/accounts/accounts.py)."""

    def data(self) -> SeatData:
        return SeatData(self.kind, self.level, self.name, self.token_hash, account_id=self.account_id)


_dumps = dumps


class Entry:
    """One action of the log: who made it (None: chance), its stored JSON, its events.

    Kept as JSON text (a table's log lives as long as the table, and text costs the garbage
    collector nothing to scan): ``events_json`` is, for an entry whose events are all public,
    exactly what every viewer is sent; otherwise the events with their visibility, read back by
    :attr:`events` when a viewer's view is built."""

    __slots__ = ("_action", "elapsed", "events_json", "public", "seat")

    def __init__(self, seat: int | None, action: dict[str, Any], events: Sequence[Event]) -> None:
        self.seat = seat
        self._action = _dumps(action)
        self.elapsed: float | None = action.get("elapsed")
        self.public = all(e.to is None for e in events)
        if self.public:
            self.events_json = _dumps([{"kind": e.kind, **e.data} for e in events])
        else:
            self.events_json = _dumps([[e.kind, dict(e.data), None if e.to is None else sorted(e.to),
                                        None if e.public is None else dict(e.public)] for e in events])

    @property
    def action(self) -> dict[str, Any]:
        """The stored JSON of the action (a fresh copy)."""
        data: dict[str, Any] = json.loads(self._action)
        return data

    @property
    def events(self) -> tuple[Event, ...]:
        """The action's events, in order."""
        raw = json.loads(self.events_json)
        if self.public:
            return tuple(Event(d.pop("kind"), d) for d in raw)
        return tuple(Event(kind, data, None if to is None else frozenset(to), public)
                     for kind, data, to, public in raw)


@dataclass(frozen=True)
class Step:
    """An action applied on the work copy, waiting for its commit."""

    seat: int | None
    action: dict[str, Any]
    events: tuple[Event, ...]


def record_json(state: State, action: Action, elapsed: float | None) -> dict[str, Any]:
    """The stored form of ``action`` played in ``state``: its canonical JSON, with the seconds
    spent as ``elapsed`` when the game's clock was running (RULES.md; ``State.apply_json`` reads
    it back)."""
    data = state.action_to_json(action)
    if elapsed is not None:
        data["elapsed"] = elapsed
    return data


class Master:
    """The authoritative position of one table and the only way it changes."""

    def __init__(self, table_id: str, game: Game, seed: int, seats: list[Seat], status: str,
                 store: Store, publisher: Publisher, *, actions: list[dict[str, Any]] | None = None,
                 action_seats: list[int | None] | None = None,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.table_id = table_id
        self.game = game
        self.seed = seed
        self.seats = seats
        self.status = status
        self.store = store
        self.publisher = publisher
        self.state: State = game.new_initial_state()
        self.log: list[Entry] = []
        self.secrets = False
        """True once an event of the log was secret for someone (the end then reveals the log)."""
        self.result: dict[str, Any] | None = None
        self.lock = asyncio.Lock()
        self.clock = TurnClock(now)
        self.last_move_at = time.time()
        self._timeout = self._timeout_action() if game.clock() is not None else None
        self._fence_now: Fence | None = None
        """The lease's token the appends of the operation under way carry (a timer's; else None)."""
        self._replay(actions or [], action_seats or [])

    # --- reading ---------------------------------------------------------------------------
    @property
    def seq(self) -> int:
        """How many actions were played (the ``seq`` a client sends with its move)."""
        return len(self.log)

    def to_move(self) -> int | None:
        cp = self.state.current_player()
        return cp if cp >= 0 else None

    def actions(self) -> list[dict[str, Any]]:
        """The stored JSON of every action, in order (records, AI workers)."""
        return [e.action for e in self.log]

    def _replay(self, actions: list[dict[str, Any]], seats: list[int | None]) -> None:
        """Rebuild the position from stored actions; a record that does not replay marks the
        table broken (its position stays where the replay stopped)."""
        try:
            for seat, data in zip(seats, actions, strict=True):
                self._log(Entry(seat, data, tuple(self.state.apply_json(data))))
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            log.error("table %s does not replay: %s", self.table_id, exc)
            self.status = BROKEN
        if self.state.is_terminal():
            self.result = self._result(self.state)

    def absorb(self, rows: Sequence[tuple[int | None, dict[str, Any]]]) -> int:
        """Actions another worker stored (lock held), replayed in order like at a load; returns how
        many were applied (chance outcomes were drawn there with the same seeded generators)."""
        done = 0
        try:
            for seat, data in rows:
                self._log(Entry(seat, data, tuple(self.state.apply_json(data))))
                done += 1
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            log.error("table %s: a stored action does not replay: %s", self.table_id, exc)
            self.status = BROKEN
        if self.state.is_terminal() and self.result is None:
            self.result = self._result(self.state)
        return done

    def _log(self, entry: Entry) -> None:
        self.log.append(entry)
        if not entry.public:
            self.secrets = True

    def _timeout_action(self) -> Action | None:
        try:
            return self.state.action_from_json(TIMEOUT_JSON)
        except (ValueError, KeyError, TypeError):
            return None

    # --- validate -------------------------------------------------------------------------------
    def _check_turn(self, seat: int, seq: Any) -> None:
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise WebError(Code.BAD_MESSAGE, "'seq' is the number of actions you have seen")
        if seq is not None and seq != self.seq:
            # a move for a position that has moved on (a tap that crossed a forced move played for the
            # player, or the end of the game): quiet, the page already shows what happened (errors.QUIET)
            raise WebError(Code.STALE, "the position changed before your move arrived; it was not played")
        if self.status != PLAYING:
            raise WebError(Code.NOT_PLAYING, "the game has not started" if self.status == WAITING
                           else "the game is over" if self.status == OVER else "this table cannot be played")
        to_move = self.to_move()
        if to_move is None:
            raise WebError(Code.NOT_YOUR_TURN, "it is not your turn: the game is drawing what comes next")
        if to_move != seat:
            raise WebError(Code.NOT_YOUR_TURN, "it is not your turn: {name} is to move",
                           name=self.seats[to_move].name or Message(N_("Player {n}"), {"n": to_move + 1}))

    def parse(self, data: Any) -> Action:
        """A client's canonical JSON as the engine's int (the only place it is parsed)."""
        if not isinstance(data, dict):
            raise WebError(Code.BAD_MESSAGE, "an action message needs an 'action' object")
        try:
            action = self.state.action_from_json(data)
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            # the engine's reason names its JSON fields: a player is told in words, the page names the move
            raise refusal(N_("This is not a move of this game."), data) from None
        if self._timeout is not None and action == self._timeout:
            raise WebError(Code.ILLEGAL, "the hourglass runs out by itself: the server plays the timeout")
        return action

    # --- the way in -------------------------------------------------------------------------------
    async def submit(self, seat: int, data: Any, seq: Any = None) -> Change:
        """A player's move as canonical JSON (a browser): validated, applied, committed, published.
        :class:`Conflicted` when another worker stored first (nothing changed)."""
        async with self.lock:
            try:
                self._check_turn(seat, seq)
            except WebError as exc:
                if exc.code in (Code.NOT_YOUR_TURN, Code.NOT_PLAYING) and isinstance(data, dict) \
                        and self._just_played(seat, data):
                    # the move this seat just made, again (a tap that crossed the same move played for it)
                    raise WebError(Code.STALE, "the position changed before your move arrived; it was not "
                                               "played") from None
                raise
            return await self._play(seat, self.parse(data))

    async def play(self, seat: int, action: Action, seq: int, only_ai: bool = False,
                   fence: Fence | None = None) -> Change | None:
        """An AI seat's move for the position ``seq`` (``fence``: the lease's token the append
        carries); None (nothing played) when the position changed meanwhile (``only_ai``: or the
        seat is no longer played by an AI). :class:`Conflicted` when another worker stored first."""
        async with self.lock:
            if seq != self.seq or self.status != PLAYING or self.to_move() != seat:
                return None
            if only_ai and self.seats[seat].kind != AI:
                return None  # the seat's player took it back meanwhile
            self._fence_now = fence
            try:
                return await self._play(seat, action)
            finally:
                self._fence_now = None

    async def timeout(self, fence: Fence | None = None) -> Change | None:
        """The hourglass fired: play the timeout if the time is really out, else None."""
        async with self.lock:
            if self.status != PLAYING or self.clock.time_left is None or not self.clock.expired():
                return None
            self._fence_now = fence
            try:
                return await self._play_timeout()
            finally:
                self._fence_now = None

    async def start(self, seats: dict[int, Seat] | None = None) -> Change:
        """Every seat is taken (``seats`` in this same transaction): draw the chance outcomes
        due (the opening ones) and play (lock held). Stored only if the table's status is still
        the one in memory (a join racing an expiry stores nothing)."""
        work = self.state.clone()
        steps = self._chance_steps(work, self.seq)
        return await self._commit(steps, work, status=PLAYING, seats=seats, expect_status=self.status)

    async def take_seats(self, seats: dict[int, Seat]) -> Change:
        """Seats taken while the table waits or plays (lock held): stored, then published."""
        return await self._commit([], self.state, seats=seats, expect_status=self.status)

    async def change(self, seats: dict[int, Seat] | None = None, *, status: str | None = None,
                     result: dict[str, Any] | None = None, notes: Sequence[NoteData] = (),
                     fence: Fence | None = None) -> Change:
        """A change of the table around the game (lock held): seats replaced (a resignation, a seat
        left or handed to an AI, taken back; each only while it still holds the token it had), the
        status and a result the engine did not decide (a resignation, an abandoned table), and the
        notices that tell it: stored in one transaction (nothing changes when that fails), then
        published. The game record is untouched: it holds the engine's actions only. ``fence``:
        a timer's change (an abandoned seat) carries the lease's token."""
        seats = seats or {}
        previous = self.status
        new_status = status or self.status
        self._fence_now = fence
        try:
            await self._store(AppendRequest(
                self.table_id, self.seq, [], new_status if new_status != self.status else None, result, [],
                expect_status=self.status, notes=list(notes),
                replace=[(i, seat.data(), self.seats[i].token_hash) for i, seat in sorted(seats.items())]))
        finally:
            self._fence_now = None
        for i, seat in seats.items():
            self.seats[i] = seat
        self.status = new_status
        if result is not None:
            self.result = result
        self.clock.restart(self.state.time_left() if self.status == PLAYING else None)
        change = Change(self.table_id, self.seq, self.seq, self.status, previous, seats=tuple(sorted(seats)),
                        notes=tuple(notes), everything=result is not None and self.secrets, at=self.last_move_at)
        self.publisher.committed(change)
        return change

    def adopt(self, seats: Sequence[Seat], status: str, result: dict[str, Any] | None) -> bool:
        """What another worker stored around the game (lock held, after :meth:`absorb`): the seats,
        the status (a broken table stays broken) and the result; True when something changed."""
        changed = False
        if list(seats) != self.seats[:len(seats)] and len(seats) == len(self.seats):
            self.seats[:] = seats
            changed = True
        if status != self.status and self.status != BROKEN:
            self.status = status
            changed = True
        if result is not None and result != self.result:
            self.result = result
            changed = True
        return changed

    # --- apply on a copy --------------------------------------------------------------------------
    async def _play(self, seat: int, action: Action) -> Change:
        """Apply ``action`` for ``seat`` (lock held) with the time spent and the chance that follows."""
        elapsed = None
        if self.clock.time_left is not None:
            elapsed = self.clock.elapsed()
            if elapsed > self.clock.time_left:
                await self._play_timeout()
                raise WebError(Code.TIMEOUT, "the hourglass ran out before your move arrived")
        work = self.state.clone()
        data = record_json(work, action, elapsed)
        try:
            events = work.apply_action(action, elapsed=elapsed)
        except IllegalActionError:
            if self._just_played(seat, data):
                # the very move this seat just made (a tap that crossed the same move played for it)
                raise WebError(Code.STALE, "the position changed before your move arrived; it was not played") \
                    from None
            raise refusal(N_("You cannot make this move now."), self.state.action_to_json(action)) from None
        steps = [Step(seat, data, tuple(events)), *self._chance_steps(work, self.seq + 1)]
        return await self._commit(steps, work)

    def _just_played(self, seat: int, data: dict[str, Any]) -> bool:
        """True when ``data`` is the move ``seat`` made last, with only chance since."""
        wanted = {k: v for k, v in data.items() if k != "elapsed"}
        for entry in reversed(self.log):
            if entry.seat is None:
                continue
            return entry.seat == seat and {k: v for k, v in entry.action.items() if k != "elapsed"} == wanted
        return False

    async def _play_timeout(self) -> Change | None:
        if self._timeout is None:
            return None
        seat = self.to_move()
        work = self.state.clone()
        data = record_json(work, self._timeout, None)
        events = work.apply_action(self._timeout)
        steps = [Step(seat, data, tuple(events)), *self._chance_steps(work, self.seq + 1)]
        return await self._commit(steps, work)

    def _chance_steps(self, work: State, seq: int) -> list[Step]:
        steps: list[Step] = []
        while work.is_chance_node():
            outcome = sample_chance(work, random.Random(f"{self.seed}:{seq + len(steps)}"))
            data = work.action_to_json(outcome)
            steps.append(Step(None, data, tuple(work.apply_action(outcome))))
        return steps

    @staticmethod
    def _result(state: State) -> dict[str, Any]:
        returns = state.returns()
        return {"returns": returns, "winners": [i for i, r in enumerate(returns) if r > 0]}

    # --- commit, then publish ----------------------------------------------------------------------
    async def _commit(self, steps: list[Step], work: State, status: str | None = None,
                      seats: dict[int, Seat] | None = None, expect_status: str | None = None) -> Change:
        """Store ``steps`` and the open ``seats`` taken in one transaction, then make ``work`` the
        position, hand the change to the publisher and return it (lock held). When storing fails
        nothing changes in memory."""
        status = status or self.status
        seats = seats or {}
        result = None
        if work.is_terminal():
            status = OVER
            result = self._result(work)
        first = self.seq
        previous = self.status
        if steps or seats or status != self.status:
            await self._store(AppendRequest(
                self.table_id, first, [(s.seat, s.action) for s in steps],
                status if status != self.status else None, result,
                [(i, seat.data()) for i, seat in sorted(seats.items())], expect_status))
        for i, seat in seats.items():
            self.seats[i] = seat
        for s in steps:
            self._log(Entry(s.seat, s.action, s.events))
        self.state = work
        self.status = status
        if steps or seats:
            self.last_move_at = time.time()
        if result is not None:
            self.result = result
        self.clock.restart(self.state.time_left() if self.status == PLAYING else None)
        change = Change(self.table_id, first, self.seq, status, previous,
                        actions=tuple((s.seat, s.action) for s in steps), seats=tuple(sorted(seats)),
                        everything=result is not None and self.secrets, at=self.last_move_at)
        self.publisher.committed(change)
        return change

    async def _store(self, request: AppendRequest) -> None:
        request.fence = self._fence_now
        try:
            await self.store.append(request)
        except WebError:
            raise
        except Conflict as exc:  # memory never runs ahead of the database: the caller reads what was stored
            raise Conflicted(Code.CONFLICT, "the table changed meanwhile and nothing was saved: {reason}",
                             reason=str(exc)) from None
        except Exception as exc:  # storage failure: nothing changes in memory
            log.exception("table %s: cannot store actions", self.table_id)
            raise WebError(Code.STORAGE, "your seat could not be saved; try again" if request.seats
                           else "the move could not be saved; try again") from exc
