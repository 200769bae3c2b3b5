"""A table's pace: ``live`` (everyone online together) or ``turn-based`` (a move every few hours or days).

The creator chooses (``POST /api/tables``, top-level keys next to ``unlisted``, stored in the table's
settings, copied to the rematch):

- ``pace``: ``"live"`` (the default: the table as it always was) or ``"turn-based"``;
- ``move_time``: a turn-based table's time per move, whole seconds from :data:`MOVE_TIME_MIN` (1 minute)
  to :data:`MOVE_TIME_MAX` (14 days); the lobby offers :data:`PRESETS` (1 hour to 3 days);
- ``reserve``: the cap of each seat's reserve ("time to think", whole seconds, 0 to :data:`MOVE_TIME_MAX`,
  default 0 = no reserve). A seat's turn lasts ``move_time`` plus its reserve; the time a move leaves
  unused is added to the reserve up to the cap, the time a move takes beyond ``move_time`` comes out of
  it (:func:`next_reserve`);
- ``on_timeout``: what happens when a seat's time runs out, never silently (a notice in the log):
  ``"ai_move"`` (default) the easiest AI plays that move, the seat stays its player's;
  ``"ai_seat"`` the AI plays the first missed move, and at the second miss the seat is given to the
  AI for the rest of the game; ``"claim"`` (two-player tables only: BGA's "expel") nothing is played,
  the opponent may claim the win (``POST /api/tables/<id>/claim``) while the late player may still move;
- ``webhook``: a URL (a club's Discord or Slack channel) told every seat's turn and the game's end
  (web/notices/service.py). Checked like an account's webhook, never stored in the settings (nobody
  else ever sees it): :func:`webhook_of` reads it, web/master/deadlines.py checks and keeps it.

A turn-based table has no abandon timer (its players are offline for days); its deadlines are rows in
the database (web/repository/deadlines.py), fired by web/master/deadlines.py.
"""

from __future__ import annotations

from typing import Any

from ludoteca.web.errors import Code, WebError

LIVE = "live"
TURN_BASED = "turn-based"
PACES = (LIVE, TURN_BASED)
MOVE_TIME_MIN = 60
MOVE_TIME_MAX = 14 * 24 * 3600
PRESETS = (3600, 4 * 3600, 12 * 3600, 24 * 3600, 2 * 24 * 3600, 3 * 24 * 3600)
"""The times per move the lobby offers: 1 hour, 4 hours, 12 hours, 1 day, 2 days, 3 days."""
MOVE_TIME_DEFAULT = 24 * 3600
AI_MOVE, AI_SEAT, CLAIM = "ai_move", "ai_seat", "claim"
ON_TIMEOUT = (AI_MOVE, AI_SEAT, CLAIM)
MISSES_FOR_SEAT = 2
"""With ``ai_seat``: the miss at which the seat goes to the AI for the rest of the game."""
WEBHOOK_MAX = 2000
"""The longest webhook address taken (characters)."""
REMIND_PART = 0.25
"""A reminder is due when this part of a seat's time for the turn is left."""


def _seconds(request: dict[str, Any], key: str, default: int, low: int) -> int:
    value = request.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MOVE_TIME_MAX:
        if key == "move_time":
            raise WebError(Code.BAD_OPTIONS, "'move_time' is a whole number of seconds from {low} (1 minute) to "
                                             "{high} (14 days)", low=low, high=MOVE_TIME_MAX)
        raise WebError(Code.BAD_OPTIONS, "'reserve' is a whole number of seconds from 0 to {high} (14 days)",
                       high=MOVE_TIME_MAX)
    return value


def check_pace(request: dict[str, Any]) -> dict[str, Any]:
    """The pace settings of a creation request: ``{}`` for a live table (its settings stay as they
    were), else ``pace``, ``move_time``, ``reserve`` and ``on_timeout``; WebError when one is wrong."""
    pace = request.get("pace", LIVE)
    if pace not in PACES:
        raise WebError(Code.BAD_OPTIONS, "'pace' is 'live' (everyone plays at once) or 'turn-based' (a move every "
                                         "few hours or days)")
    if pace == LIVE:
        for key in ("move_time", "reserve", "on_timeout", "webhook"):
            if key in request and not (key == "webhook" and request[key] in (None, "")):
                raise WebError(Code.BAD_OPTIONS, "'{key}' is a setting of a turn-based table: add "
                                                 "\"pace\": \"turn-based\"", key=key)
        return {}
    move_time = _seconds(request, "move_time", MOVE_TIME_DEFAULT, MOVE_TIME_MIN)
    reserve = _seconds(request, "reserve", 0, 0)
    on_timeout = request.get("on_timeout", AI_MOVE)
    if on_timeout not in ON_TIMEOUT:
        raise WebError(Code.BAD_OPTIONS, "'on_timeout' is 'ai_move' (the AI plays the missed move), 'ai_seat' (and "
                                         "the seat goes to the AI at the second miss) or 'claim' (the opponent may "
                                         "claim the win)")
    return {"pace": TURN_BASED, "move_time": move_time, "reserve": reserve, "on_timeout": on_timeout}


def webhook_of(request: dict[str, Any]) -> str | None:
    """A turn-based table's ``webhook`` as given (None: none); a clear WebError when it cannot be an address
    (where it points is checked by the notices: web/notices/webhook.py)."""
    url = request.get("webhook")
    if url is None or url == "":
        return None
    if not isinstance(url, str) or len(url) > WEBHOOK_MAX or not url.strip():
        raise WebError(Code.BAD_OPTIONS, "a webhook is an address starting with https://")
    return url.strip()


def check_players(settings: dict[str, Any], players: int) -> None:
    """``claim`` needs exactly two players (the other one claims the win)."""
    if settings.get("on_timeout") == CLAIM and players != 2:
        raise WebError(Code.BAD_OPTIONS, "the opponent can claim the win only in a two-player game: choose "
                                         "'ai_move' or 'ai_seat'")


def turn_based(settings: dict[str, Any]) -> bool:
    return settings.get("pace") == TURN_BASED


def turn_seconds(settings: dict[str, Any], reserve: float) -> float:
    """The seconds a seat has for its turn: the time per move plus its reserve."""
    return float(settings.get("move_time", MOVE_TIME_DEFAULT)) + max(0.0, reserve)


def next_reserve(settings: dict[str, Any], reserve: float, spent: float) -> float:
    """A seat's reserve after a turn that took ``spent`` seconds: what the turn left unused, at most
    the cap (never below 0)."""
    cap = float(settings.get("reserve", 0))
    return max(0.0, min(cap, turn_seconds(settings, reserve) - spent))


def remind_at(due: float, seconds: float) -> float:
    """When the reminder of a turn of ``seconds`` due at ``due`` is sent."""
    return due - REMIND_PART * seconds
