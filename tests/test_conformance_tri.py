"""Conformance of the TRI engine with /work/shared/RULES.md section 2, written from RULES.md alone.

Positions are built from RULES.md's JSON example (adapted to be valid), actions are applied as
canonical JSON and results are compared key by key with what a quoted RULES.md sentence implies.
``Ref`` is an independent reference model of the RULES.md text (adjacency, legal actions,
battles, income, eliminations, end) used to cross-check random playouts step by step.
"""

from __future__ import annotations

import copy
import json
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

DIRS = "NESW"
KEYS = ("game", "players", "size", "owner", "hands", "alive", "teleports_used", "to_move", "round",
        "phase", "battle", "turn")
BATTLE_KEYS = {"attacker", "defender", "target", "dice", "step", "attacker_roll", "defender_roll",
               "attacker_card", "defender_card"}
# "Default `size` 4 for 2 players, 5 for 3, 6 for 4"
SIZE = {2: 4, 3: 5, 4: 6}
START_HAND = [0, 2, 3, 4]  # "modifiers +0, +2, +3, +4. Everyone starts with one of each."
EXAMPLE = {"game": "tri", "players": 2, "size": 4,
           "owner": {"0,0,N": 0, "1,2,E": 1},
           "hands": [[0, 2, 3, 4], [0, 2, 3, 4]],
           "alive": [True, True], "teleports_used": ["2,2"],
           "to_move": 0, "round": 3, "phase": "act", "battle": None, "turn": 4}
PASS = json.dumps({"pass": True})


# --------------------------------------------------------------------------------------------
# geometry from RULES.md "Board"
def tkey(r: int, c: int, d: str) -> str:
    return f"{r},{c},{d}"


def parse(k: str) -> tuple[int, int, str]:
    r, c, d = k.split(",")
    return int(r), int(c), d


def neighbours(k: str, size: int) -> set[str]:
    """"N touches E and W, S touches E and W) and one across the square's side: N(r,c)-S(r-1,c),
    E(r,c)-W(r,c+1), indices modulo size"."""
    r, c, d = parse(k)
    if d == "N":
        return {tkey(r, c, "E"), tkey(r, c, "W"), tkey((r - 1) % size, c, "S")}
    if d == "S":
        return {tkey(r, c, "E"), tkey(r, c, "W"), tkey((r + 1) % size, c, "N")}
    if d == "E":
        return {tkey(r, c, "N"), tkey(r, c, "S"), tkey(r, (c + 1) % size, "W")}
    return {tkey(r, c, "N"), tkey(r, c, "S"), tkey(r, (c - 1) % size, "E")}


def all_tris(size: int) -> list[str]:
    return [tkey(r, c, d) for r in range(size) for c in range(size) for d in DIRS]


def jt(k: str) -> list:
    r, c, d = parse(k)
    return [r, c, d]


def closed_by(owner: dict, r: int, c: int):
    """"Closed square: all four triangles of a square owned by one player.\""""
    seats = {owner.get(tkey(r, c, d)) for d in DIRS}
    return seats.pop() if len(seats) == 1 else None


def square_of(k: str) -> tuple[int, int]:
    r, c, _ = parse(k)
    return r, c


def units(owner: dict, seat: int) -> int:
    return sum(1 for v in owner.values() if v == seat)


# --------------------------------------------------------------------------------------------
# reference model
def expected_legal(d: dict, teleport: str = "claim") -> set[str]:
    size, owner, phase = d["size"], d["owner"], d["phase"]
    if phase == "place":
        # "places one unit on any empty triangle that is not adjacent to any unit already placed"
        out = {key({"place": jt(t)}) for t in all_tris(size)
               if t not in owner and not any(n in owner for n in neighbours(t, size))}
        return out or {PASS}
    if phase == "act":
        me = d["to_move"]
        mine = [t for t, s in owner.items() if s == me]
        near = set().union(*(neighbours(t, size) for t in mine)) if mine else set()
        out = set()
        for t in near:
            if t not in owner:  # expand: "claim an empty triangle adjacent to one of your units"
                out.add(key({"expand": jt(t)}))
            elif owner[t] != me and closed_by(owner, *square_of(t)) is None:
                # attack "an enemy triangle adjacent to one of your units ... unless it belongs
                # to a closed square"
                out.add(key({"attack": jt(t)}))
        # teleport: "for a square you have closed, claim any empty triangle anywhere; each square
        # position grants this once per game"
        # Option teleport "move": "one of the square's four triangles, chosen by the player, becomes
        # empty and its unit appears on the target ... the action carries "from": "N"|"E"|"S"|"W""
        empties = [t for t in all_tris(size) if t not in owner]
        sides = [{"from": f} for f in DIRS] if teleport == "move" else [{}]
        for r in range(size):
            for c in range(size):
                if closed_by(owner, r, c) == me and f"{r},{c}" not in d["teleports_used"]:
                    out |= {key({"teleport": {"square": [r, c], "to": jt(t), **f}}) for t in empties for f in sides}
        return out or {PASS}  # "`pass` only when none of these is possible"
    if phase == "battle":
        b = d["battle"]
        if b["step"] in ("attacker_card", "defender_card"):
            seat = b["attacker"] if b["step"] == "attacker_card" else b["defender"]
            hand = d["hands"][seat]
            # "A player with an empty hand plays {"card": 0}"
            return {key({"card": c}) for c in hand} if hand else {key({"card": 0})}
        if b["step"] == "void":
            # "the defender picks one of the attacker's units adjacent to the target"
            return {key({"void": jt(t)}) for t in neighbours(b["target"], size)
                    if owner.get(t) == b["attacker"]}
    raise AssertionError(f"no player decision in phase {phase}")


def roll_probs(k: int) -> dict[int, float]:
    """"the highest of its k dice, with probability (v^k - (v-1)^k) / 6^k\""""
    return {v: (v**k - (v - 1) ** k) / 6**k for v in range(1, 7)}


