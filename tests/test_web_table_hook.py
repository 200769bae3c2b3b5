"""A turn-based table's webhook, seen and changed by its creator only (docs/web.md, "Webhooks": "the
creator sees on the table page that a club webhook is set — its host only — and may replace or remove it;
anyone else never learns it exists").

``POST /api/tables/<id>/webhook``: the creator (the seat they took, by its token; or their account) reads
``{"webhook": {"host"}}`` — never the URL — replaces it (checked as at creation, a clear 400 in the request's
language, nothing changed) or removes it; the club's channel then hears the next turn at the new address,
or nothing. Anyone else gets one and the same refusal whether the table has a webhook or not."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from tests.notices_parts import Receiver, rematch_after_a_claim
from tests.test_web_api import open_seats
from tests.test_web_notices import csrf, signup
from tests.test_web_turn_based import HOUR, play_one
from tests.test_web_turn_based_durable import GAME, new_table, notices, posted, send, settle, turn_server

pytestmark = pytest.mark.timeout(180)


def ask(client: TestClient, table: str, status: int = 200, lang: str = "en", **body: Any) -> dict[str, Any]:
    res = client.post(f"/api/tables/{table}/webhook", json=body, headers={"Accept-Language": lang, **csrf(client)})
    assert res.status_code == status, res.text
    answer: dict[str, Any] = res.json()
    return answer


def next_turn(client: TestClient, lobby: Any, table: str, tokens: dict[int, str], rng: random.Random) -> None:
    live = lobby.tables[table]
    seat = live.to_move()
    while live.to_move() == seat:
        play_one(client, table, tokens[seat], rng)
    settle(client)


def test_the_creator_sees_the_host_only_and_nobody_else_learns_it_exists(tmp_path: Path) -> None:
    with Receiver() as receiver, turn_server(tmp_path / "see.sqlite3") as (client, _lobby, _):
        url = receiver.url("/api/webhooks/123/secret-part")
        table, tokens = new_table(client, url)
        bare, bare_tokens = new_table(client, None)
        seen = ask(client, table, token=tokens[0])
        assert seen == {"webhook": {"host": "127.0.0.1"}}
        assert ask(client, bare, token=bare_tokens[0]) == {"webhook": None}
        # Bob (a player, not the creator), a stranger, a wrong token: one refusal, with or without a webhook
        refusals = [ask(client, t, 403, **body) for t in (table, bare)
                    for body in ({"token": tokens[1] if t == table else bare_tokens[1]}, {}, {"token": "x" * 32})]
        assert all(r == refusals[0] for r in refusals), refusals
        assert refusals[0]["code"] == "bad_token" and "creator" in refusals[0]["message"]
        italian = ask(client, table, 403, lang="it", token=tokens[1])
        assert italian["message"] != refusals[0]["message"]
        # nor can they change it: the hook stays
        ask(client, table, 403, token=tokens[1], url=None)
        assert notices(client).outbox.hook(table) == (url, "en")
        # a live table has no webhook to see
        live = client.post("/api/tables", json={"game": GAME, "players": 2, "seats": open_seats(2), "sit": 0,
                                                "name": "Ann"}).json()
        assert ask(client, live["id"], 403, token=live["token"]) == refusals[0]
        assert ask(client, "nosuchtable1", 404, token=tokens[0])["code"] == "not_found"


def test_the_creator_replaces_and_removes_it_and_the_channel_follows(tmp_path: Path) -> None:
    with Receiver() as first, Receiver() as second, \
            turn_server(tmp_path / "change.sqlite3") as (client, lobby, _):
        table, tokens = new_table(client, first.url("/club"))
        assert send(client) == 1 and len(first.received) == 1  # the first turn, told to the first channel
        # refused as at creation, in the page's language, nothing changed
        for bad, words in (("ftp://example.org/hook", "https://"), ("http://testserver/x", "this server"),
                           (42, "https://")):
            refused = ask(client, table, 400, token=tokens[0], url=bad)
            assert refused["code"] == "bad_options" and words in refused["message"], refused
            assert ask(client, table, 400, lang="it", token=tokens[0], url=bad)["message"] != refused["message"]
        assert notices(client).outbox.hook(table) == (first.url("/club"), "en")
        # replaced (in Italian now: the creator's language when they changed it)
        changed = ask(client, table, lang="it", token=tokens[0], url=second.url("/other"))
        assert changed == {"webhook": {"host": "127.0.0.1"}} and second.url("/other") not in str(changed)
        rng = random.Random(3)
        next_turn(client, lobby, table, tokens, rng)
        assert send(client) == 1
        assert len(first.received) == 1 and len(second.received) == 1
        assert posted(second)[0]["content"].startswith("Tocca a ")
        # removed: the turn told meanwhile and not sent yet is dropped, and nothing more is told
        next_turn(client, lobby, table, tokens, rng)
        assert ask(client, table, token=tokens[0], url=None) == {"webhook": None}
        assert ask(client, table, token=tokens[0]) == {"webhook": None}
        assert send(client) == 0
        next_turn(client, lobby, table, tokens, rng)
        assert send(client) == 0 and len(first.received) == 1 and len(second.received) == 1
        # and set again
        assert ask(client, table, token=tokens[0], url=first.url("/back")) == {"webhook": {"host": "127.0.0.1"}}


def test_a_logged_in_creator_who_did_not_sit_is_known_by_their_account(tmp_path: Path) -> None:
    with Receiver() as receiver, turn_server(tmp_path / "account.sqlite3") as (client, _lobby, _):
        signup(client)
        made = client.post("/api/tables", headers=csrf(client), json={
            "game": GAME, "players": 2, "seats": open_seats(2), "pace": "turn-based", "move_time": HOUR,
            "webhook": receiver.url("/club")})
        assert made.status_code == 201, made.text
        table = made.json()["id"]
        assert ask(client, table) == {"webhook": {"host": "127.0.0.1"}}
        other = TestClient(client.app)  # another browser (its own cookies), another account
        signup(other)
        assert ask(other, table, 403)["code"] == "bad_token"
        assert ask(other, table, 403, url=None)["code"] == "bad_token"
        assert ask(client, table, url="") == {"webhook": None}


def test_the_rematch_keeps_its_creator(tmp_path: Path) -> None:
    with Receiver() as receiver, turn_server(tmp_path / "again.sqlite3") as (client, lobby, clock):
        table, tokens, again = rematch_after_a_claim(client, lobby, clock, receiver.url("/club"), 1)  # Bob first
        rematch, bob = again["id"], again["token"]
        ann = client.post(f"/api/tables/{table}/rematch", json={"token": tokens[0]}).json()
        assert ann["id"] == rematch and ann["seat"] == 0  # each keeps their seat, with a new token
        assert ask(client, rematch, token=ann["token"]) == {"webhook": {"host": "127.0.0.1"}}  # Ann made the first
        assert ask(client, rematch, 403, token=bob)["code"] == "bad_token"
