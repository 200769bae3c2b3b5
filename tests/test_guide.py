"""The guided first game of every game ("Learn to play"): the guide files checked against the
real engines (core/guide.py), and the stateless API that plays their steps (web/lobby/guide.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.guide import LANGUAGES, MAX_STEPS, TEXTS, GuideError, parse, play_step
from ludoteca.registry import GAMES, game_class

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from ludoteca.web.app import create_app

pytestmark = pytest.mark.timeout(120)


def raw_guide(name: str) -> dict[str, Any]:
    import importlib.resources

    source = importlib.resources.files(game_class(name).__module__).joinpath("guide.json")
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


# --- the guide files ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_a_guide_the_engine_accepts(name: str) -> None:
    guide = game_class(name).guide()
    assert guide is not None, f"{name} has no guide.json"
    assert 5 <= len(guide.steps) <= 12, "a guide teaches the rules in about 5 to 12 steps"
    for i, step in enumerate(guide.steps):
        start = guide.start(i)
        assert start.current_player() == guide.learner  # the learner decides at every step
        legal = set(start.legal_actions())
        for move in step.moves:
            assert start.action_from_json(dict(move)) in legal
        # every text in every language, non-empty, and the two languages really differ
        for text in TEXTS:
            for lang in LANGUAGES:
                assert step.text(text, lang).strip(), (name, i, text, lang)
            assert step.text(text, "en") != step.text(text, "it"), (name, i, text)


@pytest.mark.parametrize("name", GAMES)
def test_each_step_played_as_asked_applies_its_chance_outcomes_checked(name: str) -> None:
    guide = game_class(name).guide()
    assert guide is not None
    chances = 0
    for i, step in enumerate(guide.steps):
        for move in step.moves:
            played = play_step(guide, i, move)
            assert played.asked
            assert len(played.applied) == 1 + len(step.then)
            assert played.applied[0][0] == guide.learner
            for seat, _action, events in played.applied:
                assert events, "every applied action has its events"
                chances += seat is None
            # the engine's outcomes at chance nodes are legal outcomes (apply_action checked them)
    assert chances or name == "exagon"  # exactly, TRI and TOHM show dice after the learner's move


@pytest.mark.parametrize("name", GAMES)
def test_the_last_step_ends_the_game_with_the_learner_winning(name: str) -> None:
    guide = game_class(name).guide()
    assert guide is not None
    played = play_step(guide, len(guide.steps) - 1, guide.steps[-1].moves[0])
    assert played.state.current_player() == TERMINAL
    assert played.state.returns()[guide.learner] > 0


def test_the_guides_teach_the_events_that_matter() -> None:
    """Each guide shows the events of the rules it teaches (one rule at a time)."""
    wanted = {"exactly": {"coin_moved", "euro", "new_round", "start_coins", "end"},
              "tri": {"place", "expand", "square_closed", "income", "teleport", "attack", "battle", "void", "taken",
                      "eliminated", "end"},
              "tohm": {"placed", "tris", "removed", "moved", "pass", "end"},
              "exagon": {"placed", "bonus_earned", "given", "bonus_spent", "timeout", "perfect_fit", "end", "stop",
                         "pass", "hourglass"}}
    for name, kinds in wanted.items():
        guide = game_class(name).guide()
        assert guide is not None
        seen = set()
        for i, step in enumerate(guide.steps):
            _state, setup = guide.opening(i)
            for _seat, _action, events in setup + play_step(guide, i, step.moves[0]).applied:
                seen.update(e.kind for e in events)
        assert kinds <= seen, (name, kinds - seen)


def test_a_broken_guide_is_refused_with_the_step_named() -> None:
    cls = game_class("tohm")
    good = raw_guide("tohm")
    parse(cls, good)

    def broken(change: Any) -> str:
        data = copy.deepcopy(good)
        change(data)
        with pytest.raises(GuideError) as exc:
            parse(cls, data)
        return str(exc.value)

    assert "step 2" in broken(lambda d: d["steps"][1]["moves"].__setitem__(0, {"place": [2, 2]}))  # not a 5
    assert "step 1, then 1" in broken(lambda d: d["steps"][0]["then"].__setitem__(0, {"roll": 9}))  # no such face
    assert "it text" in broken(lambda d: d["steps"][0]["after"].__setitem__("it", " "))
    assert "en text" in broken(lambda d: d["steps"][2]["title"].pop("en"))
    assert "position" in broken(lambda d: d["steps"][0]["position"].__setitem__("supply", [9, 9]))
    # the learner's own moves are never made by the guide
    assert "learner is to move" in broken(lambda d: d["steps"][1]["then"].extend([{"roll": 3}, {"place": [0, 0]}]))
    assert "steps" in broken(lambda d: d.__setitem__("steps", d["steps"] * (MAX_STEPS + 1)))
    assert "format" in broken(lambda d: d.__setitem__("format", "something"))


def test_the_learner_must_be_to_move_after_the_setup() -> None:
    data = raw_guide("exactly")
    data["steps"][0]["setup"] = []  # the learner's roll is missing: chance is to move
    with pytest.raises(GuideError, match="step 1: the learner"):
        parse(game_class("exactly"), data)
    assert game_class("exactly").guide() is not None
    state = game_class("exactly").guide().game.state_from_json(data["steps"][0]["position"])  # type: ignore[union-attr]
    assert state.current_player() == CHANCE


# --- the API ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=tmp_path_factory.mktemp("guide"), ai_delay=0, rate=10_000, burst=10_000)
    with TestClient(app) as c:
        yield c


def test_the_page_and_the_overview(client: TestClient) -> None:
    page = client.get("/learn/tohm")
    assert page.status_code == 200 and "guide.js" in page.text
    info = client.get("/api/guide/tohm", headers={"Accept-Language": "it-IT,it;q=0.9"}).json()
    assert info["lang"] == "it" and info["game"] == "tohm" and info["players"] == 2
    assert info["level"] == "beginner"  # the easiest level of the ladder, never the uniformly random player
    assert info["steps"][1]["title"] == "Tre in fila: un tris"
    assert client.get("/api/guide/tohm?lang=en").json()["steps"][1]["title"] == "Three in a row: a tris"
    client.cookies.set("ludoteca_lang", "it")
    try:
        assert client.get("/api/guide/tohm").json()["lang"] == "it"
    finally:
        client.cookies.clear()


@pytest.mark.parametrize("name", GAMES)
def test_every_step_through_the_api(client: TestClient, name: str) -> None:
    info = client.get(f"/api/guide/{name}?lang=it").json()
    for n in range(1, len(info["steps"]) + 1):
        step = client.get(f"/api/guide/{name}/{n}?lang=it").json()
        assert step["step"] == n and step["title"] == info["steps"][n - 1]["title"]
        assert step["before"] and step["moves"] and step["to_move"] == info["learner"]
        assert all(m in step["legal"] for m in step["moves"])
        res = client.post(f"/api/guide/{name}/{n}?lang=it", json={"action": step["moves"][0]})
        assert res.status_code == 200, res.text
        done = res.json()
        assert done["asked"] is True and done["after"]
        assert done["log"][0]["seat"] == info["learner"] and done["log"][0]["events"][0]["kind"] == "move"
        if n == len(info["steps"]):  # every guide ends with a finished game the learner wins
            assert done["over"] is True
        if done["over"]:
            assert done["winners"] and done["to_move"] is None
    assert done["winners"] == [info["learner"]]


def test_another_legal_move_is_not_this_one_and_changes_nothing(client: TestClient) -> None:
    step = client.get("/api/guide/tohm/1?lang=it").json()
    other = next(a for a in step["legal"] if a not in step["moves"])
    res = client.post("/api/guide/tohm/1?lang=it", json={"action": other})
    assert res.status_code == 200
    body = res.json()
    assert body["asked"] is False and body["message"].startswith("Non questa") and body["hint"]
    # stateless: the step is the same as before, and the asked move still works
    assert client.get("/api/guide/tohm/1?lang=it").json() == step
    assert client.post("/api/guide/tohm/1", json={"action": step["moves"][0]}).json()["asked"] is True


def test_state_is_not_shared_between_users(client: TestClient) -> None:
    """Two learners on the same step: one's move never shows in the other's position."""
    a = TestClient(client.app)
    b = TestClient(client.app)
    before = b.get("/api/guide/exactly/1").json()
    assert a.post("/api/guide/exactly/1", json={"action": before["moves"][0]}).json()["asked"]
    assert b.get("/api/guide/exactly/1").json() == before
    assert b.post("/api/guide/exactly/1", json={"action": before["moves"][0]}).json()["asked"]


@pytest.mark.parametrize(("body", "code"), [
    ({"action": {"place": [9, 9]}}, "illegal"),          # off the board
    ({"action": {"remove": [0, 1]}}, "illegal"),          # a 4 was rolled, not a 1
    ({"action": {"nonsense": True}}, "illegal"),          # ill-formed
    ({"action": {"place": "x"}}, "illegal"),
    ({"action": 5}, "bad_message"),
    ({"move": {"place": [0, 1]}}, "bad_message"),
    ([1, 2, 3], "bad_message"),
])
def test_bad_actions_get_a_clear_translated_error(client: TestClient, body: Any, code: str) -> None:
    for lang, word in (("en", "not possible"), ("it", "non è possibile")):
        res = client.post(f"/api/guide/tohm/1?lang={lang}", json=body)
        assert res.status_code == 400, res.text
        error = res.json()
        assert error["code"] == code and error["message"]
        if code == "illegal":
            assert word in error["message"]
    assert client.get("/api/guide/tohm/1").status_code == 200  # nothing changed


def test_bad_json_and_huge_bodies_are_refused(client: TestClient) -> None:
    res = client.post("/api/guide/tohm/1", content=b"{not json", headers={"Content-Type": "application/json"})
    assert res.status_code == 400 and res.json()["code"] == "bad_json"
    deep = b"[" * 5000 + b"]" * 5000
    res = client.post("/api/guide/tohm/1", content=deep, headers={"Content-Type": "application/json"})
    assert res.status_code in (400, 413)
    res = client.post("/api/guide/tohm/1", content=b'{"action": "' + b"x" * 200_000 + b'"}',
                      headers={"Content-Type": "application/json"})
    assert res.status_code == 413 and res.json()["code"] == "too_large"


@pytest.mark.parametrize("step", ["0", "6", "-1", "abc", "1.5", "9" * 40, "%20"])
def test_bad_step_numbers(client: TestClient, step: str) -> None:
    for res in (client.get(f"/api/guide/tohm/{step}?lang=it"),
                client.post(f"/api/guide/tohm/{step}?lang=it", json={"action": {"pass": True}})):
        assert res.status_code == 400, (step, res.text)
        body = res.json()
        assert body["code"] == "bad_request" and "passi vanno da 1 a 5" in body["message"], body


def test_unknown_game(client: TestClient) -> None:
    for path in ("/api/guide/chess", "/api/guide/chess/1"):
        res = client.get(path + "?lang=it")
        assert res.status_code == 404 and res.json()["code"] == "not_found"
    assert client.post("/api/guide/" + "x" * 500 + "/1", json={}).status_code == 404


def test_the_guide_files_are_small() -> None:
    for name in GAMES:
        assert len(json.dumps(raw_guide(name))) < 100_000


# --- the guides complete --------------------------------------------------------------------------
def test_every_guide_shows_how_a_game_ends() -> None:
    """The last step of every guide ends the game (a result the page says in words), and a game whose
    end can come from a full board or an emptied hand shows it there, not only in the rules."""
    for name in GAMES:
        guide = game_class(name).guide()
        assert guide is not None
        last = play_step(guide, len(guide.steps) - 1, guide.steps[-1].moves[0])
        assert last.state.is_terminal() and last.applied[-1][2][-1].kind == "end"


def test_tri_teaches_the_end_of_a_full_board() -> None:
    """RULES.md, TRI "Eliminations and end": no empty triangle and two players left ends the game; most units
    wins. The guide's last step fills the last triangle: 37 units against 27."""
    guide = game_class("tri").guide()
    assert guide is not None
    start = guide.start(len(guide.steps) - 1)
    owner = start.to_json()["owner"]
    assert len(owner) == 4 * 4 * 4 - 1
    assert sorted(list(owner.values()).count(seat) for seat in (0, 1)) == [27, 36]
    played = play_step(guide, len(guide.steps) - 1, guide.steps[-1].moves[0])
    assert played.state.returns() == [1.0, 0.0] and played.applied[0][2][-1].data["reason"] != "eliminated"


