"""What the repository reads and writes, as plain data (web/repository/store.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ludoteca.web.repository.schema import NOTES_LOADED

__all__ = ["NOTES_LOADED", "AccountData", "AppendRequest", "Conflict", "DuplicateName", "NoteData", "SeatData",
           "SessionData", "TableData", "TableDelta"]


@dataclass
class SeatData:
    kind: str  # "open", "human" or "ai"
    level: str | None = None
    name: str | None = None
    token_hash: str | None = None
    away_since: float | None = None
    """Since when (epoch seconds) the seat's player has had no connection, when stored (tables.py)."""
    account_id: int | None = None
    """The account of the logged-in player who took the seat (None: a typed name, an AI, open)."""


@dataclass
class AccountData:
    """One stored account (``ludo_accounts``)."""

    id: int
    name: str
    created_at: float
    password_hash: str
    role: str | None = None
    """``admin`` for a moderator, else None."""
    suspended_at: float | None = None
    """When a moderator suspended the account (None: active)."""


@dataclass
class SessionData:
    """One stored login session with its account."""

    account: AccountData
    csrf: str
    expires_at: float


class DuplicateName(Exception):
    """:meth:`Repository.create_account`: an account with that name (whatever its case) exists."""


@dataclass
class NoteData:
    """A chat line or a notice of a table (stored in ``ludo_notes``)."""

    kind: str
    """``chat``, or a notice: ``resigned``, ``left``, ``ai_took_over``, ``took_back``, ``abandoned``,
    ``rematch_offer``, ``rematch_accept``, ``rematch_decline``."""
    channel: str
    """``all`` (every viewer) or ``spectators`` (spectators only: separate chat)."""
    at_seq: int
    """The number of actions played when it happened (where it goes in the log)."""
    data: dict[str, Any]
    created_at: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "channel": self.channel, "at": self.at_seq, "time": round(self.created_at, 3),
                **self.data}


@dataclass
class TableData:
    """Everything stored about one table, as plain data."""

    id: str
    game: str
    options: dict[str, Any]
    seed: int
    status: str
    created_at: float
    updated_at: float
    seats: list[SeatData]
    actions: list[dict[str, Any]] = field(default_factory=list)
    action_seats: list[int | None] = field(default_factory=list)
    action_times: list[float] = field(default_factory=list)
    result: dict[str, Any] | None = None
    rematch_id: str | None = None
    rematch_of: str | None = None
    unlisted: bool = False
    settings: dict[str, Any] = field(default_factory=dict)
    """The table's own settings (tables.py ``TableSettings``): abandoned seats, chat channels."""
    notes: list[NoteData] = field(default_factory=list)
    """The most recent notes (at most :data:`NOTES_LOADED`), oldest first."""
    last_note_id: int = 0
    """The id of the newest stored note (a worker catching up asks for the notes after it)."""


@dataclass
class TableDelta:
    """What changed in a table's stored data since a worker last read it (:meth:`Repository.delta`):
    the actions after the given ``seq``, the seats, status and result, the notes after a note id."""

    status: str
    result: dict[str, Any] | None
    rematch_id: str | None
    seats: list[SeatData]
    actions: list[tuple[int | None, dict[str, Any]]]
    action_times: list[float]
    notes: list[NoteData]
    last_note_id: int


@dataclass
class AppendRequest:
    """Actions to store for one table (see :meth:`Repository.append_batch`)."""

    table_id: str
    first_seq: int
    actions: list[tuple[int | None, dict[str, Any]]]
    status: str | None = None
    result: dict[str, Any] | None = None
    seats: list[tuple[int, SeatData]] = field(default_factory=list)
    """Open seats taken in the same transaction (the last join and the game's start are one)."""
    expect_status: str | None = None
    """Store nothing unless the table still has this status (e.g. a join to a table that expired)."""
    replace: list[tuple[int, SeatData, str | None]] = field(default_factory=list)
    """Seats changed by the table's life: (seat, new data, the token hash it must still hold)."""
    notes: list[NoteData] = field(default_factory=list)
    """Notices stored in the same transaction."""
    fence: tuple[str, int] | None = None
    """(table, lease token): store nothing unless that lease is still held with that token
    (appends made by a table's timers: the AI, the hourglass, abandoned seats; leases.py)."""


class Conflict(Exception):
    """A conditional write found the table changed (a seat taken, a status changed): nothing stored."""
