"""Health, readiness and graceful shutdown of one worker.

- ``GET /healthz``: the process is alive and its event loop answers: always 200
  (``{"status": "alive", "worker": ID}``).
- ``GET /readyz``: 200 (``{"status": "ready", "worker": ID}``) when the database and, if one is
  configured, Redis answer within :data:`CHECK_TIMEOUT` seconds; 503 with ``{"status":
  "unavailable", "worker": ID, "reason": …}`` otherwise, and from the moment the worker starts
  shutting down. Cheap (a ``SELECT 1`` and a ``PING``), no authentication, nothing secret in the
  body (never a URL or a password, only which service failed).

Graceful shutdown (SIGTERM, or Ctrl-C): :func:`install` wraps uvicorn's signal handlers when the
application starts. On the signal the worker is *draining*: ``/readyz`` answers 503 at once and
new websockets are refused (an HTTP 503 the proxy passes to the next worker, or close code 1012
"service restart"); after ``drain`` seconds (``ludoteca serve --drain``) the cluster hands its
tables over (``app.state.cluster.shutdown()``, when the worker is part of one: its leases are
released so another worker takes their timers at once), and only then is uvicorn told to stop:
it closes the listening socket, closes every websocket with code 1012 (the browser reconnects,
through the proxy, to another worker) and waits at most its graceful timeout for the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

log = logging.getLogger("ludoteca.web")

CHECK_TIMEOUT = 1.0
"""Seconds the database and Redis each have to answer a readiness check."""
DRAIN = 1.0
"""Default seconds between a worker's SIGTERM and the moment it stops serving."""
SERVICE_RESTART = 1012
"""The websocket close code of a worker going away (the browser reconnects)."""

router = APIRouter(include_in_schema=False)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def new_worker_id() -> str:
    """A worker's id: its process id and a random part (a restarted process never reuses one)."""
    return f"w{os.getpid()}-{secrets.token_hex(4)}"


@dataclass
class Health:
    """One worker's health state (``app.state.health``)."""

    worker_id: str = field(default_factory=new_worker_id)
    redis_url: str | None = None
    drain: float = DRAIN
    draining: bool = False
    _redis: Any = None

    async def check_database(self, app: Any) -> str | None:
        """None when the database answers ``SELECT 1`` in time, else the reason."""
        lobby = getattr(app.state, "lobby", None)
        repo = getattr(lobby, "repo", None)
        if repo is None:
            return "starting"

        def ping() -> None:
            from sqlalchemy import text

            with repo.engine.connect() as conn:
                conn.execute(text("SELECT 1"))

        try:
            await asyncio.wait_for(asyncio.to_thread(ping), CHECK_TIMEOUT)
        except TimeoutError:
            return "database: no answer within 1 s"
        except Exception as exc:
            return f"database: {type(exc).__name__}"
        return None

    async def check_redis(self) -> str | None:
        """None when Redis (if configured) answers ``PING`` in time, else the reason."""
        if not self.redis_url:
            return None
        try:
            if self._redis is None:
                import redis.asyncio as aioredis

                self._redis = aioredis.Redis.from_url(self.redis_url, socket_connect_timeout=CHECK_TIMEOUT,
                                                      socket_timeout=CHECK_TIMEOUT, retry_on_timeout=False)
            await asyncio.wait_for(self._redis.ping(), CHECK_TIMEOUT)
        except TimeoutError:
            return "redis: no answer within 1 s"
        except Exception as exc:
            return f"redis: {type(exc).__name__}"
        return None

    async def close(self) -> None:
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
            self._redis = None


def health_of(app: Any) -> Health:
    """The worker's health state; its id is the application's (``app.state.worker_id``, the id the
    cluster's leases and bus messages carry) whenever there is one."""
    found = getattr(app.state, "health", None)
    if not isinstance(found, Health):
        found = Health()
        app.state.health = found
    shared = getattr(app.state, "worker_id", None)
    if isinstance(shared, str) and shared:
        found.worker_id = shared
    return found


