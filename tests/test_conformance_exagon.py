"""Conformance of the EXAGON engine with /work/shared/RULES.md section 4, written from RULES.md alone.

Positions are self-contained JSON ("A position is self-contained: its `tiles` list may hold any
tiles"), so most scenarios use small hand-made tile sets whose geometry is worked out from the
RULES.md "Geometry" paragraph. Actions are applied as canonical JSON, results compared key by key
with what a quoted RULES.md sentence implies. ``placements`` and ``XRef`` are an independent
reference model of the RULES.md text used to cross-check random playouts (with the hourglass).
"""

from __future__ import annotations

import copy
import json
import math
import random

import pytest

import ludoteca
from ludoteca import CHANCE, TERMINAL, IllegalActionError
from tests.conformance import key, legal_json, parse_then_apply_problems

# "directions 0:[+1,0] 1:[+1,-1] 2:[0,-1] 3:[-1,0] 4:[-1,+1] 5:[0,+1]"
DIRS = [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)]
KEYS = ("game", "players", "tiles", "table", "hands", "aside", "to_move", "phase", "turn",
        "placed_this_turn", "bonus", "time_left", "carry", "scores")
# "2 players 20 each; 3 players 13 each and the remaining tile starts on the table at [0, 0];
# 4 players 10 each; 5 players 8 each."
DEAL = {2: 20, 3: 13, 4: 10, 5: 8}
STOP = json.dumps({"stop": True})
PASS = json.dumps({"pass": True})


# --------------------------------------------------------------------------------------------
# helpers
def T(i: int, sides: list, sp: int = 3) -> dict:
    """A tile in the position's tile form; "The central star shows the sum of the six numbers (a
    Jolly or Exagon area counts 0)"."""
    return {"id": i, "sides": sides, "star": sum(x for x in sides if isinstance(x, int)), "star_points": sp}


def add(p, d: int):
    return [p[0] + DIRS[d][0], p[1] + DIRS[d][1]]


def rot_facing(side: int, d: int) -> int:
    """The rotation k with which side ``side`` faces direction ``d``: "(i + k) % 6"."""
    return (d - side) % 6


def position(tiles: list, table: list, hands: list, **over) -> dict:
    n = len(hands)
    d = {"game": "exagon", "players": n, "tiles": tiles, "table": table, "hands": hands, "aside": [],
         "to_move": 0, "phase": "turn", "turn": 7, "placed_this_turn": 0, "bonus": 0,
         "time_left": None, "carry": None, "scores": None}
    d.update(over)
    return d


def load(d: dict, **opts):
    opts.setdefault("clock", None if d["time_left"] is None else 60)
    if d["scores"] is not None:
        opts.setdefault("tournament", True)
    return ludoteca.load_game("exagon", players=d["players"], **opts)


def state_of(d: dict, **opts):
    return load(d, **opts).state_from_json(copy.deepcopy(d))


def play(s, *actions) -> None:
    """Apply canonical JSON actions; ``elapsed`` goes to ``apply_action(elapsed=...)``."""
    for a in actions:
        s.apply_json(a)


def place(tile: int, at, rot: int, **extra) -> dict:
    return {"place": {"tile": tile, "at": list(at), "rot": rot}, **extra}


def placed_key(tile: int, at, rot: int) -> str:
    return key(place(tile, at, rot))


# --------------------------------------------------------------------------------------------
# reference model: matching and placements
def numbers(tile: dict) -> set[int]:
    return {x for x in tile["sides"] if isinstance(x, int)}


def match(a, ta: dict, b, tb: dict) -> bool:
    """"touching sides match when their numbers are equal. A Jolly area matches any number not
    already on the Jolly tile itself, and another Jolly. An Exagon area matches nothing, not even
    another Exagon area.\""""
    if a == "X" or b == "X":
        return False
    if a == "J" and b == "J":
        return True
    if a == "J":
        return b not in numbers(ta)
    if b == "J":
        return a not in numbers(tb)
    return a == b


def facing(tile: dict, rot: int, d: int):
    """"Side i (0-5) of a tile with rotation k faces direction (i + k) % 6\""""
    return tile["sides"][(d - rot) % 6]


def placements(tiles: dict, table: list, hand: list, lenient: bool = False) -> dict[str, int]:
    """Every legal placement -> its number of connections: "A tile may be placed on an empty cell
    next to at least one tile, in any rotation, only if every side it touches matches"; "its
    connections are the number of tiles it touches". With ``lenient`` (option `matching`
    "lenient"): "a tile may touch sides that do not match, it needs at least one matching side to
    be placed, and its connections are its matching sides\""""
    board = {tuple(e["at"]): e for e in table}
    cells = {tuple(add(p, d)) for p in board for d in range(6)} - set(board)
    out = {}
    for cell in cells:
        touching = [(d, board[tuple(add(cell, d))]) for d in range(6) if tuple(add(cell, d)) in board]
        for t in hand:
            tile = tiles[t]
            for rot in range(6):
                # "Two touching tiles meet where a side facing d touches the neighbour's side facing
                # (d + 3) % 6."
                matching = sum(match(facing(tile, rot, d), tile, facing(tiles[e["tile"]], e["rot"], (d + 3) % 6),
                                     tiles[e["tile"]]) for d, e in touching)
                if lenient and matching >= 1:
                    out[placed_key(t, cell, rot)] = matching
                elif not lenient and matching == len(touching):
                    out[placed_key(t, cell, rot)] = len(touching)
    return out


def penalty(tiles: dict, hand: list) -> int:
    """"the star points of the tiles left in hand plus 3 for each Jolly tile left\""""
    return sum(tiles[t]["star_points"] + (3 if "J" in tiles[t]["sides"] else 0) for t in hand)


def blocked_winners(tiles: dict, hands: list) -> list[int]:
    """"fewest tiles wins, ties broken by the lower tournament penalty, then shared\""""
    rank = [(len(h), penalty(tiles, h)) for h in hands]
    best = min(rank)
    return [i for i, r in enumerate(rank) if r == best]


def share(winners: list[int], n: int) -> list[float]:
    return [1 / len(winners) if i in winners else 0.0 for i in range(n)]


def expected_legal(d: dict) -> set[str]:
    tiles = {t["id"]: t for t in d["tiles"]}
    me = d["to_move"]
    hand = d["hands"][me]
    if d["phase"] == "opening" and not d["table"]:
        # "the first player puts any one of their tiles at [0, 0]" (rotation: see coverage notes)
        return {key({"tile": t, "at": [0, 0]}) for t in hand}
    places = set(placements(tiles, d["table"], hand, lenient=d.get("matching") == "lenient"))
    if d["phase"] == "opening" or d["placed_this_turn"] == 0:
        # "The first placement of a turn is compulsory if any placement is legal; a player with
        # no legal placement then plays pass."
        return places or {PASS}
    # "After the first placement `stop` is always legal and `pass` never"; "the player may spend
    # it to give one of their tiles to a player who holds exactly one tile"
    gives = set()
    # "give one of their tiles": no exception for a giver holding only one
    if d["bonus"] >= 1:
        gives = {key({"give": {"tile": t, "to": p}}) for t in hand for p in range(d["players"])
                 if p != me and len(d["hands"][p]) == 1}
    return places | gives | {STOP}