def test_exagon_teaches_the_opening_rotation_stop_pass_and_the_hourglass() -> None:
    guide = game_class("exagon").guide()
    assert guide is not None
    asked = {next(iter(m)) for step in guide.steps for m in step.moves}
    assert {"place", "give", "stop", "pass"} <= asked
    # RULES.md, EXAGON "Opening": the holder of the 39 starts and the first tile goes anywhere (any tile of
    # the hand, in the middle)
    first = guide.start(0)
    assert first.to_json()["phase"] == "opening" and not first.to_json()["table"]
    tiles = {t["id"]: t for t in first.to_json()["tiles"]}
    hand = first.to_json()["hands"][guide.learner]
    assert any(tiles[k]["star"] == 39 for k in hand)
    assert {m["place"]["tile"] for m in guide.steps[0].moves} == set(hand)
    # the hourglass runs on screen in the steps of a turn: the API sends the clock
    timed = [i for i in range(len(guide.steps)) if guide.start(i).time_left() is not None]
    assert len(timed) >= len(guide.steps) - 1


def test_a_step_that_asks_for_a_turned_tile_is_passed_only_by_turning_it(client: TestClient) -> None:
    """A step's ``offered`` moves are shown on the board first (the way the tile first fits) and answered
    "not this one"; only the asked one (the tile turned with Rotate) passes. Each offered move is legal."""
    found = 0
    for name in GAMES:
        info = client.get(f"/api/guide/{name}?lang=en").json()
        for n in range(1, len(info["steps"]) + 1):
            step = client.get(f"/api/guide/{name}/{n}?lang=en").json()
            for offer in step["offered"]:
                found += 1
                assert offer in step["legal"] and offer not in step["moves"]
                res = client.post(f"/api/guide/{name}/{n}?lang=it", json={"action": offer}).json()
                assert res["asked"] is False and res["hint"]
                assert client.get(f"/api/guide/{name}/{n}?lang=en").json() == step
    assert found, "some guide teaches a choice among legal forms of one move (EXAGON: turning a tile)"
    # EXAGON's: the same tile on the same spot, turned another way
    info = client.get("/api/guide/exagon?lang=en").json()
    steps = [client.get(f"/api/guide/exagon/{n}?lang=en").json() for n in range(1, len(info["steps"]) + 1)]
    turn = next(s for s in steps if s["offered"])
    offered, asked = turn["offered"][0]["place"], turn["moves"][0]["place"]
    assert (offered["tile"], offered["at"]) == (asked["tile"], asked["at"]) and offered["rot"] != asked["rot"]


