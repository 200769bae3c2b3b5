"""The web server against a real PostgreSQL server.

Set ``LUDOTECA_TEST_POSTGRES_URL`` (e.g. ``postgresql+psycopg://ludoteca:ludoteca@127.0.0.1:5432/ludoteca_test``)
to run these; CI starts a PostgreSQL server and sets it.
"""

from __future__ import annotations

import os
import random

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from tests.test_web_api import connect, create, open_seats, play_random, restart_scenario, server

URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)"),
]


def test_restart_loses_nothing_postgres() -> None:
    pytest.importorskip("psycopg")
    restart_scenario(None, URL)


def test_a_whole_game_is_stored_in_postgres() -> None:
    pytest.importorskip("psycopg")
    with server(None, URL) as client:
        assert client.app.state.lobby.repo.dialect == "postgresql"
        made = create(client, "tohm", open_seats(2))
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, made["id"], made["token"]) as ann, connect(client, made["id"], bob) as bobws:
            final = play_random({0: ann, 1: bobws}, [], random.Random(11))
        stored = client.app.state.lobby.repo.load_table(made["id"])
        assert stored.status == "over" and len(stored.actions) == final["seq"]
        assert stored.result == final["result"]
        assert stored.seats[1].name == "Bob" and stored.seats[1].token_hash != bob
