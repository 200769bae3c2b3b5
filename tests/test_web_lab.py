"""The lab in the browser: ``/api/lab`` refuses clearly (lab off, not logged in, unknown option,
too many games, a value the game refuses), plays a real small run through the server to its report, CSV
and summary, a balance search to its best setting, compares two runs, and cancels."""

from __future__ import annotations

import csv
import io
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")
pytest.importorskip("matplotlib")

from fastapi.testclient import TestClient

from ludoteca.registry import GAMES, game_class
from ludoteca.web.accounts.sessions import CSRF_COOKIE
from tests.test_web_api import make_app

pytestmark = pytest.mark.timeout(240)
PASSWORD = "correct horse 9"
GAME = GAMES[0]
"""Any game: the lab asks each game's declarations (the first in the catalogue is quick to play)."""
N = game_class(GAME).min_players


def counts() -> tuple[str, list[int]]:
    """The compared dimension every game has: the number of players (the two smallest counts)."""
    cls = game_class(GAME)
    return "players", [cls.min_players, cls.min_players + 1]


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[TestClient]:
    app = make_app(tmp_path, lab={"folder": str(tmp_path / "lab"), "tick": 0.1})
    with TestClient(app) as client:
        yield client


def login(client: TestClient, prefix: str = "lab") -> dict[str, str]:
    name = f"{prefix}{secrets.token_hex(3)}"
    res = client.post("/api/signup", json={"name": name, "password": PASSWORD})
    assert res.status_code == 201, res.text
    return {"X-CSRF-Token": client.cookies.get(CSRF_COOKIE) or ""}


