"""The ``perfect`` AI in the web: offered only where the game is solved for the table, and played.

RULES.md section 3 and docs/strength.md: TOHM for two players on its 3x3 board is solved; three
players, another board or other rules' numbers are not. The lobby asks the server which AI levels a
table may seat (``POST /api/levels``), a table asking for ``perfect`` where it cannot play is refused
with a clear 400 in the creator's language (nothing stored), and a game against ``perfect`` is played
to the end through the server, the AI's moves by the exact solution.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ludoteca.agents.perfect import solver
from ludoteca.registry import load_game
from tests.test_web_api import connect, create, server

pytestmark = pytest.mark.timeout(180)

SOLVED = {"game": "tohm", "players": 2}
LADDER = ("random", "beginner", "easy", "medium", "hard", "expert")
OTHER_3X3 = [[3, 3, 3], [4, 4, 4], [6, 5, 6]]
"""A 3x3 board other than the rulebook's (solved nowhere: the test's cache folder is empty)."""


@pytest.fixture(autouse=True)
def _empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LUDOTECA_CACHE", str(tmp_path / "cache"))  # no board solved on an earlier run


def levels(client: Any, body: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    res = client.post("/api/levels", json=body, headers={"Accept-Language": lang})
    assert res.status_code == 200, res.text
    data: dict[str, Any] = res.json()
    return data


def test_perfect_is_offered_for_the_solved_variant_only(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        catalog = client.get("/api/games").json()
        assert "perfect" in catalog["levels"] and catalog["solved_levels"] == ["perfect"]
        assert "perfect" in catalog["level_info"]
        # its ladder rating where the other levels' are: for the solved game and player count only
        ratings = catalog["level_ratings"]
        assert ratings["tohm"]["2"]["perfect"]["rating"] > ratings["tohm"]["2"]["medium"]["rating"]
        assert not [game for game, counts in ratings.items() for n, rungs in counts.items()
                    if "perfect" in rungs and (game, n) != ("tohm", "2")]

        offered = levels(client, SOLVED)
        assert offered["levels"] == [*LADDER, "perfect"] and offered["unavailable"] == {}
        # the turn limit is outside the solved position (docs/strength.md): still solved
        assert "perfect" in levels(client, {**SOLVED, "options": {"turn_limit": 300}})["levels"]

        for body, why in (
            ({"game": "tohm", "players": 3}, "two players on a 3x3 board only"),
            ({**SOLVED, "options": {"layout": [[3, 4, 5, 6]] * 4}}, "two players on a 3x3 board only"),
            ({**SOLVED, "options": {"layout": OTHER_3X3}}, "not solved on this server yet"),
            ({**SOLVED, "options": {"tokens": 4}}, "tokens"),
            ({"game": "exactly", "players": 2}, "not solved"),
        ):
            answer = levels(client, body)
            assert answer["levels"] == list(LADDER), body
            assert why in answer["unavailable"]["perfect"], (body, answer)

        italian = levels(client, {"game": "tohm", "players": 3}, "it")["unavailable"]["perfect"]
        assert "due giocatori" in italian, italian


def test_a_table_asking_perfect_where_it_cannot_play_is_refused(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        before = client.get("/api/tables").json()["tables"]
        perfect, open_seat = {"kind": "ai", "level": "perfect"}, {"kind": "open"}
        for seat, body in (
            (1, {"game": "tohm", "players": 3, "seats": [perfect, open_seat, open_seat]}),
            (2, {**SOLVED, "options": {"layout": OTHER_3X3}, "seats": [open_seat, perfect]}),
            (1, {"game": "exactly", "players": 2, "seats": [perfect, open_seat]}),
        ):
            res = client.post("/api/tables", json=body)
            assert res.status_code == 400, res.text
            error = res.json()
            assert error["code"] == "bad_seats"
            assert error["message"].startswith(f"seat {seat}: the perfect AI cannot play this table: "), error
        res = client.post("/api/tables", headers={"Accept-Language": "it"},
                          json={"game": "tohm", "players": 3, "seats": [perfect, open_seat, open_seat]})
        assert res.status_code == 400
        italian = "posto 1: l'IA perfetta non può giocare a questo tavolo: TOHM è risolto solo per due giocatori"
        assert res.json()["message"].startswith(italian), res.text
        assert client.get("/api/tables").json()["tables"] == before  # nothing stored


def test_a_game_against_perfect_is_played_to_the_end_through_the_server(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        made = create(client, "tohm", [{"kind": "open"}, {"kind": "ai", "level": "perfect"}])
        seats = client.get(f"/api/tables/{made['id']}").json()["seats"]
        assert seats[1]["level"] == "perfect" and seats[1]["name"] == "AI 2 (perfect)"
        rng = random.Random(7)
        with connect(client, made["id"], made["token"]) as ws:
            state = ws.last
            assert state is not None
            for _ in range(3000):
                if state["status"] != "playing":
                    break
                seq = state["seq"]
                if state["to_move"] == 0 and state["legal"]:
                    ws.send({"type": "action", "action": rng.choice(state["legal"]), "seq": seq})
                state = ws.state_at_least(seq + 1)
            assert state["status"] == "over"
        record = client.get(f"/api/tables/{made['id']}/record").json()
    # every move of seat 1 was one of the exact solution's best moves in its position
    game = load_game("tohm", players=2)
    solution = solver(game)
    position = game.new_initial_state()
    ai_moves = 0
    for step in record["actions"]:
        data = step["action"] if isinstance(step, dict) and "action" in step else step
        if not position.is_chance_node() and position.current_player() == 1:
            values = solution.action_values(position)
            played = position.action_from_json(data)
            assert values[played] >= max(values.values()) - 1e-9, json.dumps(data)
            ai_moves += 1
        position.apply_json(data)
    assert position.is_terminal() and ai_moves > 5
