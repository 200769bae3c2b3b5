"""A live table's notices that a killed worker never stored are told by the next one, once.

The rule (docs/web.md, "Notices"): a player is told when it becomes their move and when a game ends,
unless they have the table open; "nothing is lost or sent twice when a worker dies". A live table stores
its notices just after its commit; here the worker dies in between (its notices dropped, as a kill would),
a second server opens the same database, and its repair rounds tell the away player — once, whatever the
number of rounds — and never tell a player who had the table open."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from tests.notices_parts import Receiver
from tests.test_web_api import connect, open_seats
from tests.test_web_notices import csrf, signup
from tests.test_web_turn_based import play_one
from tests.test_web_turn_based_durable import GAME, TITLE, database, notices, posted, repair, send, turn_server

pytestmark = pytest.mark.timeout(180)
__all__ = ["database"]  # the fixture: SQLite, and PostgreSQL when LUDOTECA_TEST_POSTGRES_URL is set


def rows(client: TestClient, table: str, kind: str) -> list[dict[str, Any]]:
    return [r for r in notices(client).outbox.rows() if r["table_id"] == table and r["kind"] == kind]


def live_table(client: TestClient, receiver: Receiver) -> tuple[str, dict[int, str]]:
    """A live two-player table: Ann (seat 0) made it; Bob (seat 1, his webhook on) joined over HTTP and
    never opened it — he is away. Both have accounts."""
    ann = client
    signup(ann)
    made = ann.post("/api/tables", headers=csrf(ann), json={"game": GAME, "players": 2, "seats": open_seats(2),
                                                            "sit": 0})
    assert made.status_code == 201, made.text
    bob = TestClient(client.app)
    signup(bob)
    assert bob.post("/api/notices/webhook", json={"url": receiver.url("/bob")}, headers=csrf(bob)).status_code == 200
    joined = bob.post(f"/api/tables/{made.json()['id']}/join", json={"seat": 1}, headers=csrf(bob))
    assert joined.status_code == 200, joined.text
    return made.json()["id"], {0: made.json()["token"], 1: joined.json()["token"]}


def killed_before_storing(client: TestClient) -> None:
    """From now on the worker dies after each commit, before the notices are stored."""
    notices(client).notify = lambda told: None  # type: ignore[method-assign,assignment]


def test_a_turn_a_killed_worker_never_told_is_told_once_by_the_next(database: str) -> None:
    rng = random.Random(7)
    with Receiver() as receiver:
        with turn_server(database) as (client, lobby, _):
            table, tokens = live_table(client, receiver)
            live = lobby.tables[table]
            while live.to_move() != 0:  # Bob's opening turn: he opens the table for it and closes it again
                play_one(client, table, tokens[1], rng)
            killed_before_storing(client)
            while live.to_move() == 0:
                play_one(client, table, tokens[0], rng)  # Ann's move makes it Bob's turn: told to nobody
            seq = live.master.seq
            assert rows(client, table, "your_turn") == [] or all(r["seq"] != seq
                                                                 for r in rows(client, table, "your_turn"))
            assert live.to_move() == 1 and 1 not in live.hub.connected_seats()
        with turn_server(database) as (client, lobby, _):
            repair(client, lobby)
            told = [r for r in rows(client, table, "your_turn") if r["seq"] == seq]
            assert [(r["seat"], r["channel"]) for r in told] == [(1, "webhook")]  # told now: not zero
            repair(client, lobby, 5)
            lobby.deadlines.live.told.clear()  # a worker that forgot what it told: the outbox still refuses
            repair(client, lobby, 3)
            assert len([r for r in rows(client, table, "your_turn") if r["seq"] == seq]) == 1  # not twice
            assert send(client) >= 1
            assert any(f"in {TITLE}" in b["content"] for b in posted(receiver))


def test_a_game_end_a_killed_worker_never_told_is_told_once_by_the_next(database: str) -> None:
    with Receiver() as receiver:
        with turn_server(database) as (client, lobby, _):
            table, tokens = live_table(client, receiver)
            killed_before_storing(client)
            with connect(client, table, tokens[0]) as ann:
                ann.send({"type": "resign"})
                ann.until(lambda m: m.get("status") == "over" or m.get("type") == "over"
                          or (m.get("type") in ("snapshot", "update") and m.get("status") == "over"))
            assert lobby.tables[table].status == "over" and rows(client, table, "game_over") == []
        with turn_server(database) as (client, lobby, _):
            repair(client, lobby)
            over = rows(client, table, "game_over")
            assert [(r["seat"], r["channel"]) for r in over] == [(1, "webhook")]  # Bob, away at the end; not Ann
            repair(client, lobby, 4)
            assert len(rows(client, table, "game_over")) == 1


def test_a_player_who_had_the_table_open_is_not_told_by_the_repair(tmp_path: Path) -> None:
    rng = random.Random(3)
    with Receiver() as receiver, turn_server(tmp_path / "open.sqlite3") as (client, lobby, _):
        table, tokens = live_table(client, receiver)
        live = lobby.tables[table]
        with connect(client, table, tokens[1]):  # Bob is here for his turns
            while live.to_move() != 0:
                play_one(client, table, tokens[1], rng)
            while live.to_move() == 0:
                play_one(client, table, tokens[0], rng)
            assert live.to_move() == 1
            repair(client, lobby, 3)
            assert [r for r in rows(client, table, "your_turn") if r["seq"] == live.master.seq] == []
