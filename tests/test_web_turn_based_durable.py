"""Turn-based notices that survive a worker's death, and a table's own webhook.

The rules come from docs/web.md ("Turn-based tables", "Notices"): every new turn tells its player, once —
"nothing is lost or sent twice when a worker dies" — and a turn-based table's creator may give a webhook
that a club's channel reads: every seat's turn and the game's end, in the creator's language, retried
with backoff, checked like an account's webhook and never shown to anyone.

A worker's death is simulated where it hurts: the move is committed, then the worker stops before the
turn's deadline row and its notice are stored (or in the middle of that transaction); a second server
opens the same database and its deadlines' repair tells the turn, once."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from ludoteca.registry import game_class
from ludoteca.web.notices.outbox import BACKOFF
from ludoteca.web.notices.service import NoticeService
from ludoteca.web.repository.notices import table_hooks_t
from ludoteca.web.repository.schema import tables_t
from tests.notices_parts import Receiver, rematch_after_a_claim
from tests.test_web_api import connect, make_app, open_seats
from tests.test_web_turn_based import HOUR, Clock, play_one, stored

pytestmark = pytest.mark.timeout(180)
POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
GAME = "exactly"
TITLE = game_class(GAME).title


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database: an SQLite file, or PostgreSQL when ``LUDOTECA_TEST_POSTGRES_URL`` is set."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'died.sqlite3'}"
        return
    if not POSTGRES:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    from tests.cluster import fresh_database

    with fresh_database(POSTGRES) as url:
        yield url


@contextmanager
def turn_server(db: Path | str, private: bool = True) -> Iterator[tuple[TestClient, Any, Clock]]:
    """A server on the database ``db`` (an SQLite file's path, or a URL) with its real notices (not sent
    until the test says), the deadlines' rounds run by the test (after the one a server runs as it starts,
    which repairs) with an injected clock shared with the notices."""
    url = db if isinstance(db, str) else f"sqlite:///{db}"
    with TestClient(make_app(database=url, notices={
            "public_url": "http://club.test", "webhook_private": private, "sender": False})) as client:
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        client.portal.call(lobby.deadlines.close)  # type: ignore[union-attr]
        clock = Clock()
        clock.now = time.time()  # the server's first round (at its start, before the test's clock) agrees
        lobby.deadlines.clock = clock
        notices(client).clock = clock
        yield client, lobby, clock


def notices(client: TestClient) -> NoticeService:
    service = client.app.state.notices  # type: ignore[attr-defined]
    assert isinstance(service, NoticeService)
    return service


def repair(client: TestClient, lobby: Any, rounds: int = 1) -> None:
    """Deadline rounds that look for the rows a stopped worker left behind."""
    for _ in range(rounds):
        lobby.deadlines.rounds = 0  # the next round is one that repairs
        client.portal.call(lobby.deadlines.tick)  # type: ignore[union-attr]


def send(client: TestClient) -> int:
    return int(client.portal.call(notices(client).send_due))  # type: ignore[union-attr]


def table_rows(client: TestClient, table: str, kind: str = "your_turn") -> list[dict[str, Any]]:
    return [r for r in notices(client).outbox.rows() if r["table_id"] == table and r["kind"] == kind]


def new_table(client: TestClient, hook: str | None, lang: str = "en", **settings: Any) -> tuple[str, dict[int, str]]:
    """A two-player turn-based table: Ann (seat 0) made it, with ``hook`` as its webhook; Bob joined."""
    body: dict[str, Any] = {"game": GAME, "players": 2, "seats": open_seats(2), "sit": 0, "name": "Ann",
                            "pace": "turn-based", "move_time": HOUR, **settings}
    if hook is not None:
        body["webhook"] = hook
    res = client.post("/api/tables", json=body, headers={"Accept-Language": lang})
    assert res.status_code == 201, res.text
    made = res.json()
    bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
    settle(client)
    return made["id"], {0: made["token"], 1: bob}


def settle(client: TestClient) -> None:
    """Wait until the deadline rows (and their notices) of the changes so far are stored."""
    client.portal.call(client.app.state.lobby.deadlines.settled)  # type: ignore[attr-defined,union-attr]


def posted(receiver: Receiver) -> list[dict[str, Any]]:
    return [json.loads(r.body) for r in receiver.received]


def count(lobby: Any, table: Any) -> int:
    with lobby.repo.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(table)).scalar() or 0)


# --- a worker dies between a move's commit and its turn's notice ---------------------------------------------

@pytest.mark.parametrize("where", ["before the row's transaction", "inside the row's transaction"])
def test_a_turn_committed_by_a_worker_that_died_is_told_once_by_the_next_one(database: str, where: str) -> None:
    db = database
    rng = random.Random(5)
    with Receiver() as receiver:
        with turn_server(db) as (client, lobby, _):
            table, tokens = new_table(client, receiver.url("/club"))
            first = lobby.deadlines.store.get(table)
            assert len(table_rows(client, table)) == 1  # the first turn, stored with its row
            assert send(client) == 1 and len(receiver.received) == 1
            # the worker is stopped right after the move's commit: nothing of the new turn gets stored
            if where == "before the row's transaction":
                def died(*args: Any) -> Any:
                    raise RuntimeError("the worker stopped")
                lobby.deadlines.store.advance = died
            else:
                service, write = notices(client), notices(client).write

                def dies_after_writing(conn: Any, told: Any, now: float) -> int:
                    write(conn, told, now)  # the rows are written, the transaction never commits
                    raise RuntimeError("the worker stopped")
                service.write = dies_after_writing  # type: ignore[method-assign]
            live = lobby.tables[table]
            while live.to_move() == first.seat:
                play_one(client, table, tokens[first.seat], rng)
            settle(client)
            moved = stored(lobby, table)
            behind = lobby.deadlines.store.get(table)  # still the last turn's row: the new turn never stored
            assert behind.seat == first.seat and behind.seq < len(moved.actions)
            assert len(table_rows(client, table)) == 1  # the new turn: not told
            other = live.to_move()
        with turn_server(db) as (client, lobby, _):  # a second server on the same database
            repair(client, lobby)
            rows = table_rows(client, table)
            assert len(rows) == 2, rows  # told now: not zero
            assert rows[-1]["seat"] == other and rows[-1]["seq"] == len(moved.actions)
            row = lobby.deadlines.store.get(table)
            assert row.seq == len(moved.actions) and row.seat == other and rows[-1]["due"] == row.due
            repair(client, lobby, 12)  # more rounds, more repairs: nothing more
            assert len(table_rows(client, table)) == 2  # not twice
            assert send(client) == 1 and send(client) == 0
            name = "Ann" if other == 0 else "Bob"
            assert [b["content"] for b in posted(receiver)][1:] == [
                f"It's {name}'s turn in {TITLE} — http://club.test/t/{table}"]


def test_a_game_over_told_once_when_its_worker_died_before_telling_it(database: str) -> None:
    db = database
    with Receiver() as receiver:
        with turn_server(db) as (client, lobby, clock):
            table, tokens = new_table(client, receiver.url("/club"), on_timeout="claim")
            row = lobby.deadlines.store.get(table)
            clock.now = row.due + 1
            client.portal.call(lobby.deadlines.tick)  # type: ignore[union-attr]

            def died(*args: Any) -> Any:
                raise RuntimeError("the worker stopped")
            lobby.deadlines.store.finish = died
            won = client.post(f"/api/tables/{table}/claim", json={"token": tokens[1 - row.seat]})
            assert won.status_code == 200, won.text
            settle(client)
            assert stored(lobby, table).status == "over" and table_rows(client, table, "game_over") == []
        with turn_server(db) as (client, lobby, _):
            repair(client, lobby, 3)
            over = table_rows(client, table, "game_over")
            assert [(r["channel"], r["seat"]) for r in over] == [("table", -1)]  # the game's end, once for the table
            assert send(client) >= 1
            assert posted(receiver)[-1]["content"].endswith(
                f"The game of {TITLE} is over — http://club.test/t/{table}")
            repair(client, lobby, 5)
            assert len(table_rows(client, table, "game_over")) == 1


# --- a table's own webhook -------------------------------------------------------------------------------------

def test_a_tables_webhook_hears_every_turn_in_the_creators_language_retried_with_backoff(tmp_path: Path) -> None:
    with Receiver(statuses=[500, 503]) as receiver, turn_server(tmp_path / "hook.sqlite3") as (client, lobby, clock):
        table, tokens = new_table(client, receiver.url("/club"), lang="it")
        row = lobby.deadlines.store.get(table)
        assert send(client) == 0 and len(receiver.received) == 1  # 500: tried again later
        assert send(client) == 0 and len(receiver.received) == 1  # not before its backoff
        clock.now += BACKOFF
        assert send(client) == 0 and len(receiver.received) == 2  # 503
        clock.now += 2 * BACKOFF
        assert send(client) == 1 and len(receiver.received) == 3  # accepted, once
        body = posted(receiver)[-1]
        name = "Ann" if row.seat == 0 else "Bob"
        assert body["content"] == body["text"] == f"Tocca a {name} in {TITLE} — http://club.test/t/{table}"
        assert body["ludoteca"] == [{"kind": "your_turn", "game": GAME, "table": table, "seat": row.seat,
                                     "player": name, "due": row.due, "url": f"http://club.test/t/{table}"}]
        # nobody but the creator gave it, and nobody is ever shown it
        url = receiver.url("/club")
        for path in (f"/api/tables/{table}", "/api/tables", f"/api/tables/{table}/pace"):
            assert url not in client.get(path).text
        with connect(client, table, tokens[0]) as ws:
            assert url not in json.dumps(ws.messages)
        # the next turn: the other player's, told to the channel too
        live, rng = lobby.tables[table], random.Random(2)
        while live.to_move() == row.seat:
            play_one(client, table, tokens[row.seat], rng)
        settle(client)
        other = "Bob" if name == "Ann" else "Ann"
        assert send(client) == 1
        assert posted(receiver)[-1]["content"] == f"Tocca a {other} in {TITLE} — http://club.test/t/{table}"


@pytest.mark.parametrize(("extra", "words"), [
    ({"webhook": "ftp://example.org/hook"}, "https://"),
    ({"webhook": "javascript:alert(1)"}, "https://"),
    ({"webhook": "http://club.test/hook"}, "this server"),
    ({"webhook": "http://localhost:8000/x"}, "this server"),
    ({"webhook": "http://127.0.0.1:9/x"}, "private or local"),
    ({"webhook": "http://10.1.2.3/x"}, "private or local"),
    ({"webhook": "https://example.org/" + "x" * 2000}, "https://"),
    ({"webhook": 42}, "https://"),
    ({"webhook": "https://example.org/hook", "pace": "live"}, "'webhook' is a setting of a turn-based table"),
])
def test_a_bad_table_webhook_is_refused_clearly_and_nothing_is_stored(tmp_path: Path, extra: dict[str, Any],
                                                                      words: str) -> None:
    with turn_server(tmp_path / "bad.sqlite3", private=False) as (client, lobby, _):
        before = count(lobby, tables_t)
        body = {"game": GAME, "players": 2, "pace": "turn-based", **extra}
        res = client.post("/api/tables", json=body)
        assert res.status_code == 400, res.text
        assert res.json()["code"] == "bad_options" and words in res.json()["message"], res.json()
        assert count(lobby, tables_t) == before and count(lobby, table_hooks_t) == 0
        italian = client.post("/api/tables", json=body, headers={"Accept-Language": "it"})
        assert italian.status_code == 400 and italian.json()["message"] != res.json()["message"]


def test_a_tables_webhook_never_points_to_this_server_even_on_a_private_network(tmp_path: Path) -> None:
    with turn_server(tmp_path / "self.sqlite3", private=True) as (client, lobby, _):
        res = client.post("/api/tables", json={"game": GAME, "players": 2, "pace": "turn-based",
                                               "webhook": "http://testserver/api/tables"})
        assert res.status_code == 400 and "this server" in res.json()["message"]
        assert count(lobby, table_hooks_t) == 0


def test_a_rematch_keeps_the_tables_webhook(tmp_path: Path) -> None:
    with Receiver() as receiver, turn_server(tmp_path / "again.sqlite3") as (client, lobby, clock):
        table, _tokens, _again = rematch_after_a_claim(client, lobby, clock, receiver.url("/club"), 0)
        rematch = stored(lobby, table).rematch_id
        assert rematch is not None and notices(client).outbox.hook(rematch) == (receiver.url("/club"), "en")
