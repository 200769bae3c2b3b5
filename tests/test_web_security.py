"""Web server security and lobby: cross-site requests, security headers, the stats
page, rematch seats kept for their players, stalled tables, unlisted tables.

In-process (Starlette ``TestClient``, whose own origin is ``http://testserver``); the same
checks in a real browser are in tests/browser/test_browser_security.py.
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from starlette.websockets import WebSocketDisconnect

from ludoteca.web.repository.store import SQLITE_FILE, Repository, database_url
from ludoteca.web.security import OriginPolicy, normalize_origin, stats_allowed
from tests.test_web_api import connect, create, open_seats, play_random, server

pytestmark = pytest.mark.timeout(120)

OWN = "http://testserver"
EVIL = "http://evil.example"
TOHM2 = {"game": "tohm", "players": 2, "seats": [{"kind": "open"}, {"kind": "open"}], "sit": 0, "name": "Ann"}


# --- origins: unit pieces ------------------------------------------------------------------

def test_normalize_origin_keeps_scheme_host_and_port_only() -> None:
    assert normalize_origin("HTTPS://Games.Example.org") == "https://games.example.org"
    assert normalize_origin("https://games.example.org:443/") == "https://games.example.org"
    assert normalize_origin("http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    assert normalize_origin("http://[::1]:8000") == "http://[::1]:8000"
    for bad in ["", "null", "games.example.org", "ftp://x.org", "https://x.org/path", "https://x.org?q=1",
                "https://user@x.org", "https://x.org:99999"]:
        with pytest.raises(ValueError):
            normalize_origin(bad)


def test_origin_policy_accepts_own_host_and_listed_origins_only() -> None:
    policy = OriginPolicy(["https://friends.example.org"])
    assert policy.is_allowed("http://localhost:8000", "http", "localhost:8000")
    assert policy.is_allowed("https://games.example.org", "http", "games.example.org")  # TLS proxy
    assert policy.is_allowed("https://friends.example.org", "http", "localhost:8000")
    assert not policy.is_allowed("http://127.0.0.1:8000", "http", "localhost:8000")  # another origin
    assert not policy.is_allowed("http://localhost:8001", "http", "localhost:8000")  # another port
    assert not policy.is_allowed("null", "http", "localhost:8000")
    assert not policy.is_allowed("http://evil.example", "http", None)


def test_stats_token_must_be_given_exactly() -> None:
    assert not stats_allowed(None, None) and not stats_allowed("Bearer x", None)
    assert not stats_allowed(None, "s3cret-token")
    assert not stats_allowed("Bearer wrong", "s3cret-token")
    assert not stats_allowed("Basic s3cret-token", "s3cret-token")
    assert stats_allowed("Bearer s3cret-token", "s3cret-token")


# --- headers ------------------------------------------------------------------------------

def test_every_response_forbids_framing_inline_scripts_and_sniffing(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        for path in ["/", f"/t/{made['id']}", f"/replay/{made['id']}", "/static/js/table.js", "/static/style.css",
                     "/api/tables", "/api/games", "/api/tables/nothere"]:
            res = client.get(path)
            csp = res.headers.get("content-security-policy", "")
            directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
            assert directives.get("default-src") == ["'self'"], path
            assert directives.get("script-src") == ["'self'"], path  # no 'unsafe-inline'
            assert directives.get("frame-ancestors") == ["'none'"], path
            assert res.headers.get("x-frame-options") == "DENY", path
            assert res.headers.get("x-content-type-options") == "nosniff", path
            assert res.headers.get("referrer-policy") == "same-origin", path


def test_static_pages_have_no_inline_script_or_style() -> None:
    static = Path(__file__).resolve().parents[1] / "src" / "ludoteca" / "web" / "static"
    for page in static.glob("*.html"):
        text = page.read_text()
        assert "style=" not in text, page.name
        assert "<style" not in text, page.name
        for tag in text.split("<script")[1:]:
            assert "src=" in tag.split(">")[0] and tag.split(">", 1)[1].startswith("</script"), page.name
        assert " onclick=" not in text and " onload=" not in text, page.name


# --- cross-site requests -------------------------------------------------------------------

def test_post_from_another_origin_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        for headers in [{"Origin": EVIL}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                        {"Sec-Fetch-Site": "same-site"}, {"Origin": "http://testserver:81"}]:
            res = client.post("/api/tables", json=TOHM2, headers=headers)
            assert res.status_code == 403, headers
            assert res.json()["error"] == "cross_origin" and "not accepted" in res.json()["message"]
            res = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Eve"}, headers=headers)
            assert res.status_code == 403, headers
            assert client.post(f"/api/tables/{table}/rematch", json={}, headers=headers).status_code == 403
        assert [t["id"] for t in client.get("/api/tables").json()["tables"]] == [table]
        assert client.get(f"/api/tables/{table}").json()["seats"][1]["kind"] == "open"
        # the server's own pages, and programs that send neither Origin nor Sec-Fetch-Site
        assert client.post("/api/tables", json=TOHM2, headers={"Origin": OWN}).status_code == 201
        assert client.post("/api/tables", json=TOHM2, headers={"Sec-Fetch-Site": "same-origin"}).status_code == 201
        assert client.post("/api/tables", json=TOHM2).status_code == 201
        joined = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}, headers={"Origin": OWN})
        assert joined.status_code == 200
        # reading is not a change: a cross-site GET gets its answer (the browser keeps it from the page)
        assert client.get("/api/tables", headers={"Origin": EVIL}).status_code == 200


def test_a_cross_site_refusal_speaks_the_language_of_the_request(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        res = client.post("/api/tables", json=TOHM2, headers={"Origin": EVIL, "Accept-Language": "it-IT,it;q=0.9"})
        assert res.status_code == 403 and res.json()["code"] == "cross_origin"
        assert res.json()["message"].startswith(f"questo server non accetta richieste dalle pagine di {EVIL}")
        res = client.post("/api/tables", json=TOHM2, headers={"Sec-Fetch-Site": "cross-site",
                                                               "Cookie": "ludoteca_lang=it"})
        assert res.json()["message"] == "questo server non accetta richieste dalle pagine di altri siti"


def test_allowed_origin_may_post(tmp_path: Path) -> None:
    with server(tmp_path, allowed_origins=["https://friends.example.org"]) as client:
        res = client.post("/api/tables", json=TOHM2, headers={"Origin": "https://friends.example.org"})
        assert res.status_code == 201
        assert client.post("/api/tables", json=TOHM2, headers={"Origin": EVIL}).status_code == 403


def test_websocket_from_another_origin_is_refused(tmp_path: Path) -> None:
    with server(tmp_path, allowed_origins=["https://friends.example.org"]) as client:
        table = create(client, "tohm", open_seats(2))["id"]
        for origin in [EVIL, "null", "http://testserver:81"]:
            with pytest.raises(WebSocketDisconnect) as refused, \
                    client.websocket_connect(f"/ws/{table}", headers={"Origin": origin}) as ws:
                ws.receive_text()
            assert refused.value.code == 4403
        for origin in [OWN, "https://friends.example.org", None]:
            headers = {"Origin": origin} if origin else {}
            with client.websocket_connect(f"/ws/{table}", headers=headers) as ws:
                assert ws.receive_json()["type"] == "snapshot"
        # nobody sat down through the refused sockets
        assert client.get(f"/api/tables/{table}").json()["seats"][1]["kind"] == "open"


# --- stats ---------------------------------------------------------------------------------

def test_stats_are_hidden_unless_the_server_has_a_token(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        assert client.get("/api/stats").status_code == 404
        assert client.get("/api/stats", headers={"Authorization": "Bearer anything"}).status_code == 404
    with server(tmp_path, stats_token="operator-token") as client:
        assert client.get("/api/stats").status_code == 404
        assert client.get("/api/stats", headers={"Authorization": "Bearer nope"}).status_code == 404
        res = client.get("/api/stats", headers={"Authorization": "Bearer operator-token"})
        assert res.status_code == 200 and "tables_in_memory" in res.json()


# --- rematch seats -------------------------------------------------------------------------

def finished_game(client: Any) -> tuple[str, str, str]:
    """A TOHM game between Ann (seat 0) and Bob (seat 1), played to the end: (table, Ann's, Bob's token)."""
    made = create(client, "tohm", open_seats(2))
    table = made["id"]
    bob = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
    with connect(client, table, made["token"]) as a, connect(client, table, bob) as b:
        final = play_random({0: a, 1: b}, [], random.Random(3))
    assert final["status"] == "over"
    return table, made["token"], bob


def test_rematch_keeps_the_previous_players_seats(tmp_path: Path) -> None:
    with server(tmp_path, rematch_hold=600) as client:
        table, ann, bob = finished_game(client)
        # a spectator asks for the rematch first: it is created, but no seat is given to them
        spectator = client.post(f"/api/tables/{table}/rematch", json={}).json()
        new = spectator["id"]
        assert spectator["seat"] is None and spectator["token"] is None
        seats = client.get(f"/api/tables/{new}").json()["seats"]
        assert [s["kind"] for s in seats] == ["open", "open"]
        assert [s["held_for"] for s in seats] == ["Ann", "Bob"]
        assert all(590 < s["held_seconds"] <= 600 for s in seats)
        # nobody else can sit there, by HTTP or websocket, and nothing changes
        for seat in (0, 1):
            res = client.post(f"/api/tables/{new}/join", json={"seat": seat, "name": "Eve"})
            assert res.status_code == 409 and res.json()["error"] == "seat_held"
            assert "kept for" in res.json()["message"] and ("Ann" if seat == 0 else "Bob") in res.json()["message"]
        with connect(client, new) as eve:
            eve.send({"type": "join", "seat": 0, "name": "Eve"})
            assert eve.error()["code"] == "seat_held"
        # a wrong token gets no seat either
        assert client.post(f"/api/tables/{table}/rematch", json={"token": "forged"}).json()["seat"] is None
        assert [s["kind"] for s in client.get(f"/api/tables/{new}").json()["seats"]] == ["open", "open"]
        # the previous players take their seats back with their tokens
        r_bob = client.post(f"/api/tables/{table}/rematch", json={"token": bob}).json()
        r_ann = client.post(f"/api/tables/{table}/rematch", json={"token": ann}).json()
        assert (r_ann["id"], r_ann["seat"], r_bob["id"], r_bob["seat"]) == (new, 0, new, 1)
        summary = client.get(f"/api/tables/{new}").json()
        assert summary["status"] == "playing" and [s["name"] for s in summary["seats"]] == ["Ann", "Bob"]
        assert all("held_for" not in s for s in summary["seats"])


def test_a_rematch_seat_opens_to_anyone_when_the_hold_ends(tmp_path: Path) -> None:
    with server(tmp_path, rematch_hold=0.5) as client:
        table, ann, _ = finished_game(client)
        new = client.post(f"/api/tables/{table}/rematch", json={"token": ann}).json()["id"]
        seats = client.get(f"/api/tables/{new}").json()["seats"]
        assert seats[0]["kind"] == "human" and seats[1]["held_for"] == "Bob"
        assert client.post(f"/api/tables/{new}/join", json={"seat": 1, "name": "Eve"}).status_code == 409
        time.sleep(0.7)
        assert "held_for" not in client.get(f"/api/tables/{new}").json()["seats"][1]
        assert client.post(f"/api/tables/{new}/join", json={"seat": 1, "name": "Eve"}).status_code == 200


def test_rematch_hold_survives_a_restart(tmp_path: Path) -> None:
    with server(tmp_path, rematch_hold=600) as client:
        table, _, bob = finished_game(client)
        new = client.post(f"/api/tables/{table}/rematch", json={}).json()["id"]
    with server(tmp_path, rematch_hold=600) as client:
        res = client.post(f"/api/tables/{new}/join", json={"seat": 1, "name": "Eve"})
        assert res.status_code == 409 and res.json()["error"] == "seat_held"
        assert client.post(f"/api/tables/{table}/rematch", json={"token": bob}).json()["seat"] == 1


# --- stalled tables ------------------------------------------------------------------------

def playing_table(client: Any) -> tuple[str, dict[int, str]]:
    made = create(client, "tohm", open_seats(2))
    bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
    return made["id"], {0: made["token"], 1: bob}


def test_a_table_waiting_for_an_away_player_shows_as_stalled(tmp_path: Path) -> None:
    with server(tmp_path, stall_after=0) as client:
        table, tokens = playing_table(client)
        listed = {t["id"]: t for t in client.get("/api/tables").json()["tables"]}[table]
        to_move = client.get(f"/api/tables/{table}").json()["seats"]
        assert listed["status"] == "playing" and listed["stalled"] is True
        assert listed["waiting_for"] in (0, 1) and listed["idle"] >= 0
        mover = listed["waiting_for"]
        assert to_move[mover]["connected"] is False
        # the player to move is back: not stalled any more, nobody is waited for
        with connect(client, table, tokens[mover]):
            again = client.get(f"/api/tables/{table}").json()
            assert (again["stalled"], again["waiting_for"]) == (False, None)
        # the other player being there changes nothing: it is the mover who is away
        with connect(client, table, tokens[1 - mover]):
            assert client.get(f"/api/tables/{table}").json()["stalled"] is True


def test_a_table_is_not_stalled_before_the_delay_nor_when_waiting_or_over(tmp_path: Path) -> None:
    with server(tmp_path, stall_after=600) as client:
        table, _ = playing_table(client)
        summary = client.get(f"/api/tables/{table}").json()
        assert summary["stalled"] is False and summary["waiting_for"] in (0, 1) and summary["idle"] < 600
        waiting = create(client, "tohm", open_seats(2))["table"]
        assert (waiting["stalled"], waiting["waiting_for"], waiting["idle"]) == (False, None, None)
    with server(tmp_path, stall_after=0) as client:
        ai = create(client, "tohm", [{"kind": "ai", "level": "random"}] * 2, sit=None)["table"]
        assert ai["stalled"] is False and ai["waiting_for"] is None  # an AI is never away


def test_a_game_not_in_memory_after_a_restart_shows_as_stalled(tmp_path: Path) -> None:
    from ludoteca.web.limits import ServerLimits

    with server(tmp_path) as client:
        table, _ = playing_table(client)
    with server(tmp_path, stall_after=0, limits=ServerLimits(resume_limit=0)) as client:
        listed = {t["id"]: t for t in client.get("/api/tables").json()["tables"]}[table]
        assert listed["status"] == "playing" and listed["stalled"] is True
        assert listed["waiting_for"] is None and listed["idle"] >= 0 and listed["unlisted"] is False


# --- unlisted tables -----------------------------------------------------------------------

def test_unlisted_table_is_reachable_only_by_its_link(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        listed = create(client, "tohm", open_seats(2))
        hidden = create(client, "tohm", open_seats(2), unlisted=True)
        assert hidden["table"]["unlisted"] is True and listed["table"]["unlisted"] is False
        ids = [t["id"] for t in client.get("/api/tables").json()["tables"]]
        assert ids == [listed["id"]]
        assert client.get(f"/api/tables/{hidden['id']}").json()["unlisted"] is True
        assert client.get(f"/t/{hidden['id']}").status_code == 200
        res = client.post(f"/api/tables/{hidden['id']}/join", json={"seat": 1, "name": "Bob"})
        assert res.status_code == 200
        with connect(client, hidden["id"]) as ws:
            assert ws.last["status"] == "playing"
        for bad in ["yes", 1, None, {}]:
            res = client.post("/api/tables", json={**TOHM2, "unlisted": bad})
            assert res.status_code == 400 and res.json()["error"] == "bad_unlisted", bad
        assert [t["id"] for t in client.get("/api/tables").json()["tables"]] == [listed["id"]]
    with server(tmp_path) as client:  # after a restart
        assert [t["id"] for t in client.get("/api/tables").json()["tables"]] == [listed["id"]]
        assert client.get(f"/api/tables/{hidden['id']}").json()["unlisted"] is True


def test_the_rematch_of_an_unlisted_table_is_unlisted(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2), unlisted=True)
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, made["id"], made["token"]) as a, connect(client, made["id"], bob) as b:
            play_random({0: a, 1: b}, [], random.Random(5))
        new = client.post(f"/api/tables/{made['id']}/rematch", json={"token": made["token"]}).json()["id"]
        assert client.get(f"/api/tables/{new}").json()["unlisted"] is True
        assert client.get("/api/tables").json()["tables"] == []


def test_an_older_database_gains_the_unlisted_column(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        old = create(client, "tohm", open_seats(2))
    with sqlite3.connect(tmp_path / SQLITE_FILE) as db:  # back to the schema before the column existed
        db.execute("ALTER TABLE ludo_tables DROP COLUMN unlisted")
        assert "unlisted" not in [r[1] for r in db.execute("PRAGMA table_info(ludo_tables)")]
    with server(tmp_path) as client:
        create(client, "tohm", open_seats(2), unlisted=True)
        assert [t["id"] for t in client.get("/api/tables").json()["tables"]] == [old["id"]]
        assert client.get(f"/api/tables/{old['id']}").json()["unlisted"] is False
    Repository(database_url(tmp_path, None)).close()  # a second start adds nothing more


# --- the command line ----------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--allowed-origin", "https://x.org/path"], "--allowed-origin: 'https://x.org/path' is not an origin"),
    (["--allowed-origin", "x.org"], "--allowed-origin: 'x.org' is not an origin"),
    (["--stats-token", "short"], "--stats-token needs at least 8 characters"),
    (["--rematch-hold", "-1"], "--rematch-hold and --stall-after are seconds"),
])
def test_serve_refuses_bad_security_options(tmp_path: Path, args: list[str], message: str) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ludoteca.cli", "serve", "--port", "0", "--data-dir",
                           str(tmp_path), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr
