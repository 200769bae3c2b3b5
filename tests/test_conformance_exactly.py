"""Conformance of the exactly engine with /work/shared/RULES.md section 1, written from RULES.md alone.

Everything is driven through the public API and canonical JSON: positions are built from
RULES.md's JSON example, actions are applied as JSON, and results are compared key by key with
what a RULES.md sentence (quoted next to each expectation) implies. ``Ref`` below is an
independent reference model of the RULES.md text used to cross-check random playouts.
"""

from __future__ import annotations

import copy
import math
import random

import pytest

import ludoteca
from ludoteca import CHANCE, TERMINAL, IllegalActionError
from tests.conformance import (
    assert_required_keys_rebuild,
    key,
    legal_json,
    parse_then_apply_problems,
    play_random_checked,
)

VALUES = (5, 10, 20, 50)
FACES = (0, "?", 50, 20, 10, 5)
# "highest wins, ranking `?` > 50 > 20 > 10 > 5 > 0"
RANK = {"?": 6, 50: 5, 20: 4, 10: 3, 5: 2, 0: 1}
# Required position keys (RULES.md "Position JSON"); implementations may add keys.
KEYS = ("game", "players", "bank", "piles", "euros", "to_move", "phase", "roll", "turn")


# --------------------------------------------------------------------------------------------
# helpers
def pile(c5: int = 0, c10: int = 0, c20: int = 0, c50: int = 0) -> dict[str, int]:
    return {"5": c5, "10": c10, "20": c20, "50": c50}


def total(p: dict[str, int]) -> int:
    return sum(int(v) * n for v, n in p.items())


def position(piles: list[dict[str, int]], **over) -> dict:
    """A RULES.md position (only the required keys) whose bank holds the coins not in piles
    ("coins of 5, 10, 20, 50 cents (10 of each)")."""
    n = len(piles)
    bank = {str(v): 10 - sum(p[str(v)] for p in piles) for v in VALUES}
    d = {"game": "exactly", "players": n, "bank": bank, "piles": piles, "euros": [0] * n,
         "to_move": 0, "phase": "roll", "roll": None, "turn": 0}
    d.update(over)
    return d


def load(players: int = 3, **opts):
    return ludoteca.load_game("exactly", players=players, **opts)


def state_of(d: dict, **opts):
    return load(d["players"], **opts).state_from_json(copy.deepcopy(d))


def required(d: dict) -> dict:
    return {k: d[k] for k in KEYS}


def moves_for(d: dict, face) -> set[str]:
    """RULES.md "A turn": move one coin of the rolled value (any of the four for `?`) from one
    pile to a different pile; piles are the bank and each player's pile; never into a player's
    pile that already holds more than 150 cents; pass only if no move exists."""
    n = d["players"]
    values = VALUES if face == "?" else (face,)
    places = ["bank", *range(n)]
    out = set()
    for v in values:
        for src in places:
            held = d["bank"] if src == "bank" else d["piles"][src]
            if held[str(v)] == 0:
                continue
            for dst in places:
                if dst == src:
                    continue
                if dst != "bank" and total(d["piles"][dst]) > 150:
                    continue
                out.add(key({"coin": v, "from": src, "to": dst}))
    return out or {key({"pass": True})}


