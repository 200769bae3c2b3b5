"""Optional accounts: sign up, log in, log out, who am I; the pages ``/login`` and ``/signup``.

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

Log-in limits, **shared by every worker** (the database's ``ludo_attempts``, web/accounts/attempts.py), that slow
guessing without locking the owner out: failures are counted per (name, address), per address and
per name over :data:`LOGIN_WINDOW` seconds. :data:`PAIR_FAILURES` failures for one name from one
address, or :data:`ADDRESS_FAILURES` from one address whatever the names, refuse that address's next
attempts (429 "try again in N min", no hashing). :data:`NAME_FAILURES` failures for a name, from any
addresses, only slow it down: from then on an address that already failed for that name in the window
is refused, while an address with no recent failure for it is let through and checked as usual, so
the right password from the owner's own device still logs in. An attacker then gets one guess per
address and window. A successful log-in forgets that (name, address)'s failures. Sign-ups: a token
bucket per address and worker, :data:`SIGNUPS` at once refilled over :data:`SIGNUP_WINDOW` seconds.
The address is the connection's, or the one a trusted proxy forwarded (``serve --forwarded-allow-ips``).
"""

from __future__ import annotations

import asyncio
import math
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse

from ludoteca.web.accounts.attempts import Attempts, Count
from ludoteca.web.accounts.sessions import (
    Account,
    current_account,
    end_session,
    load_session,
    renew_cookies,
    set_cookies,
    start_session,
)
from ludoteca.web.errors import Code, WebError
from ludoteca.web.limits import ClientBuckets
from ludoteca.web.lobby.lobby import lobby_of, read_json, table_or_404
from ludoteca.web.repository.store import DuplicateName, Repository

__all__ = ["Account", "account_by_name", "current_account", "router"]

STATIC = Path(__file__).parent.parent / "static"
NAME_MIN, NAME_MAX = 3, 32
PASSWORD_MIN, PASSWORD_MAX = 8, 128
NAME_SIGNS = frozenset("_-. ")
LOGIN_WINDOW = 600.0
"""Seconds over which failed log-ins are counted."""
PAIR_FAILURES = 5
"""Failed log-ins for one name from one address that refuse that address for that name."""
ADDRESS_FAILURES = 30
"""Failed log-ins from one address, whatever the names, that refuse the address (a club behind one
Wi-Fi shares it: high enough for people's typos)."""
NAME_FAILURES = 10
"""Failed log-ins for one name, from any addresses, after which only addresses with no recent
failure for it may try (the owner's own device is never refused by others' guesses)."""
SIGNUPS = 20
SIGNUP_WINDOW = 3600.0
HASH_THREADS = 2
MAX_HASHING = 32

hasher = PasswordHasher()
_hash_pool = ThreadPoolExecutor(max_workers=HASH_THREADS, thread_name_prefix="ludoteca-argon2")
_hashing = 0
_dummy_hash: str | None = None


def attempts(request: Request) -> Attempts:
    """This server's counted attempts (in its database, shared with the other workers)."""
    state = request.app.state
    found = getattr(state, "attempts", None)
    if not isinstance(found, Attempts):
        found = state.attempts = Attempts(lobby_of(request).repo)
    return found


def signups(request: Request) -> ClientBuckets:
    """This worker's sign-up buckets: :data:`SIGNUPS` at once per address, refilled over
    :data:`SIGNUP_WINDOW` (in memory, like table creations)."""
    state = request.app.state
    found = getattr(state, "signups", None)
    if not isinstance(found, ClientBuckets):
        found = state.signups = ClientBuckets(SIGNUPS * 60 / SIGNUP_WINDOW, SIGNUPS)
    return found


def _too_many(wait: float) -> WebError:
    return WebError(Code.RATE_LIMITED, "too many failed log-ins: try again in {minutes} min",
                    headers={"Retry-After": str(max(1, math.ceil(wait)))}, minutes=max(1, math.ceil(wait / 60)))


def login_wait(counts: dict[str, Count], keys: LoginKeys, now: float) -> float:
    """Seconds before this attempt may be checked (0: now), from the failures counted under ``keys``."""
    pair, address, name = counts[keys.pair], counts[keys.address], counts[keys.name]
    waits = [0.0]
    if pair.n >= PAIR_FAILURES:
        waits.append(pair.oldest + LOGIN_WINDOW - now)
    if address.n >= ADDRESS_FAILURES:
        waits.append(address.oldest + LOGIN_WINDOW - now)
    if name.n >= NAME_FAILURES and pair.n > 0:  # the name is being guessed: this address already failed
        waits.append(pair.newest + LOGIN_WINDOW - now)
    return max(waits)


@dataclass(frozen=True)
class LoginKeys:
    """The keys a log-in's failures are counted under."""

    pair: str
    address: str
    name: str

    @classmethod
    def of(cls, name: str, address: str) -> LoginKeys:
        folded = name.casefold()
        return cls(f"login:{folded}|{address}", f"login-address:{address}", f"login-name:{folded}")


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
    lobby = lobby_of(request)
    wait = signups(request).take(_address(request))
    if wait > 0:
        minutes = math.ceil(wait / 60)
        raise WebError(Code.RATE_LIMITED, "too many accounts created from your address: try again in {minutes} min",
                       headers={"Retry-After": str(math.ceil(wait))}, minutes=minutes)
    if await lobby.db(lobby.repo.account_by_name, name) is not None:
        raise WebError(Code.NAME_TAKEN, "the name {name} is taken: choose another one", name=name)
    digest = await hash_password(password)
    try:
        account_id = await lobby.db(lobby.repo.create_account, name, digest)
    except DuplicateName:
        raise WebError(Code.NAME_TAKEN, "the name {name} is taken: choose another one", name=name) from None
    data = await lobby.db(lobby.repo.account_by_id, account_id)
    return await _logged_in(request, Account.of(data), 201)


@router.post("/api/login")
async def login(request: Request) -> JSONResponse:
    name, password = await _credentials(request)
    if not isinstance(name, str) or not isinstance(password, str) or not name.strip() or not password:
        raise WebError(Code.BAD_REQUEST, "give your account name and your password")
    name = unicodedata.normalize("NFC", name).strip()[:4 * NAME_MAX]
    lobby, counted = lobby_of(request), attempts(request)
    keys = LoginKeys.of(name, _address(request))
    counts = await lobby.db(counted.counts, [keys.pair, keys.address, keys.name], LOGIN_WINDOW)
    wait = login_wait(counts, keys, counted.clock())
    if wait > 0:
        raise _too_many(wait)
    data = await lobby.db(lobby.repo.account_by_name, name) if len(password) <= PASSWORD_MAX else None
    ok = await verify_password(data.password_hash if data is not None else None, password[:PASSWORD_MAX])
    if data is None or not ok:
        await lobby.db(counted.add, [keys.pair, keys.address, keys.name])
        raise WebError(Code.BAD_LOGIN, "wrong account name or password")
    if data.suspended_at is not None:
        raise WebError(Code.SUSPENDED, "this account is suspended by the club's moderators")
    if counts[keys.pair].n:
        await lobby.db(counted.clear, keys.pair)
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