def wait_for(check: Callable[[], Any], seconds: float = 120.0) -> Any:
    """Poll ``check`` until it answers something true (the run's own pace; short naps)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("the lab run did not get there in time")


def finished(client: TestClient, run_id: str) -> dict[str, Any]:
    def over() -> dict[str, Any] | None:
        view = client.get(f"/api/lab/runs/{run_id}").json()
        return view if view["status"] in ("done", "failed", "cancelled") else None
    return wait_for(over)  # type: ignore[no-any-return]


def small_run(option: str, values: list[Any], games: int = 12) -> dict[str, Any]:
    return {"kind": "run", "game": GAME, "players": None, "agents": ["random"], "games": games, "seed": 3,
            "compare": [{"name": option, "values": values}]}


# --- refusals ---------------------------------------------------------------------------------------------
def test_lab_off_says_so(tmp_path: Path) -> None:
    with TestClient(make_app(tmp_path)) as client:
        headers = login(client)
        res = client.get("/api/lab")  # the lobby asks, to show its link or not
        assert res.status_code == 200 and not res.json()["on"] and "lab is off" in res.json()["message"]
        assert client.get("/api/lab/runs").status_code == 404
        res = client.post("/api/lab/runs", json={"game": GAME, "players": N}, headers=headers)
        assert res.status_code == 404 and "ludoteca serve --lab" in res.json()["message"]


def test_an_account_is_required(lab: TestClient) -> None:
    res = lab.post("/api/lab/runs", json={"game": GAME, "players": N})
    assert res.status_code == 401 and res.json()["code"] == "not_logged_in"
    assert lab.get("/api/lab/runs").status_code == 401


@pytest.mark.parametrize(("change", "code", "words"), [
    ({"options": {"no_such_option": 1}}, "bad_options", "unknown option"),
    ({"games": 10**6}, "bad_request", "from 1 to"),
    ({"game": "chess"}, "bad_game", "unknown game"),
    ({"players": 99}, "bad_players", "players"),
    ({"agents": ["oracle"]}, "bad_request", "agents"),
    ({"compare": [{"name": "players", "values": [2, 2]}], "players": None}, "bad_request", "twice"),
])
def test_bad_requests_get_clear_errors(lab: TestClient, change: dict[str, Any], code: str, words: str) -> None:
    headers = login(lab)
    body = {"kind": "run", "game": GAME, "players": N, "agents": ["random"], "games": 10, **change}
    res = lab.post("/api/lab/runs", json=body, headers=headers)
    assert res.status_code in (400, 404), res.text
    assert res.json()["code"] == code and words in res.json()["message"], res.text
    assert lab.get("/api/lab/runs").json()["runs"] == []  # nothing queued


def test_too_many_games_over_the_variants_is_refused(tmp_path: Path) -> None:
    option, values = counts()
    with TestClient(make_app(tmp_path, lab={"max_games": 100})) as client:
        headers = login(client)
        res = client.post("/api/lab/runs", json=small_run(option, values, games=60), headers=headers)
        assert res.status_code == 400 and "at most 100 games" in res.json()["message"]


def test_a_value_the_game_refuses_is_named_in_the_players_language(lab: TestClient) -> None:
    headers = login(lab)
    cls = game_class(GAME)
    option = next(o for o in cls.OPTIONS if o.kind == "int" and o.high is not None)
    assert option.high is not None
    body = {"kind": "run", "game": GAME, "players": N, "games": 10, "options": {option.name: option.high + 1}}
    res = lab.post("/api/lab/runs", json=body, headers=headers)
    assert res.status_code == 400 and res.json()["code"] == "bad_options"
    res = lab.post("/api/lab/runs", json=body, headers={**headers, "Accept-Language": "it"})
    assert res.json()["message"] != "" and "option" not in res.json()["message"].split(":")[0]


# --- real runs --------------------------------------------------------------------------------------------
def test_a_small_run_plays_through_the_server_to_its_report_and_csv(lab: TestClient) -> None:
    headers = login(lab)
    option, values = counts()
    res = lab.post("/api/lab/runs", json=small_run(option, values), headers=headers)
    assert res.status_code == 201, res.text
    run = res.json()
    assert run["status"] == "queued" and run["total"] == 24 and run["mine"]
    assert run["compare"][0]["label"] and len(run["variants"]) == 2
    again = lab.post("/api/lab/runs", json=small_run(option, values), headers=headers)
    assert again.status_code == 409  # one run at a time per account
    view = finished(lab, run["id"])
    assert view["status"] == "done" and view["done"] == 24, view
    results = view["results"]
    assert [v["games"] for v in results["variants"]] == [12, 12]
    first = results["variants"][0]["first_player"]
    assert 0 <= first["ci"][0] <= first["rate"] <= first["ci"][1] <= 1
    assert results["comparisons"][0]["baseline"] == 0 and results["comparisons"][0]["variant"] == 1
    report = lab.get(f"/lab/runs/{run['id']}/report")
    assert report.status_code == 200 and "<html" in report.text
    assert "script-src" not in report.headers["content-security-policy"]
    rows = list(csv.DictReader(io.StringIO(lab.get(f"/lab/runs/{run['id']}/games.csv").text)))
    assert len(rows) == 24 and {"variant", "seed", "winners"} <= set(rows[0])
    summary = lab.get(f"/lab/runs/{run['id']}/summary.json").json()
    assert summary["games_per_variant"] == 12
    listed = lab.get("/api/lab/runs").json()["runs"]
    assert [r["id"] for r in listed] == [run["id"]]

    other = TestClient(lab.app)  # another account sees the run, may not cancel it, compares runs
    other_headers = login(other, "other")
    assert other.get(f"/lab/runs/{run['id']}/games.csv").status_code == 200
    second = other.post("/api/lab/runs", json={**small_run(option, values), "seed": 4}, headers=other_headers).json()
    assert finished(other, second["id"])["status"] == "done"
    both = other.get("/api/lab/compare", params={"a": run["id"], "b": second["id"]}).json()
    difference = both["difference"]
    assert difference["ci"][0] <= difference["diff"] <= difference["ci"][1]


def test_a_balance_search_names_the_best_setting_in_words(lab: TestClient) -> None:
    headers = login(lab)
    option, values = counts()
    body = {"kind": "balance", "game": GAME, "players": None, "agents": ["random"], "budget": 40,
            "compare": [{"name": option, "values": values}]}
    res = lab.post("/api/lab/runs", json=body, headers=headers)
    assert res.status_code == 201, res.text
    view = finished(lab, res.json()["id"])
    assert view["status"] == "done", view
    found = view["results"]
    assert found["best"] in view["variants"] and found["games"] <= 40
    assert sum(c["best"] for c in found["candidates"]) == 1


def test_cancel_stops_a_running_run_and_a_queued_one(lab: TestClient) -> None:
    headers = login(lab)
    body = {"kind": "run", "game": GAME, "players": N, "agents": ["heuristic"], "games": 20_000}
    run = lab.post("/api/lab/runs", json=body, headers=headers).json()
    wait_for(lambda: lab.get(f"/api/lab/runs/{run['id']}").json()["done"] > 0)
    other = TestClient(lab.app)
    other_headers = login(other, "other")
    queued = other.post("/api/lab/runs", json={**body, "games": 50}, headers=other_headers).json()
    assert other.get(f"/api/lab/runs/{queued['id']}").json()["status"] == "queued"  # one run at a time
    refused = other.post(f"/api/lab/runs/{run['id']}/cancel", headers=other_headers)
    assert refused.status_code == 403
    assert other.post(f"/api/lab/runs/{queued['id']}/cancel", headers=other_headers).json()["status"] == "cancelled"
    assert lab.post(f"/api/lab/runs/{run['id']}/cancel", headers=headers).json()["status"] == "cancelling"
    view = finished(lab, run["id"])
    assert view["status"] == "cancelled" and 0 < view["done"] < 20_000
    assert lab.get(f"/lab/runs/{run['id']}/report").status_code == 404  # no report for a cancelled run
    pool = lab.app.state.lab_pool  # type: ignore[attr-defined]
    assert pool.playing is None


# --- the queue and the command ----------------------------------------------------------------------------
def test_the_queue_is_shared_and_a_dead_workers_run_resumes(tmp_path: Path) -> None:
    from ludoteca.web.repository import lab_runs
    from ludoteca.web.repository.store import Repository

    engine = Repository(f"sqlite:///{tmp_path / 'q.sqlite3'}").engine
    for k, run_id in enumerate(("first", "second")):
        lab_runs.create_run(engine, {"id": run_id, "account_id": k, "owner": f"a{k}", "kind": "run", "game": GAME,
                                     "request": {}, "lang": "en", "total": 10, "created_at": 100.0 + k})
    taken = lab_runs.claim_next(engine, "w1", 200.0)
    assert taken is not None and taken["id"] == "first"  # the oldest first
    other = lab_runs.claim_next(engine, "w2", 200.0)
    assert other is not None and other["id"] == "second"  # each run to one worker only
    assert lab_runs.claim_next(engine, "w3", 200.0) is None
    assert lab_runs.active_count(engine) == 2 and lab_runs.active_count(engine, 0) == 1
    assert lab_runs.beat(engine, "first", 4, 210.0) == "running"
    assert lab_runs.requeue_stale(engine, 205.0) == 1  # "second" said nothing since 200: its worker died
    assert lab_runs.get_run(engine, "second")["status"] == "queued"  # type: ignore[index]
    assert lab_runs.cancel(engine, "first", 220.0) == "cancelling"
    assert lab_runs.cancel(engine, "second", 220.0) == "cancelled"  # queued: at once
    lab_runs.release(engine, "first", 230.0)  # its worker stops: the cancel is done
    assert lab_runs.get_run(engine, "first")["status"] == "cancelled"  # type: ignore[index]
    assert lab_runs.active_count(engine) == 0


def test_a_ray_cluster_plays_the_runs_when_given(tmp_path: Path) -> None:
    from ludoteca.web.labs.orders import Order, command
    from ludoteca.web.labs.settings import LabSettings

    order = Order("run", GAME, N, ["random"], 100, 1, {})
    local = command(order, tmp_path, LabSettings(str(tmp_path), jobs=2), "it")
    assert "--backend" not in local and local[local.index("--jobs") + 1] == "2"
    ray = command(order, tmp_path, LabSettings(str(tmp_path), ray="10.0.0.5:6379"), "it")
    assert ray[ray.index("--backend") + 1] == "ray" and ray[ray.index("--address") + 1] == "10.0.0.5:6379"
    assert ray[ray.index("--lang") + 1] == "it"


def test_serve_refuses_lab_flags_without_the_lab() -> None:
    from ludoteca.cli import UsageError, build_parser
    from ludoteca.commands.serve import _lab

    args = build_parser().parse_args(["serve", "--lab-jobs", "2"])
    with pytest.raises(UsageError, match="--lab"):
        _lab(args)
    on = _lab(build_parser().parse_args(["serve", "--lab", "--lab-jobs", "2"]))
    assert on is not None and on["jobs"] == 2 and on["folder"].endswith("lab")


def test_a_designers_file_is_compared_with_the_usual_material(lab: TestClient) -> None:
    from ludoteca.registry import load_game

    found = [(g, o) for g in GAMES for o in game_class(g).OPTIONS if o.kind == "file"]
    if not found:
        pytest.skip("no game declares a designer's file")
    game, option = found[0]
    players = game_class(game).min_players
    content = load_game(game, players=players).record_options()[option.name]  # the usual material, as a file
    headers = login(lab)
    body = {"kind": "run", "game": game, "players": players, "games": 4,
            "compare": [{"name": option.name, "values": [{"default": True}, content]}]}
    res = lab.post("/api/lab/runs", json=body, headers={**headers, "Accept-Language": "it"})
    assert res.status_code == 201, res.text
    run = res.json()
    assert run["compare"][0]["values"][1] == "il tuo file" and "regole" in run["compare"][0]["values"][0]
    assert lab.post(f"/api/lab/runs/{run['id']}/cancel", headers=headers).status_code == 200
    finished(lab, run["id"])
    bad = {**body, "compare": [{"name": option.name, "values": [{"default": True}, {"not": "a board"}]}]}
    res = lab.post("/api/lab/runs", json=bad, headers=headers)
    assert res.status_code == 400 and res.json()["code"] == "bad_options", res.text
