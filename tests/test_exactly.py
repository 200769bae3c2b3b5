"""exactly: scenario tests (each from a named rule of RULES.md section 1), properties, bad input."""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca import CHANCE, TERMINAL, IllegalActionError, Record
from ludoteca.core.chance import random_action, random_playout
from ludoteca.games.exactly import ExactlyGame, ExactlyState

FACE = {0: 0, "?": 1, 50: 2, 20: 3, 10: 4, 5: 5}
"""Chance outcome of each die face."""

DIE = ("die_zero", "die_question", "die_50", "die_20", "die_10", "die_5")
"""The options counting the die's faces showing 0, ?, 50, 20, 10, 5."""

PROPS = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))


def coins(c5: int = 0, c10: int = 0, c20: int = 0, c50: int = 0) -> dict[str, int]:
    return {"5": c5, "10": c10, "20": c20, "50": c50}


def position(piles: list[dict[str, int]], **over: Any) -> dict[str, Any]:
    """A position JSON: the bank holds every coin not in a pile (conservation by design)."""
    bank = {k: 10 - sum(p[k] for p in piles) for k in ("5", "10", "20", "50")}
    data: dict[str, Any] = {
        "game": "exactly", "players": len(piles), "bank": bank, "piles": piles,
        "euros": [0] * len(piles), "to_move": 0, "phase": "roll", "roll": None, "turn": 0,
    }
    data.update(over)
    return data


def load(data: dict[str, Any], **options: Any) -> ExactlyState:
    game = ludoteca.load_game("exactly", players=data["players"], **options)
    state = game.state_from_json(data)
    assert isinstance(state, ExactlyState)
    return state


def legal_json(state: ExactlyState) -> list[dict[str, Any]]:
    return [state.action_to_json(a) for a in state.legal_actions()]


def move(state: ExactlyState, coin: int, src: str | int, dst: str | int) -> None:
    state.apply_json({"coin": coin, "from": src, "to": dst})


def play_random(state: ExactlyState, rng: random.Random, limit: int = 5000):
    """Yield (state_before, action) while playing uniformly at random."""
    for _ in range(limit):
        if state.is_terminal():
            return
        action = random_action(state, rng)
        yield state, action
        state.apply_action(action)


# --- set-up and options ---------------------------------------------------------------

def test_registry_and_defaults() -> None:
    # Options as RULES.md names them: players, start_coin ("round"), turn_limit (1000).
    game = ludoteca.load_game("exactly", players=4)
    assert isinstance(game, ExactlyGame)
    assert game.record_options() == {"players": 4, "start_coin": "round", "turn_limit": 1000}
    # the rulebook's numbers (RULES.md section 1): 100 cents, three euros, 150 cents, one of each face
    assert {k: game.options[k] for k in ("target", "euros_to_win", "cap")} == {"target": 100, "euros_to_win": 3,
                                                                              "cap": 150}
    assert [game.options[k] for k in DIE] == [1] * 6
    assert game.max_chance_outcomes() == 6
    assert game.num_distinct_actions() == 7 + 4 * 5 * 5