def test_an_offered_move_that_is_asked_or_illegal_is_refused() -> None:
    cls = game_class("exagon")
    good = raw_guide("exagon")
    n = next(i for i, s in enumerate(good["steps"]) if s.get("offered"))
    data = copy.deepcopy(good)
    data["steps"][n]["offered"] = list(data["steps"][n]["moves"])
    with pytest.raises(GuideError, match=f"step {n + 1}, offered 1 .*asked"):
        parse(cls, data)
    data = copy.deepcopy(good)
    data["steps"][n]["offered"][0]["place"]["rot"] = (data["steps"][n]["moves"][0]["place"]["rot"] + 1) % 6
    with pytest.raises(GuideError, match=f"step {n + 1}, offered 1"):
        parse(cls, data)


def test_the_clock_of_a_step(client: TestClient) -> None:
    """A game with a clock sends the hourglass of the seat to move (the page shows it running)."""
    for name in GAMES:
        info = client.get(f"/api/guide/{name}").json()
        for n in range(1, len(info["steps"]) + 1):
            step = client.get(f"/api/guide/{name}/{n}").json()
            clock = step["clock"]
            if game_class(name).clock_option is None:
                assert clock is None
            elif clock is not None:
                assert 0 < clock["remaining"] <= clock["full"] and clock["seat"] == info["learner"]
