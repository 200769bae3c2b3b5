"""A table in play: its master (the position), its hub (the connections), seats and AI seats.

:class:`Table` joins the parts of one table: the :class:`~ludoteca.web.master.Master` that owns
the position and commits every change, the :class:`~ludoteca.web.hub.Hub` that sends each
viewer what they may see, the seats with their secret tokens (and the seats a rematch keeps for
the previous players), the hourglass's timer and the AI seats. The lobby (lobby.py) creates,
loads and lists tables.

The table's life around the game (docs/web.md, "Table life"): a player resigns or leaves a seat,
an away player's seat is handed to the easiest AI (or the table ends) after the table's
``abandon_after`` seconds, the players agree on a rematch, everyone chats. Each such change is
stored (seats, status, result and a notice in one transaction) before it is broadcast.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ludoteca.core.game import Game, State
from ludoteca.core.records import Record
from ludoteca.registry import load_game
from ludoteca.web import life, ratings
from ludoteca.web.ai import AIRunner, agent_seed
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub import Connection, Hub, Viewer
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import (
    AI,
    BROKEN,
    EXPIRED,
    HUMAN,
    OPEN,
    OVER,
    PLAYING,
    WAITING,
    Entry,
    Master,
    Seat,
    Store,
)
from ludoteca.web.repository import NOTES_LOADED, NoteData, Repository, SeatData, TableData

log = logging.getLogger("ludoteca.web")

MAX_NAME = 24
STALL_AFTER = 300.0
"""Seconds without a move, with a human to move who is away, before the lobby shows 'stalled'."""
NEWS_QUEUED = 256
"""Several workers: messages of the other workers waiting per table; beyond, they are dropped and
the table reads the database once instead."""
_JOIN_KEY = re.compile(r"[A-Za-z0-9_-]{22,128}")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def valid_join_key(key: Any) -> bool:
    return isinstance(key, str) and _JOIN_KEY.fullmatch(key) is not None


def clean_name(name: Any, default: str) -> str:
    if name is None:
        return default
    if not isinstance(name, str):
        raise WebError(Code.BAD_NAME, "a name is text")
    text = " ".join("".join(ch for ch in name if ch.isprintable()).split())
    if len(text) > MAX_NAME:
        raise WebError(Code.BAD_NAME, "a name has at most {n} characters", n=MAX_NAME)
    return text or default


class Shared(Protocol):
    """The worker's part in a cluster of workers (cluster.py), as a table sees it."""

    worker: str
    """This worker's id."""

    def holds(self, table_id: str) -> bool: ...

    def fence(self, table_id: str) -> tuple[str, int] | None: ...

    def announce(self, table_id: str, seq: int, body: dict[str, Any]) -> None: ...

    def claim(self, table: Table) -> None: ...

    def release(self, table_id: str) -> None: ...


class Host(Protocol):
    """What a table needs from the server around it (the lobby)."""

    cluster: Shared | None
    closing: bool
    ai_delay: float
    ai: AIRunner
    stall_after: float
    committer: Store
    repo: Repository

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def levels(self) -> list[str]: ...

    async def create(self, request: Any, rematch_of: str | None = None) -> tuple[Table, int | None, str | None]: ...