@pytest.mark.parametrize(
    ("options", "named"),
    [({"players": 7}, "not 7"), ({"players": 1}, "not 1"), ({"turn_limit": 0}, "turn_limit"),
     ({"turn_limit": "x"}, "turn_limit"), ({"start_coin": "maybe"}, "start_coin"), ({"coins": 3}, "coins"),
     ({"start_coin": 1}, "start_coin"), ({"start_coin": None}, "start_coin"), ({"start_coin": "rounds"}, "start_coin"),
     ({"start_coin": ["game"]}, "start_coin")],
)
def test_bad_options_are_named(options: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        ludoteca.load_game("exactly", **options)


# --- the rulebook's numbers as options (RULES.md section 1, with other values) -----------------

@pytest.mark.parametrize(
    ("options", "named", "words"),
    [({"target": 52}, "target", "multiple of 5"), ({"target": 0}, "target", "5 to 850"),
     ({"target": 855}, "target", "5 to 850"), ({"target": "lots"}, "target", "whole number"),
     ({"euros_to_win": 0}, "euros_to_win", "1 to"), ({"players": 6, "euros_to_win": 4}, "euros_to_win", "15"),
     ({"players": 2, "euros_to_win": 8}, "euros_to_win", "15"), ({"cap": -5}, "cap", "0 to 850"),
     ({"die_question": 7}, "die_question", "0 to 6"),
     ({"die_zero": 0, "die_question": 0, "die_50": 0, "die_20": 0, "die_10": 0}, "die_5", "two different faces")],
)
def test_bad_rulebook_numbers_are_refused_with_the_reason(options: dict[str, Any], named: str, words: str) -> None:
    with pytest.raises(ValueError, match=named) as info:
        ludoteca.load_game("exactly", **options)
    assert words in str(info.value)


def test_most_euros_to_win_is_allowed_by_the_fifteen_tokens() -> None:
    # Material (seed): fifteen 1-euro tokens. Every player one short and two scoring on one move
    # must fit: 2 players x 6 + 2 = 14 tokens for 7 euros; 6 players x 2 + 2 = 14 for 3.
    assert ludoteca.load_game("exactly", players=2, euros_to_win=7).options["euros_to_win"] == 7
    assert ludoteca.load_game("exactly", players=6, euros_to_win=3).options["euros_to_win"] == 3


def test_target_50_a_pile_of_exactly_50_scores() -> None:
    # Scoring with target 50: "exactly 100 cents" becomes exactly 50; 100 no longer scores.
    state = load(position([coins(c20=2, c5=1), coins()], phase="move", roll=5, to_move=0), target=50)
    move(state, 5, "bank", 0)
    assert state.to_json()["euros"] == [1, 0]
    state = load(position([coins(1, 0, 2, 1), coins()], phase="move", roll=5, to_move=1), target=50)
    move(state, 5, "bank", 0)  # 100 cents: not the target
    assert state.to_json()["euros"] == [0, 0]


def test_euros_to_win_one_the_first_euro_wins() -> None:
    state = load(position([coins(1, 0, 2, 1), coins()], phase="move", roll=5, to_move=1), euros_to_win=1)
    move(state, 5, "bank", 0)
    assert state.is_terminal() and state.returns() == [1.0, 0.0]
    assert state.end_reason() == "three_euros"
    # with five euros to win, three do not end the game
    state = load(position([coins(1, 0, 2, 1), coins()], phase="move", roll=5, to_move=1, euros=[2, 0]),
                 euros_to_win=5)
    move(state, 5, "bank", 0)
    assert not state.is_terminal() and state.to_json()["euros"] == [3, 0]


def test_cap_100_closes_a_pile_of_105_and_leaves_100_open() -> None:
    # Cap with 100: "more than 150 cents" becomes more than 100.
    piles = [coins(c5=1), coins(1, 0, 0, 2), coins(0, 0, 0, 2)]  # 5, 105, 100
    state = load(position(piles, phase="move", roll=5, to_move=0), cap=100, target=200)
    dests = {a["to"] for a in legal_json(state)}
    assert 1 not in dests and 2 in dests
    # 850 (every coin): no pile is ever closed
    piles = [coins(c5=1), coins(1, 0, 0, 4), coins()]  # 205
    state = load(position(piles, phase="move", roll=5, to_move=0), cap=850)
    assert 1 in {a["to"] for a in legal_json(state)}


def test_the_die_faces_are_options_and_each_side_is_equally_likely() -> None:
    # The die (seed): six faces, 1/6 each. Without the 0 and with two "?", "?" comes 2 times in 6.
    game = ludoteca.load_game("exactly", players=2, die_zero=0, die_question=2)
    state = game.new_initial_state()
    outcomes = dict(state.chance_outcomes())
    assert FACE[0] not in outcomes and FACE[0] not in state.legal_actions()
    assert outcomes[FACE["?"]] == pytest.approx(2 / 6)
    assert outcomes[FACE[50]] == pytest.approx(1 / 6)
    assert sum(outcomes.values()) == pytest.approx(1.0)
    with pytest.raises(IllegalActionError):
        state.apply_json({"roll": 0})
    # a position whose die shows a face this die lacks is refused
    with pytest.raises(ValueError, match="no face"):
        load(position([coins(), coins()], phase="move", roll=50), die_50=0)


def test_records_keep_only_the_rulebook_numbers_a_designer_changed() -> None:
    game = ludoteca.load_game("exactly", players=3, target=50, die_zero=0)
    assert game.record_options() == {"players": 3, "start_coin": "round", "turn_limit": 1000, "target": 50,
                                     "die_zero": 0}
    again = ludoteca.load_game("exactly", **game.record_options())
    assert again.options == game.options


@pytest.mark.parametrize("players", range(2, 7))
def test_initial_position(players: int) -> None:
    # Set-up (seed): every player takes one 5-cent coin from the bank; then the roll-off.
    state = ludoteca.load_game("exactly", players=players).new_initial_state()
    data = state.to_json()
    assert data["bank"] == coins(10 - players, 10, 10, 10)
    assert data["piles"] == [coins(1)] * players
    assert data["phase"] == "start_roll" and data["roll"] is None and data["turn"] == 0
    assert data["euros"] == [0] * players and data["to_move"] == 0
    assert state.current_player() == CHANCE


def test_start_coin_false_starts_with_empty_piles() -> None:
    # Option start_coin=false: no 5-cent coin at the start of the game or of a round.
    game = ludoteca.load_game("exactly", players=3, start_coin=False)
    data = game.new_initial_state().to_json()
    assert data["bank"] == coins(10, 10, 10, 10)
    assert data["piles"] == [coins()] * 3
    state = load(position([coins(c20=2, c50=1), coins(), coins(c5=1)], phase="move", roll=10,
                          to_move=0), start_coin=False)
    move(state, 10, "bank", 0)  # 20+20+50+10 = 100: round ends, no new coins
    assert state.to_json()["piles"] == [coins()] * 3
    assert state.to_json()["bank"] == coins(10, 10, 10, 10)


@pytest.mark.parametrize(("given", "canonical"), [(True, "round"), ("round", "round"), ("game", "game"),
                                                  (False, "never"), ("never", "never"), ("true", "round"),
                                                  ("false", "never")])
def test_start_coin_values_and_their_canonical_form(given: Any, canonical: str) -> None:
    # RULES.md: start_coin is "round" (default, also written true), "game" or "never" (also written
    # false). The game's options (and so its records) hold the canonical word.
    game = ludoteca.load_game("exactly", players=2, start_coin=given)
    assert game.options["start_coin"] == canonical
    assert game.record_options()["start_coin"] == canonical
    assert ludoteca.load_game("exactly", **game.record_options()).options == game.options


def scoring_state(start_coin: Any) -> ExactlyState:
    """Seat 0 holds 20+20+50 and rolled 10: moving a 10 from the bank scores (a new round starts)."""
    return load(position([coins(c20=2, c50=1), coins(c5=1), coins(c5=1)], phase="move", roll=10, to_move=0),
                start_coin=start_coin)


@pytest.mark.parametrize("start_coin", ["round", True])
def test_start_coin_round_deals_a_coin_at_every_round(start_coin: Any) -> None:
    # Set-up (seed; default "round"): a 5-cent coin to each player at the start of the game and again
    # at the start of every round.
    start = ludoteca.load_game("exactly", players=3, start_coin=start_coin).new_initial_state().to_json()
    assert start["piles"] == [coins(1)] * 3 and start["bank"] == coins(7, 10, 10, 10)
    state = scoring_state(start_coin)
    move(state, 10, "bank", 0)
    data = state.to_json()
    assert data["euros"] == [1, 0, 0]
    assert data["piles"] == [coins(1)] * 3 and data["bank"] == coins(7, 10, 10, 10)


def test_start_coin_game_deals_a_coin_only_at_the_start_of_the_game() -> None:
    # RULES.md: "game" -- "only at the start of the game, the seed's most literal reading".
    start = ludoteca.load_game("exactly", players=3, start_coin="game").new_initial_state().to_json()
    assert start["piles"] == [coins(1)] * 3 and start["bank"] == coins(7, 10, 10, 10)
    state = scoring_state("game")
    move(state, 10, "bank", 0)
    data = state.to_json()
    assert data["euros"] == [1, 0, 0] and data["phase"] == "roll" and data["to_move"] == 1
    assert data["piles"] == [coins()] * 3 and data["bank"] == coins(10, 10, 10, 10)


@pytest.mark.parametrize("start_coin", ["never", False])
def test_start_coin_never_deals_no_coin(start_coin: Any) -> None:
    start = ludoteca.load_game("exactly", players=3, start_coin=start_coin).new_initial_state().to_json()
    assert start["piles"] == [coins()] * 3 and start["bank"] == coins(10, 10, 10, 10)
    state = scoring_state(start_coin)
    move(state, 10, "bank", 0)
    assert state.to_json()["piles"] == [coins()] * 3


# --- reading positions written by another program (RULES.md, Conventions) ----------------

def test_to_move_at_over_is_any_whole_number() -> None:
    # "accepts any well-typed value of a key whose value these rules do not fix: to_move ... at
    # over"; "It writes its own convention back" (a seat of this game).
    over = position([coins(c5=1), coins(c5=1), coins(c5=1)], phase="over", euros=[3, 1, 0], turn=30)
    for to_move in (0, 2, 7, -1):
        state = load(dict(over, to_move=to_move))
        assert state.is_terminal() and state.returns() == [1.0, 0.0, 0.0]
        assert state.to_json()["to_move"] == (to_move if 0 <= to_move < 3 else 0)
    with pytest.raises(ValueError, match="to_move"):
        load(dict(over, to_move="0"))  # not well-typed
    with pytest.raises(ValueError, match="to_move"):
        load(position([coins(c5=1)] * 3, to_move=3))  # phase roll: to_move names the roller


def test_to_move_during_a_roll_off_with_its_rolls_is_the_next_roller() -> None:
    # During the roll-off (a chance node) with its rolls given, to_move is not needed: any whole
    # number is read and the next seat to roll is written back.
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    state.apply_json({"roll": 5})
    data = state.to_json()
    assert data["to_move"] == 1
    for to_move in (0, 2, 9):
        read = ludoteca.load_game("exactly", players=3).state_from_json(dict(data, to_move=to_move))
        assert read.to_json() == data


# --- the roll-off ---------------------------------------------------------------------

def test_roll_off_highest_wins_by_ranking() -> None:
    # Who starts (seed): ranking ? > 50 > 20 > 10 > 5 > 0; rolls are chance nodes in seat order.
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    for seat, face in enumerate([0, 5, 10]):
        assert state.current_player() == CHANCE and state.to_json()["to_move"] == seat
        state.apply_json({"roll": face})
    data = state.to_json()
    assert (data["phase"], data["to_move"], data["turn"]) == ("roll", 2, 0)
    state = ludoteca.load_game("exactly", players=4).new_initial_state()
    for face in [50, "?", 20, 50]:
        state.apply_json({"roll": face})
    assert state.to_json()["to_move"] == 1 and state.to_json()["phase"] == "roll"


def test_roll_off_ties_re_roll_among_tied_seats() -> None:
    # Who starts (default): players tied for highest roll again, in seat order among themselves.
    state = ludoteca.load_game("exactly", players=4).new_initial_state()
    for face in [20, 50, 5, 50]:
        state.apply_json({"roll": face})
    data = state.to_json()
    assert data["phase"] == "start_roll" and data["to_move"] == 1
    assert data["rolloff"] == {"seats": [1, 3], "rolls": []}
    state.apply_json({"roll": "?"})
    assert state.to_json()["to_move"] == 3
    state.apply_json({"roll": "?"})  # tied again: 1 and 3 roll again
    assert state.to_json()["rolloff"] == {"seats": [1, 3], "rolls": []}
    state.apply_json({"roll": 0})
    state.apply_json({"roll": 5})
    data = state.to_json()
    assert (data["phase"], data["to_move"], data["turn"], data["rolloff"]) == ("roll", 3, 0, None)
    # The roll-off counts no turn and moves no coin.
    assert data["piles"] == [coins(1)] * 4


def test_start_roll_position_without_rolloff_key_is_a_fresh_roll_off() -> None:
    data = ludoteca.load_game("exactly", players=2).new_initial_state().to_json()
    del data["rolloff"]
    state = load(data)
    assert state.to_json()["rolloff"] == {"seats": [0, 1], "rolls": []}


def test_start_roll_position_with_only_the_required_keys_mid_roll_off() -> None:
    # RULES.md: "Keys listed are required; implementations may add keys ... so a position written
    # by one program can be read by another." The required keys do not hold the rolls already
    # made: the roll-off is read as the one among to_move and the seats after it.
    game = ludoteca.load_game("exactly", players=3)
    state = game.new_initial_state()
    state.apply_json({"roll": "?"})
    data = state.to_json()
    del data["rolloff"]
    rebuilt = game.state_from_json(data)
    assert rebuilt.to_json()["rolloff"] == {"seats": [1, 2], "rolls": []}
    assert {k: rebuilt.to_json()[k] for k in data} == data
    data["to_move"] = 2  # the last seat to roll: a one-seat roll-off, won by its roll
    rebuilt = game.state_from_json(data)
    assert game.state_from_json(rebuilt.to_json()).to_json() == rebuilt.to_json()
    rebuilt.apply_json({"roll": 0})
    assert (rebuilt.to_json()["phase"], rebuilt.to_json()["to_move"], rebuilt.to_json()["turn"]) == ("roll", 2, 0)


# --- a turn ---------------------------------------------------------------------------

def test_example_1_twelve_moves() -> None:
    # RULES.md Example 1 / seed cases (a)-(d): 3 players each holding one 20-cent coin, die 20:
    # a 20 moves from any of the 4 piles (bank, 0, 1, 2) to any other: 4 x 3 = 12 moves.
    state = load(position([coins(c20=1)] * 3, phase="move", roll=20, to_move=1))
    piles: list[str | int] = ["bank", 0, 1, 2]
    expected = [{"coin": 20, "from": f, "to": t} for f in piles for t in piles if f != t]
    got = legal_json(state)
    assert len(got) == 12
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, expected))


