"""``GET /metrics`` (web/metrics.py): only with the stats token or for a moderator, Prometheus's text
format read back with ``prometheus_client``'s own parser, figures that follow what happens (tables,
connections, actions and their latency), and on two workers sharing a table: each worker's leases and
the lag of the news it heard on the bus."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("prometheus_client")

from prometheus_client.parser import text_string_to_metric_families

from tests.test_web_api import connect, create, make_app, open_seats, play_random, server

TOKEN = "a long stats token"
BEARER = {"Authorization": f"Bearer {TOKEN}"}

pytestmark = pytest.mark.timeout(180)


def scrape(client: Any, headers: dict[str, str] | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of ``/metrics``: (name, labels) -> value."""
    res = client.get("/metrics", headers=BEARER if headers is None else headers)
    assert res.status_code == 200, res.text
    assert res.headers["content-type"].startswith("text/plain") and res.headers["cache-control"] == "no-store"
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(res.text) for s in family.samples}


def value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def counting(send: Any, sent: list[Any]) -> Any:
    """``send``, noting each message sent in ``sent``."""
    def wrapped(data: Any) -> None:
        sent.append(data)
        send(data)
    return wrapped


def test_metrics_are_only_for_the_token_or_a_moderator(tmp_path: Path) -> None:
    with server(tmp_path, stats_token=TOKEN) as client:
        for headers in ({}, {"Authorization": "Bearer wrong token"}, {"Authorization": f"Basic {TOKEN}"}):
            res = client.get("/metrics", headers=headers)
            assert res.status_code == 404 and res.json()["code"] == "not_found"  # as if it did not exist
        assert client.get("/metrics", headers=BEARER).status_code == 200
    with server(tmp_path / "none") as client:  # no token configured: nobody with a bearer gets in
        assert client.get("/metrics", headers=BEARER).status_code == 404


def test_a_moderator_reads_the_metrics_without_the_token(tmp_path: Path) -> None:
    moderation = pytest.importorskip("ludoteca.web.accounts.moderation")
    if not hasattr(moderation, "set_role") or not hasattr(moderation, "ADMIN"):
        pytest.skip("the admin role is not in this tree")
    from starlette.testclient import TestClient

    with server(tmp_path) as first:
        assert first.post("/api/signup", json={"name": "First", "password": "correct horse 9"}).status_code == 201
        other = TestClient(first.app)
        assert other.post("/api/signup", json={"name": "Eve", "password": "correct horse 9"}).status_code == 201
        assert other.get("/metrics").status_code == 404  # logged in, not a moderator
        moderation.set_role(first.app.state.lobby.repo, "Eve", moderation.ADMIN)
        assert other.get("/metrics").status_code == 200


def test_the_figures_follow_tables_connections_and_actions(tmp_path: Path) -> None:
    with server(tmp_path, stats_token=TOKEN) as client:
        before = scrape(client)
        worker = client.app.state.worker_id
        assert value(before, "ludoteca_worker_info", worker=worker) == 1
        assert value(before, "ludoteca_actions_total") == 0
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        bob = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, table, made["token"]) as ann, connect(client, table, bob) as bobws, \
                connect(client, table) as watcher:
            sent: list[Any] = []
            for ws in (ann, bobws):
                ws.send = counting(ws.send, sent)  # type: ignore[method-assign]
            now = scrape(client)
            assert value(now, "ludoteca_tables", status="playing") == 1
            assert value(now, "ludoteca_connections", kind="player") == 2
            assert value(now, "ludoteca_connections", kind="spectator") == 1
            final = play_random({0: ann, 1: bobws}, [watcher], random.Random(2), stop=lambda s: s["seq"] >= 6)
        after = scrape(client)
        actions = sum(1 for m in sent if m.get("type") == "action")
        assert final["seq"] >= 6 and actions >= 3
        assert value(after, "ludoteca_actions_total") == actions
        assert value(after, "ludoteca_action_to_broadcast_seconds_count") == actions
        assert 0 < value(after, "ludoteca_action_to_broadcast_seconds_sum") < 10 * actions
        assert value(after, "ludoteca_action_to_broadcast_seconds_bucket", le="+Inf") == actions
        assert value(after, "ludoteca_connections", kind="player") == 0
        assert value(after, "ludoteca_leases_held") == 0  # one worker alone: no leases
        # /api/stats still sees the same actions
        assert client.get("/api/stats", headers=BEARER).json()["actions_timed"] == actions


def test_the_bus_lag_is_measured_from_the_commit_time() -> None:
    from fastapi import FastAPI

    from ludoteca.web import metrics

    app = FastAPI()

    class Lobby:
        timings: Any = __import__("collections").deque(maxlen=10)

    lobby = Lobby()
    metrics.attach(app, lobby)
    metrics.bus_heard(lobby, {"rows": {"from": 3, "a": [[0, {}]], "at": time.time() - 0.5}})
    for junk in ({}, {"rows": {"at": "soon"}}, {"rows": {"at": float("nan")}}, None, {"rows": {"at": True}}):
        metrics.bus_heard(lobby, junk)
    lag = metrics.metrics_of(app).bus_lag
    samples = {s.name: s.value for family in lag.collect() for s in family.samples if not s.labels}
    assert samples["ludoteca_bus_lag_seconds_count"] == 1
    assert 0.5 <= samples["ludoteca_bus_lag_seconds_sum"] < 5
    lobby.timings.append(0.004)  # the lobby's timings (``/api/stats``) count the action too
    assert metrics.metrics_of(app).actions._value.get() == 1


POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
REDIS = os.environ.get("LUDOTECA_TEST_REDIS_URL")


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.skipif(not POSTGRES or not REDIS, reason="needs LUDOTECA_TEST_POSTGRES_URL and LUDOTECA_TEST_REDIS_URL")
def test_two_workers_each_show_their_own_leases_and_the_bus_lag() -> None:
    from tests.test_web_cluster import database, playing, wait_for, workers

    assert REDIS is not None
    with database() as url, workers(url, REDIS, stats_token=TOKEN) as (a, b):
        made = create(a, "tohm", open_seats(2))
        table = made["id"]
        bob = b.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(a, table, made["token"]) as ann, connect(b, table, bob) as bobws:
            playing(ann, bobws)
            play_random({0: ann, 1: bobws}, [], random.Random(4), stop=lambda s: s["seq"] >= 6)
            wait_for(lambda: sum(value(scrape(w), "ludoteca_leases_held") for w in (a, b)) == 1, 15,
                     "one worker holds the table's lease")
            heard = [value(scrape(w), "ludoteca_bus_lag_seconds_count") for w in (a, b)]
            assert all(n >= 1 for n in heard), heard  # each heard the other's moves on the bus
        ids = {a.app.state.worker_id, b.app.state.worker_id}
        shown = {label[0][1] for w in (a, b) for (name, label) in scrape(w) if name == "ludoteca_worker_info"}
        assert shown == ids


def test_make_app_builds_metrics_for_each_app(tmp_path: Path) -> None:
    """Two applications in one process (tests, several workers in one test) keep separate registries."""
    one, two = make_app(tmp_path / "a", stats_token=TOKEN), make_app(tmp_path / "b", stats_token=TOKEN)
    assert one.state.metrics.registry is not two.state.metrics.registry
