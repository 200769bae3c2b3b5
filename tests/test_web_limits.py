"""The web server's limits and its answers to bad input ("Server defects").

In-process (Starlette TestClient), on SQLite and, when ``LUDOTECA_TEST_POSTGRES_URL`` is set,
on PostgreSQL too. The real server (a ``ludoteca serve`` subprocess) is in test_web_server.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import text as sql
from starlette.websockets import WebSocketDisconnect

from ludoteca.web.limits import (
    MAX_DEPTH,
    MAX_LAYOUT_SIDE,
    BadInput,
    ClientBuckets,
    ServerLimits,
    parse_json,
    valid_table_id,
)
from ludoteca.web.lobby import lobby as lobby_module
from ludoteca.web.master.ai import AIRunner
from ludoteca.web.repository.store import AppendRequest, Repository, SeatData, TableData
from tests.test_web_api import WS, connect, create, open_seats, server

pytestmark = pytest.mark.timeout(120)

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=[
        pytest.mark.postgres,
        pytest.mark.skipif(not PG_URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server)")]),
]


def database_for(kind: str) -> str | None:
    return PG_URL if kind == "postgres" else None


def grid(rows: int, cols: int) -> list[list[int]]:
    return [[3 + (r + c) % 4 for c in range(cols)] for r in range(rows)]


# --- options: bounded before anything is built ---------------------------------------------

def test_oversized_or_server_side_options_are_refused_before_any_game_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple] = []
    real = lobby_module.load_game

    def spy(name: str, **options: Any) -> Any:
        built.append((name, options))
        return real(name, **options)

    monkeypatch.setattr(lobby_module, "load_game", spy)
    with server(tmp_path) as client:
        cases = [
            ({"layout": grid(80, 80)}, "layout", "tohm"),                         # the 2 GB request
            ({"layout": grid(MAX_LAYOUT_SIDE + 1, 3)}, "layout", "tohm"),
            ({"layout": [[3, 4, 5], [5, 6]]}, "layout", "tohm"),                  # not rectangular
            ({"layout": "/etc/passwd"}, "layout", "tohm"),                        # a server-side path
            ({"tiles": "/etc/passwd"}, "tiles", "exagon"),                        # a server-side path
            ({"tiles": [{"id": i, "sides": [1, 2, 3, 4, 5, 6], "star": 21, "star_points": 3}  # a designer's
                        for i in range(400)]}, "tiles", "exagon"),                 # file over the upload bound
            ({"turn_limit": 10**15}, "turn_limit", "tohm"),
            ({"nope": 1}, "nope", "tohm"),
            ({"ties": "x" * 500}, "ties", "tri"),
            ({"size": [4]}, "size", "tri"),
        ]
        for options, word, game in cases:
            started = time.process_time()  # CPU seconds (the server is a thread of this process): a cost, not a wait
            res = client.post("/api/tables", json={"game": game, "players": 2, "options": options})
            assert res.status_code == 400, (options if len(str(options)) < 200 else word, res.text)
            body = res.json()
            assert body["error"] == "bad_options" and word in body["message"], body
            assert time.process_time() - started < 1.0
        assert built == [], "no game is built from refused options"
        # a layout inside the bounds (RULES.md: any rectangular grid of at least 3x3) still works
        made = create(client, "tohm", open_seats(2), options={"layout": grid(MAX_LAYOUT_SIDE, 3)})
        assert client.get(f"/api/tables/{made['id']}").status_code == 200


def test_the_web_layout_bound_is_within_the_engine_bound() -> None:
    from ludoteca.games import tohm

    assert getattr(tohm, "MAX_SIDE", MAX_LAYOUT_SIDE) >= MAX_LAYOUT_SIDE


def test_games_are_built_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = lobby_module.load_game

    def slow(name: str, **options: Any) -> Any:
        time.sleep(1.5)  # a costly game construction
        return real(name, **options)

    with server(tmp_path) as client:
        monkeypatch.setattr(lobby_module, "load_game", slow)
        results: list[int] = []
        worker = threading.Thread(target=lambda: results.append(
            client.post("/api/tables", json={"game": "tohm", "players": 2}).status_code))
        worker.start()
        time.sleep(0.3)
        started = time.perf_counter()
        assert client.get("/api/games").status_code == 200
        waited = time.perf_counter() - started
        worker.join()
        assert results == [201]
        assert waited < 0.7, f"the server answered after {waited:.2f} s while a game was being built"


# --- bad input: a clear error, never a 500 ----------------------------------------------------

def test_parse_json_bounds_nesting_and_numbers() -> None:
    assert parse_json('{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for text in ["[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 5000 + "]" * 5000, "1" * 4301,
                 "[" + "9" * 19 + "]", "NaN", "[1e999]", "{bad", b"\xff"]:
        with pytest.raises(BadInput) as info:
            parse_json(text)
        assert info.value.code == "bad_json" and info.value.message


@pytest.mark.parametrize("database", DATABASES)
def test_deep_json_and_huge_integers_get_a_clear_error(tmp_path: Path, database: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    huge = "1" * 4301
    with server(tmp_path, database_for(database)) as client:
        for body in (deep, huge, '{"game": "tohm", "players": ' + huge + "}", '{"game": [' + deep + "]}"):
            res = client.post("/api/tables", content=body.encode(), headers={"Content-Type": "application/json"})
            assert res.status_code == 400, res.text
            assert res.json()["error"] == "bad_json" and res.json()["message"]
        made = create(client, "tohm", open_seats(2))
        res = client.post(f"/api/tables/{made['id']}/join", content=huge.encode())
        assert res.status_code == 400 and res.json()["error"] == "bad_json"
        with connect(client, made["id"], made["token"]) as ann:
            for text in (deep, huge, '{"type": "action", "action": {"place": [' + huge + "]}}",
                         "[" * 40 + "]" * 40, '{"type": "ping", "ref": NaN}'):
                ann.send(text)
                error = ann.error()
                assert error["code"] == "bad_json" and error["message"]
            ann.send({"type": "ping", "ref": 1})  # the connection is still open
            assert ann.until(lambda m: m["type"] == "pong")["ref"] == 1


BAD_IDS = ["ab\x00cd", "x" * 33, "é", "a b", "..", "a;drop"]


@pytest.mark.parametrize("database", DATABASES)
def test_malformed_table_ids_are_404_without_touching_the_database(tmp_path: Path, database: str) -> None:
    assert all(not valid_table_id(i) for i in BAD_IDS) and valid_table_id("abc23xyz89")
    with server(tmp_path, database_for(database)) as client:
        repo = client.app.state.lobby.repo
        asked: list[str] = []
        real = repo.load_table
        repo.load_table = lambda table_id: (asked.append(table_id), real(table_id))[1]
        for bad in BAD_IDS:
            quoted = "".join(ch if ch.isalnum() else f"%{ord(ch):02X}" if ord(ch) < 128 else ch for ch in bad)
            for method, path in [("GET", ""), ("POST", "/join"), ("POST", "/rematch"), ("GET", "/record"),
                                 ("GET", "/replay")]:
                res = client.request(method, f"/api/tables/{quoted}{path}", json={"seat": 0})
                assert res.status_code == 404, (bad, path, res.text)
                assert res.json()["error"] == "not_found" and "\x00" not in res.json()["message"]
            with client.websocket_connect(f"/ws/{quoted}") as ws:
                assert json.loads(ws.receive_text())["code"] == "not_found"
                with pytest.raises(WebSocketDisconnect) as info:
                    ws.receive_text()
                assert info.value.code == 4404
        assert asked == [], "a malformed id never reaches the database"
        assert client.get("/api/tables/abc23xyz89").status_code == 404  # well-formed, unknown


# --- the last join is atomic --------------------------------------------------------------------

@pytest.mark.parametrize("database", DATABASES)
def test_a_failed_last_join_changes_nothing_and_its_retry_starts_the_game(tmp_path: Path, database: str) -> None:
    with server(tmp_path, database_for(database)) as client:
        manager = client.app.state.lobby
        made = create(client, "tohm", open_seats(3))
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"})
        assert bob.status_code == 200
        real = manager.repo.append_batch

        def broken(batch: list) -> None:
            raise RuntimeError("the database went away")

        manager.repo.append_batch = broken
        res = client.post(f"/api/tables/{made['id']}/join", json={"seat": 2, "name": "Cy"})
        assert res.status_code == 503 and res.json()["error"] == "storage"
        manager.repo.append_batch = real
        stored = manager.repo.load_table(made["id"])
        assert stored.status == "waiting" and stored.seats[2].kind == "open" and stored.actions == []
        assert client.get(f"/api/tables/{made['id']}").json()["seats"][2]["kind"] == "open"
        retry = client.post(f"/api/tables/{made['id']}/join", json={"seat": 2, "name": "Cy"})
        assert retry.status_code == 200 and retry.json()["token"]
        stored = manager.repo.load_table(made["id"])
        assert stored.status == "playing" and stored.seats[2].name == "Cy"
        assert len(stored.actions) >= 1  # the opening die roll, stored with the seat
        assert client.get(f"/api/tables/{made['id']}").json()["status"] == "playing"


@pytest.mark.parametrize("database", DATABASES)
def test_a_join_sent_again_with_its_key_gets_the_same_seat(tmp_path: Path, database: str) -> None:
    """The answer to a join can be lost after the commit (a dropped connection, a kill): the same
    join with the same client key answers the same token instead of 409."""
    key = "k" * 10 + "Z9_-" * 4
    with server(tmp_path, database_for(database)) as client:
        made = create(client, "tohm", open_seats(2))
        url = f"/api/tables/{made['id']}/join"
        first = client.post(url, json={"seat": 1, "name": "Bob", "key": key})
        again = client.post(url, json={"seat": 1, "name": "Bob", "key": key})
        assert first.status_code == again.status_code == 200
        assert first.json()["token"] == again.json()["token"] == key
        other = client.post(url, json={"seat": 1, "name": "Eve", "key": "e" * 30})
        assert other.status_code == 409 and other.json()["error"] == "seat_taken"
        stored = client.app.state.lobby.repo.load_table(made["id"])
        assert stored.status == "playing" and stored.seats[1].name == "Bob"
        for bad in ("short", "x" * 129, "has space" * 4, 12345):
            res = client.post(url, json={"seat": 0, "key": bad})
            assert res.status_code == 400 and res.json()["error"] == "bad_key"
        with connect(client, made["id"], key) as bob:  # the key is the seat's token
            assert bob.last["you"] == 1


@pytest.mark.parametrize("database", DATABASES)
def test_seat_and_start_are_stored_in_one_transaction(tmp_path: Path, database: str) -> None:
    """The transaction that takes the last seat also stores the start: a commit that fails after
    the seat's update leaves the seat open (a kill -9 between the two was the issue's bug)."""
    with server(tmp_path, database_for(database)) as client:
        manager = client.app.state.lobby
        made = create(client, "tohm", open_seats(2))
        engine = manager.repo.engine
        from sqlalchemy import event

        def fail_on_actions(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
            if statement.startswith("INSERT INTO ludo_actions"):
                raise RuntimeError("killed between the seat and the start")

        event.listen(engine, "before_cursor_execute", fail_on_actions)
        try:
            res = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"})
        finally:
            event.remove(engine, "before_cursor_execute", fail_on_actions)
        assert res.status_code == 503
        stored = manager.repo.load_table(made["id"])
        assert stored.seats[1].kind == "open" and stored.status == "waiting"
        assert client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).status_code == 200


@pytest.mark.parametrize("database", DATABASES)
def test_a_table_left_waiting_with_every_seat_taken_starts_on_reload(tmp_path: Path, database: str) -> None:
    url = database_for(database)
    with server(tmp_path, url) as client:
        made = create(client, "tohm", open_seats(2))
        repo = client.app.state.lobby.repo
        # what the old two-step join left after a kill -9: the seat stored, the start not
        # on the server's own storage thread: the repository's writer connection is not shared between threads
        lobby = client.app.state.lobby
        lobby._db.submit(repo.append_batch, [AppendRequest(made["id"], 0, [], seats=[(1, SeatData(
            "human", None, "Bob", "0" * 64))])]).result(timeout=30)
    with server(tmp_path, url) as client:
        assert client.get(f"/api/tables/{made['id']}").json()["status"] == "playing"
        stored = client.app.state.lobby.repo.load_table(made["id"])
        assert stored.status == "playing" and len(stored.actions) >= 1


# --- limits ---------------------------------------------------------------------------------------

def test_table_creation_is_limited_per_client(tmp_path: Path) -> None:
    limits = ServerLimits(create_per_minute=6, create_burst=3)
    with server(tmp_path, limits=limits) as client:
        codes = [client.post("/api/tables", json={"game": "tohm", "players": 2}).status_code for _ in range(4)]
        assert codes == [201, 201, 201, 429]
        res = client.post("/api/tables", json={"game": "tohm", "players": 2})
        assert res.json()["error"] == "rate_limited" and 1 <= int(res.headers["retry-after"]) <= 10
        assert client.get("/api/tables").status_code == 200  # reading is not limited


def test_client_buckets_are_per_address_and_refill() -> None:
    now = [0.0]
    buckets = ClientBuckets(per_minute=60, burst=2, max_clients=3, now=lambda: now[0])
    assert [buckets.take("a") for _ in range(3)] == [0.0, 0.0, pytest.approx(1.0)]
    assert buckets.take("b") == 0.0  # another address has its own bucket
    now[0] += 1.0
    assert buckets.take("a") == 0.0  # one per second at 60 per minute
    for k in range(10):  # many addresses: memory stays bounded
        buckets.take(f"c{k}")
    assert len(buckets.buckets) <= 3


def test_spectators_are_capped_and_players_still_get_in(tmp_path: Path) -> None:
    with server(tmp_path, limits=ServerLimits(max_spectators=2)) as client:
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        bob = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, table) as first, connect(client, table):
            with client.websocket_connect(f"/ws/{table}") as raw:  # the third spectator
                raw.send_text(json.dumps({"type": "ping"}))
                assert json.loads(raw.receive_text())["code"] == "spectators_full"
                with pytest.raises(WebSocketDisconnect) as info:
                    raw.receive_text()
                assert info.value.code == 4429
            with client.websocket_connect(f"/ws/{table}") as raw:  # a player: in despite the crowd
                raw.send_text(json.dumps({"type": "auth", "token": bob}))
                ws = WS(raw)
                assert ws.until(lambda m: m["type"] == "snapshot" and m["you"] == 1)["status"] == "playing"
            first.send({"type": "ping"})
            first.until(lambda m: m["type"] == "pong")
            assert client.get(f"/api/tables/{table}").json()["spectators"] == 2


def test_a_new_spectator_sends_nothing_to_the_others(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        with connect(client, made["id"]) as first:
            for _ in range(5):
                with connect(client, made["id"]):
                    pass
            first.send({"type": "ping"})
            first.until(lambda m: m["type"] == "pong")
            assert [m["type"] for m in first.messages] == ["snapshot", "pong"]


def test_waiting_tables_nobody_joins_expire(tmp_path: Path) -> None:
    with server(tmp_path, limits=ServerLimits(waiting_ttl=1.0)) as client:
        made = create(client, "tohm", open_seats(2))
        assert made["id"] in {t["id"] for t in client.get("/api/tables").json()["tables"]}
        deadline = time.monotonic() + 10
        while client.get(f"/api/tables/{made['id']}").json()["status"] != "expired":
            assert time.monotonic() < deadline, "the table never expired"
            time.sleep(0.2)
        assert made["id"] not in {t["id"] for t in client.get("/api/tables").json()["tables"]}
        res = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1})
        assert res.status_code == 409 and res.json()["error"] == "expired"
        assert client.app.state.lobby.repo.load_table(made["id"]).status == "expired"
    with server(tmp_path, limits=ServerLimits(waiting_ttl=1.0)) as client:  # and stays so after a restart
        assert client.get(f"/api/tables/{made['id']}").json()["status"] == "expired"


@pytest.mark.parametrize("database", DATABASES)
def test_a_stale_join_to_a_table_expired_in_storage_stores_nothing(tmp_path: Path, database: str) -> None:
    with server(tmp_path, database_for(database), limits=ServerLimits(waiting_ttl=0)) as client:
        made = create(client, "tohm", open_seats(2))
        repo = client.app.state.lobby.repo
        with repo.engine.begin() as conn:  # idle since 1970: only this table is old enough to expire
            conn.execute(sql("UPDATE ludo_tables SET updated_at = 0 WHERE id = :id"), {"id": made["id"]})
        assert repo.expire_waiting(1.0) == [made["id"]]  # expired behind the live table's back
        res = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1})
        assert res.status_code == 409 and res.json()["error"] == "conflict"
        stored = repo.load_table(made["id"])
        assert stored.status == "expired" and stored.seats[1].kind == "open" and stored.actions == []


def test_start_up_rebuilds_a_bounded_number_of_tables_and_skips_oversized_ones(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        ids = []
        for _ in range(3):
            made = create(client, "tohm", open_seats(2))
            client.post(f"/api/tables/{made['id']}/join", json={"seat": 1})
            ids.append(made["id"])
        repo = Repository(client.app.state.database_url)
        ai = [SeatData("ai", "random", "AI 1"), SeatData("ai", "random", "AI 2")]
        big = TableData(id=uuid.uuid4().hex[:12], game="tohm", seed=1, status="waiting", created_at=time.time(),
                        options={"players": 2, "layout": grid(80, 80), "turn_limit": 1000},
                        updated_at=time.time(), seats=ai)
        repo.create_table(big)  # stored before the bounds existed
        repo.close()
    started = time.process_time()  # CPU seconds: the start-up's cost, which a busy machine does not stretch
    with server(tmp_path, limits=ServerLimits(resume_limit=2)) as client:
        assert time.process_time() - started < 10
        manager = client.app.state.lobby
        assert big.id not in manager.tables
        assert sum(1 for i in ids if i in manager.tables) == 2  # the most recent two
        assert client.get(f"/api/tables/{ids[0]}").json()["status"] == "playing"  # the other, on demand
        assert client.get(f"/api/tables/{big.id}").status_code == 404
        assert manager.repo.load_table(big.id).status == "broken"


# --- AI work: bounded, tables take turns ------------------------------------------------------------

def _record(order: list[str], lock: threading.Lock, running: list[int], peak: list[int], name: str) -> str:
    with lock:
        order.append(name)
        running[0] += 1
        peak[0] = max(peak[0], running[0])
    time.sleep(0.02)
    with lock:
        running[0] -= 1
    return name


def test_ai_work_is_bounded_and_tables_take_turns() -> None:
    order: list[str] = []
    lock = threading.Lock()
    running, peak = [0], [0]

    async def main() -> list[str]:
        runner = AIRunner(workers=2, executor=ThreadPoolExecutor(max_workers=8))
        jobs = [runner.run(f"t{t}", _record, order, lock, running, peak, f"t{t}.{k}", interactive=False)
                for t in range(4) for k in range(3)]  # table t0 queues 3 searches before t1 does
        done = await asyncio.gather(*jobs)
        runner.close()
        return done

    assert len(asyncio.run(main())) == 12
    assert peak[0] <= 2, "never more searches at once than workers"
    tables_in_order = [name.split(".")[0] for name in order]
    # t0's first two searches take the two idle workers; from then on the tables take turns
    # (t0's third search waits for t1, t2 and t3) instead of running in arrival order
    assert tables_in_order == ["t0", "t0", "t1", "t2", "t3", "t0", "t1", "t2", "t3", "t1", "t2", "t3"], order


def test_tables_with_people_are_served_before_ai_only_tables() -> None:
    order: list[str] = []
    lock = threading.Lock()
    running, peak = [0], [0]

    async def main() -> None:
        runner = AIRunner(workers=1, executor=ThreadPoolExecutor(max_workers=2))
        jobs = [runner.run(f"bg{k}", _record, order, lock, running, peak, f"bg{k}", interactive=False)
                for k in range(6)]
        jobs.append(runner.run("people", _record, order, lock, running, peak, "people", interactive=True))
        await asyncio.gather(*jobs)
        runner.close()

    asyncio.run(main())
    assert order[:2] == ["bg0", "people"], order  # right after the search already running
    assert peak[0] == 1
