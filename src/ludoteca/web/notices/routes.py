"""The notices' HTTP API and pages (the account page's "Notices" part; docs/web.md, "Notices").

For the logged-in account (else 401 ``not_logged_in``); errors in the request's language:

- ``GET /api/notices`` → its preferences as only its owner sees them (``email`` included), whether this
  server sends mail (``mail_on``), the VAPID public key (``push_key``), how many browsers get pushes;
- ``POST /api/notices`` ``{"events"?, "channels"?, "quiet"?: {"start": "22:00", "end": "08:00"} | null,
  "timezone"?, "lang"?}`` → the same view;
- ``POST /api/notices/email`` ``{"email": "…" | null}``: a new address (unverified until its link is
  opened: a mail is sent to it), or none;
- ``POST /api/notices/verify`` ``{"token"}``: the link of that mail (the page ``/notices/verify``);
- ``POST /api/notices/webhook`` ``{"url": "…" | null}``: refused (400, nothing stored) unless http(s) and
  outside this server, loopback and private networks (webhook.py);
- ``POST /api/notices/push`` ``{"subscription": PushSubscription.toJSON()}``, ``POST /api/notices/push/remove``
  ``{"endpoint"}``;
- ``POST /notices/unsubscribe?token=…``: RFC 8058's one-click unsubscribe (no log-in: the token is signed),
  and the page ``GET /notices/unsubscribe?token=…`` that asks before doing it;
- ``GET /account``: the account page; ``GET /sw.js``: the service worker that shows pushes;
- ``POST /api/tables/<id>/webhook``: a turn-based table's own webhook, for its creator (table_hook.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from ludoteca.web.accounts.sessions import Account, current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.languages import request_language
from ludoteca.web.lobby.lobby import lobby_of, read_json
from ludoteca.web.notices import mail, table_hook, texts
from ludoteca.web.notices.prefs import Prefs, checked_choices
from ludoteca.web.notices.service import VERIFY_FOR, NoticeService
from ludoteca.web.notices.webhook import check_url

STATIC = Path(__file__).parent.parent / "static"
EMAIL_MAX = 254
VERIFY_EVERY = 30.0
"""Seconds between two verification mails for one account (whatever the addresses: in this worker)."""

log = logging.getLogger("ludoteca.notices")
router = APIRouter()
router.include_router(table_hook.router)  # POST /api/tables/<id>/webhook: a table's webhook, for its creator


def service_of(request: Request) -> NoticeService:
    found = getattr(request.app.state, "notices", None)
    if not isinstance(found, NoticeService):
        raise WebError(Code.NOT_FOUND, "notices are off on this server")
    if found.config.public_url is None:  # links point where the players reach the server
        found.base_url = str(request.base_url).rstrip("/")
    found.own_hosts.add(request.url.netloc)
    return found


async def _owner(request: Request) -> tuple[NoticeService, Account]:
    service = service_of(request)
    account = await current_account(request)
    if account is None:
        raise WebError(Code.NOT_LOGGED_IN, "log in first")
    return service, account


async def _db(request: Request, fn: Any, *args: Any) -> Any:
    return await lobby_of(request).db(fn, *args)


async def _view(request: Request, service: NoticeService, prefs: Prefs) -> dict[str, Any]:
    pushes = await _db(request, service.prefs.pushes, prefs.account_id)
    return prefs.owner_view(service.config.smtp is not None, service.keys.vapid_public, len(pushes))


async def _prefs(request: Request, service: NoticeService, account: Account) -> Prefs:
    prefs: Prefs = await _db(request, service.prefs.get, account.id, request_language(request))
    return prefs


def _body(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WebError(Code.BAD_REQUEST, "send your choices as a JSON object")
    return value


@router.get("/api/notices")
async def notices(request: Request) -> JSONResponse:
    service, account = await _owner(request)
    prefs = await _prefs(request, service, account)
    return JSONResponse(await _view(request, service, prefs), headers={"Cache-Control": "no-store"})


@router.post("/api/notices")
async def choose(request: Request) -> dict[str, Any]:
    service, account = await _owner(request)
    prefs = checked_choices(await _prefs(request, service, account), await read_json(request))
    prefs = await _db(request, service.prefs.put, prefs)
    return await _view(request, service, prefs)


def check_email(value: Any) -> str:
    """An e-mail address as stored; a clear WebError if it does not look like one."""
    if not isinstance(value, str) or not value.strip():
        raise WebError(Code.BAD_REQUEST, "type an e-mail address such as name@example.org")
    value = value.strip()
    local, _, domain = value.rpartition("@")
    if (len(value) > EMAIL_MAX or not local or "." not in domain.strip(".") or any(c.isspace() for c in value)
            or any(c in value for c in "<>,;\"()[]\\") or not all(c.isprintable() for c in value)):
        raise WebError(Code.BAD_REQUEST, "type an e-mail address such as name@example.org")
    return value


def _send_verification(service: NoticeService, prefs: Prefs, name: str, now: float) -> None:
    """The verification mail (blocking: run in a thread; a failure is logged)."""
    smtp = service.config.smtp
    if smtp is None or not prefs.email:
        return
    token = service.keys.sign("verify", {"a": prefs.account_id, "e": prefs.email}, ttl=VERIFY_FOR, now=now)
    lang = prefs.lang
    hours = int(VERIFY_FOR // 3600)
    message = mail.compose(prefs.email, texts.text(lang, texts.VERIFY_SUBJECT), lang, {
        "paragraphs": [texts.text(lang, texts.VERIFY_BODY, name=name), texts.plural(lang, texts.VERIFY_HOURS, hours)],
        "link": {"text": texts.text(lang, texts.VERIFY_BUTTON), "url": service.url(f"/notices/verify?token={token}")},
        "footer": texts.text(lang, texts.VERIFY_IGNORE)})
    try:
        smtp.send(message)
    except Exception as exc:
        log.warning("notices: the verification mail to account %s failed: %s", prefs.account_id, exc)


@router.post("/api/notices/email")
async def set_email(request: Request) -> dict[str, Any]:
    service, account = await _owner(request)
    body = _body(await read_json(request))
    prefs = await _prefs(request, service, account)
    if body.get("email") in (None, ""):
        prefs = await _db(request, service.prefs.put, replace(prefs, email=None, email_verified=False))
        return await _view(request, service, prefs)
    if service.config.smtp is None:
        raise WebError(Code.BAD_REQUEST, "this server sends no e-mail")
    email = check_email(body.get("email"))
    now = time.time()
    if now - service.verifications.get(account.id, 0.0) < VERIFY_EVERY:  # one mail at a time: no spamming others
        raise WebError(Code.RATE_LIMITED, "a confirmation mail was just sent: look in your mailbox")
    lang = prefs.lang if prefs.stored else request_language(request)
    prefs = await _db(request, service.prefs.put, replace(prefs, email=email, email_verified=False, lang=lang))
    service.verifications[account.id] = now
    asyncio.get_running_loop().run_in_executor(None, _send_verification, service, prefs, account.name, now)
    return await _view(request, service, prefs)


@router.post("/api/notices/verify")
async def verify(request: Request) -> dict[str, Any]:
    service = service_of(request)
    body = _body(await read_json(request))
    data = service.keys.unsign("verify", body.get("token"))
    if data is None or not isinstance(data.get("a"), int) or not isinstance(data.get("e"), str):
        raise WebError(Code.BAD_TOKEN, "this link is not valid any more: ask for a new one on your account page")
    if not await _db(request, service.prefs.set_email_verified, data["a"], data["e"]):
        raise WebError(Code.BAD_TOKEN, "this link is not valid any more: ask for a new one on your account page")
    return {"verified": True}


@router.post("/api/notices/webhook")
async def set_webhook(request: Request) -> dict[str, Any]:
    service, account = await _owner(request)
    body = _body(await read_json(request))
    url = body.get("url")
    if url not in (None, ""):
        url = await asyncio.to_thread(check_url, url, tuple(service.own_hosts), service.config.webhook_private)
    prefs = await _prefs(request, service, account)
    prefs = await _db(request, service.prefs.put, replace(prefs, webhook=url or None))
    return await _view(request, service, prefs)


@router.post("/api/notices/push")
async def add_push(request: Request) -> dict[str, Any]:
    service, account = await _owner(request)
    sub = _body(await read_json(request)).get("subscription")
    keys = sub.get("keys") if isinstance(sub, dict) else None
    endpoint = sub.get("endpoint") if isinstance(sub, dict) else None
    if (not isinstance(endpoint, str) or len(endpoint) > 2000 or not isinstance(keys, dict)
            or not all(isinstance(keys.get(k), str) and 0 < len(keys[k]) <= 200 for k in ("p256dh", "auth"))):
        raise WebError(Code.BAD_REQUEST, "this browser's subscription is not one the server can use")
    try:  # the push service is on the internet (or, with --webhook-private, on the club's network)
        await asyncio.to_thread(check_url, endpoint, tuple(service.own_hosts), service.config.webhook_private)
    except WebError:
        raise WebError(Code.BAD_REQUEST, "this browser's subscription is not one the server can use") from None
    await _db(request, service.prefs.add_push, account.id, endpoint, keys["p256dh"], keys["auth"])
    prefs = await _prefs(request, service, account)
    if not prefs.stored:  # the language the pushes will speak: the one of the page that asked
        prefs = await _db(request, service.prefs.put, prefs)
    return await _view(request, service, prefs)


@router.post("/api/notices/push/remove")
async def remove_push(request: Request) -> dict[str, Any]:
    service, account = await _owner(request)
    endpoint = _body(await read_json(request)).get("endpoint")
    if isinstance(endpoint, str):
        await _db(request, service.prefs.remove_push, endpoint, account.id)
    return await _view(request, service, await _prefs(request, service, account))


@router.post("/notices/unsubscribe")
async def unsubscribe(request: Request, token: str = "") -> JSONResponse:
    """RFC 8058: a POST (``List-Unsubscribe=One-Click``) to the signed link turns the mails off."""
    service = service_of(request)
    data = service.keys.unsign("unsubscribe", token)
    if data is None or not isinstance(data.get("a"), int):
        raise WebError(Code.BAD_TOKEN, "this link is not valid any more: ask for a new one on your account page")
    await _db(request, service.prefs.drop_channel, data["a"], str(data.get("c", "email")))
    return JSONResponse({"unsubscribed": True})


def _page() -> FileResponse:
    return FileResponse(STATIC / "account.html", headers={"Cache-Control": "no-cache"})


@router.get("/account", include_in_schema=False)
async def account_page() -> FileResponse:
    return _page()


@router.get("/notices/verify", include_in_schema=False)
async def verify_page() -> FileResponse:
    return _page()


@router.get("/notices/unsubscribe", include_in_schema=False)
async def unsubscribe_page() -> FileResponse:
    return _page()


@router.get("/sw.js", include_in_schema=False)
async def service_worker() -> Response:
    source = (STATIC / "js" / "sw.js").read_text(encoding="utf-8")
    return Response(source, media_type="text/javascript", headers={"Cache-Control": "no-cache"})
