"""The web server: lobby, tables, replays (HTTP + websockets), all served locally.

``create_app()`` builds the FastAPI application; ``ludoteca serve`` runs it with uvicorn.

HTTP API (JSON):

- ``GET /api/games``: the games, their player counts and options, the AI levels;
- ``GET /api/tables``: recent tables; ``POST /api/tables``: create one
  (``{"game", "players", "options", "seats": [{"kind": "open"} | {"kind": "ai", "level"}],
  "sit": seat?, "name": str?, "unlisted": bool?}`` → ``{"id", "url", "seat", "token"}``; an unlisted
  table is not in ``GET /api/tables``);
- ``GET /api/tables/{id}``; ``POST /api/tables/{id}/join`` (``{"seat", "name", "key"?}`` → ``{"token"}``;
  with a ``key`` the client chose, sending the same join again answers the same token);
- ``POST /api/tables/{id}/rematch`` (``{"token"?}``; the previous players' seats are kept for their
  tokens for ``rematch_hold`` seconds);
- ``GET /api/stats``: only with ``stats_token`` (``Authorization: Bearer TOKEN``), else 404;
- ``GET /api/tables/{id}/record`` (the ludoteca-record JSON) and ``/replay`` (every position),
  once the game is over.

Websocket ``/ws/{id}``, JSON messages. Client → server: ``{"type": "auth", "token"}``,
``{"type": "join", "seat", "name"}``, ``{"type": "action", "action": {...}, "seq": n}``,
``{"type": "ping"}``. Server → client: ``snapshot`` (on connect and after auth), ``update``
(after every change), ``seats``, ``joined``, ``rematch``, ``pong``, ``error`` (to that client only).

Websockets and state-changing requests from pages of other origins are refused, and every
response carries a Content-Security-Policy and anti-framing headers (security.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware

from ludoteca.web.limits import BadInput, ClientBuckets, ServerLimits, parse_json, shown_id
from ludoteca.web.security import SecurityMiddleware, stats_allowed
from ludoteca.web.storage import Repository, database_url
from ludoteca.web.tables import (
    OVER,
    REMATCH_HOLD,
    STALL_AFTER,
    Connection,
    Table,
    TableManager,
    WebError,
    game_catalog,
)

log = logging.getLogger("ludoteca.web")

STATIC = Path(__file__).parent / "static"
MAX_MESSAGE = 16 * 1024
"""Largest websocket message the server reads (bytes of text); larger ones get an error."""
MAX_BODY = 64 * 1024
"""Largest HTTP request body."""
RATE = 20.0
BURST = 40.0
"""Messages per second per connection, and the burst allowed."""
MAX_REFUSED = 400
"""A connection that keeps flooding after this many refused messages is closed."""
ADMIT_WAIT = 5.0
"""Seconds a connection to a table full of spectators has to authenticate as a player."""


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
) -> FastAPI:
    """The application. ``database`` is a SQLAlchemy URL; default a SQLite file in ``data_dir``.

    ``allowed_origins``: other origins whose pages may use the server (security.py);
    ``stats_token``: enables ``/api/stats`` for requests bearing it (otherwise 404);
    ``rematch_hold``: seconds a rematch keeps the previous players' seats for them;
    ``stall_after``: seconds without a move, with the human to move away, before the lobby
    shows a table as stalled.
    ``limits``: table creations per client, spectators per table, expiry of waiting tables,
    tables rebuilt at start-up (limits.py)."""
    allowed_origins = tuple(allowed_origins)
    limits = limits or ServerLimits()
    creations = ClientBuckets(limits.create_per_minute, limits.create_burst)
    url = database_url(data_dir, database)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        repo = Repository(url)
        manager = TableManager(repo, ai_delay=ai_delay, ai_workers=ai_workers, ai_specs=ai_specs,
                               max_spectators=limits.max_spectators, waiting_ttl=limits.waiting_ttl,
                               resume_limit=limits.resume_limit)
        app.state.manager = manager
        manager.rematch_hold, manager.stall_after = rematch_hold, stall_after
        await manager.start()
        if freeze_gc:
            # Everything loaded so far (modules, the tables resumed) lives as long as the server:
            # keep it out of the collector's full passes, which otherwise stall the event loop
            # for tens of milliseconds under load.
            gc.collect()
            gc.freeze()
            gc.set_threshold(5000, 20, 100)
        try:
            yield
        finally:
            await manager.stop()

    app = FastAPI(title="ludoteca", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.database_url = url
    app.add_middleware(GZipMiddleware, minimum_size=2048)
    app.add_middleware(SecurityMiddleware, allowed_origins=allowed_origins)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def manager_of(request: Request | WebSocket) -> TableManager:
        return request.app.state.manager

    @app.exception_handler(WebError)
    async def web_error(_request: Request, exc: WebError) -> JSONResponse:
        return JSONResponse({"error": exc.code, "message": exc.message}, status_code=exc.status,
                            headers=exc.headers)

    @app.exception_handler(Exception)
    async def server_error(_request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return JSONResponse({"error": "server_error", "message": "the server could not handle this request"},
                            status_code=500)

    async def read_json(request: Request) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            raise WebError("too_large", f"the request body is limited to {MAX_BODY} bytes", 413)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise WebError("too_large", f"the request body is limited to {MAX_BODY} bytes", 413)
        if not body:
            return {}
        try:
            return parse_json(bytes(body))
        except BadInput as exc:
            raise WebError(exc.code, f"the request body: {exc.message}") from None

    async def table_or_404(request: Request, table_id: str) -> Table:
        table = await manager_of(request).get(table_id)
        if table is None:
            raise WebError("not_found", f"there is no table {shown_id(table_id)}", 404)
        return table

    # --- pages ---------------------------------------------------------------------------
    @app.get("/", include_in_schema=False)
    async def lobby_page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/t/{table_id}", include_in_schema=False)
    async def table_page(table_id: str) -> FileResponse:
        return FileResponse(STATIC / "table.html")

    @app.get("/replay/{table_id}", include_in_schema=False)
    async def replay_page(table_id: str) -> FileResponse:
        return FileResponse(STATIC / "replay.html")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    # --- API -----------------------------------------------------------------------------
    @app.get("/api/games")
    async def games(request: Request) -> dict[str, Any]:
        return {"games": game_catalog(), "levels": manager_of(request).levels()}

    @app.get("/api/stats")
    async def stats(request: Request) -> dict[str, Any]:
        """Server-side time to check, store and broadcast the last actions (for operators and load
        tests): only with ``stats_token``, sent as ``Authorization: Bearer TOKEN``."""
        if not stats_allowed(request.headers.get("authorization"), stats_token):
            raise WebError("not_found", "there is no such page", 404)
        manager = manager_of(request)
        times = sorted(manager.timings)
        pick = (lambda q: round(1000 * times[min(len(times) - 1, int(q * len(times)))], 3)) if times else None
        return {"tables_in_memory": len(manager.tables), "actions_timed": len(times),
                "p50_ms": pick(0.5) if pick else None, "p99_ms": pick(0.99) if pick else None,
                "max_ms": round(1000 * times[-1], 3) if times else None,
                "ai_searches_waiting": manager.ai.waiting(), "ai_searches_peak": manager.ai.peak}

    @app.get("/api/tables")
    async def tables(request: Request) -> dict[str, Any]:
        return {"tables": await manager_of(request).list_tables()}

    @app.post("/api/tables")
    async def create_table(request: Request) -> JSONResponse:
        wait = creations.take(request.client.host if request.client else "?")
        if wait > 0:
            raise WebError("rate_limited", f"too many tables created from your address: try again in "
                                           f"{math.ceil(wait)} s", 429, {"Retry-After": str(math.ceil(wait))})
        body = await read_json(request)
        table, seat, token = await manager_of(request).create(body)
        return JSONResponse({"id": table.id, "url": f"/t/{table.id}", "seat": seat, "token": token,
                             "table": table.summary()}, status_code=201)

    @app.get("/api/tables/{table_id}")
    async def get_table(request: Request, table_id: str) -> dict[str, Any]:
        return (await table_or_404(request, table_id)).summary()

    @app.post("/api/tables/{table_id}/join")
    async def join(request: Request, table_id: str) -> dict[str, Any]:
        table = await table_or_404(request, table_id)
        body = await read_json(request)
        if not isinstance(body, dict):
            raise WebError("bad_request", "send {\"seat\": n, \"name\": \"...\"}")
        token = await table.join(body.get("seat"), body.get("name"), key=body.get("key"))
        return {"id": table.id, "seat": body.get("seat"), "token": token}

    @app.post("/api/tables/{table_id}/rematch")
    async def rematch(request: Request, table_id: str) -> dict[str, Any]:
        table = await table_or_404(request, table_id)
        body = await read_json(request)
        token = body.get("token") if isinstance(body, dict) else None
        new, seat, new_token = await manager_of(request).rematch(table, token)
        return {"id": new.id, "url": f"/t/{new.id}", "seat": seat, "token": new_token}

    @app.get("/api/tables/{table_id}/record")
    async def record(request: Request, table_id: str) -> Response:
        table = await table_or_404(request, table_id)
        if table.status != OVER:
            raise WebError("not_over", "the record can be downloaded once the game is over", 409)
        text = await manager_of(request).build(lambda: table.record().dumps() + "\n")
        filename = f"ludoteca-{table.game_name}-{table.id}.json"
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @app.get("/api/tables/{table_id}/replay")
    async def replay(request: Request, table_id: str) -> dict[str, Any]:
        table = await table_or_404(request, table_id)
        if table.status != OVER:
            raise WebError("not_over", "the replay is available once the game is over", 409)
        return await manager_of(request).build(table.replay_data)

    # --- websocket -------------------------------------------------------------------------
    @app.websocket("/ws/{table_id}")
    async def table_socket(websocket: WebSocket, table_id: str) -> None:
        manager = manager_of(websocket)
        try:
            table = await manager.get(table_id)
        except WebError as exc:  # e.g. a table whose start cannot be stored now
            await websocket.accept()
            await websocket.send_text(json.dumps(exc.to_json()))
            await websocket.close(code=1013)
            return
        await websocket.accept()
        if table is None:
            await websocket.send_text(json.dumps({"type": "error", "code": "not_found",
                                                  "message": f"there is no table {shown_id(table_id)}"}))
            await websocket.close(code=4404)
            return
        conn = Connection(rate, burst)
        writer = asyncio.create_task(_writer(websocket, conn))
        try:
            if not await _admit(websocket, table, conn, manager.max_spectators):
                conn.close(4429)
            while not conn.closed:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    data = message.get("bytes") or b""
                    if len(data) > MAX_MESSAGE:
                        _error(conn, "too_large", f"messages are limited to {MAX_MESSAGE} bytes")
                        continue
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        _error(conn, "bad_message", "messages are JSON text")
                        continue
                await _handle(table, conn, text)
        except WebSocketDisconnect:
            pass
        except RuntimeError:  # the socket closed under us
            pass
        finally:
            table.detach(conn)
            conn.close()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(writer, 2)

    return app


async def _admit(websocket: WebSocket, table: Table, conn: Connection, max_spectators: int) -> bool:
    """Attach ``conn`` to ``table``. When the table already has ``max_spectators`` spectators, only
    a player gets in: the first message must then be the ``auth`` of one of its seats (the
    client sends it at once); anyone else gets a ``spectators_full`` error."""
    if table.spectators() < max_spectators:
        table.attach(conn)
        return True
    token = None
    with contextlib.suppress(asyncio.TimeoutError, BadInput, KeyError, RuntimeError, WebSocketDisconnect):
        message = await asyncio.wait_for(websocket.receive(), ADMIT_WAIT)
        text = message.get("text") or message.get("bytes") or b""
        data = parse_json(text) if len(text) <= MAX_MESSAGE else None
        if isinstance(data, dict) and data.get("type") == "auth":
            token = data.get("token")
    if token is not None:
        table.attach(conn)
        try:
            table.authenticate(conn, token)
            return True
        except WebError:
            table.detach(conn)
    _error(conn, "spectators_full", f"this table already has {max_spectators} spectators, the most it "
                                    "takes; its players can still come in")
    return False


async def _writer(websocket: WebSocket, conn: Connection) -> None:
    """Send ``conn``'s queued messages in order; close the socket when the queue says so."""
    try:
        while True:
            text = await conn.queue.get()
            if text is None:
                break
            await websocket.send_text(text)
    except Exception:  # the client went away
        conn.closed = True
    with contextlib.suppress(Exception):
        await websocket.close(code=conn.close_code or (1008 if conn.limiter.refused > MAX_REFUSED else 1000))


