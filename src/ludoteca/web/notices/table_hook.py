"""A turn-based table's own webhook, for its creator only (the table page's "Club webhook" line).

``POST /api/tables/<id>/webhook`` ``{"token"?: seat token, "url"?: "…" | null}`` — the creator is the
account that made the table (its session) or whoever holds the seat they took when making it (that seat's
token, in the body, never in an address); both are stored with the table's deadline row
(web/repository/deadlines.py). Without ``"url"`` it answers what the page shows: ``{"webhook": {"host":
"discord.com"} | null}`` — the host only, never the URL (it carries the channel's secret). With a ``"url"``
it replaces the webhook, checked as at creation (web/master/deadlines.py ``hook_of``: a clear 400
``bad_options`` in the request's language, nothing changed); ``null`` or ``""`` removes it (the notices
not sent yet are dropped). Anyone else gets the same 403 ``bad_token`` whether the table has a webhook or
not (nobody else learns that it exists); a live table has none to see.
"""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request

from ludoteca.web.accounts.sessions import current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.languages import request_language
from ludoteca.web.lobby.routes import lobby_of, read_json, table_or_404
from ludoteca.web.master import pace
from ludoteca.web.master.tables import Table, hash_token
from ludoteca.web.notices.service import learn_host

router = APIRouter()
TOKEN_MAX = 200


def host_of(url: str | None) -> dict[str, str] | None:
    """What the creator is shown of a webhook: its host name."""
    if not url:
        return None
    return {"host": (urlsplit(url).hostname or "")[:253]}


async def _is_creator(request: Request, table: Table, creator: tuple[int | None, int | None] | None,
                      token: Any) -> bool:
    if creator is None:
        return False
    account_id, seat = creator
    if seat is not None and 0 <= seat < len(table.seats) and isinstance(token, str) and 0 < len(token) <= TOKEN_MAX:
        held = table.seats[seat].token_hash
        if held is not None and secrets.compare_digest(held, hash_token(token)):
            return True
    if account_id is not None:
        account = await current_account(request)
        return account is not None and account.id == account_id
    return False


@router.post("/api/tables/{table_id}/webhook")
async def table_webhook(request: Request, table_id: str) -> dict[str, Any]:
    """See or change a turn-based table's webhook (its creator only)."""
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "a table request is a JSON object")
    lobby = lobby_of(request)
    store = lobby.deadlines.store
    creator = await lobby.db(store.creator, table.id) if pace.turn_based(table.settings) else None
    if not await _is_creator(request, table, creator, body.get("token")):
        raise WebError(Code.BAD_TOKEN, "only the creator of this table can see or change its webhook")
    if "url" in body:
        learn_host(request.app.state, request.url.netloc)  # never back to this server
        hook = await lobby.deadlines.hook_of({"webhook": body["url"]}, request_language(request))
        await lobby.db(store.set_hook, table.id, hook, time.time())
        return {"webhook": host_of(hook[0] if hook is not None else None)}
    return {"webhook": host_of(await lobby.db(store.hook, table.id))}