class Ref:
    """The RULES.md text as a model of the required position keys."""

    def __init__(self, d: dict, ties: str = "defender", turn_limit: int = 1000, teleport: str = "claim"):
        self.d = copy.deepcopy({k: d[k] for k in KEYS})
        self.ties = ties
        self.teleport = teleport
        self.turn_limit = turn_limit
        self.tied: list[int] = []
        self.mover: int | None = None

    # chance outcomes expected at a chance node
    def chance(self) -> dict[str, float]:
        d = self.d
        if d["phase"] == "battle" and d["battle"]["step"] == "attacker_roll":
            return {key({"roll": v}): p for v, p in roll_probs(d["battle"]["dice"]).items()}
        if d["phase"] == "battle" and d["battle"]["step"] == "defender_roll":
            return {key({"roll": v}): 1 / 6 for v in range(1, 7)}  # "The defender rolls one die"
        if d["phase"] == "income_roll":
            return {key({"income": v}): 1 / 6 for v in range(1, 7)}
        if d["phase"] == "tiebreak":  # "a chance node picks uniformly"
            return {key({"out": s}): 1 / len(self.tied) for s in self.tied}
        raise AssertionError(d["phase"])

    def alive_seats(self) -> list[int]:
        return [i for i, a in enumerate(self.d["alive"]) if a]

    def full(self) -> bool:
        return len(self.d["owner"]) == 4 * self.d["size"] ** 2

    def eliminate(self, seat: int) -> None:
        d = self.d
        d["alive"][seat] = False
        d["owner"] = {t: s for t, s in d["owner"].items() if s != seat}  # "triangles become empty"
        dead = d["alive"].count(False)
        # "after the first elimination one +2 and one +3; after the second, two +2 and one +4"
        gain = {1: [2, 3], 2: [2, 2, 4]}.get(dead, [])
        for s in self.alive_seats():
            d["hands"][s] = sorted(d["hands"][s] + gain)

    def after_change(self) -> bool:
        """Eliminations and end after units changed; False while a tiebreak is pending."""
        d = self.d
        if d["round"] > 1:
            # "A player with no unit left after the first round is out too"
            for s in self.alive_seats():
                if units(d["owner"], s) == 0 and len(self.alive_seats()) > 1:
                    self.eliminate(s)
        if self.full() and len(self.alive_seats()) > 2:
            # "the player with the fewest units is out ... Ties: the tied player with the lowest
            # total of card values in hand is out; still tied, a chance node picks uniformly"
            alive = self.alive_seats()
            fewest = min(units(d["owner"], s) for s in alive)
            tied = [s for s in alive if units(d["owner"], s) == fewest]
            low = min(sum(d["hands"][s]) for s in tied)
            tied = [s for s in tied if sum(d["hands"][s]) == low]
            if len(tied) > 1:
                self.tied = tied
                d["phase"] = "tiebreak"
                return False
            self.eliminate(tied[0])
        return True

    def is_end(self) -> bool:
        # "The game ends when no triangle is empty and only two players remain, or when one
        # player remains."
        n_alive = len(self.alive_seats())
        return n_alive <= 1 or (self.full() and n_alive == 2)

    def end_turn(self) -> None:
        d = self.d
        mover = self.mover
        d["battle"] = None
        if self.is_end():
            d["phase"] = "over"
            return
        d["turn"] += 1
        if d["turn"] >= self.turn_limit:
            d["phase"] = "over"
            return
        alive = self.alive_seats()
        later = [s for s in alive if s > mover]
        if later:
            d["to_move"] = later[0]
            d["phase"] = "place" if d["round"] == 1 else "act"
            return
        # "a round ends when the highest-numbered seat still in the game has played"
        ended = d["round"]
        d["round"] += 1
        d["to_move"] = alive[0]
        # "After every third round the starting player rolls a die ... The placement round is
        # round 1."
        d["phase"] = "income_roll" if ended % 3 == 0 else "act"

    def apply(self, a: dict) -> None:
        d = self.d
        owner = d["owner"]
        phase = d["phase"]
        if phase == "income_roll":
            # "1-3 every player gains +2, 4-5 +3, 6 +4"
            card = 2 if a["income"] <= 3 else 3 if a["income"] <= 5 else 4
            for s in self.alive_seats():
                d["hands"][s] = sorted([*d["hands"][s], card])
            d["phase"] = "act"
            return
        if phase == "tiebreak":
            self.eliminate(a["out"])
            self.tied = []
            self.end_turn()
            return
        if phase in ("place", "act"):
            self.mover = d["to_move"]
            me = d["to_move"]
            if "place" in a or "expand" in a:
                owner[tkey(*(a.get("place") or a["expand"]))] = me
            elif "teleport" in a:
                owner[tkey(*a["teleport"]["to"])] = me
                if self.teleport == "move":  # the unit on the chosen side leaves: the square opens
                    del owner[tkey(*a["teleport"]["square"], a["teleport"]["from"])]
                d["teleports_used"] = sorted({*d["teleports_used"], "{},{}".format(*a["teleport"]["square"])})
            elif "attack" in a:
                t = tkey(*a["attack"])
                k = sum(1 for n in neighbours(t, d["size"]) if owner.get(n) == me)
                d["phase"] = "battle"
                d["battle"] = {"attacker": me, "defender": owner[t], "target": t, "dice": k,
                               "step": "attacker_roll", "attacker_roll": None, "defender_roll": None,
                               "attacker_card": None, "defender_card": None}
                return
            if self.after_change():
                self.end_turn()
            return
        assert phase == "battle"
        b = d["battle"]
        step = b["step"]
        if step == "attacker_roll":
            b["attacker_roll"], b["step"] = a["roll"], "defender_roll"
        elif step == "defender_roll":
            b["defender_roll"], b["step"] = a["roll"], "attacker_card"
        elif step == "attacker_card":
            b["attacker_card"], b["step"] = a["card"], "defender_card"
        elif step == "defender_card":
            b["defender_card"] = a["card"]
            # "A chosen card stays in its owner's hand ... until the reveal, when both cards are
            # discarded."
            for seat, card in ((b["attacker"], b["attacker_card"]), (b["defender"], b["defender_card"])):
                if d["hands"][seat]:
                    d["hands"][seat].remove(card)
            att = b["attacker_roll"] + b["attacker_card"]
            dfn = b["defender_roll"] + b["defender_card"]
            # "Attacker's total strictly greater -> the target becomes the attacker's"; ties option
            if att > dfn or (att == dfn and self.ties == "attacker"):
                owner[b["target"]] = b["attacker"]
                if self.after_change():
                    self.end_turn()
            else:
                b["step"] = "void"
        elif step == "void":
            del owner[tkey(*a["void"])]
            if self.after_change():
                self.end_turn()

    def check(self, got: dict) -> None:
        d = self.d
        got = {k: got[k] for k in KEYS}
        alive = self.alive_seats()
        got["hands"] = [sorted(h) if i in alive else None for i, h in enumerate(got["hands"])]
        exp = copy.deepcopy(d)
        exp["hands"] = [sorted(h) if i in alive else None for i, h in enumerate(exp["hands"])]
        got["teleports_used"] = sorted(got["teleports_used"])
        exp["teleports_used"] = sorted(exp["teleports_used"])
        if d["phase"] in ("income_roll", "tiebreak", "over"):
            # RULES.md does not settle the counters during these chance nodes / after the end
            for k in ("to_move", "round", "turn", "battle", "hands"):
                got.pop(k)
                exp.pop(k)
        assert got == exp


