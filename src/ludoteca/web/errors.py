"""The web server's error catalogue: every refusal has a code, a readable message, one shape.

An error is sent the same way over HTTP (as the response body, with the code's HTTP status) and
over a websocket (as a message to that client alone)::

    {"type": "error", "code": "seat_taken", "error": "seat_taken", "message": "seat 2 is already taken"}

``error`` repeats ``code`` (the name HTTP clients have always read). A websocket error answering
a message that carried a ``ref`` carries the same ``ref``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class Code(StrEnum):
    """Every error code the server sends, with its HTTP status (:data:`STATUS`)."""

    BAD_REQUEST = "bad_request"
    BAD_JSON = "bad_json"
    BAD_MESSAGE = "bad_message"
    BAD_GAME = "bad_game"
    BAD_PLAYERS = "bad_players"
    BAD_OPTIONS = "bad_options"
    BAD_SEATS = "bad_seats"
    BAD_SEAT = "bad_seat"
    BAD_NAME = "bad_name"
    BAD_KEY = "bad_key"
    BAD_UNLISTED = "bad_unlisted"
    BAD_TOKEN = "bad_token"
    NOT_SEATED = "not_seated"
    NOT_FOUND = "not_found"
    NOT_OVER = "not_over"
    NOT_PLAYING = "not_playing"
    NOT_YOUR_TURN = "not_your_turn"
    STALE = "stale"
    ILLEGAL = "illegal"
    TIMEOUT = "timeout"
    SEAT_TAKEN = "seat_taken"
    SEAT_HELD = "seat_held"
    EXPIRED = "expired"
    CONFLICT = "conflict"
    TOO_LARGE = "too_large"
    RATE_LIMITED = "rate_limited"
    SPECTATORS_FULL = "spectators_full"
    CROSS_ORIGIN = "cross_origin"
    STORAGE = "storage"
    CLOSING = "closing"
    SERVER_ERROR = "server_error"


STATUS: dict[Code, int] = {
    Code.BAD_TOKEN: 403, Code.NOT_SEATED: 403, Code.CROSS_ORIGIN: 403,
    Code.NOT_FOUND: 404,
    Code.NOT_OVER: 409, Code.SEAT_TAKEN: 409, Code.SEAT_HELD: 409, Code.EXPIRED: 409, Code.CONFLICT: 409,
    Code.TOO_LARGE: 413,
    Code.RATE_LIMITED: 429, Code.SPECTATORS_FULL: 429,
    Code.SERVER_ERROR: 500,
    Code.STORAGE: 503, Code.CLOSING: 503,
}
"""The HTTP status of each code; any code not listed is a 400 (the request itself is wrong)."""


def error_body(code: Code | str, message: str, ref: Any = None) -> dict[str, Any]:
    """The one shape of an error, for HTTP bodies and websocket messages alike."""
    body: dict[str, Any] = {"type": "error", "code": str(code), "error": str(code), "message": message}
    if ref is not None:
        body["ref"] = ref
    return body


class WebError(Exception):
    """A request the server refuses: a code of the catalogue and a readable message."""

    def __init__(self, code: Code, message: str, status: int | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = Code(code)
        self.message = message
        self.status = status if status is not None else STATUS.get(self.code, 400)
        self.headers = headers

    def to_json(self, ref: Any = None) -> dict[str, Any]:
        return error_body(self.code, self.message, ref)