def test_move_changes_only_the_two_piles_and_passes_the_turn() -> None:
    # A turn (seed): one coin of the rolled value from one pile to another; clockwise order.
    state = load(position([coins(c20=1)] * 3, phase="move", roll=20, to_move=1, turn=4))
    move(state, 20, 0, 2)
    data = state.to_json()
    assert data["piles"] == [coins(), coins(c20=1), coins(c20=2)]
    assert (data["phase"], data["to_move"], data["turn"], data["roll"]) == ("roll", 2, 5, None)


def test_question_mark_allows_any_of_the_four_values() -> None:
    # `?` (seed): the same move with a coin of any of the four values, chosen by the player.
    state = load(position([coins(1, 1, 1, 1), coins()], phase="move", roll="?"))
    values = {a["coin"] for a in legal_json(state)}
    assert values == {5, 10, 20, 50}
    # every value: bank->0, bank->1, 0->bank, 0->1 (pile 1 is empty, so nothing from it)
    assert len(state.legal_actions()) == 4 * 4
    single = load(position([coins(1, 1, 1, 1), coins()], phase="move", roll=10))
    assert {a["coin"] for a in legal_json(single)} == {10}


def test_zero_roll_ends_the_turn_without_a_decision() -> None:
    # `0` (seed): "nothing happens; the turn passes". RULES.md lists the faces `roll` can hold
    # during `move` as ?, 50, 20, 10, 5, so a 0 is no decision node: the turn ends at once.
    state = load(position([coins(1), coins(1), coins(1)], to_move=2, turn=7))
    before = state.to_json()
    state.apply_json({"roll": 0})
    after = state.to_json()
    assert state.current_player() == CHANCE
    assert (after["phase"], after["to_move"], after["turn"]) == ("roll", 0, 8)
    assert after["piles"] == before["piles"] and after["bank"] == before["bank"]