def winners_share(d: dict) -> list[float]:
    n = d["players"]
    score = [units(d["owner"], s) if d["alive"][s] else -1 for s in range(n)]
    best = max(score)
    win = [s for s in range(n) if score[s] == best]
    return [1 / len(win) if s in win else 0.0 for s in range(n)]


# --------------------------------------------------------------------------------------------
# helpers for scenarios
def position(players: int = 2, owner: dict | None = None, **over) -> dict:
    d = {"game": "tri", "players": players, "size": SIZE[players], "owner": dict(owner or {}),
         "hands": [list(START_HAND) for _ in range(players)], "alive": [True] * players,
         "teleports_used": [], "to_move": 0, "round": 2, "phase": "act", "battle": None, "turn": 10}
    d.update(over)
    return d


def square(r: int, c: int, seat: int) -> dict:
    return {tkey(r, c, d): seat for d in DIRS}


def state_of(d: dict, **opts):
    game = ludoteca.load_game("tri", players=d["players"], size=d["size"], **opts)
    return game.state_from_json(copy.deepcopy(d))


def outcomes(s) -> dict[str, float]:
    return {key(s.action_to_json(a)): p for a, p in s.chance_outcomes()}


def play(s, *actions) -> None:
    for a in actions:
        s.apply_action(s.action_from_json(a))


def fill(size: int, counts: list[tuple[int | None, int]]) -> dict:
    """Owner of every triangle in (row, col, N E S W) order: ``counts`` = [(seat, how many)]."""
    seats = [seat for seat, k in counts for _ in range(k)]
    tris = all_tris(size)
    assert len(seats) == len(tris)
    return {t: s for t, s in zip(tris, seats, strict=True) if s is not None}


# --------------------------------------------------------------------------------------------
# options and initial position
@pytest.mark.parametrize("n", [2, 3, 4])
def test_initial_position(n: int) -> None:
    g = ludoteca.load_game("tri", players=n)
    # "Default size 4 for 2 players, 5 for 3, 6 for 4"; "default on ties: defender holds"
    assert g.options["size"] == SIZE[n] and g.options["ties"] == "defender"
    assert g.options["turn_limit"] == 1000
    s = g.new_initial_state()
    d = s.to_json()
    assert set(KEYS) <= set(d)
    assert {k: d[k] for k in KEYS} == {
        "game": "tri", "players": n, "size": SIZE[n], "owner": {}, "hands": [START_HAND] * n,
        "alive": [True] * n, "teleports_used": [], "to_move": 0, "round": 1, "phase": "place",
        "battle": None, "turn": 0}
    assert s.current_player() == 0 and s.returns() == [0.0] * n
    # every triangle is a legal first placement
    assert legal_json(s) == {key({"place": jt(t)}) for t in all_tris(SIZE[n])}


@pytest.mark.parametrize("bad", [{"players": 1}, {"players": 5}, {"players": 2, "ties": "nobody"},
                                 {"players": 2, "speed": 3}])
def test_bad_options_raise_value_error(bad) -> None:
    with pytest.raises(ValueError):
        ludoteca.load_game("tri", **bad)


def test_size_option() -> None:
    s = ludoteca.load_game("tri", players=2, size=5).new_initial_state()
    assert s.to_json()["size"] == 5 and len(s.legal_actions()) == 100


def test_rules_example_reads_and_writes_back() -> None:
    # "Keys listed are required; implementations may add keys"
    s = state_of(EXAMPLE)
    got = s.to_json()
    assert {k: got[k] for k in KEYS} == EXAMPLE
    assert s.current_player() == 0
    # seat 0's one unit [0,0,N] touches [0,0,E], [0,0,W] and, across the torus, [3,0,S]
    assert legal_json(s) == {key({"expand": [0, 0, "E"]}), key({"expand": [0, 0, "W"]}),
                             key({"expand": [3, 0, "S"]})}


def test_errors() -> None:
    assert issubclass(IllegalActionError, ValueError)
    s = state_of(EXAMPLE)
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply_action(s.action_from_json({"expand": [2, 2, "N"]}))
    assert s.to_json() == before
    for bad in ({"expand": [0, 0, "Q"]}, {"fly": [0, 0, "N"]}):
        with pytest.raises(IllegalActionError):
            s.action_from_json(bad)


# --------------------------------------------------------------------------------------------
# torus and placement
@pytest.mark.parametrize(("unit", "across"), [("0,0,N", "3,0,S"), ("3,1,S", "0,1,N"),
                                              ("2,3,E", "2,0,W"), ("1,0,W", "1,3,E")])
def test_torus_adjacency(unit: str, across: str) -> None:
    # "N(r,c)-S(r-1,c), E(r,c)-W(r,c+1), indices modulo size"
    s = state_of(position(owner={unit: 0, "2,2,N": 1}))
    r, c, _ = parse(unit)
    same = {tkey(r, c, d) for d in DIRS} - {unit}
    near = {t for t in same if t in neighbours(unit, 4)}
    assert len(near) == 2
    assert legal_json(s) == {key({"expand": jt(t)}) for t in [*near, across]}


def test_placement_round_not_adjacent() -> None:
    # "each player in turn places one unit on any empty triangle that is not adjacent to any unit
    # already placed"
    s = ludoteca.load_game("tri", players=2).new_initial_state()
    play(s, {"place": [0, 3, "E"]})
    d = s.to_json()
    assert (d["to_move"], d["round"], d["phase"], d["turn"]) == (1, 1, "place", 1)
    banned = {"0,3,E", "0,3,N", "0,3,S", "0,0,W"}
    assert legal_json(s) == {key({"place": jt(t)}) for t in all_tris(4) if t not in banned}
    play(s, {"place": [2, 1, "N"]})
    d = s.to_json()
    # the placement round is round 1; then "a turn afterwards"
    assert d["owner"] == {"0,3,E": 0, "2,1,N": 1}
    assert (d["to_move"], d["round"], d["phase"], d["turn"]) == (0, 2, "act", 2)


def test_placement_round_three_players() -> None:
    s = ludoteca.load_game("tri", players=3).new_initial_state()
    play(s, {"place": [0, 0, "S"]}, {"place": [4, 4, "E"]})
    exp = expected_legal(s.to_json())
    assert key({"place": [1, 0, "N"]}) not in exp and key({"place": [4, 0, "W"]}) not in exp
    assert legal_json(s) == exp
    play(s, {"place": [2, 2, "W"]})
    d = s.to_json()
    assert (d["to_move"], d["round"], d["phase"]) == (0, 2, "act")