# --------------------------------------------------------------------------------------------
# reference model of the RULES.md text (position = the required keys + a roll-off memo)
class Ref:
    def __init__(self, d: dict, start_coin: bool = True, turn_limit: int = 1000, rolloff=None):
        self.d = copy.deepcopy(required(d))
        self.start_coin = start_coin
        self.turn_limit = turn_limit
        self.rolloff = rolloff  # (seats still rolling, rolls so far)

    def new_round(self) -> None:
        # "all coins return to the bank, each player takes a new 5-cent coin"
        n = self.d["players"]
        c5 = 1 if self.start_coin else 0
        self.d["piles"] = [pile(c5) for _ in range(n)]
        self.d["bank"] = {"5": 10 - c5 * n, "10": 10, "20": 10, "50": 10}

    def end_turn(self, next_seat: int) -> None:
        # "`turn` in a position counts the player turns completed"
        self.d["turn"] += 1
        self.d["roll"] = None
        self.d["to_move"] = next_seat
        self.d["phase"] = "roll"
        if self.d["turn"] >= self.turn_limit:
            self.d["phase"] = "over"

    def apply(self, a: dict) -> None:
        d, n = self.d, self.d["players"]
        if d["phase"] == "start_roll":
            seats, rolls = self.rolloff
            rolls = [*rolls, a["roll"]]
            if len(rolls) < len(seats):
                self.rolloff = (seats, rolls)
                return
            best = max(RANK[r] for r in rolls)
            tied = [s for s, r in zip(seats, rolls, strict=True) if RANK[r] == best]
            if len(tied) > 1:  # "Players tied for highest roll again among themselves"
                self.rolloff = (tied, [])
                return
            self.rolloff = None
            d["phase"], d["to_move"] = "roll", tied[0]
            return
        if d["phase"] == "roll":
            if a["roll"] == 0:  # "`0`: nothing happens; the turn passes."
                self.end_turn((d["to_move"] + 1) % n)
            else:
                d["phase"], d["roll"] = "move", a["roll"]
            return
        assert d["phase"] == "move"
        mover = d["to_move"]
        if "pass" in a:
            self.end_turn((mover + 1) % n)
            return
        v = str(a["coin"])
        src = d["bank"] if a["from"] == "bank" else d["piles"][a["from"]]
        dst = d["bank"] if a["to"] == "bank" else d["piles"][a["to"]]
        src[v] -= 1
        dst[v] += 1
        # "after a move, every player whose pile totals exactly 100 cents takes a 1-euro token"
        scorers = [i for i in range(n) if total(d["piles"][i]) == 100]
        for i in scorers:
            d["euros"][i] += 1
        if scorers:
            self.new_round()
        self.end_turn((mover + 1) % n)
        if any(e >= 3 for e in d["euros"]):  # "a player holding three 1-euro tokens wins"
            d["phase"] = "over"

    def check(self, engine_json: dict) -> None:
        got = required(engine_json)
        if self.d["phase"] == "start_roll":
            got = {k: v for k, v in got.items() if k != "to_move"}
            exp = {k: v for k, v in self.d.items() if k != "to_move"}
        elif self.d["phase"] == "over":  # after the end only these keys are settled (no new round)
            got = {k: got[k] for k in ("euros", "phase", "turn")}
            exp = {k: self.d[k] for k in ("euros", "phase", "turn")}
        else:
            exp = self.d
        assert got == exp


# --------------------------------------------------------------------------------------------
# options, errors
def test_options_and_defaults() -> None:
    g = load(3)
    # "option `start_coin`: "round" (default, also written `true`)"; "Every game has a `turn_limit`
    # option (default 1000)"
    assert g.options["start_coin"] == "round" and g.options["turn_limit"] == 1000
    # ""never" (also written `false`)"; "Anything else: ValueError naming start_coin"
    assert load(3, start_coin=True).options["start_coin"] == "round"
    assert load(3, start_coin=False).options["start_coin"] == "never"
    assert load(3, start_coin="game").options["start_coin"] == "game"
    for bad in ("sometimes", 0, None, ""):
        with pytest.raises(ValueError, match="start_coin"):
            load(3, start_coin=bad)


@pytest.mark.parametrize("bad", [{"players": 1}, {"players": 7}, {"players": 3, "no_such_option": 1}])
def test_bad_options_raise_value_error(bad) -> None:
    # "exactly ... 2 to 6 players"; unknown option -> ValueError (engine contract)
    with pytest.raises(ValueError):
        ludoteca.load_game("exactly", **bad)


def test_illegal_action_error_is_value_error_and_state_unchanged() -> None:
    # "`ludoteca.IllegalActionError` is a subclass of `ValueError`."
    assert issubclass(IllegalActionError, ValueError)
    s = state_of(position([pile(1), pile(1), pile(1)]))
    s.apply_action(s.action_from_json({"roll": 5}))
    before = s.to_json()
    # "`apply_action` rejects any action that is not legal in the position" (a 10 was not rolled)
    with pytest.raises(IllegalActionError):
        s.apply_action(s.action_from_json({"coin": 10, "from": "bank", "to": 1}))
    assert s.to_json() == before
    # "`action_from_json` rejects only ill-formed actions" -> IllegalActionError
    for bad in ({"coin": 7, "from": "bank", "to": 1}, {"dance": True}):
        with pytest.raises(IllegalActionError):
            s.action_from_json(bad)


