"""Login sessions of the optional accounts: the cookies, the sessions in the database, CSRF.

A session is a random token in the ``ludoteca_session`` cookie (``HttpOnly; SameSite=Lax; Path=/``,
``Secure`` when the request came over https, directly or through a proxy saying so with
``X-Forwarded-Proto``). The database keeps only its SHA-256 (``ludo_sessions``), with the account,
the session's CSRF token and its expiry: :data:`SESSION_TTL` after the last use (sliding, renewed
at most once per :data:`RENEW_AFTER`). Every worker of a cluster reads the same table, so a
session made through one worker is good on all of them.

CSRF: while a request carries a valid session cookie, every state-changing request (any method
but GET, HEAD, OPTIONS) must carry the session's CSRF token in the ``X-CSRF-Token`` header
(:class:`CsrfMiddleware`; the pages read it from the ``ludoteca_csrf`` cookie, which scripts may
read, or from ``GET /api/me``), else HTTP 403 ``bad_csrf``. This comes on top of the Origin checks
of security.py. A request without a session cookie (casual play with a typed name) is not
concerned: it has no account to act for.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response

from ludoteca.web.errors import Code, error_body
from ludoteca.web.languages import request_language
from ludoteca.web.repository.store import AccountData, Repository

SESSION_COOKIE = "ludoteca_session"
CSRF_COOKIE = "ludoteca_csrf"
CSRF_HEADER = "x-csrf-token"
SESSION_TTL = 30 * 24 * 3600.0
"""Seconds a session lasts after its last use."""
RENEW_AFTER = 24 * 3600.0
"""A session in use is renewed (its expiry pushed to :data:`SESSION_TTL` from now) at most this often."""
MAX_TOKEN = 200
"""Longest session token looked up (the server makes 43-character ones)."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_LOADED = "ludoteca.session"
"""Where a request's session is kept once read (its ASGI scope): read once per request."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Account:
    """A player's account as the rest of the server sees it (never its password hash)."""

    id: int
    name: str
    created_at: float

    @classmethod
    def of(cls, data: AccountData) -> Account:
        return cls(id=data.id, name=data.name, created_at=data.created_at)

    def public(self) -> dict[str, Any]:
        return {"name": self.name, "created_at": self.created_at}


@dataclass
class Session:
    token_hash: str
    account: Account
    csrf: str
    expires_at: float
    renewed: bool = False
    """Its expiry was pushed forward by this request (the response sets the cookies again)."""


def hash_session(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def _storage(request: Request) -> tuple[Any, Repository]:
    lobby = request.app.state.lobby
    return lobby, lobby.repo


async def load_session(request: Request) -> Session | None:
    """The request's valid session (read from the database once per request; renewed when due), or None."""
    cached = request.scope.get(_LOADED, False)
    if cached is not False:
        return cached  # type: ignore[no-any-return]
    session = await _read_session(request)
    request.scope[_LOADED] = session
    return session


async def _read_session(request: Request) -> Session | None:
    token = request.cookies.get(SESSION_COOKIE)
    if not token or len(token) > MAX_TOKEN:
        return None
    digest = hash_session(token)
    now = time.time()
    lobby, repo = _storage(request)
    data = await lobby.db(repo.session, digest, now)
    if data is None:
        return None
    session = Session(digest, Account.of(data.account), data.csrf, data.expires_at)
    if session.expires_at - now < SESSION_TTL - RENEW_AFTER:
        session.expires_at = now + SESSION_TTL
        session.renewed = True
        await lobby.db(repo.extend_session, digest, session.expires_at)
    return session


async def current_account(request: Request) -> Account | None:
    """The account the request is logged into (a valid session cookie), or None: casual play."""
    session = await load_session(request)
    return session.account if session is not None else None


async def start_session(request: Request, account: Account) -> tuple[str, str]:
    """Log ``account`` in: a new session stored (hashed; expired ones forgotten); returns its token and
    its CSRF token (for :func:`set_cookies`)."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(24)
    now = time.time()
    lobby, repo = _storage(request)
    await lobby.db(repo.delete_expired_sessions, now)
    await lobby.db(repo.create_session, hash_session(token), account.id, csrf, now + SESSION_TTL)
    return token, csrf


async def end_session(request: Request, response: Response) -> None:
    """Log out: the session is deleted and its cookies cleared."""
    token = request.cookies.get(SESSION_COOKIE)
    if token and len(token) <= MAX_TOKEN:
        lobby, repo = _storage(request)
        await lobby.db(repo.delete_session, hash_session(token))
    clear_cookies(request, response)


def is_https(request: Request) -> bool:
    """The page was loaded over https: directly, or through a proxy that says so."""
    forwarded = (request.headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def set_cookies(request: Request, response: Response, token: str | None, csrf: str) -> None:
    """The session cookie (HttpOnly; not set again when ``token`` is None) and the readable CSRF cookie."""
    secure = is_https(request)
    age = int(SESSION_TTL)
    if token is not None:
        response.set_cookie(SESSION_COOKIE, token, max_age=age, path="/", httponly=True, samesite="lax",
                            secure=secure)
    response.set_cookie(CSRF_COOKIE, csrf, max_age=age, path="/", httponly=False, samesite="lax", secure=secure)


def renew_cookies(request: Request, response: Response, session: Session) -> None:
    """A renewed session's cookies get their full age again (the token itself is the one the browser sent)."""
    token = request.cookies.get(SESSION_COOKIE)
    if session.renewed and token:
        set_cookies(request, response, token, session.csrf)


def clear_cookies(request: Request, response: Response) -> None:
    secure = is_https(request)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=secure)
    response.delete_cookie(CSRF_COOKIE, path="/", samesite="lax", secure=secure)


class CsrfMiddleware:
    """Refuse a state-changing request made with a session cookie unless it carries the session's
    CSRF token in ``X-CSRF-Token`` (HTTP 403 ``bad_csrf``, in the request's language)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method", "GET").upper() in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if SESSION_COOKIE in request.cookies:
            session = await load_session(request)
            given = request.headers.get(CSRF_HEADER) or ""
            if session is not None and not secrets.compare_digest(given.encode("utf-8", "replace"),
                                                                  session.csrf.encode()):
                body = json.dumps(error_body(
                    Code.BAD_CSRF, "this request lacks the security token of your session: reload the page "
                    "and try again", lang=request_language(request))).encode()
                await send({"type": "http.response.start", "status": 403, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
