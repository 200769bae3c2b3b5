"""TRI: scenario tests (each names the rule it checks), property tests, bad input."""

from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludoteca import CHANCE, TERMINAL, IllegalActionError, Record, load_game
from ludoteca.core import events as ev
from ludoteca.core.chance import sample_chance
from ludoteca.core.game import Counter
from ludoteca.games.tri import Battle, TriGame, TriState

# --- helpers ---------------------------------------------------------------------------------


def position(players=2, size=4, owner=None, hands=None, alive=None, used=(), to_move=0, round=2,
             turn=10, phase="act", battle=None):
    return {
        "game": "tri", "players": players, "size": size, "owner": dict(owner or {}),
        "hands": hands if hands is not None else [[0, 2, 3, 4] for _ in range(players)],
        "alive": alive if alive is not None else [True] * players,
        "teleports_used": list(used), "to_move": to_move, "round": round, "turn": turn,
        "phase": phase, "battle": battle,
    }


def square(r, c, seat):
    return {f"{r},{c},{d}": seat for d in "NESW"}


def load(data, **opts) -> TriState:
    game = load_game("tri", players=data["players"], size=data["size"], **opts)
    state = game.state_from_json(data)
    assert state.to_json() == data  # exact round trip of every hand-written position
    return state


def play(state, *texts):
    for text in texts:
        state.apply_action(state.action_from_string(text))
    return state


def legal_strings(state):
    return [state.action_to_string(a) for a in state.legal_actions()]


def fill_all(size, seats):
    """Owner map of a full board: triangle i (in index order) belongs to seats[i]."""
    n = size
    keys = [f"{r},{c},{d}" for r in range(n) for c in range(n) for d in "NESW"]
    return {k: s for k, s in zip(keys, seats, strict=True) if s is not None}


def random_step(state, rng):
    if state.is_chance_node():
        return sample_chance(state, rng)
    legal = state.legal_actions()
    return legal[rng.randrange(len(legal))]


# --- options and geometry ----------------------------------------------------------------------


def test_options_defaults_and_errors():
    # Board (default): size 4 / 5 / 6 for 2 / 3 / 4 players; ties default "defender"; turn_limit 1000
    assert [load_game("tri", players=p).options["size"] for p in (2, 3, 4)] == [4, 5, 6]
    g = load_game("tri", players=2)
    assert g.options["ties"] == "defender" and g.options["turn_limit"] == 1000
    for bad, word in [({"size": 1}, "size"), ({"size": 13}, "size"), ({"ties": "draw"}, "ties"),
                      ({"turn_limit": 0}, "turn_limit"), ({"colour": 1}, "colour"), ({"players": 5}, "players")]:
        with pytest.raises(ValueError, match=word):
            load_game("tri", **bad)
    assert isinstance(g, TriGame)
    # fixed action space: place/expand/attack/void per triangle, teleport per (square, triangle), 4 cards, pass
    # 16 ids for chance outcomes, then place/expand/attack/void per triangle, teleports, cards, pass.
    assert g.num_distinct_actions() == 16 + 4 * 64 + 16 * 64 + 4 + 1


@pytest.mark.parametrize("size", [2, 3, 4, 7])
def test_torus_adjacency(size):
    # Board (default): three edge-neighbours; N-E, N-W, S-E, S-W inside a square;
    # N(r,c)-S(r-1,c) and E(r,c)-W(r,c+1) modulo size.
    g = load_game("tri", players=2, size=size)
    idx = g.tri_index
    n = size

    def nb(key):
        return {g.tri_key[u] for u in g.NB[idx[key]]}

    for r in range(n):
        for c in range(n):
            assert nb(f"{r},{c},N") == {f"{r},{c},E", f"{r},{c},W", f"{(r - 1) % n},{c},S"}
            assert nb(f"{r},{c},E") == {f"{r},{c},N", f"{r},{c},S", f"{r},{(c + 1) % n},W"}
    # corner triangles wrap around the torus
    assert f"{n - 1},0,S" in nb("0,0,N") and f"0,{n - 1},E" in nb("0,0,W")
    assert f"{n - 1},0,W" in nb(f"{n - 1},{n - 1},E")
    for t, ns in enumerate(g.NB):  # symmetric, three distinct, never itself
        assert len(set(ns)) == 3 and t not in ns
        assert all(t in g.NB[u] for u in ns)


# --- placement round -----------------------------------------------------------------------------


def test_placement_not_adjacent_to_any_unit():
    # First round (seed): each player places on an empty triangle not adjacent to any placed unit.
    state = load_game("tri", players=3, size=4).new_initial_state()
    assert state.current_player() == 0 and state.to_json()["phase"] == "place"
    assert len(state.legal_actions()) == 64
    play(state, "place 0,0,N")
    legal = set(legal_strings(state))
    assert len(legal) == 64 - 4
    for blocked in ("place 0,0,N", "place 0,0,E", "place 0,0,W", "place 3,0,S"):
        assert blocked not in legal
    play(state, "place 0,1,W")  # W(0,1) touches E(0,0), which is empty: allowed
    assert "place 0,0,E" not in legal_strings(state) and "place 0,1,N" not in legal_strings(state)
    play(state, "place 2,2,S")
    d = state.to_json()
    assert d["round"] == 2 and d["turn"] == 3 and d["phase"] == "act" and d["to_move"] == 0


# --- battles -----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3])
def test_battle_dice_probabilities(k):
    # Battles (seed): the attacker keeps the highest of k dice, k = adjacent attacker units;
    # P(v) = (v^k - (v-1)^k) / 6^k. The defender rolls one die.
    # W(1,2) touches N(1,2), S(1,2) and E(1,1).
    attackers = ["1,2,N", "1,2,S", "1,1,E"][:k]
    owner = {"1,2,W": 1, **{a: 0 for a in attackers}}
    state = load(position(owner=owner))
    play(state, "atk 1,2,W")
    assert state.current_player() == CHANCE
    b = state.to_json()["battle"]
    assert b["dice"] == k and b["step"] == "attacker_roll" and b["attacker"] == 0 and b["defender"] == 1
    out = {state.action_to_json(a)["roll"]: p for a, p in state.chance_outcomes()}
    for v in range(1, 7):
        assert out[v] == pytest.approx(float(Fraction(v ** k - (v - 1) ** k, 6 ** k)), abs=1e-15)
    if k == 2:
        assert out[6] == pytest.approx(11 / 36) and out[1] == pytest.approx(1 / 36)
    if k == 3:
        assert out[6] == pytest.approx(91 / 216)
    assert sum(out.values()) == pytest.approx(1.0)
    play(state, "roll 3")
    assert state.to_json()["battle"]["step"] == "defender_roll"
    assert all(p == pytest.approx(1 / 6) for _, p in state.chance_outcomes())


def test_battle_won_by_attacker_and_cards_discarded():
    # Battles (seed): strictly greater total wins the target; both cards discarded at the reveal.
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "1,2,N": 1}))
    play(state, "atk 1,2,W", "roll 4", "roll 5")
    assert state.current_player() == 0 and state.to_move == 0
    play(state, "card 3")
    assert state.current_player() == 1 and state.to_json()["hands"][0] == [0, 2, 3, 4]  # kept until reveal
    play(state, "card 2")  # 4 + 3 = 7 against 5 + 2 = 7: the defender holds (default ties)
    d = state.to_json()
    assert d["battle"]["step"] == "void"
    assert d["hands"] == [[0, 2, 4], [0, 3, 4]]
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "1,2,N": 1}))
    play(state, "atk 1,2,W", "roll 4", "roll 5", "card 4", "card 2")  # 8 > 7
    d = state.to_json()
    assert d["owner"]["1,2,W"] == 0 and d["battle"] is None and d["to_move"] == 1 and d["turn"] == 11
    assert d["hands"] == [[0, 2, 3], [0, 3, 4]]
    c = state.counters()
    assert c["battles"] == 1 and c["battles_k1"] == 1 and c["attacker_wins_k1"] == 1


@pytest.mark.parametrize(("ties", "attacker_wins"), [("defender", False), ("attacker", True)])
def test_ties_option(ties, attacker_wins):
    # Battles (default): equal totals -> the defender holds; option ties="attacker" flips it.
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "1,2,N": 1}), ties=ties)
    play(state, "atk 1,2,W", "roll 3", "roll 5", "card 4", "card 2")  # 7 vs 7
    d = state.to_json()
    if attacker_wins:
        assert d["owner"]["1,2,W"] == 0 and d["phase"] == "act"
    else:
        assert d["owner"]["1,2,W"] == 1 and d["battle"]["step"] == "void"


