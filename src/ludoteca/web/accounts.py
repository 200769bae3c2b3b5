"""Optional accounts (issue 14): sign up, log in, log out, who am I; the pages ``/login`` and ``/signup``.

Casual play with a typed name stays as it is; an account keeps a player's identity across browsers
and devices. HTTP API (JSON; errors in the requester's language, errors.py):

- ``POST /api/signup`` ``{"name", "password"}`` → 201 ``{"account": {"name", "created_at"}, "csrf"}``,
  logged in at once. A name has 3 to 32 characters: letters, digits, ``_ - .`` and single spaces
  inside; names are unique whatever their case. A password has 8 to 128 characters.
- ``POST /api/login`` (the same body) → 200 the same; ``POST /api/logout``;
- ``GET /api/me`` → ``{"account": {...} | null, "csrf": str | null}``;
- ``GET /api/accounts/{name}``: an account's public view (its name and creation time);
- ``POST /api/tables/{id}/my-seat``: the seat the logged-in account holds at that table, with a new
  secret token (a reload on another device resumes the seat; the token the other device held stops
  working) → ``{"seat": n | null, "token": str | null}``.

Passwords are hashed with argon2id (``argon2-cffi``'s ``PasswordHasher``, its default parameters;
rehashed at the next log-in when they change), in :data:`HASH_THREADS` threads off the event loop,
at most :data:`MAX_HASHING` waiting (more: 503 ``busy``). Sessions and CSRF: sessions.py.

Log-in limits, **in memory, per worker** (:class:`FailureLimiter`, bounded to :data:`MAX_KEYS`
keys): :data:`LOGIN_FAILURES` failed log-ins in :data:`LOGIN_WINDOW` seconds from one address, or
for one account name, refuse the next ones (429 with "try again in N min") until the oldest failure
is :data:`LOGIN_WINDOW` old; a refused attempt costs no hashing. Sign-ups: :data:`SIGNUPS` per
address per :data:`SIGNUP_WINDOW`. With N workers behind a round-robin proxy an attacker gets at
most N times the limit.
"""

from __future__ import annotations

import asyncio
import math
import time
import unicodedata
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse

from ludoteca.web.errors import Code, WebError
from ludoteca.web.lobby import lobby_of, read_json, table_or_404
from ludoteca.web.repository import DuplicateName, Repository
from ludoteca.web.sessions import (
    Account,
    current_account,
    end_session,
    load_session,
    renew_cookies,
    set_cookies,
    start_session,
)

__all__ = ["Account", "account_by_name", "current_account", "router"]

STATIC = Path(__file__).parent / "static"
NAME_MIN, NAME_MAX = 3, 32
PASSWORD_MIN, PASSWORD_MAX = 8, 128
NAME_SIGNS = frozenset("_-. ")
LOGIN_FAILURES = 10
LOGIN_WINDOW = 600.0
SIGNUPS = 20
SIGNUP_WINDOW = 3600.0
MAX_KEYS = 10_000
HASH_THREADS = 2
MAX_HASHING = 32

hasher = PasswordHasher()
_hash_pool = ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="ludoteca-argon2")
_hashing = 0
_dummy_hash: str | None = None


