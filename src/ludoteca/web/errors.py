"""The web server's error catalogue: every refusal has a code, a readable message, one shape.

An error is sent the same way over HTTP (as the response body, with the code's HTTP status) and
over a websocket (as a message to that client alone)::

    {"type": "error", "code": "seat_taken", "error": "seat_taken", "message": "seat 2 is already taken"}

``error`` repeats ``code`` (the name HTTP clients have always read). A websocket error answering
a message that carried a ``ref`` carries the same ``ref``. A refusal the page does not show (a move
for a position that has moved on: :data:`QUIET`) carries ``"quiet": true``; a refused move carries
the move as ``action`` (:func:`refusal`), never the engine's reason.

The ``message`` is in the requester's language: a raise site gives an English template
with named fields and their values, ``WebError(Code.SEAT_TAKEN, "seat {seat} is already taken",
seat=3)``; the template is a message of the browser's catalog (``scripts/i18n.py`` finds the
second argument of ``WebError``, ``error_body`` and ``conn.error``), looked up when the error is
sent (:func:`error_body` with ``lang``: the HTTP request's cookie or ``Accept-Language``, the
websocket's ``lang`` or handshake, web/languages.py). ``code`` never changes with the language.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from ludoteca.i18n import web_text


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
    BAD_CHAT = "bad_chat"
    NO_OFFER = "no_offer"
    BAD_PASSWORD = "bad_password"
    NAME_TAKEN = "name_taken"
    BAD_LOGIN = "bad_login"
    NOT_LOGGED_IN = "not_logged_in"
    NOT_ADMIN = "not_admin"
    SUSPENDED = "suspended"
    BAD_CSRF = "bad_csrf"
    BUSY = "busy"
    RATED_NEEDS_ACCOUNT = "rated_needs_account"


QUIET: frozenset[Code] = frozenset({Code.STALE})
"""Refusals the page does not show: a move for a position that has moved on (a tap that crossed a
forced move played for the player) changes nothing, and the page already shows what happened."""

STATUS: dict[Code, int] = {
    Code.BAD_TOKEN: 403, Code.NOT_SEATED: 403, Code.CROSS_ORIGIN: 403, Code.RATED_NEEDS_ACCOUNT: 403,
    Code.NOT_FOUND: 404,
    Code.NOT_OVER: 409, Code.NO_OFFER: 409,
    Code.SEAT_TAKEN: 409, Code.SEAT_HELD: 409, Code.EXPIRED: 409, Code.CONFLICT: 409,
    Code.TOO_LARGE: 413,
    Code.NOT_ADMIN: 403, Code.SUSPENDED: 403,
    Code.BAD_LOGIN: 401, Code.NOT_LOGGED_IN: 401, Code.BAD_CSRF: 403, Code.NAME_TAKEN: 409, Code.BUSY: 503,
    Code.RATE_LIMITED: 429, Code.SPECTATORS_FULL: 429,
    Code.SERVER_ERROR: 500,
    Code.STORAGE: 503, Code.CLOSING: 503,
}
"""The HTTP status of each code; any code not listed is a 400 (the request itself is wrong)."""


def error_body(code: Code | str, message: str, ref: Any = None, lang: str | None = None,
               **params: Any) -> dict[str, Any]:
    """The one shape of an error, for HTTP bodies and websocket messages alike: ``message`` (a
    template with ``{name}`` fields filled from ``params``, whose names are not ``code``, ``message``,
    ``ref``, ``lang``, ``status`` or ``headers``) in ``lang`` (None: English)."""
    body: dict[str, Any] = {"type": "error", "code": str(code), "error": str(code),
                            "message": web_text(lang, message, **params)}
    if code in QUIET:
        body["quiet"] = True
    if ref is not None:
        body["ref"] = ref
    return body


class WebError(Exception):
    """A request the server refuses: a code of the catalogue and a readable message.

    ``message`` is an English template whose ``{name}`` fields ``params`` fill (a template without
    params is used as it is); :attr:`message` is the English text, :meth:`to_json` the text in a
    language."""

    def __init__(self, code: Code, message: str, status: int | None = None,
                 headers: dict[str, str] | None = None, **params: Any) -> None:
        text = message.format(**params) if params else message
        super().__init__(text)
        self.code = Code(code)
        self.template = message
        self.params = params
        self.message = text
        self.status = status if status is not None else STATUS.get(self.code, 400)
        self.headers = headers

        self.action: dict[str, Any] | None = None
        """The move refused (canonical JSON), for a refusal the page names in the game's words."""

    def to_json(self, ref: Any = None, lang: str | None = None) -> dict[str, Any]:
        """The error's body, its message in ``lang`` (None: English); a refused move carries it as
        ``action`` (the page says it with the game's own words)."""
        body = error_body(self.code, self.template, ref, lang, **self.params)
        if self.action is not None:
            body["action"] = self.action
        return body


def refusal(message: str, action: Any) -> WebError:
    """An ``illegal`` move: ``message`` in the player's words (never the engine's reason, which names
    JSON fields), and the move itself for the page, which names it with the game's words (its client's
    ``refusal``)."""
    error = WebError(Code.ILLEGAL, message)
    error.action = action if isinstance(action, dict) else None
    return error
