"""Table life: resign, leave a seat, abandoned seats, rematch offers — over the real
websocket, stored (SQLite here, PostgreSQL in ``test_*_postgres``) and told to every viewer."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from ludoteca.core.records import Record
from tests.test_web_api import WS, connect, create, open_seats, server

pytestmark = pytest.mark.timeout(120)

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
needs_pg = pytest.mark.skipif(not PG_URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server)")


def note(ws: WS, kind: str) -> dict[str, Any]:
    """The last ``kind`` notice ``ws`` received (waiting for one if none came yet)."""
    seen = [m for m in ws.messages if m["type"] == "note" and m["kind"] == kind]
    return seen[-1] if seen else ws.until(lambda m: m["type"] == "note" and m["kind"] == kind)


def got(ws: WS, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first message received so far (or to come) that ``pred`` accepts."""
    seen = [m for m in ws.messages if pred(m)]
    return seen[0] if seen else ws.until(pred)


def update(ws: WS, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    if ws.last is not None and pred(ws.last):
        return ws.last
    return ws.until(lambda m: m["type"] in ("snapshot", "update") and pred(m))


def two_players(client: TestClient, game: str = "tohm", **settings: Any) -> tuple[str, str, str]:
    """A started two-player table: (id, Ann's token, Bob's token)."""
    made = create(client, game, open_seats(2), **settings)
    bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
    return made["id"], made["token"], bob


def stored(client: TestClient, table: str) -> Any:
    return client.app.state.lobby.repo.load_table(table)  # type: ignore[attr-defined]


# --- resign --------------------------------------------------------------------------------------------

def test_resigning_a_two_player_game_ends_it_and_the_other_player_wins(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client)
        with connect(client, table, ann) as a, connect(client, table, bob) as b, connect(client, table) as watcher:
            b.send({"type": "resign"})  # not Bob's turn: resigning needs no turn
            for ws in (a, b, watcher):
                over = update(ws, lambda m: m["status"] == "over")
                assert over["result"]["winners"] == [0] and over["result"]["reason"] == "resigned"
                assert over["result"]["seat"] == 1
                told = note(ws, "resigned")
                assert told["name"] == "Bob" and told["ended"] is True and told["at"] == over["seq"]
            b.send({"type": "resign"})
            assert b.error()["code"] == "not_playing"
            watcher.send({"type": "resign"})
            assert watcher.error()["code"] == "not_seated"
        data = stored(client, table)
        assert data.status == "over" and data.result["reason"] == "resigned"
        assert [n.kind for n in data.notes] == ["resigned"]
        # the record holds the engine's actions only; the table's result says why it ended
        rec = Record.from_json(client.get(f"/api/tables/{table}/record").json())
        assert rec.meta["result"]["reason"] == "resigned" and len(rec.actions) == data.actions.__len__()
        replay = client.get(f"/api/tables/{table}/replay").json()
        assert replay["result"]["reason"] == "resigned" and replay["notes"][0]["kind"] == "resigned"
        assert table not in [t["id"] for t in client.get("/api/tables").json()["tables"]]


def test_resigning_with_more_players_hands_the_seat_to_the_easiest_ai(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(3))
        table = made["id"]
        bob = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        cat = client.post(f"/api/tables/{table}/join", json={"seat": 2, "name": "Cat"}).json()["token"]
        with connect(client, table, made["token"]) as a, connect(client, table, cat) as c:
            with connect(client, table, bob) as b:
                b.send({"type": "resign"})
                left = b.until(lambda m: m["type"] == "left")
                assert left["seat"] == 1
                assert b.until(lambda m: m["type"] == "snapshot")["you"] is None  # Bob watches now
                b.send({"type": "action", "action": {"pass": True}})
                assert b.error()["code"] == "not_seated"
            for ws in (a, c):
                told = note(ws, "resigned")
                assert told["name"] == "Bob" and told["level"] == "random" and "ended" not in told
                seats = update(ws, lambda m: m["seats"][1]["kind"] == "ai")["seats"]
                assert seats[1]["level"] == "random" and not seats[1].get("taken_over")
            assert a.last is not None and a.last["status"] == "playing"
        data = stored(client, table)
        assert data.seats[1].kind == "ai" and data.seats[1].token_hash is None and data.status == "playing"
        # Bob's old token no longer holds a seat
        with client.websocket_connect(f"/ws/{table}") as raw:
            ws = WS(raw)
            ws.until(lambda m: m["type"] == "snapshot")
            ws.send({"type": "auth", "token": bob})
            assert ws.error()["code"] == "bad_token"


# --- leave a seat --------------------------------------------------------------------------------------

def test_leaving_before_the_start_frees_the_seat_for_someone_else(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        with connect(client, table, made["token"]) as a, connect(client, table) as watcher:
            a.send({"type": "leave"})
            assert a.until(lambda m: m["type"] == "left")["seat"] == 0
            for ws in (a, watcher):
                assert note(ws, "left")["name"] == "Ann"
                got(ws, lambda m: m["type"] in ("update", "seats") and m["seats"][0]["kind"] == "open")
        assert stored(client, table).seats[0].kind == "open"
        assert client.get(f"/api/tables/{table}").json()["status"] == "waiting"
        eve = client.post(f"/api/tables/{table}/join", json={"seat": 0, "name": "Eve"})
        assert eve.status_code == 200
        assert stored(client, table).seats[0].name == "Eve"


def test_leaving_during_the_game_hands_the_seat_to_an_ai_for_good(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client)
        with connect(client, table, ann) as a:
            with connect(client, table, bob) as b:
                b.send({"type": "leave"})
                b.until(lambda m: m["type"] == "left")
            told = note(a, "ai_took_over")
            assert told["why"] == "left" and told["name"] == "Bob"
        seat = stored(client, table).seats[1]
        assert seat.kind == "ai" and seat.token_hash is None  # a seat left cannot be taken back


def test_leaving_when_the_table_ends_abandoned_seats_ends_it(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client, abandoned="end")
        with connect(client, table, ann) as a:
            with connect(client, table, bob) as b:
                b.send({"type": "leave"})
                b.until(lambda m: m["type"] == "left")
            over = update(a, lambda m: m["status"] == "over")
            assert over["result"]["reason"] == "abandoned" and over["result"]["winners"] == []
            assert note(a, "abandoned")["why"] == "left"
        assert table not in [t["id"] for t in client.get("/api/tables").json()["tables"]]


# --- abandoned seats -----------------------------------------------------------------------------------

def test_an_away_players_seat_is_taken_over_by_the_ai_and_can_be_taken_back(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client, abandon_after=1)
        with connect(client, table, ann) as a:
            with connect(client, table, bob):
                pass  # Bob closes his tab
            away = got(a, lambda m: m["type"] in ("seats", "update") and "abandon_in" in m["seats"][1])
            assert 0 < away["seats"][1]["abandon_in"] <= 1
            told = note(a, "ai_took_over")
            assert told["why"] == "away" and told["name"] == "Bob" and told["level"] == "random"
            seats = update(a, lambda m: m["seats"][1]["kind"] == "ai")["seats"]
            assert seats[1]["taken_over"] is True and seats[1]["name"] == "Bob"
            with connect(client, table, bob) as b:  # Bob comes back: his token still holds the seat
                assert b.last is not None and b.last["you"] == 1 and b.last["legal"] is None
                b.send({"type": "take_back"})
                assert note(b, "took_back")["name"] == "Bob"
                assert update(b, lambda m: m["seats"][1]["kind"] == "human")["seats"][1]["connected"]
                b.send({"type": "take_back"})
                assert b.error()["code"] == "not_playing"
        assert stored(client, table).seats[1].kind == "human"


def test_an_abandoned_table_ends_without_a_winner_and_leaves_the_lobby(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, _ = two_players(client, abandon_after=1, abandoned="end")
        assert table in [t["id"] for t in client.get("/api/tables").json()["tables"]]
        with connect(client, table, ann) as a:
            over = update(a, lambda m: m["status"] == "over")  # Bob never came
            assert over["result"] == {"returns": [0.0, 0.0], "winners": [], "reason": "abandoned", "seat": 1}
            assert note(a, "abandoned")["name"] == "Bob"
        assert stored(client, table).status == "over"
        assert table not in [t["id"] for t in client.get("/api/tables").json()["tables"]]


def test_a_player_who_joins_over_http_and_never_connects_is_away_from_the_start(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2), abandon_after=1)
        with connect(client, made["id"], made["token"]) as a:
            client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"})  # the game starts
            assert note(a, "ai_took_over")["name"] == "Bob"
        assert stored(client, made["id"]).seats[1].kind == "ai"


@pytest.mark.parametrize("bad", [
    {"abandon_after": 0}, {"abandon_after": 3601}, {"abandon_after": "60"}, {"abandon_after": True},
    {"abandon_after": 1.5}, {"abandoned": "vanish"}, {"abandoned": None}, {"chat": "loud"}, {"chat": 1},
])
def test_bad_table_settings_are_refused_and_nothing_is_created(tmp_path: Path, bad: dict[str, Any]) -> None:
    with server(tmp_path) as client:
        res = client.post("/api/tables", json={"game": "tohm", "players": 2, **bad})
        assert res.status_code == 400 and res.json()["code"] == "bad_options", res.text
        assert res.json()["message"]
        assert client.get("/api/tables").json()["tables"] == []


def test_settings_default_and_are_sent_with_the_snapshot(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        with connect(client, made["id"]) as ws:
            assert ws.last is not None
            assert ws.last["settings"] == {"abandon_after": 180, "abandoned": "ai", "chat": "shared"}


# --- rematch offers --------------------------------------------------------------------------------------

def finished(client: TestClient, **settings: Any) -> tuple[str, str, str]:
    table, ann, bob = two_players(client, **settings)
    with connect(client, table, bob) as b:
        b.send({"type": "resign"})
        update(b, lambda m: m["status"] == "over")
    return table, ann, bob


def test_a_rematch_starts_with_the_same_seats_when_every_player_accepts(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = finished(client, chat="separate", abandon_after=600)
        with connect(client, table, ann) as a, connect(client, table, bob) as b, connect(client, table) as w:
            w.send({"type": "rematch_offer"})
            assert w.error()["code"] == "not_seated"
            b.send({"type": "rematch_accept"})
            assert b.error()["code"] == "no_offer"
            a.send({"type": "rematch_offer"})
            offered = note(b, "rematch_offer")
            assert offered["name"] == "Ann" and offered["seat"] == 0
            assert update(b, lambda m: m.get("offer") is not None)["offer"] == {"by": 0, "accepted": [0]}
            b.send({"type": "rematch_decline"})
            assert note(a, "rematch_decline")["name"] == "Bob"
            assert update(a, lambda m: m.get("offer") is None)["offer"] is None
            b.send({"type": "rematch_offer"})
            note(a, "rematch_offer")
            a.send({"type": "rematch_accept"})
            for ws in (a, b, w):
                new = ws.until(lambda m: m["type"] == "rematch")
                assert new["together"] is True
        rematch = client.get(f"/api/tables/{new['table']}").json()
        assert rematch["status"] == "playing" and [s["name"] for s in rematch["seats"]] == ["Ann", "Bob"]
        assert client.get(f"/api/tables/{table}").json()["rematch"] == new["table"]
        with connect(client, new["table"], bob) as b2:  # each browser's token holds the same seat
            assert b2.last is not None and b2.last["you"] == 1
            assert b2.last["settings"] == {"abandon_after": 600, "abandoned": "ai", "chat": "separate"}
        # the HTTP rematch route answers the same table and token to a player
        again = client.post(f"/api/tables/{table}/rematch", json={"token": ann}).json()
        assert again["id"] == new["table"] and again["seat"] == 0 and again["token"] == ann
        with connect(client, table, ann) as a:
            a.send({"type": "rematch_offer"})
            assert a.error()["code"] == "no_offer"


# --- durability --------------------------------------------------------------------------------------------

def restart_scenario(tmp_path: Path | None, database: str | None) -> None:
    """Notices, an offer, an away seat's time: all survive a restart; the timer goes on from the stored time."""
    with server(tmp_path, database) as client:
        done, ann, bob = finished(client)
        with connect(client, done, ann) as a:
            a.send({"type": "rematch_offer"})
            note(a, "rematch_offer")
        live, ann2, bob2 = two_players(client, abandon_after=3, abandoned="end")
        with connect(client, live, ann2), connect(client, live, bob2):
            pass  # both leave; their away time is stored
        # the away time is stored by the server's storage thread just after the disconnection: wait for it
        deadline = time.monotonic() + 10
        while (away_since := stored(client, live).seats[1].away_since) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert away_since is not None and away_since <= time.time()
    with server(tmp_path, database) as client:
        with connect(client, done, bob) as b:
            assert b.last is not None and b.last["offer"] == {"by": 0, "accepted": [0]}
            assert [n["kind"] for n in b.last["notes"]] == ["resigned", "rematch_offer"]
            b.send({"type": "rematch_accept"})
            b.until(lambda m: m["type"] == "rematch")
        with connect(client, live) as w:
            over = update(w, lambda m: m["status"] == "over")
            assert over["result"]["reason"] == "abandoned"
        # ended at the stored time plus the limit, not the limit after the restart
        assert stored(client, live).updated_at < away_since + 3 + 2.5


def test_table_life_survives_a_restart_sqlite(tmp_path: Path) -> None:
    restart_scenario(tmp_path, None)


@needs_pg
@pytest.mark.postgres
def test_table_life_survives_a_restart_postgres() -> None:
    pytest.importorskip("psycopg")
    restart_scenario(None, PG_URL)