def project(d: dict, legal: set[str]) -> set[str]:
    """On the opening's first step compare (tile, at) only."""
    if d["phase"] == "opening" and not d["table"]:
        return {key({"tile": json.loads(a)["place"]["tile"], "at": json.loads(a)["place"]["at"]}) for a in legal}
    return legal


class XRef:
    """The RULES.md text as a model of the required position keys (one-shot game)."""

    def __init__(self, d: dict, clock, turn_limit: int = 1000, lenient: bool = False, carry_cap="clock"):
        self.d = copy.deepcopy({k: d[k] for k in KEYS})
        self.tiles = {t["id"]: t for t in d["tiles"]}
        self.clock = clock
        self.turn_limit = turn_limit
        self.lenient = lenient
        # "carry ... at most carry_cap seconds (option carry_cap: ... null for no cap; default: equal
        # to clock ...; ignored without a clock)"
        self.carry_cap = clock if carry_cap == "clock" else carry_cap
        self.passes = 0
        self.winners: list[int] | None = None

    def over(self, winners: list[int]) -> None:
        self.d["phase"] = "over"
        self.winners = winners

    def end_turn(self, carry) -> None:
        d, n = self.d, self.d["players"]
        d["turn"] += 1
        d["to_move"] = (d["to_move"] + 1) % n
        d["placed_this_turn"] = 0
        d["bonus"] = 0  # "Unspent bonuses are lost when the turn ends."
        if self.clock is None:
            d["time_left"] = d["carry"] = None
        else:
            # "time_left at the start of a turn is clock + carry", "where carry is what the previous
            # turn left, at most carry_cap seconds"
            if self.carry_cap is not None:
                carry = min(carry, self.carry_cap)
            d["carry"] = carry
            d["time_left"] = self.clock + carry
        if self.passes >= n:
            # "If every player passes in a row with no tile placed, the game is blocked"
            self.over(blocked_winners(self.tiles, d["hands"]))
        elif d["turn"] >= self.turn_limit:
            self.over(blocked_winners(self.tiles, d["hands"]))

    def apply(self, a: dict) -> None:
        d = self.d
        me = d["to_move"]
        if d["phase"] == "opening":
            self.passes = self.passes + 1 if "pass" in a else 0
            if "place" in a:
                p = a["place"]
                d["hands"][me].remove(p["tile"])
                d["table"].append({"tile": p["tile"], "at": p["at"], "rot": p["rot"]})
            attach = len(d["table"]) >= 2
            d["turn"] += 1  # "Each opening step counts as a turn."
            d["to_move"] = (me + 1) % d["players"]
            if "place" in a and not d["hands"][me]:
                self.over([me])  # "a player who places their last tile wins at once"
                return
            if self.passes >= d["players"] or d["turn"] >= self.turn_limit:
                # "If every player passes in a row with no tile placed, the game is blocked";
                # turn_limit compares against `turn`, which the opening steps count.
                self.over(blocked_winners(self.tiles, d["hands"]))
                return
            if attach:
                d["phase"] = "turn"
                # "The opening steps have no clock": the first clocked turn starts with no carry
                d["carry"] = None if self.clock is None else 0.0
                d["time_left"] = None if self.clock is None else float(self.clock)
            return
        assert d["phase"] == "turn"
        if "timeout" in a:
            # "a turn that ends by timeout carries nothing"; "A turn ended by timeout with no tile
            # placed counts as a pass for the blocked rule."
            self.passes = self.passes + 1 if d["placed_this_turn"] == 0 else 0
            self.end_turn(0.0)
            return
        if self.clock is not None:
            d["time_left"] -= a.get("elapsed", 0)  # "which `time_left` loses"
        if "pass" in a:
            self.passes += 1
            self.end_turn(d["time_left"])
        elif "stop" in a:
            self.passes = 0
            self.end_turn(d["time_left"])
        elif "give" in a:
            g = a["give"]
            d["bonus"] -= 1
            d["hands"][me].remove(g["tile"])
            d["hands"][g["to"]].append(g["tile"])
            # "so does a player who empties their hand by giving away their last tile"
            if not d["hands"][me]:
                self.over([me])
        else:
            p = a["place"]
            conn = placements(self.tiles, d["table"], [p["tile"]], self.lenient)[placed_key(p["tile"], p["at"],
                                                                                         p["rot"])]
            d["hands"][me].remove(p["tile"])
            d["table"].append({"tile": p["tile"], "at": p["at"], "rot": p["rot"]})
            d["placed_this_turn"] += 1
            self.passes = 0
            # "a player who places their last tile wins at once; so does a perfect fit"
            if not d["hands"][me] or conn == 6:
                self.over([me])
                return
            # "A tile with 3, 4, 5 connections also earns 1, 2, 3 bonus tiles."
            d["bonus"] += {3: 1, 4: 2, 5: 3}.get(conn, 0)
            if conn == 1:
                # "A tile with 1 connection ends the turn, unless the player spends a bonus on it."
                if d["bonus"] >= 1:
                    d["bonus"] -= 1
                else:
                    self.end_turn(d["time_left"])

    def check(self, got: dict) -> None:
        got = {k: got[k] for k in KEYS}
        exp = copy.deepcopy(self.d)
        for x in (got, exp):
            x["hands"] = [sorted(h) for h in x["hands"]]
            x["table"] = sorted(key(e) for e in x["table"])
            if x["phase"] == "over":  # counters after the end are not settled
                for k in ("to_move", "turn", "placed_this_turn", "bonus", "time_left", "carry"):
                    x.pop(k)
        for k in ("time_left", "carry"):
            if k in exp and exp[k] is not None and got[k] is not None:
                assert math.isclose(got[k], exp[k], abs_tol=1e-6), k
                got[k] = exp[k]
        assert got == exp


# --------------------------------------------------------------------------------------------
# hand-made tiles for scenarios (all different under rotation)
A = T(0, [1, 2, 3, 4, 5, 6])
FILLER = T(40, [7, 7, 7, 7, 7, 8])  # seat 1's tile where seat 1 does not matter
ONES = [T(10 + v, [1, 1, 1, 1, 1, v]) for v in range(2, 10)]  # sides 0-4 are 1, side 5 is v


def ring(hole, dirs: list[int], first_id: int = 10) -> tuple[list, list]:
    """Tiles of ONES around ``hole`` at the given directions, odd side pointing away from it."""
    tiles, table = [], []
    for i, d in enumerate(dirs):
        t = ONES[first_id - 10 + i]
        tiles.append(t)
        table.append({"tile": t["id"], "at": add(hole, d), "rot": rot_facing(5, d)})
    return tiles, table