def test_cap_more_than_150_blocks_exactly_150_is_open() -> None:
    # Cap (seed): no coin into a pile already holding more than 150 cents; 150 exactly is open.
    # Coins are multiples of 5, so the smallest total above 150 is 155.
    piles = [coins(c5=1), coins(1, 0, 0, 3), coins(0, 0, 0, 3)]  # 5, 155, 150
    state = load(position(piles, phase="move", roll=5, to_move=0))
    dests = {a["to"] for a in legal_json(state)}
    assert 1 not in dests
    assert 2 in dests and "bank" in dests and 0 in dests
    # the capped pile can still give its coins away
    assert {"coin": 5, "from": 1, "to": "bank"} in legal_json(state)
    with pytest.raises(IllegalActionError):
        move(state, 5, "bank", 1)


def test_cap_counts_blocked_turns() -> None:
    # counters()["cap_blocks"]: turns where the cap forbade a move that would otherwise be legal.
    piles = [coins(c5=1), coins(1, 0, 0, 3), coins()]  # seat 1 holds 155
    state = load(position(piles, to_move=0))
    state.apply_json({"roll": 5})
    assert state.counters()["cap_blocks"] == 1
    state.apply_json({"coin": 5, "from": "bank", "to": 2})
    state.apply_json({"roll": 0})  # seat 1: a 0 roll, no move at all
    state.apply_json({"roll": 5})  # seat 2 rolls 5: bank->1 blocked again
    assert state.counters()["cap_blocks"] == 2


def test_cap_applies_to_the_movers_own_pile() -> None:
    # Cap (seed): the rule names any player's pile, the mover's included.
    piles = [coins(1, 0, 0, 3), coins()]  # seat 0 holds 155
    state = load(position(piles, phase="move", roll=50, to_move=0))
    assert all(a["to"] != 0 for a in legal_json(state))


def test_pass_only_when_no_legal_move() -> None:
    # Pass (default): legal only when no move exists, and then it is a real action (convention).
    piles = [coins(c20=8), coins(c5=3, c10=10, c20=2)]  # 160 and 155: both closed
    state = load(position(piles, phase="move", roll=50, to_move=0, turn=3))
    assert legal_json(state) == [{"pass": True}]
    state.apply_json({"pass": True})
    data = state.to_json()
    assert (data["phase"], data["to_move"], data["turn"]) == ("roll", 1, 4)
    state = load(position(piles, phase="move", roll=5, to_move=0))
    assert {"pass": True} not in legal_json(state)
    assert {"coin": 5, "from": 1, "to": "bank"} in legal_json(state)


def test_no_change_making() -> None:
    # No change-making (seed): only whole coins of the rolled value move; a 20 cannot stand for 10s.
    state = load(position([coins(c20=1), coins()], phase="move", roll=10, to_move=0))
    assert all(a["coin"] == 10 and a["from"] == "bank" for a in legal_json(state))
    with pytest.raises(IllegalActionError):
        move(state, 20, 0, "bank")


# --- scoring and rounds ---------------------------------------------------------------

def test_scoring_exactly_100_ends_the_round() -> None:
    # Scoring (seed): exactly 100 cents takes a euro; the round ends, coins go back, each takes a
    # new 5-cent coin, and the player to the left of the mover starts the next round.
    piles = [coins(1, 0, 2, 1), coins(2), coins(c10=3), coins()]  # seat 0 at 95
    state = load(position(piles, phase="move", roll=5, to_move=2, turn=10))
    move(state, 5, "bank", 0)
    data = state.to_json()
    assert data["euros"] == [1, 0, 0, 0]
    assert data["piles"] == [coins(1)] * 4
    assert data["bank"] == coins(6, 10, 10, 10)
    assert (data["phase"], data["to_move"], data["turn"]) == ("roll", 3, 11)
    assert state.counters() == {"rounds": 1, "euros": 1, "question_rounds": 0, "cap_blocks": 0}


