"""The lobby's HTTP API (``/api/games``, ``/api/tables`` and each table's join, rematch, record and
replay): :data:`router`, included by ``create_app``; :class:`~ludoteca.web.lobby.lobby.Lobby` does the work."""

from __future__ import annotations

import contextlib
import functools
import math
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ludoteca.core.game import Game
from ludoteca.i18n import Message, web_text
from ludoteca.registry import GAMES, game_class
from ludoteca.web.accounts import ratings
from ludoteca.web.accounts.sessions import current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.languages import request_language
from ludoteca.web.limits import SERVER_ONLY_OPTIONS, BadInput, parse_json, shown_id, valid_table_id
from ludoteca.web.lobby.option_words import catalogue_entry
from ludoteca.web.master.ai import SOLVED_LEVELS, level_descriptions, level_ratings
from ludoteca.web.master.master import OVER
from ludoteca.web.master.tables import Table
from ludoteca.web.notices.service import learn_host
from ludoteca.web.security import stats_allowed

if TYPE_CHECKING:
    from ludoteca.web.lobby.lobby import Lobby

MAX_BODY = 64 * 1024
"""Largest HTTP request body."""
MAX_IDS = 50
"""Most table ids one ``GET /api/tables?ids=`` asks about."""


def _game_entry(name: str, cls: type[Game], lang: str | None = None) -> dict[str, Any]:
    options = [catalogue_entry(cls, opt, lang) for opt in cls.OPTIONS
               if opt.name not in SERVER_ONLY_OPTIONS or opt.kind == "file"]
    defaults = {}
    for n in range(cls.min_players, cls.max_players + 1):
        with contextlib.suppress(ValueError):
            defaults[str(n)] = {k: v for k, v in cls(players=n).record_options().items()
                                if k not in SERVER_ONLY_OPTIONS and k != "players"}
    doc = (cls.__doc__ or "").strip().splitlines()
    return {"name": name, "title": cls.title, "min_players": cls.min_players, "max_players": cls.max_players,
            "options": options, "defaults": defaults, "doc": doc[0] if doc else cls.title}


@functools.cache
def game_catalog(lang: str | None = None) -> list[dict[str, Any]]:
    """The games, with their players and the options the web form may set (their labels and help
    texts in ``lang``: each game's own catalog, games/<name>/locale)."""
    return [_game_entry(name, game_class(name), lang) for name in GAMES]



# --- HTTP routes --------------------------------------------------------------------------------------------
router = APIRouter(prefix="/api")


def lobby_of(request: Request) -> Lobby:
    lobby: Lobby = request.app.state.lobby
    return lobby