# --------------------------------------------------------------------------------------------
# options, default tile set
def test_options_defaults_and_errors() -> None:
    g = ludoteca.load_game("exagon", players=2)
    # "a turn lasts `clock` seconds (option; default 60 ...)"; option `tournament`; turn_limit 1000
    assert g.options["clock"] == 60 and g.options["turn_limit"] == 1000
    assert not g.options["tournament"]
    for bad in ({"players": 1}, {"players": 6}, {"players": 2, "hourglass": 3}):
        with pytest.raises(ValueError):
            ludoteca.load_game("exagon", **bad)
    assert issubclass(IllegalActionError, ValueError)


def rotations(sides: list) -> set[tuple]:
    return {tuple(sides[i:] + sides[:i]) for i in range(6)}


def test_default_tile_set_meets_the_seed() -> None:
    # "40 hexagonal tiles, all different (also under rotation) ... each holding a number 1-9 ...
    # The central star shows the sum ... one tile's star is 39, and it has six numbers. Three tiles
    # have one Jolly area and three have one Exagon area ... star points (1-6 coloured tips)"
    tiles = ludoteca.load_game("exagon", players=2).new_initial_state().to_json()["tiles"]
    assert len(tiles) == 40 and len({t["id"] for t in tiles}) == 40
    seen: set[tuple] = set()
    for t in tiles:
        assert len(t["sides"]) == 6
        assert not rotations(t["sides"]) & seen
        seen |= rotations(t["sides"])
        specials = [x for x in t["sides"] if not isinstance(x, int)]
        assert all(1 <= x <= 9 for x in t["sides"] if isinstance(x, int))
        assert specials in ([], ["J"], ["X"])
        assert t["star"] == sum(x for x in t["sides"] if isinstance(x, int))
        assert 1 <= t["star_points"] <= 6
    assert sum("J" in t["sides"] for t in tiles) == 3 and sum("X" in t["sides"] for t in tiles) == 3
    nines = [t for t in tiles if t["star"] == 39]
    assert len(nines) == 1 and all(isinstance(x, int) for x in nines[0]["sides"])


# --------------------------------------------------------------------------------------------
# deal
def deal_all(s, pick=None) -> list[int]:
    """Play the deal; returns the tile ids in deal order. ``pick(legal_ids)`` chooses."""
    order = []
    while s.is_chance_node():
        outs = [(s.action_to_json(a), p) for a, p in s.chance_outcomes()]
        ids = sorted(o["deal"] for o, _ in outs)
        t = pick(ids) if pick else ids[0]
        order.append(t)
        play(s, {"deal": t})
    return order


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_deal_round_robin_uniform_and_who_starts(n: int) -> None:
    rng = random.Random(n)
    s = ludoteca.load_game("exagon", players=n, clock=None).new_initial_state()
    d0 = s.to_json()
    assert (d0["phase"], d0["table"], d0["hands"], d0["turn"]) == ("deal", [], [[]] * n, 0)
    assert d0["scores"] is None  # "`null` outside tournament mode"
    all_ids = {t["id"] for t in d0["tiles"]}
    dealt: list[int] = []
    k = 0
    while s.is_chance_node():
        outs = {s.action_to_json(a)["deal"]: p for a, p in s.chance_outcomes()}
        # "the k-th chance node gives a uniformly chosen undealt tile to seat k % n"
        assert set(outs) == all_ids - set(dealt)
        assert all(math.isclose(p, 1 / len(outs)) for p in outs.values())
        t = rng.choice(sorted(outs))
        play(s, {"deal": t})
        d = s.to_json()
        if k < DEAL[n] * n:
            assert t in d["hands"][k % n]
        else:  # "one more node picks it as the table tile (at [0, 0], rotation 0)"
            assert d["table"] == [{"tile": t, "at": [0, 0], "rot": 0}]
        dealt.append(t)
        k += 1
    d = s.to_json()
    assert [len(h) for h in d["hands"]] == [DEAL[n]] * n
    assert k == 40 and d["aside"] == [] and d["phase"] == "opening" and d["turn"] == 0
    assert (d["table"] != []) is (n == 3)
    nine = next(t["id"] for t in d["tiles"] if t["star"] == 39)
    # "The holder of the 39 tile starts (if it is the table tile, seat 0 starts)"
    holder = next((i for i, h in enumerate(d["hands"]) if nine in h), 0)
    assert d["to_move"] == holder and s.current_player() == holder
    # "after the deal the game has no hidden information"
    assert s.observation(0)["hands"] == d["hands"]


def test_three_players_39_on_the_table_seat_0_starts() -> None:
    s = ludoteca.load_game("exagon", players=3, clock=None).new_initial_state()
    nine = next(t["id"] for t in s.to_json()["tiles"] if t["star"] == 39)
    deal_all(s, lambda ids: next(i for i in ids if i != nine) if ids != [nine] else nine)
    d = s.to_json()
    assert d["table"] == [{"tile": nine, "at": [0, 0], "rot": 0}]
    assert d["to_move"] == 0 and d["phase"] == "opening"


def write_tiles(tmp_path, tiles) -> str:
    p = tmp_path / "tiles.json"
    p.write_text(json.dumps(tiles))
    return str(p)


def default_tiles() -> list:
    return ludoteca.load_game("exagon", players=2).new_initial_state().to_json()["tiles"]


def test_designer_set_with_leftovers_set_aside_and_highest_star_starts(tmp_path) -> None:
    # "For a designer's set with two or more leftovers, all of them are set aside unseen (`aside`,
    # the only hidden information: observations omit it) and there is no table tile. A set without
    # a 39: the holder of the highest star in a hand starts (ties: the lowest seat)."
    tiles = [t for t in default_tiles() if t["star"] != 39][:23]
    game = ludoteca.load_game("exagon", players=3, clock=None, tiles=write_tiles(tmp_path, tiles))
    s = game.new_initial_state()
    assert sorted(t["id"] for t in s.to_json()["tiles"]) == sorted(t["id"] for t in tiles)
    nodes = 0
    while s.is_chance_node():
        nodes += 1
        play(s, {"deal": min(s.action_to_json(a)["deal"] for a, _ in s.chance_outcomes())})
    d = s.to_json()
    assert nodes == 21 and [len(h) for h in d["hands"]] == [7, 7, 7]
    assert len(d["aside"]) == 2 and d["table"] == [] and d["phase"] == "opening"
    assert sorted(d["aside"] + [t for h in d["hands"] for t in h]) == sorted(t["id"] for t in tiles)
    stars = {t["id"]: t["star"] for t in tiles}
    best = max(stars[t] for h in d["hands"] for t in h)
    assert d["to_move"] == min(i for i, h in enumerate(d["hands"]) if any(stars[t] == best for t in h))
    for seat in (0, 1, 2, None):
        obs = s.observation(seat)
        assert not obs.get("aside")
        assert obs["hands"] == d["hands"]