def test_lost_attack_voids_unit_chosen_by_defender_and_reopens_square():
    # Closed square (seed): cannot be attacked, attacks as usual, a lost battle can void one.
    # Battles (seed): on a loss the defender chooses one attacker unit adjacent to the target.
    owner = {**square(1, 1, 0), "1,2,W": 1, "1,2,N": 0, "0,0,N": 1}
    state = load(position(owner=owner, to_move=1))
    assert "atk 1,1,E" not in legal_strings(state)        # closed square cannot be attacked
    assert "atk 1,2,N" in legal_strings(state)
    state = load(position(owner=owner, to_move=0))
    assert "atk 1,2,W" in legal_strings(state)            # ... but its triangles attack as usual
    play(state, "atk 1,2,W", "roll 1", "roll 6", "card 0", "card 0")
    assert state.current_player() == 1 and state.to_move == 0
    assert legal_strings(state) == ["void 1,1,E", "void 1,2,N"]
    assert state.is_closed(1 * 4 + 1)
    play(state, "void 1,1,E")
    d = state.to_json()
    assert "1,1,E" not in d["owner"] and not state.is_closed(5) and d["to_move"] == 1
    assert "exp 1,1,E" in legal_strings(state)


def test_void_is_a_decision_even_with_one_choice():
    # Convention: a forced choice is still an action (a lone void).
    state = load(position(owner={"1,1,E": 0, "1,1,N": 0, "1,2,W": 1}))
    play(state, "atk 1,2,W", "roll 1", "roll 6", "card 0", "card 0")
    assert legal_strings(state) == ["void 1,1,E"]


def test_cards_empty_hand_and_card_not_in_hand():
    # Battles (seed): a player with an empty hand plays {"card": 0}; a card not in hand is illegal.
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "3,3,N": 1}, hands=[[2, 2], []]))
    play(state, "atk 1,2,W", "roll 2", "roll 2")
    assert legal_strings(state) == ["card 2"]
    before = state.to_json()
    with pytest.raises(IllegalActionError):
        state.apply_json({"card": 3})
    with pytest.raises(IllegalActionError):
        state.apply_json({"card": 0})
    assert state.to_json() == before
    play(state, "card 2")
    assert legal_strings(state) == ["card 0"]
    play(state, "card 0")  # 2 + 2 > 2 + 0
    d = state.to_json()
    assert d["owner"]["1,2,W"] == 0 and d["hands"] == [[2], []]


def test_secret_card_and_roll_hidden_until_reveal():
    # Cards (seed): only the card chosen for the battle in progress is secret (rolls too, seed).
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1}))
    play(state, "atk 1,2,W", "roll 6", "roll 2", "card 4")
    full = state.to_json()["battle"]
    assert full["attacker_card"] == 4 and full["attacker_roll"] == 6
    for seat in (1, None):
        b = state.observation(seat)["battle"]
        assert b["attacker_card"] is None and b["attacker_roll"] is None
        assert "attacker_card" in b["hidden"]
    assert state.observation(None)["battle"]["defender_roll"] is None
    assert state.observation(1)["battle"]["defender_roll"] == 2
    assert state.observation(0)["battle"]["attacker_card"] == 4
    assert state.observation(0)["battle"]["defender_roll"] is None
    assert state.observation(1)["hands"] == [[0, 2, 3, 4], [0, 2, 3, 4]]  # hands public, card still held
    with pytest.raises(ValueError):
        state.observation(5)
    # 3 players: a bystander sees neither secret
    data = position(players=3, size=4, owner={"1,1,E": 0, "1,2,W": 1, "3,3,S": 2})
    s3 = load(data)
    play(s3, "atk 1,2,W", "roll 6", "roll 2")
    b = s3.observation(2)["battle"]
    assert b["attacker_roll"] is None and b["defender_roll"] is None


def test_reveal_makes_everything_visible():
    state = load(position(owner={"1,1,E": 0, "1,1,N": 0, "1,2,W": 1}))
    play(state, "atk 1,2,W", "roll 1", "roll 6", "card 2", "card 3")
    for seat in (0, 1, None):
        b = state.observation(seat)["battle"]
        assert (b["attacker_roll"], b["defender_roll"], b["attacker_card"], b["defender_card"]) == (1, 6, 2, 3)
        assert "hidden" not in b


# --- turns ---------------------------------------------------------------------------------------


def test_pass_only_when_nothing_else():
    # A turn (seed, must): pass only when no expand, attack or teleport exists.
    # P0's only unit N(1,1) touches E(1,1), W(1,1) (P1, attackable) and S(0,1) (P1's closed square).
    owner = {"1,1,N": 0, **square(0, 1, 1), "1,1,E": 1, "1,1,W": 1, "1,1,S": 1, "1,2,W": 1, "1,0,E": 1}
    state = load(position(owner=owner))
    assert legal_strings(state) == ["atk 1,1,E", "atk 1,1,W"]
    owner2 = {**square(1, 1, 0), **square(0, 1, 1), **square(2, 1, 1), **square(1, 0, 1), **square(1, 2, 1)}
    state = load(position(owner=owner2, to_move=0, used=["1,1"]))
    assert legal_strings(state) == ["pass"]
    play(state, "pass")
    assert state.counters()["passes"] == 1 and state.to_move == 1


def test_teleport_once_per_square_position():
    # Teleport (seed "one teleport per square"; once per square position per game is our default).
    owner = {**square(1, 1, 0), "3,3,S": 1}
    state = load(position(owner=owner))
    tps = [s for s in legal_strings(state) if s.startswith("tp")]
    assert len(tps) == 64 - 5 and "tp 1,1>0,0,N" in tps
    play(state, "tp 1,1>3,3,N")
    d = state.to_json()
    assert d["teleports_used"] == ["1,1"] and d["owner"]["3,3,N"] == 0 and state.counters()["teleports"] == 1
    play(state, "exp 3,3,E")
    assert not any(s.startswith("tp") for s in legal_strings(state))
    # reopening and closing again does not grant a new teleport, not even to another player
    d2 = position(owner={**square(1, 1, 1), "0,0,N": 0}, used=["1,1"], to_move=1)
    assert not any(s.startswith("tp") for s in legal_strings(load(d2)))
    d3 = position(owner={**square(1, 1, 1), "0,0,N": 0}, to_move=1)
    assert any(s.startswith("tp") for s in legal_strings(load(d3)))


def test_rounds_turns_and_card_income_after_every_third_round():
    # Order (default) + Card income (seed): the placement round is round 1; income after rounds 3, 6, ...
    state = load_game("tri", players=2).new_initial_state()
    seen = []
    while len(seen) < 2:
        if state.to_json()["phase"] == "income_roll":
            d = state.to_json()
            seen.append((d["round"], d["turn"], d["to_move"]))
            hands = d["hands"]
            assert [f for f in (state.action_to_json(a)["income"] for a, _ in state.chance_outcomes())] == [
                1, 2, 3, 4, 5, 6]
            play(state, "income 5" if len(seen) == 1 else "income 6")
            after = state.to_json()
            gain = 3 if len(seen) == 1 else 4
            assert after["hands"] == [sorted([*h, gain]) for h in hands]
            assert after["round"] == d["round"] + 1 and after["phase"] == "act"
            continue
        if state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        else:
            state.apply_action(state.legal_actions()[0])
    assert seen == [(3, 6, 0), (6, 12, 0)]


def test_income_face_values():
    # Card income (seed): 1-3 -> +2, 4-5 -> +3, 6 -> +4, for every player still in the game.
    for face, card in [(1, 2), (3, 2), (4, 3), (5, 3), (6, 4)]:
        data = position(players=3, owner={"0,0,N": 1, "2,2,N": 2}, alive=[False, True, True],
                        round=3, to_move=2)
        state = load(data)
        play(state, "exp 2,2,E")
        d = state.to_json()
        assert d["phase"] == "income_roll" and d["round"] == 3 and d["to_move"] == 1  # seat 0 is out
        play(state, f"income {face}")
        assert state.to_json()["hands"] == [[0, 2, 3, 4], sorted([0, 2, 3, 4, card]), sorted([0, 2, 3, 4, card])]


# --- the rulebook's numbers and switches as options (RULES.md section 2, other values) -------------


def test_rulebook_options_default_to_the_seed_and_stay_out_of_records():
    g = load_game("tri", players=3)
    assert g.start_hand == (1, 1, 1, 1) and g.income_every == 3 and g.most_dice == 3
    assert [g.options[f"income_{f}"] for f in range(1, 7)] == [2, 2, 2, 3, 3, 4]
    assert g.teleports and g.elimination_cards and g.rulebook_changes() == []
    assert set(g.record_options()) == {"players", "size", "ties", "turn_limit"}
    changed = load_game("tri", players=3, income_every=2, start_4=0)
    assert changed.record_options()["income_every"] == 2 and changed.record_options()["start_4"] == 0
    assert load_game("tri", **changed.record_options()).options == changed.options


def test_cards_each_player_starts_with():
    # Cards (seed "everyone starts with one of each"): with start_0=0 and start_4=2, +2 +3 +4 +4.
    state = load_game("tri", players=2, start_0=0, start_4=2).new_initial_state()
    assert state.to_json()["hands"] == [[2, 3, 4, 4], [2, 3, 4, 4]]


def test_income_every_two_rounds_and_never():
    # Card income with income_every=2: the die is rolled after round 2 (never after round 2 by default).
    state = load(position(owner={"0,0,N": 0, "2,2,N": 1}, round=2, to_move=1), income_every=2)
    play(state, "exp 2,2,E")
    assert state.to_json()["phase"] == "income_roll"
    # income_every=0: no income roll after round 3
    state = load(position(owner={"0,0,N": 0, "2,2,N": 1}, round=3, to_move=1), income_every=0)
    play(state, "exp 2,2,E")
    d = state.to_json()
    assert d["phase"] == "act" and d["round"] == 4


