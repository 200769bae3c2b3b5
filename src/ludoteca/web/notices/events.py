"""What a table tells the notices: one `Notice` per seat to tell, handed to a `Notifier`.

A turn-based table's notices are written by :meth:`Notifier.write` in the transaction that changes its
deadline row (web/repository/deadlines.py: stored with the turn, or not at all and then repaired); a live
table's are handed to :meth:`Notifier.notify` after its change is committed (stored a moment later).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection

NoticeKind = Literal["your_turn", "game_over", "reminder"]
NOTICE_KINDS: tuple[NoticeKind, ...] = ("your_turn", "game_over", "reminder")


@dataclass(frozen=True)
class Notice:
    """One event for one seat of one table."""

    kind: NoticeKind
    table: str  # table id
    game: str  # game name (ask the game for its title)
    seat: int
    account: int | None  # the seat's account id, None for a name-only player
    player: str  # the seat's display name
    due: float | None  # deadline, epoch seconds (your_turn / reminder)
    watching: bool  # the player has this table open right now (then nothing is sent)
    seq: int | None = None  # the table's action count it was made at (with table, seat and kind: its key)


class Notifier(Protocol):
    """Takes notices to send later; stores rows, never sends or blocks."""

    def notify(self, notices: Sequence[Notice]) -> None:
        """Store ``notices`` soon (a task; never waits)."""

    def write(self, conn: Connection, notices: Sequence[Notice], now: float) -> int:
        """Store ``notices`` on ``conn``, in the caller's transaction (blocking); how many rows."""

    def check_hook(self, url: str) -> str:
        """``url`` if a table's webhook may be sent to it, else a WebError saying why (blocking: it
        resolves the name)."""

    def wake(self) -> None:
        """Rows were just written: send them soon (on the event loop's thread)."""


class NullNotifier:
    """A notifier that drops every notice (a server without notices, tests)."""

    def notify(self, notices: Sequence[Notice]) -> None:
        return None

    def write(self, conn: Connection, notices: Sequence[Notice], now: float) -> int:
        return 0

    def wake(self) -> None:
        return None

    def check_hook(self, url: str) -> str:
        from ludoteca.web.errors import Code, WebError

        raise WebError(Code.BAD_OPTIONS, "this server sends no notices: a table cannot have a webhook")