def test_going_over_100_does_not_score() -> None:
    # Scoring (seed): only the exact amount counts; 105 must wait to give a coin back.
    state = load(position([coins(1, 0, 2, 1), coins()], phase="move", roll=10, to_move=1))
    move(state, 10, "bank", 0)
    assert state.to_json()["euros"] == [0, 0]
    assert state.to_json()["piles"][0] == coins(1, 1, 2, 1)


def test_scoring_by_giving_a_coin_away() -> None:
    # Scoring (seed): reaching exactly 100 by losing a coin counts as well (105 -> 100).
    state = load(position([coins(1, 1, 2, 1), coins()], phase="move", roll="?", to_move=0))
    move(state, 5, 0, 1)
    assert state.to_json()["euros"] == [1, 0]
    assert state.counters()["question_rounds"] == 1


def test_two_players_score_on_one_move() -> None:
    # Scoring (default "several at once"): a move touches two piles; both at 100 score.
    piles = [coins(c10=1, c50=2), coins(c20=2, c50=1), coins()]  # 110 and 90
    state = load(position(piles, phase="move", roll=10, to_move=2))
    move(state, 10, 0, 1)
    data = state.to_json()
    assert data["euros"] == [1, 1, 0]
    assert data["to_move"] == 0 and data["phase"] == "roll"
    assert state.counters()["euros"] == 2 and state.counters()["rounds"] == 1


def test_three_euros_win() -> None:
    # End (seed): a player holding three euros wins; returns 1 for the winner.
    state = load(position([coins(1, 0, 2, 1), coins()], phase="move", roll=5, to_move=1,
                          euros=[2, 2]))
    move(state, 5, "bank", 0)
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert state.returns() == [1.0, 0.0]
    data = state.to_json()
    assert data["phase"] == "over" and data["euros"] == [3, 2]
    # At the end the position stays as the winning move left it (no new round).
    assert data["piles"][0] == coins(2, 0, 2, 1)
    assert state.legal_actions() == []


def test_shared_win_when_two_reach_three_on_one_move() -> None:
    # End (seed): two reaching three euros on the same move share the win.
    piles = [coins(c10=1, c50=2), coins(c20=2, c50=1), coins()]
    state = load(position(piles, phase="move", roll=10, to_move=2, euros=[2, 2, 2]))
    move(state, 10, 0, 1)
    assert state.returns() == [0.5, 0.5, 0.0]


def test_only_the_player_at_three_wins() -> None:
    piles = [coins(c10=1, c50=2), coins(c20=2, c50=1), coins()]
    state = load(position(piles, phase="move", roll=10, to_move=2, euros=[2, 1, 0]))
    move(state, 10, 0, 1)
    assert state.to_json()["euros"] == [3, 2, 0]
    assert state.returns() == [1.0, 0.0, 0.0]


def test_turn_limit_leaders_share() -> None:
    # turn_limit (convention): reaching it ends the game; the leaders by euros share the win.
    state = load(position([coins(1)] * 3, euros=[1, 1, 0], turn=8), turn_limit=9)
    state.apply_json({"roll": 0})
    assert state.is_terminal()
    assert state.returns() == [0.5, 0.5, 0.0]
    assert state.to_json()["turn"] == 9


def test_turn_limit_counts_turns_not_roll_offs() -> None:
    # `turn` counts completed player turns; the roll-off is excluded (convention).
    game = ludoteca.load_game("exactly", players=2, turn_limit=2)
    state = game.new_initial_state()
    for face in ["?", "?", 50, 20]:  # tie, then seat 0 wins
        state.apply_json({"roll": face})
    assert state.to_json()["turn"] == 0 and not state.is_terminal()
    state.apply_json({"roll": 0})
    assert state.to_json()["turn"] == 1 and state.to_json()["to_move"] == 1
    state.apply_json({"roll": 5})
    state.apply_json({"coin": 5, "from": "bank", "to": 1})
    assert state.is_terminal() and state.to_json()["turn"] == 2
    assert state.returns() == [0.5, 0.5]  # nobody scored: everyone leads


def test_returns_are_zero_before_the_end() -> None:
    state = load(position([coins(1)] * 2, euros=[2, 1]))
    assert state.returns() == [0.0, 0.0]


# --- actions: JSON and text -------------------------------------------------------------

def test_action_json_and_strings() -> None:
    state = load(position([coins(c20=1)] * 3, phase="move", roll=20))
    a = state.action_from_json({"coin": 20, "from": "bank", "to": 2})
    assert state.action_to_json(a) == {"coin": 20, "from": "bank", "to": 2}
    assert state.action_to_string(a) == "20 bank>2"
    assert state.action_from_string("20 bank>2") == a
    assert state.action_from_string('{"coin": 20, "from": "bank", "to": 2}') == a
    assert state.action_from_string("pass") == state.action_from_json({"pass": True})
    assert state.action_to_string(state.action_from_json({"roll": "?"})) == "roll ?"
    assert state.action_from_string("roll ?") == state.action_from_json({"roll": "?"})
    assert state.action_from_string("roll 0") == state.action_from_json({"roll": 0})
    # a roll is not a move: it is illegal where the player must move
    with pytest.raises(IllegalActionError, match="not legal"):
        state.apply_json({"roll": 20})


@pytest.mark.parametrize(
    "bad",
    [{}, {"roll": "x"}, {"roll": 7}, {"roll": True}, {"roll": "50"}, {"pass": False}, {"pass": 1},
     {"coin": 25, "from": "bank", "to": 0}, {"coin": 20, "from": "bank", "to": 3},
     {"coin": 20, "from": -1, "to": 0}, {"coin": 20, "from": "bank"},
     {"coin": 20, "from": "bank", "to": 0, "extra": 1}, {"coin": True, "from": "bank", "to": 0},
     {"roll": 5, "pass": True}, [1, 2], "pass"],
)
def test_malformed_action_json(bad: Any) -> None:
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    with pytest.raises(IllegalActionError):
        state.action_from_json(bad)


@pytest.mark.parametrize("bad", ["", "jump", "roll 7", "25 bank>1", "20 bank>9", "20 bank-1", "20 x>1"])
def test_malformed_action_strings(bad: str) -> None:
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    with pytest.raises(IllegalActionError):
        state.action_from_string(bad)


