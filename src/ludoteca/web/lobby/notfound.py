"""The page a person gets for an address that leads nowhere: an unknown table
(``/t/nosuchtable``), guided game (``/learn/nosuch``), or any page nobody serves. (An unknown game's
rules, ``/rules/nosuch``, and an unknown player, ``/players/nosuch``, keep their own 404 pages:
web/lobby/rules.py lists the games, static/profile.html says there is no such player.)

Status 404, in the request's language (``?lang=``, else the ``ludoteca_lang`` cookie, else
``Accept-Language``: web/languages.py), saying what was not found in words and offering a link back
to the lobby; the page (``static/404.html``) is plain HTML sized for a phone, with no script.
"""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException

from ludoteca.core.i18n import N_
from ludoteca.i18n import web_text
from ludoteca.web.languages import language_of
from ludoteca.web.lobby.rules import COOKIE

PAGE = Path(__file__).parent.parent / "static" / "404.html"
SHOWN = 40
"""Characters of the unknown name repeated on the page."""

TITLE = N_("Page not found")
BACK = N_("Back to the lobby")
TABLE = N_("There is no table “{name}” here: it may have ended long ago, or the link may be mistyped.")
GAME = N_("There is no game called “{name}”.")
GAMES_LINK = N_("The games and their rules")
NOWHERE = N_("There is nothing at the address “{name}”.")


def not_found(request: Request, message: str, name: str) -> HTMLResponse:
    """The 404 page saying ``message`` (one of this module's messages) about ``name``."""
    lang = language_of(request.query_params.get("lang"), request.cookies.get(COOKIE),
                       request.headers.get("accept-language"))
    shown = name if len(name) <= SHOWN else name[:SHOWN] + "…"
    fields = {
        "lang": lang,
        "title": html.escape(web_text(lang, TITLE)),
        "text": html.escape(web_text(lang, message, name=shown)),
        "back": html.escape(web_text(lang, BACK)),
        "games": html.escape(web_text(lang, GAMES_LINK)),
    }
    page = PAGE.read_text(encoding="utf-8")
    for key, value in fields.items():
        page = page.replace("{{" + key + "}}", value)
    return HTMLResponse(page, status_code=404, headers={
        "Content-Language": lang, "Vary": "Accept-Language, Cookie", "Cache-Control": "no-cache"})


async def unknown_address(request: Request, exc: Exception) -> Response:
    """Any other address nobody serves: this page for a browser asking for a page (``Accept: text/html``),
    the usual JSON answer otherwise (an API client, a script)."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404 and "text/html" in request.headers.get("accept", ""):
        return not_found(request, NOWHERE, request.url.path)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))