# --------------------------------------------------------------------------------------------
# acts
def test_closed_square_cannot_be_attacked_and_teleport() -> None:
    # "attack an enemy triangle adjacent to one of your units ..., unless it belongs to a closed
    # square"; "teleport: for a square you have closed, claim any empty triangle anywhere"
    owner = {**square(1, 1, 1), "1,0,E": 0, "1,2,W": 0, "2,2,N": 1, "2,2,W": 0, **square(3, 3, 0)}
    d = position(owner=owner)
    s = state_of(d)
    legal = legal_json(s)
    assert legal == expected_legal(d)
    assert key({"attack": [1, 1, "W"]}) not in legal and key({"attack": [1, 1, "E"]}) not in legal
    assert key({"attack": [2, 2, "N"]}) in legal
    empties = [t for t in all_tris(4) if t not in owner]
    tele = {key({"teleport": {"square": [3, 3], "to": jt(t)}}) for t in empties}
    assert tele <= legal
    assert not any('"square": [1, 1]' in a for a in legal)  # seat 1's square


def test_teleport_json_and_once_per_square_position() -> None:
    # `{"teleport": {"square": [r, c], "to": [r2, c2, "W"]}}`; "each square position grants this
    # once per game (... once per position is our default)"
    owner = {**square(3, 3, 0), "1,1,N": 1}
    s = state_of(position(owner=owner))
    a = s.action_from_json({"teleport": {"square": [3, 3], "to": [1, 2, "W"]}})
    assert s.action_to_json(a) == {"teleport": {"square": [3, 3], "to": [1, 2, "W"]}}
    s.apply_action(a)
    d = s.to_json()
    assert d["owner"]["1,2,W"] == 0 and d["teleports_used"] == ["3,3"]
    assert (d["to_move"], d["turn"]) == (1, 11)
    play(s, {"expand": [1, 1, "E"]})
    # square 3,3 is still closed by seat 0, but its teleport is spent
    assert not any("teleport" in a for a in legal_json(s))
    assert legal_json(s) == expected_legal(s.to_json())
    # the square position is spent for every player, even one who closes it later
    s2 = state_of(position(owner={**square(3, 3, 1), "0,0,N": 0}, teleports_used=["3,3"], to_move=1))
    assert not any("teleport" in a for a in legal_json(s2))


def test_pass_only_when_nothing_else() -> None:
    # "`pass` only when none of these is possible": seat 0's closed square [0,0] has spent its
    # teleport, every neighbour of it lies in one of seat 1's closed squares, [2,2,N] is empty
    owner = {**fill(4, [(1, 64)]), **square(0, 0, 0)}
    del owner["2,2,N"]
    d = position(owner=owner, teleports_used=["0,0"])
    s = state_of(d)
    assert legal_json(s) == {PASS}
    play(s, {"pass": True})
    got = s.to_json()
    assert (got["to_move"], got["turn"], got["owner"]) == (1, 11, owner)
    # with the teleport unspent it must teleport instead
    s = state_of(dict(d, teleports_used=[]))
    assert legal_json(s) == {key({"teleport": {"square": [0, 0], "to": [2, 2, "N"]}})}


# --------------------------------------------------------------------------------------------
# battles
BATTLE_OWNER = {"1,1,N": 0, "1,1,E": 0, "1,1,W": 1, "1,1,S": 1, "2,1,N": 0}


def start_battle(ties: str = "defender", hands=None, owner=None, target=(1, 1, "S")):
    d = position(owner=owner or BATTLE_OWNER, hands=hands or [list(START_HAND), list(START_HAND)])
    s = state_of(d, ties=ties)
    play(s, {"attack": list(target)})
    return s


@pytest.mark.parametrize(("owner", "k"), [
    ({"1,1,E": 0, "1,1,S": 1}, 1),
    ({"1,1,E": 0, "1,1,W": 0, "1,1,S": 1}, 2),
    (BATTLE_OWNER, 2),
    ({"1,1,E": 0, "1,1,W": 0, "2,1,N": 0, "1,1,S": 1}, 3),
])
def test_attack_starts_a_battle_with_k_dice(owner, k) -> None:
    # "k = number of the attacker's units adjacent to the target (1-3), and keeps the highest"
    s = start_battle(owner=owner)
    d = s.to_json()
    assert d["phase"] == "battle" and d["to_move"] == 0 and d["turn"] == 10
    assert d["battle"] == {"attacker": 0, "defender": 1, "target": "1,1,S", "dice": k,
                           "step": "attacker_roll", "attacker_roll": None, "defender_roll": None,
                           "attacker_card": None, "defender_card": None}
    assert s.current_player() == CHANCE
    outs = outcomes(s)
    assert set(outs) == {key({"roll": v}) for v in range(1, 7)}
    for v, p in roll_probs(k).items():
        assert math.isclose(outs[key({"roll": v})], p)
    assert math.isclose(sum(outs.values()), 1.0)


def test_battle_steps_current_player_and_attacker_win() -> None:
    s = start_battle()
    play(s, {"roll": 5})
    d = s.to_json()
    b = d["battle"]
    assert (b["step"], b["attacker_roll"]) == ("defender_roll", 5)
    # "The defender rolls one die"
    assert s.current_player() == CHANCE
    assert outcomes(s) == pytest.approx({key({"roll": v}): 1 / 6 for v in range(1, 7)})
    play(s, {"roll": 2})
    d = s.to_json()
    assert d["battle"]["step"] == "attacker_card" and d["battle"]["defender_roll"] == 2
    # "`current_player()` is whoever decides the current `step`"; "to_move stays the attacker"
    assert s.current_player() == 0 and d["to_move"] == 0
    assert legal_json(s) == {key({"card": c}) for c in START_HAND}
    play(s, {"card": 3})
    d = s.to_json()
    assert d["battle"]["step"] == "defender_card" and d["battle"]["attacker_card"] == 3
    assert s.current_player() == 1 and d["to_move"] == 0
    # "A chosen card stays in its owner's hand (and in `battle`) until the reveal"
    assert sorted(d["hands"][0]) == START_HAND
    play(s, {"card": 4})  # 5+3 = 8 > 2+4 = 6
    d = s.to_json()
    assert d["owner"]["1,1,S"] == 0 and d["battle"] is None and d["phase"] == "act"
    # "both cards are discarded"
    assert sorted(d["hands"][0]) == [0, 2, 4] and sorted(d["hands"][1]) == [0, 2, 3]
    assert (d["to_move"], d["turn"]) == (1, 11)


