"""Tables in play: seats and tokens, the live position, connections, AI seats and clocks.

The server is generic over the engine protocol: positions go out as ``state.observation(seat)``
(``None`` for spectators), legal moves as canonical JSON, moves come back as canonical JSON.
Chance nodes are resolved here with a generator seeded per table *and per step*
(``Random(f"{seed}:{step}")``), so a table rebuilt from its stored actions after a restart goes
on drawing exactly as it would have.

Every accepted action (with the chance outcomes it leads to) is committed to storage before
the new position replaces the old one in memory and before anything is broadcast.

The move log is filtered per viewer, generically: an entry is shown to a viewer when the
viewer made it, when it changed nothing the viewer cannot see, or when no other legal action
would have shown the viewer the same position; otherwise it is sent as hidden and revealed as
soon as the viewer's observation hides nothing again (TRI: at the battle's reveal) or the game
is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import random
import re
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ludoteca.core.chance import sample_chance
from ludoteca.core.game import Action, Game, State
from ludoteca.core.records import Record
from ludoteca.core.visibility import UNIQUE_TEST_LIMIT, LogVisibility, hidden_part
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.ai import AIRunner, agent_seed, available_levels
from ludoteca.web.clock import TurnClock, clock_of
from ludoteca.web.limits import (
    MAX_SPECTATORS,
    RESUME_LIMIT,
    SERVER_ONLY_OPTIONS,
    WAITING_TTL,
    BadInput,
    check_options,
    check_stored_options,
    shown_id,
    valid_table_id,
)
from ludoteca.web.storage import AppendRequest, Conflict, Repository, SeatData, TableData

log = logging.getLogger("ludoteca.web")

WAITING, PLAYING, OVER, BROKEN, EXPIRED = "waiting", "playing", "over", "broken", "expired"
OPEN, HUMAN, AI = "open", "human", "ai"
MAX_NAME = 24
EXCLUDED_OPTIONS = SERVER_ONLY_OPTIONS
"""Options the web form may not set (EXAGON's ``tiles`` may name a file on the server)."""
CONNECTION_QUEUE = 256
REMATCH_HOLD = 120.0
"""Seconds a rematch keeps each previous player's seat for the holder of that player's token."""
STALL_AFTER = 300.0
"""Seconds without a move, with a human to move who is away, before the lobby shows 'stalled'."""
"""Messages waiting for a slow client before the server drops it."""

Viewer = int | None
_JOIN_KEY = re.compile(r"[A-Za-z0-9_-]{22,128}")


class WebError(Exception):
    """A request the server refuses: a short code, a readable message, an HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.headers = headers

    def to_json(self) -> dict[str, Any]:
        return {"type": "error", "code": self.code, "message": self.message}


def new_table_id() -> str:
    """A short random table id, letters and digits only (it goes into links)."""
    alphabet = "abcdefghijkmnopqrstuvwxyz23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def valid_join_key(key: Any) -> bool:
    return isinstance(key, str) and _JOIN_KEY.fullmatch(key) is not None


def clean_name(name: Any, default: str) -> str:
    if name is None:
        return default
    if not isinstance(name, str):
        raise WebError("bad_name", "a name is text")
    text = " ".join("".join(ch for ch in name if ch.isprintable()).split())
    if len(text) > MAX_NAME:
        raise WebError("bad_name", f"a name has at most {MAX_NAME} characters")
    return text or default


@functools.cache
def game_catalog() -> list[dict[str, Any]]:
    """The games whose engine is installed, with players and the options the web form may set."""
    out = []
    for name in GAMES:
        try:
            cls = game_class(name)
        except (ImportError, AttributeError):
            continue
        options = []
        for opt in cls.OPTIONS:
            if opt.name in EXCLUDED_OPTIONS:
                continue
            depends = callable(opt.default)
            options.append({"name": opt.name, "doc": opt.doc, "default": None if depends else opt.default,
                            "depends_on_players": depends})
        defaults = {}
        for n in range(cls.min_players, cls.max_players + 1):
            try:
                g = cls(players=n)
                defaults[str(n)] = {k: v for k, v in g.record_options().items()
                                    if k not in EXCLUDED_OPTIONS and k != "players"}
            except ValueError:
                continue
        out.append({"name": name, "title": cls.title, "min_players": cls.min_players,
                    "max_players": cls.max_players, "options": options, "defaults": defaults,
                    "doc": (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else cls.title})
    return out


class RateLimiter:
    """A token bucket: ``rate`` messages per second, bursts up to ``burst``."""

    def __init__(self, rate: float, burst: float, now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._now = rate, burst, now
        self.tokens = burst
        self.stamp = now()
        self.refused = 0

    def allow(self) -> bool:
        now = self._now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        self.refused += 1
        return False


class Connection:
    """One client (a websocket): who it sits as, and its queue of outgoing messages."""

    def __init__(self, rate: float = 20.0, burst: float = 40.0) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.seat: int | None = None
        self.token: str | None = None
        self.closed = False
        self.limiter = RateLimiter(rate, burst)
        self.last_error_at = 0.0
        self.close_code: int | None = None
        """The websocket close code when the server closes this connection (None: the usual one)."""

    def push(self, text: str) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= CONNECTION_QUEUE:
            log.warning("dropping a client that does not read its messages")
            self.close()
            return
        self.queue.put_nowait(text)

    def send_json(self, data: dict[str, Any]) -> None:
        self.push(json.dumps(data, separators=(",", ":")))

    def close(self, code: int | None = None) -> None:
        if not self.closed:
            self.closed = True
            self.close_code = code
            self.queue.put_nowait(None)


@dataclass
class Seat:
    kind: str
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None

    def data(self) -> SeatData:
        return SeatData(self.kind, self.level, self.name, self.token_hash)


class Table:
    """A game table: stored data, the live position and its connections."""

    def __init__(self, manager: TableManager, data: TableData) -> None:
        self.manager = manager
        self.id = data.id
        self.game_name = data.game
        self.options = data.options
        self.seed = data.seed
        self.status = data.status
        self.created_at = data.created_at
        self.result = data.result
        self.rematch_id = data.rematch_id
        self.rematch_of = data.rematch_of
        self.unlisted = data.unlisted
        self.last_move_at = data.action_times[-1] if data.action_times else data.updated_at
        """Wall-clock time of the last action, or of the last seat taken (the lobby's 'stalled')."""
        self.holds: dict[int, tuple[str, str | None, float]] = {}
        """Rematch seats kept for the previous game's players: seat -> (token hash, name, until)."""
        self.seats = [Seat(s.kind, s.level, s.name, s.token_hash) for s in data.seats]
        self._seats_sent: str | None = None
        self.game: Game = load_game(data.game, **data.options)
        self.state: State = self.game.new_initial_state()
        self.hidden_info = type(self.state).observation is not State.observation
        self.viewers: list[Viewer] = [*range(self.game.num_players), None]
        self.actions: list[dict[str, Any]] = []
        self.action_seats: list[int | None] = []
        self._visibility = LogVisibility(self.viewers, limit=UNIQUE_TEST_LIMIT)  # ludoteca.core.visibility
        self.log_hidden: dict[Viewer, set[int]] = self._visibility.hidden
        self._hp: dict[Viewer, list] = self._visibility.hp
        self._changed: dict[Viewer, int] = self._visibility.changed
        self.conns: set[Connection] = set()
        self.lock = asyncio.Lock()
        self.clock = TurnClock()
        self.ai_task: asyncio.Task | None = None
        self._tasks: set[asyncio.Task] = set()
        self._cache: dict[str, Any] = {}
        self._replay: dict[str, Any] | None = None
        if self.hidden_info:
            self._visibility.start(self.state)
        try:
            for seat, action in zip(data.action_seats, data.actions, strict=True):
                before = self.state.clone() if self.hidden_info else None
                parsed = self.state.action_from_json(action)
                self.state.apply_action(parsed)
                self._note(seat, action, parsed, before, self.state)
        except ValueError as exc:
            log.error("table %s does not replay: %s", self.id, exc)
            self.status = BROKEN
        if self.state.is_terminal():
            self._reveal_all()
        self._changed.clear()

    # --- reading ------------------------------------------------------------------------
    @property
    def n_players(self) -> int:
        return self.game.num_players

    def to_move(self) -> int | None:
        cp = self.state.current_player()
        return cp if cp >= 0 else None

    def public_seats(self) -> list[dict[str, Any]]:
        connected = {c.seat for c in self.conns if c.seat is not None}
        out = [
            {"seat": i, "kind": s.kind, "level": s.level, "name": s.name,
             "connected": s.kind == AI or i in connected}
            for i, s in enumerate(self.seats)
        ]
        for seat, (_, name, left) in self.active_holds().items():
            out[seat]["held_for"] = name or f"Player {seat + 1}"
            out[seat]["held_seconds"] = round(left, 1)
        return out

    def active_holds(self) -> dict[int, tuple[str, str | None, float]]:
        """Open seats still kept for a previous player: seat -> (token hash, name, seconds left)."""
        now = time.time()
        return {seat: (digest, name, until - now) for seat, (digest, name, until) in self.holds.items()
                if until > now and self.seats[seat].kind == OPEN}

    def hold_seats(self, previous: list[Seat] | list[SeatData], until: float) -> None:
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
        raise WebError("seat_held", f"seat {seat + 1} is kept for {name or f'Player {seat + 1}'}, who played it "
                                    f"in the previous game, for {max(1, round(left))} more seconds; "
                                    "take another seat or try again then", 409)

    def stall_info(self) -> dict[str, Any]:
        """``waiting_for``: the human to move, if away; ``idle``: seconds since the last move;
        ``stalled``: someone is waiting for an away player for ``stall_after`` seconds or more."""
        if self.status != PLAYING:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - self.last_move_at)
        to_move = self.to_move()
        away = None
        if to_move is not None and self.seats[to_move].kind == HUMAN \
                and not any(c.seat == to_move for c in self.conns):
            away = to_move
        stalled = away is not None and idle >= getattr(self.manager, "stall_after", STALL_AFTER)
        return {"stalled": stalled, "waiting_for": away, "idle": round(idle)}

    def summary(self) -> dict[str, Any]:
        return {
            "id": self.id, "game": self.game_name, "title": self.game.title, "players": self.n_players,
            "status": self.status, "seats": self.public_seats(), "n_actions": len(self.actions),
            "spectators": sum(1 for c in self.conns if c.seat is None), "result": self.result,
            "rematch": self.rematch_id, "rematch_of": self.rematch_of, "created_at": self.created_at,
            "unlisted": self.unlisted, **self.stall_info(),
        }

    def _observation(self, viewer: Viewer) -> dict[str, Any]:
        key = f"obs:{viewer}"
        if key not in self._cache:
            self._cache[key] = self.state.observation(viewer) if self.hidden_info else self._full()
        return self._cache[key]

    def _full(self) -> dict[str, Any]:
        if "full" not in self._cache:
            self._cache["full"] = self.state.to_json()
        return self._cache["full"]

    def _legal_json(self) -> list[dict[str, Any]]:
        if "legal" not in self._cache:
            self._cache["legal"] = [self.state.action_to_json(a) for a in self.state.legal_actions()]
        return self._cache["legal"]

    def clock_info(self) -> dict[str, Any] | None:
        remaining = self.clock.remaining() if self.status == PLAYING else None
        if remaining is None:
            return None
        return {"seat": self.to_move(), "remaining": round(remaining, 3)}

    def log_entry(self, i: int, viewer: Viewer) -> dict[str, Any]:
        seat = self.action_seats[i]
        if i in self.log_hidden[viewer]:
            keys = [k for k in self.actions[i] if k != "elapsed"]
            return {"i": i, "seat": seat, "hidden": True, "kind": keys[0] if keys else None}
        return {"i": i, "seat": seat, "action": self.actions[i]}

    def message(self, viewer: Viewer, log_from: int = 0, kind: str = "update") -> dict[str, Any]:
        to_move = self.to_move()
        seat_is_human = to_move is not None and self.seats[to_move].kind == HUMAN
        mine = self.status == PLAYING and viewer is not None and viewer == to_move and seat_is_human
        data: dict[str, Any] = {
            "type": kind, "table": self.id, "seq": len(self.actions), "status": self.status,
            "you": viewer, "to_move": to_move, "position": self._observation(viewer),
            "legal": self._legal_json() if mine else None,
            "seats": self.public_seats(), "clock": self.clock_info(), "result": self.result,
            "rematch": self.rematch_id, "log_from": log_from,
            "log": [self.log_entry(i, viewer) for i in range(log_from, len(self.actions))],
        }
        if kind == "snapshot":
            data["game"] = {"name": self.game_name, "title": self.game.title, "players": self.n_players,
                            "options": {k: v for k, v in self.options.items() if k not in EXCLUDED_OPTIONS}}
            data["rematch_of"] = self.rematch_of
        return data

    # --- log visibility -----------------------------------------------------------------
    def _hidden_now(self, viewer: Viewer, state: State | None = None) -> list:
        state = state or self.state
        return hidden_part(state.observation(viewer), state.to_json())

    def _note(self, seat: int | None, data: dict[str, Any], action: Action, before: State | None,
              after: State) -> None:
        """Append a log entry and work out who may see it (``before`` is the position it was played in)."""
        i = len(self.actions)
        self.actions.append(data)
        self.action_seats.append(seat)
        if not self.hidden_info or before is None:
            return
        self._visibility.note(i, seat, data, action, before, after)

    def _reveal_all(self) -> None:
        self._visibility.reveal_all()

    # --- connections --------------------------------------------------------------------
    def attach(self, conn: Connection) -> None:
        """A new connection gets a snapshot; the others hear of it only if it sits (``authenticate``)."""
        self.conns.add(conn)
        conn.send_json(self.message(conn.seat, 0, "snapshot"))
        if conn.seat is not None:
            self._broadcast_seats()

    def detach(self, conn: Connection) -> None:
        if conn in self.conns:
            self.conns.discard(conn)
            if conn.seat is not None:
                self._broadcast_seats()

    def authenticate(self, conn: Connection, token: Any) -> int:
        """Sit ``conn`` at the seat whose secret ``token`` it holds; WebError if none."""
        if not isinstance(token, str) or not token or len(token) > 200:
            raise WebError("bad_token", "this token does not belong to any seat of this table", 403)
        digest = hash_token(token)
        for i, seat in enumerate(self.seats):
            if seat.token_hash is not None and secrets.compare_digest(seat.token_hash, digest):
                conn.seat, conn.token = i, token
                conn.send_json(self.message(i, 0, "snapshot"))
                self._broadcast_seats()
                return i
        raise WebError("bad_token", "this token does not belong to any seat of this table", 403)

    def _seat_of(self, conn: Connection) -> int:
        """The seat ``conn`` may act for, checking its token again (every action)."""
        if conn.seat is None or conn.token is None:
            raise WebError("not_seated", "you are watching: join a seat to play", 403)
        seat = self.seats[conn.seat]
        if seat.token_hash is None or not secrets.compare_digest(seat.token_hash, hash_token(conn.token)):
            raise WebError("bad_token", "your seat token is not valid for this seat", 403)
        return conn.seat

    def spectators(self) -> int:
        """Connections watching without a seat."""
        return sum(1 for c in self.conns if c.seat is None)

    def _broadcast_seats(self) -> None:
        """Tell everyone the seats when they changed since the last time: a spectator arriving or
        leaving changes nothing, so a crowd costs one snapshot per newcomer, not a message to all."""
        text = json.dumps({"type": "seats", "seats": self.public_seats()}, separators=(",", ":"))
        if text == self._seats_sent:
            return
        self._seats_sent = text
        for c in self.conns:
            c.push(text)

    def broadcast(self, log_from: int) -> None:
        groups: dict[Viewer, list[Connection]] = {}
        for c in self.conns:
            groups.setdefault(c.seat, []).append(c)
        for viewer, conns in groups.items():
            start = min(log_from, self._changed.get(viewer, log_from))
            text = json.dumps(self.message(viewer, start), separators=(",", ":"))
            for c in conns:
                c.push(text)
        self._changed.clear()

    def push_all(self, data: dict[str, Any]) -> None:
        text = json.dumps(data, separators=(",", ":"))
        for c in self.conns:
            c.push(text)

    # --- seats --------------------------------------------------------------------------
    async def join(self, seat: Any, name: Any, claim: str | None = None, key: Any = None) -> str:
        """Take the open ``seat`` under ``name``; returns the seat's secret token.

        ``claim``: the hash of the token of the previous game's player a rematch seat is kept for.
        ``key``: a secret the client chose (22-128 letters, digits, ``-``, ``_``), which becomes
        the seat's token; sending the same join again with it answers the same token, so a join
        whose answer was lost can simply be retried."""
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.n_players:
            raise WebError("bad_seat", f"seats are numbered 0 to {self.n_players - 1}")
        if key is not None and not valid_join_key(key):
            raise WebError("bad_key", "a join key is 22 to 128 letters, digits, '-' or '_', chosen at random")
        name = clean_name(name, f"Player {seat + 1}")
        async with self.lock:
            held = self.seats[seat].token_hash
            if key is not None and held is not None and secrets.compare_digest(held, hash_token(key)):
                return key  # this very join again: same seat, same token
            if self.status == EXPIRED:
                raise WebError("expired", "this table expired: nobody joined it in time", 409)
            if self.seats[seat].kind != OPEN:
                raise WebError("seat_taken", f"seat {seat + 1} is already taken", 409)
            self._check_hold(seat, claim)
            token = key if key is not None else secrets.token_urlsafe(24)
            taken = {seat: Seat(HUMAN, None, name, hash_token(token))}
            if self.status == WAITING and all(s.kind != OPEN for i, s in enumerate(self.seats) if i != seat):
                await self._start(taken)  # the last seat and the game's start: one transaction
            else:
                await self._commit([], self.state, seats=taken, expect_status=self.status)
            return token

    async def _start(self, seats: dict[int, Seat] | None = None) -> None:
        """All seats are taken (``seats`` in this same transaction): resolve the opening chance
        nodes and begin (lock held)."""
        work = self.state.clone()
        steps = self._chance_steps(work, len(self.actions))
        await self._commit(steps, work, status=PLAYING, seats=seats, expect_status=WAITING)

    # --- playing ------------------------------------------------------------------------
    def _rng(self, seq: int) -> random.Random:
        return random.Random(f"{self.seed}:{seq}")

    def _chance_steps(self, work: State, seq: int) -> list[tuple]:
        steps = []
        while work.is_chance_node():
            action = sample_chance(work, self._rng(seq + len(steps)))
            data = work.action_to_json(action)
            before = work.clone() if self.hidden_info else None
            work.apply_action(action)
            steps.append((None, data, action, before))
        return steps

    async def submit(self, conn: Connection, message: dict[str, Any]) -> None:
        """A player's move from ``conn``: checked, committed, broadcast; WebError otherwise."""
        data = message.get("action")
        if not isinstance(data, dict):
            raise WebError("bad_message", "an action message needs an 'action' object")
        seq = message.get("seq")
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int)):
            raise WebError("bad_message", "'seq' is the number of actions you have seen")
        async with self.lock:
            if self.status != PLAYING:
                raise WebError("not_playing", "the game has not started" if self.status == WAITING
                               else "the game is over" if self.status == OVER else "this table cannot be played")
            seat = self._seat_of(conn)
            to_move = self.to_move()
            if to_move != seat:
                who = self.seats[to_move].name if to_move is not None else "nobody"
                raise WebError("not_your_turn", f"it is not your turn: {who} is to move")
            if seq is not None and seq != len(self.actions):
                raise WebError("stale", "the position changed before your move arrived; it was not played")
            clean = {k: v for k, v in data.items() if k != "elapsed"}
            try:
                action = self.state.action_from_json(clean)
            except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
                raise WebError("illegal", f"not an action: {exc}") from None
            if action not in self.state.legal_actions():
                raise WebError("illegal", self.state.illegal_message(action))
            await self._play(seat, action)

    async def _play(self, seat: int, action: Action) -> None:
        """Apply ``action`` for ``seat`` with the chance that follows, commit, publish (lock held)."""
        state = self.state
        data = state.action_to_json(action)
        if self.clock.time_left is not None and not data.get("timeout"):
            elapsed = self.clock.elapsed()
            if elapsed > self.clock.time_left:
                await self._apply_timeout()
                raise WebError("timeout", "the hourglass ran out before your move arrived")
            data = {**data, "elapsed": elapsed}
            action = state.action_from_json(data)
        work = state.clone()
        before = state.clone() if self.hidden_info else None
        try:
            work.apply_action(action)
        except ValueError as exc:
            raise WebError("illegal", str(exc)) from None
        steps = [(seat, data, action, before)]
        steps += self._chance_steps(work, len(self.actions) + 1)
        await self._commit(steps, work)

    async def _commit(self, steps: list[tuple], work: State, status: str | None = None,
                      seats: dict[int, Seat] | None = None, expect_status: str | None = None) -> None:
        """Store ``steps`` and the open ``seats`` taken in one transaction, then make ``work`` the
        position and publish it (lock held). When storing fails nothing changes in memory, so
        the same request can simply be sent again."""
        status = status or self.status
        seats = seats or {}
        result = None
        if work.is_terminal():
            status = OVER
            returns = work.returns()
            result = {"returns": returns, "winners": [i for i, r in enumerate(returns) if r > 0]}
        first = len(self.actions)
        if steps or seats or status != self.status:
            try:
                await self.manager.append(AppendRequest(
                    self.id, first, [(s[0], s[1]) for s in steps], status if status != self.status else None,
                    result, [(i, seat.data()) for i, seat in sorted(seats.items())], expect_status))
            except WebError:
                raise
            except Conflict as exc:
                raise WebError("conflict", f"the table changed meanwhile and nothing was saved: {exc}", 409) from None
            except Exception as exc:  # storage failure: nothing changes in memory
                log.exception("table %s: cannot store actions", self.id)
                what = "your seat" if seats else "the move"
                raise WebError("storage", f"{what} could not be saved; try again", 503) from exc
        for i, seat in seats.items():
            self.seats[i] = seat
        for k, (seat, data, action, before) in enumerate(steps):
            after = steps[k + 1][3] if k + 1 < len(steps) else work
            self._note(seat, data, action, before, after if after is not None else work)
        self.state = work
        self.status = status
        self.last_move_at = time.time()
        if result is not None:
            self.result = result
            self._reveal_all()
        self._cache.clear()
        self._after_change()
        self.broadcast(first)

    def _after_change(self) -> None:
        """Restart the hourglass and wake an AI seat for the new position."""
        self.clock.cancel()
        if self.status != PLAYING:
            self.clock.restart(None)
            return
        self.clock.restart(clock_of(self._full()))
        if self.clock.time_left is not None:
            self.clock.arm(self._on_clock)
        self.schedule_ai()

    def resume(self) -> None:
        """After loading from storage: restart the clock from now and wake AI seats."""
        if self.status == PLAYING:
            self._after_change()

    def _on_clock(self) -> None:
        if not self.manager.closing:
            self._spawn(self._timeout())

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _timeout(self) -> None:
        async with self.lock:
            if self.status != PLAYING or self.clock.time_left is None:
                return
            if not self.clock.expired():
                self.clock.arm(self._on_clock)
                return
            try:
                await self._apply_timeout()
            except WebError as exc:
                log.warning("table %s: timeout not applied: %s", self.id, exc.message)

    async def _apply_timeout(self) -> None:
        seat = self.to_move()
        action = self.state.action_from_json({"timeout": True})
        work = self.state.clone()
        before = self.state.clone() if self.hidden_info else None
        work.apply_action(action)
        steps = [(seat, {"timeout": True}, action, before)]
        steps += self._chance_steps(work, len(self.actions) + 1)
        await self._commit(steps, work)

    def schedule_ai(self) -> None:
        if self.manager.closing:
            return
        to_move = self.to_move()
        if self.status != PLAYING or to_move is None or self.seats[to_move].kind != AI:
            return
        if self.ai_task is not None and not self.ai_task.done():
            return
        self.ai_task = asyncio.ensure_future(self._ai_move(len(self.actions)))

    async def _ai_move(self, seq: int) -> None:
        delay = self.manager.ai_delay
        if delay > 0:
            await asyncio.sleep(delay)
        seat = self.to_move()
        if seq != len(self.actions) or self.status != PLAYING or seat is None:
            self.ai_task = None
            return
        level = self.seats[seat].level or "random"
        try:
            data = await self.manager.ai.choose(
                self.id, self.game_name, self.options, self.state.clone(), self.actions, level,
                agent_seed(self.seed, seq, seat), interactive=any(s.kind == HUMAN for s in self.seats))
        except Exception:
            log.exception("table %s: the %s AI failed; it plays a random move", self.id, level)
            legal = self.state.legal_actions()
            data = self.state.action_to_json(legal[random.Random(seq).randrange(len(legal))])
        async with self.lock:
            self.ai_task = None
            if seq != len(self.actions) or self.status != PLAYING:
                self.schedule_ai()
                return
            try:
                action = self.state.action_from_json(data)
                await self._play(seat, action)
            except (WebError, ValueError) as exc:
                log.warning("table %s: AI move %s refused: %s", self.id, data, exc)
                self.schedule_ai()

    # --- replays ------------------------------------------------------------------------
    def record(self) -> Record:
        rec = Record(game=self.game_name, options=dict(self.options), actions=list(self.actions))
        rec.meta = {"table": self.id, "players": [s.name for s in self.seats], "result": self.result}
        return rec

    def replay_data(self) -> dict[str, Any]:
        if self._replay is None:
            state = self.game.new_initial_state()
            positions = [state.to_json()]
            to_move = [self._to_move_of(state)]
            for data in self.actions:
                state.apply_action(state.action_from_json(data))
                positions.append(state.to_json())
                to_move.append(self._to_move_of(state))
            self._replay = {
                "table": self.id, "game": {"name": self.game_name, "title": self.game.title,
                                           "players": self.n_players},
                "seats": self.public_seats(), "result": self.result, "actions": self.actions,
                "action_seats": self.action_seats, "positions": positions, "to_move": to_move,
            }
        return self._replay

    @staticmethod
    def _to_move_of(state: State) -> int | None:
        cp = state.current_player()
        return cp if cp >= 0 else None

    async def close(self) -> None:
        self.clock.cancel()
        tasks = [t for t in (self.ai_task, *self._tasks) if t is not None and not t.done()]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        for c in list(self.conns):
            c.close()


