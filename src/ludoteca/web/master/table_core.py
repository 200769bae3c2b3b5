"""What every part of a table reads: its state, the server around it, seat tokens, stored notices.

:class:`TableCore` declares the state of a table once (``Table.__init__`` in tables.py sets it) and
holds the small steps the other parts share: reading the position and seats, telling the other
workers of a change, running a background task, and a change of seats, status or result stored
with its notices before it is sent (docs/web.md, "Table life").
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ludoteca.core.game import Game, State
from ludoteca.web.accounts.moderation import apply_removals
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Hub
from ludoteca.web.master import life
from ludoteca.web.master.ai import AIRunner
from ludoteca.web.master.master import OVER, Master, Seat, Store
from ludoteca.web.repository.store import NoteData, Repository

log = logging.getLogger("ludoteca.web")

MAX_NAME = 24
STALL_AFTER = 300.0
"""Seconds without a move, with a human to move who is away, before the lobby shows 'stalled'."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


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

    def claim(self, table: TableCore) -> None: ...

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

    async def create(self, request: Any, rematch_of: str | None = None) -> tuple[TableCore, int | None, str | None]: ...


class TableCore:
    """The state of a table (set by ``Table.__init__``) and the steps its parts share."""

    host: Host
    id: str
    game_name: str
    options: dict[str, Any]
    created_at: float
    rematch_id: str | None
    rematch_of: str | None
    unlisted: bool
    holds: dict[int, tuple[str, str | None, float]]
    """Rematch seats kept for the previous game's players: seat -> (token hash, name, until)."""
    game: Game
    _hidden: bool
    hub: Hub
    _legal: list[dict[str, Any]] | None
    """The legal actions as JSON, computed once per position (cleared by every change)."""
    master: Master
    note_id: int
    """The newest stored note this table has read (several workers: catching up reads the next)."""
    ai_task: asyncio.Task[None] | None
    bus_handler: Any
    """Several workers: this table's handler of the bus (cluster.py)."""
    _news: deque[dict[str, Any]]
    """Several workers: the other workers' messages not yet taken in, in order (``hear``)."""
    _news_task: asyncio.Task[None] | None
    used_at: float
    """When the table was last asked for (``Lobby.get``): several workers unload a table idle here."""
    news_applied: int
    """Messages of other workers taken in from their own content (no database read)."""
    news_read: int
    """Messages of other workers that needed a database read (a gap, a change around the game)."""
    _tasks: set[asyncio.Task[Any]]
    _replay: dict[str, Any] | None
    # --- the table's life ---
    settings: dict[str, Any]
    notes: deque[NoteData]
    playing_since: float
    """When the game began (abandoned seats count from then at the earliest)."""
    away: dict[int, float]
    """Human seats without a connection: seat -> since when (epoch seconds). A seat whose stored
    ``away_since`` is empty was connected when the server stopped: it counts from the load."""
    _abandon_timer: asyncio.TimerHandle | None
    _was_playing: bool
    offer: dict[str, Any] | None
    """The rematch offer pending: ``{"by": seat, "accepted": [seats]}``, or None."""

    # --- reading the position and the seats -------------------------------------------------------
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

    # --- shared steps ----------------------------------------------------------------------------------
    def announce(self, **body: Any) -> None:
        """Several workers: tell the others that this table changed (they read it from the database)."""
        if self.host.cluster is not None:
            self.host.cluster.announce(self.id, self.master.seq, body)

    def runs_timers(self) -> bool:
        """Whether this worker runs the table's AI seats, hourglass and abandon timers: always with
        one worker; with several, only the holder of the table's lease (cluster.py)."""
        return self.host.cluster is None or self.host.cluster.holds(self.id)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def tell_presence(self) -> None:
        self.announce(presence=sorted(self.hub.local_seats()))

    def easiest_level(self) -> str:
        levels = self.host.levels()
        return levels[0] if levels else "random"

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

    # --- stored notices and changes ----------------------------------------------------------------------
    def _name(self, seat: int) -> str:
        return self.seats[seat].name or f"Player {seat + 1}"

    def _note(self, kind: str, data: dict[str, Any], channel: str = life.ALL) -> NoteData:
        return NoteData(kind, channel, self.master.seq, data, time.time())

    def _told(self, notes: Sequence[NoteData]) -> None:
        """Stored notes: kept with the table and sent to whoever may read them."""
        apply_removals(self.notes, notes)
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