class FailureLimiter:
    """At most ``limit`` events per key in any ``window`` seconds (failed log-ins, sign-ups), in
    memory: at most ``max_keys`` keys (the least recently used are forgotten), ``limit`` stamps each."""

    def __init__(self, limit: int, window: float, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.window = window
        self.max_keys = max_keys
        self.clock = clock
        self._events: OrderedDict[str, deque[float]] = OrderedDict()

    def wait(self, key: str, now: float | None = None) -> float:
        """Seconds before ``key`` may try again (0: now)."""
        now = self.clock() if now is None else now
        stamps = self._events.get(key)
        if stamps is None:
            return 0.0
        while stamps and stamps[0] <= now - self.window:
            stamps.popleft()
        if not stamps:
            del self._events[key]
            return 0.0
        return max(0.0, stamps[0] + self.window - now) if len(stamps) >= self.limit else 0.0

    def add(self, key: str, now: float | None = None) -> None:
        now = self.clock() if now is None else now
        stamps = self._events.get(key)
        if stamps is None:
            stamps = self._events[key] = deque(maxlen=self.limit)
        stamps.append(now)
        self._events.move_to_end(key)
        while len(self._events) > self.max_keys:
            self._events.popitem(last=False)

    def clear(self, key: str) -> None:
        self._events.pop(key, None)


def limiters(request: Request) -> tuple[FailureLimiter, FailureLimiter]:
    """This worker's (log-in failures, sign-ups) limiters."""
    state = request.app.state
    if not hasattr(state, "account_limits"):
        state.account_limits = (FailureLimiter(LOGIN_FAILURES, LOGIN_WINDOW), FailureLimiter(SIGNUPS, SIGNUP_WINDOW))
    found: tuple[FailureLimiter, FailureLimiter] = state.account_limits
    return found


# --- names and passwords ---------------------------------------------------------------------------------
def check_name(name: Any) -> str:
    """The account name as stored (NFC, without surrounding spaces); WebError ``bad_name`` if it is not one."""
    if not isinstance(name, str):
        raise WebError(Code.BAD_NAME, "an account name is text")
    name = unicodedata.normalize("NFC", name).strip()
    if not NAME_MIN <= len(name) <= NAME_MAX:
        raise WebError(Code.BAD_NAME, "an account name has {min} to {max} characters", min=NAME_MIN, max=NAME_MAX)
    if any(not (c.isalnum() or c in NAME_SIGNS) for c in name) or "  " in name:
        raise WebError(Code.BAD_NAME, "an account name has letters, digits, '_', '-', '.' and single spaces only")
    return name


def check_password(password: Any) -> str:
    if not isinstance(password, str):
        raise WebError(Code.BAD_PASSWORD, "a password is text")
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise WebError(Code.BAD_PASSWORD, "a password has {min} to {max} characters", min=PASSWORD_MIN,
                       max=PASSWORD_MAX)
    return password


async def _in_hash_pool(fn: Any, *args: Any) -> Any:
    """Run an argon2 call in the hashing threads (bounded queue: 503 ``busy`` beyond it)."""
    global _hashing
    if _hashing >= MAX_HASHING:
        raise WebError(Code.BUSY, "the server is busy: try again in a moment", headers={"Retry-After": "2"})
    _hashing += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(_hash_pool, lambda: fn(*args))
    finally:
        _hashing -= 1


async def hash_password(password: str) -> str:
    result: str = await _in_hash_pool(hasher.hash, password)
    return result


def _verify(stored: str, password: str) -> bool:
    try:
        return hasher.verify(stored, password)
    except (VerificationError, InvalidHashError):
        return False


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored``; with no account (None) a dummy hash is checked, so that
    a log-in costs the same time whether the name exists or not."""
    global _dummy_hash
    if stored is None:
        if _dummy_hash is None:
            _dummy_hash = await hash_password("not the password of anyone")
        await _in_hash_pool(_verify, _dummy_hash, password)
        return False
    ok: bool = await _in_hash_pool(_verify, stored, password)
    return ok


# --- what other modules call ---------------------------------------------------------------------------
def account_by_name(repo: Repository, name: str) -> Account | None:
    """The account named ``name`` (whatever its case), or None. Synchronous (a storage call: run it
    through ``lobby.db`` from the event loop)."""
    data = repo.account_by_name(name) if isinstance(name, str) and len(name) <= 4 * NAME_MAX else None
    return Account.of(data) if data is not None else None


# --- routes ----------------------------------------------------------------------------------------------
router = APIRouter()


def _address(request: Request) -> str:
    return request.client.host if request.client else "?"


async def _credentials(request: Request) -> tuple[Any, Any]:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "send {\"name\": \"...\", \"password\": \"...\"}")
    return body.get("name"), body.get("password")


async def _logged_in(request: Request, account: Account, status: int) -> JSONResponse:
    token, csrf = await start_session(request, account)
    response = JSONResponse({"account": account.public(), "csrf": csrf}, status_code=status)
    set_cookies(request, response, token, csrf)
    return response


@router.post("/api/signup")
async def signup(request: Request) -> JSONResponse:
    name, password = await _credentials(request)
    name, password = check_name(name), check_password(password)
    _, signups = limiters(request)
    address = _address(request)
    wait = signups.wait(address)
    if wait > 0:
        minutes = math.ceil(wait / 60)
        raise WebError(Code.RATE_LIMITED, "too many accounts created from your address: try again in {minutes} min",
                       headers={"Retry-After": str(math.ceil(wait))}, minutes=minutes)
    lobby = lobby_of(request)
    if await lobby.db(lobby.repo.account_by_name, name) is not None:
        raise WebError(Code.NAME_TAKEN, "the name {name} is taken: choose another one", name=name)
    digest = await hash_password(password)
    try:
        account_id = await lobby.db(lobby.repo.create_account, name, digest)
    except DuplicateName:
        raise WebError(Code.NAME_TAKEN, "the name {name} is taken: choose another one", name=name) from None
    signups.add(address)
    data = await lobby.db(lobby.repo.account_by_id, account_id)
    return await _logged_in(request, Account.of(data), 201)


@router.post("/api/login")
async def login(request: Request) -> JSONResponse:
    name, password = await _credentials(request)
    if not isinstance(name, str) or not isinstance(password, str) or not name.strip() or not password:
        raise WebError(Code.BAD_REQUEST, "give your account name and your password")
    failures, _ = limiters(request)
    name = unicodedata.normalize("NFC", name).strip()[:4 * NAME_MAX]
    keys = (f"address:{_address(request)}", f"name:{name.casefold()}")
    wait = max(failures.wait(k) for k in keys)
    if wait > 0:
        raise WebError(Code.RATE_LIMITED, "too many failed log-ins: try again in {minutes} min",
                       headers={"Retry-After": str(math.ceil(wait))}, minutes=math.ceil(wait / 60))
    lobby = lobby_of(request)
    data = await lobby.db(lobby.repo.account_by_name, name) if len(password) <= PASSWORD_MAX else None
    ok = await verify_password(data.password_hash if data is not None else None, password[:PASSWORD_MAX])
    if data is None or not ok:
        for k in keys:
            failures.add(k)
        raise WebError(Code.BAD_LOGIN, "wrong account name or password")
    failures.clear(keys[1])
    if hasher.check_needs_rehash(data.password_hash):
        await lobby.db(lobby.repo.set_password_hash, data.id, await hash_password(password))
    return await _logged_in(request, Account.of(data), 200)


@router.post("/api/logout")
async def logout(request: Request) -> JSONResponse:
    response = JSONResponse({"account": None, "csrf": None})
    await end_session(request, response)
    return response


@router.get("/api/me")
async def me(request: Request) -> JSONResponse:
    session = await load_session(request)
    if session is None:
        return JSONResponse({"account": None, "csrf": None}, headers={"Cache-Control": "no-store"})
    response = JSONResponse({"account": session.account.public(), "csrf": session.csrf},
                            headers={"Cache-Control": "no-store"})
    renew_cookies(request, response, session)
    return response


@router.get("/api/accounts/{name}")
async def account_page_data(request: Request, name: str) -> dict[str, Any]:
    lobby = lobby_of(request)
    account = await lobby.db(account_by_name, lobby.repo, name)
    if account is None:
        raise WebError(Code.NOT_FOUND, "there is no account {name}", name=name[:40])
    return account.public()


@router.post("/api/tables/{table_id}/my-seat")
async def my_seat(request: Request, table_id: str) -> dict[str, Any]:
    account = await current_account(request)
    if account is None:
        raise WebError(Code.NOT_LOGGED_IN, "log in first")
    table = await table_or_404(request, table_id)
    found = await table.account_seat(account.id)
    return {"seat": found[0] if found else None, "token": found[1] if found else None}


@router.get("/login", include_in_schema=False)
async def login_page() -> FileResponse:
    return FileResponse(STATIC / "account.html", headers={"Cache-Control": "no-cache"})


@router.get("/signup", include_in_schema=False)
async def signup_page() -> FileResponse:
    return FileResponse(STATIC / "account.html", headers={"Cache-Control": "no-cache"})
