"""The words of every notice (mail, push, webhook) in the recipient's language.

Each message is marked with ``N_()`` so that scripts/i18n.py puts it in the browser's catalog
(``web.po``) beside the server's other messages; a plural one is ``N_(singular, plural)`` and its
form is chosen with the catalog's own plural rule (:func:`plural`). Dates are written with Babel in
the recipient's language and time zone.
"""

from __future__ import annotations

import gettext
from datetime import datetime
from functools import cache
from typing import Any, overload
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel.dates import format_datetime

from ludoteca.i18n import DEFAULT_PLURAL, LANGUAGES, web_plurals, web_text
from ludoteca.registry import GAMES, game_class


@overload
def N_(singular: str) -> str: ...
@overload
def N_(singular: str, plural: str) -> tuple[str, str]: ...
def N_(singular: str, plural: str | None = None) -> str | tuple[str, str]:
    """Mark a message (or a plural pair) for the catalog; the text itself is returned."""
    return singular if plural is None else (singular, plural)


SUBJECTS = {
    "your_turn": N_("Your move in {game}"),
    "game_over": N_("The game of {game} is over"),
    "reminder": N_("Reminder: your move in {game}"),
}
LINES = {
    "your_turn": N_("{player}, it is your move in {game}."),
    "game_over": N_("{player}, the game of {game} is over: see how it ended."),
    "reminder": N_("{player}, your move in {game} is still waiting."),
}
DUE = N_("Your time for this move runs out on {when}.")
OPEN_BUTTON = N_("Open the table")
YOUR_GAMES = N_("Your games")
DIGEST = N_("{n} game waits for your move", "{n} games wait for your move")
UNSUBSCRIBE = N_("You get these e-mails because you asked for them on your account page. To stop them: {url}")
WEBHOOK = N_("{player}: your move in {game} — {url}")
WEBHOOK_OVER = N_("{player}: the game of {game} is over — {url}")
WEBHOOK_REMINDER = N_("{player}: your move in {game} is still waiting — {url}")
TABLE_TURN = N_("It's {player}'s turn in {game} — {url}")
TABLE_OVER = N_("The game of {game} is over — {url}")
VERIFY_SUBJECT = N_("Confirm your e-mail address for ludoteca")
VERIFY_BODY = N_("Someone, hopefully you, asked that the ludoteca account {name} be told about its games at "
                 "this address. To confirm, open this link:")
VERIFY_HOURS = N_("The link works for {n} hour.", "The link works for {n} hours.")
VERIFY_BUTTON = N_("Confirm my address")
VERIFY_IGNORE = N_("If it was not you, ignore this e-mail: nothing will be sent.")


def lang_of(lang: str | None) -> str:
    return lang if lang in LANGUAGES else LANGUAGES[0]


def text(lang: str, message: str, **params: Any) -> str:
    return web_text(lang_of(lang), message, **params)


@cache
def _rule(lang: str) -> Any:
    expr, _forms = web_plurals(lang)
    return gettext.c2py(expr or DEFAULT_PLURAL)


def plural(lang: str, message: tuple[str, str], n: int, **params: Any) -> str:
    """The form of a plural message for ``n`` in ``lang`` (the catalog's plural rule), filled."""
    lang = lang_of(lang)
    singular, many = message
    forms = web_plurals(lang)[1].get(singular) if lang != LANGUAGES[0] else None
    if forms:
        chosen = forms[min(int(_rule(lang)(n)), len(forms) - 1)]
    else:
        chosen = singular if n == 1 else many
    return chosen.format(n=n, **params)


def game_title(name: str) -> str:
    """The game's own title (asked of the game), or its name if it is not one of ours."""
    return game_class(name).title if name in GAMES else name


def when(lang: str, epoch: float, timezone: str | None) -> str:
    """A deadline as the recipient reads it: their language, their time zone (UTC when unknown)."""
    try:
        zone = ZoneInfo(timezone) if timezone else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    moment = datetime.fromtimestamp(epoch, zone)
    return format_datetime(moment, "EEEE d MMMM, HH:mm zzz", tzinfo=zone, locale=lang_of(lang))
