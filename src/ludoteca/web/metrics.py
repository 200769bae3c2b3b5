"""One worker's metrics for Prometheus: ``GET /metrics`` (its text format, written by ``prometheus_client``).

Served only to a request bearing the stats token (``ludoteca serve --stats-token TOKEN``, sent as
``Authorization: Bearer TOKEN``) or made by a logged-in moderator (the admin role,
``moderation.is_admin``); anyone else gets the 404 of an unknown page. :data:`VIEWER_HOOK` on
``app.state`` may replace the moderator check (an ``async (request) -> bool``).

What it holds (each worker its own registry: with several workers, scrape each one; the
``ludoteca_worker_info`` line names the worker that answered):

- ``ludoteca_worker_info{worker}``: this worker's id (the one ``/healthz`` gives);
- ``ludoteca_tables{status}``: the tables in this worker's memory, by status;
- ``ludoteca_connections{kind}``: its open websockets, ``player`` (a seat) or ``spectator``;
- ``ludoteca_actions_total``: the actions players sent it that were handled (a counter: its
  ``rate()`` is actions per second);
- ``ludoteca_action_to_broadcast_seconds``: a histogram of the time from an action's arrival to its
  broadcast (checked, stored, sent to this worker's viewers);
- ``ludoteca_leases_held``: the tables whose timers (AI seats, hourglass) this worker runs (cluster);
- ``ludoteca_bus_lag_seconds``: a histogram of the time from another worker's commit of an action to
  this worker hearing it on the bus (the workers' clocks must agree, NTP);
- ``ludoteca_ai_searches_waiting``: AI moves queued for the search processes.
"""

from __future__ import annotations

import math
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ludoteca.web.errors import Code, WebError
from ludoteca.web.security import stats_allowed

ACTION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
BUS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
VIEWER_HOOK = "metrics_viewer"
"""``app.state`` attribute: ``async (request) -> bool``, who besides the token holder may read /metrics
(default: a logged-in moderator)."""

router = APIRouter(include_in_schema=False)
_of_lobby: weakref.WeakKeyDictionary[Any, Metrics] = weakref.WeakKeyDictionary()

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Metrics:
    """One application's registry and the metrics it updates as things happen."""

    def __init__(self, app: FastAPI) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.actions = Counter("ludoteca_actions", "Actions sent by players and handled by this worker",
                               registry=self.registry)
        self.action_seconds = Histogram("ludoteca_action_to_broadcast_seconds",
                                        "Seconds from an action's arrival to its broadcast (checked, stored, sent)",
                                        buckets=ACTION_BUCKETS, registry=self.registry)
        self.bus_lag = Histogram("ludoteca_bus_lag_seconds",
                                 "Seconds from another worker's commit of actions to this worker hearing them",
                                 buckets=BUS_BUCKETS, registry=self.registry)
        self.registry.register(_Live(app))

    def action(self, seconds: float) -> None:
        self.actions.inc()
        self.action_seconds.observe(max(0.0, seconds))

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _Timings(deque[float]):
    """The lobby's record of action timings (``/api/stats``), telling the metrics of each one too."""

    def __init__(self, old: deque[float], on_append: Callable[[float], None]) -> None:
        super().__init__(old, maxlen=old.maxlen)
        self.on_append = on_append

    def append(self, seconds: float) -> None:
        super().append(seconds)
        self.on_append(seconds)