def test_designer_set_with_one_leftover_has_a_table_tile(tmp_path) -> None:
    tiles = default_tiles()[:23]
    s = ludoteca.load_game("exagon", players=2, clock=None, tiles=write_tiles(tmp_path, tiles)).new_initial_state()
    deal_all(s)
    d = s.to_json()
    assert [len(h) for h in d["hands"]] == [11, 11] and len(d["table"]) == 1 and d["aside"] == []


@pytest.mark.parametrize("change", [
    lambda ts: ts.append(dict(ts[0], id=99)),  # the same tile twice
    lambda ts: ts.append(dict(T(99, ts[0]["sides"][1:] + ts[0]["sides"][:1]))),  # a rotation of one
    lambda ts: ts.__setitem__(0, dict(ts[0], star=ts[0]["star"] + 1)),  # star != sum
    lambda ts: ts.__setitem__(0, T(ts[0]["id"], [0, 1, 2, 3, 4, 5])),  # number 0
    lambda ts: ts.__setitem__(0, T(ts[0]["id"], [10, 1, 2, 3, 4, 5])),  # number 10
    lambda ts: ts.__setitem__(0, T(ts[0]["id"], ["J", "J", 2, 3, 4, 5])),  # two Jolly areas
    lambda ts: ts.__setitem__(0, T(ts[0]["id"], ["J", "X", 2, 3, 4, 5])),  # a Jolly and an Exagon
    lambda ts: ts.__setitem__(0, T(ts[0]["id"], [1, 2, 3, 4, 5, 7], sp=7)),  # star points 7
    lambda ts: ts.__delitem__(slice(1, None)),  # not enough tiles for two players
])
def test_designer_set_is_validated(tmp_path, change) -> None:
    # "A designer's set is validated (all different under rotation, numbers 1-9 or at most one
    # J/X per tile, star = sum, star points 0-6, enough tiles for the players)"
    tiles = [t for t in default_tiles() if "J" not in t["sides"] and "X" not in t["sides"]][:10]
    tiles = [dict(t) for t in tiles]
    change(tiles)
    with pytest.raises(ValueError):
        ludoteca.load_game("exagon", players=2, tiles=write_tiles(tmp_path, tiles))


def test_designer_set_star_points_zero_and_no_39_are_valid(tmp_path) -> None:
    # "star points 0-6"; "need not have 40 tiles or a 39"
    tiles = [T(0, [1, 1, 1, 1, 1, 2], sp=0), T(1, [1, 1, 1, 1, 1, 3], sp=6), T(2, [2, 2, 2, 2, 2, "J"], sp=0)]
    game = ludoteca.load_game("exagon", players=2, clock=None, tiles=write_tiles(tmp_path, tiles))
    assert game.new_initial_state().to_json()["tiles"] == tiles


def test_position_tiles_may_hold_any_tiles() -> None:
    # "A position is self-contained: its `tiles` list may hold any tiles" -- the set rules are for
    # the `tiles` option ("A designer's set is validated (all different under rotation, ...)"):
    # a position whose tiles repeat one another under rotation is read and played.
    tiles = [T(0, [1, 1, 1, 1, 1, 1]), T(1, [1, 1, 1, 1, 1, 2]), T(2, [1, 1, 1, 1, 2, 1]),
             T(3, [2, 1, 1, 1, 1, 1]), T(4, [1, 2, 1, 1, 1, 1])]
    d = position(tiles, [{"tile": 0, "at": [0, 0], "rot": 0}], [[1, 2], [3, 4]])
    s = state_of(d)
    assert {k: s.to_json()[k] for k in KEYS} == d
    legal = legal_json(s)
    assert placed_key(1, [1, 0], 0) in legal and placed_key(2, [1, 0], 0) in legal
    play(s, place(1, [1, 0], 0))  # one connection: the turn ends
    assert (s.to_json()["to_move"], s.to_json()["turn"]) == (1, 8)


# --------------------------------------------------------------------------------------------
# opening
def test_opening_two_players() -> None:
    # "the first player puts any one of their tiles at [0, 0] and the turn passes; the next player
    # must attach one tile touching it, and the turn passes."; "Each opening step counts as a turn."
    # "The opening steps have no clock."
    s = ludoteca.load_game("exagon", players=2).new_initial_state()
    deal_all(s)
    d = s.to_json()
    first = d["to_move"]
    legal = legal_json(s)
    assert project(d, legal) == expected_legal(d)
    assert STOP not in legal and PASS not in legal
    # no clock in the opening: a large elapsed is accepted; timeout is refused
    t0 = d["hands"][first][0]
    with pytest.raises(IllegalActionError):
        play(s, {"timeout": True})
    play(s, place(t0, [0, 0], 0, elapsed=500))
    d = s.to_json()
    assert d["table"] == [{"tile": t0, "at": [0, 0], "rot": 0}]
    assert (d["phase"], d["to_move"], d["turn"]) == ("opening", 1 - first, 1)
    assert legal_json(s) == expected_legal(d)  # attach: matching placements touching [0, 0]
    cells = {tuple(json.loads(a)["place"]["at"]) for a in legal_json(s)}
    assert cells <= {tuple(add([0, 0], k)) for k in range(6)}
    a = sorted(legal_json(s))[0]
    play(s, json.loads(a) | {"elapsed": 500})
    d = s.to_json()
    assert (d["phase"], d["to_move"], d["turn"], d["placed_this_turn"], d["bonus"]) == ("turn", first, 2, 0, 0)
    # first clocked turn: carry from the unclocked opening is nothing
    assert (d["time_left"], d["carry"]) == (60, 0)


def test_opening_three_players_first_player_attaches() -> None:
    # "With a table tile (3 players) the first step is already done: the first player makes the
    # attaching step."
    s = ludoteca.load_game("exagon", players=3, clock=None).new_initial_state()
    deal_all(s)
    d = s.to_json()
    assert d["phase"] == "opening" and len(d["table"]) == 1
    assert legal_json(s) == expected_legal(d)
    first = d["to_move"]
    play(s, json.loads(sorted(legal_json(s))[0]))
    d = s.to_json()
    assert (d["phase"], d["to_move"], len(d["table"])) == ("turn", (first + 1) % 3, 2)
    assert d["time_left"] is None and d["carry"] is None  # "With no clock, ... null"