# --------------------------------------------------------------------------------------------
# set-up, who starts
@pytest.mark.parametrize("n", range(2, 7))
def test_initial_position(n: int) -> None:
    s = load(n).new_initial_state()
    d = s.to_json()
    assert set(KEYS) <= set(d)
    # "Each player takes one 5-cent coin from the bank ... at the start of the game"
    assert d["bank"] == {"5": 10 - n, "10": 10, "20": 10, "50": 10}
    assert d["piles"] == [pile(1)] * n
    assert d["euros"] == [0] * n and d["turn"] == 0 and d["roll"] is None
    # "`start_roll` (roll-off)": "every player rolls once"; "Rolls are chance nodes"
    assert d["phase"] == "start_roll" and d["game"] == "exactly" and d["players"] == n
    assert s.current_player() == CHANCE
    assert s.returns() == [0.0] * n


def test_start_coin_false_initial_position() -> None:
    d = load(3, start_coin=False).new_initial_state().to_json()
    assert d["bank"] == pile(10, 10, 10, 10) and d["piles"] == [pile()] * 3


def test_die_faces_each_one_sixth() -> None:
    # "A die with faces `0`, `?`, `50`, `20`, `10`, `5`, each 1/6."; chance `{"roll": "?"}`
    for s in (load(3).new_initial_state(), state_of(position([pile(1)] * 3))):
        outs = {key(s.action_to_json(a)): p for a, p in s.chance_outcomes()}
        assert set(outs) == {key({"roll": f}) for f in FACES}
        assert all(math.isclose(p, 1 / 6) for p in outs.values())
        assert legal_json(s) == set(outs)


@pytest.mark.parametrize(
    ("rolls", "starter"),
    [
        (["?", 50, 20], 0),
        ([0, 5, 10], 2),  # 10 > 5 > 0
        ([20, "?", 50], 1),  # ? > 50
        ([50, "?", "?", 0, 5], 2),  # seats 1 and 2 tie on ?, roll again: 5 > 0
        (["?", 20, "?", 50, 50, 10, 20], 2),  # 0,2 tie; again tie; then 10 < 20
    ],
)
def test_roll_off(rolls, starter) -> None:
    # "every player rolls once; highest wins ... Players tied for highest roll again among
    # themselves. Rolls are chance nodes in seat order, and re-rolls likewise among the tied seats."
    s = load(3).new_initial_state()
    for r in rolls:
        assert s.current_player() == CHANCE and s.to_json()["phase"] == "start_roll"
        s.apply_action(s.action_from_json({"roll": r}))
    d = s.to_json()
    # "`turn` ... counts the player turns completed since the game began (roll-offs ... excluded)"
    assert (d["phase"], d["to_move"], d["turn"], d["roll"]) == ("roll", starter, 0, None)
    assert d["piles"] == [pile(1)] * 3  # the roll-off moves no coin
    assert s.current_player() == CHANCE  # "`roll` (chance: the active player's die)"


# --------------------------------------------------------------------------------------------
# RULES.md position example and moves
EXAMPLE = {"game": "exactly", "players": 3,
           "bank": {"5": 7, "10": 10, "20": 10, "50": 10},
           "piles": [{"5": 1, "10": 0, "20": 0, "50": 0}, {"5": 1, "10": 0, "20": 0, "50": 0},
                     {"5": 1, "10": 0, "20": 0, "50": 0}],
           "euros": [0, 0, 0], "to_move": 0, "phase": "roll", "roll": None, "turn": 0}


def test_rules_example_position_reads_and_writes_back() -> None:
    # "Keys listed are required; implementations may add keys ... a position written by one
    # program can be read by another."
    s = state_of(EXAMPLE)
    assert required(s.to_json()) == EXAMPLE
    assert s.current_player() == CHANCE