def _error(conn: Connection, code: str, message: str, ref: Any = None) -> None:
    data: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if ref is not None:
        data["ref"] = ref
    conn.send_json(data)


async def _handle(table: Table, conn: Connection, text: str) -> None:
    """One client message: every problem is answered to this client alone."""
    if len(text) > MAX_MESSAGE:
        _error(conn, "too_large", f"messages are limited to {MAX_MESSAGE} bytes")
        return
    if not conn.limiter.allow():
        if conn.limiter.refused > MAX_REFUSED:
            _error(conn, "rate_limited", "too many messages: disconnected")
            conn.close()
            return
        now = time.monotonic()
        if now - conn.last_error_at > 0.5:
            conn.last_error_at = now
            _error(conn, "rate_limited", f"too many messages: at most {conn.limiter.rate:g} per second")
        return
    try:
        message = parse_json(text)
    except BadInput as exc:
        _error(conn, exc.code, f"the message: {exc.message}")
        return
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        _error(conn, "bad_message", "a message is a JSON object with a 'type'")
        return
    ref = message.get("ref")
    if not (ref is None or isinstance(ref, int | str)) or (isinstance(ref, str) and len(ref) > 64):
        ref = None
    kind = message["type"]
    try:
        if kind == "action":
            start = time.perf_counter()
            await table.submit(conn, message)
            table.manager.timings.append(time.perf_counter() - start)
        elif kind == "auth":
            table.authenticate(conn, message.get("token"))
        elif kind == "join":
            token = await table.join(message.get("seat"), message.get("name"), key=message.get("key"))
            conn.send_json({"type": "joined", "seat": message.get("seat"), "token": token})
            table.authenticate(conn, token)
        elif kind == "ping":
            conn.send_json({"type": "pong", "ref": ref, "seq": len(table.actions)})
        else:
            raise WebError("bad_message", f"unknown message type {kind[:40]!r}")
    except WebError as exc:
        _error(conn, exc.code, exc.message, ref)
    except Exception:
        log.exception("table %s: error handling a %s message", table.id, kind[:40])
        _error(conn, "server_error", "the server could not handle this message", ref)