def test_tie_defender_holds_and_void_decision() -> None:
    # "Otherwise (default on ties: defender holds ...) the defender picks one of the attacker's
    # units adjacent to the target, and it becomes empty"
    s = start_battle()
    play(s, {"roll": 4}, {"roll": 5}, {"card": 3}, {"card": 2})  # 7 vs 7
    d = s.to_json()
    assert d["phase"] == "battle" and d["battle"]["step"] == "void"
    assert d["owner"]["1,1,S"] == 1
    assert s.current_player() == 1 and d["to_move"] == 0
    assert legal_json(s) == {key({"void": [1, 1, "E"]}), key({"void": [2, 1, "N"]})}
    play(s, {"void": [2, 1, "N"]})
    d = s.to_json()
    assert "2,1,N" not in d["owner"] and d["owner"]["1,1,S"] == 1 and d["battle"] is None
    assert (d["phase"], d["to_move"], d["turn"]) == ("act", 1, 11)


def test_ties_option_attacker() -> None:
    s = start_battle(ties="attacker")
    play(s, {"roll": 4}, {"roll": 5}, {"card": 3}, {"card": 2})
    assert s.to_json()["owner"]["1,1,S"] == 0 and s.to_json()["phase"] == "act"


def test_void_is_a_decision_even_with_one_candidate() -> None:
    # "a `void` decision even when only one unit qualifies"
    s = start_battle(owner={"1,1,E": 0, "1,1,S": 1, "0,0,N": 0})
    play(s, {"roll": 1}, {"roll": 6}, {"card": 0}, {"card": 0})
    assert s.current_player() == 1
    assert legal_json(s) == {key({"void": [1, 1, "E"]})}
    play(s, {"void": [1, 1, "E"]})
    d = s.to_json()
    assert d["owner"] == {"1,1,S": 1, "0,0,N": 0} and d["to_move"] == 1


def test_empty_hand_plays_card_zero() -> None:
    # "A player with an empty hand plays {"card": 0}, adding 0."
    s = start_battle(hands=[[], [3]])
    play(s, {"roll": 6}, {"roll": 2})
    assert legal_json(s) == {key({"card": 0})}
    play(s, {"card": 0})
    assert legal_json(s) == {key({"card": 3})}
    play(s, {"card": 3})  # 6 + 0 > 2 + 3
    d = s.to_json()
    assert d["owner"]["1,1,S"] == 0 and d["hands"] == [[], []]


def test_card_not_in_hand_is_illegal() -> None:
    s = start_battle(hands=[[0, 2], [0, 2, 3, 4]])
    play(s, {"roll": 6}, {"roll": 2})
    with pytest.raises(IllegalActionError):
        s.apply_action(s.action_from_json({"card": 4}))


def _obs_battle(a_roll: int, a_card: int | None, d_roll: int, seat):
    s = start_battle()
    play(s, {"roll": a_roll}, {"roll": d_roll})
    if a_card is not None:
        play(s, {"card": a_card})
    return s.observation(seat)


def test_observation_hides_the_other_sides_secret_roll_and_card() -> None:
    # "Each, knowing only their own roll, secretly picks one card ... (attacker first in the
    # action order, hidden from the defender)"; "only the card chosen for the battle in progress
    # is secret"
    # the defender cannot tell the attacker's roll nor card apart
    assert _obs_battle(6, 4, 3, 1) == _obs_battle(1, 0, 3, 1)
    assert _obs_battle(6, None, 3, 1) == _obs_battle(2, None, 3, 1)
    # the attacker cannot tell the defender's roll apart
    assert _obs_battle(5, None, 1, 0) == _obs_battle(5, None, 6, 0)
    assert _obs_battle(5, 2, 1, 0) == _obs_battle(5, 2, 6, 0)
    # each sees their own
    assert _obs_battle(6, 4, 3, 0)["battle"]["attacker_roll"] == 6
    assert _obs_battle(6, 4, 3, 0)["battle"]["attacker_card"] == 4
    assert _obs_battle(6, 4, 3, 1)["battle"]["defender_roll"] == 3
    # "Hands are public knowledge": the chosen card stays visible in the hand, not as the choice
    assert _obs_battle(6, 4, 3, 1)["hands"] == [START_HAND, START_HAND]


def test_after_the_reveal_everything_is_public() -> None:
    # "3. Both are revealed."
    s = start_battle()
    play(s, {"roll": 4}, {"roll": 5}, {"card": 3}, {"card": 2})
    for seat in (0, 1):
        b = s.observation(seat)["battle"]
        assert (b["attacker_roll"], b["defender_roll"], b["attacker_card"], b["defender_card"]) == (4, 5, 3, 2)


# --------------------------------------------------------------------------------------------
# income, rounds
def test_income_after_round_three() -> None:
    # "After every third round the starting player rolls a die: 1-3 every player gains +2, 4-5
    # +3, 6 +4. The placement round is round 1. The chance action carries the die face."
    for face, card in ((1, 2), (3, 2), (4, 3), (5, 3), (6, 4)):
        s = state_of(position(owner={"0,0,N": 0, "2,2,N": 1}, to_move=1, round=3))
        play(s, {"expand": [2, 2, "E"]})
        d = s.to_json()
        assert d["phase"] == "income_roll" and s.current_player() == CHANCE
        assert outcomes(s) == pytest.approx({key({"income": v}): 1 / 6 for v in range(1, 7)})
        play(s, {"income": face})
        d = s.to_json()
        assert (d["phase"], d["round"], d["to_move"], d["turn"]) == ("act", 4, 0, 11)
        assert [sorted(h) for h in d["hands"]] == [sorted([*START_HAND, card])] * 2


@pytest.mark.parametrize(("rnd", "income"), [(2, False), (4, False), (5, False), (6, True), (9, True)])
def test_income_only_after_rounds_multiple_of_three(rnd: int, income: bool) -> None:
    s = state_of(position(owner={"0,0,N": 0, "2,2,N": 1}, to_move=1, round=rnd))
    play(s, {"expand": [2, 2, "E"]})
    d = s.to_json()
    assert (d["phase"] == "income_roll") is income
    if not income:
        assert (d["phase"], d["round"], d["to_move"]) == ("act", rnd + 1, 0)


def test_round_ends_with_highest_seat_still_in() -> None:
    # "a round ends when the highest-numbered seat still in the game has played"
    d = position(players=3, owner={"0,0,N": 0, "2,2,N": 1}, alive=[True, True, False], to_move=1, round=4)
    s = state_of(d)
    play(s, {"expand": [2, 2, "E"]})
    got = s.to_json()
    assert (got["phase"], got["round"], got["to_move"]) == ("act", 5, 0)


