"""The analysis of finished tables on the server: the shared queue, the API, the modes."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from ludoteca.web.app import create_app
from ludoteca.web.repository import analyses
from ludoteca.web.repository.records import SeatData, TableData
from ludoteca.web.repository.store import Repository

pytestmark = pytest.mark.timeout(180)




def _table(repo: Repository, table_id: str) -> None:
    now = time.time()
    repo.create_table(TableData(id=table_id, game="tohm", options={"players": 2}, seed=1, status="over",
                                created_at=now, updated_at=now, seats=[SeatData("open"), SeatData("open")]))


@pytest.fixture
def repos(tmp_path: Path) -> Iterator[list[Repository]]:
    """SQLite, and PostgreSQL (a fresh database) when ``LUDOTECA_TEST_POSTGRES_URL`` is set."""
    with contextlib.ExitStack() as stack:
        urls = [f"sqlite:///{tmp_path / 'queue.sqlite3'}"]
        if os.environ.get("LUDOTECA_TEST_POSTGRES_URL"):
            from ludoteca.web.launch import fresh_database

            urls.append(stack.enter_context(fresh_database(os.environ["LUDOTECA_TEST_POSTGRES_URL"], "ludo_queue")))
        made = [Repository(url) for url in urls]
        yield made
        for repo in made:
            repo.close()


def test_a_table_is_queued_once_and_claimed_by_one_worker(repos: list[Repository]) -> None:
    for repo in repos:
        suffix = f"{time.time_ns() % 10**9}"
        first, second = "qa" + suffix, "qb" + suffix
        _table(repo, first)
        _table(repo, second)
        assert analyses.request(repo, first, now=100.0) is True
        assert analyses.request(repo, first, now=101.0) is False  # asked again: still one row
        analyses.request(repo, second, now=102.0)
        # two workers share the queue: the oldest row goes to the first, the next to the second
        assert analyses.claim(repo, "w1", lease=60, now=200.0) == first
        assert analyses.claim(repo, "w2", lease=60, now=200.0) == second
        assert analyses.claim(repo, "w2", lease=60, now=200.0) is None  # nothing left to claim
        assert analyses.finish(repo, first, "w1", {"steps": []}, now=210.0)
        row = analyses.get(repo, first)
        assert row is not None and row.status == analyses.READY and row.result == {"steps": []}
        assert analyses.request(repo, first, now=220.0) is False  # ready: never analysed twice


def test_a_killed_workers_claim_expires_and_its_late_result_is_dropped(repos: list[Repository]) -> None:
    for repo in repos:
        table_id = f"qk{time.time_ns() % 10**9}"
        _table(repo, table_id)
        analyses.request(repo, table_id, now=100.0)
        assert analyses.claim(repo, "dead", lease=60, now=100.0) == table_id
        assert analyses.claim(repo, "live", lease=60, now=150.0) is None  # the claim still holds
        assert analyses.claim(repo, "live", lease=60, now=161.0) == table_id  # expired: taken over
        assert not analyses.renew(repo, table_id, "dead", lease=60, now=162.0)
        assert not analyses.finish(repo, table_id, "dead", {"late": True}, now=163.0)
        assert analyses.finish(repo, table_id, "live", None, now=170.0)  # the analysis failed
        row = analyses.get(repo, table_id)
        assert row is not None and row.status == analyses.FAILED
        assert analyses.request(repo, table_id, now=180.0) is False
        assert analyses.request(repo, table_id, now=180.0, again=True) is True  # a failed one, asked again


# --- the server --------------------------------------------------------------------------------------

def _server(tmp_path: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(data_dir=tmp_path, ai_delay=0, rate=10_000, burst=10_000, **kwargs))


def _finished_game(client: TestClient) -> str:
    """A two-player TOHM table (the solved variant: exact analysis, fast) played to the end by two AI seats."""
    res = client.post("/api/tables", json={"game": "tohm", "players": 2,
                                           "seats": [{"kind": "ai", "level": "random"}] * 2})
    assert res.status_code == 201, res.text
    table_id: str = res.json()["id"]
    deadline = time.monotonic() + 60
    while client.get(f"/api/tables/{table_id}").json()["status"] != "over":
        assert time.monotonic() < deadline, "the AI game did not end"
        time.sleep(0.05)
    return table_id


def _until_ready(client: TestClient, table_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        body: dict[str, Any] = client.get(f"/api/tables/{table_id}/analysis").json()
        if body["status"] in ("ready", "failed"):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def test_a_finished_table_is_analysed_on_request_and_shown_when_ready(tmp_path: Path) -> None:
    with _server(tmp_path, analysis="request") as client:
        res = client.post("/api/tables", json={"game": "tohm", "players": 2, "seats": [{"kind": "open"}] * 2})
        waiting = res.json()["id"]
        refused = client.post(f"/api/tables/{waiting}/analysis", json={})
        assert refused.status_code == 409 and refused.json()["code"] == "not_over"
        table_id = _finished_game(client)
        assert client.get(f"/api/tables/{table_id}/analysis").json() == {"mode": "request", "status": "none"}
        asked = client.post(f"/api/tables/{table_id}/analysis", json={}).json()
        assert asked["status"] in ("queued", "running", "ready")
        client.post(f"/api/tables/{table_id}/analysis", json={})  # asked twice: still one analysis
        body = _until_ready(client, table_id)
        assert body["status"] == "ready"
        analysis = body["analysis"]
        record = client.get(f"/api/tables/{table_id}/record").json()
        assert len(analysis["steps"]) == len(record["actions"])
        assert analysis["evaluator"] == "exact"  # two players on the 3x3 board: the solved game
        assert [row["seat"] for row in analysis["summary"]] == [0, 1]
        assert 1 <= len(analysis["decisive"]) <= 3
        labelled = [s for s in analysis["steps"] if s.get("label")]
        assert labelled, "random players make mistakes"
        assert all("best_position" in s and s["loss"] >= 0.05 for s in labelled)
        assert client.app.state.analysis.done == 1  # type: ignore[attr-defined]


def test_mode_all_analyses_every_finished_game_and_off_none(tmp_path: Path) -> None:
    with _server(tmp_path / "all", analysis="all") as client:
        table_id = _finished_game(client)
        assert _until_ready(client, table_id)["status"] == "ready"
    with _server(tmp_path / "off", analysis="off") as client:
        table_id = _finished_game(client)
        assert client.get(f"/api/tables/{table_id}/analysis").json() == {"mode": "off", "status": "none"}
        refused = client.post(f"/api/tables/{table_id}/analysis", json={})
        assert refused.status_code == 404 and refused.json()["message"]


@pytest.mark.skipif(not os.environ.get("LUDOTECA_TEST_POSTGRES_URL"), reason="needs LUDOTECA_TEST_POSTGRES_URL")
def test_two_workers_on_postgresql_share_the_queue_and_analyse_each_game_once(tmp_path: Path) -> None:
    from ludoteca.web.launch import fresh_database

    with fresh_database(os.environ["LUDOTECA_TEST_POSTGRES_URL"], "ludo_analysis") as url, \
            TestClient(create_app(database=url, ai_delay=0, analysis="request")) as one, \
            TestClient(create_app(database=url, ai_delay=0, analysis="request")) as two:
        tables = [_finished_game(one) for _ in range(3)]
        for k, table_id in enumerate(tables):  # asked on either worker, some twice
            (one if k % 2 else two).post(f"/api/tables/{table_id}/analysis", json={})
            one.post(f"/api/tables/{table_id}/analysis", json={})
        assert all(_until_ready(two, table_id)["status"] == "ready" for table_id in tables)
        done = [c.app.state.analysis.done for c in (one, two)]  # type: ignore[attr-defined]
        assert sum(done) == len(tables)  # each game analysed once, by whichever worker claimed it


def test_a_stopping_worker_gives_its_claims_back(repos: list[Repository]) -> None:
    for repo in repos:
        table_id = f"qr{time.time_ns() % 10**9}"
        _table(repo, table_id)
        analyses.request(repo, table_id, now=100.0)
        assert analyses.claim(repo, "stopping", lease=300, now=100.0) == table_id
        assert analyses.release(repo, "stopping") == 1
        assert analyses.claim(repo, "next", lease=300, now=101.0) == table_id  # at once, not in 300 s