class _Live(Collector):
    """What is read when scraped: tables, connections, leases, the AI queue, the worker's id."""

    def __init__(self, app: FastAPI) -> None:
        self.app = app

    def collect(self) -> Iterator[Metric]:
        state = self.app.state
        info = GaugeMetricFamily("ludoteca_worker_info", "This worker's id", labels=["worker"])
        info.add_metric([str(getattr(state, "worker_id", "?"))], 1)
        yield info
        lobby = getattr(state, "lobby", None)
        tables = GaugeMetricFamily("ludoteca_tables", "Tables in this worker's memory, by status", labels=["status"])
        conns = GaugeMetricFamily("ludoteca_connections", "Open websockets of this worker", labels=["kind"])
        by_status: dict[str, int] = {}
        players = spectators = 0
        for table in list(getattr(lobby, "tables", {}).values()):
            status = str(getattr(table, "status", "?"))
            by_status[status] = by_status.get(status, 0) + 1
            for conn in list(getattr(getattr(table, "hub", None), "conns", ())):
                if getattr(conn, "seat", None) is None:
                    spectators += 1
                else:
                    players += 1
        for status, n in sorted(by_status.items()):
            tables.add_metric([status], n)
        conns.add_metric(["player"], players)
        conns.add_metric(["spectator"], spectators)
        yield tables
        yield conns
        cluster = getattr(state, "cluster", None)
        yield GaugeMetricFamily("ludoteca_leases_held", "Tables whose timers this worker runs (their leases)",
                                value=len(getattr(cluster, "held", {}) or {}))
        ai = getattr(lobby, "ai", None)
        waiting = ai.waiting() if ai is not None and hasattr(ai, "waiting") else 0
        yield GaugeMetricFamily("ludoteca_ai_searches_waiting", "AI moves waiting for a search process",
                                value=waiting)


def metrics_of(app: FastAPI) -> Metrics:
    found = getattr(app.state, "metrics", None)
    if not isinstance(found, Metrics):
        found = app.state.metrics = Metrics(app)
    return found


def attach(app: FastAPI, lobby: Any) -> None:
    """Count ``lobby``'s actions in ``app``'s metrics (its timings, kept for ``/api/stats``, tell them)."""
    found = metrics_of(app)
    _of_lobby[lobby] = found
    timings = getattr(lobby, "timings", None)
    if isinstance(timings, deque) and not isinstance(timings, _Timings):
        lobby.timings = _Timings(timings, found.action)


def bus_heard(lobby: Any, body: Any) -> None:
    """A checked bus message of another worker reached ``lobby``'s worker: its lag, when it carries
    actions with their commit time (``{"rows": {"at": time, ...}}``)."""
    found = _of_lobby.get(lobby)
    rows = body.get("rows") if isinstance(body, dict) else None
    at = rows.get("at") if isinstance(rows, dict) else None
    if found is None or not isinstance(at, int | float) or isinstance(at, bool) or not math.isfinite(at):
        return
    found.bus_lag.observe(max(0.0, time.time() - at))


async def _moderator(request: Request) -> bool:
    try:
        from ludoteca.web.accounts.moderation import is_admin
    except ImportError:  # a tree without the admin role
        return False
    allowed: bool = await is_admin(request)
    return allowed


async def may_read(request: Request) -> bool:
    """The stats token's bearer, or whoever the viewer hook lets in (a moderator by default)."""
    if stats_allowed(request.headers.get("authorization"), getattr(request.app.state, "stats_token", None)):
        return True
    viewer = getattr(request.app.state, VIEWER_HOOK, None) or _moderator
    try:
        return bool(await viewer(request))
    except WebError:
        return False


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    if not await may_read(request):
        raise WebError(Code.NOT_FOUND, "there is no such page")
    return Response(metrics_of(request.app).text(), media_type=CONTENT_TYPE_LATEST,
                    headers={"Cache-Control": "no-store"})


class _AttachAtStartup:
    """Attaches the metrics to the lobby once the application has started (the lobby exists then)."""

    def __init__(self, app: ASGIApp, owner: FastAPI) -> None:
        self.app = app
        self.owner = owner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message.get("type") == "lifespan.startup.complete":
                lobby = getattr(self.owner.state, "lobby", None)
                if lobby is not None:
                    attach(self.owner, lobby)
            await send(message)

        await self.app(scope, receive, sending)


def install(app: FastAPI) -> None:
    """Add ``/metrics`` to ``app`` and count its actions from its start."""
    metrics_of(app)
    app.include_router(router)
    app.add_middleware(_AttachAtStartup, owner=app)
