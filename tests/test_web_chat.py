"""Chat at a table: players and spectators, separate channels, limits, stored with the table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from tests.test_web_api import WS, connect, create, open_seats, server
from tests.test_web_table_life import note, two_players

pytestmark = pytest.mark.timeout(120)

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")


def chats(ws: WS) -> list[tuple[str, str]]:
    return [(m["name"], m["text"]) for m in ws.messages if m["type"] == "note" and m["kind"] == "chat"]


def test_players_and_spectators_share_the_chat_by_default(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client)
        with connect(client, table, ann) as a, connect(client, table, bob) as b, connect(client, table) as w:
            a.send({"type": "chat", "text": "  good   luck\u0007 "})
            for ws in (a, b, w):
                line = note(ws, "chat")
                assert (line["name"], line["text"], line["seat"], line["channel"]) == ("Ann", "good luck", 0, "all")
            w.send({"type": "chat", "text": "go Bob!", "name": "Zoe"})
            for ws in (a, b, w):
                ws.until(lambda m: m["type"] == "note" and m.get("text") == "go Bob!")
                assert chats(ws)[-1] == ("Zoe", "go Bob!")
            w.send({"type": "chat", "text": "anonymous"})
            assert w.until(lambda m: m["type"] == "note" and m["text"] == "anonymous")["name"] == "Spectator"


def test_separate_chat_keeps_spectators_lines_among_spectators(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, _ = two_players(client, chat="separate")
        with connect(client, table, ann) as a, connect(client, table) as w1, connect(client, table) as w2:
            w1.send({"type": "chat", "text": "she will lose", "name": "Zoe"})
            assert w2.until(lambda m: m["type"] == "note")["text"] == "she will lose"
            assert w1.until(lambda m: m["type"] == "note")["channel"] == "spectators"
            a.send({"type": "chat", "text": "hello everyone"})
            for ws in (w1, w2, a):  # a player's line reaches everyone
                ws.until(lambda m: m["type"] == "note" and m["text"] == "hello everyone")
            assert chats(a) == [("Ann", "hello everyone")]  # never the spectators' line
        with connect(client, table, ann) as a, connect(client, table) as w:  # nor in a snapshot
            assert a.last is not None and w.last is not None
            assert [n["text"] for n in a.last["notes"]] == ["hello everyone"]
            assert [n["text"] for n in w.last["notes"]] == ["she will lose", "hello everyone"]


def test_bad_chat_messages_get_a_clear_error_and_change_nothing(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, _ = two_players(client)
        with connect(client, table, ann) as a:
            for bad in [{"text": ""}, {"text": "   \n\t "}, {"text": 12}, {}, {"text": ["hi"]}, {"text": "x" * 301}]:
                a.send({"type": "chat", **bad})
                error = a.error()
                assert error["code"] == "bad_chat" and error["message"], bad
            a.send({"type": "chat", "text": "y" * 300})
            assert note(a, "chat")["text"] == "y" * 300
        assert [n.data["text"] for n in client.app.state.lobby.repo.load_table(table).notes] == ["y" * 300]


def test_chat_is_rate_limited_per_connection(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, bob = two_players(client)
        with connect(client, table, ann) as a, connect(client, table, bob) as b:
            for i in range(8):
                a.send({"type": "chat", "text": f"spam {i}", "ref": i})
            a.send({"type": "ping", "ref": "p"})
            a.until(lambda m: m["type"] == "pong")
            refused = [m for m in a.messages if m["type"] == "error"]
            sent = [m for m in a.messages if m["type"] == "note"]
            assert len(sent) == 5 and len(refused) == 3  # a burst of 5, then one every 2 seconds
            assert all(m["code"] == "rate_limited" for m in refused)
            b.send({"type": "chat", "text": "my turn to talk"})  # another connection is not limited by it
            assert b.until(lambda m: m["type"] == "note" and m["text"] == "my turn to talk")


def test_a_reconnecting_viewer_gets_the_last_100_lines_as_text(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        table, ann, _ = two_players(client)
        lobby = client.app.state.lobby
        # 110 lines, 5 per connection (each connection has its own bucket)
        for k in range(22):
            with connect(client, table, ann) as a:
                for j in range(5):
                    a.send({"type": "chat", "text": f"<b>line {5 * k + j}</b>"})
                a.until(lambda m, k=k: m["type"] == "note" and m["text"] == f"<b>line {5 * k + 4}</b>")
        assert len(lobby.repo.load_table(table).notes) == 110
        with connect(client, table) as w:
            assert w.last is not None
            lines = [n["text"] for n in w.last["notes"] if n["kind"] == "chat"]
            assert lines == [f"<b>line {i}</b>" for i in range(10, 110)]
            assert '"<b>line 109</b>"' in w.raw[0]  # sent as JSON text, never as markup


def restart_scenario(tmp_path: Path | None, database: str | None) -> None:
    with server(tmp_path, database) as client:
        table, ann, bob = two_players(client, chat="separate")
        with connect(client, table, ann) as a, connect(client, table) as w:
            a.send({"type": "chat", "text": "stored?"})
            w.send({"type": "chat", "text": "only us", "name": "Zoe"})
            note(a, "chat")
            w.until(lambda m: m["type"] == "note" and m["text"] == "only us")
    with server(tmp_path, database) as client, connect(client, table, bob) as b, connect(client, table) as w:
        assert b.last is not None and w.last is not None
        assert [(n["name"], n["text"]) for n in b.last["notes"]] == [("Ann", "stored?")]
        assert [(n["name"], n["text"]) for n in w.last["notes"]] == [("Ann", "stored?"), ("Zoe", "only us")]
        assert json.loads(w.raw[0])["settings"]["chat"] == "separate"


def test_chat_survives_a_restart_sqlite(tmp_path: Path) -> None:
    restart_scenario(tmp_path, None)


@pytest.mark.postgres
@pytest.mark.skipif(not PG_URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server)")
def test_chat_survives_a_restart_postgres() -> None:
    pytest.importorskip("psycopg")
    restart_scenario(None, PG_URL)


def test_a_chat_line_is_never_sent_before_it_is_stored(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        repo = client.app.state.lobby.repo

        def broken(*_: object) -> None:
            raise OSError("disk full")

        with connect(client, made["id"], made["token"]) as a:
            real, repo.add_notes = repo.add_notes, broken
            try:
                a.send({"type": "chat", "text": "lost"})
                assert a.error()["code"] == "storage"
            finally:
                repo.add_notes = real
            assert not [m for m in a.messages if m["type"] == "note"]


def test_chat_errors_are_in_the_viewers_language(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        with client.websocket_connect(f"/ws/{made['id']}?lang=it") as raw:
            ws = WS(raw)
            ws.until(lambda m: m["type"] == "snapshot")
            ws.send({"type": "chat", "text": "x" * 301})
            error = ws.error()
            assert error["code"] == "bad_chat"
            assert error["message"] == "un messaggio della chat ha al massimo 300 caratteri"
            ws.send({"type": "chat", "text": ""})
            assert ws.error()["message"] == "un messaggio della chat non può essere vuoto"