def test_income_die_mapping():
    # Card income with income_6=0 and income_1=4: a 6 gives +0, a 1 gives +4.
    for face, card in [(6, 0), (1, 4), (4, 3)]:
        state = load(position(owner={"0,0,N": 0, "2,2,N": 1}, round=3, to_move=1), income_6=0, income_1=4)
        play(state, "exp 2,2,E", f"income {face}")
        assert state.to_json()["hands"] == [sorted([0, 2, 3, 4, card])] * 2


def test_no_cards_at_elimination_when_switched_off():
    seats = [2] * 3 + [1] * 5 + [0] * 7 + [None]
    state = load(position(players=3, size=2, owner=fill_all(2, seats), to_move=0), elimination_cards=False)
    play(state, "exp 1,1,W")
    d = state.to_json()
    assert d["alive"] == [True, True, False] and d["hands"] == [[0, 2, 3, 4]] * 3


def test_most_dice_caps_the_attackers_dice():
    # Battles with most_dice=1: three units around the target still roll one die, 1/6 per face.
    owner = {"1,2,W": 1, "1,2,N": 0, "1,2,S": 0, "1,1,E": 0}
    state = load(position(owner=owner), most_dice=1)
    play(state, "atk 1,2,W")
    assert state.to_json()["battle"]["dice"] == 1
    assert all(p == pytest.approx(1 / 6) for _, p in state.chance_outcomes())
    assert load(state.to_json(), most_dice=1).to_json() == state.to_json()
    with pytest.raises(ValueError, match="most_dice"):
        load_game("tri", players=2, size=4).state_from_json(state.to_json())  # 3 dice by default


def test_no_teleports_when_switched_off():
    # the position of such a table says it: "teleports": false (for the boards to draw no teleport)
    state = load({**position(owner={**square(1, 1, 0), "3,3,S": 1}), "teleports": False}, teleports=False)
    assert not any(s.startswith("tp") for s in legal_strings(state))


@pytest.mark.parametrize(("options", "named", "words"), [
    ({"income_1": 1}, "income_1", "card value"), ({"income_6": 5}, "income_6", "0 to 4"),
    ({"most_dice": 4}, "most_dice", "1 to 3"), ({"start_2": 10}, "start_2", "0 to 9"),
    ({"income_every": -1}, "income_every", "0 to 50"), ({"teleports": "maybe"}, "teleports", "true or false")])
def test_bad_rulebook_values_are_refused_with_the_reason(options, named, words):
    with pytest.raises(ValueError, match=named) as info:
        load_game("tri", players=2, **options)
    assert words in str(info.value)


def test_no_income_after_round_two():
    state = load(position(owner={"0,0,N": 0, "2,2,N": 1}, round=2, to_move=1))
    play(state, "exp 2,2,E")
    d = state.to_json()
    assert d["phase"] == "act" and d["round"] == 3 and d["to_move"] == 0


# --- eliminations and end --------------------------------------------------------------------


def test_elimination_when_board_full_with_more_than_two_players():
    # Eliminations (seed): board full and >2 players -> fewest units out, triangles emptied;
    # Card income (seed): after the first elimination every remaining player gains +2 and +3.
    seats = [2] * 3 + [1] * 5 + [0] * 7 + [None]   # size 2: 16 triangles, the last (1,1,W) empty
    owner = fill_all(2, seats)
    state = load(position(players=3, size=2, owner=owner, to_move=0))
    assert "exp 1,1,W" in legal_strings(state)
    play(state, "exp 1,1,W")
    d = state.to_json()
    assert d["alive"] == [True, True, False] and 2 not in d["owner"].values()
    assert d["hands"] == [[0, 2, 2, 3, 3, 4], [0, 2, 2, 3, 3, 4], [0, 2, 3, 4]]
    assert d["phase"] == "act" and d["to_move"] == 1 and state.counters()["eliminations"] == 1
    assert sum(1 for _ in d["owner"]) == 16 - 3


def test_elimination_tie_lowest_card_total_is_out():
    seats = [2] * 4 + [1] * 4 + [0] * 7 + [None]
    state = load(position(players=3, size=2, owner=fill_all(2, seats), hands=[[0], [4], [2, 3]]))
    play(state, "exp 1,1,W")
    assert state.to_json()["alive"] == [True, False, True]


def test_elimination_full_tie_goes_to_chance_node():
    seats = [2] * 4 + [1] * 4 + [0] * 7 + [None]
    state = load(position(players=3, size=2, owner=fill_all(2, seats), hands=[[0], [2, 3], [0, 2, 3]]))
    play(state, "exp 1,1,W")
    d = state.to_json()
    assert d["phase"] == "tiebreak" and state.current_player() == CHANCE and d["turn"] == 11
    assert load(d).to_json() == d
    outs = [(state.action_to_json(a), p) for a, p in state.chance_outcomes()]
    assert outs == [({"out": 1}, 0.5), ({"out": 2}, 0.5)]
    play(state, "out 1")
    d = state.to_json()
    assert d["alive"] == [True, False, True] and d["phase"] == "act" and d["to_move"] == 2


def test_second_elimination_income():
    # Card income (seed): after the second elimination two +2 and one +4.
    seats = [2] * 4 + [1] * 5 + [0] * 6 + [None]
    state = load(position(players=4, size=2, owner=fill_all(2, seats), alive=[True, True, True, False],
                          hands=[[], [], [], []]))
    play(state, "exp 1,1,W")
    d = state.to_json()
    assert d["alive"] == [True, True, False, False]
    assert d["hands"] == [[2, 2, 4], [2, 2, 4], [], []]


def test_end_with_two_players_and_full_board():
    # End (seed): no empty triangle and two players -> over; most units wins.
    seats = [1] * 7 + [0] * 8 + [None]
    state = load(position(size=2, owner=fill_all(2, seats)))
    play(state, "exp 1,1,W")
    assert state.is_terminal() and state.current_player() == TERMINAL
    assert state.returns() == [1.0, 0.0] and state.legal_actions() == []
    seats = [1] * 8 + [0] * 7 + [None]
    state = load(position(size=2, owner=fill_all(2, seats)))
    play(state, "exp 1,1,W")
    assert state.returns() == [0.5, 0.5]  # 8 all: ties share
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action(0)


def test_player_without_units_is_out():
    # Eliminations (default): a player with no unit left after the first round is out.
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "2,2,N": 1}))
    play(state, "atk 1,2,W", "roll 1", "roll 6", "card 0", "card 0", "void 1,1,E")
    assert state.is_terminal() and state.returns() == [0.0, 1.0]
    # 3 players: the defender loses its last unit; the others gain +2 and +3
    state = load(position(players=3, owner={"1,1,E": 0, "1,2,W": 1, "3,3,N": 2}))
    play(state, "atk 1,2,W", "roll 6", "roll 1", "card 0", "card 0")
    d = state.to_json()
    assert d["alive"] == [True, False, True] and d["to_move"] == 2
    assert d["hands"] == [[2, 2, 3, 3, 4], [2, 3, 4], [0, 2, 2, 3, 3, 4]]


def test_turn_limit():
    # Conventions: reaching turn_limit ends the game; leaders by units share.
    state = load_game("tri", players=2, turn_limit=3).new_initial_state()
    play(state, "place 0,0,N", "place 2,2,N")
    assert state.to_json()["turn"] == 2 and not state.is_terminal()
    play(state, "exp 0,0,E")
    assert state.is_terminal() and state.to_json()["turn"] == 3 and state.returns() == [1.0, 0.0]
    state = load_game("tri", players=3, turn_limit=2).new_initial_state()
    play(state, "place 0,0,N", "place 2,2,N")
    assert state.is_terminal() and state.returns() == [0.5, 0.5, 0.0]


# --- actions, notation, JSON -------------------------------------------------------------------


def test_action_json_and_strings():
    state = load(position(owner={**square(1, 1, 0), "1,2,W": 1}))
    for a in state.legal_actions():
        j = state.action_to_json(a)
        assert state.action_from_json(j) == a
        assert state.action_from_string(state.action_to_string(a)) == a
        assert state.action_from_string(json.dumps(j)) == a
    assert state.action_to_json(state.action_from_string("tp 1,1>3,1,W")) == {
        "teleport": {"square": [1, 1], "to": [3, 1, "W"]}}
    assert state.action_to_json(state.action_from_string("exp 1,2,E")) == {"expand": [1, 2, "E"]}
    assert state.action_to_string(state.action_from_json({"attack": [1, 2, "W"]})) == "atk 1,2,W"
    assert state.action_to_json(state.action_from_string("pass")) == {"pass": True}
    play(state, "atk 1,2,W")
    assert state.action_to_json(state.action_from_string("roll 5")) == {"roll": 5}
    assert state.action_to_string(state.action_from_json({"roll": 2})) == "roll 2"


