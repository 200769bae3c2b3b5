"""The web server in-process (Starlette TestClient): HTTP API, websockets, seats, bad input, restarts."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

import ludoteca
from ludoteca.core.records import Record
from ludoteca.web.app import MAX_MESSAGE, create_app

pytestmark = pytest.mark.timeout(120)


def make_app(data_dir: Path | None = None, database: str | None = None, **kwargs: Any) -> Any:
    kwargs.setdefault("ai_delay", 0)
    kwargs.setdefault("rate", 10_000)
    kwargs.setdefault("burst", 10_000)
    return create_app(database=database, data_dir=data_dir, **kwargs)


@contextmanager
def server(tmp_path: Path | None = None, database: str | None = None, **kwargs: Any) -> Iterator[TestClient]:
    with TestClient(make_app(tmp_path, database, **kwargs)) as client:
        yield client


class WS:
    """A websocket client that remembers the last position it was sent."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.last: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []
        self.raw: list[str] = []

    def recv(self) -> dict[str, Any]:
        text = self.ws.receive_text()
        self.raw.append(text)
        message = json.loads(text)
        self.messages.append(message)
        if message["type"] in ("snapshot", "update"):
            self.last = message
        return message

    def until(self, pred: Callable[[dict[str, Any]], bool], limit: int = 5000) -> dict[str, Any]:
        for _ in range(limit):
            message = self.recv()
            if pred(message):
                return message
        raise AssertionError("the expected message never came")

    def state_at_least(self, seq: int) -> dict[str, Any]:
        if self.last is not None and self.last["seq"] >= seq:
            return self.last
        return self.until(lambda m: m["type"] in ("snapshot", "update") and m["seq"] >= seq)

    def send(self, data: Any) -> None:
        self.ws.send_text(data if isinstance(data, str) else json.dumps(data))

    def error(self) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "error")


@contextmanager
def connect(client: TestClient, table_id: str, token: str | None = None) -> Iterator[WS]:
    with client.websocket_connect(f"/ws/{table_id}") as raw:
        ws = WS(raw)
        ws.until(lambda m: m["type"] == "snapshot")
        if token is not None:
            ws.send({"type": "auth", "token": token})
            ws.until(lambda m: m["type"] == "snapshot" and m["you"] is not None)
        yield ws


def create(client: TestClient, game: str, seats: list[dict], sit: int | None = 0, **extra: Any) -> dict[str, Any]:
    body = {"game": game, "players": len(seats), "seats": seats, **extra}
    if sit is not None:
        body.update(sit=sit, name="Ann")
    res = client.post("/api/tables", json=body)
    assert res.status_code == 201, res.text
    return res.json()


def open_seats(n: int) -> list[dict]:
    return [{"kind": "open"}] * n