class Table:
    """A game table: stored data, the master, the hub, seats, the hourglass and AI seats."""

    def __init__(self, host: Host, data: TableData) -> None:
        self.host = host
        self.id = data.id
        self.game_name = data.game
        self.options = data.options
        self.created_at = data.created_at
        self.rematch_id = data.rematch_id
        self.rematch_of = data.rematch_of
        self.unlisted = data.unlisted
        self.holds: dict[int, tuple[str, str | None, float]] = {}
        """Rematch seats kept for the previous game's players: seat -> (token hash, name, until)."""
        self.game: Game = load_game(data.game, **data.options)
        self._hidden = self.game.has_hidden_information()
        self.hub = Hub(self)
        self._legal: list[dict[str, Any]] | None = None
        seats = [Seat(s.kind, s.level, s.name, s.token_hash, s.account_id) for s in data.seats]
        shared = host.cluster
        self.master = Master(data.id, self.game, data.seed, seats, data.status, host.committer, self,
                             actions=data.actions, action_seats=data.action_seats,
                             catch_up=self._catch_up if shared is not None else None,
                             fence=(lambda: shared.fence(self.id)) if shared is not None else None)
        self.note_id = data.last_note_id
        """The newest stored note this table has read (several workers: catching up reads the next)."""
        if data.result is not None and self.master.result is None:
            self.master.result = data.result
        self.master.last_move_at = data.action_times[-1] if data.action_times else data.updated_at
        self.ai_task: asyncio.Task[None] | None = None
        self.bus_handler: Any = None
        """Several workers: this table's handler of the bus (cluster.py)."""
        self._news: deque[dict[str, Any]] = deque()
        """Several workers: the other workers' messages not yet taken in, in order (:meth:`hear`)."""
        self._news_task: asyncio.Task[None] | None = None
        self.used_at = time.monotonic()
        """When the table was last asked for (``Lobby.get``): several workers unload a table idle here."""
        self.news_applied = 0
        """Messages of other workers taken in from their own content (no database read)."""
        self.news_read = 0
        """Messages of other workers that needed a database read (a gap, a change around the game)."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._replay: dict[str, Any] | None = None
        # --- the table's life -------------------------------------------------------------------
        self.settings = life.stored_settings(data.settings)
        self.notes: deque[NoteData] = deque(data.notes, maxlen=NOTES_LOADED)
        now = time.time()
        self.playing_since = data.action_times[0] if data.action_times else data.updated_at
        """When the game began (abandoned seats count from then at the earliest)."""
        self.away: dict[int, float] = {i: s.away_since if s.away_since is not None else now
                                       for i, s in enumerate(data.seats) if s.kind == HUMAN}
        """Human seats without a connection: seat -> since when (epoch seconds). A seat whose stored
        ``away_since`` is empty was connected when the server stopped: it counts from the load."""
        self._abandon_timer: asyncio.TimerHandle | None = None
        self._was_playing = data.status == PLAYING
        self.offer: dict[str, Any] | None = self._offer_of(data.notes)

    # --- what the hub reads (hub.Source) ----------------------------------------------------------
    @property
    def state(self) -> State:
        return self.master.state

    @property
    def entries(self) -> list[Entry]:
        return self.master.log

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

    def hidden_information(self) -> bool:
        return self._hidden

    def to_move(self) -> int | None:
        return self.master.to_move()

    def legal_json(self) -> list[dict[str, Any]]:
        if self._legal is None:
            state = self.master.state
            self._legal = [state.action_to_json(a) for a in state.legal_actions()]
        return self._legal

    def header(self) -> dict[str, Any]:
        return {"table": self.id, "seq": self.master.seq, "status": self.status, "to_move": self.to_move(),
                "seats": self.public_seats(), "clock": self.clock_info(), "result": self.result,
                "rematch": self.rematch_id, "offer": self.offer}

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
        visible = [n for n in self.notes if n.channel == life.ALL or viewer is None]
        chat = [n for n in visible if n.kind == "chat"][-life.CHAT_SHOWN:]
        keep = {id(n) for n in chat}
        return {"notes": [n.to_json() for n in visible if n.kind != "chat" or id(n) in keep]}

    def public_seats(self) -> list[dict[str, Any]]:
        connected = self.hub.connected_seats()
        out: list[dict[str, Any]] = [{"seat": i, "kind": s.kind, "level": s.level, "name": s.name,
                "connected": s.kind == AI or i in connected}
               for i, s in enumerate(self.seats)]
        for seat, (_, name, left) in self.active_holds().items():
            out[seat]["held_for"] = name or f"Player {seat + 1}"
            out[seat]["held_seconds"] = round(left, 1)
        for i, s in enumerate(self.seats):
            if s.kind == AI and s.token_hash is not None:
                out[i]["taken_over"] = True  # an AI plays for an away player, who may take the seat back
            if s.account_id is not None:
                out[i]["account"] = True  # the seat's name is a logged-in player's account name
        if self.status == PLAYING:
            now = time.time()
            for i, since in self.away.items():
                if self.seats[i].kind == HUMAN and i not in connected:
                    out[i]["abandon_in"] = round(max(0.0, self._abandon_at(since) - now), 1)
        return out

    def clock_info(self) -> dict[str, Any] | None:
        remaining = self.master.clock.remaining() if self.status == PLAYING else None
        if remaining is None:
            return None
        return {"seat": self.to_move(), "remaining": round(remaining, 3)}

    def message(self, viewer: Viewer, log_from: int = 0, kind: str = "update") -> dict[str, Any]:
        return self.hub.message(viewer, log_from, kind)

    # --- the lobby's view -------------------------------------------------------------------------
    def active_holds(self) -> dict[int, tuple[str, str | None, float]]:
        """Open seats still kept for a previous player: seat -> (token hash, name, seconds left)."""
        now = time.time()
        return {seat: (digest, name, until - now) for seat, (digest, name, until) in self.holds.items()
                if until > now and self.seats[seat].kind == OPEN}

    def hold_seats(self, previous: Sequence[Seat | SeatData], until: float) -> None:
        """Keep each open seat whose previous player held a token for that player until ``until``."""
        for i, old in enumerate(previous[:self.n_players]):
            if old.kind == HUMAN and old.token_hash and self.seats[i].kind == OPEN:
                self.holds[i] = (old.token_hash, old.name, until)

    def _check_hold(self, seat: int, claim: str | None) -> None:
        """Refuse ``seat`` while it is kept for someone else (``claim``: the hash of an old token)."""
        held = self.active_holds().get(seat)
        if held is None:
            return
        digest, name, left = held
        if claim is not None and secrets.compare_digest(digest, claim):
            return
        raise WebError(Code.SEAT_HELD, "seat {seat} is kept for {name}, who played it in the previous game, for "
                                       "{seconds} more seconds; take another seat or try again then",
                       seat=seat + 1, name=name or f"Player {seat + 1}", seconds=max(1, round(left)))

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

    # --- connections --------------------------------------------------------------------------------
    def authenticate(self, conn: Connection, token: Any) -> int:
        """Sit ``conn`` at the seat whose secret ``token`` it holds; WebError if none."""
        if isinstance(token, str) and token and len(token) <= 200:
            digest = hash_token(token)
            for i, seat in enumerate(self.seats):
                if seat.token_hash is not None and secrets.compare_digest(seat.token_hash, digest):
                    self.hub.sit(conn, i, token)
                    return i
        raise WebError(Code.BAD_TOKEN, "this token does not belong to any seat of this table")

    async def sign_in(self, conn: Connection, token: Any) -> int:
        """:meth:`authenticate`; with several workers, a token unknown here is checked again after
        reading the seats stored by the other workers (a seat just taken through another one)."""
        try:
            return self.authenticate(conn, token)
        except WebError:
            if self.host.cluster is None:
                raise
        await self.refresh()
        return self.authenticate(conn, token)

    def seat_of(self, conn: Connection) -> int:
        """The seat ``conn`` may act for, checking its token again (every action)."""
        if conn.seat is None or conn.token is None:
            raise WebError(Code.NOT_SEATED, "you are watching: join a seat to play")
        seat = self.seats[conn.seat]
        if seat.token_hash is None or not secrets.compare_digest(seat.token_hash, hash_token(conn.token)):
            raise WebError(Code.BAD_TOKEN, "your seat token is not valid for this seat")
        return conn.seat

    async def submit(self, conn: Connection, message: dict[str, Any]) -> None:
        """A player's move from ``conn``: the master checks, commits and publishes it."""
        data = message.get("action")
        if not isinstance(data, dict):
            raise WebError(Code.BAD_MESSAGE, "an action message needs an 'action' object")
        await self.master.submit(self.seat_of(conn), data, message.get("seq"))

    # --- seats ----------------------------------------------------------------------------------------
    async def join(self, seat: Any, name: Any, claim: str | None = None, key: Any = None,
                   account_id: int | None = None) -> str:
        """Take the open ``seat`` under ``name``; returns the seat's secret token.

        ``account_id``: the account of a logged-in player (the seat follows it: :meth:`account_seat`).

        ``claim``: the hash of the token of the previous game's player a rematch seat is kept for.
        ``key``: a secret the client chose (22-128 letters, digits, ``-``, ``_``), which becomes
        the seat's token; sending the same join again with it answers the same token, so a join
        whose answer was lost can simply be retried."""
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_players:
            raise WebError(Code.BAD_SEAT, "seats are numbered 0 to {last}", last=self.n_players - 1)
        if key is not None and not valid_join_key(key):
            raise WebError(Code.BAD_KEY, "a join key is 22 to 128 letters, digits, '-' or '_', chosen at random")
        name = clean_name(name, f"Player {seat + 1}")
        async with self.master.lock:
            held = self.seats[seat].token_hash
            if key is not None and held is not None and secrets.compare_digest(held, hash_token(key)):
                return key  # this very join again: same seat, same token
            if self.status == EXPIRED:
                raise WebError(Code.EXPIRED, "this table expired: nobody joined it in time")
            if self.seats[seat].kind != OPEN:
                raise WebError(Code.SEAT_TAKEN, "seat {seat} is already taken", seat=seat + 1)
            self._check_hold(seat, claim)
            token = key if key is not None else secrets.token_urlsafe(24)
            taken = {seat: Seat(HUMAN, None, name, hash_token(token), account_id)}
            if self.status == WAITING and all(s.kind != OPEN for i, s in enumerate(self.seats) if i != seat):
                await self.master.start(taken)  # the last seat and the game's start: one transaction
            else:
                await self.master.take_seats(taken)
            return token

    async def account_seat(self, account_id: int) -> tuple[int, str] | None:
        """The seat the account holds here (before or during the game), with a new secret token: the
        seat follows the account to another browser or device; the connections of the old token
        watch from now on (they are told ``left``). None when the account holds no seat here."""
        if self.host.cluster is not None:
            await self.refresh()  # a seat taken through another worker
        async with self.master.lock:
            if self.status not in (WAITING, PLAYING):
                return None
            for i, s in enumerate(self.seats):
                if s.account_id == account_id and s.token_hash is not None:
                    token = secrets.token_urlsafe(24)
                    await self._change({i: Seat(s.kind, s.level, s.name, hash_token(token), s.account_id)})
                    self.hub.unseat(i)
                    return i, token
        return None

    async def start(self) -> None:
        """Every seat is taken but the start was never stored (or the opening chance is pending)."""
        async with self.master.lock:
            if self.status == WAITING or (self.status == PLAYING and self.state.is_chance_node()):
                await self.master.start()

    def expire(self, status: str = EXPIRED) -> None:
        """The lobby expired this waiting table (already stored)."""
        if self.master.status == WAITING:
            self.master.status = status
            self.hub.publish(self.master.seq)

    # --- after every change (master.Publisher) --------------------------------------------------------
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

    def announce(self, **body: Any) -> None:
        """Several workers: tell the others that this table changed (they read it from the database)."""
        if self.host.cluster is not None:
            self.host.cluster.announce(self.id, self.master.seq, body)

    def runs_timers(self) -> bool:
        """Whether this worker runs the table's AI seats, hourglass and abandon timers: always with
        one worker; with several, only the holder of the table's lease (cluster.py)."""
        return self.host.cluster is None or self.host.cluster.holds(self.id)

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

    # --- several workers (cluster.py) ------------------------------------------------------------------
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

    def tell_presence(self) -> None:
        self.announce(presence=sorted(self.hub.local_seats()))

    def _presence_seen(self) -> None:
        if not self.host.closing:
            self._track_away()
            self._arm_abandon()
        self.hub.publish_seats()

    def _on_clock(self) -> None:
        if not self.host.closing:
            self._spawn(self._timeout())

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

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

    # --- the table's life ---------------------------------------------------------------------------
    def easiest_level(self) -> str:
        levels = self.host.levels()
        return levels[0] if levels else "random"

    def _name(self, seat: int) -> str:
        return self.seats[seat].name or f"Player {seat + 1}"

    def _note(self, kind: str, data: dict[str, Any], channel: str = life.ALL) -> NoteData:
        return NoteData(kind, channel, self.master.seq, data, time.time())

    def _told(self, notes: Sequence[NoteData]) -> None:
        """Stored notes: kept with the table and sent to whoever may read them."""
        self.notes.extend(notes)
        self.hub.push_notes([(n.channel, n.to_json()) for n in notes])

    async def _store_notes(self, notes: list[NoteData]) -> None:
        try:
            await self.host.db(self.host.repo.add_notes, self.id, notes)
        except WebError:
            raise
        except Exception as exc:
            log.exception("table %s: cannot store a note", self.id)
            raise WebError(Code.STORAGE, "your message could not be saved; try again") from exc
        self.announce()

    async def _change(self, seats: dict[int, Seat] | None = None, *, status: str | None = None,
                      result: dict[str, Any] | None = None, notes: Sequence[NoteData] = ()) -> None:
        """A change of seats, status or result with its notices (lock held): stored, then sent."""
        await self.master.change(seats, status=status, result=result, notes=notes)
        self._told(notes)

    async def resign(self, conn: Connection) -> None:
        """The player of ``conn`` resigns. Two players: the game ends and the other one wins (reason
        ``resigned``). More: the easiest AI plays the seat from now on and the person leaves it."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status != PLAYING:
                raise WebError(Code.NOT_PLAYING, "you can resign only while the game is being played")
            name = self._name(seat)
            if self.n_players == 2:
                other = 1 - seat
                result = {"returns": [1.0 if i == other else -1.0 for i in range(2)], "winners": [other],
                          "reason": "resigned", "seat": seat}
                await self._change(status=OVER, result=result,
                                   notes=[self._note("resigned", {"seat": seat, "name": name, "ended": True})])
                return
            level = self.easiest_level()
            kept = ratings.kept_account(self.settings, self.seats[seat])  # rated: the resigner still ranks last
            await self._change({seat: Seat(AI, level, f"AI {seat + 1} ({level})", None, kept)},
                               notes=[self._note("resigned", {"seat": seat, "name": name, "level": level})])
            self.away.pop(seat, None)
            self.hub.unseat(seat)

    async def leave(self, conn: Connection) -> None:
        """The player of ``conn`` leaves the seat: before the game it is open again; during the game
        it is abandoned at once (the table's ``abandoned`` setting), and cannot be taken back."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status == WAITING:
                self.holds.pop(seat, None)
                await self._change({seat: Seat(OPEN)},
                                   notes=[self._note("left", {"seat": seat, "name": self._name(seat)})])
            elif self.status == PLAYING:
                await self._abandon(seat, left=True)
            else:
                raise WebError(Code.NOT_PLAYING, "the game is over: there is no seat to leave")
            self.away.pop(seat, None)
            self.hub.unseat(seat)

    async def take_back(self, conn: Connection) -> None:
        """The player of ``conn`` plays again the seat an AI took over while they were away."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            current = self.seats[seat]
            if self.status != PLAYING or current.kind != AI:
                raise WebError(Code.NOT_PLAYING, "your seat is not played by an AI: there is nothing to take back")
            await self._change({seat: Seat(HUMAN, None, current.name, current.token_hash, current.account_id)},
                               notes=[self._note("took_back", {"seat": seat, "name": self._name(seat)})])

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
            if left:  # no way back; a rated table still ranks the account (last: web/ratings.py)
                account = ratings.kept_account(self.settings, self.seats[seat])
            await self._change({seat: Seat(AI, level, name, token, account)},
                               notes=[self._note("ai_took_over", {"seat": seat, "name": name, "level": level,
                                                                  "why": why})])
        self.away.pop(seat, None)

    # --- away players ----------------------------------------------------------------------------------
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

    # --- rematch offers --------------------------------------------------------------------------------
    @staticmethod
    def _offer_of(notes: Sequence[NoteData]) -> dict[str, Any] | None:
        """The rematch offer pending after ``notes`` (a table rebuilt from storage)."""
        offer: dict[str, Any] | None = None
        for n in notes:
            seat = n.data.get("seat")
            if n.kind == "rematch_offer" and isinstance(seat, int):
                offer = {"by": seat, "accepted": [seat]}
            elif n.kind == "rematch_accept" and offer is not None and isinstance(seat, int):
                offer["accepted"] = sorted({*offer["accepted"], seat})
            elif n.kind in ("rematch_decline", "rematch_started"):
                offer = None
        return offer

    def _players(self) -> list[int]:
        """The seats of people (whose answer a rematch needs)."""
        return [i for i, s in enumerate(self.seats) if s.kind == HUMAN and s.token_hash is not None]

    async def answer_rematch(self, conn: Connection, answer: str) -> None:
        """``answer``: ``offer`` (or accept the offer already made), ``accept`` or ``decline``. When
        every player accepted, the rematch starts with the same seats (each player's browser keeps
        its token: the new table's seat holds the same one)."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status != OVER:
                raise WebError(Code.NOT_OVER, "a rematch can be offered once the game is over")
            if self.rematch_id is not None:
                raise WebError(Code.NO_OFFER, "the rematch table is already made: join it")
            if self.seats[seat].kind != HUMAN:
                raise WebError(Code.NOT_SEATED, "an AI plays your seat: only players answer a rematch offer")
            name = self._name(seat)
            offer: dict[str, Any] | None
            if answer == "offer" and self.offer is None:
                offer, kind = {"by": seat, "accepted": [seat]}, "rematch_offer"
            elif self.offer is None:
                raise WebError(Code.NO_OFFER, "nobody offered a rematch")
            elif answer == "decline":
                offer, kind = None, "rematch_decline"
            else:
                offer = {**self.offer, "accepted": sorted({*self.offer["accepted"], seat})}
                kind = "rematch_accept"
            if not conn.chat_limiter.allow():  # offers and answers are stored notices, limited like chat
                raise WebError(Code.RATE_LIMITED, "you are writing too fast: wait a moment before the next message")
            note = self._note(kind, {"seat": seat, "name": name})
            await self._store_notes([note])
            self.offer = offer
            self._told([note])
            if self.offer is not None and set(self._players()) <= set(self.offer["accepted"]):
                await self._start_rematch()
            self.hub.publish(self.master.seq)

    async def _start_rematch(self) -> None:
        """Every player accepted (lock held): the new table, its seats taken by the same players."""
        request = {
            "game": self.game_name, "players": self.n_players,
            "options": {k: v for k, v in self.options.items() if k != "players" and k not in SERVER_ONLY_OPTIONS},
            "seats": [{"kind": AI, "level": s.level} if s.kind == AI else {"kind": OPEN} for s in self.seats],
            "unlisted": self.unlisted, **self.settings,
        }
        made, _, _ = await self.host.create(request, rematch_of=self.id)
        taken = {i: Seat(HUMAN, None, s.name, s.token_hash, s.account_id) for i, s in enumerate(self.seats)
                 if s.kind == HUMAN and s.token_hash is not None}
        async with made.master.lock:
            await made.master.start(taken)
        self.rematch_id = made.id
        note = self._note("rematch_started", {"table": made.id})
        await self.host.db(self.host.repo.set_rematch, self.id, made.id)
        await self.host.db(self.host.repo.add_notes, self.id, [note])
        self.offer = None
        self._told([note])
        self.announce()
        self.hub.push_all({"type": "rematch", "table": made.id, "together": True})

    # --- chat ------------------------------------------------------------------------------------------
    async def chat(self, conn: Connection, message: dict[str, Any]) -> None:
        """A chat line from ``conn``: a player's reaches everyone; a spectator's reaches everyone
        (chat ``shared``) or the spectators only (``separate``). Stored, then sent."""
        text = life.chat_text(message.get("text"))  # refused lines cost no chat allowance
        if not conn.chat_limiter.allow():
            raise WebError(Code.RATE_LIMITED, "you are writing too fast: wait a moment before the next message")
        if conn.seat is not None:
            seat: int | None = self.seat_of(conn)
            name = self._name(conn.seat)
            channel = life.ALL
        else:
            seat = None
            name = clean_name(message.get("name"), "Spectator")
            channel = life.ALL if self.settings["chat"] == "shared" else life.SPECTATORS
        note = self._note("chat", {"seat": seat, "name": name, "text": text}, channel)
        await self._store_notes([note])
        self._told([note])

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
                "notes": [n.to_json() for n in self.notes if n.kind != "chat"],
            }
        return self._replay

    async def close(self) -> None:
        self.master.clock.cancel()
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
        self._news.clear()
        tasks = [t for t in (self.ai_task, self._news_task, *self._tasks) if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.hub.close()


def _to_move_of(state: State) -> int | None:
    cp = state.current_player()
    return cp if cp >= 0 else None