def test_action_to_json_rejects_non_actions() -> None:
    state = ludoteca.load_game("exactly", players=2).new_initial_state()
    for bad in (-1, 10_000, "5", None):
        with pytest.raises(ValueError):
            state.action_to_json(bad)  # type: ignore[arg-type]
    # 7 = a 5-cent coin from the bank to the bank: well-formed, never legal
    assert state.action_to_json(7) == {"coin": 5, "from": "bank", "to": "bank"}
    assert state.action_from_json({"coin": 5, "from": "bank", "to": "bank"}) == 7


# --- positions: bad input ---------------------------------------------------------------

def _good() -> dict[str, Any]:
    return position([coins(1, 0, 2, 1), coins(c10=2)], phase="move", roll=5, to_move=1, euros=[1, 2], turn=5)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: d.update(game="tohm"), "tohm"),
        (lambda d: d.update(players=3), "3 players"),
        (lambda d: d["bank"].update({"5": -1}), "negative"),
        (lambda d: d["piles"][0].update({"5": -1}), "negative"),
        (lambda d: d["bank"].update({"5": 8}), "conservation"),
        (lambda d: d["bank"].pop("20"), "'20'"),
        (lambda d: d["bank"].update({"25": 0}), "'25'"),
        (lambda d: d["piles"][0].update({"10": "2"}), "whole number"),
        (lambda d: d.update(piles=d["piles"][:1]), "one pile per player"),
        (lambda d: d.update(euros=[1]), "one count per player"),
        (lambda d: d.update(euros=[-1, 0]), "euros"),
        (lambda d: d.update(euros=[3, 0]), "over"),
        (lambda d: d.update(to_move=2), "to_move"),
        (lambda d: d.update(phase="dance"), "phase"),
        (lambda d: d.update(roll=0), "roll"),
        (lambda d: d.update(roll=25), "roll"),
        (lambda d: d.update(roll=None), "roll"),
        (lambda d: d.update(phase="roll"), "roll"),  # roll 5 outside move
        (lambda d: d.update(phase="over", roll=None), "over"),  # nobody at three, turn below the limit
        (lambda d: d.update(turn=-3), "turn"),
        (lambda d: d.update(turn=1000), "turn_limit"),
        (lambda d: d.update(phase="start_roll", roll=None), "start_roll"),
        (lambda d: d.update(rolloff={"seats": [0, 1], "rolls": []}), "rolloff"),
        (lambda d: d.pop("turn"), "turn"),
        (lambda d: d.pop("roll"), "roll"),
    ],
)
def test_malformed_positions_name_the_problem(edit: Any, named: str) -> None:
    game = ludoteca.load_game("exactly", players=2)
    game.state_from_json(_good())  # the unedited position is fine
    data = copy.deepcopy(_good())
    edit(data)
    with pytest.raises(ValueError, match=named):
        game.state_from_json(data)


@pytest.mark.parametrize(
    ("rolloff", "to_move", "named"),
    [({"seats": [], "rolls": []}, 0, "one or more"), ({"seats": [1, 0], "rolls": []}, 1, "increasing"),
     ({"seats": [0, 1], "rolls": ["?", 5]}, 0, "shorter"), ({"seats": [0, 1], "rolls": [7]}, 1, "die face"),
     ("x", 0, "rolloff")],
)
def test_malformed_roll_off_positions(rolloff: Any, to_move: int, named: str) -> None:
    game = ludoteca.load_game("exactly", players=2)
    data = game.new_initial_state().to_json()
    data.update(rolloff=rolloff, to_move=to_move)
    with pytest.raises(ValueError, match=named):
        game.state_from_json(data)


def test_render_shows_bank_piles_euros_turn_and_die() -> None:
    state = load(position([coins(1, 0, 2, 1), coins(c10=2)], phase="move", roll="?", to_move=1,
                          euros=[1, 2], turn=5))
    text = state.render()
    assert "bank" in text and "95c" in text and " 20c" in text
    assert "euros 2" in text and "to move" in text and "die: ?" in text and "move" in text


# --- properties -----------------------------------------------------------------------

def _check_conservation(data: dict[str, Any]) -> None:
    for key in ("5", "10", "20", "50"):
        assert data["bank"][key] + sum(p[key] for p in data["piles"]) == 10
    assert sum(data["euros"]) <= 15


@pytest.mark.parametrize("players", range(2, 7))
@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_playouts_end(players: int, seed: int) -> None:
    game = ludoteca.load_game("exactly", players=players)
    state = game.new_initial_state()
    random_playout(state, random.Random(seed))
    assert state.is_terminal()
    returns = state.returns()
    assert math.isclose(sum(returns), 1.0)
    euros = state.to_json()["euros"]
    assert all((r > 0) == (e == max(euros)) for r, e in zip(returns, euros, strict=True))
    counters = state.counters()
    assert counters["euros"] == sum(euros)
    assert counters["question_rounds"] <= counters["rounds"] <= counters["euros"]
    _check_conservation(state.to_json())


@pytest.mark.parametrize("players", range(2, 7))
@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_every_step_round_trips_conserves_and_clones(players: int, seed: int) -> None:
    game = ludoteca.load_game("exactly", players=players, turn_limit=150)
    rng = random.Random(seed)
    state = game.new_initial_state()
    record = Record.start(game)
    for step, (s, action) in enumerate(play_random(state, rng)):
        data = s.to_json()
        _check_conservation(data)
        rebuilt = game.state_from_json(json.loads(json.dumps(data)))
        assert rebuilt.to_json() == data
        assert rebuilt.legal_actions() == s.legal_actions()
        if s.is_chance_node():
            assert math.isclose(sum(p for _, p in s.chance_outcomes()), 1.0)
        if step % 5 == 0:
            clone = s.clone()
            clone.apply_action(action)
            assert s.to_json() == data  # the original is untouched
            rebuilt.apply_action(action)
            assert rebuilt.to_json() == clone.to_json()  # the rebuilt state plays on identically
        record.add(s, action)
    assert Record.loads(record.dumps()).replay().to_json() == state.to_json()