@pytest.mark.parametrize("bad", [
    {}, {"place": [0, 0]}, {"place": [0, 0, "X"]}, {"place": [4, 0, "N"]}, {"place": [0, -1, "N"]},
    {"place": [True, 0, "N"]}, {"expand": "0,0,N"}, {"card": 1}, {"card": True}, {"card": "2"},
    {"pass": False}, {"teleport": {"square": [0, 0]}}, {"teleport": {"square": [9, 0], "to": [0, 0, "N"]}},
    {"roll": 9}, {"fly": [0, 0, "N"]}, {"place": [0, 0, "N"], "pass": True}, [1, 2],
])
def test_malformed_actions(bad):
    state = load(position(owner={"0,0,N": 0, "2,2,N": 1}))
    with pytest.raises(IllegalActionError):
        state.action_from_json(bad)


@pytest.mark.parametrize("text", ["", "jump 1,2,N", "place 1,2", "card x", "tp 1,1,3,1,W", "pass now", "[1]",
                                  "{bad json"])
def test_malformed_strings(text):
    state = load(position(owner={"0,0,N": 0, "2,2,N": 1}))
    with pytest.raises(IllegalActionError):
        state.action_from_string(text)


def test_chance_json_at_chance_nodes_only():
    # RULES.md: "action_from_json rejects only ill-formed actions; apply_action rejects any
    # action that is not legal in the position": a player's action parses at a chance node
    # and is refused when applied.
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1}))
    play(state, "atk 1,2,W")
    before = state.to_json()
    with pytest.raises(IllegalActionError):
        state.apply_json({"expand": [0, 0, "N"]})
    assert state.to_json() == before
    for bad in ({"roll": 0}, {"roll": 7}, {"out": 2}, {"income": True}):
        with pytest.raises(IllegalActionError):
            state.action_from_json(bad)
    with pytest.raises(IllegalActionError):  # an income face is not a battle roll
        state.apply_json({"income": 3})


BAD_POSITIONS = [
    ({"game": "exactly"}, "game"),
    ({"players": 3}, "players"),
    ({"size": 5}, "size"),
    ({"owner": {"9,0,N": 0}}, "owner"),
    ({"owner": {"0,0,Q": 0}}, "owner"),
    ({"owner": {"0,0,N": 7}}, "owner"),
    ({"owner": []}, "owner"),
    ({"hands": [[0, 1], [0]]}, "hands"),
    ({"hands": [[0]]}, "hands"),
    ({"alive": [True]}, "alive"),
    ({"alive": [False, False]}, "alive"),
    ({"teleports_used": ["0,0,N"]}, "teleports_used"),
    ({"teleports_used": ["0,0", "0,0"]}, "teleports_used"),
    ({"to_move": 2}, "to_move"),
    ({"round": 0}, "round"),
    ({"round": 1}, "round"),
    ({"turn": -1}, "turn"),
    ({"turn": 1000}, "turn limit"),
    ({"phase": "move"}, "phase"),
    ({"phase": "income_roll"}, "income"),
    ({"battle": {"attacker": 0}}, "battle"),
    ({"phase": "battle"}, "battle"),
    ({"phase": "tiebreak"}, "tiebreak"),
    ({"phase": "place", "round": 1}, "placement"),
    ({"owner": {"0,0,N": 0}}, "no unit"),
    ({"alive": [True, False]}, "out of the game"),
]


@pytest.mark.parametrize(("change", "word"), BAD_POSITIONS)
def test_bad_positions(change, word):
    data = position(owner={"0,0,N": 0, "2,2,N": 1})
    data.update(change)
    with pytest.raises(ValueError, match=word):
        load_game("tri", players=2).state_from_json(data)


def test_bad_battle_positions():
    base = position(owner={"1,1,E": 0, "1,2,W": 1}, phase="battle")
    good = {"attacker": 0, "defender": 1, "target": "1,2,W", "dice": 1, "step": "defender_card",
            "attacker_roll": 3, "defender_roll": 4, "attacker_card": 2, "defender_card": None}
    load({**base, "battle": good})
    g = load_game("tri", players=2)
    for change, word in [({"dice": 2}, "dice"), ({"target": "1,1,E"}, "target"), ({"attacker": 1}, "attacker"),
                         ({"step": "reveal"}, "step"), ({"attacker_roll": 7}, "attacker_roll"),
                         ({"defender_card": 3}, "defender_card"), ({"attacker_card": 5}, "attacker_card"),
                         ({"step": "void", "defender_card": 0}, "failed")]:
        with pytest.raises(ValueError, match=word):
            g.state_from_json({**base, "battle": {**good, **change}})
    with pytest.raises(ValueError, match="hand"):
        g.state_from_json({**base, "hands": [[0, 3], [0]], "battle": good})


def test_render_shows_board_hands_and_battle():
    state = load(position(owner={**square(1, 1, 0), "1,2,W": 1}))
    play(state, "atk 1,2,W", "roll 2")
    text = state.render()
    assert "#" in text and "P0" in text and "P1" in text and "battle" in text and "round 2" in text
    assert "cards [0 2 3 4]" in text


# --- properties --------------------------------------------------------------------------------

GAMES = st.tuples(st.integers(2, 4), st.integers(2, 4), st.sampled_from(["defender", "attacker"]))


@settings(max_examples=30, deadline=None)
@given(GAMES, st.integers(0, 2 ** 32))
def test_random_playouts_end_and_conserve(spec, seed):
    players, size, ties = spec
    game = load_game("tri", players=players, size=size, ties=ties)
    rng = random.Random(seed)
    state = game.new_initial_state()
    T = 4 * size * size
    steps = 0
    while not state.is_terminal():
        d = state.to_json()
        owned = d["owner"]
        assert len(owned) + state.empty == T  # conservation
        assert sum(state.units()) == len(owned)
        assert all(d["alive"][s] for s in owned.values())
        if state.is_chance_node():
            assert sum(p for _, p in state.chance_outcomes()) == pytest.approx(1.0)
            assert [a for a, _ in state.chance_outcomes()] == state.legal_actions()
            assert all(0 <= a < game.max_chance_outcomes() for a in state.legal_actions())
        else:
            legal = state.legal_actions()
            assert legal == sorted(set(legal)) and legal
            assert all(0 <= a < game.num_distinct_actions() for a in legal)
        state.apply_action(random_step(state, rng))
        steps += 1
        assert steps < 20000
    r = state.returns()
    assert sum(r) == pytest.approx(1.0) and max(r) > 0


def _ends_turn(state, action) -> bool:
    """Whether ``action`` completes the mover's turn (Conventions: ``turn`` counts player turns)."""
    if state.is_chance_node():
        return False
    key, _ = next(iter(state.action_to_json(action).items()))
    if key in ("place", "expand", "teleport", "pass", "void"):
        return True
    if key == "card" and state.to_json()["battle"]["step"] == "defender_card":
        after = state.clone()
        after.apply_action(action)
        return after.to_json()["battle"] is None  # the attacker won at the reveal
    return False


@pytest.mark.parametrize("players", [2, 3, 4])
def test_default_games_turn_and_round_counters(players):
    # Conventions: turn counts completed player turns; Order: rounds in seat order, income after 3, 6, ...
    game = load_game("tri", players=players)
    rng = random.Random(players)
    state = game.new_initial_state()
    turns = 0
    while not state.is_terminal():
        a = random_step(state, rng)
        before = state.to_json()
        turns += _ends_turn(state, a)
        state.apply_action(a)
        d = state.to_json()
        assert d["turn"] == turns
        assert d["round"] in (before["round"], before["round"] + 1)
        if d["phase"] == "income_roll":
            assert d["round"] % 3 == 0 and d["to_move"] == d["alive"].index(True)
    assert state.to_json()["turn"] <= 1000


@settings(max_examples=25, deadline=None)
@given(GAMES, st.integers(0, 2 ** 32))
def test_json_round_trip_clone_and_illegal(spec, seed):
    players, size, ties = spec
    game = load_game("tri", players=players, size=size, ties=ties)
    rng = random.Random(seed)
    state = game.new_initial_state()
    for _ in range(250):
        if state.is_terminal():
            break
        d = state.to_json()
        rebuilt = game.state_from_json(json.loads(json.dumps(d)))
        assert rebuilt.to_json() == d
        assert rebuilt.legal_actions() == state.legal_actions()
        assert rebuilt.current_player() == state.current_player()
        assert rebuilt.chance_outcomes() == state.chance_outcomes()
        # illegal actions raise and change nothing
        legal = set(state.legal_actions())
        bad = next(a for a in (rng.randrange(game.num_distinct_actions()) for _ in range(50)) if a not in legal)
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)
        assert state.to_json() == d
        # clone independence
        twin = state.clone()
        a = random_step(state, rng)
        twin.apply_action(a)
        assert state.to_json() == d
        state.apply_action(a)
        rebuilt.apply_action(a)
        assert state.to_json() == twin.to_json() == rebuilt.to_json()


