"""A table in play: its parts composed, the way an action goes, and what the table shows.

:class:`Table` holds its parts as objects, each with its own state (none inherits from another):

- ``master`` (master.py): the position, the log, the seats and the status; the only thing that
  changes them (validate → apply on a copy → commit → publish);
- ``hub`` (web/hub/hub.py): the connections and the message each viewer may see;
- ``listeners`` (listeners.py): the master's publisher, told of each committed change;
- ``seating`` (seating.py): seat tokens, joining, a seat following its account, rematch seats kept;
- ``presence`` (presence.py): away players, the abandon timer, abandoned seats;
- ``timers`` (timers.py): the hourglass and the AI seats;
- ``following`` (following.py): several workers: the other workers' news, catching up, telling them;
- ``talk`` (talk.py): the stored notices, chat lines and rematch offers;
- ``leaving`` (leaving.py): a player resigns, leaves, or takes back a seat an AI played.

**The action path**, one way, top to bottom (like boardgame.io's ``onUpdate``): a websocket message
(web/hub/sockets.py) → :meth:`Table.submit` finds the sender's seat from its token → ``master.submit``
validates, applies on a copy, commits through the store and hands the :class:`Change` to
``listeners.committed`` → each listener in turn: a rated table rated (local changes), the away
seats counted, the viewers sent their messages (``hub.publish``), the lease claimed or released,
the hourglass, AI seat and abandon timer armed, the other workers told (local changes); then the
listeners the server registered for every table (``Host.table_listeners``). Nothing calls back up:
the master returns the change, and when another worker stored first it raises ``Conflicted``, the
table reads the database (``following.catch_up``) and submits again. Changes around the game
(a resignation, an abandoned seat...) go the same way through :meth:`Table.change`.

This module also holds what the table shows: the viewers' messages (``hub.Source``), the lobby's
summary and the replay. The lobby (web/lobby/lobby.py) creates, loads and lists tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable, Sequence
from typing import Any

from ludoteca.core.game import State
from ludoteca.core.records import Record
from ludoteca.registry import load_game
from ludoteca.web.accounts import ratings
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection, Hub, Viewer
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import life
from ludoteca.web.master.following import NEWS_QUEUED, Following
from ludoteca.web.master.host import MAX_NAME, STALL_AFTER, Host, Shared, clean_name, hash_token
from ludoteca.web.master.leaving import Leaving
from ludoteca.web.master.listeners import Call, Change, Listener, Listeners
from ludoteca.web.master.master import (
    AI,
    EXPIRED,
    HUMAN,
    OVER,
    PLAYING,
    WAITING,
    Conflicted,
    Entry,
    Fence,
    Master,
    Seat,
)
from ludoteca.web.master.presence import Presence
from ludoteca.web.master.seating import Seating, valid_join_key
from ludoteca.web.master.talk import Talk
from ludoteca.web.master.timers import Timers
from ludoteca.web.repository.store import NoteData, SeatData, TableData

__all__ = ["MAX_NAME", "NEWS_QUEUED", "STALL_AFTER", "Host", "Shared", "Table", "clean_name", "hash_token",
           "valid_join_key"]

SUBMIT_TRIES = 3
"""Times a move is checked again after another worker stored first (each time after reading it)."""


class Table:
    """A game table: its stored facts and its parts (see the module's docstring)."""

    def __init__(self, host: Host, data: TableData) -> None:
        self.host = host
        self.id = data.id
        self.game_name = data.game
        self.options = data.options
        self.created_at = data.created_at
        self.rematch_id = data.rematch_id
        self.rematch_of = data.rematch_of
        self.unlisted = data.unlisted
        self.settings = life.stored_settings(data.settings)
        self.game = load_game(data.game, **data.options)
        self._hidden = self.game.has_hidden_information()
        self._replay: dict[str, Any] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self.used_at = time.monotonic()
        """When the table was last asked for (``Lobby.get``): several workers unload a table idle here."""
        # --- the parts ---------------------------------------------------------------------------------
        self.listeners = Listeners(self)
        self.master = Master(data.id, self.game, data.seed,
                             [Seat(s.kind, s.level, s.name, s.token_hash, s.account_id) for s in data.seats],
                             data.status, host.committer, self.listeners,
                             actions=data.actions, action_seats=data.action_seats)
        if data.result is not None and self.master.result is None:
            self.master.result = data.result
        self.master.last_move_at = data.action_times[-1] if data.action_times else data.updated_at
        self.seating = Seating(self)
        self.presence = Presence(self, data)
        self.talk = Talk(self, data)
        self.following = Following(self, data.last_note_id)
        self.timers = Timers(self)
        self.leaving = Leaving(self)
        self.hub = Hub(self, on_presence=self.presence.connections_changed)
        # --- after each committed change, in this order ------------------------------------------------
        own: tuple[Listener, ...] = (Call(_rate), self.presence, Call(_show), Call(self.following.lease_changed),
                                     self.timers, Call(self.following.tell_others))
        for listener in (*own, *host.table_listeners):
            self.listeners.add(listener)

    # --- the action path ---------------------------------------------------------------------------------
    async def submit(self, conn: Connection, message: dict[str, Any]) -> None:
        """A player's move from ``conn``: its seat from its token, then the master checks, commits
        and publishes it; when another worker stored first, read what it stored and check again."""
        data = message.get("action")
        if not isinstance(data, dict):
            raise WebError(Code.BAD_MESSAGE, "an action message needs an 'action' object")
        seat = self.seating.seat_of(conn)
        for _ in range(SUBMIT_TRIES):
            try:
                await self.master.submit(seat, data, message.get("seq"))
                return
            except Conflicted:
                await self.following.refresh()
        raise WebError(Code.CONFLICT, "the table changed meanwhile and nothing was saved: {reason}",
                       reason="other workers stored moves again and again")

    async def change(self, seats: dict[int, Seat] | None = None, *, status: str | None = None,
                     result: dict[str, Any] | None = None, notes: Sequence[NoteData] = (),
                     fence: Fence | None = None) -> Change:
        """A change of seats, status or result with its notices (lock held): stored, then sent."""
        change = await self.following.caught_up(
            self.master.change(seats, status=status, result=result, notes=notes, fence=fence))
        self.talk.told(notes)
        return change

    # --- reading the position and the seats --------------------------------------------------------------
    @property
    def state(self) -> State:
        return self.master.state

    @property
    def seats(self) -> list[Seat]:
        return self.master.seats

    @property
    def status(self) -> str:
        return self.master.status

    @property
    def result(self) -> dict[str, Any] | None:
        return self.master.result

    @property
    def n_players(self) -> int:
        return self.game.num_players

    def is_over(self) -> bool:
        return self.master.status == OVER

    def to_move(self) -> int | None:
        return self.master.to_move()

    def name_of(self, seat: int) -> str:
        return self.seats[seat].name or f"Player {seat + 1}"

    def easiest_level(self) -> str:
        levels = self.host.levels()
        return levels[0] if levels else "random"

    # --- what the parts share ----------------------------------------------------------------------------
    def runs_timers(self) -> bool:
        """Whether this worker runs the table's AI seats, hourglass and abandon timers: always with
        one worker; with several, only the holder of the table's lease (cluster.py)."""
        return self.host.cluster is None or self.host.cluster.holds(self.id)

    def lease(self) -> tuple[bool, Fence | None]:
        """Before a timer's append: whether this worker may make it, and the lease's fencing token
        it carries (several workers; None with one)."""
        cluster = self.host.cluster
        if cluster is None:
            return True, None
        fence = cluster.fence(self.id)
        return fence is not None, fence

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in the background (cancelled when the table closes)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- the parts' state, as the server and the tests read it --------------------------------------------
    @property
    def away(self) -> dict[int, float]:
        return self.presence.away

    @property
    def notes(self) -> deque[NoteData]:
        return self.talk.notes

    @property
    def offer(self) -> dict[str, Any] | None:
        return self.talk.offer

    @property
    def news_applied(self) -> int:
        return self.following.news_applied

    @property
    def news_read(self) -> int:
        return self.following.news_read

    @property
    def bus_handler(self) -> Any:
        return self.following.bus_handler

    @bus_handler.setter
    def bus_handler(self, handler: Any) -> None:
        self.following.bus_handler = handler

    # --- what the lobby and the cluster ask --------------------------------------------------------------
    async def join(self, seat: Any, name: Any, claim: str | None = None, key: Any = None,
                   account_id: int | None = None) -> str:
        return await self.seating.join(seat, name, claim, key, account_id)

    async def start(self) -> None:
        await self.seating.start()

    def expire(self, status: str = EXPIRED) -> None:
        self.seating.expire(status)

    def hold_seats(self, previous: Sequence[Seat | SeatData], until: float) -> None:
        self.seating.hold_seats(previous, until)

    def authenticate(self, conn: Connection, token: Any) -> int:
        return self.seating.authenticate(conn, token)

    async def account_seat(self, account_id: int) -> tuple[int, str] | None:
        return await self.seating.account_seat(account_id)

    def resume(self) -> None:
        self.timers.resume()

    async def refresh(self) -> bool:
        return await self.following.refresh()

    def announce(self, **body: Any) -> None:
        self.following.announce(**body)

    def tell_presence(self) -> None:
        self.following.tell_presence()

    def hear(self, body: dict[str, Any], origin: str) -> None:
        self.following.hear(body, origin)

    async def on_bus(self, body: dict[str, Any], origin: str) -> None:
        await self.following.on_bus(body, origin)

    def worker_gone(self, worker: str) -> None:
        self.following.worker_gone(worker)

    def lease_gained(self) -> None:
        self.timers.lease_gained()

    def lease_lost(self) -> None:
        self.timers.stop()

    # --- what the hub reads (hub.Source) ----------------------------------------------------------
    @property
    def entries(self) -> list[Entry]:
        return self.master.log

    def hidden_information(self) -> bool:
        return self._hidden

    def legal_json(self) -> list[dict[str, Any]]:
        """The legal actions as JSON (the hub keeps their text, once per position)."""
        state = self.master.state
        return [state.action_to_json(a) for a in state.legal_actions()]

    def header(self) -> dict[str, Any]:
        return {"table": self.id, "seq": self.master.seq, "status": self.status, "to_move": self.to_move(),
                "seats": self.public_seats(), "clock": self.clock_info(), "result": self.result,
                "rematch": self.rematch_id, "offer": self.talk.offer}

    def legal_for(self, viewer: Viewer) -> list[dict[str, Any]] | None:
        to_move = self.to_move()
        mine = (self.status == PLAYING and viewer is not None and viewer == to_move
                and self.seats[to_move].kind == HUMAN)
        return self.legal_json() if mine else None

    def snapshot_extra(self) -> dict[str, Any]:
        return {"game": {"name": self.game_name, "title": self.game.title, "players": self.n_players,
                         "options": {k: v for k, v in self.options.items() if k not in SERVER_ONLY_OPTIONS}},
                "rematch_of": self.rematch_of, "settings": self.settings}

    def viewer_extra(self, viewer: Viewer) -> dict[str, Any]:
        """What a snapshot adds for ``viewer``: the notices and the last chat lines it may read."""
        visible = [n for n in self.talk.notes if n.channel == life.ALL or viewer is None]
        chat = [n for n in visible if n.kind == "chat"][-life.CHAT_SHOWN:]
        keep = {id(n) for n in chat}
        return {"notes": [n.to_json() for n in visible if n.kind != "chat" or id(n) in keep]}

    def public_seats(self) -> list[dict[str, Any]]:
        connected = self.hub.connected_seats()
        out: list[dict[str, Any]] = [{"seat": i, "kind": s.kind, "level": s.level, "name": s.name,
                "connected": s.kind == AI or i in connected}
               for i, s in enumerate(self.seats)]
        for seat, (_, name, left) in self.seating.active_holds().items():
            out[seat]["held_for"] = name or f"Player {seat + 1}"
            out[seat]["held_seconds"] = round(left, 1)
        for i, s in enumerate(self.seats):
            if s.kind == AI and s.token_hash is not None:
                out[i]["taken_over"] = True  # an AI plays for an away player, who may take the seat back
            if s.account_id is not None:
                out[i]["account"] = True  # the seat's name is a logged-in player's account name
        if self.status == PLAYING and self.settings.get("pace") != "turn-based":  # turn-based: no abandon timer
            now = time.time()
            for i, since in self.presence.away.items():
                if self.seats[i].kind == HUMAN and i not in connected:
                    out[i]["abandon_in"] = round(max(0.0, self.presence.abandon_at(since) - now), 1)
        return out

    def clock_info(self) -> dict[str, Any] | None:
        remaining = self.master.clock.remaining() if self.status == PLAYING else None
        if remaining is None:
            return None
        return {"seat": self.to_move(), "remaining": round(remaining, 3)}

    def message(self, viewer: Viewer, log_from: int = 0, kind: str = "update") -> dict[str, Any]:
        return self.hub.message(viewer, log_from, kind)

    # --- the lobby's view -------------------------------------------------------------------------
    def stall_info(self) -> dict[str, Any]:
        """``waiting_for``: the human to move, if away; ``idle``: seconds since the last move;
        ``stalled``: someone is waiting for an away player for ``stall_after`` seconds or more."""
        if self.status != PLAYING:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - self.master.last_move_at)
        to_move = self.to_move()
        away = None
        if to_move is not None and self.seats[to_move].kind == HUMAN and to_move not in self.hub.connected_seats():
            away = to_move
        stalled = away is not None and idle >= self.host.stall_after
        return {"stalled": stalled, "waiting_for": away, "idle": round(idle)}

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id, "game": self.game_name, "title": self.game.title, "players": self.n_players,
            "status": self.status, "seats": self.public_seats(), "n_actions": self.master.seq,
            "spectators": self.hub.spectators(), "result": self.result,
            "rematch": self.rematch_id, "rematch_of": self.rematch_of, "created_at": self.created_at,
            "unlisted": self.unlisted, "rated": ratings.is_rated(self.settings), **self.stall_info(),
        }

    # --- replays ----------------------------------------------------------------------------------------
    def record(self) -> Record:
        rec = Record(game=self.game_name, options=dict(self.options), actions=self.master.actions())
        rec.meta = {"table": self.id, "players": [s.name for s in self.seats], "result": self.result}
        return rec

    def replay_data(self) -> dict[str, Any]:
        """Every position of a finished game, with every action's events (all public now)."""
        if self._replay is None:
            state = self.game.new_initial_state()
            positions = [state.to_json()]
            to_move = [_to_move_of(state)]
            for entry in self.master.log:
                state.apply_json(entry.action)
                positions.append(state.to_json())
                to_move.append(_to_move_of(state))
            self._replay = {
                "table": self.id, "game": {"name": self.game_name, "title": self.game.title,
                                           "players": self.n_players},
                "seats": self.public_seats(), "result": self.result, "actions": self.master.actions(),
                "action_seats": [e.seat for e in self.master.log],
                "events": [[e.view(None, everything=True) for e in entry.events] for entry in self.master.log],
                "positions": positions, "to_move": to_move,
                "notes": [n.to_json() for n in self.talk.notes if n.kind != "chat"],
            }
        return self._replay

    # --- moderation (moderation.py) -------------------------------------------------------------
    async def close_by_moderator(self, moderator: str) -> bool:
        """A moderator ends the table (waiting or in play): no winner, reason ``closed``, never rated;
        stored with its notice, then told. False when there was nothing to close."""
        from ludoteca.web.accounts.moderation import CLOSED, TABLE_CLOSED

        async with self.master.lock:
            if self.status not in (WAITING, PLAYING):
                return False
            result = {"returns": [0.0] * self.n_players, "winners": [], "reason": CLOSED}
            await self.change(status=OVER, result=result, notes=[self.talk.note(TABLE_CLOSED, {"by": moderator})])
            self.presence.away.clear()
            return True

    async def tell_removed(self, line: Any) -> None:
        """A moderator erased the chat line ``line`` (moderation.ChatLine) in storage: erase it here
        and tell every viewer and every worker (a stored notice)."""
        from ludoteca.web.accounts.moderation import removal_note

        async with self.master.lock:
            note = removal_note(line, self.master.seq)
            await self.talk.store([note])
            self.talk.told([note])

    async def close(self) -> None:
        ai = self.timers.ai_task
        self.timers.stop()
        tasks = [t for t in (ai, *self.following.close(), *self._tasks) if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.hub.close()


def _rate(table: Table, change: Change) -> None:
    """A rated table that just ended here: its players' ratings (web/accounts/ratings.py)."""
    if change.local:
        ratings.table_changed(table)


def _show(table: Table, change: Change) -> None:
    """Every viewer is sent what they may see of the change."""
    table.hub.publish(change.log_from, change.everything)


def _to_move_of(state: State) -> int | None:
    cp = state.current_player()
    return cp if cp >= 0 else None
