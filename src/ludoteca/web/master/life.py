"""The life of a table around its game: its settings, chat lines and notices.

A table's creator chooses (``POST /api/tables``, top-level keys next to ``unlisted``):

- ``abandon_after``: seconds a human seat may stay without any connection while the game goes on
  (:data:`ABANDON_MIN` to :data:`ABANDON_MAX`, default :data:`ABANDON_AFTER`);
- ``abandoned``: what then happens, ``"ai"`` (the easiest AI plays the seat until its player comes
  back and takes it back) or ``"end"`` (the table ends: no winner, reason ``abandoned``);
- ``chat``: ``"shared"`` (everyone reads everyone) or ``"separate"`` (spectators' lines reach
  spectators only).
- ``rated``: the result updates the players' ratings (web/accounts/ratings.py; a logged-in creator, and
  every human seat taken by a logged-in player).

Chat lines are text (at most :data:`MAX_CHAT` characters, control characters removed), rate-limited
per connection (:data:`CHAT_RATE` per second, bursts of :data:`CHAT_BURST`), stored with the table
and sent with every snapshot (the last :data:`CHAT_SHOWN` a viewer may read).
"""

from __future__ import annotations

from typing import Any

from ludoteca.web.errors import Code, WebError
from ludoteca.web.master import pace

ABANDON_AFTER = 180
ABANDON_MIN = 1
ABANDON_MAX = 3600
ABANDONED = ("ai", "end")
CHAT_MODES = ("shared", "separate")
MAX_CHAT = 300
CHAT_SHOWN = 100
CHAT_RATE = 0.5
CHAT_BURST = 5.0
ALL, SPECTATORS = "all", "spectators"

DEFAULTS: dict[str, Any] = {"abandon_after": ABANDON_AFTER, "abandoned": "ai", "chat": "shared"}


def check_settings(request: dict[str, Any]) -> dict[str, Any]:
    """The table settings of a creation request (missing ones take their default); WebError when
    one is out of bounds."""
    out = dict(DEFAULTS)
    after = request.get("abandon_after", ABANDON_AFTER)
    if isinstance(after, bool) or not isinstance(after, int) or not ABANDON_MIN <= after <= ABANDON_MAX:
        raise WebError(Code.BAD_OPTIONS, "'abandon_after' is a whole number of seconds from {low} to {high}",
                       low=ABANDON_MIN, high=ABANDON_MAX)
    out["abandon_after"] = after
    abandoned = request.get("abandoned", "ai")
    if abandoned not in ABANDONED:
        raise WebError(Code.BAD_OPTIONS, "'abandoned' is 'ai' (an AI plays the seat) or 'end' (the table ends)")
    out["abandoned"] = abandoned
    chat = request.get("chat", "shared")
    if chat not in CHAT_MODES:
        raise WebError(Code.BAD_OPTIONS, "'chat' is 'shared' or 'separate' (spectators talk among themselves)")
    out["chat"] = chat
    rated = request.get("rated", False)  # the creator must be logged in (web/accounts/ratings.py)
    if not isinstance(rated, bool):
        raise WebError(Code.BAD_OPTIONS, "'rated' is true (the result updates the players' ratings) or false")
    if rated:
        out["rated"] = True  # absent when false: a casual table's settings stay as they were
    out.update(pace.check_pace(request))  # a turn-based table's pace (pace.py); nothing for a live one
    return out


def stored_settings(data: dict[str, Any] | None) -> dict[str, Any]:
    """Settings read back from storage (a table stored before they existed gets the defaults)."""
    try:
        return check_settings(data or {})
    except WebError:
        return dict(DEFAULTS)


def chat_text(text: Any) -> str:
    """A chat line as stored: printable text, spaces collapsed; WebError when empty or too long."""
    if not isinstance(text, str):
        raise WebError(Code.BAD_CHAT, "a chat message is text")
    clean = " ".join("".join(ch for ch in text if ch.isprintable()).split())
    if not clean:
        raise WebError(Code.BAD_CHAT, "a chat message cannot be empty")
    if len(clean) > MAX_CHAT:
        raise WebError(Code.BAD_CHAT, "a chat message has at most {n} characters", n=MAX_CHAT)
    return clean