@settings(max_examples=20, deadline=None)
@given(GAMES, st.integers(0, 2 ** 32))
def test_records_replay(spec, seed):
    players, size, ties = spec
    game = load_game("tri", players=players, size=size, ties=ties)
    rng = random.Random(seed)
    state = game.new_initial_state()
    record = Record.start(game)
    while not state.is_terminal() and len(record.actions) < 600:
        a = random_step(state, rng)
        record.add(state, a)
        state.apply_action(a)
    replayed = Record.loads(record.dumps()).replay()
    assert replayed.to_json() == state.to_json()
    assert replayed.counters() == state.counters()


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2 ** 32), st.sampled_from(
    ["owner", "hands", "alive", "teleports_used", "to_move", "round", "turn", "phase", "battle", "size"]),
    st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.text(max_size=6),
              st.lists(st.integers(-1, 5), max_size=5), st.dictionaries(st.text(max_size=6), st.integers(-1, 4))))
def test_corrupted_positions_raise_value_error(seed, key, junk):
    game = load_game("tri", players=3, size=3)
    rng = random.Random(seed)
    state = game.new_initial_state()
    for _ in range(rng.randrange(120)):
        if state.is_terminal():
            break
        state.apply_action(random_step(state, rng))
    data = state.to_json()
    data[key] = junk
    try:
        rebuilt = game.state_from_json(data)
    except ValueError:
        return
    # hands are written sorted; to_move at the income roll is not fixed by the rules and is
    # written back as ours (RULES.md Conventions, "Reading a position")
    assert rebuilt.to_json()[key] == junk or key == "hands" or (key == "to_move" and data["phase"] == "income_roll")


def test_counters_copied_by_clone():
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "0,0,N": 0}))
    play(state, "exp 0,0,E")
    twin = state.clone()
    assert twin.counters() == state.counters() and twin.counters()["expands"] == 1
    play(twin, "exp 2,2,N" if "exp 2,2,N" in legal_strings(twin) else legal_strings(twin)[0])
    assert state.counters()["expands"] == 1
    assert set(state.counters()) == {
        "battles", "battles_k1", "battles_k2", "battles_k3", "attacker_wins_k1", "attacker_wins_k2",
        "attacker_wins_k3", "squares_closed", "teleports", "eliminations", "expands", "passes"}


def test_squares_closed_counter():
    state = load(position(owner={"1,1,N": 0, "1,1,E": 0, "1,1,S": 0, "3,3,N": 1}))
    play(state, "exp 1,1,W")
    assert state.counters()["squares_closed"] == 1 and state.is_closed(5)


# --- reading positions (RULES.md Conventions, "Reading a position") ---------------------------


def test_income_roll_reads_any_to_move_and_writes_its_own():
    # Conventions: a reader accepts any well-typed to_move at a chance node and writes its own
    # convention back. Card income: "After every third round the starting player rolls a die";
    # ours: to_move is the first seat still in the game (seat 0 starts).
    game = load_game("tri", players=3, size=4)
    owner = {"0,0,N": 0, "2,2,N": 1, "3,3,S": 2}
    for seat in (0, 1, 2):
        state = game.state_from_json(position(players=3, owner=owner, to_move=seat, round=3, phase="income_roll"))
        assert state.to_json()["to_move"] == 0 and state.current_player() == CHANCE
        play(state, "income 6")  # 6 -> +4 for everyone
        d = state.to_json()
        assert (d["phase"], d["round"], d["to_move"]) == ("act", 4, 0)
        assert d["hands"] == [[0, 2, 3, 4, 4]] * 3
    # seat 0 out: the starting player is seat 1 (the first still in), whatever to_move says
    owner = {"2,2,N": 1, "3,3,S": 2}
    state = game.state_from_json(position(players=3, owner=owner, alive=[False, True, True], to_move=0,
                                          round=6, phase="income_roll"))
    assert state.to_json()["to_move"] == 1
    play(state, "income 1")
    assert state.to_json()["to_move"] == 1 and state.current_player() == 1
    # ill-typed values are still refused
    for bad, word in [("0", "to_move"), (3, "to_move"), (-1, "to_move"), (True, "to_move"), (None, "to_move")]:
        with pytest.raises(ValueError, match=word):
            game.state_from_json(position(players=3, owner=owner, alive=[False, True, True], to_move=bad,
                                          round=6, phase="income_roll"))


TIE_OWNER = fill_all(2, [0] * 6 + [1] * 5 + [2] * 5)  # a full size-2 board: seats 1 and 2 tied weakest


@pytest.mark.parametrize(("to_move", "out", "next_seat", "next_round"), [
    (0, 1, 2, 4), (0, 2, 1, 4), (1, 1, 2, 4), (1, 2, 0, 5), (2, 1, 0, 5), (2, 2, 0, 5)])
def test_tiebreak_reads_any_to_move(to_move, out, next_seat, next_round):
    # Conventions: to_move at a chance node is not fixed by the rules. Ours at a tiebreak: the
    # seat whose turn filled the board; play goes on with the next seat still in the game after
    # it, and "a round ends when the highest-numbered seat still in the game has played".
    data = position(players=3, size=2, owner=TIE_OWNER, to_move=to_move, round=4, turn=20, phase="tiebreak")
    state = load(data)  # written back as read
    assert sorted(a - 12 for a in state.legal_actions()) == [1, 2]
    play(state, f"out {out}")
    d = state.to_json()
    assert d["alive"] == [True, out != 1, out != 2]
    assert (d["phase"], d["to_move"], d["round"], d["turn"]) == ("act", next_seat, next_round, 20)


def test_tiebreak_with_to_move_a_seat_out_of_the_game():
    # 4 players, seat 3 already out: to_move 3 is read like any other seat (play goes on after it:
    # the round is over, seat 0 opens the next one).
    seats = [0] * 6 + [1] * 5 + [2] * 5
    data = position(players=4, size=2, owner=fill_all(2, seats), alive=[True, True, True, False],
                    hands=[[0, 2, 3, 4]] * 3 + [[]], to_move=3, round=7, turn=30, phase="tiebreak")
    state = load(data)
    play(state, "out 2")
    d = state.to_json()
    assert (d["phase"], d["to_move"], d["round"]) == ("act", 0, 8)


def test_over_reads_any_to_move():
    # Conventions: any well-typed to_move at over, written back as read.
    full = fill_all(2, [0] * 9 + [1] * 7)  # "no triangle is empty and only two players remain"
    for seat in (0, 1):
        state = load(position(size=2, owner=full, to_move=seat, phase="over"))
        assert state.is_terminal() and state.returns() == [1.0, 0.0]
    # one player remains ("or when one player remains"); to_move may be a seat that is out
    state = load(position(players=3, owner={"0,0,N": 1}, alive=[False, True, False], to_move=2, phase="over",
                          hands=[[], [0], []]))
    assert state.returns() == [0.0, 1.0, 0.0]


def test_battle_to_move_is_still_the_attacker():
    # During a battle to_move is fixed by RULES.md ("to_move stays the attacker"), rolls included.
    battle = {"attacker": 0, "defender": 1, "target": "1,2,W", "dice": 1, "step": "attacker_roll",
              "attacker_roll": None, "defender_roll": None, "attacker_card": None, "defender_card": None}
    data = position(owner={"1,1,E": 0, "1,2,W": 1}, phase="battle", battle=battle)
    load(data)
    with pytest.raises(ValueError, match="attacker"):
        load_game("tri", players=2).state_from_json({**data, "to_move": 1})


