"""What a table tells the notices: one `Notice` per seat to tell, handed to a `Notifier`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

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


class Notifier(Protocol):
    """Takes notices to send later; stores rows, never sends or blocks."""

    def notify(self, notices: Sequence[Notice]) -> None: ...


class NullNotifier:
    """A notifier that drops every notice (a server without notices, tests)."""

    def notify(self, notices: Sequence[Notice]) -> None:
        return None
