"""A table in play: its master (the position), its hub (the connections), seats and AI seats.

:class:`Table` joins the parts of one table: the :class:`~ludoteca.web.master.Master` that owns
the position and commits every change, the :class:`~ludoteca.web.hub.Hub` that sends each
viewer what they may see, the seats with their secret tokens (and the seats a rematch keeps for
the previous players), the hourglass's timer and the AI seats. The lobby (lobby.py) creates,
loads and lists tables.
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
from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from ludoteca.core.game import Game, State
from ludoteca.core.records import Record
from ludoteca.registry import load_game
from ludoteca.web.ai import AIRunner, agent_seed
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub import Connection, Hub, Viewer
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import (
    AI,
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
from ludoteca.web.repository import SeatData, TableData

log = logging.getLogger("ludoteca.web")

MAX_NAME = 24
STALL_AFTER = 300.0
"""Seconds without a move, with a human to move who is away, before the lobby shows 'stalled'."""
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
        raise WebError(Code.BAD_NAME, f"a name has at most {MAX_NAME} characters")
    return text or default


class Host(Protocol):
    """What a table needs from the server around it (the lobby)."""

    closing: bool
    ai_delay: float
    ai: AIRunner
    stall_after: float
    committer: Store


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
        seats = [Seat(s.kind, s.level, s.name, s.token_hash) for s in data.seats]
        self.master = Master(data.id, self.game, data.seed, seats, data.status, host.committer, self,
                             actions=data.actions, action_seats=data.action_seats)
        if data.result is not None and self.master.result is None:
            self.master.result = data.result
        self.master.last_move_at = data.action_times[-1] if data.action_times else data.updated_at
        self.ai_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._replay: dict[str, Any] | None = None

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
                "rematch": self.rematch_id}

    def legal_for(self, viewer: Viewer) -> list[dict[str, Any]] | None:
        to_move = self.to_move()
        mine = (self.status == PLAYING and viewer is not None and viewer == to_move
                and self.seats[to_move].kind == HUMAN)
        return self.legal_json() if mine else None

    def snapshot_extra(self) -> dict[str, Any]:
        return {"game": {"name": self.game_name, "title": self.game.title, "players": self.n_players,
                         "options": {k: v for k, v in self.options.items() if k not in SERVER_ONLY_OPTIONS}},
                "rematch_of": self.rematch_of}

    def public_seats(self) -> list[dict[str, Any]]:
        connected = self.hub.connected_seats()
        out: list[dict[str, Any]] = [{"seat": i, "kind": s.kind, "level": s.level, "name": s.name,
                "connected": s.kind == AI or i in connected}
               for i, s in enumerate(self.seats)]
        for seat, (_, name, left) in self.active_holds().items():
            out[seat]["held_for"] = name or f"Player {seat + 1}"
            out[seat]["held_seconds"] = round(left, 1)
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
        raise WebError(Code.SEAT_HELD, f"seat {seat + 1} is kept for {name or f'Player {seat + 1}'}, who played "
                                       f"it in the previous game, for {max(1, round(left))} more seconds; "
                                       "take another seat or try again then")

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
            "unlisted": self.unlisted, **self.stall_info(),
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
    async def join(self, seat: Any, name: Any, claim: str | None = None, key: Any = None) -> str:
        """Take the open ``seat`` under ``name``; returns the seat's secret token.

        ``claim``: the hash of the token of the previous game's player a rematch seat is kept for.
        ``key``: a secret the client chose (22-128 letters, digits, ``-``, ``_``), which becomes
        the seat's token; sending the same join again with it answers the same token, so a join
        whose answer was lost can simply be retried."""
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_players:
            raise WebError(Code.BAD_SEAT, f"seats are numbered 0 to {self.n_players - 1}")
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
                raise WebError(Code.SEAT_TAKEN, f"seat {seat + 1} is already taken")
            self._check_hold(seat, claim)
            token = key if key is not None else secrets.token_urlsafe(24)
            taken = {seat: Seat(HUMAN, None, name, hash_token(token))}
            if self.status == WAITING and all(s.kind != OPEN for i, s in enumerate(self.seats) if i != seat):
                await self.master.start(taken)  # the last seat and the game's start: one transaction
            else:
                await self.master.take_seats(taken)
            return token

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
        """The master committed a change: tell the viewers, restart the hourglass, wake an AI."""
        self._legal = None
        self.hub.publish(log_from, everything)
        self._after_change()

    def _after_change(self) -> None:
        clock = self.master.clock
        clock.cancel()
        if self.status == PLAYING and not self.host.closing:
            clock.arm(self._on_clock)  # nothing when no hourglass runs
        self.schedule_ai()

    def resume(self) -> None:
        """After loading from storage: restart the clock from now and wake AI seats."""
        if self.status == PLAYING:
            self.master.clock.restart(self.state.time_left())
            self._after_change()

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
        if self.host.closing:
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
            if not await self.master.play(seat, action, seq):
                self.schedule_ai()
        except WebError as exc:
            log.warning("table %s: AI move %s refused: %s", self.id, action, exc.message)
            self.schedule_ai()

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
            }
        return self._replay

    async def close(self) -> None:
        self.master.clock.cancel()
        tasks = [t for t in (self.ai_task, *self._tasks) if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.hub.close()


def _to_move_of(state: State) -> int | None:
    cp = state.current_player()
    return cp if cp >= 0 else None