# --------------------------------------------------------------------------------------------
# eliminations and end
def test_full_board_eliminates_fewest_units() -> None:
    # "Whenever no triangle is empty and more than two players remain, the player with the fewest
    # units is out and their triangles become empty"; first elimination: "+2 and one +3"
    owner = fill(5, [(None, 1), (0, 39), (1, 35), (2, 25)])
    d = position(players=3, owner=owner, to_move=0, round=5)
    s = state_of(d)
    play(s, {"expand": [0, 0, "N"]})
    got = s.to_json()
    assert got["alive"] == [True, True, False]
    assert not any(v == 2 for v in got["owner"].values()) and len(got["owner"]) == 75
    assert sorted(got["hands"][0]) == sorted(got["hands"][1]) == [0, 2, 2, 3, 3, 4]
    assert (got["phase"], got["to_move"], got["turn"]) == ("act", 1, 11)
    assert not s.is_terminal()


def test_elimination_tie_lowest_hand_total_is_out() -> None:
    # "Ties: the tied player with the lowest total of card values in hand is out"
    owner = fill(5, [(None, 1), (0, 39), (1, 30), (2, 30)])
    d = position(players=3, owner=owner, hands=[[0], [4], [2, 3]], round=5)
    s = state_of(d)
    play(s, {"expand": [0, 0, "N"]})
    got = s.to_json()
    assert got["alive"] == [True, False, True]
    assert sorted(got["hands"][0]) == [0, 2, 3] and sorted(got["hands"][2]) == [2, 2, 3, 3]


def test_elimination_full_tie_goes_to_a_uniform_chance_node() -> None:
    # "still tied, a chance node picks uniformly"; chance `{"out": seat}`; phase `tiebreak`
    owner = fill(5, [(None, 1), (0, 39), (1, 30), (2, 30)])
    d = position(players=3, owner=owner, hands=[[0], [2, 3], [0, 3, 2]], round=5)
    s = state_of(d)
    play(s, {"expand": [0, 0, "N"]})
    assert s.to_json()["phase"] == "tiebreak" and s.current_player() == CHANCE
    assert outcomes(s) == pytest.approx({key({"out": 1}): 0.5, key({"out": 2}): 0.5})
    play(s, {"out": 2})
    got = s.to_json()
    assert got["alive"] == [True, True, False] and got["phase"] == "act"
    assert sorted(got["hands"][1]) == [2, 2, 3, 3]


def test_second_elimination_income() -> None:
    # "after the second, two +2 and one +4"
    owner = fill(6, [(None, 1), (0, 59), (1, 50), (2, 34)])
    d = position(players=4, owner=owner, alive=[True, True, True, False], hands=[[], [3], [0], []], round=7)
    s = state_of(d)
    play(s, {"expand": [0, 0, "N"]})
    got = s.to_json()
    assert got["alive"] == [True, True, False, False]
    assert sorted(got["hands"][0]) == [2, 2, 4] and sorted(got["hands"][1]) == [2, 2, 3, 4]
    assert got["phase"] == "act" and not s.is_terminal()


def test_player_without_units_is_out() -> None:
    # "A player with no unit left after the first round is out too, with the same card income"
    owner = {"1,1,E": 0, "1,1,S": 2, "3,3,N": 1}
    d = position(players=3, owner=owner, round=4)
    s = state_of(d)
    play(s, {"attack": [1, 1, "S"]}, {"roll": 6}, {"roll": 1}, {"card": 4}, {"card": 0})
    got = s.to_json()
    assert got["owner"]["1,1,S"] == 0 and got["alive"] == [True, True, False]
    assert sorted(got["hands"][0]) == [0, 2, 2, 3, 3] and sorted(got["hands"][1]) == [0, 2, 2, 3, 3, 4]
    assert (got["to_move"], got["phase"]) == (1, "act")


def test_attacker_losing_last_unit_ends_two_player_game() -> None:
    # void on the attacker's only unit; "when one player remains" the game ends
    s = start_battle(owner={"1,1,E": 0, "1,1,S": 1})
    play(s, {"roll": 1}, {"roll": 6}, {"card": 0}, {"card": 0}, {"void": [1, 1, "E"]})
    got = s.to_json()
    assert got["phase"] == "over" and got["alive"][0] is False
    assert s.is_terminal() and s.current_player() == TERMINAL
    assert s.returns() == [0.0, 1.0] and s.legal_actions() == []


def test_two_players_full_board_ends_most_units_wins() -> None:
    # "The game ends when no triangle is empty and only two players remain ... Most units wins"
    owner = fill(4, [(None, 1), (0, 33), (1, 30)])
    s = state_of(position(owner=owner))
    play(s, {"expand": [0, 0, "N"]})
    assert s.to_json()["phase"] == "over" and s.returns() == [1.0, 0.0]
    owner = fill(4, [(None, 1), (0, 31), (1, 32)])
    s = state_of(position(owner=owner))
    play(s, {"expand": [0, 0, "N"]})
    assert s.returns() == [0.5, 0.5]  # "ties share"


def test_three_players_one_out_full_board_ends() -> None:
    owner = fill(5, [(None, 1), (0, 49), (1, 50)])
    s = state_of(position(players=3, owner=owner, alive=[True, True, False], hands=[[], [], []]))
    play(s, {"expand": [0, 0, "N"]})
    assert s.is_terminal() and s.returns() == [0.5, 0.5, 0.0]


def test_turn_limit_leaders_share() -> None:
    # "reaching it ends the game and the leaders ... share the win"; "Score for `turn_limit`:
    # units owned."
    owner = {"0,0,N": 0, "0,0,E": 0, "2,2,N": 1, "2,2,E": 1, "3,3,S": 2}
    d = position(players=3, owner=owner, to_move=1, round=4, turn=19)
    s = state_of(d, turn_limit=20)
    play(s, {"expand": [2, 2, "W"]})
    assert s.to_json()["phase"] == "over" and s.is_terminal()
    assert s.returns() == [0.0, 1.0, 0.0]
    s = state_of(dict(d, turn=18), turn_limit=20)
    play(s, {"expand": [2, 2, "W"]})
    assert not s.is_terminal()
    play(s, {"expand": [3, 3, "E"]})  # turn 20 reached with 2, 3, 2 units
    assert s.is_terminal() and s.returns() == [0.0, 1.0, 0.0]
    s = state_of(dict(d, owner={**owner, "3,3,E": 2, "3,3,W": 2}, to_move=0), turn_limit=20)
    play(s, {"expand": [0, 0, "W"]})  # 3, 2, 3 units
    assert s.returns() == [0.5, 0.0, 0.5]


# --------------------------------------------------------------------------------------------
# random playouts cross-checked against the reference model
@pytest.mark.parametrize(("n", "seed", "ties", "teleport"), [
    (2, 21, "defender", "claim"), (2, 22, "attacker", "claim"), (3, 23, "defender", "claim"),
    (4, 24, "defender", "claim"), (2, 25, "defender", "move"), (3, 26, "attacker", "move")])