# --------------------------------------------------------------------------------------------
# matching and placement
def test_rules_example_adapted_reads_back() -> None:
    # RULES.md's example completed so that conservation holds ("hands + table + aside = the tiles
    # listed"): tile 17 at [0, 0] and two more tiles placed this turn by seat 1
    tiles = [T(0, [3, 9, 1, "J", 7, 2], 3), *[T(i, [1, 1, 1, 1, 1, i]) for i in (1, 2, 5, 9)],
             T(17, [2, 2, 2, 2, 1, 3]), T(20, [2, 1, 1, 1, 1, 7]), T(21, [1, 1, 1, 1, 1, 8])]
    assert tiles[0]["star"] == 22
    table = [{"tile": 17, "at": [0, 0], "rot": 0}, {"tile": 20, "at": [1, 0], "rot": 3},
             {"tile": 21, "at": [-1, 1], "rot": 0}]
    d = position(tiles, table, [[0, 5, 9], [1, 2]], to_move=1, turn=7, placed_this_turn=2, bonus=1,
                 time_left=42.5, carry=0.0)
    s = state_of(d)
    got = s.to_json()
    assert {k: got[k] for k in KEYS} == d
    assert s.current_player() == 1
    assert legal_json(s) == expected_legal(d)


def test_plain_matching() -> None:
    # A at [0,0] rot 0 presents side i in direction i; a ONES tile matches wherever A shows a 1,
    # or A's number v against its own odd side
    t2, t3 = ONES[0], ONES[1]  # odd sides 2 and 3
    d = position([A, t2, t3, FILLER], [{"tile": 0, "at": [0, 0], "rot": 0}], [[t2["id"], t3["id"]], [FILLER["id"]]])
    s = state_of(d)
    exp = {}
    # [1,0] is in direction 0 where A shows 1: any rotation whose side facing 3 is a 1 (not side 5)
    exp |= {placed_key(t, [1, 0], k): 1 for t in (t2["id"], t3["id"]) for k in range(6) if k != rot_facing(5, 3)}
    # A shows 2 in direction 1 ([1,-1]) and 3 in direction 2 ([0,-1]): only the odd side can face it
    exp[placed_key(t2["id"], [1, -1], rot_facing(5, 4))] = 1
    exp[placed_key(t3["id"], [0, -1], rot_facing(5, 5))] = 1
    assert placements({t["id"]: t for t in d["tiles"]}, d["table"], d["hands"][0]) == exp
    assert legal_json(s) == set(exp)


def test_jolly_matching() -> None:
    # "A Jolly area matches any number not already on the Jolly tile itself, and another Jolly."
    table_tile = T(1, [4, 4, 4, 4, 4, "J"])  # shows J in direction 5 ([0,1]), 4 elsewhere
    jolly = T(2, ["J", 5, 5, 5, 5, 6])  # no 4 on it: its J matches a 4
    jolly4 = T(3, ["J", 4, 5, 5, 5, 6])  # has a 4: its J cannot match a 4
    d = position([table_tile, jolly, jolly4, FILLER], [{"tile": 1, "at": [0, 0], "rot": 0}], [[2, 3], [40]])
    s = state_of(d)
    legal = legal_json(s)
    assert legal == set(placements({t["id"]: t for t in d["tiles"]}, d["table"], [2, 3]))
    # tile 2's J against the table's 4 at [1,0] (table side 0 faces direction 0)
    assert placed_key(2, [1, 0], rot_facing(0, 3)) in legal
    # tile 3's J cannot take a 4, but its 4 side can
    assert placed_key(3, [1, 0], rot_facing(0, 3)) not in legal
    assert placed_key(3, [1, 0], rot_facing(1, 3)) in legal
    # J against J at [0,1] (table J faces direction 5); J against a number on the other tile's
    # own Jolly: tile 3's 5 side against the table's J (no 5 on the table tile) is fine too
    assert placed_key(2, [0, 1], rot_facing(0, 2)) in legal
    assert placed_key(3, [0, 1], rot_facing(2, 2)) in legal
    # tile 3's 4 side cannot touch the table's J: the table tile carries 4s
    assert placed_key(3, [0, 1], rot_facing(1, 2)) not in legal


def test_exagon_area_matches_nothing() -> None:
    # "An Exagon area matches nothing, not even another Exagon area."
    table_tile = T(1, [4, 4, 4, 4, 4, "X"])  # X faces direction 5, i.e. cell [0,1]
    xt = T(2, ["X", 5, 5, 5, 5, 6])
    jt = T(3, ["J", 5, 5, 5, 5, 6])
    d = position([table_tile, xt, jt, FILLER], [{"tile": 1, "at": [0, 0], "rot": 0}], [[2, 3], [40]])
    s = state_of(d)
    legal = legal_json(s)
    assert legal == set(placements({t["id"]: t for t in d["tiles"]}, d["table"], [2, 3]))
    assert not any('"at": [0, 1]' in a for a in legal)  # nothing touches an X
    assert placed_key(2, [1, 0], rot_facing(0, 3)) not in legal  # X against a 4
    assert placed_key(3, [1, 0], rot_facing(0, 3)) in legal


# --------------------------------------------------------------------------------------------
# connections, bonuses, end of turn
HOLE = [1, 0]  # a ring around [1, 0] includes [0, 0] (direction 3)


def ring_position(dirs: list[int], hand_extra: list | None = None, **over):
    """A ring of ONES tiles around HOLE; seat 0 holds the all-ones tile 1 and a spare tile, seat 1
    holds two tiles; [0, 0] is always part of the ring."""
    assert 3 in dirs
    ring_tiles, table = ring(HOLE, dirs)
    full = T(1, [1, 1, 1, 1, 1, 1])
    spare = T(2, [1, 1, 1, 1, 2, 3])
    other = [T(3, [1, 1, 1, 1, 3, 2]), T(4, [1, 1, 1, 2, 1, 3])]
    tiles = [full, spare, *other, *ring_tiles, *(hand_extra or [])]
    hands = [[1, 2, *[t["id"] for t in hand_extra or []]], [3, 4]]
    return position(tiles, table, hands, **over)


@pytest.mark.parametrize(("dirs", "bonus"), [([3, 4], 0), ([2, 3, 4], 1), ([2, 3, 4, 5], 2), ([1, 2, 3, 4, 5], 3)])
def test_connections_and_bonus(dirs, bonus) -> None:
    # "A tile with 2+ connections lets the turn go on. A tile with 3, 4, 5 connections also earns
    # 1, 2, 3 bonus tiles."; "its connections are the number of tiles it touches"
    d = ring_position(dirs)
    s = state_of(d)
    assert legal_json(s) == expected_legal(d)
    play(s, place(1, HOLE, 0))
    got = s.to_json()
    assert (got["to_move"], got["placed_this_turn"], got["bonus"], got["turn"]) == (0, 1, bonus, 7)
    assert got["phase"] == "turn"
    legal = legal_json(s)
    assert STOP in legal and PASS not in legal  # "After the first placement stop is always legal"
    assert legal == expected_legal(got)
    play(s, {"stop": True})
    got = s.to_json()
    assert (got["to_move"], got["placed_this_turn"], got["bonus"], got["turn"]) == (1, 0, 0, 8)


def test_perfect_fit_wins() -> None:
    # "6 connections -- the perfect fit -- wins the game at once."
    d = ring_position([0, 1, 2, 3, 4, 5])
    s = state_of(d)
    play(s, place(1, HOLE, 3))
    assert s.to_json()["phase"] == "over" and s.is_terminal() and s.current_player() == TERMINAL
    assert s.returns() == [1.0, 0.0] and s.legal_actions() == []


