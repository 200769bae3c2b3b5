"""Turn-based tables: the pace a creator chooses, deadlines kept in the database and fired with
an injected clock (the tests never sleep for days), what happens at a time-out, and "Your games".

The rules come from docs/web.md ("Turn-based tables"): a turn lasts ``move_time`` plus the seat's reserve; at
its end the creator's ``on_timeout`` happens and is told in the log; every new turn tells its player."""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from ludoteca.web.notices.events import Notice
from ludoteca.web.repository.schema import tables_t
from tests.test_web_api import connect, create, open_seats, server

pytestmark = pytest.mark.timeout(180)

DAY = 86_400
HOUR = 3_600


class Recorder:
    """A notifier that keeps every notice (and wakes a test waiting for one)."""

    def __init__(self) -> None:
        self.notices: list[Notice] = []
        self._cond = threading.Condition()

    def notify(self, notices: Any) -> None:
        with self._cond:
            self.notices.extend(notices)
            self._cond.notify_all()

    def write(self, conn: Any, notices: Any, now: float) -> int:
        """A turn-based table's notices, stored in its row's transaction (kept here at once)."""
        self.notify(notices)
        return len(notices)

    def wake(self) -> None:
        return None

    def check_hook(self, url: str) -> str:
        return url

    def wait(self, pred: Callable[[list[Notice]], bool], timeout: float = 30.0) -> list[Notice]:
        with self._cond:
            assert self._cond.wait_for(lambda: pred(self.notices), timeout), self.notices
            return list(self.notices)

    def turns(self, table: str) -> list[Notice]:
        return [n for n in self.notices if n.kind == "your_turn" and n.table == table]