def test_over_refused_unless_the_game_has_ended():
    # two players alive, 61 empty triangles, turn 3, phase "over" was accepted.
    # "The game ends when no triangle is empty and only two players remain, or when one player
    # remains"; reaching turn_limit ends it too (Conventions).
    game = load_game("tri", players=2)
    data = position(owner={"0,0,N": 0, "2,2,N": 1, "2,2,E": 1}, turn=3, phase="over")
    with pytest.raises(ValueError, match="has not ended"):
        game.state_from_json(data)
    # the same position at the turn limit is a finished game: 2 units beat 1
    state = load(data, turn_limit=3)
    assert state.is_terminal() and state.returns() == [0.0, 1.0]
    with pytest.raises(ValueError, match="beyond the turn limit"):
        load_game("tri", players=2, turn_limit=2).state_from_json(data)
    # a full board with three players left is not an end (the weakest goes out first)
    with pytest.raises(ValueError, match="has not ended"):
        load_game("tri", players=3, size=2).state_from_json(
            position(players=3, size=2, owner=fill_all(2, [0] * 6 + [1] * 5 + [2] * 5), phase="over"))
    # after the first round a player still in the game has units
    with pytest.raises(ValueError, match="no unit"):
        load_game("tri", players=3, size=2).state_from_json(
            position(players=3, size=2, owner=fill_all(2, [0] * 8 + [1] * 8), phase="over"))
    # a game ended by the turn limit in the placement round
    state = load(position(players=3, owner={"0,0,N": 0, "2,2,N": 1}, round=1, turn=2, to_move=1, phase="over"),
                 turn_limit=2)
    assert state.returns() == [0.5, 0.5, 0.0]
    with pytest.raises(ValueError, match="placement round"):
        load_game("tri", players=3, size=4, turn_limit=2).state_from_json(
            position(players=3, owner={"0,0,N": 0, "0,0,E": 0}, round=1, turn=2, phase="over"))


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("teleport", ["claim", "move"])
def test_every_position_of_whole_games_reads_back(players, teleport):
    # Conventions: "Every position an engine writes, finished games included, is one that engine
    # reads back." Whole random games on small boards, ended every way (full board, last player
    # standing, turn limit), every position read back with the same legal actions.
    rng = random.Random(players * 10 + len(teleport))
    ends = {"limit": 0, "full": 0, "one": 0}
    game_size = {2: 4, 3: 5, 4: 6}[players]  # Board (default)
    for g_i in range(30):
        size = (2, 3, 2, game_size)[g_i % 4]
        limit = (8, 40, 1000, 2)[(g_i // 2) % 4]  # 2: the game ends in the placement round
        if size == game_size:
            limit = min(limit, 120)  # default boards: keep random games short
        game = load_game("tri", players=players, size=size, turn_limit=limit,
                         teleport=teleport, ties=("defender", "attacker")[g_i % 2])
        state = game.new_initial_state()
        while True:
            d = state.to_json()
            rebuilt = game.state_from_json(json.loads(json.dumps(d)))
            assert rebuilt.to_json() == d
            assert rebuilt.legal_actions() == state.legal_actions()
            assert rebuilt.current_player() == state.current_player()
            if state.is_terminal():
                break
            state.apply_action(random_step(state, rng))
        assert rebuilt.returns() == state.returns()
        if d["turn"] >= limit:
            ends["limit"] += 1
        elif sum(d["alive"]) == 1:
            ends["one"] += 1
        else:
            ends["full"] += 1
    assert ends["limit"] and (ends["full"] or ends["one"])


# --- option teleport ("claim" | "move") -------------------------------------------------------


def test_teleport_option_default_values_and_action_space():
    # RULES.md TRI: Option `teleport`: "claim" (default) or "move"; anything else -> ValueError naming it.
    assert load_game("tri", players=2).options["teleport"] == "claim"
    assert load_game("tri", players=2, teleport="move").options["teleport"] == "move"
    for bad in ("jump", "", None, True, "MOVE"):
        with pytest.raises(ValueError, match="teleport"):
            load_game("tri", players=2, teleport=bad)
    # size 4: T = 64 triangles, S = 16 squares. "claim" keeps its action space (and every int);
    # "move" has one teleport per (square, side that leaves, target): 4 * 16 * 64.
    assert load_game("tri", players=2, teleport="claim").num_distinct_actions() == 16 + 4 * 64 + 16 * 64 + 4 + 1
    assert load_game("tri", players=2, teleport="move").num_distinct_actions() == 16 + 4 * 64 + 4 * 16 * 64 + 4 + 1
    claim = load(position(owner={**square(1, 1, 0), "3,3,N": 1})).action_from_json(
        {"teleport": {"square": [1, 1], "to": [3, 3, "E"]}})
    assert claim == 16 + 4 * 64 + 5 * 64 + (3 * 4 + 3) * 4 + 1  # 16 + 4T + s*T + t, as before the option


def test_teleport_option_in_records_only_when_not_the_default():
    # records and golden playthroughs written before the option existed stay unchanged
    assert "teleport" not in load_game("tri", players=2).record_options()
    assert load_game("tri", players=2, teleport="move").record_options()["teleport"] == "move"
    game = load_game("tri", players=2, size=2, teleport="move")
    rng = random.Random(5)
    state = game.new_initial_state()
    record = Record.start(game)
    while not state.is_terminal():
        a = random_step(state, rng)
        record.add(state, a)
        state.apply_action(a)
    replayed = Record.loads(record.dumps()).replay()
    assert replayed.to_json() == state.to_json() and replayed.game.options["teleport"] == "move"


def move_state(owner=None, **kw) -> TriState:
    return load(position(owner=owner if owner is not None else {**square(1, 1, 0), "3,3,N": 1}, **kw),
                teleport="move")


def test_teleport_move_unit_leaves_the_chosen_side_and_the_square_opens():
    # teleport "move": "one of the square's four triangles, chosen by the player, becomes empty
    # and its unit appears on the target, so the square opens"
    state = move_state()
    play(state, "tp 1,1,E>3,3,E")
    d = state.to_json()
    assert d["owner"] == {"1,1,N": 0, "1,1,S": 0, "1,1,W": 0, "3,3,N": 1, "3,3,E": 0}
    assert d["teleports_used"] == ["1,1"] and d["to_move"] == 1 and d["turn"] == 11
    assert state.units() == [4, 1] and not state.is_closed(5)
    assert state.counters()["teleports"] == 1


def test_teleport_move_every_side_and_empty_target():
    # the four sides of the closed square, times every empty triangle (not the square's own:
    # they are not empty); nothing else changes hands
    state = move_state()
    tps = [s for s in legal_strings(state) if s.startswith("tp")]
    assert len(tps) == 4 * (64 - 5)
    assert {s.split(">")[0] for s in tps} == {"tp 1,1,N", "tp 1,1,E", "tp 1,1,S", "tp 1,1,W"}
    assert not any(">1,1," in s or ">3,3,N" in s for s in tps)
    before = state.to_json()
    with pytest.raises(IllegalActionError):  # well-formed, not legal: the target is not empty
        state.apply_json({"teleport": {"square": [1, 1], "to": [1, 1, "N"], "from": "E"}})
    assert state.to_json() == before


def test_teleport_move_opened_square_can_be_attacked_and_entered():
    # "Closed square ... Its triangles cannot be attacked": once the unit has left, they can,
    # and the emptied triangle can be claimed by a neighbour.
    owner = {**square(1, 1, 0), "1,2,W": 1, "0,1,S": 1}
    state = move_state(owner, to_move=1)
    assert not any(s.startswith("atk") for s in legal_strings(state))  # the square is closed
    play(state, "exp 1,2,N", "tp 1,1,N>3,3,S")
    moves = legal_strings(state)
    assert "atk 1,1,E" in moves and "exp 1,1,N" in moves


def test_teleport_move_once_per_square_position():
    # "each square position grants this once per game", with "move" too: closing the square
    # again does not give a second teleport
    state = move_state({**square(1, 1, 0), "3,3,N": 1})
    play(state, "tp 1,1,N>3,0,S", "exp 3,3,E", "exp 1,1,N")
    assert state.is_closed(5) and state.to_json()["to_move"] == 1
    play(state, "exp 3,3,S")
    assert not any(s.startswith("tp") for s in legal_strings(state))
    assert state.counters()["squares_closed"] == 1  # closed again by the expand (read from JSON at 0)


def test_teleport_move_keeps_the_units_so_nobody_is_out():
    # A player whose only units are a closed square moves one: still four units, still in; the
    # board's empty count does not change, so a teleport never fills the board.
    state = move_state({**square(0, 0, 0), "2,2,N": 1, "2,2,E": 1}, players=2)
    empty = state.empty
    play(state, "tp 0,0,S>3,3,W")
    assert state.units() == [4, 2] and state.to_json()["alive"] == [True, True] and state.empty == empty


def test_teleport_move_json_and_text():
    state = move_state()
    a = state.action_from_json({"teleport": {"square": [1, 1], "to": [3, 1, "W"], "from": "S"}})
    assert state.action_to_json(a) == {"teleport": {"square": [1, 1], "to": [3, 1, "W"], "from": "S"}}
    assert state.action_to_string(a) == "tp 1,1,S>3,1,W"
    assert state.action_from_string("tp 1,1,s>3,1,w") == a
    assert state.action_from_string(json.dumps(state.action_to_json(a))) == a
    for aa in state.legal_actions():
        j = state.action_to_json(aa)
        assert state.action_from_json(json.loads(json.dumps(j))) == aa
        assert state.action_from_string(state.action_to_string(aa)) == aa
    for bad, word in [({"square": [1, 1], "to": [3, 1, "W"]}, "from"),
                      ({"square": [1, 1], "to": [3, 1, "W"], "from": "X"}, "side"),
                      ({"square": [1, 1], "to": [3, 1, "W"], "from": 0}, "side"),
                      ({"square": [1, 1], "to": [3, 1, "W"], "from": "N", "extra": 1}, "teleport")]:
        with pytest.raises(IllegalActionError, match=word):
            state.action_from_json({"teleport": bad})
    for text in ("tp 1,1>3,1,W", "tp 1,1,N,E>3,1,W", "tp 1,1,Q>3,1,W"):
        with pytest.raises(IllegalActionError):
            state.action_from_string(text)
    # under "claim" a teleport has no "from"
    claim = load(position(owner={**square(1, 1, 0), "3,3,N": 1}))
    with pytest.raises(IllegalActionError, match="only used with the option"):
        claim.action_from_json({"teleport": {"square": [1, 1], "to": [3, 1, "W"], "from": "S"}})
    with pytest.raises(IllegalActionError):
        claim.action_from_string("tp 1,1,S>3,1,W")


@pytest.mark.parametrize("spec", ["heuristic", "mcts:iterations=12:cap=4", "random"])
def test_agents_play_teleport_move_games_to_the_end(spec):
    from ludoteca.agents import make_agent

    # a forced teleport: every neighbour of seat 0's closed square lies in a closed square of seat 1
    owner = {**square(1, 1, 0), **square(0, 1, 1), **square(2, 1, 1), **square(1, 0, 1), **square(1, 2, 1)}
    state = move_state(owner)
    agent = make_agent(spec, seed=3, game="tri")
    a = agent.step(state)
    assert a in state.legal_actions() and "from" in state.action_to_json(a)["teleport"]
    # whole games, two and three players
    for players, seed in ((2, 1), (3, 2)):
        game = load_game("tri", players=players, size=3, teleport="move", turn_limit=200)
        agents = [make_agent(spec, seed=seed + k, game="tri") for k in range(players)]
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                a = sample_chance(state, rng)
            else:
                a = agents[state.current_player()].step(state)
                assert a in state.legal_actions()
            state.apply_action(a)
        assert sum(state.returns()) == pytest.approx(1.0)


def test_random_teleport_move_games_conserve_units():
    # with "move" a teleport changes no count: units and empty triangles are conserved by it
    rng = random.Random(11)
    teleports = 0
    for _ in range(10):
        game = load_game("tri", players=2, size=3, teleport="move")
        state = game.new_initial_state()
        while not state.is_terminal():
            a = random_step(state, rng)
            is_tp = not state.is_chance_node() and "teleport" in state.action_to_json(a)
            units, empty, p = sum(state.units()), state.empty, state.current_player()
            state.apply_action(a)
            if is_tp:
                teleports += 1
                assert sum(state.units()) == units and state.empty == empty and state.to_json()["alive"][p]
        assert sum(state.returns()) == pytest.approx(1.0)
    assert teleports > 0


@pytest.mark.parametrize("teleport", ["claim", "move"])
def test_heuristic_bulk_teleport_scoring_agrees_with_scoring_each_action(teleport):
    # the MCTS rollout policy and move ranking score teleports in bulk (one score per target and
    # per square side); they must pick exactly what scoring every legal action one by one picks
    from ludoteca.games.tri import heuristic as h

    rng = random.Random(7)
    checked = 0
    for seed in range(12):
        game = load_game("tri", players=2 + seed % 2, size=3 + seed % 2, teleport=teleport)
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.phase == 1:  # act
                legal = state.legal_actions()
                p = state.current_player()
                naive = max(legal, key=lambda a: h._quick(state, p, a))
                assert h.best_quick(state, p, legal) == naive
                ranked = sorted(legal, key=lambda a: -h._quick(state, p, a))
                assert h.candidates(state, 8) == (ranked[:8] if len(legal) > 8 else legal)
                checked += any(game.TELEPORT <= a < game.CARD for a in legal)
            state.apply_action(random_step(state, rng))
    assert checked > 20


# --- events, the typed battle, worlds, labels, scores, counters ----------------------


def act(state, text):
    """Play one action from its text; its events as ``to_json()`` dicts."""
    return [e.to_json() for e in state.apply_action(state.action_from_string(text))]


def act_events(state, text):
    return state.apply_action(state.action_from_string(text))


def test_battle_events_per_seat_defender_never_sees_the_attackers_secrets():
    # Cards (RULES): "only the card chosen for the battle in progress is secret"; Battles 2: each
    # picks knowing only their own roll, the attacker's card hidden from the defender; 3: both
    # are revealed. Three players: seat 2 is a bystander.
    state = load(position(players=3, owner={"1,1,E": 0, "1,2,N": 0, "1,2,W": 1, "3,3,S": 2}))
    out = act(state, "atk 1,2,W")
    assert out == [{"kind": "move", "seat": 0, "action": {"attack": [1, 2, "W"]}},
                   {"kind": "attack", "attacker": 0, "defender": 1, "target": [1, 2, "W"], "dice": 2}]
    (roll,) = act_events(state, "roll 5")
    assert roll.kind == "chance" and roll.to == frozenset({0})
    assert roll.view(0) == {"kind": "chance", "outcome": {"roll": 5}, "seat": 0}
    for viewer in (1, 2, None):  # "player 0 rolled", no face
        assert roll.view(viewer) == {"kind": "chance", "seat": 0, "secret": True}
    (droll,) = act_events(state, "roll 2")
    assert droll.to == frozenset({1}) and droll.view(1)["outcome"] == {"roll": 2}
    assert droll.view(0) == {"kind": "chance", "seat": 1, "secret": True}
    (card,) = act_events(state, "card 0")
    assert card.kind == "move" and card.to == frozenset({0})
    assert card.view(0) == {"kind": "move", "seat": 0, "action": {"card": 0}}
    for viewer in (1, 2, None):  # "player 0 chose a card"
        assert card.view(viewer) == {"kind": "move", "seat": 0, "secret": True}
    events = act_events(state, "card 4")  # 5 + 0 = 5 against 2 + 4 = 6: the defender holds
    assert [e.kind for e in events] == ["move", "battle"]
    assert all(not e.secret for e in events)  # the defender's card completes the battle: public
    assert events[1].view(2) == {
        "kind": "battle", "attacker": 0, "defender": 1, "target": [1, 2, "W"], "dice": 2,
        "attacker_roll": 5, "defender_roll": 2, "attacker_card": 0, "defender_card": 4,
        "attacker_total": 5, "defender_total": 6, "winner": 1, "attacker_won": False, "tie": False,
        "tie_rule": None}
    assert act(state, "void 1,2,N") == [
        {"kind": "move", "seat": 1, "action": {"void": [1, 2, "N"]}},
        {"kind": "void", "seat": 1, "owner": 0, "triangle": [1, 2, "N"]}]


@pytest.mark.parametrize(("ties", "winner"), [("defender", 1), ("attacker", 0)])
def test_battle_event_tie_rule_and_target_taken(ties, winner):
    # Battles 3: "Attacker's total strictly greater" wins; ties by the option ties (default defender).
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "1,2,N": 1}), ties=ties)
    play(state, "atk 1,2,W", "roll 3", "roll 5", "card 4")
    events = act(state, "card 2")  # 3 + 4 = 5 + 2
    battle = events[1]
    assert (battle["attacker_total"], battle["defender_total"]) == (7, 7)
    assert battle["tie"] is True and battle["tie_rule"] == ties and battle["winner"] == winner
    if winner == 0:
        assert events[2] == {"kind": "taken", "seat": 0, "from": 1, "triangle": [1, 2, "W"]}
    else:
        assert len(events) == 2 and state.to_json()["battle"]["step"] == "void"