class TableManager:
    """All tables: creation, loading from storage, the AI runner and the storage thread."""

    rematch_hold: float = REMATCH_HOLD
    stall_after: float = STALL_AFTER

    def __init__(self, repo: Repository, ai_delay: float = 0.6, ai_workers: int = 1,
                 ai_specs: dict[str, str] | None = None, max_spectators: int = MAX_SPECTATORS,
                 waiting_ttl: float = WAITING_TTL, resume_limit: int = RESUME_LIMIT) -> None:
        from concurrent.futures import ThreadPoolExecutor

        self.repo = repo
        self.ai_delay = ai_delay
        self.ai = AIRunner(ai_workers, ai_specs)
        self.max_spectators = max_spectators
        self.waiting_ttl = waiting_ttl
        self.resume_limit = resume_limit
        self.tables: dict[str, Table] = {}
        self._loading: dict[str, asyncio.Future] = {}
        self._db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-db")
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ludoteca-build")
        """Builds games and tables (replaying their actions) off the event loop."""
        self._expirer: asyncio.Future | None = None
        self._levels: list[str] | None = None
        self.closing = False
        self.inline_storage = repo.dialect == "sqlite"
        self._checkpointer: asyncio.Future | None = None
        self.timings: deque[float] = deque(maxlen=20_000)
        """Seconds each recent player action took from arrival to broadcast (``/api/stats``)."""
        self._pending: list[tuple[AppendRequest, asyncio.Future]] = []
        self._draining = False
        self._drainer: asyncio.Future | None = None

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a storage call. SQLite calls run inline: a local commit takes a fraction of a
        millisecond, and running it on the event loop avoids handing the GIL back and forth with
        a storage thread (which made tail latencies much worse under load). Other databases
        (PostgreSQL: a network round trip and an fsync) run in the storage thread."""
        if self.closing:
            raise WebError("closing", "the server is shutting down", 503)
        if self.inline_storage:
            return fn(*args)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._db, lambda: fn(*args))

    async def append(self, request: AppendRequest) -> None:
        """Store one table's new actions. Requests that arrive while a commit is running are
        committed together in the next transaction (group commit); if that transaction fails,
        each request is retried alone so that one table's failure never loses another's move."""
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending.append((request, fut))
        if not self._draining:
            self._draining = True
            self._drainer = asyncio.ensure_future(self._drain())
        await fut

    async def _drain(self) -> None:
        try:
            await asyncio.sleep(0)  # let the actions that arrived in this loop turn join the batch
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await self.db(self.repo.append_batch, [req for req, _ in batch])
                    for _, fut in batch:
                        if not fut.done():
                            fut.set_result(None)
                except Exception:
                    for req, fut in batch:
                        try:
                            await self.db(self.repo.append_batch, [req])
                            if not fut.done():
                                fut.set_result(None)
                        except Exception as exc:
                            if not fut.done():
                                fut.set_exception(exc)
        finally:
            self._draining = False

    def levels(self) -> list[str]:
        if self._levels is None:
            self._levels = available_levels()
        return self._levels

    async def _checkpoints(self, every: float = 2.0) -> None:
        """SQLite: checkpoint the write-ahead log in the storage thread, off the event loop."""
        loop = asyncio.get_running_loop()
        while not self.closing:
            await asyncio.sleep(every)
            try:
                await loop.run_in_executor(self._db, self.repo.checkpoint)
            except Exception:  # a busy database: try again later
                log.debug("checkpoint skipped", exc_info=True)

    async def build(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run costly work (building a game, replaying a table) in the build thread."""
        if self.closing:
            raise WebError("closing", "the server is shutting down", 503)
        return await asyncio.get_running_loop().run_in_executor(self._builder, lambda: fn(*args))

    async def start(self) -> None:
        """Expire old waiting tables, then rebuild the tables in play (at most ``resume_limit``,
        the most recently active; any other is rebuilt when someone opens it) and the waiting
        tables whose seats are all taken (their start was never stored), and let them go on."""
        if self.repo.dialect == "sqlite":
            self._checkpointer = asyncio.ensure_future(self._checkpoints())
        await self.expire_waiting()
        ids = await self.db(self.repo.table_ids, (PLAYING,), self.resume_limit)
        ids += await self.db(self.repo.full_waiting_ids, self.resume_limit)
        for table_id in ids:
            try:
                table = await self.get(table_id)
                if table is not None and table.status == PLAYING and table.state.is_chance_node():
                    async with table.lock:
                        await table._start()
            except WebError as exc:
                log.error("table %s not resumed: %s", table_id, exc.message)
        if self.waiting_ttl > 0:
            self._expirer = asyncio.ensure_future(self._expire_loop())
        log.info("%d tables resumed", len(ids))

    async def expire_waiting(self) -> list[str]:
        """Mark the waiting tables nobody joined for ``waiting_ttl`` seconds as expired: the lobby
        stops listing them and nobody can join them any more."""
        if self.waiting_ttl <= 0:
            return []
        ids = await self.db(self.repo.expire_waiting, time.time() - self.waiting_ttl, EXPIRED)
        for table_id in ids:
            table = self.tables.get(table_id)
            if table is not None and table.status == WAITING:
                table.status = EXPIRED
                table._cache.clear()
                table.broadcast(len(table.actions))
        if ids:
            log.info("%d waiting tables expired", len(ids))
        return ids

    async def _expire_loop(self) -> None:
        every = max(1.0, min(60.0, self.waiting_ttl / 4))
        while not self.closing:
            await asyncio.sleep(every)
            try:
                await self.expire_waiting()
            except Exception:
                log.warning("expiring waiting tables failed", exc_info=True)

    async def stop(self) -> None:
        self.closing = True
        for task in (self._checkpointer, self._expirer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        for table in list(self.tables.values()):
            await table.close()
        self.ai.close()
        self._builder.shutdown(wait=True, cancel_futures=True)
        self._db.shutdown(wait=True)
        with contextlib.suppress(Exception):
            self.repo.checkpoint()
        self.repo.close()

    async def get(self, table_id: str) -> Table | None:
        """The table ``table_id`` (loaded from storage if need be), or None. An id not of the
        form of a table id is never looked up."""
        if not valid_table_id(table_id):
            return None
        if table_id in self.tables:
            return self.tables[table_id]
        if table_id in self._loading:
            return await self._loading[table_id]
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._loading[table_id] = fut
        try:
            data = await self.db(self.repo.load_table, table_id)
            table = None
            if data is not None:
                table = await self._rebuild(data)
            if table is not None:
                await self._restore_holds(table)
                self.tables[table_id] = table
                self._evict()
                table.resume()
                if table.status == WAITING and all(s.kind != OPEN for s in table.seats):
                    async with table.lock:  # every seat taken, the start never stored
                        await table._start()
            fut.set_result(table)
            return table
        except BaseException as exc:
            fut.set_exception(exc)
            raise
        finally:
            self._loading.pop(table_id, None)
            if not fut.done():
                fut.cancel()
            elif fut.exception() is not None:
                fut.exception()  # retrieved: no "never retrieved" warning

    async def _rebuild(self, data: TableData) -> Table | None:
        """A stored table, rebuilt in the build thread; None (and marked broken) when its options
        are out of bounds or its game cannot be built."""
        try:
            check_stored_options(data.options)
            return await self.build(Table, self, data)
        except (BadInput, ValueError, TypeError, KeyError) as exc:
            log.error("table %s cannot be rebuilt: %s", data.id, exc)
            with contextlib.suppress(Exception):
                await self.db(self.repo.set_status, data.id, BROKEN)
            return None

    async def _restore_holds(self, table: Table) -> None:
        """A rematch loaded from storage keeps its previous players' seats as when it was created."""
        until = table.created_at + self.rematch_hold
        if table.rematch_of is None or table.status != WAITING or until <= time.time():
            return
        previous = self.tables.get(table.rematch_of)
        seats = previous.seats if previous is not None else await self.db(self.repo.seats_of, table.rematch_of)
        table.hold_seats(seats, until)

    def _evict(self, keep: int = 500) -> None:
        """Forget finished (or expired) tables nobody watches when too many are in memory."""
        idle = [t for t in self.tables.values() if t.status in (OVER, BROKEN, EXPIRED) and not t.conns]
        excess = len(self.tables) - keep
        for t in idle[:max(0, excess)]:
            self.tables.pop(t.id, None)

    async def create(self, request: dict[str, Any],
                     rematch_of: str | None = None) -> tuple[Table, int | None, str | None]:
        """A new table from a lobby request; returns (table, seat, token) — the creator's seat if asked."""
        if not isinstance(request, dict):
            raise WebError("bad_request", "a table request is a JSON object")
        name = request.get("game")
        if not isinstance(name, str) or name.lower() not in GAMES:
            raise WebError("bad_game", f"unknown game {shown_id(name)}; the games are: {', '.join(GAMES)}")
        name = name.lower()
        try:
            cls = game_class(name)
        except (ImportError, AttributeError):
            raise WebError("bad_game", f"{name} is not available on this server yet") from None
        players = request.get("players", cls.min_players)
        if isinstance(players, bool) or not isinstance(players, int):
            raise WebError("bad_players", "players is a whole number")
        if not cls.min_players <= players <= cls.max_players:
            raise WebError("bad_players", f"{name} is played by {cls.min_players} to {cls.max_players} players")
        options = request.get("options") or {}
        try:  # the web's bounds first: nothing is built from options out of them
            check_options(name, options, {o.name: o.default for o in cls.OPTIONS})
        except BadInput as exc:
            raise WebError(exc.code, exc.message) from None
        try:
            game = await self.build(functools.partial(load_game, name, players=players, **options))
        except ValueError as exc:
            raise WebError("bad_options", str(exc)) from None
        seats_req = request.get("seats")
        if seats_req is None:
            seats_req = [{"kind": OPEN}] * players
        if not isinstance(seats_req, list) or len(seats_req) != players:
            raise WebError("bad_seats", f"give one seat description per player ({players})")
        seats: list[Seat] = []
        for i, s in enumerate(seats_req):
            kind = s.get("kind") if isinstance(s, dict) else None
            if kind == OPEN:
                seats.append(Seat(OPEN))
            elif kind == AI:
                level = s.get("level", "random")
                if not isinstance(level, str) or level not in self.levels():
                    raise WebError("bad_seats", f"seat {i + 1}: AI level {shown_id(level)} is not one of "
                                                f"{', '.join(self.levels())}")
                seats.append(Seat(AI, level, f"AI {i + 1} ({level})"))
            else:
                raise WebError("bad_seats", f"seat {i + 1}: kind is 'open' or 'ai'")
        unlisted = request.get("unlisted", False)
        if not isinstance(unlisted, bool):
            raise WebError("bad_unlisted", "'unlisted' is true (only people with the link find the table) or false")
        sit = request.get("sit")
        token = None
        if sit is not None:
            if isinstance(sit, bool) or not isinstance(sit, int) or not 0 <= sit < players or seats[sit].kind != OPEN:
                raise WebError("bad_seat", "'sit' must name an open seat")
            token = secrets.token_urlsafe(24)
            seats[sit] = Seat(HUMAN, None, clean_name(request.get("name"), f"Player {sit + 1}"), hash_token(token))
        now = time.time()
        data = TableData(
            id=new_table_id(), game=name, options=game.record_options(),
            seed=secrets.randbits(62), status=WAITING, created_at=now, updated_at=now,
            seats=[s.data() for s in seats], rematch_of=rematch_of, unlisted=unlisted,
        )
        try:
            json.dumps(data.options)
        except (TypeError, ValueError):
            raise WebError("bad_options", "these options cannot be stored") from None
        await self.db(self.repo.create_table, data)
        table = await self.build(Table, self, data)
        self.tables[table.id] = table
        if all(s.kind != OPEN for s in table.seats):
            async with table.lock:
                await table._start()
        return table, sit, token

    async def rematch(self, table: Table, token: Any) -> tuple[Table, int | None, str | None]:
        """The table's rematch (created on first request); a seated player keeps their seat."""
        async with table.lock:
            if table.status != OVER:
                raise WebError("not_over", "a rematch can be asked for once the game is over", 409)
            if table.rematch_id is None:
                request = {
                    "game": table.game_name, "players": table.n_players,
                    "options": {k: v for k, v in table.options.items()
                                if k != "players" and k not in EXCLUDED_OPTIONS},
                    "seats": [{"kind": AI, "level": s.level} if s.kind == AI else {"kind": OPEN}
                              for s in table.seats],
                    "unlisted": table.unlisted,
                }
                new, _, _ = await self.create(request, rematch_of=table.id)
                new.hold_seats(table.seats, new.created_at + self.rematch_hold)
                table.rematch_id = new.id
                await self.db(self.repo.set_rematch, table.id, new.id)
                table._cache.clear()
                table.push_all({"type": "rematch", "table": new.id})
        new = await self.get(table.rematch_id)
        if new is None:
            raise WebError("not_found", "the rematch table is gone", 404)
        seat = None
        digest = None
        if isinstance(token, str) and token:
            digest = hash_token(token)
            for i, s in enumerate(table.seats):
                if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest):
                    seat = i
        if seat is not None and new.seats[seat].kind == OPEN:
            new_token = await new.join(seat, table.seats[seat].name, claim=digest)
            return new, seat, new_token
        return new, None, None

    async def list_tables(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = await self.db(self.repo.list_tables, limit, (WAITING, PLAYING, OVER, BROKEN))  # not expired
        out = []
        for row in rows:
            live = self.tables.get(row["id"])
            if live is not None:
                out.append(live.summary())
            else:
                try:
                    title = game_class(row["game"]).title
                except (ImportError, AttributeError, ValueError):
                    title = row["game"]
                out.append({**row, "title": title, "players": len(row["seats"]), "spectators": 0,
                            "rematch": None, "unlisted": False, **self._stall_of_row(row)})
        return out

    def _stall_of_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """``stall_info`` of a table not in memory: nobody is connected to it, so a game in play is
        stalled once ``stall_after`` seconds passed since it last changed (who is to move is unknown)."""
        if row.get("status") != PLAYING:
            return {"stalled": False, "waiting_for": None, "idle": None}
        idle = max(0.0, time.time() - float(row.get("updated_at") or 0.0))
        return {"stalled": idle >= self.stall_after, "waiting_for": None, "idle": round(idle)}