class Clock:
    """The deadlines' clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def turn_server(tmp_path: Path, database: str | None = None) -> Iterator[tuple[TestClient, Any, Clock, Recorder]]:
    with server(tmp_path, database) as client:
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        client.portal.call(lobby.deadlines.close)  # type: ignore[union-attr]  # the test runs the rounds
        clock, rec = Clock(), Recorder()
        lobby.deadlines.clock = clock
        lobby.notifier = rec
        yield client, lobby, clock, rec


def tick(client: TestClient, lobby: Any) -> None:
    client.portal.call(lobby.deadlines.tick)  # type: ignore[union-attr]


def two_player_table(client: TestClient, game: str = "exactly", **settings: Any) -> tuple[str, str, str]:
    made = create(client, game, open_seats(2), pace="turn-based", **settings)
    bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
    # the first turn's row is armed after the commit, in the background: stored before the test reads it
    client.portal.call(client.app.state.lobby.deadlines.settled)  # type: ignore[attr-defined,union-attr,call-arg]
    return made["id"], made["token"], bob


def table_count(lobby: Any) -> int:
    with lobby.repo.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(tables_t)).scalar() or 0)


def stored(lobby: Any, table: str) -> Any:
    return lobby.repo.load_table(table)


def play_one(client: TestClient, table: str, token: str, rng: random.Random) -> dict[str, Any]:
    """The player of ``token`` opens the table, makes one legal move and closes it again."""
    with connect(client, table, token) as ws:
        state = ws.last
        assert state is not None and state["legal"], state
        seq = state["seq"]
        ws.send({"type": "action", "action": rng.choice(state["legal"]), "seq": seq})
        return ws.until(lambda m: m["type"] in ("snapshot", "update") and m["seq"] > seq)


# --- bad input ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("extra", "words"), [
    ({"pace": "turn-based", "move_time": 59}, "'move_time' is a whole number of seconds from 60"),
    ({"pace": "turn-based", "move_time": 14 * DAY + 1}, "'move_time' is a whole number of seconds"),
    ({"pace": "turn-based", "move_time": "1h"}, "'move_time' is a whole number of seconds"),
    ({"pace": "turn-based", "move_time": 3600.5}, "'move_time' is a whole number of seconds"),
    ({"pace": "slow"}, "'pace' is 'live'"),
    ({"pace": "turn-based", "reserve": -1}, "'reserve' is a whole number of seconds from 0"),
    ({"pace": "turn-based", "on_timeout": "nothing"}, "'on_timeout' is 'ai_move'"),
    ({"move_time": 3600}, "'move_time' is a setting of a turn-based table"),
])
def test_bad_pace_settings_are_refused_clearly_and_nothing_is_stored(tmp_path: Path, extra: dict[str, Any],
                                                                     words: str) -> None:
    with turn_server(tmp_path) as (client, lobby, _, _):
        before = table_count(lobby)
        res = client.post("/api/tables", json={"game": "exactly", "players": 2, **extra})
        assert res.status_code == 400, res.text
        assert res.json()["code"] == "bad_options" and words in res.json()["message"]
        assert table_count(lobby) == before


def test_a_bad_pace_is_refused_in_italian_too(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, _, _, _):
        res = client.post("/api/tables", json={"game": "exactly", "players": 2, "pace": "turn-based", "move_time": 10},
                          headers={"Accept-Language": "it"})
        assert res.status_code == 400
        assert "secondi" in res.json()["message"]


def test_claiming_the_win_needs_two_players(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, _, _):
        before = table_count(lobby)
        res = client.post("/api/tables", json={"game": "tri", "players": 3, "pace": "turn-based",
                                               "on_timeout": "claim"})
        assert res.status_code == 400 and "two-player" in res.json()["message"]
        assert table_count(lobby) == before


def test_the_lobby_lists_and_filters_both_paces(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, _, _, _):
        slow = create(client, "exactly", open_seats(2), pace="turn-based", move_time=DAY)
        fast = create(client, "exactly", open_seats(2))
        listed = {t["id"]: t for t in client.get("/api/tables").json()["tables"]}
        assert listed[slow["id"]]["pace"] == "turn-based" and listed[slow["id"]]["move_time"] == DAY
        assert listed[fast["id"]]["pace"] == "live"
        only = [t["id"] for t in client.get("/api/tables?pace=turn-based").json()["tables"]]
        assert slow["id"] in only and fast["id"] not in only
        assert client.get("/api/tables?pace=sometimes").status_code == 400


# --- a game across a week ------------------------------------------------------------------------------------

@pytest.mark.parametrize("game", ["exactly", "tri"])  # TRI: a conquest among friends over days
def test_two_players_finish_a_turn_based_game_across_a_week_each_told_on_every_turn(tmp_path: Path,
                                                                                     game: str) -> None:
    rng = random.Random(7)
    with turn_server(tmp_path) as (client, lobby, clock, rec):
        table, ann, bob = two_player_table(client, game, move_time=DAY)
        tokens = {0: ann, 1: bob}
        start = clock.now
        turns: set[tuple[float, int]] = set()
        last: dict[str, Any] | None = None
        for _ in range(1000):
            row = lobby.deadlines.store.get(table)
            data = stored(lobby, table)
            if data.status != "playing":
                break
            # the new turn's player was told, with the deadline a day from the turn's start (docs/web.md)
            def armed(ns: list[Notice], r: Any = row) -> bool:
                return any(n.seat == r.seat and n.due == r.due for n in ns
                           if n.kind == "your_turn" and n.table == table)

            told = rec.wait(armed)
            notice = [n for n in told if n.kind == "your_turn" and n.table == table][-1]
            assert notice.due == pytest.approx(row.armed_at + DAY) and notice.watching is False
            assert notice.player == ("Ann" if row.seat == 0 else "Bob") and notice.game == game
            turns.add((row.armed_at, row.seat))  # a player moving twice in a row has one turn
            clock.now += rng.uniform(1, 5) * HOUR  # the player comes back some hours later
            tick(client, lobby)  # nothing is due yet: nothing happens
            last = play_one(client, table, tokens[row.seat], rng)
        assert last is not None and last["status"] == "over"
        assert clock.now - start >= 7 * DAY, "the game lasted a simulated week"
        assert len(rec.turns(table)) == len(turns)  # told once per turn, never twice
        over = rec.wait(lambda ns: sum(1 for n in ns if n.kind == "game_over" and n.table == table) == 2)
        assert {n.seat for n in over if n.kind == "game_over" and n.table == table} == {0, 1}
        assert not [n for n in stored(lobby, table).notes if n.kind == "timed_out"]


# --- time-outs -----------------------------------------------------------------------------------------------

def test_a_missed_move_is_played_by_the_ai_and_the_log_says_so(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, clock, _):
        table, _, _ = two_player_table(client, move_time=4 * HOUR)
        row = lobby.deadlines.store.get(table)
        late = row.seat
        before = stored(lobby, table)
        clock.now = row.due - 1
        tick(client, lobby)
        assert len(stored(lobby, table).actions) == len(before.actions)  # a second early: nothing
        clock.now = row.due + 0.5
        tick(client, lobby)
        after = stored(lobby, table)
        assert len(after.actions) > len(before.actions) and after.action_seats[len(before.actions)] == late
        assert after.seats[late].kind == "human"  # the seat stays its player's
        notes = [n for n in after.notes if n.kind == "timed_out"]
        assert len(notes) == 1 and notes[0].data["seat"] == late and notes[0].data["then"] == "ai_move"
        tick(client, lobby)  # fired once only
        assert len([n for n in stored(lobby, table).notes if n.kind == "timed_out"]) == 1
        assert lobby.deadlines.fired == 1 and lobby.deadlines.late[-1] == pytest.approx(0.5)


def test_a_reminder_comes_when_a_quarter_of_the_time_is_left(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, clock, rec):
        table, _, _ = two_player_table(client, move_time=4 * HOUR)
        row = lobby.deadlines.store.get(table)
        clock.now = row.due - HOUR - 1
        tick(client, lobby)
        assert not [n for n in rec.notices if n.kind == "reminder"]
        clock.now = row.due - HOUR + 1
        tick(client, lobby)
        tick(client, lobby)
        reminders = [n for n in rec.notices if n.kind == "reminder"]
        assert len(reminders) == 1 and reminders[0].seat == row.seat and reminders[0].due == row.due


def test_at_the_second_miss_the_seat_goes_to_the_ai(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, clock, _):
        table, _, _ = two_player_table(client, move_time=HOUR, on_timeout="ai_seat")
        misses: dict[int, int] = {0: 0, 1: 0}
        for _ in range(6):
            row = lobby.deadlines.store.get(table)
            if row.seat is None or row.ai:
                break
            misses[row.seat] += 1
            clock.now = row.due + 1
            tick(client, lobby)
            data = stored(lobby, table)
            if misses[row.seat] == 2:
                assert data.seats[row.seat].kind == "ai"
                took = [n for n in data.notes if n.kind == "ai_took_over"]
                assert took[-1].data == {**took[-1].data, "seat": row.seat, "why": "time"}
                return
            assert data.seats[row.seat].kind == "human"
        pytest.fail("no seat missed twice")


def test_a_miss_fired_again_after_its_worker_stopped_counts_once(tmp_path: Path) -> None:
    """``ai_seat``: a worker claimed the deadline (the miss counted) and stopped before the AI's move; the
    deadline fires again, and the first miss is still the first (the seat stays its player's)."""
    with turn_server(tmp_path) as (client, lobby, clock, _):
        table, _, _ = two_player_table(client, move_time=HOUR, on_timeout="ai_seat")
        store = lobby.deadlines.store
        row = store.get(table)
        late = row.seat
        clock.now = row.due + 1
        assert store.claim(table, row.seq, clock.now, late) == 1  # the worker that stopped
        clock.now += 61  # its claim is older than the grace: the repair makes it due again
        for _ in range(3):
            lobby.deadlines.rounds = 0  # a round that repairs
            tick(client, lobby)
        data = stored(lobby, table)
        assert data.action_seats[row.seq] == late  # the AI played the missed move for its player
        assert data.seats[late].kind == "human" and not [n for n in data.notes if n.kind == "ai_took_over"]
        notes = [n for n in data.notes if n.kind == "timed_out"]
        assert len(notes) == 1 and notes[0].data["misses"] == 1
        assert store.get(table).misses[late] == 1


def test_the_opponent_may_claim_the_win_in_a_two_player_game(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, clock, _):
        table, ann, bob = two_player_table(client, move_time=HOUR, on_timeout="claim")
        row = lobby.deadlines.store.get(table)
        late, other = row.seat, 1 - row.seat
        tokens = {0: ann, 1: bob}
        early = client.post(f"/api/tables/{table}/claim", json={"token": tokens[other]})
        assert early.status_code == 400 and early.json()["code"] == "not_your_turn"
        assert "time has run out" in early.json()["message"]
        clock.now = row.due + 1
        tick(client, lobby)
        data = stored(lobby, table)
        assert data.status == "playing" and data.notes[-1].kind == "timed_out"
        assert data.notes[-1].data["then"] == "claim"
        assert client.post(f"/api/tables/{table}/claim", json={"token": tokens[late]}).status_code == 400
        assert client.post(f"/api/tables/{table}/claim", json={"token": "not a seat"}).json()["code"] == "bad_token"
        won = client.post(f"/api/tables/{table}/claim", json={"token": tokens[other]})
        assert won.status_code == 200, won.text
        data = stored(lobby, table)
        assert data.status == "over" and data.result["winners"] == [other] and data.result["reason"] == "time"
        assert data.notes[-1].kind == "claimed"


# --- memory and restarts ---------------------------------------------------------------------------------------

def test_idle_tables_leave_memory_and_a_restart_loses_no_deadline(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, clock, _):
        table, _, _ = two_player_table(client, move_time=HOUR)
        lobby.deadlines.idle = 0.0
        tick(client, lobby)
        assert table not in lobby.tables  # nobody watches it: only its row remains
        row = lobby.deadlines.store.get(table)
    with turn_server(tmp_path) as (client, lobby, clock, _):
        assert table not in lobby.tables  # a restart does not load turn-based tables
        clock.now = row.due + 2
        tick(client, lobby)
        data = stored(lobby, table)
        assert [n.kind for n in data.notes] == ["timed_out"] and len(data.actions) > 0


# --- "Your games" ----------------------------------------------------------------------------------------------

def test_your_games_lists_the_tables_waiting_for_your_move_first(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, _, _):
        mine = []
        for _ in range(3):
            table, ann, bob = two_player_table(client, move_time=DAY)
            mine.append((table, ann, bob))
        seats = [{"table": t, "token": ann} for t, ann, _ in mine]
        res = client.post("/api/my-tables", json={"seats": seats})
        assert res.status_code == 200, res.text
        got = res.json()
        waiting = [t for t in got["tables"] if t["your_turn"]]
        expected = [t for t, _, _ in mine if lobby.deadlines.store.get(t).seat == 0]
        assert got["waiting"] == len(expected) == len(waiting)
        assert [t["id"] for t in got["tables"][:len(waiting)]] == [t["id"] for t in waiting]
        assert all(t["time_left"] == pytest.approx(DAY, abs=5) or t["time_left"] > 0 for t in waiting)
        assert {t["id"] for t in got["tables"]} == {t for t, _, _ in mine}
        bad = client.post("/api/my-tables", json={"seats": [{"table": "x" * 99, "token": "t"}]})
        assert bad.status_code == 400
        assert client.post("/api/my-tables", json={"seats": [{"table": mine[0][0], "token": "wrong"}]}) \
            .json()["tables"] == []
        assert client.get("/my-tables").status_code == 200


# --- EXAGON's hourglass in a turn-based table ----------------------------------------------------------------

def test_the_hourglass_of_a_turn_based_table_runs_only_while_its_player_has_it_open(tmp_path: Path) -> None:
    with turn_server(tmp_path) as (client, lobby, _, _):
        made = create(client, "exagon", open_seats(2), pace="turn-based", move_time=DAY, options={"clock": 60})
        table_id = made["id"]
        bob = client.post(f"/api/tables/{table_id}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        table = lobby.tables[table_id]
        ticks = Clock()
        table.master.clock._now = ticks  # the hourglass's own clock, moved by the test
        tokens = {0: made["token"], 1: bob}
        rng = random.Random(3)
        for _ in range(20):  # the opening tiles have no hourglass (RULES.md, EXAGON)
            if table.state.time_left() is not None:
                break
            play_one(client, table_id, tokens[table.to_move()], rng)
        client.portal.call(_idle, table)  # type: ignore[union-attr]

        def left() -> float:
            return float(client.portal.call(_remaining, table))  # type: ignore[union-attr]

        assert left() == 60.0 and table.master.clock.paused_at is not None
        ticks.now += 3 * HOUR  # nobody has the table open: nothing is charged
        assert left() == 60.0
        with connect(client, table_id, tokens[table.to_move()]):
            assert table.master.clock.paused_at is None  # the player is there: it runs
            ticks.now += 10
            assert left() == pytest.approx(50.0)
        client.portal.call(_idle, table)  # type: ignore[union-attr]
        ticks.now += DAY  # gone again: stopped, nothing more charged
        assert left() == pytest.approx(50.0) and table.master.clock.paused_at is not None
        assert table.status == "playing" and len(stored(lobby, table_id).notes) == 0


async def _remaining(table: Any) -> float:
    return float(table.master.clock.remaining())


async def _idle(table: Any) -> None:
    """Let the server notice the connection that closed."""
    for _ in range(100):
        if table.to_move() not in table.hub.connected_seats():
            return
        await asyncio.sleep(0.01)
