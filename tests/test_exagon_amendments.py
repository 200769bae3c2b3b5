"""EXAGON's amended rules (RULES.md section 4), scenario by scenario.

Each expected value is derived from the amended sentence quoted above the test, not from the
engine's output: the option ``matching`` ("lenient"), the hourglass's ``carry_cap``, the tournament
won by the highest score, ``tournament_games`` and ``games_played``, and ``apply_json`` as the JSON
entry point (a record replayed with its ``elapsed`` values gives back ``time_left`` exactly).
Every scenario also runs on the compiled engine when it is built (the same positions).
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

import ludoteca
from ludoteca import IllegalActionError
from ludoteca.core.records import Record
from ludoteca.games.exagon import compiled
from tests.conformance import legal_json
from tests.test_conformance_exagon import (
    FILLER,
    HOLE,
    T,
    add,
    blocked_position,
    expected_legal,
    place,
    placed_key,
    placements,
    position,
    ring,
    rot_facing,
    share,
)

LENIENT = {"matching": "lenient"}


def state_of(d: dict, **opts: Any) -> Any:
    """The position ``d`` read by a game with ``opts`` (its clock follows ``time_left``)."""
    opts.setdefault("clock", None if d["time_left"] is None else 60)
    if d["scores"] is not None:
        opts.setdefault("tournament", True)
    game = ludoteca.load_game("exagon", players=d["players"], **opts)
    return game.state_from_json(copy.deepcopy(d))


def both(d: dict, **opts: Any) -> list[Any]:
    """The position on the Python engine and, when built, on the compiled one."""
    s = state_of(d, **opts)
    out = [s]
    if compiled.available():
        out.append(compiled.CompiledState.from_state(s.clone()))
    return out


def apply_both(states: list[Any], *actions: dict) -> None:
    """Each JSON action on every engine: ``apply_json`` on the Python state; the compiled one
    takes the int and the ``elapsed``."""
    py = states[0]
    for aj in actions:
        a = py.action_from_json(aj)
        for s in states[1:]:
            s.apply_action(a, elapsed=aj.get("elapsed"))
        py.apply_json(aj)
    for s in states[1:]:
        assert s.to_json() == py.to_json()


# --------------------------------------------------------------------------------------------
# matching = "lenient"
# "a tile may touch sides that do not match, it needs at least one matching side to be placed,
# and its connections are its matching sides"
MIXED = T(5, [1, 1, 5, 5, 5, 5])
"""Two 1s then four 5s: against a ring of ONES tiles (1s towards the hole) only its 1s match."""


def three_ring(**over: Any) -> dict:
    """ONES tiles around HOLE in directions 2, 3, 4 (1s towards it); seat 0 holds MIXED."""
    tiles, table = ring(HOLE, [2, 3, 4])
    return position([*tiles, MIXED, FILLER, T(6, [2, 2, 2, 2, 3, 3])], table, [[5, 6], [40]], **over)


def test_lenient_allows_a_mismatching_side_and_counts_matching_sides() -> None:
    # MIXED with rotation k shows side (d - k) % 6 in direction d; its sides 0 and 1 are 1s.
    # Facing the ring's 1s in directions 2, 3, 4: k=2 puts sides 0, 1, 2 there (1, 1, 5): two
    # match; k=3 puts 5, 0, 1 (5, 1, 1): two; k=1 puts 1, 2, 3 (1, 5, 5): one; k=4 puts 4, 5, 0
    # (5, 5, 1): one; k=0 and k=5 show only 5s: no matching side, refused.
    d = three_ring(matching="lenient")
    expected = {placed_key(5, HOLE, k): n for k, n in ((2, 2), (3, 2), (1, 1), (4, 1))}
    got = placements({t["id"]: t for t in d["tiles"]}, d["table"], [5], lenient=True)
    assert {a: n for a, n in got.items() if '"at": [1, 0]' in a} == expected
    states = both(d, **LENIENT)
    legal = legal_json(states[0])
    assert {a for a in legal if '"tile": 5' in a and '"at": [1, 0]' in a} == set(expected)
    assert legal == expected_legal(d)
    for c in states[1:]:  # the compiled engine: the same actions
        assert c.legal_actions() == states[0].legal_actions()
    # the strict default refuses every one of them: each touches a 5 against a 1
    strict = dict(d)
    del strict["matching"]
    assert not any('"tile": 5' in a and '"at": [1, 0]' in a for a in legal_json(state_of(strict)))


def test_lenient_connections_decide_the_turn() -> None:
    # "A tile with 2+ connections lets the turn go on"; "A tile with 1 connection ends the turn"
    # -- the connections being the matching sides
    d = three_ring(matching="lenient")
    states = both(d, **LENIENT)
    apply_both(states, place(5, HOLE, 2))  # two matching sides (of three touching)
    got = states[0].to_json()
    assert (got["to_move"], got["placed_this_turn"], got["bonus"]) == (0, 1, 0)
    states = both(d, **LENIENT)
    events = states[0].apply_json(place(5, HOLE, 1))  # one matching side: the turn ends
    placed = next(e for e in events if e.kind == "placed")
    assert placed.data["connections"] == 1
    got = states[0].to_json()
    assert (got["to_move"], got["placed_this_turn"], got["turn"]) == (1, 0, 8)


def test_lenient_bonus_counts_matching_sides() -> None:
    # "A tile with 3, 4, 5 connections also earns 1, 2, 3 bonus tiles": five tiles touched, three
    # of them on matching sides (sides 0, 1, 2 of [1, 1, 1, 5, 5, 5] face the ring's 1s)
    tiles, table = ring(HOLE, [1, 2, 3, 4, 5])
    half = T(7, [1, 1, 1, 5, 5, 5])
    d = position([*tiles, half, FILLER, T(6, [2, 2, 2, 2, 3, 3])], table, [[7, 6], [40]], matching="lenient")
    k = rot_facing(0, 3)  # side 0 faces direction 3, sides 1, 2 face 4, 5; sides 3, 4, 5 face 0, 1, 2
    states = both(d, **LENIENT)
    apply_both(states, place(7, HOLE, k))
    got = states[0].to_json()
    # directions 3, 4, 5 match (1 against 1); 1 and 2 do not (5 against 1); 0 is empty
    assert (got["to_move"], got["placed_this_turn"], got["bonus"]) == (0, 1, 1)
    with pytest.raises(IllegalActionError):
        state_of({k2: v for k2, v in d.items() if k2 != "matching"}).apply_json(place(7, HOLE, k))


def six_ring(hand_tile: dict) -> dict:
    tiles, table = ring(HOLE, [0, 1, 2, 3, 4, 5])
    return position([*tiles, hand_tile, T(6, [2, 2, 2, 2, 3, 3]), FILLER], table,
                    [[hand_tile["id"], 6], [40]], matching="lenient")


def test_lenient_perfect_fit_needs_six_matching_sides() -> None:
    # "the perfect fit is then a tile touching six tiles with all six sides matching"
    states = both(six_ring(T(1, [1, 1, 1, 1, 1, 1])), **LENIENT)
    apply_both(states, place(1, HOLE, 0))
    for s in states:
        assert s.is_terminal() and s.returns() == [1.0, 0.0]
        assert s.end_reason() == "perfect_fit"
    # six tiles touched, five sides matching: five connections (3 bonuses), not a perfect fit
    nine = T(30, [1, 1, 1, 1, 1, 9])
    states = both(six_ring(nine), **LENIENT)
    apply_both(states, place(30, HOLE, 0))
    got = states[0].to_json()
    assert got["phase"] == "turn" and (got["to_move"], got["bonus"]) == (0, 3)


def test_lenient_positions_read_back_and_a_strict_reader_refuses_their_tables() -> None:
    # "Reading a position: a reader refuses what breaks a rule": under strict matching touching
    # sides that differ break the matching rule; under lenient a tile needs one matching side
    d = three_ring(matching="lenient")
    s = state_of(d, **LENIENT)
    s.apply_json(place(5, HOLE, 2))
    written = s.to_json()
    assert written["matching"] == "lenient"
    assert s.game.state_from_json(written).to_json() == written
    strict_game = ludoteca.load_game("exagon", players=2, clock=None)
    assert strict_game.state_from_json(written).to_json() == written  # the position's own option
    without = {k: v for k, v in written.items() if k != "matching"}
    with pytest.raises(ValueError, match="unmatched sides"):
        strict_game.state_from_json(without)
    # a tile held only by mismatching sides was never placeable
    lone = copy.deepcopy(written)
    lone["hands"][0].remove(6)
    lone["table"].append({"tile": 6, "at": add(HOLE, 0), "rot": 0})
    with pytest.raises(ValueError, match="matching sides"):
        s.game.state_from_json(lone)


def test_matching_option_errors() -> None:
    with pytest.raises(ValueError, match="matching") as err:
        ludoteca.load_game("exagon", players=2, matching="loose")
    assert "'strict'" in str(err.value) and "'lenient'" in str(err.value) and "'loose'" in str(err.value)
    assert ludoteca.load_game("exagon", players=2).options["matching"] == "strict"  # the default


# --------------------------------------------------------------------------------------------
# carry_cap: "time_left at the start of a turn is clock + carry, where carry is what the previous
# turn left, at most carry_cap seconds (... default: equal to clock ...; null for no cap; ignored
# without a clock). The position's carry is the capped value; a reader refuses a carry above the cap."
def carry_after_stop(time_left: float, spent: float, **opts: Any) -> tuple[float, float]:
    """(carry, time_left) of the next turn after a two-connection tile and ``stop``."""
    tiles, table = ring(HOLE, [2, 3, 4])
    d = position([*tiles, T(1, [1, 1, 1, 1, 1, 1]), FILLER, T(6, [2, 2, 2, 2, 3, 3])], table, [[1, 6], [40]],
                 time_left=time_left, carry=0.0)
    states = both(d, **opts)
    apply_both(states, place(1, HOLE, 0, elapsed=spent), {"stop": True, "elapsed": 0})
    got = states[0].to_json()
    return got["carry"], got["time_left"]


def test_carry_is_capped_at_one_hourglass_by_default() -> None:
    # 100 s left at the end of a turn; clock 60: at most 60 carried, the next turn has 120
    assert carry_after_stop(105.0, 5.0) == (60.0, 120.0)
    assert carry_after_stop(45.0, 5.0) == (40.0, 100.0)  # under the cap: all of it


def test_carry_cap_option_values() -> None:
    assert carry_after_stop(105.0, 5.0, carry_cap=20) == (20.0, 80.0)
    assert carry_after_stop(105.0, 5.0, carry_cap=0) == (0.0, 60.0)
    assert carry_after_stop(105.0, 5.0, carry_cap=None) == (100.0, 160.0)  # "null for no cap"
    assert carry_after_stop(105.0, 5.0, clock=30) == (30.0, 60.0)  # the default follows the clock


def test_carry_cap_is_ignored_without_a_clock() -> None:
    game = ludoteca.load_game("exagon", players=2, clock=None, carry_cap=5)
    s = game.new_initial_state()
    rng = random.Random(3)
    while not s.is_terminal():
        legal = s.legal_actions()
        s.apply_action(legal[rng.randrange(len(legal))])
        got = s.to_json()
        assert got["time_left"] is None and got["carry"] is None


def test_a_reader_refuses_a_carry_above_the_cap() -> None:
    tiles, table = ring(HOLE, [2, 3, 4])
    d = position([*tiles, T(1, [1, 1, 1, 1, 1, 1]), FILLER], table, [[1], [40]], time_left=120.5, carry=60.5)
    with pytest.raises(ValueError, match="carry"):
        state_of(d)  # clock 60: the default cap is 60
    assert state_of(d, carry_cap=None).to_json()["carry"] == 60.5
    assert state_of({**d, "carry": 60.0, "time_left": 120.0}).to_json()["carry"] == 60.0
    with pytest.raises(ValueError, match="carry"):
        state_of({**d, "carry_cap": 30, "carry": 31.0, "time_left": 91.0}, carry_cap=None)  # the position's own cap
    written = state_of({**d, "carry": 20.0, "time_left": 80.0}, carry_cap=25).to_json()
    assert written["carry_cap"] == 25
    assert ludoteca.load_game("exagon", players=2).state_from_json(written).to_json() == written


@pytest.mark.parametrize("value", [-1, -0.5, "soon", True, float("nan"), float("inf"), [3]])
def test_carry_cap_option_errors(value: Any) -> None:
    with pytest.raises(ValueError, match="carry_cap"):
        ludoteca.load_game("exagon", players=2, carry_cap=value)


def test_carry_cap_option_text_values() -> None:
    # the command line gives text: numbers and null read as the option's values
    assert ludoteca.load_game("exagon", players=2, carry_cap="12.5").options["carry_cap"] == 12.5
    assert ludoteca.load_game("exagon", players=2, carry_cap="null").options["carry_cap"] is None
    assert ludoteca.load_game("exagon", players=2, clock=45).options["carry_cap"] == 45


# --------------------------------------------------------------------------------------------
# tournament: "When two or more players reach 50 at the end of the same game (possible only after
# a shared result, since only winners gain), the highest score wins; equal highest scores share."
def shared_blocked(scores: list[int]) -> dict:
    """Every player holds one tile of the same penalty and nothing fits: two passes block the game,
    shared by all (fewest tiles, equal penalty)."""
    hands = [[12 + i] for i in range(len(scores))]
    extra = [T(12 + i, [1, 1, 1, 1, 1, 2 + i], sp=2) for i in range(len(scores))]
    return blocked_position(hands, extra, scores=scores, time_left=60.0, carry=0.0)


def end_by_passes(d: dict, **opts: Any) -> list[Any]:
    states = both(d, **opts)
    apply_both(states, *[{"pass": True}] * d["players"])
    return states


@pytest.mark.parametrize(("scores", "after", "winners"), [
    ([40, 35], [60, 55], [0]),  # both reach 50: the highest score wins alone
    ([35, 35], [55, 55], [0, 1]),  # equal highest scores share
    ([30, 45, 30], [50, 65, 50], [1]),
    ([45, 45, 20], [65, 65, 40], [0, 1]),
])
def test_tournament_highest_score_wins(scores: list[int], after: list[int], winners: list[int]) -> None:
    # "Each winner of a shared result gains 20"
    for s in end_by_passes(shared_blocked(scores)):
        got = s.to_json()
        assert got["scores"] == after and got["phase"] == "over"
        assert s.returns() == share(winners, len(scores))
        assert s.end_reason() == "tournament"


def test_tournament_position_read_at_the_end_names_the_highest() -> None:
    d = shared_blocked([40, 35])
    s = end_by_passes(d)[0]
    written = s.to_json()
    written.pop("result")  # a reader without this engine's key derives the winners from the scores
    assert state_of(written).returns() == [1.0, 0.0]


# tournament_games: "after that many one-shot games without anyone at 50 the tournament ends and the
# highest score wins (ties share); a game ended by turn_limit counts. Tournament positions carry
# games_played, the one-shot games finished, the one that ends the tournament included ...; absent
# or null reads as 0; it is refused outside tournament mode, and below over it must be under
# tournament_games."
def test_games_played_counts_the_game_that_ends_the_tournament() -> None:
    d = shared_blocked([10, 5]) | {"games_played": 2}
    for s in end_by_passes(d, tournament_games=3):
        got = s.to_json()
        assert got["games_played"] == 3 and got["phase"] == "over"
        assert got["scores"] == [30, 25] and s.returns() == [1.0, 0.0]
    # one game earlier the tournament goes on with a new deal
    s = end_by_passes(shared_blocked([10, 5]) | {"games_played": 1}, tournament_games=3)[0]
    got = s.to_json()
    assert (got["games_played"], got["phase"]) == (2, "deal")


def test_a_turn_limit_game_counts() -> None:
    d = shared_blocked([10, 10]) | {"turn": 9, "games_played": 0}
    states = both(d, tournament_games=1, turn_limit=10)
    apply_both(states, {"pass": True})  # turn 10: the turn limit ends the one-shot game
    for s in states:
        got = s.to_json()
        assert got["games_played"] == 1 and got["phase"] == "over"
        assert s.returns() == [0.5, 0.5]  # shared game, equal highest scores share


def test_games_played_absent_or_null_reads_as_zero() -> None:
    d = shared_blocked([10, 5])
    assert state_of(d).to_json()["games_played"] == 0
    assert state_of(d | {"games_played": None}).to_json()["games_played"] == 0


def test_games_played_refused_outside_a_tournament_and_at_the_bound() -> None:
    d = shared_blocked([10, 5])
    one_shot = d | {"scores": None, "games_played": 1}
    with pytest.raises(ValueError, match="games_played"):
        ludoteca.load_game("exagon", players=2).state_from_json(one_shot)
    with pytest.raises(ValueError, match="tournament_games"):
        state_of(d | {"games_played": 3}, tournament_games=3)
    assert state_of(d | {"games_played": 2}, tournament_games=3).to_json()["games_played"] == 2


# --------------------------------------------------------------------------------------------
# "The JSON entry point is state.apply_json(action_json): it reads the action and plays it, with
# whatever the JSON carries beside the action itself (EXAGON's elapsed)."
def timed_game(seed: int, **opts: Any) -> tuple[Any, Record, list[str]]:
    """A seeded random clocked game; every player action spends some time (recorded). Returns the
    final state, the record and the text of each position before each action."""
    game = ludoteca.load_game("exagon", players=3, **opts)
    s = game.new_initial_state()
    record = Record.start(game)
    rng = random.Random(seed)
    renders = []
    while not s.is_terminal():
        renders.append(s.render())
        legal = s.legal_actions()
        a = legal[rng.randrange(len(legal))]
        elapsed = None
        left = s.time_left()
        if left is not None:
            elapsed = round(min(left, rng.choice([0.125, 1.7, 3.3, 12.05, 29.9])), 3)
        record.add(s, a, elapsed)
        s.apply_action(a, elapsed=elapsed)
    return s, record, renders


@pytest.mark.parametrize("opts", [{}, {"carry_cap": None, "clock": 7.5}, {"carry_cap": 2.5, **LENIENT}])
def test_a_record_with_elapsed_replays_time_left_exactly(opts: dict[str, Any]) -> None:
    s, record, _renders = timed_game(11, **opts)
    assert any("elapsed" in a for a in record.actions)
    text = record.dumps()
    again = Record.loads(text)
    assert json.loads(text)["actions"] == record.actions
    replayed = again.replay()
    assert replayed.to_json() == s.to_json()  # time_left and carry included, to the last bit
    times = [(p.to_json()["time_left"], p.to_json()["carry"]) for p, _ in again.states()]
    assert len({t for t in times if t != (None, None)}) > 3  # the hourglass ran in several positions
    # the same actions without their elapsed values give other times: the comparison can fail
    bare = Record.loads(text)
    bare.actions = [{k: v for k, v in a.items() if k != "elapsed"} for a in bare.actions]
    assert [(p.to_json()["time_left"], p.to_json()["carry"]) for p, _ in bare.states()] != times


def test_the_replay_command_shows_the_recorded_times(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # `ludoteca replay` plays each recorded action with apply_json: the final position's hourglass
    # is the recorded game's, to the last digit shown
    from ludoteca.cli import main

    _s, record, renders = timed_game(12)
    last = len(record.actions) - 1  # the position before the winning action: a clocked turn
    record.actions = record.actions[:last]
    assert " s left (carry " in renders[last]
    path = tmp_path / "game.json"
    record.save(path)
    assert main(["replay", "--final", "--lang", "en", str(path)]) == 0
    assert capsys.readouterr().out.rstrip() == renders[last].rstrip()