def test_example_1_roll_5_gives_12_moves() -> None:
    # 5-cent coin: bank->each of 3 players, each player->bank, each player->each other player.
    s = state_of(EXAMPLE)
    s.apply_action(s.action_from_json({"roll": 5}))
    d = s.to_json()
    assert (d["phase"], d["roll"], d["to_move"]) == ("move", 5, 0)
    assert s.current_player() == 0
    assert len(s.legal_actions()) == 12
    assert legal_json(s) == moves_for(EXAMPLE, 5)


def test_example_1_question_mark_any_value() -> None:
    # "`?`: the same, with a coin of any of the four values, chosen by the player."
    s = state_of(EXAMPLE)
    s.apply_action(s.action_from_json({"roll": "?"}))
    assert s.to_json()["roll"] == "?"
    assert legal_json(s) == moves_for(EXAMPLE, "?")
    assert len(s.legal_actions()) == 12 + 3 * 3


def test_move_json_form_and_result() -> None:
    # `{"coin": 20, "from": "bank", "to": 2}` accepted exactly as written
    s = state_of(EXAMPLE)
    s.apply_action(s.action_from_json({"roll": 20}))
    a = s.action_from_json({"coin": 20, "from": "bank", "to": 2})
    assert s.action_to_json(a) == {"coin": 20, "from": "bank", "to": 2}
    s.apply_action(a)
    d = s.to_json()
    assert d["bank"] == pile(7, 10, 9, 10) and d["piles"][2] == pile(1, 0, 1)
    assert (d["phase"], d["to_move"], d["turn"], d["roll"]) == ("roll", 1, 1, None)


def test_zero_roll_passes_the_turn_without_a_decision() -> None:
    # "`0`: nothing happens; the turn passes." (`roll` during `move` is never 0)
    s = state_of(EXAMPLE)
    s.apply_action(s.action_from_json({"roll": 0}))
    d = s.to_json()
    assert required(d) == EXAMPLE | {"to_move": 1, "turn": 1}
    assert s.current_player() == CHANCE


def test_coin_cap_150_open_more_closed() -> None:
    # "A coin may not be moved into a player's pile while that player's pile already holds more
    # than 150 cents (150 exactly is still open)". Coins are multiples of 5: 155 is "more".
    d = position([pile(1), pile(0, 0, 0, 3), pile(1, 0, 0, 3)], to_move=0)
    assert total(d["piles"][1]) == 150 and total(d["piles"][2]) == 155
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 5}))
    legal = legal_json(s)
    assert legal == moves_for(d, 5)
    assert key({"coin": 5, "from": "bank", "to": 1}) in legal
    assert key({"coin": 5, "from": 0, "to": 1}) in legal
    assert key({"coin": 5, "from": "bank", "to": 2}) not in legal
    assert key({"coin": 5, "from": 0, "to": 2}) not in legal
    # the closed pile can still give
    assert key({"coin": 5, "from": 2, "to": 0}) in legal
    with pytest.raises(IllegalActionError):
        s.apply_action(s.action_from_json({"coin": 5, "from": "bank", "to": 2}))


def test_no_move_means_lone_pass() -> None:
    # "If no legal move exists the player passes"; "`pass` is legal only when nothing else is";
    # "A forced choice is still an action of that player (a lone `pass` ...)"
    d = position([pile(0, 0, 8, 0), pile(4, 10, 2, 0)], to_move=1)
    assert total(d["piles"][0]) == total(d["piles"][1]) == 160  # both closed; all 50s in the bank
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 50}))
    assert s.current_player() == 1
    assert legal_json(s) == {key({"pass": True})}
    s.apply_action(s.action_from_json({"pass": True}))
    d2 = s.to_json()
    assert (d2["phase"], d2["to_move"], d2["turn"]) == ("roll", 0, 1)
    assert d2["piles"] == d["piles"]
    # with 10 rolled player 1 can only give to the bank
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 10}))
    assert legal_json(s) == {key({"coin": 10, "from": 1, "to": "bank"})}


