"""The web server: lobby, tables, replays (HTTP + websockets), all served locally.

``create_app()`` builds the FastAPI application; ``ludoteca serve`` runs it with uvicorn.

HTTP API (JSON):

- ``GET /api/games``: the games, their player counts and options, the AI levels;
- ``POST /api/levels`` (``{"game", "players", "options"}``): the AI levels such a table may seat
  (a solved game's ``perfect`` only where it is solved), and why the others cannot;
- ``GET /api/tables``: recent tables; ``POST /api/tables``: create one
  (``{"game", "players", "options", "seats": [{"kind": "open"} | {"kind": "ai", "level"}],
  "sit": seat?, "name": str?, "unlisted": bool?}`` → ``{"id", "url", "seat", "token"}``; an unlisted
  table is not in ``GET /api/tables``);
- ``GET /api/tables/{id}``; ``POST /api/tables/{id}/join`` (``{"seat", "name", "key"?}`` → ``{"token"}``;
  with a ``key`` the client chose, sending the same join again answers the same token);
- ``POST /api/tables/{id}/rematch`` (``{"token"?}``; the previous players' seats are kept for their
  tokens for ``rematch_hold`` seconds);
- ``GET /api/stats``: only with ``stats_token`` (``Authorization: Bearer TOKEN``), else 404;
- rated tables (``"rated": true`` at creation: a logged-in creator and players), ``GET /api/players/{name}``
  (a profile: ratings, their history, finished tables) and ``GET /api/leaderboard?game=&players=&limit=``
  (profiles.py, ratings.py; the pages ``/players/{name}`` and ``/leaderboard``);
- ``GET /api/tables/{id}/record`` (the ludoteca-record JSON) and ``/replay`` (every position),
  once the game is over.
- moderators (moderation.py; the admin role): ``GET /api/admin`` (who is at a table, recent chat,
  the moderation log), ``GET /api/admin/accounts?q=``, ``POST /api/admin/tables/{id}/close``,
  ``POST /api/admin/chat/{note}/remove``, ``POST /api/admin/accounts/{name}/rename`` and ``…/suspend``;
  the page ``/admin``.

Pages: the lobby ``/``, a table ``/t/{id}``, a replay ``/replay/{id}``, each game's rules
``/rules/{game}?lang=en|it`` (rules.py: rendered from the game's ``rules/<lang>.md``), each game's
guided first game ``/learn/{game}`` (guide.py, with its API ``/api/guide/{game}``).
The browser's texts in Italian: ``GET /i18n/{lang}.json`` (languages.py).

Websocket ``/ws/{id}``: sockets.py. Each game's browser client (its board drawing and the texts of
its events) is ``GET /games/{name}/client.js``, read from the game's own package.

The parts (docs/architecture.md): the lobby (lobby.py: tables and the HTTP routes), each table's
master (master.py: the only way a position changes) and hub (hub.py: connections and per-viewer
messages), the repository (repository.py: SQLAlchemy Core, group commit), the error catalogue
(errors.py).

Websockets and state-changing requests from pages of other origins are refused, and every
response carries a Content-Security-Policy and anti-framing headers (security.py).
"""

from __future__ import annotations

import importlib.resources
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware

from ludoteca.registry import GAMES, game_class
from ludoteca.web import languages, metrics, pauses
from ludoteca.web.accounts import accounts, moderation
from ludoteca.web.accounts.profiles import router as profiles_router
from ludoteca.web.accounts.sessions import CsrfMiddleware
from ludoteca.web.analysis import routes as analysis_routes
from ludoteca.web.analysis.service import DEFAULT_MODE as ANALYSIS_DEFAULT
from ludoteca.web.analysis.setup import for_lobby as analysis_for
from ludoteca.web.errors import Code, WebError, error_body
from ludoteca.web.hub import health, sockets
from ludoteca.web.hub.bus import new_worker_id
from ludoteca.web.hub.cluster import Cluster
from ludoteca.web.hub.sockets import MAX_MESSAGE
from ludoteca.web.labs import setup as labs
from ludoteca.web.limits import ClientBuckets, ServerLimits, valid_table_id
from ludoteca.web.lobby import guide, levels, lobby, my_tables, rules
from ludoteca.web.lobby.lobby import REMATCH_HOLD, Lobby, lobby_of
from ludoteca.web.lobby.notfound import TABLE as TABLE_NOT_FOUND
from ludoteca.web.lobby.notfound import not_found, unknown_address
from ludoteca.web.master.tables import STALL_AFTER
from ludoteca.web.notices import routes as notices_routes
from ludoteca.web.notices import setup as notices_setup
from ludoteca.web.repository.store import Repository, database_url
from ludoteca.web.security import SecurityMiddleware