def test_event_secrecy_agrees_with_observation_and_action_label():
    # An event hidden from a seat is exactly one whose content that seat's observation hides (the
    # value shows up as null in battle["hidden"] after the action), and action_label agrees.
    keys = {(ev.CHANCE, 0): "attacker_roll", (ev.CHANCE, 1): "defender_roll", (ev.MOVE, 0): "attacker_card"}
    for players, seed in ((2, 1), (3, 2), (4, 3)):
        game = load_game("tri", players=players)
        state = game.new_initial_state()
        rng = random.Random(seed)
        hidden_events = 0
        while not state.is_terminal():
            action = random_step(state, rng)
            labels = {seat: state.action_label(action, seat) for seat in range(players)}
            battle = state.battle
            events = state.apply_action(action)
            first = events[0]
            for seat in range(players):
                assert (labels[seat] is None) == (not first.visible_to(seat))
            for e in events[1:]:
                assert not e.secret
            if not first.secret:
                continue
            hidden_events += 1
            role = 0 if first.data["seat"] == battle.attacker else 1
            key = keys[first.kind, role]
            for seat in range(players):
                obs = state.observation(seat)["battle"]
                assert (key in obs.get("hidden", [])) == (seat not in first.to)
        assert hidden_events > 0


def test_teleport_square_closed_and_expand_events():
    owner = {**square(1, 1, 0), "3,3,N": 1}
    state = load(position(owner=owner))
    events = act(state, "tp 1,1>2,2,N")
    assert events[1] == {"kind": "teleport", "seat": 0, "square": [1, 1], "from": None, "to": [2, 2, "N"]}
    state = move_state(owner=owner)
    events = act(state, "tp 1,1,E>2,2,N")
    assert events[1] == {"kind": "teleport", "seat": 0, "square": [1, 1], "from": [1, 1, "E"], "to": [2, 2, "N"]}
    state = load(position(owner={"1,1,N": 0, "1,1,E": 0, "1,1,S": 0, "3,3,N": 1}))
    assert act(state, "exp 1,1,W")[1:] == [{"kind": "expand", "seat": 0, "triangle": [1, 1, "W"]},
                                           {"kind": "square_closed", "seat": 0, "square": [1, 1]}]
    state = load_game("tri", players=2).new_initial_state()
    assert act(state, "place 0,0,N")[1] == {"kind": "place", "seat": 0, "triangle": [0, 0, "N"]}


def test_income_events():
    # Card income: the chance action carries the die face; 1-3 -> +2, 4-5 -> +3, 6 -> +4.
    game = load_game("tri", players=3)
    state = game.state_from_json(position(players=3, size=5, owner={"0,0,N": 0, "2,2,N": 2},
                                          alive=[True, False, True], round=3, phase="income_roll"))
    assert act(state, "income 5") == [{"kind": "chance", "outcome": {"income": 5}},
                                      {"kind": "income", "face": 5, "cards": [3], "seats": [0, 2]}]