@router.get("/healthz")
async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "alive", "worker": health_of(request.app).worker_id},
                        headers={"Cache-Control": "no-store"})


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    health = health_of(request.app)
    reason: str | None = "shutting down" if health.draining else None
    if reason is None:
        database, redis = await asyncio.gather(health.check_database(request.app), health.check_redis())
        reason = "; ".join(r for r in (database, redis) if r) or None
    if health.draining:  # it may have started while the checks ran
        reason = "shutting down"
    body: dict[str, Any] = {"status": "unavailable" if reason else "ready", "worker": health.worker_id}
    if reason:
        body["reason"] = reason
    return JSONResponse(body, status_code=503 if reason else 200, headers={"Cache-Control": "no-store"})


class DrainMiddleware:
    """Refuses new websockets while the worker drains, and installs the signal handlers at start-up."""

    def __init__(self, app: ASGIApp, owner: FastAPI) -> None:
        self.app = app
        self.owner = owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._watch_lifespan(receive), send)
            return
        if scope["type"] == "websocket" and health_of(self.owner).draining:
            await receive()  # websocket.connect
            if "websocket.http.response" in scope.get("extensions", {}):
                await send({"type": "websocket.http.response.start", "status": 503,
                            "headers": [(b"content-type", b"text/plain"), (b"retry-after", b"1")]})
                await send({"type": "websocket.http.response.body", "body": b"server restarting"})
            else:
                await send({"type": "websocket.close", "code": SERVICE_RESTART})
            return
        await self.app(scope, receive, send)

    def _watch_lifespan(self, receive: Receive) -> Receive:
        async def wrapped() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _capture_signals(self.owner, asyncio.get_running_loop())
            elif message["type"] == "lifespan.shutdown":
                await health_of(self.owner).close()
            return message
        return wrapped


def _capture_signals(app: FastAPI, loop: asyncio.AbstractEventLoop) -> None:
    """Wrap the server's SIGTERM/SIGINT handlers (uvicorn's) so the worker drains first. Only in
    the main thread (where uvicorn installs them); elsewhere (test clients) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        return
    health = health_of(app)
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(signum: int, frame: FrameType | None, previous: Callable[..., Any] = previous) -> None:
            if health.draining:
                # Ctrl-C in a terminal reaches the workers and then the supervisor's SIGTERM does:
                # already draining, that one changes nothing; a second Ctrl-C stops at once
                if signum == signal.SIGINT:
                    previous(signum, frame)
                return
            health.draining = True
            loop.call_soon_threadsafe(lambda: loop.create_task(_drain(app, health, previous, signum, frame)))

        signal.signal(sig, handler)


async def _drain(app: FastAPI, health: Health, stop: Callable[..., Any], signum: int, frame: FrameType | None) -> None:
    """Readiness is already 503: wait ``drain`` seconds, hand the tables over, then let uvicorn stop."""
    started = time.monotonic()
    try:
        await asyncio.sleep(health.drain)
        cluster = getattr(app.state, "cluster", None)
        shutdown = getattr(cluster, "shutdown", None)
        if shutdown is not None:
            result = shutdown()
            if asyncio.iscoroutine(result):
                await asyncio.wait_for(result, 5.0)
    except Exception:
        log.exception("handing the tables over failed")
    finally:
        log.info("worker %s drained in %.2f s, stopping", health.worker_id, time.monotonic() - started)
        stop(signum, frame)


def install(app: FastAPI, worker_id: str | None = None, redis_url: str | None = None, drain: float = DRAIN) -> None:
    """Add ``/healthz``, ``/readyz`` and graceful draining to ``app``."""
    health = health_of(app)
    if worker_id:
        health.worker_id = worker_id
    health.redis_url = redis_url
    health.drain = drain
    app.include_router(router)
    app.add_middleware(DrainMiddleware, owner=app)