log = logging.getLogger("ludoteca.web")

__all__ = ["MAX_MESSAGE", "create_app"]

STATIC = Path(__file__).parent / "static"
RATE = 20.0
BURST = 40.0
"""Messages per second per connection, and the burst allowed."""

pages = APIRouter(include_in_schema=False)


@pages.get("/")
async def lobby_page() -> FileResponse:
    return FileResponse(STATIC / "index.html")


@pages.get("/t/{table_id}", response_model=None)
async def table_page(request: Request, table_id: str) -> FileResponse | HTMLResponse:
    lobby = lobby_of(request)
    if not valid_table_id(table_id) or (table_id not in lobby.tables
                                        and not await lobby.db(lobby.repo.seats_of, table_id)):
        return not_found(request, TABLE_NOT_FOUND, table_id)  # a page that says so, status 404
    return FileResponse(STATIC / "table.html")


@pages.get("/replay/{table_id}")
async def replay_page(table_id: str) -> FileResponse:
    return FileResponse(STATIC / "replay.html")


def _rules_response(request: Request, lang: str | None, make: Callable[[str], tuple[int, str]]) -> HTMLResponse:
    """A rules page in the language the request asks for (rules.py); a language chosen with
    ``?lang=`` is kept in a cookie."""
    choice = rules.choose_language(lang, request.cookies.get(rules.COOKIE), request.headers.get("accept-language"))
    status, page = make(choice.lang)
    response = HTMLResponse(page, status_code=status, headers={
        "Content-Language": choice.lang, "Vary": "Accept-Language, Cookie", "Cache-Control": "no-cache"})
    if choice.chosen:
        response.set_cookie(rules.COOKIE, choice.lang, max_age=rules.COOKIE_AGE, samesite="lax")
    return response


@pages.get("/rules")
async def rules_index(request: Request, lang: str | None = None) -> HTMLResponse:
    return _rules_response(request, lang, lambda code: (200, rules.index_page(code)))


@pages.get("/rules/{game}")
async def rules_page(request: Request, game: str, lang: str | None = None) -> HTMLResponse:
    """A game's rules page (``?lang=en|it``), rendered from the game's ``rules/<lang>.md``."""
    name = game.lower() if game.lower() in GAMES else game
    return _rules_response(request, lang, lambda code: rules.rules_page(name, code))


@pages.get("/rules/{game}/{file}")
async def rules_picture(game: str, file: str) -> Response:
    """A picture shown by a rules page (a file beside its Markdown)."""
    found = rules.asset(game.lower(), file)
    if found is None:
        raise WebError(Code.NOT_FOUND, "there is no such picture")
    return Response(found[0], media_type=found[1], headers={"Cache-Control": "no-cache"})


@pages.get("/favicon.ico")
async def favicon() -> FileResponse:
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


@pages.get("/games/{name}/client.js")
async def game_client(name: str) -> Response:
    """A game's browser client, found in the game's own package (``games/<name>/client.js``)."""
    if name not in GAMES:
        raise WebError(Code.NOT_FOUND, "there is no such game")
    source = importlib.resources.files(game_class(name).__module__).joinpath("client.js")
    if not source.is_file():
        raise WebError(Code.NOT_FOUND, "{game} has no browser client", game=name)
    return Response(source.read_text(encoding="utf-8"), media_type="text/javascript",
                    headers={"Cache-Control": "no-cache"})


async def _web_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, WebError)
    return JSONResponse(exc.to_json(lang=languages.request_language(request)), status_code=exc.status,
                        headers=exc.headers)


async def _server_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error", exc_info=exc)
    return JSONResponse(error_body(Code.SERVER_ERROR, "the server could not handle this request",
                                   lang=languages.request_language(request)), status_code=500)