@pytest.mark.parametrize("players", range(2, 7))
@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_illegal_actions_raise_and_change_nothing(players: int, seed: int) -> None:
    game = ludoteca.load_game("exactly", players=players, turn_limit=60)
    rng = random.Random(seed)
    space = range(-2, game.num_distinct_actions() + 2)
    for s, _ in play_random(game.new_initial_state(), rng):
        legal = set(s.legal_actions())
        before = s.to_json()
        for a in rng.sample([a for a in space if a not in legal], 3):
            with pytest.raises(IllegalActionError):
                s.apply_action(a)
        assert s.to_json() == before
        assert set(s.legal_actions()) == legal


@pytest.mark.parametrize("players", range(2, 7))
def test_clone_keeps_counters_and_is_independent(players: int) -> None:
    game = ludoteca.load_game("exactly", players=players)
    state = game.new_initial_state()
    rng = random.Random(players)
    for _s, _a in play_random(state, rng, limit=300):
        pass
    clone = state.clone()
    assert clone.counters() == state.counters()
    random_playout(clone, rng)
    assert state.counters()["rounds"] <= clone.counters()["rounds"]
    assert game.state_from_json(state.to_json()).counters() == dict.fromkeys(state.counters(), 0)


# --- events (core/events.py; the kinds are listed in the module docstring) ------------------