def test_one_connection_ends_the_turn() -> None:
    # "A tile with 1 connection ends the turn, unless the player spends a bonus on it."
    d = ring_position([3], time_left=50.0, carry=10.0)
    s = state_of(d)
    play(s, place(1, HOLE, 0, elapsed=4.5))  # touches only [0, 0]: one connection
    got = s.to_json()
    # the time left is carried: "Time left when a turn ends is added to the next player's turn"
    assert (got["to_move"], got["turn"], got["bonus"], got["placed_this_turn"]) == (1, 8, 0, 0)
    assert got["carry"] == 45.5 and got["time_left"] == 105.5


def test_one_connection_with_a_bonus_goes_on() -> None:
    d = ring_position([3], placed_this_turn=1, bonus=2)
    s = state_of(d)
    play(s, place(1, HOLE, 0))
    got = s.to_json()
    assert (got["to_move"], got["turn"], got["bonus"], got["placed_this_turn"]) == (0, 7, 1, 2)
    assert STOP in legal_json(s)


def test_give_to_a_player_with_exactly_one_tile() -> None:
    # "Instead of spending a bonus on a one-connection tile, the player may spend it to give one
    # of their tiles to a player who holds exactly one tile."; "giving a tile does not end the turn"
    d = ring_position([3], placed_this_turn=1, bonus=1)
    d["hands"][1] = [3]
    d["tiles"] = [t for t in d["tiles"] if t["id"] != 4]
    d["hands"][0].append(99)
    d["tiles"].append(T(99, [1, 1, 1, 2, 2, 3]))
    s = state_of(d)
    legal = legal_json(s)
    assert legal == expected_legal(d)
    assert {key({"give": {"tile": t, "to": 1}}) for t in (1, 2, 99)} <= legal
    a = s.action_from_json({"give": {"tile": 2, "to": 1}})
    assert s.action_to_json(a) == {"give": {"tile": 2, "to": 1}}
    s.apply_action(a)
    got = s.to_json()
    assert sorted(got["hands"][1]) == [2, 3] and sorted(got["hands"][0]) == [1, 99]
    assert (got["to_move"], got["bonus"], got["phase"], got["turn"]) == (0, 0, "turn", 7)
    # no bonus left: no more giving
    assert not any("give" in x for x in legal_json(s))


def test_no_give_without_a_one_tile_player_or_bonus() -> None:
    d = ring_position([3], placed_this_turn=1, bonus=1)
    assert not any("give" in x for x in legal_json(state_of(d)))
    d["hands"][1] = [3]
    d["tiles"] = [t for t in d["tiles"] if t["id"] != 4]
    d["bonus"] = 0
    assert not any("give" in x for x in legal_json(state_of(d)))


def test_last_tile_wins() -> None:
    # "a player who places their last tile wins at once"
    d = ring_position([3])
    d["hands"][0] = [1]
    d["tiles"] = [t for t in d["tiles"] if t["id"] != 2]
    s = state_of(d)
    before = s.to_json()["turn"]
    play(s, place(1, HOLE, 0))
    assert s.is_terminal() and s.returns() == [1.0, 0.0]
    # "turn counts the player turns completed": the winning turn is completed too (project
    # decision, docs/rules/exagon.md gap 8, as in the other three games)
    assert s.to_json()["turn"] == before + 1


def test_perfect_fit_completes_the_turn() -> None:
    d = ring_position([0, 1, 2, 3, 4, 5])
    s = state_of(d)
    before = s.to_json()["turn"]
    play(s, place(1, HOLE, 3))
    assert s.to_json()["turn"] == before + 1


def blocked_position(hands: list, extra: list, **over) -> dict:
    """Nothing fits: the only table tile shows 9s, the hand tiles carry no 9 and no Jolly."""
    nine = T(50, [9, 9, 9, 9, 9, 8])
    return position([nine, *extra], [{"tile": 50, "at": [0, 0], "rot": 0}], hands, **over)


def test_first_placement_compulsory_pass_only_when_blocked_and_blocked_end() -> None:
    # "a player with no legal placement then plays pass"; "If every player passes in a row with no
    # tile placed, the game is blocked: fewest tiles wins"
    extra = [T(10 + v, [1, 1, 1, 1, 1, v]) for v in range(2, 5)]
    d = blocked_position([[12, 13], [14]], extra, to_move=0)
    s = state_of(d)
    assert legal_json(s) == {PASS}
    play(s, {"pass": True})
    got = s.to_json()
    assert (got["to_move"], got["turn"], got["phase"]) == (1, 8, "turn")
    assert legal_json(s) == {PASS}
    play(s, {"pass": True})
    assert s.to_json()["phase"] == "over" and s.is_terminal()
    assert s.returns() == [0.0, 1.0]


def test_blocked_tie_broken_by_penalty_then_shared() -> None:
    # "ties broken by the lower tournament penalty, then shared"
    extra = [T(12, [1, 1, 1, 1, 1, 2], sp=2), T(13, [1, 1, 1, 1, 1, 3], sp=4), T(14, [1, 1, 1, 1, 1, 4], sp=2)]
    s = state_of(blocked_position([[12], [13]], extra[:2]))
    play(s, {"pass": True}, {"pass": True})
    assert s.returns() == [1.0, 0.0]
    s = state_of(blocked_position([[12], [14]], [extra[0], extra[2]]))
    play(s, {"pass": True}, {"pass": True})
    assert s.returns() == [0.5, 0.5]


def test_turn_limit_scored_like_blocked_with_jolly_penalty() -> None:
    # "turn_limit ends the one-shot game in progress (scored like a blocked game)"; penalty "the
    # star points of the tiles left in hand plus 3 for each Jolly tile left"
    jolly = T(12, [1, 1, 1, 1, 2, "J"], sp=1)
    plain = T(13, [1, 1, 1, 1, 1, 3], sp=3)
    other = T(14, [1, 1, 1, 1, 1, 4], sp=1)
    nine = T(50, [9, 9, 9, 9, 9, 8])
    # seat 0 holds a plain tile that fits nowhere and passes at turn 9 -> turn 10 = turn_limit
    d = position([nine, jolly, plain], [{"tile": 50, "at": [0, 0], "rot": 0}], [[13], [12]],
                 to_move=0, turn=9)
    s = state_of(d, turn_limit=10)
    assert legal_json(s) == {PASS}
    play(s, {"pass": True})
    assert s.is_terminal()
    # one tile each; penalties 3 (seat 0) vs 1 + 3 (seat 1, a Jolly tile)
    assert s.returns() == [1.0, 0.0]
    d["hands"] = [[13], [14]]
    d["tiles"] = [nine, plain, other]
    s = state_of(d, turn_limit=10)
    play(s, {"pass": True})
    assert s.returns() == [0.0, 1.0]  # 3 vs 1