def create_app(
    database: str | None = None,
    data_dir: str | Path | None = None,
    ai_delay: float = 0.6,
    ai_workers: int = 1,
    ai_specs: dict[str, str] | None = None,
    rate: float = RATE,
    burst: float = BURST,
    freeze_gc: bool = True,
    allowed_origins: Iterable[str] = (),
    stats_token: str | None = None,
    rematch_hold: float = REMATCH_HOLD,
    stall_after: float = STALL_AFTER,
    limits: ServerLimits | None = None,
    redis_url: str | None = None,
    worker_id: str | None = None,
    bus_secret: str | None = None,
    analysis: str = ANALYSIS_DEFAULT,
    analysis_processes: int = 1,
    lab: Mapping[str, Any] | None = None,
    notices: Mapping[str, Any] | None = None,
) -> FastAPI:
    """The application. ``database`` is a SQLAlchemy URL; default a SQLite file in ``data_dir``.

    ``allowed_origins``: other origins whose pages may use the server (security.py);
    ``stats_token``: enables ``/api/stats`` for requests bearing it (otherwise 404);
    ``rematch_hold``: seconds a rematch keeps the previous players' seats for them;
    ``stall_after``: seconds without a move, with the human to move away, before the lobby
    shows a table as stalled.
    ``limits``: table creations per client, spectators per table, expiry of waiting tables,
    tables rebuilt at start-up (limits.py).
    ``redis_url``: this worker is one of several sharing the database (cluster.py: news through
    Redis, the tables' timers on the holder of each table's lease); ``worker_id``: its id;
    ``bus_secret``: the secret the workers sign their bus messages with (bus.py; needed with Redis).
    ``analysis``: which finished tables are analysed — ``all``, ``request`` (asked on the replay
    page) or ``off`` — in ``analysis_processes`` low-priority processes (web/analysis/).
    ``lab``: the lab in the browser is on (web/labs/settings.py: ``folder``, ``ray``, ``jobs``, limits).
    ``notices``: how players are told about their games (web/notices/setup.py: ``smtp``, ``public_url``,
    ``webhook_private``)."""
    limits = limits or ServerLimits()
    url = database_url(data_dir, database)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        the_lobby = Lobby(Repository(url), ai_delay=ai_delay, ai_workers=ai_workers, ai_specs=ai_specs,
                          max_spectators=limits.max_spectators, waiting_ttl=limits.waiting_ttl,
                          resume_limit=limits.resume_limit, rematch_hold=rematch_hold, stall_after=stall_after)
        app.state.lobby = the_lobby
        app.state.analysis = analysis_for(the_lobby, app.state.worker_id, analysis, analysis_processes)
        if redis_url:
            the_lobby.cluster = app.state.cluster = Cluster(the_lobby, redis_url, app.state.worker_id,
                                                            bus_secret=bus_secret)
        await the_lobby.start()
        app.state.analysis.start()
        await labs.start(app)  # the lab's pool (web/labs/): only with ``lab`` (serve --lab)
        await notices_setup.start(app, the_lobby, notices)  # web/notices/: mail, push, webhooks
        if freeze_gc:
            pauses.settle()  # the collector's passes stall every table (web/pauses.py)
        recorder = pauses.recorder_from_env()  # measuring only: LUDOTECA_PAUSES=FILE
        if recorder is not None:
            recorder.start()
        try:
            yield
        finally:
            if recorder is not None:
                await recorder.stop()
            await notices_setup.stop(app)
            await labs.stop(app)
            await app.state.analysis.stop()
            await the_lobby.stop()

    app = FastAPI(title="ludoteca", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.database_url = url
    app.state.worker_id = worker_id or new_worker_id()
    app.state.cluster = None
    app.state.stats_token = stats_token
    app.state.creations = ClientBuckets(limits.create_per_minute, limits.create_burst)
    app.state.socket_rate = (rate, burst)
    app.add_middleware(GZipMiddleware, minimum_size=2048)
    app.add_middleware(CsrfMiddleware)  # inside the Origin checks: a session's requests need its CSRF token
    app.add_middleware(SecurityMiddleware, allowed_origins=tuple(allowed_origins))
    app.add_exception_handler(WebError, _web_error)
    app.add_exception_handler(StarletteHTTPException, unknown_address)  # a page for a browser (web/lobby/notfound.py)
    app.add_exception_handler(Exception, _server_error)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(pages)
    app.include_router(languages.router)
    app.include_router(lobby.router)
    app.include_router(levels.router)  # /api/levels: the AI levels a table may seat
    app.include_router(my_tables.router)  # /my-tables and its API, claiming a win (turn-based)
    app.include_router(accounts.router)  # /login, /signup, /api/me, /api/login… (optional accounts)
    app.include_router(sockets.router)
    app.include_router(guide.router)  # /learn/{game} and /api/guide (the guided first game)
    app.include_router(moderation.router)  # /admin and /api/admin/…: the club's moderators
    app.include_router(analysis_routes.router)  # /api/tables/{id}/analysis (the replay's analysis)
    app.include_router(notices_routes.router)  # /account, /api/notices…, /notices/unsubscribe
    app.include_router(profiles_router)  # /players/{name}, /leaderboard and their APIs (ratings)
    labs.install(app, lab, data_dir)  # /lab and /api/lab/… (the lab in the browser; off without ``lab``)
    health.install(app)  # /healthz, /readyz, draining on SIGTERM (`ludoteca serve` sets it up)
    metrics.install(app)  # /metrics for Prometheus: with the stats token, or to a moderator
    return app
