"""The languages of the browser: the catalogs the pages load, and a request's language.

``GET /i18n/{lang}.json`` answers ``{"lang": "it", "messages": {msgid: text}, "plural": rule, "plurals":
{singular msgid: [forms]}}`` (the plural rule as the catalogs' gettext expression): the Italian of every
text the browser shows, merged from the shell's catalog (``locale/it/LC_MESSAGES/web.po``) and each
game's own (``games/<name>/locale/it.po``, found through the registry), read with Babel once per
process (:func:`ludoteca.i18n.web_translations`). English is the source language: its messages are
empty. The answer carries an ETag (a hash of its text), so a page's reload costs a 304.

A request's language (:func:`request_language`: the server's messages, the lobby's option texts)
is the one the language switch keeps in the ``ludoteca_lang`` cookie (shared with the rules pages),
else the browser's ``Accept-Language``, else English; a websocket's
(:func:`socket_language`) is its ``lang`` query parameter, else the same from its handshake.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import Response

from ludoteca.i18n import LANGUAGES, web_plurals, web_translations
from ludoteca.web.errors import Code, WebError
from ludoteca.web.lobby.rules import COOKIE, accepted_language

router = APIRouter(include_in_schema=False)


def language_of(query: str | None, cookie: str | None, accept: str | None) -> str:
    """``query`` when it names a language, else the cookie's, else ``Accept-Language``'s, else English."""
    for candidate in (query, cookie):
        code = (candidate or "").strip().lower()
        if code in LANGUAGES:
            return code
    return accepted_language(accept) or LANGUAGES[0]


def request_language(request: Request) -> str:
    """The language of an HTTP request: the cookie, else ``Accept-Language``, else English."""
    return language_of(None, request.cookies.get(COOKIE), request.headers.get("accept-language"))


def socket_language(websocket: WebSocket) -> str:
    """The language of a websocket: ``?lang=``, else its handshake's cookie or ``Accept-Language``."""
    return language_of(websocket.query_params.get("lang"), websocket.cookies.get(COOKIE),
                       websocket.headers.get("accept-language"))


@cache
def catalog_body(lang: str) -> tuple[bytes, str]:
    """The JSON of ``lang``'s browser catalog and its ETag (computed once)."""
    rule, plurals = web_plurals(lang)
    body = json.dumps({"lang": lang, "messages": web_translations(lang), "plural": rule, "plurals": plurals},
                      ensure_ascii=False,
                      sort_keys=True, separators=(",", ":")).encode("utf-8")
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


@router.get("/i18n/{lang}.json")
async def catalog(request: Request, lang: str) -> Response:
    """The browser's messages in ``lang`` (``en``: none, the source is English); 404 for another language."""
    if lang not in LANGUAGES:
        raise WebError(Code.NOT_FOUND, "there is no catalog for the language {language}; the languages are: "
                       "{languages}", language=lang[:8], languages=", ".join(LANGUAGES))
    body, etag = catalog_body(lang)
    headers = {"ETag": etag, "Cache-Control": "no-cache", "Content-Language": lang}
    if etag in (request.headers.get("if-none-match") or ""):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)