# --------------------------------------------------------------------------------------------
# scoring and end
def test_scoring_player_not_mover_and_next_round_left_of_mover() -> None:
    # "every player whose pile totals exactly 100 cents takes a 1-euro token ... all coins return
    # to the bank, each player takes a new 5-cent coin, and the next round starts with the player
    # to the left of the one who made the scoring move"
    d = position([pile(0, 0, 0, 1), pile(1), pile(0, 0, 4)], to_move=1, turn=9)  # seat 0 has 50
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 50}))
    s.apply_action(s.action_from_json({"coin": 50, "from": "bank", "to": 0}))
    got = s.to_json()
    assert got["euros"] == [1, 0, 0]
    assert got["bank"] == pile(7, 10, 10, 10) and got["piles"] == [pile(1)] * 3
    assert (got["to_move"], got["phase"], got["roll"], got["turn"]) == (2, "roll", None, 10)


def test_several_players_score_at_once() -> None:
    # "every player whose pile totals exactly 100 cents takes a 1-euro token (... a move touches
    # two piles, so at most two players)"
    d = position([pile(0, 0, 1, 2), pile(0, 1, 1, 1), pile(1)], to_move=2, euros=[1, 0, 2])
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 20}))
    s.apply_action(s.action_from_json({"coin": 20, "from": 0, "to": 1}))  # 120->100, 80->100
    got = s.to_json()
    assert got["euros"] == [2, 1, 2]
    assert got["piles"] == [pile(1)] * 3 and got["bank"] == pile(7, 10, 10, 10)
    assert (got["to_move"], got["phase"], got["turn"]) == (0, "roll", 1)
    assert s.returns() == [0.0, 0.0, 0.0]


def test_start_coin_game_only_at_the_start_of_the_game() -> None:
    # ""game" -- only at the start of the game, the seed's most literal reading"
    d = load(3, start_coin="game").new_initial_state().to_json()
    assert d["bank"] == pile(7, 10, 10, 10) and d["piles"] == [pile(1)] * 3
    s = state_of(position([pile(0, 0, 4), pile(1), pile(1)], to_move=0), start_coin="game")
    s.apply_action(s.action_from_json({"roll": 20}))
    s.apply_action(s.action_from_json({"coin": 20, "from": "bank", "to": 0}))
    got = s.to_json()
    # "The round then ends: all coins return to the bank" -- and no new 5-cent coin
    assert got["euros"] == [1, 0, 0] and got["piles"] == [pile()] * 3
    assert got["bank"] == pile(10, 10, 10, 10) and (got["to_move"], got["phase"]) == (1, "roll")


def test_start_coin_false_new_round_has_empty_piles() -> None:
    d = position([pile(0, 0, 4), pile(), pile()], to_move=0)
    s = state_of(d, start_coin=False)
    s.apply_action(s.action_from_json({"roll": 20}))
    s.apply_action(s.action_from_json({"coin": 20, "from": "bank", "to": 0}))
    got = s.to_json()
    assert got["euros"] == [1, 0, 0] and got["piles"] == [pile()] * 3
    assert got["bank"] == pile(10, 10, 10, 10)


def test_three_euros_win() -> None:
    # "a player holding three 1-euro tokens wins"; "each winner gets 1/k"
    d = position([pile(0, 0, 4), pile(1), pile(1)], to_move=0, euros=[2, 2, 0])
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": 20}))
    s.apply_action(s.action_from_json({"coin": 20, "from": "bank", "to": 0}))
    got = s.to_json()
    assert got["phase"] == "over" and got["euros"] == [3, 2, 0]
    assert s.current_player() == TERMINAL and s.is_terminal()
    assert s.returns() == [1.0, 0.0, 0.0]
    assert s.legal_actions() == []


def test_two_reaching_three_share_the_win() -> None:
    # "(two reaching it on the same move share the win)"
    d = position([pile(0, 0, 1, 2), pile(0, 1, 1, 1), pile(1)], to_move=2, euros=[2, 2, 1])
    s = state_of(d)
    s.apply_action(s.action_from_json({"roll": "?"}))
    s.apply_action(s.action_from_json({"coin": 20, "from": 0, "to": 1}))
    assert s.to_json()["phase"] == "over" and s.to_json()["euros"] == [3, 3, 1]
    assert s.returns() == [0.5, 0.5, 0.0]


