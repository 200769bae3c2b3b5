"""The server side of a game's clock (any game whose ``state.time_left()`` is not None).

The engine never reads the wall clock. The server measures, for each action, the seconds since
the previous action of the turn (or since the turn began) and passes them to
``apply_action(action, elapsed=...)``; when the time left runs out, it applies
``{"timeout": true}`` itself.

After a restart the hourglass restarts from the ``time_left`` of the last stored action: the
time the server was down is not charged to the player to move (see docs/web.md).

A turn-based table's hourglass runs only while the player to move has the table open
(:meth:`TurnClock.pause` / :meth:`TurnClock.unpause`, set by web/master/pace_clock.py after every change
and every connection that comes or goes): the time charged with a move (``elapsed``) is the time
the player had the table open in their turn, measured here, never sent by the browser.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

ELAPSED_DIGITS = 3
"""``elapsed`` is rounded to the millisecond before it is applied and stored."""

TIMEOUT_GRACE = 0.02
"""Seconds after the computed deadline before the server applies the timeout."""


class TurnClock:
    """Measures the time since the previous action and fires a callback at the deadline."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self.ref = now()
        self.time_left: float | None = None
        self._handle: asyncio.TimerHandle | None = None
        self.paused_at: float | None = None
        """Since when the hourglass is stopped (a turn-based table whose player to move is away)."""

    def _end(self) -> float:
        return self.paused_at if self.paused_at is not None else self._now()

    def elapsed(self) -> float:
        """Seconds since the previous action (not counting the pauses), rounded to the millisecond."""
        return round(max(0.0, self._end() - self.ref), ELAPSED_DIGITS)

    def remaining(self) -> float | None:
        """Seconds left on the running hourglass (None when no hourglass runs)."""
        if self.time_left is None:
            return None
        return max(0.0, self.time_left - (self._end() - self.ref))

    def pause(self) -> None:
        """Stop counting (and the timer) until :meth:`unpause`."""
        if self.paused_at is None:
            self.paused_at = self._now()
        self.cancel()

    def unpause(self) -> None:
        """Count again from now: the pause is not charged."""
        if self.paused_at is not None:
            self.ref += self._now() - self.paused_at
            self.paused_at = None

    def restart(self, time_left: float | None, spent: float = 0.0) -> None:
        """An action was applied: measure from now, with ``time_left`` on the hourglass
        (``spent``: seconds of the turn already gone, e.g. when a worker takes over a table whose
        last action another worker stored then; cluster.py)."""
        self.ref = self._now() - max(0.0, spent)
        self.time_left = time_left
        self.paused_at = None

    def arm(self, callback: Callable[[], Any]) -> None:
        """Call ``callback`` (on the running event loop) when the hourglass runs out."""
        self.cancel()
        remaining = self.remaining()
        if remaining is None or self.paused_at is not None:
            return
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(remaining + TIMEOUT_GRACE, callback)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def expired(self) -> bool:
        remaining = self.remaining()
        return remaining is not None and remaining <= 0.0