def test_playout_matches_reference(n: int, seed: int, ties: str, teleport: str) -> None:
    rng = random.Random(seed)
    history: list = []
    s = ludoteca.load_game("tri", players=n, ties=ties, teleport=teleport).new_initial_state()
    ref = Ref(s.to_json(), ties=ties, teleport=teleport)
    for _ in range(4000):
        if s.is_terminal():
            break
        assert s.returns() == [0.0] * n  # "all 0 before the end"
        d = s.to_json()
        if s.is_chance_node():
            assert outcomes(s) == pytest.approx(ref.chance())
        else:
            assert legal_json(s) == expected_legal(d, teleport)
            exp_player = d["to_move"]
            if d["phase"] == "battle":
                b = d["battle"]
                exp_player = b["defender"] if b["step"] in ("defender_card", "void") else b["attacker"]
            assert s.current_player() == exp_player
        assert_required_keys_rebuild(s, KEYS)
        play_random_checked(s, rng, history, ref)
    assert s.is_terminal()
    # "Every position an engine writes, finished games included, is one that engine reads back."
    assert_required_keys_rebuild(s, KEYS)
    assert s.returns() == pytest.approx(winners_share(s.to_json()))
    # "a game is fully determined by its options plus its list of actions (chance outcomes included)"
    r = s.game.new_initial_state()
    for aj in history:
        r.apply_action(r.action_from_json(aj))
    assert r.to_json() == s.to_json() and r.returns() == s.returns()


# --------------------------------------------------------------------------------------------
# "`action_from_json` rejects only ill-formed actions; `apply_action` rejects any action that is
# not legal in the position."
WELL_FORMED = [
    {"place": [2, 2, "N"]}, {"expand": [1, 1, "N"]}, {"attack": [1, 1, "S"]}, {"attack": [1, 1, "W"]},
    {"teleport": {"square": [3, 3], "to": [0, 2, "W"]}}, {"card": 0}, {"card": 3}, {"void": [1, 1, "E"]},
    {"pass": True}, {"roll": 5}, {"roll": 1}, {"income": 4}, {"out": 1}]


def test_action_from_json_accepts_every_well_formed_action_anywhere() -> None:
    owner = {**BATTLE_OWNER, **square(3, 3, 0)}
    states = [ludoteca.load_game("tri", players=2).new_initial_state(), state_of(position(owner=owner))]
    s = state_of(position(owner=owner))
    play(s, {"attack": [1, 1, "S"]})
    states.append(s.clone())  # attacker_roll (chance)
    play(s, {"roll": 4}, {"roll": 5})
    states.append(s.clone())  # attacker_card
    play(s, {"card": 3}, {"card": 2})
    states.append(s.clone())  # void
    s = state_of(position(owner={"0,0,N": 0, "2,2,N": 1}, to_move=1, round=3))
    play(s, {"expand": [2, 2, "E"]})
    states.append(s)  # income_roll (chance)
    problems = [p for st in states for p in parse_then_apply_problems(st, WELL_FORMED)]
    assert not problems, "\n".join(problems)


def test_unknown_option_is_a_value_error_naming_it() -> None:
    # "Unknown option / bad value -> ValueError naming it" (docs/architecture.md)
    with pytest.raises(ValueError, match="frobnicate"):
        ludoteca.load_game("tri", players=2, frobnicate=1)
    with pytest.raises(ValueError, match="turn_limit"):
        ludoteca.load_game("tri", players=2, turn_limit="soon")


def test_highest_seat_out_on_its_own_turn_still_ends_the_round() -> None:
    # "a round ends when the highest-numbered seat still in the game has played": seat 2 attacks
    # with its only unit in round 3, loses it to a void and is out -> the round is over and "after
    # every third round" comes the income roll; the others first gain "+2 and one +3"
    owner = {"1,1,E": 2, "1,1,S": 1, "3,3,N": 0}
    s = state_of(position(players=3, owner=owner, to_move=2, round=3))
    play(s, {"attack": [1, 1, "S"]}, {"roll": 1}, {"roll": 6}, {"card": 0}, {"card": 0})
    assert s.current_player() == 1 and legal_json(s) == {key({"void": [1, 1, "E"]})}
    play(s, {"void": [1, 1, "E"]})
    got = s.to_json()
    assert got["alive"] == [True, True, False] and got["owner"] == {"1,1,S": 1, "3,3,N": 0}
    assert got["phase"] == "income_roll" and s.current_player() == CHANCE
    play(s, {"income": 6})
    got = s.to_json()
    assert (got["phase"], got["round"], got["to_move"], got["turn"]) == ("act", 4, 0, 11)
    assert sorted(got["hands"][0]) == [0, 2, 2, 3, 3, 4, 4]
    assert sorted(got["hands"][1]) == [2, 2, 3, 3, 4, 4]  # played its 0 in the battle


# --------------------------------------------------------------------------------------------
# Conventions, "Reading a position": "a reader refuses what breaks a rule, and accepts any
# well-typed value of a key whose value these rules do not fix: `to_move` at a chance node and
# at `over` ... It writes its own convention back."
@pytest.mark.parametrize("to_move", [0, 1, 2])
def test_income_roll_with_any_to_move(to_move: int) -> None:
    d = position(players=3, owner={"0,0,N": 0, "2,2,N": 1, "4,4,S": 2}, to_move=to_move, round=3,
                 phase="income_roll")
    s = state_of(d)
    assert s.current_player() == CHANCE
    assert outcomes(s) == pytest.approx({key({"income": v}): 1 / 6 for v in range(1, 7)})
    again = s.game.state_from_json(s.to_json())  # its own convention reads back
    assert again.to_json() == s.to_json()
    play(s, {"income": 2})  # "1-3 every player gains +2"
    got = s.to_json()
    # "seat 0 starts; a round is one turn of every player still in the game, in seat order"
    assert (got["phase"], got["round"], got["to_move"]) == ("act", 4, 0)
    assert [sorted(h) for h in got["hands"]] == [[0, 2, 2, 3, 4]] * 3


@pytest.mark.parametrize("to_move", [0, 1, 2])
def test_tiebreak_with_any_to_move(to_move: int) -> None:
    # a full board, three players, seats 1 and 2 tied on units and cards: "a chance node picks
    # uniformly"
    owner = fill(5, [(0, 40), (1, 30), (2, 30)])
    s = state_of(position(players=3, owner=owner, to_move=to_move, round=5, phase="tiebreak"))
    assert s.current_player() == CHANCE
    assert outcomes(s) == pytest.approx({key({"out": 1}): 0.5, key({"out": 2}): 0.5})
    assert s.game.state_from_json(s.to_json()).to_json() == s.to_json()
    play(s, {"out": 2})
    got = s.to_json()
    assert got["alive"] == [True, True, False] and got["phase"] == "act"
    assert got["alive"][got["to_move"]]