def test_turn_limit_leaders_share() -> None:
    # "reaching it ends the game and the leaders by the game's own score share the win";
    # "Score for `turn_limit`: 1-euro tokens held."
    d = position([pile(1)] * 3, to_move=1, euros=[1, 0, 1], turn=4)
    s = state_of(d, turn_limit=5)
    s.apply_action(s.action_from_json({"roll": 0}))
    assert s.to_json()["phase"] == "over" and s.to_json()["turn"] == 5
    assert s.is_terminal() and s.returns() == [0.5, 0.0, 0.5]
    # one short of the limit the game goes on
    s = state_of(d | {"turn": 3}, turn_limit=5)
    s.apply_action(s.action_from_json({"roll": 0}))
    assert not s.is_terminal() and s.returns() == [0.0, 0.0, 0.0]


def test_turn_limit_after_a_move() -> None:
    d = position([pile(1)] * 2, to_move=0, euros=[0, 1], turn=0)
    s = state_of(d, turn_limit=1)
    s.apply_action(s.action_from_json({"roll": 5}))
    s.apply_action(s.action_from_json({"coin": 5, "from": "bank", "to": 0}))
    assert s.is_terminal() and s.returns() == [0.0, 1.0]


# --------------------------------------------------------------------------------------------
# random playouts cross-checked against the reference model
@pytest.mark.parametrize(("n", "seed"), [(2, 1), (3, 2), (4, 3), (6, 4)])
def test_playout_matches_reference(n: int, seed: int) -> None:
    rng = random.Random(seed)
    history: list = []
    s = load(n).new_initial_state()
    ref = Ref(s.to_json(), rolloff=(list(range(n)), []))
    ref.check(s.to_json())
    for _ in range(1500):
        if s.is_terminal():
            break
        assert s.returns() == [0.0] * n  # "all 0 before the end"
        d = s.to_json()
        if s.is_chance_node():
            outs = {key(s.action_to_json(a)): p for a, p in s.chance_outcomes()}
            assert set(outs) == {key({"roll": f}) for f in FACES}
            assert all(math.isclose(p, 1 / 6) for p in outs.values())
        else:
            assert d["phase"] == "move" and s.current_player() == d["to_move"]
            assert legal_json(s) == moves_for(d, d["roll"])
        if d["phase"] != "start_roll":
            assert_required_keys_rebuild(s, KEYS)
        play_random_checked(s, rng, history, ref)
    if s.is_terminal():
        e = s.to_json()["euros"]
        best = max(e)
        if best >= 3:
            win = [i for i in range(n) if e[i] >= 3]
        else:
            win = [i for i in range(n) if e[i] == best]
        assert s.returns() == pytest.approx([1 / len(win) if i in win else 0.0 for i in range(n)])
    # "a game is fully determined by its options plus its list of actions (chance outcomes included)"
    r = s.game.new_initial_state()
    for aj in history:
        r.apply_action(r.action_from_json(aj))
    assert r.to_json() == s.to_json() and r.returns() == s.returns()


# --------------------------------------------------------------------------------------------
# "`action_from_json` rejects only ill-formed actions; `apply_action` rejects any action that is
# not legal in the position."
WELL_FORMED = [{"roll": f} for f in FACES] + [
    {"coin": 20, "from": "bank", "to": 2}, {"coin": 5, "from": 0, "to": 1}, {"coin": 50, "from": 2, "to": "bank"},
    {"pass": True},
    # "`from`/`to` are "bank" or a seat": naming one pile twice is well-formed, and illegal
    # ("move one coin of that value from one pile to a different pile")
    {"coin": 20, "from": 1, "to": 1}, {"coin": 5, "from": "bank", "to": "bank"}]


def test_action_from_json_accepts_every_well_formed_action_anywhere() -> None:
    states = [load(3).new_initial_state(), state_of(EXAMPLE)]
    s = state_of(EXAMPLE)
    s.apply_action(s.action_from_json({"roll": 20}))
    states.append(s)
    problems = [p for st in states for p in parse_then_apply_problems(st, WELL_FORMED)]
    assert not problems, "\n".join(problems)


def test_unknown_option_is_a_value_error_naming_it() -> None:
    # "Unknown option / bad value -> ValueError naming it" (docs/architecture.md)
    with pytest.raises(ValueError, match="frobnicate"):
        ludoteca.load_game("exactly", players=2, frobnicate=1)
    with pytest.raises(ValueError, match="turn_limit"):
        ludoteca.load_game("exactly", players=2, turn_limit="soon")