def events(state: ExactlyState, action: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of one action, as JSON (every exactly event is public)."""
    out = state.apply_action(state.action_from_json(action))
    assert all(e.to is None for e in out)
    return [e.to_json() for e in out]


def roll(face: int | str, seat: int, rolloff: bool = False) -> dict[str, Any]:
    return {"kind": "chance", "outcome": {"roll": face}, "seat": seat, "face": face, "rolloff": rolloff}


def test_events_of_the_roll_off_say_whose_roll_the_ties_and_who_starts() -> None:
    # "Who starts": every player rolls once, ranking ? > 50 > ... ; the tied re-roll among themselves.
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    assert events(state, {"roll": "?"}) == [roll("?", 0, rolloff=True)]
    assert events(state, {"roll": 50}) == [roll(50, 1, rolloff=True)]
    assert events(state, {"roll": "?"}) == [roll("?", 2, rolloff=True),
                                            {"kind": "rolloff_tie", "seats": [0, 2], "face": "?"}]
    assert events(state, {"roll": 5}) == [roll(5, 0, rolloff=True)]
    assert events(state, {"roll": 10}) == [roll(10, 2, rolloff=True), {"kind": "starter", "seat": 2}]
    assert state.current_player() == CHANCE and state.to_json()["to_move"] == 2
    # the first turn's die: seat 2's roll, not part of the roll-off
    assert events(state, {"roll": 20}) == [roll(20, 2)]


def test_events_of_a_zero_and_of_a_coin_moved() -> None:
    state = load(position([coins(1), coins(1)], to_move=1, turn=4))
    assert events(state, {"roll": 0}) == [roll(0, 1)]  # "0: nothing happens; the turn passes"
    assert state.to_json()["to_move"] == 0
    assert events(state, {"roll": 20}) == [roll(20, 0)]
    assert events(state, {"coin": 20, "from": "bank", "to": 1}) == [
        {"kind": "move", "seat": 0, "action": {"coin": 20, "from": "bank", "to": 1}},
        {"kind": "coin_moved", "seat": 0, "coin": 20, "from": "bank", "to": 1},
    ]


def test_events_of_a_euro_the_round_reset_and_the_next_starter() -> None:
    # "Scoring a euro": the round ends, coins return to the bank, each player takes a new 5-cent
    # coin, and the next round starts with the player to the left of the one who made the move.
    state = load(position([coins(c5=1), coins(c20=2, c50=1), coins(c5=1)], phase="move", roll=10, to_move=1,
                          turn=7))
    assert events(state, {"coin": 10, "from": "bank", "to": 1})[1:] == [
        {"kind": "coin_moved", "seat": 1, "coin": 10, "from": "bank", "to": 1},
        {"kind": "euro", "seats": [1], "mover": 1, "euros": [0, 1, 0], "target": 100},
        {"kind": "new_round", "seat": 2},
        {"kind": "start_coins", "seats": [0, 1, 2], "coin": 5},
    ]
    data = state.to_json()
    assert data["piles"] == [coins(1)] * 3 and data["to_move"] == 2 and data["phase"] == "roll"


def test_events_of_two_euros_on_one_move_without_start_coins() -> None:
    # Seat 0 (90 cents) takes a 10 from seat 1 (110 cents): both hold exactly 100.
    state = load(position([coins(c20=2, c50=1), coins(c10=1, c50=2)], phase="move", roll=10, to_move=0),
                 start_coin="game")
    assert events(state, {"coin": 10, "from": 1, "to": 0})[2:] == [
        {"kind": "euro", "seats": [0, 1], "mover": 0, "euros": [1, 1], "target": 100},
        {"kind": "new_round", "seat": 1},  # start_coin "game": no coin at a new round
    ]


def test_events_of_the_winning_euro_end_the_game() -> None:
    # "a player holding three 1-euro tokens wins": no new round, the end and why.
    state = load(position([coins(c20=2, c50=1), coins(c5=1)], phase="move", roll="?", to_move=0, euros=[2, 1]))
    assert events(state, {"coin": 10, "from": "bank", "to": 0})[2:] == [
        {"kind": "euro", "seats": [0], "mover": 0, "euros": [3, 1], "target": 100},
        {"kind": "end", "reason": "three_euros", "returns": [1.0, 0.0], "winners": [0]},
    ]
    assert state.end_reason() == "three_euros" and state.scores() == [3.0, 1.0]


def test_events_of_a_pass_and_of_the_turn_limit() -> None:
    # A 5 when every 5-cent coin is in the bank and both piles hold more than 150 cents: pass.
    state = load(position([coins(c50=4), coins(c50=4)], turn=9), turn_limit=10)
    assert events(state, {"roll": 5}) == [roll(5, 0)]
    assert events(state, {"pass": True}) == [
        {"kind": "move", "seat": 0, "action": {"pass": True}},
        {"kind": "pass", "seat": 0},
        {"kind": "end", "reason": "turn_limit", "returns": [0.5, 0.5], "winners": [0, 1]},
    ]
    assert state.end_reason() == "turn_limit"


def test_end_reason_is_empty_before_the_end() -> None:
    assert ludoteca.load_game("exactly", players=2).new_initial_state().end_reason() == ""


def test_scores_are_euros() -> None:
    # "Score for turn_limit: 1-euro tokens held."
    state = load(position([coins(1), coins(1), coins(1)], euros=[2, 0, 1]))
    assert state.scores() == [2.0, 0.0, 1.0]
    assert ExactlyGame.score_name == "euros"


def test_counters_are_declared_and_count_rounds_euros_question_rounds_and_cap_blocks() -> None:
    declared = {c.name for c in ExactlyGame.counters}
    state = load(position([coins(c20=2, c50=1), coins(c10=1, c50=2), coins(c50=4)], to_move=0))
    assert set(state.counters()) == declared == {"rounds", "euros", "question_rounds", "cap_blocks"}
    for c in ExactlyGame.counters:
        assert c.kind in ("share_per_game", "share_per_event", "ratio_per_event", "mean_per_game")
        assert c.of is None or c.of == "turns" or c.of in declared
    # A "?": seat 2 (200 cents) is closed to any coin that could otherwise reach it (the cap blocks).
    events(state, {"roll": "?"})
    assert state.counters() == {"rounds": 0, "euros": 0, "question_rounds": 0, "cap_blocks": 1}
    events(state, {"coin": 10, "from": 1, "to": 0})  # two players score on one move, on a "?"
    assert state.counters() == {"rounds": 1, "euros": 2, "question_rounds": 1, "cap_blocks": 1}


@pytest.mark.parametrize("players", range(2, 7))
def test_events_tell_the_whole_game_and_the_fast_path_plays_it_alike(players: int) -> None:
    """Random games: apply_unchecked (no events) plays the same positions and counters as
    apply_action, and the events agree with the positions (whose roll, coins, euros, starters)."""
    rng = random.Random(players)
    checked = ludoteca.load_game("exactly", players=players).new_initial_state()
    fast = checked.clone()
    kinds: set[str] = set()
    euros = [0] * players
    while not checked.is_terminal():
        before = checked.to_json()
        action = random_action(checked, rng)
        out = [e.to_json() for e in checked.apply_action(action)]
        after = checked.to_json()
        kinds |= {e["kind"] for e in out}
        if out[0]["kind"] == "chance":
            assert out[0]["seat"] == before["to_move"] and out[0]["rolloff"] == (before["phase"] == "start_roll")
        for e in out:
            if e["kind"] == "coin_moved":
                assert e["seat"] == before["to_move"]
            elif e["kind"] == "euro":
                euros = [x + (s in e["seats"]) for s, x in enumerate(euros)]
                assert e["euros"] == euros == after["euros"] and e["mover"] == before["to_move"]
            elif e["kind"] == "new_round":
                assert e["seat"] == (before["to_move"] + 1) % players == after["to_move"]
            elif e["kind"] == "starter":
                assert e["seat"] == after["to_move"] and after["phase"] == "roll"
        fast.apply_unchecked(action)
        assert fast.to_json() == after
        assert fast.counters() == checked.counters()
    assert out[-1]["kind"] == "end" and out[-1]["reason"] == checked.end_reason() != ""
    assert {"chance", "move", "coin_moved", "starter", "end"} <= kinds


def test_events_are_json() -> None:
    state = ludoteca.load_game("exactly", players=3).new_initial_state()
    rng = random.Random(3)
    for _ in range(300):
        if state.is_terminal():
            break
        for e in state.apply_action(random_action(state, rng)):
            assert json.loads(json.dumps(e.to_json())) == e.to_json()


# --- positions: what the shared shape reader says ------------------------------------------

@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["piles"][1].update({"50": True}), "piles[1]['50']: expected a whole number, got true"),
        (lambda d: d.update(euros="1, 2"), "euros: expected a list, got '1, 2'"),
        (lambda d: d.update(phase=None), "phase: expected one of 'start_roll', 'roll', 'move', 'over', got null"),
        (lambda d: d.update(roll=[5]), "roll: expected a whole number or '?' or null, got a list ([5])"),
        (lambda d: d.update(game="tohm"), "game: expected 'exactly', got 'tohm'"),
        (lambda d: d.pop("bank"), "position is missing the key 'bank'"),
        (lambda d: d.update(rolloff={"seats": [0, "1"], "rolls": []}),
         "rolloff.seats[1]: expected a whole number, got '1'"),
        (lambda d: d.update(turn=-3), "turn must be at least 0, not -3"),
    ],
)
def test_malformed_positions_exact_messages(edit: Any, message: str) -> None:
    data = copy.deepcopy(_good())
    edit(data)
    with pytest.raises(ValueError) as info:
        ludoteca.load_game("exactly", players=2).state_from_json(data)
    assert str(info.value) == message


def test_extra_keys_in_a_position_are_read() -> None:
    # RULES.md: "Keys listed are required; implementations may add keys."
    state = ludoteca.load_game("exactly", players=2).state_from_json({**_good(), "note": [1, {"x": 2}]})
    assert state.to_json() == {**_good(), "rolloff": None}  # its own added key, not the reader's


def test_heuristic_looks_ahead_on_copies_and_leaves_the_state_alone() -> None:
    # The heuristic (games/exactly/heuristic.py) plays its candidates on fast copies of the state.
    from ludoteca.games.exactly import heuristic

    state = load(position([coins(c20=2, c50=1), coins(c5=1)], phase="move", roll=10, to_move=0))
    before = state.to_json()
    action = heuristic.choose(state, random.Random(0))
    assert state.to_json() == before
    assert state.action_to_json(action) == {"coin": 10, "from": "bank", "to": 0}  # reach exactly 100