def play_random(players: dict[int, WS], watchers: list[WS], rng: random.Random, max_moves: int = 3000,
                stop: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """Human seats play random legal moves until the game ends (or ``stop`` says so)."""
    state = next(iter(players.values())).last
    assert state is not None
    for _ in range(max_moves):
        if state["status"] != "playing" or (stop and stop(state)):
            return state
        seq = state["seq"]
        mover = players.get(state["to_move"])
        if mover is not None:  # else an AI seat moves by itself
            legal = mover.last["legal"]
            assert legal, "the player to move is sent its legal moves"
            mover.send({"type": "action", "action": rng.choice(legal), "seq": seq})
        everyone = {id(w): w for w in [*players.values(), *watchers]}.values()
        for ws in everyone:
            ws.state_at_least(seq + 1)
        state = next(iter(players.values())).last
    raise AssertionError("the game did not end")


# --- unit pieces -------------------------------------------------------------------------

# --- HTTP ---------------------------------------------------------------------------------

def test_catalog_lists_installed_games_options_and_levels(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        data = client.get("/api/games").json()
        names = {g["name"] for g in data["games"]}
        assert names == set(ludoteca.GAMES)
        assert "random" in data["levels"]
        for g in data["games"]:
            assert all(o["name"] != "tiles" or o["kind"] == "file" for o in g["options"])  # an upload, never a path
        assert client.get("/").status_code == 200
        made = client.post("/api/tables", json={"game": ludoteca.GAMES[0], "players": 2}).json()
        assert "table.js" in client.get(made["url"]).text
        assert client.get("/t/anything").status_code == 404  # no such table: the 404 page (web/lobby/notfound.py)


def test_catalog_describes_each_ai_levels_strength(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        data = client.get("/api/games").json()
        info = data["level_info"]
        assert set(info) == set(data["levels"])
        assert info["random"] == "plays any legal move"
        assert "a newcomer can beat it" in info["beginner"]  # the AI ladder's levels
        assert info["expert"].startswith("strongest")
        for name in ludoteca.GAMES:  # each game's client comes from its own package
            res = client.get(f"/games/{name}/client.js")
            assert res.status_code == 200 and "javascript" in res.headers["content-type"]
            assert "export function render" in res.text and "export function describe" in res.text
        assert client.get("/games/chess/client.js").status_code == 404
        assert client.get("/games/..%2Fweb/client.js").status_code == 404


def test_bad_table_requests_are_refused_with_a_reason(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        cases = [
            ({"game": "chess"}, "unknown game"),
            ({"game": "tohm", "players": 9}, "players"),
            ({"game": "tohm", "players": 2, "options": {"nope": 1}}, "nope"),
            ({"game": "tohm", "players": 2, "options": {"layout": "/etc/passwd"}}, "layout"),
            ({"game": "exagon", "players": 2, "options": {"tiles": "/etc/passwd"}}, "tiles"),
            ({"game": "tohm", "players": 2, "seats": [{"kind": "ai", "level": "genius"}, {"kind": "open"}]}, "level"),
            ({"game": "tohm", "players": 2, "seats": [{"kind": "open"}]}, "seat"),
        ]
        for body, word in cases:
            res = client.post("/api/tables", json=body)
            assert res.status_code == 400, body
            assert word in res.json()["message"], res.json()
        res = client.post("/api/tables", content=b"{not json", headers={"Content-Type": "application/json"})
        assert res.status_code == 400 and res.json()["error"] == "bad_json"
        res = client.post("/api/tables", content=b"x" * 100_000, headers={"Content-Type": "application/json"})
        assert res.status_code == 413
        assert client.get("/api/tables/nothere").status_code == 404
        assert client.get("/api/tables/nothere/record").status_code == 404


# --- a whole game ----------------------------------------------------------------------------

def test_two_players_and_a_spectator_play_tohm_to_the_end(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        assert made["table"]["status"] == "waiting"
        joined = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()
        assert client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Eve"}).status_code == 409
        with connect(client, table, made["token"]) as ann, connect(client, table, joined["token"]) as bob, \
                connect(client, table) as spectator:
            assert ann.last["status"] == "playing" and ann.last["you"] == 0
            assert spectator.last["you"] is None and spectator.last["legal"] is None
            final = play_random({0: ann, 1: bob}, [spectator], random.Random(1))
            assert final["status"] == "over" and final["result"]["winners"]
            assert spectator.last["seq"] == final["seq"]
            assert spectator.last["position"] == final["position"]
            # everyone saw every action, in order, with nothing hidden (TOHM has no secrets)
            log = [e for m in spectator.messages if m["type"] in ("snapshot", "update") for e in m["log"]]
            assert [e["i"] for e in log] == list(range(final["seq"]))
        record = client.get(f"/api/tables/{table}/record")
        assert record.status_code == 200 and "attachment" in record.headers["content-disposition"]
        rec = Record.from_json(record.json())
        assert rec.replay().to_json() == final["position"]
        replay = client.get(f"/api/tables/{table}/replay").json()
        assert len(replay["positions"]) == final["seq"] + 1
        assert replay["positions"][-1] == final["position"]
        # rematch: Ann keeps her seat at a new table, Bob joins his
        r1 = client.post(f"/api/tables/{table}/rematch", json={"token": made["token"]}).json()
        r2 = client.post(f"/api/tables/{table}/rematch", json={"token": joined["token"]}).json()
        assert r1["id"] == r2["id"] != table and (r1["seat"], r2["seat"]) == (0, 1)
        assert client.get(f"/api/tables/{r1['id']}").json()["status"] == "playing"
        listed = {t["id"]: t for t in client.get("/api/tables").json()["tables"]}
        assert table not in listed and listed[r1["id"]]["status"] == "playing"  # the lobby lists live tables
        mine = {t["id"]: t for t in client.get(f"/api/tables?ids={table},{r1['id']}").json()["tables"]}
        assert mine[table]["status"] == "over" and mine[r1["id"]]["status"] == "playing"


def test_ai_seats_play_by_themselves_in_a_worker_process(tmp_path: Path) -> None:
    specs = {"mcts": "mcts:iterations=30"}
    with server(tmp_path, ai_specs=specs) as client:
        made = create(client, "tohm", [{"kind": "ai", "level": "heuristic"}, {"kind": "ai", "level": "mcts"}],
                      sit=None)
        assert made["table"]["status"] == "playing"
        with connect(client, made["id"]) as spectator:
            spectator.until(lambda m: m["type"] == "update" and m["seq"] >= 40)
        levels = [s["level"] for s in client.get(f"/api/tables/{made['id']}").json()["seats"]]
        assert levels == ["heuristic", "mcts"]


# --- protection and bad input ---------------------------------------------------------------

def test_seats_are_protected_and_bad_input_hurts_nobody(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", open_seats(2))
        table = made["id"]
        bob_token = client.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, table, made["token"]) as ann, connect(client, table, bob_token) as bob, \
                connect(client, table) as spy:
            state = ann.last
            mover, other = (ann, bob) if state["to_move"] == 0 else (bob, ann)
            seq = state["seq"]
            legal = mover.last["legal"]
            # a spectator cannot move; a wrong token is refused
            spy.send({"type": "action", "action": legal[0], "seq": seq})
            assert spy.error()["code"] == "not_seated"
            spy.send({"type": "auth", "token": "not-a-token"})
            assert spy.error()["code"] == "bad_token"
            spy.send({"type": "auth", "token": 12})
            assert spy.error()["code"] == "bad_token"
            # out of turn, illegal, stale, malformed, oversized, unknown
            other.send({"type": "action", "action": legal[0], "seq": seq})
            assert other.error()["code"] == "not_your_turn"
            bad = [
                ({"type": "action", "action": {"place": [99, 99]}, "seq": seq}, "illegal"),
                ({"type": "action", "action": {"fly": True}, "seq": seq}, "illegal"),
                ({"type": "action", "action": {"timeout": True}, "seq": seq}, "illegal"),
                ({"type": "action", "action": legal[0], "seq": seq - 1}, "stale"),
                ({"type": "action", "action": "place"}, "bad_message"),
                ({"type": "action", "action": legal[0], "seq": "x"}, "bad_message"),
                ({"type": "dance"}, "bad_message"),
                ([1, 2, 3], "bad_message"),
                ("{not json", "bad_json"),
                ("[" * 100_000, "too_large"),
                ("x" * (MAX_MESSAGE + 1), "too_large"),
            ]
            for message, code in bad:
                mover.send(message)
                error = mover.error()
                assert error["code"] == code, (message if len(str(message)) < 200 else code, error)
                assert error["message"]
            mover.ws.send_bytes(b"\xff\xfe")
            assert mover.error()["code"] == "bad_message"
            # nothing changed, and nobody else heard of it
            other.send({"type": "ping"})
            assert other.recv()["type"] == "pong"
            assert other.last["seq"] == seq
            mover.send({"type": "ping", "ref": 7})
            pong = mover.until(lambda m: m["type"] == "pong")
            assert pong["seq"] == seq and pong["ref"] == 7
            # the real move still works
            mover.send({"type": "action", "action": legal[0], "seq": seq})
            assert other.state_at_least(seq + 1)["seq"] > seq


def test_a_flooding_connection_is_rate_limited_alone(tmp_path: Path) -> None:
    with server(tmp_path, rate=5, burst=5) as client:
        made = create(client, "tohm", open_seats(2))
        with connect(client, made["id"]) as flood, connect(client, made["id"]) as calm:
            for _ in range(30):
                flood.send({"type": "ping"})
            codes = []
            for _ in range(30):
                m = flood.recv()
                if m["type"] == "error":
                    codes.append(m["code"])
                    break
            assert codes == ["rate_limited"]
            calm.send({"type": "ping"})
            assert calm.until(lambda m: m["type"] in ("pong", "error"))["type"] == "pong"


def test_an_action_is_committed_before_it_is_broadcast(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", [{"kind": "open"}, {"kind": "open"}])
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1}).json()["token"]
        manager = client.app.state.lobby
        with connect(client, made["id"], made["token"]) as ann, connect(client, made["id"], bob) as bobws:
            mover = ann if ann.last["to_move"] == 0 else bobws
            seq = mover.last["seq"]
            real = manager.repo.append_batch

            def broken(*args: Any, **kwargs: Any) -> None:
                raise RuntimeError("disk full")

            manager.repo.append_batch = broken
            mover.send({"type": "action", "action": mover.last["legal"][0], "seq": seq})
            assert mover.error()["code"] == "storage"
            manager.repo.append_batch = real
            mover.send({"type": "ping"})
            assert mover.until(lambda m: m["type"] == "pong")["seq"] == seq
            mover.send({"type": "action", "action": mover.last["legal"][0], "seq": seq})
            assert mover.state_at_least(seq + 1)["seq"] > seq
            stored = manager.repo.load_table(made["id"])
            assert len(stored.actions) == mover.last["seq"]


# --- restarts -------------------------------------------------------------------------------

def restart_scenario(tmp_path: Path | None, database: str | None) -> None:
    """Half a TOHM game, a restart, then the same table goes on; an all-AI table resumes alone."""
    with server(tmp_path, database) as client:
        made = create(client, "tohm", [{"kind": "open"}, {"kind": "ai", "level": "random"}])
        ai_only = create(client, "tohm", [{"kind": "ai", "level": "random"}] * 2, sit=None)
        with connect(client, made["id"], made["token"]) as ann:
            state = play_random({0: ann}, [], random.Random(3), stop=lambda s: s["seq"] >= 30 and s["to_move"] == 0)
        before = client.get(f"/api/tables/{made['id']}").json()
        ai_before = client.get(f"/api/tables/{ai_only['id']}").json()
    with server(tmp_path, database) as client:
        with connect(client, made["id"], made["token"]) as ann:
            assert ann.last["seq"] == state["seq"] == before["n_actions"]
            assert ann.last["position"] == state["position"]
            assert ann.last["you"] == 0
            final = play_random({0: ann}, [], random.Random(4))
            assert final["status"] == "over"
        with connect(client, ai_only["id"]) as watcher:
            if watcher.last["status"] != "over":
                watcher.until(lambda m: m["type"] == "update" and m["status"] == "over")
            assert watcher.last["seq"] >= ai_before["n_actions"]
        rec = Record.from_json(client.get(f"/api/tables/{made['id']}/record").json())
        assert rec.replay().to_json() == final["position"]


def test_restart_loses_nothing_sqlite(tmp_path: Path) -> None:
    restart_scenario(tmp_path, None)
    assert (tmp_path / "ludoteca.sqlite3").exists()


# --- hidden information: TRI ----------------------------------------------------------------

def test_tri_secret_card_is_never_sent_before_the_reveal(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tri", open_seats(2), options={"size": 3})
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        rng = random.Random(5)
        battles = 0
        with connect(client, made["id"], made["token"]) as ann, connect(client, made["id"], bob) as bobws, \
                connect(client, made["id"]) as spectator:
            players = {0: ann, 1: bobws}

            state = ann.last
            for _ in range(3000):
                if state["status"] != "playing":
                    break
                mover = players[state["to_move"]]
                legal = mover.last["legal"]
                attacks = [a for a in legal if "attack" in a]
                action = rng.choice(attacks) if attacks and rng.random() < 0.7 else rng.choice(legal)
                seq = state["seq"]
                mover.send({"type": "action", "action": action, "seq": seq})
                for ws in (ann, bobws, spectator):
                    ws.state_at_least(seq + 1)
                state = mover.last
                battle = state["position"]["battle"]
                if battle and battle["step"] == "defender_card":
                    battles += 1
                    secret_seq = state["seq"] - 1  # the attacker's card, just played
                    attacker, defender = battle["attacker"], battle["defender"]
                    for viewer in (players[defender], spectator):
                        seen = viewer.last
                        assert seen["position"]["battle"]["attacker_card"] is None
                        if viewer is spectator:
                            assert seen["position"]["battle"]["defender_roll"] is None
                        entries = {e["i"]: e for e in seen["log"]}
                        assert entries.get(secret_seq, {"hidden": True})["hidden"] is True
                        assert "card" not in json.dumps(entries.get(secret_seq, {}))
                    own = players[attacker].last
                    assert own["position"]["battle"]["attacker_card"] is not None
                    if battles >= 3:
                        break
        assert battles >= 1, "no battle happened"
        # the reveal is a public event: everyone's log shows both cards once the battle is revealed
        for viewer in (ann, bobws, spectator):
            full_log: dict[int, dict] = {}
            for m in viewer.messages:
                if m["type"] in ("snapshot", "update"):
                    for e in m["log"]:
                        full_log[e["i"]] = e
            revealed = [ev for e in full_log.values() for ev in e["events"]
                        if ev["kind"] == "battle" and isinstance(ev.get("attacker_card"), int)]
            assert revealed, "cards are shown once revealed"


# --- EXAGON's hourglass ----------------------------------------------------------------------

def test_exagon_hourglass_is_enforced_by_the_server(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "exagon", open_seats(2), options={"clock": 1.5})
        bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(client, made["id"], made["token"]) as ann, connect(client, made["id"], bob) as bobws:
            players = {0: ann, 1: bobws}
            rng = random.Random(2)
            # the opening steps have no clock; play them quickly
            while ann.last["position"]["phase"] == "opening":
                assert ann.last["clock"] is None
                mover = players[ann.last["to_move"]]
                seq = ann.last["seq"]
                mover.send({"type": "action", "action": rng.choice(mover.last["legal"]), "seq": seq})
                for ws in (ann, bobws):
                    ws.state_at_least(seq + 1)
            state = ann.last
            assert state["position"]["phase"] == "turn" and state["clock"]["remaining"] <= 1.5
            waiting = state["to_move"]
            t0 = time.monotonic()
            update = ann.until(lambda m: m["type"] == "update" and m["seq"] > state["seq"])
            assert 1.0 <= time.monotonic() - t0 < 5
            assert update["log"][0]["events"][0]["kind"] == "timeout" and update["log"][0]["seat"] == waiting
            assert update["to_move"] != waiting
            assert update["position"]["carry"] == 0
            # a move made in time carries its elapsed seconds into the record
            mover = players[update["to_move"]]
            mover.state_at_least(update["seq"])
            mover.send({"type": "action", "action": mover.last["legal"][0], "seq": update["seq"]})
            after = mover.state_at_least(update["seq"] + 1)
            played = after["log"][0]
            assert played["events"][0]["kind"] == "move" and 0 <= played["elapsed"] <= 1.5
        stored = client.app.state.lobby.repo.load_table(made["id"])
        assert {"timeout": True} in stored.actions


# --- the command ------------------------------------------------------------------------------

def test_serve_command_checks_its_arguments(tmp_path: Path) -> None:
    from ludoteca.cli import main

    assert main(["serve", "--port", "70000", "--data-dir", str(tmp_path)]) == 2
    assert main(["serve", "--database", "nonsense", "--data-dir", str(tmp_path)]) == 2