# --------------------------------------------------------------------------------------------
# hourglass
def test_elapsed_is_subtracted_and_too_much_is_refused() -> None:
    # "each action may report `elapsed` ..., which `time_left` loses; an action whose `elapsed`
    # exceeds `time_left` is refused"
    d = ring_position([2, 3, 4], time_left=42.5, carry=0.0)
    s = state_of(d)
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        play(s, place(1, HOLE, 0, elapsed=43))
    assert s.to_json() == before
    play(s, place(1, HOLE, 0, elapsed=2.5))
    got = s.to_json()
    assert got["time_left"] == 40.0 and got["placed_this_turn"] == 1 and got["to_move"] == 0
    play(s, {"stop": True, "elapsed": 40.0})  # exactly all that is left: not "exceeds"
    got = s.to_json()
    assert (got["to_move"], got["carry"], got["time_left"]) == (1, 0.0, 60.0)


def test_stop_carries_time_left_to_the_next_player() -> None:
    d = ring_position([2, 3, 4], time_left=70.0, carry=10.0)
    s = state_of(d)
    play(s, place(1, HOLE, 0, elapsed=5), {"stop": True, "elapsed": 15})
    got = s.to_json()
    assert (got["to_move"], got["carry"], got["time_left"]) == (1, 50.0, 110.0)


def test_timeout_accepted_but_never_listed() -> None:
    # "The host program applies {"timeout": true} when the time is up: it is accepted in phase
    # turn whenever a clock is set, and is never listed by legal_actions()"; "a turn that ends by
    # timeout carries nothing"; "pending bonuses are lost"; "{"timeout": true} ignores elapsed"
    d = ring_position([2, 3, 4], time_left=30.0, carry=0.0)
    s = state_of(d)
    play(s, place(1, HOLE, 0))
    assert not any("timeout" in a for a in legal_json(s))
    assert s.to_json()["bonus"] == 1
    play(s, {"timeout": True, "elapsed": 1000})
    got = s.to_json()
    assert (got["to_move"], got["turn"], got["bonus"], got["placed_this_turn"]) == (1, 8, 0, 0)
    assert (got["carry"], got["time_left"]) == (0.0, 60.0)


def test_timeout_with_no_tile_counts_as_a_pass() -> None:
    # "A turn ended by timeout with no tile placed counts as a pass for the blocked rule."
    extra = [T(10 + v, [1, 1, 1, 1, 1, v]) for v in range(2, 5)]
    d = blocked_position([[12, 13], [14]], extra, time_left=60.0, carry=0.0)
    s = state_of(d)
    play(s, {"timeout": True})
    play(s, {"pass": True})
    assert s.is_terminal() and s.returns() == [0.0, 1.0]


def test_timeout_refused_without_a_clock() -> None:
    d = ring_position([2, 3, 4])
    s = state_of(d)
    with pytest.raises(IllegalActionError):
        play(s, {"timeout": True})
    play(s, place(1, HOLE, 0, elapsed=1e6))  # no clock: nothing to run out
    got = s.to_json()
    assert got["time_left"] is None and got["carry"] is None


# --------------------------------------------------------------------------------------------
# tournament
def test_tournament_game_end_scores_and_new_deal() -> None:
    # "The winner of a game gains 20; every other player loses the star points of the tiles left in
    # hand plus 3 for each Jolly tile left. Each game is dealt afresh."; "in a tournament each new
    # game goes back to deal with an empty table"; "turn restarts at 0 with each game"
    jolly = T(5, [1, 1, 1, 2, 2, "J"], sp=2)
    d = ring_position([3], scores=[10, 5], time_left=60.0, carry=0.0, hand_extra=None)
    d["hands"][0] = [1]
    d["tiles"] = [t for t in d["tiles"] if t["id"] != 2] + [jolly]
    d["hands"][1] = [3, 4, 5]
    s = state_of(d)
    play(s, place(1, HOLE, 0))
    got = s.to_json()
    pen = 3 + 3 + (2 + 3)  # tiles 3 and 4 (3 star points each) + the Jolly tile (2 + 3)
    assert got["scores"] == [30, 5 - pen]
    assert got["phase"] == "deal" and got["table"] == [] and got["turn"] == 0
    assert s.current_player() == CHANCE and not s.is_terminal()
    assert s.returns() == [0.0, 0.0]


def test_tournament_over_at_50() -> None:
    # "one-shot games are played until someone reaches 50 points"; "the game is over only when
    # someone has 50"
    d = ring_position([3], scores=[30, 45], time_left=60.0, carry=0.0)
    d["hands"][0] = [1]
    d["tiles"] = [t for t in d["tiles"] if t["id"] != 2]
    s = state_of(d)
    play(s, place(1, HOLE, 0))
    got = s.to_json()
    assert got["scores"][0] == 50 and got["phase"] == "over"
    assert s.is_terminal() and s.returns() == [1.0, 0.0]


def test_tournament_shared_result_each_winner_gains_20() -> None:
    # "Each winner of a shared result gains 20."
    extra = [T(12, [1, 1, 1, 1, 1, 2], sp=2), T(14, [1, 1, 1, 1, 1, 4], sp=2)]
    d = blocked_position([[12], [14]], extra, scores=[0, 0], time_left=60.0, carry=0.0)
    s = state_of(d)
    play(s, {"pass": True}, {"pass": True})
    got = s.to_json()
    assert got["scores"] == [20, 20] and got["phase"] == "deal"


def test_tournament_initial_scores() -> None:
    d = ludoteca.load_game("exagon", players=3, tournament=True).new_initial_state().to_json()
    assert d["scores"] == [0, 0, 0] and d["phase"] == "deal"


# --------------------------------------------------------------------------------------------
# random playouts cross-checked against the reference model (with the hourglass)
@pytest.mark.parametrize(("n", "seed", "clock", "options"), [
    (2, 31, 60, {}), (2, 35, None, {}), (3, 32, None, {}), (3, 36, 60, {}), (4, 33, 60, {}), (5, 34, 60, {}),
    # the amended options: "matching": "lenient"; "carry_cap" a number of seconds or null
    (2, 37, 60, {"matching": "lenient"}), (3, 38, None, {"matching": "lenient"}),
    (4, 39, 60, {"matching": "lenient", "carry_cap": 5}), (5, 40, 60, {"matching": "lenient", "carry_cap": None}),
    (2, 43, 30, {"carry_cap": 10}), (3, 44, 60, {"carry_cap": None}), (2, 45, 60, {"carry_cap": 0})])