async def read_json(request: Request) -> Any:
    """The request body as JSON (at most ``MAX_BODY`` bytes; an empty body is ``{}``)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise WebError(Code.TOO_LARGE, "the request body is limited to {limit} bytes", limit=MAX_BODY)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise WebError(Code.TOO_LARGE, "the request body is limited to {limit} bytes", limit=MAX_BODY)
    if not body:
        return {}
    try:
        return parse_json(bytes(body))
    except BadInput as exc:
        raise WebError(Code(exc.code), "the request body: {reason}", reason=Message(exc.template, exc.params)) from None


async def table_or_404(request: Request, table_id: str) -> Table:
    table = await lobby_of(request).get(table_id)
    if table is None:
        raise WebError(Code.NOT_FOUND, "there is no table {table}", table=shown_id(table_id))
    return table


@router.get("/games")
async def games(request: Request) -> dict[str, Any]:
    levels = lobby_of(request).levels()
    lang = request_language(request)
    return {"games": game_catalog(lang), "levels": levels,
            # levels offered only where the table's game says they can play (POST /api/levels: lobby/levels.py)
            "solved_levels": [level for level in levels if level in SOLVED_LEVELS],
            "level_info": {level: web_text(lang, text) for level, text in level_descriptions(levels).items()},
            # each level's measured rating per game and player count (agents/ladder.py)
            "level_ratings": {name: {str(n): r for n in range(cls.min_players, cls.max_players + 1)
                                     if (r := level_ratings(name, n))}
                              for name in GAMES if (cls := game_class(name))}}


@router.get("/stats")
async def stats(request: Request) -> dict[str, Any]:
    """Server-side time to check, store and broadcast the last actions (for operators and load
    tests): only with ``stats_token``, sent as ``Authorization: Bearer TOKEN``."""
    if not stats_allowed(request.headers.get("authorization"), request.app.state.stats_token):
        raise WebError(Code.NOT_FOUND, "there is no such page")
    lobby = lobby_of(request)
    times = sorted(lobby.timings)

    def ms(q: float) -> float | None:
        return round(1000 * times[min(len(times) - 1, int(q * len(times)))], 3) if times else None

    return {"tables_in_memory": len(lobby.tables), "actions_timed": len(times), "p50_ms": ms(0.5),
            "p99_ms": ms(0.99), "max_ms": round(1000 * times[-1], 3) if times else None,
            "ai_searches_waiting": lobby.ai.waiting(), "ai_searches_peak": lobby.ai.peak}


@router.get("/tables")
async def tables(request: Request, ids: str | None = None, pace: str | None = None) -> dict[str, Any]:
    """The live tables (``pace=live`` or ``pace=turn-based``: those only); with ``ids=a,b,c`` (at most
    ``MAX_IDS``) those tables instead, whatever their state."""
    if ids is None:
        if pace not in (None, "live", "turn-based"):
            raise WebError(Code.BAD_REQUEST, "pace: 'live' or 'turn-based'")
        listed = await lobby_of(request).list_tables()
        return {"tables": [t for t in listed if pace is None or t.get("pace", "live") == pace]}
    wanted = list(dict.fromkeys(i for i in ids.split(",") if i))
    if len(ids) > MAX_IDS * 33 or len(wanted) > MAX_IDS or not all(valid_table_id(i) for i in wanted):
        raise WebError(Code.BAD_REQUEST, "ids: at most {n} table ids, separated by commas", n=MAX_IDS)
    return {"tables": await lobby_of(request).tables_by_id(wanted) if wanted else []}


@router.post("/tables")
async def create_table(request: Request) -> JSONResponse:
    wait = request.app.state.creations.take(request.client.host if request.client else "?")
    if wait > 0:
        raise WebError(Code.RATE_LIMITED, "too many tables created from your address: try again in {seconds} s",
                       headers={"Retry-After": str(math.ceil(wait))}, seconds=math.ceil(wait))
    body, account = await read_json(request), await current_account(request)
    ratings.check_creation(body, account)  # a rated table needs a logged-in creator
    learn_host(request.app.state, request.url.netloc)  # a table's webhook cannot point back here
    table, seat, token = await lobby_of(request).create(body, lang=request_language(request), account=account)
    return JSONResponse({"id": table.id, "url": f"/t/{table.id}", "seat": seat, "token": token,
                         "table": table.summary()}, status_code=201)


@router.get("/tables/{table_id}")
async def get_table(request: Request, table_id: str) -> dict[str, Any]:
    return (await table_or_404(request, table_id)).summary()


@router.post("/tables/{table_id}/join")
async def join(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "send {\"seat\": n, \"name\": \"...\"}")
    account = await current_account(request)  # logged in: the seat takes the account's name and follows it
    ratings.check_seat(table.settings, account, table.seats)  # a rated table: logged-in players only
    token = await table.join(body.get("seat"), account.name if account else body.get("name"), key=body.get("key"),
                             account_id=account.id if account else None)
    return {"id": table.id, "seat": body.get("seat"), "token": token}


@router.post("/tables/{table_id}/rematch")
async def rematch(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    token = body.get("token") if isinstance(body, dict) else None
    new, seat, new_token = await lobby_of(request).rematch(table, token)
    return {"id": new.id, "url": f"/t/{new.id}", "seat": seat, "token": new_token}


@router.get("/tables/{table_id}/record")
async def record(request: Request, table_id: str) -> Response:
    table = await table_or_404(request, table_id)
    if table.status != OVER:
        raise WebError(Code.NOT_OVER, "the record can be downloaded once the game is over")
    text = await lobby_of(request).build(lambda: table.record().dumps() + "\n")
    filename = f"ludoteca-{table.game_name}-{table.id}.json"
    return Response(text, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


@router.get("/tables/{table_id}/replay")
async def replay(request: Request, table_id: str) -> dict[str, Any]:
    table = await table_or_404(request, table_id)
    if table.status != OVER:
        raise WebError(Code.NOT_OVER, "the replay is available once the game is over")
    data: dict[str, Any] = await lobby_of(request).build(table.replay_data)
    return data