@pytest.mark.parametrize("to_move", [0, 1])
def test_over_with_any_to_move(to_move: int) -> None:
    owner = fill(4, [(0, 40), (1, 24)])  # "no triangle is empty and only two players remain"
    s = state_of(position(owner=owner, to_move=to_move, phase="over"))
    assert s.is_terminal() and s.current_player() == TERMINAL
    assert s.returns() == [1.0, 0.0]  # "Most units wins"
    assert s.game.state_from_json(s.to_json()).to_json() == s.to_json()


@pytest.mark.parametrize("bad", ["1", 1.0, None, 9, -1])
def test_chance_node_to_move_must_still_be_well_typed(bad) -> None:
    d = position(players=3, owner={"0,0,N": 0, "2,2,N": 1, "4,4,S": 2}, to_move=bad, round=3, phase="income_roll")
    with pytest.raises(ValueError, match="to_move"):
        state_of(d)


def test_over_only_when_the_game_has_ended() -> None:
    # "The game ends when no triangle is empty and only two players remain, or when one player
    # remains"; "Every game has a turn_limit option ...; reaching it ends the game".
    not_ended = position(owner={"0,0,N": 0, "2,2,N": 1, "2,2,E": 1}, turn=3, phase="over")
    with pytest.raises(ValueError, match="over"):
        state_of(not_ended)
    assert state_of(not_ended, turn_limit=3).returns() == [0.0, 1.0]
    three_full = position(players=3, owner=fill(5, [(0, 40), (1, 30), (2, 30)]), phase="over")
    with pytest.raises(ValueError, match="over"):
        state_of(three_full)
    one_left = position(players=3, owner={"0,0,N": 2}, alive=[False, False, True], phase="over", to_move=0)
    assert state_of(one_left).returns() == [0.0, 0.0, 1.0]


# --------------------------------------------------------------------------------------------
# Option `teleport`: "claim" (default) or "move" ("one of the square's four triangles, chosen by
# the player, becomes empty and its unit appears on the target, so the square opens; the action
# carries "from": "N"|"E"|"S"|"W", the side of the square it leaves")
def test_teleport_option_values() -> None:
    assert ludoteca.load_game("tri", players=2).options["teleport"] == "claim"
    with pytest.raises(ValueError, match="teleport"):
        ludoteca.load_game("tri", players=2, teleport="swap")


def test_teleport_move() -> None:
    owner = {**square(3, 3, 0), "1,1,N": 1, "3,2,E": 1}
    d = position(owner=owner)
    s = state_of(d, teleport="move")
    assert legal_json(s) == expected_legal(d, "move")
    # "[3,2,E]" touches "[3,3,W]", in seat 0's closed square: no attack yet
    s1 = state_of(dict(d, to_move=1), teleport="move")
    assert key({"attack": [3, 3, "W"]}) not in legal_json(s1)
    a = {"teleport": {"square": [3, 3], "to": [1, 2, "W"], "from": "N"}}
    assert s.action_to_json(s.action_from_json(a)) == a
    play(s, a)
    got = s.to_json()
    assert got["owner"] == {"3,3,E": 0, "3,3,S": 0, "3,3,W": 0, "1,2,W": 0, "1,1,N": 1, "3,2,E": 1}
    assert got["teleports_used"] == ["3,3"] and (got["to_move"], got["turn"]) == (1, 11)
    # the square is open: its triangles can be attacked, the empty one claimed
    assert key({"attack": [3, 3, "W"]}) in legal_json(s)
    assert legal_json(s) == expected_legal(got, "move")


def test_teleport_move_actions_parse_anywhere() -> None:
    owner = {**BATTLE_OWNER, **square(3, 3, 0)}
    s = state_of(position(owner=owner), teleport="move")
    well_formed = [{"teleport": {"square": [3, 3], "to": [0, 2, "W"], "from": f}} for f in DIRS]
    assert not parse_then_apply_problems(s, well_formed)
    play(s, {"attack": [1, 1, "S"]})
    assert not parse_then_apply_problems(s, well_formed)


# --------------------------------------------------------------------------------------------
# Events, from RULES.md "Cards": "Hands are public knowledge (all gains are public and
# used cards are shown); only the card chosen for the battle in progress is secret", and "Battles":
# each side rolls, "knowing only their own roll, secretly picks one card ... (attacker first in the
# action order, hidden from the defender)"; "Both are revealed".
@pytest.mark.parametrize(("n", "seed"), [(2, 11), (3, 12), (4, 13)])
def test_only_battle_secrets_are_secret_and_the_reveal_shows_them(n: int, seed: int) -> None:
    game = ludoteca.load_game("tri", players=n)
    s = game.new_initial_state()
    rng = random.Random(seed)
    secrets: dict[str, object] = {}
    reveals = 0
    while not s.is_terminal():
        legal = s.legal_actions()
        if s.is_chance_node():
            outcomes, probs = zip(*s.chance_outcomes(), strict=True)
            a = rng.choices(outcomes, probs)[0]
        else:
            a = rng.choice(legal)
        before = s.to_json()
        events = s.apply_action(a)
        assert events[0].kind in ("move", "chance")
        for e in events:
            data = e.view(None, everything=True)
            assert json.loads(json.dumps(data)) == data  # language-neutral: JSON fields only
            if not e.secret:
                continue
            # the only secrets: a battle roll (seen by the seat that rolled) or the attacker's card
            b = before["battle"]
            seat = e.data["seat"]
            assert e.to == frozenset({seat}) and e.public == {"seat": seat}
            if e.kind == "chance":
                role = "attacker" if b["step"] == "attacker_roll" else "defender"
                assert b[role] == seat
                secrets[f"{role}_roll"] = e.data["outcome"]["roll"]
            else:
                assert e.kind == "move" and b["step"] == "attacker_card" and b["attacker"] == seat
                secrets["attacker_card"] = e.data["action"]["card"]
            for viewer in [None, *range(n)]:
                if viewer != seat:
                    assert e.view(viewer) == {"kind": e.kind, "seat": seat, "secret": True}
        for e in events:
            if e.kind == "battle":  # public, with what was secret until now
                reveals += 1
                assert not e.secret
                assert {k: e.data[k] for k in secrets} == secrets
                a_tot = e.data["attacker_roll"] + e.data["attacker_card"]
                d_tot = e.data["defender_roll"] + e.data["defender_card"]
                assert (e.data["attacker_total"], e.data["defender_total"]) == (a_tot, d_tot)
                assert e.data["attacker_won"] == (a_tot > d_tot)  # default ties: the defender holds
                secrets = {}
        if events[-1].kind == "end":
            assert events[-1].data["reason"] == s.end_reason()
    assert reveals > 0