@pytest.mark.parametrize(("seats", "hands", "why"), [
    ([2] * 3 + [1] * 5 + [0] * 7 + [None], None, "fewest_units"),
    ([2] * 4 + [1] * 4 + [0] * 7 + [None], [[0], [4], [2, 3]], "fewest_cards"),
])
def test_elimination_events_on_a_full_board(seats, hands, why):
    state = load(position(players=3, size=2, owner=fill_all(2, seats), hands=hands))
    events = act(state, "exp 1,1,W")
    out = 2 if why == "fewest_units" else 1
    units = 3 if why == "fewest_units" else 4
    assert events[-2:] == [  # after the expansion (which closes square 1,1 here)
        {"kind": "eliminated", "seat": out, "why": why, "units": units},
        {"kind": "elimination_income", "eliminations": 1, "cards": [2, 3], "seats": [s for s in (0, 1, 2) if s != out]}]


def test_tiebreak_and_no_unit_elimination_events():
    seats = [2] * 4 + [1] * 4 + [0] * 7 + [None]
    state = load(position(players=3, size=2, owner=fill_all(2, seats), hands=[[0], [2, 3], [0, 2, 3]]))
    assert act(state, "exp 1,1,W")[-1] == {"kind": "tiebreak", "seats": [1, 2]}
    assert act(state, "out 1") == [
        {"kind": "chance", "outcome": {"out": 1}},
        {"kind": "eliminated", "seat": 1, "why": "tiebreak", "units": 4},
        {"kind": "elimination_income", "eliminations": 1, "cards": [2, 3], "seats": [0, 2]}]
    # a player with no unit left after the first round is out; two players: the game ends
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "2,2,N": 1}))
    play(state, "atk 1,2,W", "roll 1", "roll 6", "card 0", "card 0")
    events = act(state, "void 1,1,E")
    assert events[2] == {"kind": "eliminated", "seat": 0, "why": "no_unit", "units": 0}
    assert events[-1] == {"kind": "end", "reason": "last_player", "returns": [0.0, 1.0], "winners": [1]}
    assert state.end_reason() == "last_player"


def test_end_reasons_and_scores():
    # End: "no triangle is empty and only two players remain" / "one player remains"; turn_limit;
    # "Score for turn_limit: units owned".
    seats = [1] * 7 + [0] * 8 + [None]
    state = load(position(size=2, owner=fill_all(2, seats)))
    assert state.end_reason() == "" and state.scores() == [8.0, 7.0]
    assert act(state, "exp 1,1,W")[-1]["reason"] == "board_full"
    assert state.scores() == [9.0, 7.0] and state.end_reason() == "board_full"
    state = load_game("tri", players=3, turn_limit=2).new_initial_state()
    play(state, "place 0,0,N")
    assert act(state, "place 2,2,N")[-1] == {"kind": "end", "reason": "turn_limit", "returns": [0.5, 0.5, 0.0],
                                             "winners": [0, 1]}
    assert state.scores() == [1.0, 1.0, 0.0]
    assert TriGame.score_name == "units"


def test_battle_is_a_typed_value():
    state = load(position(owner={"1,1,E": 0, "1,2,N": 0, "1,2,W": 1}))
    assert state.battle is None
    play(state, "atk 1,2,W", "roll 4")
    assert state.battle == Battle(attacker=0, defender=1, target=state.game.tri_index["1,2,W"], dice=2,
                                  step=1, attacker_roll=4)
    twin = state.clone()
    play(twin, "roll 2")
    assert state.battle.defender_roll is None and twin.battle.defender_roll == 2  # clones share nothing
    with pytest.raises(ValueError, match="both cards"):
        twin.battle.totals()
    play(twin, "card 2", "card 0")  # 4 + 2 > 2 + 0
    assert twin.battle is None
    read = load_game("tri", players=2).state_from_json(state.to_json())
    assert read.battle == state.battle


def _worlds_from_observation(state, seat):
    """The information sets as agents/ismcts.py built them (from the observation
    through state_from_json): the reference the game's worlds() must reproduce."""
    import itertools

    obs = state.observation(seat)
    battle = obs.get("battle")
    if not battle:
        return None

    def probs(dice):
        k = max(1, dice)
        return [(v, (v**k - (v - 1) ** k) / 6**k) for v in range(1, 7)]

    hidden = []
    order = ("attacker_roll", "defender_roll", "attacker_card", "defender_card", "void")
    pos = order.index(battle["step"])
    if pos > 0 and battle["attacker_roll"] is None and seat != battle["attacker"]:
        hidden.append(("attacker_roll", probs(battle["dice"])))
    if pos > 1 and battle["defender_roll"] is None and seat != battle["defender"]:
        hidden.append(("defender_roll", probs(1)))
    if pos > 2 and battle["attacker_card"] is None and seat != battle["attacker"]:
        hand = sorted(set(obs["hands"][battle["attacker"]])) or [0]
        hidden.append(("attacker_card", [(c, 1 / len(hand)) for c in hand]))
    if not hidden:
        return None
    states, weights = [], []
    for combo in itertools.product(*(values for _, values in hidden)):
        b = {k: v for k, v in battle.items() if k != "hidden"}
        w = 1.0
        for (key, _), (value, p) in zip(hidden, combo, strict=True):
            b[key] = value
            w *= p
        if w > 0:
            states.append(state.game.state_from_json({**obs, "battle": b}))
            weights.append(w)
    return states, weights


@pytest.mark.parametrize("players", [2, 3, 4])
def test_worlds_reproduce_the_observation_based_information_sets(players):
    game = load_game("tri", players=players)
    state = game.new_initial_state()
    rng = random.Random(players)
    checked = 0
    while not state.is_terminal() and checked < 60:
        if state.battle is not None:
            for seat in range(players):
                want = _worlds_from_observation(state, seat)
                got = state.worlds(seat)
                if want is None:
                    assert got is None
                    continue
                checked += 1
                assert got[1] == want[1]  # the same weights, bit for bit, in the same order
                assert [w.to_json() for w in got[0]] == [w.to_json() for w in want[0]]
                for w in got[0]:
                    assert w.observation(seat) == state.observation(seat)
        state.apply_action(random_step(state, rng))
    assert checked > 0


def test_worlds_and_labels_in_one_battle():
    state = load(position(owner={"1,1,E": 0, "1,2,N": 0, "1,2,W": 1}, hands=[[2, 2, 4], [0, 3]]))
    assert state.worlds(0) is None and state.action_label(5, 1) == 5  # no battle: all public
    play(state, "atk 1,2,W")
    roll = state.action_from_string("roll 6")
    assert state.action_label(roll, 0) == roll and state.action_label(roll, 1) is None
    play(state, "roll 6")
    worlds, weights = state.worlds(1)
    assert [w.battle.attacker_roll for w in worlds] == [1, 2, 3, 4, 5, 6]
    assert weights == [(v * v - (v - 1) ** 2) / 36 for v in range(1, 7)]  # highest of 2 dice
    assert state.worlds(0) is None
    play(state, "roll 3", "card 2")
    worlds, weights = state.worlds(1)  # attacker's roll (6 faces) x the attacker's distinct cards (2, 4)
    assert len(worlds) == 12 and sum(weights) == pytest.approx(1.0)
    assert {w.battle.attacker_card for w in worlds} == {2, 4}
    card = state.action_from_string("card 3")
    assert all(state.action_label(card, s) == (card, 6, 3, 2) for s in (0, 1))  # the reveal
    play(state, "card 3")  # 6 + 2 = 8 > 3 + 3
    assert state.worlds(1) is None


def test_counters_declared_on_the_game():
    # The figures the lab reports for TRI (lab/metrics.py): battles, battles and attacker wins by dice,
    # squares closed, teleports, eliminations; names and kinds on the class.
    declared = {c.name: c for c in TriGame.counters}
    assert all(isinstance(c, Counter) for c in TriGame.counters)
    state = load(position(owner={"1,1,E": 0, "1,2,W": 1, "1,2,N": 1}))
    assert set(state.counters()) == set(declared)
    assert {declared[f"attacker_wins_k{k}"].of for k in (1, 2, 3)} == {"battles_k1", "battles_k2", "battles_k3"}
    assert all(declared[f"attacker_wins_k{k}"].kind == "share_per_event" for k in (1, 2, 3))
    for name in ("battles", "squares_closed", "teleports", "eliminations", "expands", "passes"):
        assert declared[name].kind == "mean_per_game"
    for c in TriGame.counters:
        assert c.of is None or c.of in declared


def test_fast_path_plays_the_same_game_without_events():
    for players, seed in ((2, 4), (3, 5)):
        game = load_game("tri", players=players)
        checked, fast = game.new_initial_state(), game.new_initial_state()
        rng = random.Random(seed)
        while not checked.is_terminal():
            action = random_step(checked, rng)
            checked.apply_action(action)
            fast.apply_unchecked(action)
            assert fast.to_json() == checked.to_json()
        assert fast.counters() == checked.counters()