def test_playout_matches_reference(n: int, seed: int, clock, options: dict) -> None:
    rng = random.Random(seed)
    s = ludoteca.load_game("exagon", players=n, clock=clock, **options).new_initial_state()
    history: list[dict] = [{"deal": t} for t in deal_all(s, rng.choice)]
    d = s.to_json()
    lenient = options.get("matching") == "lenient"
    ref = XRef(d, clock, lenient=lenient, carry_cap=options.get("carry_cap", "clock"))
    for _ in range(2000):
        if s.is_terminal():
            break
        assert s.returns() == [0.0] * n  # "all 0 before the end"
        d = s.to_json()
        assert s.current_player() == d["to_move"]
        legal = legal_json(s)
        assert project(d, legal) == expected_legal(d)
        # "Keys listed are required; implementations may add keys": the required keys rebuild it
        s2 = s.game.state_from_json({k: d[k] for k in KEYS})
        assert {k: s2.to_json()[k] for k in KEYS} == {k: d[k] for k in KEYS}
        assert legal_json(s2) == legal and s2.current_player() == s.current_player()
        # a player that likes connections and gifts, so that bonuses and gives happen
        conn = placements({x["id"]: x for x in d["tiles"]}, d["table"], d["hands"][d["to_move"]],
                          lenient) if d["table"] else {}
        gives = sorted(a for a in legal if "give" in a)
        if gives and rng.random() < 0.6:
            aj = json.loads(rng.choice(gives))
        elif conn and rng.random() < 0.8:
            aj = json.loads(rng.choice(sorted(k for k, v in conn.items() if v == max(conn.values()))))
        else:
            aj = json.loads(rng.choice(sorted(legal)))
        if clock is not None and d["phase"] == "turn":
            if rng.random() < 0.05:
                aj = {"timeout": True}
            elif rng.random() < 0.7:
                aj["elapsed"] = rng.choice([0.5, 2.0, 7.5, 20.0, 45.0])
                if aj["elapsed"] > d["time_left"]:
                    with pytest.raises(IllegalActionError):
                        play(s, aj)
                    assert s.to_json() == d
                    aj["elapsed"] = 0.5 if d["time_left"] >= 0.5 else 0
        play(s, aj)
        history.append(aj)
        ref.apply(aj)
        ref.check(s.to_json())
    assert s.is_terminal()
    assert s.returns() == pytest.approx(share(ref.winners, n))
    # "a game is fully determined by its options plus its list of actions (chance outcomes included)"
    r = ludoteca.load_game("exagon", players=n, clock=clock, **options).new_initial_state()
    play(r, *history)
    assert r.to_json() == s.to_json() and r.returns() == s.returns()


def test_tournament_turn_limit_ends_only_the_game_in_progress() -> None:
    # "`turn_limit` ends the one-shot game in progress (scored like a blocked game), and `turn`
    # restarts at 0 with each game"
    plain = T(13, [1, 1, 1, 1, 1, 3], sp=3)
    other = T(14, [1, 1, 1, 1, 1, 4], sp=1)
    d = blocked_position([[13], [14]], [plain, other], scores=[10, 0], turn=9, time_left=60.0, carry=0.0)
    s = state_of(d, turn_limit=10)
    play(s, {"pass": True})
    got = s.to_json()
    # one tile each; penalty 3 (seat 0) vs 1 (seat 1): seat 1 wins the game
    assert got["scores"] == [10 - 3, 20]
    assert (got["phase"], got["turn"], got["table"]) == ("deal", 0, [])
    assert not s.is_terminal() and s.current_player() == CHANCE


# --------------------------------------------------------------------------------------------
# "`action_from_json` rejects only ill-formed actions; `apply_action` rejects any action that is
# not legal in the position."
WELL_FORMED = [
    {"deal": 3}, {"deal": 12}, place(1, HOLE, 0), place(2, [2, -1], 1), place(12, [0, 0], 0),
    {"give": {"tile": 2, "to": 1}}, {"stop": True}, {"pass": True},
    {"stop": True, "elapsed": 3.2}, {"pass": True, "elapsed": 1.0},
    # "tiles sit on a hex grid, axial coordinates [q, r]": any cell is well-formed, even one no
    # tile can reach (illegal: "A tile may be placed on an empty cell next to at least one tile")
    place(1, [60, -60], 0), place(2, [-45, 3], 5, elapsed=0.5)]


def test_action_from_json_accepts_every_well_formed_action_anywhere() -> None:
    states = [ludoteca.load_game("exagon", players=2, clock=None).new_initial_state()]
    s = ludoteca.load_game("exagon", players=2).new_initial_state()
    deal_all(s)
    states.append(s)  # opening
    states.append(state_of(ring_position([2, 3, 4])))  # turn, first placement
    states.append(state_of(ring_position([3], placed_this_turn=1, bonus=1)))  # turn, later
    problems = [p for st in states for p in parse_then_apply_problems(st, WELL_FORMED)]
    assert not problems, "\n".join(problems)


def test_unknown_option_is_a_value_error_naming_it() -> None:
    # "Unknown option / bad value -> ValueError naming it" (docs/architecture.md)
    with pytest.raises(ValueError, match="frobnicate"):
        ludoteca.load_game("exagon", players=2, frobnicate=1)
    with pytest.raises(ValueError, match="turn_limit"):
        ludoteca.load_game("exagon", players=2, turn_limit="soon")


@pytest.mark.parametrize(("n", "seed"), [(2, 41), (3, 42)])
def test_tournament_playout(n: int, seed: int) -> None:
    # "one-shot games are played until someone reaches 50 points. The winner of a game gains 20;
    # every other player loses the star points of the tiles left in hand plus 3 for each Jolly tile
    # left. Each game is dealt afresh."; "each new game goes back to deal with an empty table";
    # "`turn` restarts at 0 with each game"
    rng = random.Random(seed)
    s = ludoteca.load_game("exagon", players=n, clock=None, tournament=True).new_initial_state()
    for _ in range(40):
        if s.is_terminal():
            break
        deal_all(s, rng.choice)
        d = s.to_json()
        assert d["phase"] == "opening" and d["turn"] == 0
        scores = list(d["scores"])
        ref = XRef(d, None)
        while ref.d["phase"] != "over":
            d = s.to_json()
            legal = legal_json(s)
            assert project(d, legal) == expected_legal(d)
            aj = json.loads(rng.choice(sorted(legal)))
            play(s, aj)
            ref.apply(aj)
            if ref.d["phase"] != "over":
                ref.check(s.to_json())
        got = s.to_json()
        exp = [scores[i] + 20 if i in ref.winners else scores[i] - penalty(ref.tiles, ref.d["hands"][i])
               for i in range(n)]
        assert got["scores"] == exp
        if max(exp) >= 50:
            # "When two or more players reach 50 at the end of the same game ..., the highest score
            # wins; equal highest scores share"
            assert got["phase"] == "over" and s.is_terminal()
            assert s.returns() == share([i for i, v in enumerate(exp) if v == max(exp)], n)
        else:
            assert (got["phase"], got["table"], got["turn"]) == ("deal", [], 0)
            assert s.current_player() == CHANCE and s.returns() == [0.0] * n
    assert s.is_terminal()
