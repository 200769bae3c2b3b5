"""EXAGON: tile set, rules scenarios (each from a named rule of RULES.md section 4), properties."""

from __future__ import annotations

import importlib.util
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca import IllegalActionError, Record
from ludoteca.core.chance import random_playout, sample_chance
from ludoteca.games.exagon import DIRECTIONS, ExagonGame, ExagonState, default_tiles

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
DEFAULT_FILE = ROOT / "src" / "ludoteca" / "games" / "exagon" / "tiles.json"
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))


def load(players: int = 2, **options: Any) -> ExagonGame:
    game = ludoteca.load_game("exagon", players=players, **options)
    assert isinstance(game, ExagonGame)
    return game


def tiles_of(name: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"exagon_{name}.json").read_text())


def position(tiles: list[dict[str, Any]], table: list[tuple[int, tuple[int, int], int]], hands: list[list[int]],
             *, to_move: int = 0, phase: str = "turn", placed: int = 0, bonus: int = 0, aside: list[int] | None = None,
             turn: int = 4, time_left: float | None = None, carry: float | None = None,
             scores: list[int] | None = None) -> dict[str, Any]:
    """A position JSON in RULES.md's form (tiles not in a hand or on the table go aside)."""
    used = {t for h in hands for t in h} | {t for t, _, _ in table}
    rest = [t["id"] for t in tiles if t["id"] not in used] if aside is None else aside
    return {
        "game": "exagon", "players": len(hands), "tiles": tiles,
        "table": [{"tile": t, "at": list(at), "rot": rot} for t, at, rot in table],
        "hands": hands, "aside": rest, "to_move": to_move, "phase": phase, "turn": turn,
        "placed_this_turn": placed, "bonus": bonus, "time_left": time_left, "carry": carry, "scores": scores,
    }


def state_of(pos: dict[str, Any], **options: Any) -> ExagonState:
    game = load(len(pos["hands"]), clock=None, **options)
    state = game.state_from_json(pos)
    assert state.to_json() == game.state_from_json(state.to_json()).to_json()
    return state


def place(tile: int, at: tuple[int, int], rot: int, **extra: Any) -> dict[str, Any]:
    return {"place": {"tile": tile, "at": list(at), "rot": rot}, **extra}


def placements(state: ExagonState) -> set[tuple[int, tuple[int, int], int]]:
    out = set()
    for a in state.legal_actions():
        d = state.action_to_json(a)
        if "place" in d:
            p = d["place"]
            out.add((p["tile"], tuple(p["at"]), p["rot"]))
    return out


def ring(arc: int) -> list[tuple[int, tuple[int, int], int]]:
    """Fives set: ring tiles 1..arc around the empty cell [0, 0], their odd side facing outwards."""
    return [(d + 1, DIRECTIONS[d], (d + 1) % 6) for d in range(arc)]


def deal(state: ExagonState, rng: random.Random) -> None:
    while state.is_chance_node():
        state.apply_action(sample_chance(state, rng))


# --- the default tile set -------------------------------------------------------------

def _canonical(sides: list[Any]) -> tuple[str, ...]:
    s = [str(x) for x in sides]
    return min(tuple(s[i:] + s[:i]) for i in range(6))


def test_default_set_meets_every_constraint() -> None:
    # RULES.md "Tiles" (seed): 40 tiles, all different also under rotation, numbers 1-9,
    # star = sum, one star 39 with six numbers, three Jolly and three Exagon tiles, 1-6 star points.
    tiles = json.loads(DEFAULT_FILE.read_text())
    assert len(tiles) == 40
    assert [t["id"] for t in tiles] == list(range(40))
    assert len({_canonical(t["sides"]) for t in tiles}) == 40
    for t in tiles:
        assert len(t["sides"]) == 6
        nums = [s for s in t["sides"] if isinstance(s, int)]
        assert all(1 <= s <= 9 for s in nums)
        assert sum(not isinstance(s, int) for s in t["sides"]) <= 1
        assert t["star"] == sum(nums)
        assert 1 <= t["star_points"] <= 6
    stars39 = [t for t in tiles if t["star"] == 39]
    assert len(stars39) == 1 and all(isinstance(s, int) for s in stars39[0]["sides"])
    assert sum(t["sides"].count("J") == 1 for t in tiles) == 3
    assert sum(t["sides"].count("X") == 1 for t in tiles) == 3
    assert default_tiles() == tiles


def test_generator_reproduces_the_default_set_byte_for_byte() -> None:
    spec = importlib.util.spec_from_file_location("make_exagon_tiles", ROOT / "scripts" / "make_exagon_tiles.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.dumps(module.make_tiles()).encode() == DEFAULT_FILE.read_bytes()


def test_record_options_are_compact_for_the_default_set_and_self_contained_otherwise() -> None:
    assert "tiles" not in load(2).record_options()
    custom = load(2, tiles=str(DATA / "exagon_fives.json"))
    opts = custom.record_options()
    assert opts["tiles"] == tiles_of("fives")  # the list itself, not the path
    assert ludoteca.load_game("exagon", **json.loads(json.dumps(opts))).record_options() == opts


# --- options and designer sets ----------------------------------------------------------

def test_options_and_defaults() -> None:
    game = load(3)
    assert game.options["clock"] == 60 and game.options["tournament"] is False
    assert game.options["turn_limit"] == 1000
    assert load(2, clock=None).clock() is None and load(2, clock="null").clock() is None
    assert load(2, clock=2.5).clock() == 2.5 and load(2).clock() == 60.0
    # The tiles option takes a path, JSON text or a list.
    text = (DATA / "exagon_uniform.json").read_text()
    assert load(2, tiles=text).tiles == load(2, tiles=tiles_of("uniform")).tiles
    for bad in (0, -1, True, "soon"):
        with pytest.raises(ValueError, match="clock"):
            load(2, clock=bad)


def _t(i: int, sides: list[Any], points: int = 1, star: int | None = None) -> dict[str, Any]:
    total = sum(s for s in sides if isinstance(s, int))
    return {"id": i, "sides": sides, "star": total if star is None else star, "star_points": points}


@pytest.mark.parametrize(
    ("tiles", "message"),
    [
        ([_t(0, [1, 2, 3, 4, 5, 6]), _t(1, [4, 5, 6, 1, 2, 3])], "same tile"),
        ([_t(0, [0, 2, 3, 4, 5, 6]), _t(1, [1, 1, 1, 1, 1, 1])], "number 1-9"),
        ([_t(0, [10, 2, 3, 4, 5, 6]), _t(1, [1, 1, 1, 1, 1, 1])], "number 1-9"),
        ([_t(0, ["J", "J", 3, 4, 5, 6]), _t(1, [1, 1, 1, 1, 1, 1])], "at most one"),
        ([_t(0, ["J", "X", 3, 4, 5, 6]), _t(1, [1, 1, 1, 1, 1, 1])], "at most one"),
        ([_t(0, [1, 2, 3, 4, 5, 6], star=20), _t(1, [1, 1, 1, 1, 1, 1])], "not the sum"),
        ([_t(0, [1, 2, 3, 4, 5, 6], points=7), _t(1, [1, 1, 1, 1, 1, 1])], "star_points"),
        ([_t(0, [1, 2, 3, 4, 5]), _t(1, [1, 1, 1, 1, 1, 1])], "6 sides"),
        ([_t(0, [1, 2, 3, 4, 5, 6]), _t(0, [1, 1, 1, 1, 1, 1])], "used twice"),
        ([_t(0, [1, 2, 3, 4, 5, 6])], "not enough"),
        ([], "empty"),
        ("[1, 2", "not valid JSON"),
        ("/no/such/tiles.json", "not found"),
        (str(DATA / "exagon_bad_rotation.json"), "same tile"),
    ],
)
def test_designer_sets_are_validated_with_clear_errors(tiles: Any, message: str) -> None:
    # RULES.md "Tiles": all different under rotation, numbers 1-9 or at most one J/X per tile,
    # star = sum, star points 0-6, enough tiles for the players.
    with pytest.raises(ValueError, match=message) as info:
        load(2, tiles=tiles)
    assert "tiles" in str(info.value)


def test_designer_set_without_40_tiles_or_39_is_fine() -> None:
    game = load(2, tiles=tiles_of("uniform"))
    assert game.n_tiles == 9 and game.max_chance_outcomes() == 9


# --- geometry and matching --------------------------------------------------------------

def test_jolly_matches_numbers_absent_from_its_own_tile_and_another_jolly() -> None:
    tiles = tiles_of("specials")
    # Tile 0 (six 5s) at [0, 0]; the cell [1, 0] is touched by its 5 (facing direction 0).
    s = state_of(position(tiles, [(0, (0, 0), 0)], [[1, 2, 3], [4, 5, 6, 7]], placed=1))
    legal = placements(s)
    # Rule "Matching" (seed): a Jolly matches any number not already on the Jolly tile.
    assert (1, (1, 0), 3) in legal  # tile 1 = J,2,3,4,6,7: its J (side 0) faces direction 3 with rot 3
    assert (2, (1, 0), 3) not in legal  # tile 2 = J,5,2,3,4,6 already shows a 5
    assert (2, (1, 0), 2) in legal  # ... but its own 5 matches the 5
    # Rule "Matching": an Exagon area matches nothing.
    assert (3, (1, 0), 3) not in legal and (3, (1, 0), 2) in legal
    # A Jolly on the table: tile 4 = J,1,1,1,1,1 with its J facing direction 0.
    s = state_of(position(tiles, [(4, (0, 0), 0)], [[1, 2, 6], [0, 3, 5, 7]], placed=1))
    legal = placements(s)
    assert (1, (1, 0), 3) in legal  # Jolly against Jolly
    assert (1, (1, 0), 2) in legal  # tile 1's 2 against the Jolly of a tile without 2
    assert (6, (1, 0), 0) in legal  # tile 6 = 1,2,3,4,5,6: its 4 (side 3) faces direction 3; no 4 on tile 4
    assert (6, (1, 0), 3) not in legal  # its 1 (side 0) faces the Jolly, but tile 4 shows 1s


def test_exagon_matches_nothing_not_even_exagon() -> None:
    tiles = tiles_of("specials")
    # Tile 3 = X,5,5,5,5,5 at [0, 0] rot 0: its X faces direction 0, cell [1, 0].
    s = state_of(position(tiles, [(3, (0, 0), 0)], [[0, 5, 6, 1], [2, 4, 7]], placed=1))
    assert all(at != (1, 0) for _, at, _ in placements(s))  # not even tile 5's X, nor a number
    assert (0, (0, 1), 0) in placements(s)  # the other sides are 5s
    with pytest.raises(IllegalActionError):
        s.apply_json(place(5, (1, 0), 3))


# --- connections, bonuses, turns ---------------------------------------------------------

@pytest.mark.parametrize(("arc", "bonus"), [(2, 0), (3, 1), (4, 2), (5, 3)])
def test_connections_continue_the_turn_and_earn_bonuses(arc: int, bonus: int) -> None:
    # Rule "A turn" (seed): 2+ connections let the turn go on; 3, 4, 5 earn 1, 2, 3 bonuses.
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(arc), [[0, 9, 10], [11, 12]]))
    s.apply_json(place(0, (0, 0), 0))
    assert s.current_player() == 0 and s.bonus == bonus and s.placed == 1
    assert s.counters()["bonuses_earned"] == bonus
    assert {"stop": True} in [s.action_to_json(a) for a in s.legal_actions()]


def test_one_connection_ends_the_turn_unless_a_bonus_is_spent() -> None:
    # Rule "A turn" (seed): a 1-connection tile ends the turn unless a bonus is spent (automatic).
    tiles = tiles_of("fives")
    table = [(1, (1, 0), 1)]  # tile 1 = 5,5,5,5,5,1: its 5 (side 1) faces direction 2, cell [1, -1]
    s = state_of(position(tiles, table, [[0, 9, 10], [11, 12]], placed=1, bonus=1))
    s.apply_json(place(9, (1, -1), 2))  # tile 9 = 5,5,5,5,1,1: side 3 (a 5) faces direction 5
    assert s.current_player() == 0 and s.bonus == 0 and s.counters()["bonuses_spent"] == 1
    s = state_of(position(tiles, table, [[0, 9, 10], [11, 12]], placed=1, bonus=0))
    s.apply_json(place(9, (1, -1), 2))
    assert s.current_player() == 1 and s.turn == 5 and s.placed == 0
    # The first placement of a turn with one connection ends it too.
    s = state_of(position(tiles, table, [[0, 9, 10], [11, 12]]))
    s.apply_json(place(9, (1, -1), 2))
    assert s.current_player() == 1


def test_first_placement_is_compulsory_and_stop_follows_it() -> None:
    # Rule "A turn": pass only when no placement is legal at the turn's start; stop only after one.
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11, 12]]))
    kinds = {next(iter(s.action_to_json(a))) for a in s.legal_actions()}
    assert kinds == {"place"}
    with pytest.raises(IllegalActionError):
        s.apply_json({"pass": True})
    with pytest.raises(IllegalActionError):
        s.apply_json({"stop": True})
    s.apply_json(place(0, (0, 0), 0))
    s.apply_json({"stop": True})
    assert s.current_player() == 1 and s.bonus == 0


def test_give_only_to_a_player_holding_exactly_one_tile() -> None:
    # Rule "A turn" (seed): a bonus may instead give one of the player's tiles to a player who
    # holds exactly one tile; giving does not end the turn (default).
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11], [12, 13]], placed=1, bonus=1))
    gives = [s.action_to_json(a)["give"] for a in s.legal_actions() if "give" in s.action_to_json(a)]
    assert sorted((g["tile"], g["to"]) for g in gives) == [(0, 1), (9, 1), (10, 1)]
    s.apply_json({"give": {"tile": 9, "to": 1}})
    assert s.hands == [[0, 10], [11, 9], [12, 13]] and s.bonus == 0 and s.current_player() == 0
    assert s.counters()["tiles_given"] == 1 and s.counters()["bonuses_spent"] == 1
    with pytest.raises(IllegalActionError):  # no bonus left
        s.apply_json({"give": {"tile": 10, "to": 1}})
    # Without a bonus, or to a player with two tiles: never.
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11], [12, 13]], placed=1, bonus=0))
    assert not any("give" in s.action_to_json(a) for a in s.legal_actions())
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11], [12, 13]], placed=1, bonus=1))
    with pytest.raises(IllegalActionError):
        s.apply_json({"give": {"tile": 9, "to": 2}})


def test_giving_away_the_last_tile_wins_at_once() -> None:
    # RULES.md section 4, End: "so does a player who empties their hand by giving away their last
    # tile" (amendment 4). Seat 0 holds one tile, has placed one and holds a bonus; seat 1
    # holds exactly one tile, so seat 0 may give it its last tile, and wins: returns [1, 0, 0].
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0], [11], [12, 13, 9, 10]], placed=1, bonus=1, turn=4))
    assert {"give": {"tile": 0, "to": 1}} in [s.action_to_json(a) for a in s.legal_actions()]
    s.apply_json({"give": {"tile": 0, "to": 1}})
    assert s.is_terminal() and s.returns() == [1.0, 0.0, 0.0]
    assert s.legal_actions() == []
    assert s.end_reason() == "last_tile" and s.counters()["tiles_given"] == 1
    data = s.to_json()
    assert data["phase"] == "over" and data["hands"][:2] == [[], [11, 0]]
    assert data["result"] == {"winners": [0], "end": "last_tile"}
    # The winning turn is completed (as with a last tile placed); the counters of the turn are 0.
    assert data["turn"] == 5 and data["placed_this_turn"] == 0 and data["bonus"] == 0
    assert s.game.state_from_json(data).to_json() == data


def test_heuristic_gives_away_its_last_tile_to_win() -> None:
    # RULES.md section 4, End: emptying one's hand by giving away the last tile wins. Seat 0's last
    # tile (all 1s) fits nowhere (the table shows only 5s and 6s), it holds a bonus and seat 1 holds
    # one tile: the give is the only winning action, and both the heuristic and its rollout play it.
    from ludoteca.agents import make_agent
    from ludoteca.games.exagon import heuristic as h

    tiles = tiles_of("fives")
    s = state_of(position(tiles, [(0, (0, 0), 0), (13, (1, 0), 0)], [[17], [16]], placed=1, bonus=1))
    give = s.action_from_json({"give": {"tile": 17, "to": 1}})
    assert sorted(s.legal_actions()) == sorted([give, s.action_from_json({"stop": True})])
    assert h.greedy_action(s, 0) == give
    assert make_agent("heuristic", seed=0, game="exagon").step(s) == give
    s.apply_action(give)
    assert s.is_terminal() and s.returns() == [1.0, 0.0]


def test_perfect_fit_wins_at_once() -> None:
    # Rule "A turn"/"End" (seed): 6 connections, the perfect fit, wins the game at once.
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(6), [[0, 9, 10], [11, 12]]))
    s.apply_json(place(0, (0, 0), 0))
    assert s.is_terminal() and s.returns() == [1.0, 0.0]
    assert s.end_reason() == "perfect_fit" and s.counters()["perfect_fits"] == 1
    assert s.to_json()["phase"] == "over"


def test_last_tile_wins_at_once() -> None:
    # Rule "End" (seed): a player who places their last tile wins at once.
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(1), [[11, 12], [0]], to_move=1))
    s.apply_json(place(0, (0, 0), 0))
    assert s.is_terminal() and s.returns() == [0.0, 1.0] and s.end_reason() == "last_tile"


def test_blocked_game_fewest_tiles_then_lower_penalty_then_shared() -> None:
    # Rule "End" (default): every player passes in a row -> fewest tiles, then the lower
    # tournament penalty (star points + 3 per Jolly tile), then shared.
    tiles = tiles_of("uniform")  # star points: tile k has 1 + k % 6
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 3], [4, 6], [7, 8, 9]]))
    for seat in range(3):
        assert s.current_player() == seat
        assert [s.action_to_json(a) for a in s.legal_actions()] == [{"pass": True}]
        s.apply_json({"pass": True})
    # penalties: seat 0: 3 + 4 = 7; seat 1: 5 + 1 = 6.
    assert s.is_terminal() and s.returns() == [0.0, 1.0, 0.0]
    assert s.end_reason() == "blocked" and s.counters()["passes"] == 3
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 3], [7, 8], [4, 5, 9]]))  # penalties 7 and 5
    for _ in range(3):
        s.apply_json({"pass": True})
    assert s.returns() == [0.0, 1.0, 0.0]
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 9], [3, 8], [4, 5, 6]]))  # 3+4 = 4+3
    for _ in range(3):
        s.apply_json({"pass": True})
    assert s.returns() == [0.5, 0.5, 0.0]


def test_a_placement_breaks_the_row_of_passes() -> None:
    tiles = tiles_of("fives")
    # Seat 0 holds only the 1s tile (tile 2 shows 5s and a 2); seat 1 can place.
    s = state_of(position(tiles, [(2, (1, 0), 1)], [[17], [0, 9]]))
    s.apply_json({"pass": True})
    assert s.to_json()["passes"] == 1
    s.apply_json(place(9, (1, -1), 2))
    assert s.to_json()["passes"] == 0 and not s.is_terminal()


def test_whole_game_of_the_uniform_set_blocks_at_the_opening() -> None:
    # Opening (seed): the first player puts any tile at [0, 0]; the next must attach one. No tile
    # of the uniform set matches another, so everyone passes and the game is blocked.
    game = load(2, clock=None, tiles=tiles_of("uniform"))
    s = game.new_initial_state()
    deal(s, random.Random(3))
    assert s.to_json()["phase"] == "opening" and len(s.table) == 1  # 9 tiles: 4 each + a table tile
    while not s.is_terminal():
        assert [s.action_to_json(a) for a in s.legal_actions()] == [{"pass": True}]
        s.apply_json({"pass": True})
    assert s.end_reason() == "blocked" and s.turn == 2


# --- deal and who starts ---------------------------------------------------------------

@pytest.mark.parametrize(("players", "each", "table"), [(2, 20, 0), (3, 13, 1), (4, 10, 0), (5, 8, 0)])
def test_deal_counts_and_who_starts(players: int, each: int, table: int) -> None:
    # Rule "Deal" (seed): 2 players 20 each; 3 players 13 + a table tile at [0, 0]; 4: 10; 5: 8.
    game = load(players, clock=None)
    s = game.new_initial_state()
    for k in range(each * players):
        assert s.is_chance_node() and s.to_move == k % players
        outcomes = s.chance_outcomes()
        assert len(outcomes) == 40 - k and math.isclose(sum(p for _, p in outcomes), 1.0)
        s.apply_action(outcomes[(7 * k) % len(outcomes)][0])
    if table:
        assert [a for a, _ in s.chance_outcomes()] and len(s.chance_outcomes()) == 1
        s.apply_action(s.chance_outcomes()[0][0])
        assert s.to_json()["table"][0]["at"] == [0, 0] and s.to_json()["table"][0]["rot"] == 0
    assert [len(h) for h in s.hands] == [each] * players and len(s.table) == table and s.aside == []
    assert s.to_json()["phase"] == "opening" and s.turn == 0
    star39 = next(t["id"] for t in game.tiles if t["star"] == 39)
    holder = [seat for seat, h in enumerate(s.to_json()["hands"]) if star39 in h]
    assert s.current_player() == (holder[0] if holder else 0)


def test_table_tile_39_means_seat_0_starts_and_attaches() -> None:
    # Rule "Deal" (seed; default): if the 39 is the table tile, seat 0 starts with the attaching step.
    game = load(3, clock=None)
    star39 = next(t["id"] for t in game.tiles if t["star"] == 39)
    s = game.new_initial_state()
    order = [t for t in range(40) if t != star39] + [star39]
    for t in order:
        s.apply_json({"deal": t})
    assert s.to_json()["table"] == [{"tile": star39, "at": [0, 0], "rot": 0}]
    assert s.current_player() == 0 and s.to_json()["phase"] == "opening"
    s.apply_action(s.legal_actions()[0])  # the attaching step ends the opening
    assert s.to_json()["phase"] == "turn" and s.current_player() == 1 and s.turn == 1


def test_without_39_the_highest_star_in_a_hand_starts() -> None:
    # Rule "Deal" (default): no 39 -> the highest star in a hand (ties: lowest seat).
    game = load(2, clock=None, tiles=tiles_of("uniform"))  # stars 6k; tile 9 has 54
    s = game.new_initial_state()
    for t in (1, 9, 2, 3, 4, 5, 6, 7, 8):  # seat 1 gets 9; tile 8 (48) is the table tile
        s.apply_json({"deal": t})
    assert s.current_player() == 1
    s = game.new_initial_state()
    for t in (1, 2, 3, 4, 5, 6, 7, 8, 9):  # 9 on the table: highest in a hand is 8 (seat 1)
        s.apply_json({"deal": t})
    assert s.current_player() == 1 and s.to_json()["table"][0]["tile"] == 9


def test_two_or_more_leftovers_are_set_aside_and_hidden() -> None:
    # Rule "Deal" (default): >= 2 leftovers are set aside unseen; observations omit them.
    game = load(4, clock=None, tiles=tiles_of("fives"))  # 18 tiles: 4 each + 2 aside
    s = game.new_initial_state()
    deal(s, random.Random(1))
    assert [len(h) for h in s.hands] == [4] * 4 and len(s.aside) == 2 and not s.table
    data = s.to_json()
    assert len(data["aside"]) == 2
    for seat in (None, 0, 3):
        obs = s.observation(seat)
        assert "aside" not in obs and obs["aside_count"] == 2
        assert not set(data["aside"]) & {t for h in obs["hands"] for t in h}


def test_opening_tile_goes_at_the_origin_in_any_rotation() -> None:
    # Opening (seed): the first player puts any one of their tiles at [0, 0] (gap: any rotation).
    game = load(2, clock=None)
    s = game.new_initial_state()
    deal(s, random.Random(2))
    legal = placements(s)
    assert {at for _, at, _ in legal} == {(0, 0)}
    assert len(legal) == 6 * 20
    first = s.current_player()
    s.apply_action(s.legal_actions()[-1])
    assert s.current_player() == 1 - first and s.to_json()["phase"] == "opening"
    assert [e["at"] for e in s.to_json()["table"]] == [[0, 0]]


# --- hourglass -----------------------------------------------------------------------------

def test_hourglass_carry_refusal_and_timeout() -> None:
    # Rule "Hourglass" (seed): elapsed is lost from time_left; time left at the end of a turn is
    # added to the next turn; an elapsed beyond time_left is refused; timeout is accepted though
    # never listed and carries nothing.
    tiles = tiles_of("fives")
    pos = position(tiles, ring(2), [[0, 9, 10], [11, 12]], time_left=60.0, carry=0.0)
    game = load(2, tiles=tiles)  # clock 60
    s = game.state_from_json(pos)
    s.apply_json(place(0, (0, 0), 0, elapsed=10))
    assert s.time_left() == 50.0 and s.current_player() == 0
    s.apply_json({"stop": True, "elapsed": 5.5})
    assert s.current_player() == 1 and s.carry == 44.5 and s.time_left() == 104.5
    before = s.to_json()
    # elapsed is read (and checked) by action_from_json but is not part of the action.
    assert s.action_from_json({"stop": True, "elapsed": 200.0}) == game.stop_action
    with pytest.raises(IllegalActionError, match="elapsed"):
        s.action_from_json({"stop": True, "elapsed": -1})
    action = s.action_from_json(place(11, (2, -1), 1, elapsed=104.6))
    with pytest.raises(IllegalActionError, match="hourglass"):
        s.apply_action(action, elapsed=104.6)
    with pytest.raises(IllegalActionError, match="hourglass"):
        s.apply_json(place(11, (2, -1), 1, elapsed=104.6))
    assert s.to_json() == before
    assert all(s.action_to_json(a) != {"timeout": True} for a in s.legal_actions())
    s.apply_json({"timeout": True, "elapsed": 999})  # timeout ignores elapsed
    assert s.current_player() == 0 and s.carry == 0.0 and s.time_left() == 60.0
    assert s.to_json()["passes"] == 1 and s.counters()["timeouts"] == 1
    s.apply_json(place(9, (-1, 0), 0, elapsed=1))  # one connection: the turn ends, 59 s carried
    assert s.current_player() == 1 and s.carry == 59.0 and s.time_left() == 119.0
    # A timeout after a placement: the turn ends, nothing carried, and it is not a pass.
    s.apply_json(place(11, (2, -1), 1, elapsed=19))
    assert s.current_player() == 1 and s.time_left() == 100.0
    s.apply_json({"timeout": True})
    assert s.current_player() == 0 and s.carry == 0.0 and s.time_left() == 60.0
    assert s.to_json()["passes"] == 0


def test_timeout_refused_without_a_clock_and_in_the_opening() -> None:
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11, 12]]))
    with pytest.raises(IllegalActionError, match="no clock"):
        s.apply_json({"timeout": True})
    game = load(2, clock=30)
    s = game.new_initial_state()
    # RULES.md: "The opening steps have no clock"; "with no clock, time_left and carry are null".
    assert s.time_left() is None and s.carry is None
    deal(s, random.Random(4))
    assert s.time_left() is None and s.carry is None
    with pytest.raises(IllegalActionError, match="opening"):
        s.apply_json({"timeout": True})
    # Opening steps have no clock: elapsed is ignored there.
    s.apply_action(s.legal_actions()[0], elapsed=500.0)
    assert s.time_left() is None
    while s.to_json()["phase"] == "opening":
        s.apply_action(s.legal_actions()[0], elapsed=500.0)
    assert s.to_json()["phase"] == "turn" and s.time_left() == 30.0 and s.carry == 0.0


def test_clock_none_positions_have_null_time() -> None:
    s = load(2, clock=None).new_initial_state()
    data = s.to_json()
    assert data["time_left"] is None and data["carry"] is None


# --- tournament and turn limit ---------------------------------------------------------

def test_tournament_scoring() -> None:
    # Rule "Tournament" (seed): the winner gains 20; the others lose their star points plus 3 per
    # Jolly tile left; the tournament ends when someone has 50.
    tiles = tiles_of("specials")
    pos = position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[35, 10, 0])
    s = state_of(pos, tournament=True)
    s.apply_json(place(3, (1, 0), 2))  # tile 3's 5 (side 1) faces direction 3: its last tile
    # seat 1: star points 4 + 6 + 3 for the Jolly tile 1; seat 2: 3.
    assert s.to_json()["scores"] == [55, -3, -3]
    assert s.is_terminal() and s.returns() == [1.0, 0.0, 0.0]
    pos = position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[0, 10, 0])
    s = state_of(pos, tournament=True)
    s.apply_json(place(3, (1, 0), 2))
    data = s.to_json()
    assert data["scores"] == [20, -3, -3] and data["phase"] == "deal" and data["turn"] == 0
    assert data["table"] == [] and data["hands"] == [[], [], []] and s.is_chance_node()


def test_tournament_playout_ends_with_someone_at_50() -> None:
    game = load(2, clock=None, tournament=True)
    s = game.new_initial_state()
    random_playout(s, random.Random(5))
    scores = s.to_json()["scores"]
    assert s.is_terminal() and max(scores) >= 50 and s.end_reason() == "tournament"
    assert [scores[i] >= 50 for i in range(2)] == [r > 0 for r in s.returns()]


def test_a_tournament_that_cannot_reach_50_ends_after_its_last_game() -> None:
    # docs/rules/exagon.md, Tournament (a gap RULES.md leaves): with a one-turn limit the opener
    # wins each game and the other loses more than 20, so from far below 50 no one ever gets
    # there; option tournament_games (default 1000) ends it, the highest score winning.
    game = load(2, clock=None, tournament=True, turn_limit=1)
    assert game.tournament_games == 1000
    s = game.new_initial_state()
    s.points = [-1000, -1000]
    random_playout(s, random.Random(3))
    assert s.is_terminal() and s.end_reason() == "tournament"
    data = s.to_json()
    assert data["games_played"] == 1000 and max(data["scores"]) < 50
    best = max(data["scores"])
    assert s.returns() == [1.0 if v == best else 0.0 for v in data["scores"]]
    assert data["result"]["end"] == "turn_limit"  # the deciding game's reason (gap 19)


@pytest.mark.parametrize("seed", range(8))
def test_random_tournaments_with_a_one_turn_limit_all_end(seed: int) -> None:
    game = load(3, clock=None, tournament=True, turn_limit=1, tournament_games=12)
    s = game.new_initial_state()
    random_playout(s, random.Random(seed))
    data = s.to_json()
    assert s.is_terminal() and 1 <= data["games_played"] <= 12
    if max(data["scores"]) < 50:
        assert data["games_played"] == 12


def test_the_last_game_of_a_tournament_shares_a_tied_top_score() -> None:
    tiles = tiles_of("specials")
    pos = position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[0, 33, 23])
    pos["games_played"] = 2
    s = state_of(pos, tournament=True, tournament_games=3)
    s.apply_json(place(3, (1, 0), 2))  # seat 0's last tile: +20; seat 1 -13, seat 2 -3 (as above)
    data = s.to_json()
    assert data["scores"] == [20, 20, 20] and data["games_played"] == 3 and data["phase"] == "over"
    assert s.returns() == [1 / 3] * 3 and s.end_reason() == "tournament"
    pos["games_played"] = 1  # not the last game: the next one is dealt
    s = state_of(pos, tournament=True, tournament_games=3)
    s.apply_json(place(3, (1, 0), 2))
    assert s.is_chance_node() and s.to_json()["games_played"] == 2


def test_tournament_games_option_and_position_key() -> None:
    for bad in (0, -3, True, "many", 2.5):
        with pytest.raises(ValueError, match="tournament_games"):
            load(2, tournament=True, tournament_games=bad)
    assert load(2, tournament_games="7").tournament_games == 7
    # a one-shot game: the option plays no part, and neither records nor positions carry it
    assert "tournament_games" not in load(2).record_options()
    assert "games_played" not in load(2).new_initial_state().to_json()
    assert load(2, tournament=True, tournament_games=9).record_options()["tournament_games"] == 9
    tiles = tiles_of("specials")
    pos = position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[0, 10, 0])
    assert state_of(pos, tournament=True).to_json()["games_played"] == 0  # missing: 0
    with pytest.raises(ValueError, match="the phase should be over"):
        load(3, clock=None, tournament_games=4).state_from_json({**pos, "games_played": 4})
    with pytest.raises(ValueError, match="null outside a tournament"):
        load(3, clock=None).state_from_json({**pos, "scores": None, "games_played": 0})


def test_turn_limit_ends_the_game_scored_as_blocked() -> None:
    game = load(2, clock=None, turn_limit=3)
    s = game.new_initial_state()
    random_playout(s, random.Random(9))
    assert s.is_terminal() and s.turn == 3 and s.end_reason() == "turn_limit"
    keys = [(len(h), sum(game.penalty[t] for t in h)) for h in s.hands]
    assert s.returns() == [1.0 / keys.count(min(keys)) if k == min(keys) else 0.0 for k in keys]


# --- positions ---------------------------------------------------------------------------

def test_position_json_has_rules_keys_and_round_trips() -> None:
    game = load(3)
    s = game.new_initial_state()
    deal(s, random.Random(1))
    data = s.to_json()
    for key in ("game", "players", "tiles", "table", "hands", "aside", "to_move", "phase", "turn",
                "placed_this_turn", "bonus", "time_left", "carry", "scores"):
        assert key in data
    assert data["tiles"][0] == game.tiles[0] and data["scores"] is None
    assert game.state_from_json(json.loads(json.dumps(data))).to_json() == data


def _bad(**change: Any) -> dict[str, Any]:
    pos = position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]])
    pos.update(change)
    return pos


@pytest.mark.parametrize(
    ("pos", "message"),
    [
        (_bad(hands=[[0, 9], [11, 12]]), "in no hand"),  # conservation
        (_bad(hands=[[0, 9, 10, 1], [11, 12]]), "both in"),
        (_bad(hands=[[0, 9, 10, 99], [11, 12]]), "99"),
        (_bad(table=[{"tile": 1, "at": [1, 0], "rot": 1}, {"tile": 2, "at": [1, 0], "rot": 2}]), "overlap"),
        (_bad(table=[{"tile": 1, "at": [1, 0], "rot": 0}, {"tile": 2, "at": [1, 1], "rot": 2}]), "unmatched"),
        (_bad(table=[{"tile": 1, "at": [1, 0], "rot": 1}, {"tile": 2, "at": [3, 0], "rot": 2}]), "connected"),
        (_bad(phase="dinner"), "phase"),
        (_bad(to_move=5), "to_move"),
        (_bad(time_left=3.0, clock=None), "null"),
        (_bad(time_left=3.0), "carry"),
        (_bad(game="tri"), "exagon"),
        (_bad(placed_this_turn=0, bonus=2), "bonus"),
    ],
)
def test_invalid_positions_say_what_is_wrong(pos: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load(2, clock=None).state_from_json(pos)


# --- reading positions written by another program (RULES.md, Conventions) -------

def test_deal_position_with_any_to_move_is_read_and_written_back_with_the_next_seat() -> None:
    # "accepts any well-typed value of a key whose value these rules do not fix: to_move at a
    # chance node"; "It writes its own convention back" (the seat dealt to next).
    game = load(3)
    s = game.new_initial_state()
    for t in (4, 7, 1, 30):  # four tiles dealt round-robin: the fifth goes to seat 1
        s.apply_json({"deal": t})
    data = s.to_json()
    assert data["phase"] == "deal" and data["to_move"] == 1
    for to_move in (0, 2, 9, -1):
        read = game.state_from_json(dict(data, to_move=to_move))
        assert read.to_json() == data and read.is_chance_node()
        assert read.chance_outcomes() == s.chance_outcomes()
    with pytest.raises(ValueError, match="to_move"):
        game.state_from_json(dict(data, to_move="1"))  # not a whole number


@pytest.mark.parametrize(("time_left", "carry"), [(60, 0), (60.0, None), (None, 12.5), (0, 0)])
def test_opening_position_with_any_time_left_and_carry_is_read(time_left: Any, carry: Any) -> None:
    # "EXAGON's time_left/carry during deal and opening" are not fixed by the rules: a position
    # written by a program that shows the hourglass early (time_left: 60) is read; null written back.
    game = load(2)  # clock 60
    s = game.new_initial_state()
    deal(s, random.Random(4))
    data = s.to_json()
    assert data["phase"] == "opening" and data["time_left"] is None and data["carry"] is None
    other = {k: v for k, v in data.items() if k != "clock"}  # RULES.md keys only
    read = game.state_from_json(dict(other, time_left=time_left, carry=carry))
    assert read.to_json() == data
    assert read.legal_actions() == s.legal_actions()
    s.apply_action(s.legal_actions()[0])  # the opening tile; the turn passes, still the opening
    data = s.to_json()
    assert game.state_from_json(dict(data, time_left=time_left, carry=carry)).to_json() == data
    with pytest.raises(ValueError, match="time_left"):
        game.state_from_json(dict(data, time_left="60"))  # not a number of seconds


def test_deal_position_with_time_left_is_read() -> None:
    game = load(2)
    s = game.new_initial_state()
    s.apply_json({"deal": 3})
    data = s.to_json()
    assert game.state_from_json(dict(data, time_left=60, carry=0.0)).to_json() == data


def test_finished_game_with_turn_counters_is_read_with_counters_0() -> None:
    # "the turn counters of a finished game (placed_this_turn, bonus)" are read whatever they are;
    # this engine writes 0 (the turn ended with the game).
    pos = position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]], phase="over", turn=9)
    pos["result"] = {"winners": [0], "end": "perfect_fit"}
    game = load(2, clock=None)
    for placed, bonus, to_move in ((3, 2, 0), (1, 0, 1), (0, 0, 4)):
        s = game.state_from_json(dict(pos, placed_this_turn=placed, bonus=bonus, to_move=to_move))
        data = s.to_json()
        assert (data["placed_this_turn"], data["bonus"]) == (0, 0)
        assert data["to_move"] == (to_move if to_move < 2 else 0)
        assert s.is_terminal() and s.returns() == [1.0, 0.0]
        assert game.state_from_json(data).to_json() == data
    with pytest.raises(ValueError, match="bonus"):
        game.state_from_json(dict(pos, bonus=None))  # not a whole number


def test_a_game_won_mid_turn_is_written_so_that_it_reads_back() -> None:
    # a game won after an earlier placement in the same turn ended with
    # placed_this_turn > 0, and state_from_json(state.to_json()) raised. Seat 0 has placed one tile
    # this turn and places its last tile (two connections): it wins, and the position reads back.
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0], [11, 12, 9, 10]], placed=1, bonus=0, turn=6))
    s.apply_json(place(0, (0, 0), 0))
    assert s.is_terminal() and s.returns() == [1.0, 0.0] and s.end_reason() == "last_tile"
    data = s.to_json()
    assert (data["turn"], data["placed_this_turn"], data["bonus"]) == (7, 0, 0)
    assert s.game.state_from_json(data).to_json() == data


def test_a_game_ended_by_turn_limit_after_a_placing_turn_reads_back() -> None:
    # "every game ended by turn_limit right after a turn that placed a tile".
    tiles = tiles_of("fives")
    pos = position(tiles, ring(2), [[0, 9, 10], [11, 12]], placed=2, bonus=1, turn=4, time_left=30.0,
                   carry=0.0)
    s = load(2, clock=60, turn_limit=5).state_from_json(pos)
    s.apply_json({"stop": True})
    data = s.to_json()
    assert data["phase"] == "over" and data["turn"] == 5 and data["result"]["end"] == "turn_limit"
    assert (data["placed_this_turn"], data["bonus"]) == (0, 0)
    assert s.game.state_from_json(data).to_json() == data


# --- the opening and the hourglass, re-read against RULES.md --------------------

ONES_2 = {"id": 18, "sides": [1, 1, 1, 1, 1, 2], "star": 7, "star_points": 1}


def opening_after_the_first_tile(first_attaches: bool) -> ExagonState:
    """Two players (clock 60); seat 0 has put tile 0 (six 5s) at [0, 0] and seat 1 is to attach
    with tile 17 (six 1s), which cannot. Seat 0 then holds tiles 1 and 9 (5s), which can attach, or
    tile 18 (1s and a 2), which cannot."""
    tiles = tiles_of("fives")
    if first_attaches:
        pos = position(tiles, [(0, (0, 0), 0)], [[1, 9], [17]], to_move=1, phase="opening", turn=1)
    else:
        pos = position([tiles[0], tiles[17], ONES_2], [(0, (0, 0), 0)], [[18], [17]], to_move=1,
                       phase="opening", turn=1)
    return load(2, clock=60).state_from_json(pos)


def test_opening_a_player_who_cannot_attach_passes_and_the_next_must_attach() -> None:
    # RULES.md Opening: "A player who cannot attach passes, and the next player must attach; the
    # opening ends with the first attached tile"; "Each opening step counts as a turn"; the opening
    # has no clock ("time_left and carry are null" during it; the first turn starts at clock).
    s = opening_after_the_first_tile(first_attaches=True)
    assert [s.action_to_json(a) for a in s.legal_actions()] == [{"pass": True}]
    s.apply_json({"pass": True})
    data = s.to_json()
    assert (data["phase"], data["to_move"], data["turn"], data["time_left"]) == ("opening", 0, 2, None)
    legal = [s.action_to_json(a) for a in s.legal_actions()]
    assert {"pass": True} not in legal and legal and all("place" in a for a in legal)
    assert {a["place"]["tile"] for a in legal} == {1, 9}
    s.apply_json({"place": {"tile": 1, "at": [1, 0], "rot": 3}})  # its 1-side faces away from [0, 0]
    data = s.to_json()
    assert (data["phase"], data["to_move"], data["turn"]) == ("turn", 1, 3)
    assert (data["time_left"], data["carry"], data["placed_this_turn"], data["bonus"]) == (60.0, 0.0, 0, 0)


def test_opening_where_nobody_can_attach_is_blocked() -> None:
    # "If every player passes in a row with no tile placed, the game is blocked": fewest tiles wins,
    # ties broken by the lower tournament penalty (1 star point each), then shared.
    s = opening_after_the_first_tile(first_attaches=False)
    s.apply_json({"pass": True})
    assert s.to_json()["phase"] == "opening" and s.current_player() == 0
    s.apply_json({"pass": True})
    data = s.to_json()
    assert data["phase"] == "over" and data["turn"] == 3 and data["result"]["end"] == "blocked"
    assert s.returns() == [0.5, 0.5]


def test_tile_sets_are_bounded_before_anything_is_built(tmp_path: Path) -> None:
    # docs/rules/exagon.md: a tile set holds at most 100 tiles and its file or text at most 1 MiB.
    shapes = sorted({min(tuple(sd[k:] + sd[:k]) for k in range(6))
                     for sd in ([a, b, c, 1, 2, 3] for a in range(1, 10) for b in range(1, 10) for c in range(1, 4))})
    many = [_t(i, list(sd)) for i, sd in enumerate(shapes[:101])]
    with pytest.raises(ValueError, match="option tiles: the tile set has 101 tiles; a set has at most 100"):
        load(2, tiles=many)
    with pytest.raises(ValueError, match="at most 100"):
        load(2, tiles=json.dumps(many))
    assert load(2, tiles=many[:100]).n_tiles == 100
    big = tmp_path / "big.json"
    big.write_text(" " * (1024 * 1024 + 1))
    with pytest.raises(ValueError, match=r"option tiles: tiles file .*big\.json.* too big"):
        load(2, tiles=str(big))
    with pytest.raises(ValueError, match="option tiles: the tiles JSON text is nested too deeply"):
        load(2, tiles="[" * 100_000 + "]" * 100_000)
    pos = position(many, [], [[0], [1]], phase="opening", turn=0)
    with pytest.raises(ValueError, match="at most 100"):
        load(2, clock=None).state_from_json(pos)


def test_positions_with_another_tile_set_are_self_contained() -> None:
    # A position is self-contained: its tiles list may hold any tiles (RULES.md "Tiles").
    pos = position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]])
    s = load(2, clock=None).state_from_json(pos)  # a default-set game reads a fives position
    assert s.game.n_tiles == 18 and s.to_json()["tiles"] == tiles_of("fives")
    s.apply_json(place(0, (0, 0), 0))
    assert s.placed == 1


# --- notation and text ----------------------------------------------------------------

def test_action_strings_and_json() -> None:
    tiles = tiles_of("fives")
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11], [12, 13]], placed=1, bonus=1))
    examples = {
        "t0@0,0r0": place(0, (0, 0), 0),
        "give t9>1": {"give": {"tile": 9, "to": 1}},
        "stop": {"stop": True},
        "pass": {"pass": True},
        "timeout": {"timeout": True},
    }
    for text, data in examples.items():
        action = s.action_from_string(text)
        assert s.action_to_json(action) == data
        assert s.action_to_string(action) == text
        assert s.action_from_string(json.dumps(data)) == action
    assert s.action_from_string("t0@[0, 0] r3") == s.action_from_json(place(0, (0, 0), 3))
    # Time spent is not part of an action: a " +2.5s" suffix is read and checked, like "elapsed".
    assert s.action_from_string("t0@0,0r3 +2.5s") == s.action_from_json(place(0, (0, 0), 3, elapsed=2.5))
    with pytest.raises(IllegalActionError, match="elapsed time"):
        s.action_from_string("t0@0,0r3 +-1s")
    for bad in ("t0@0,0r6", "give t99>1", "jump", '{"deal": 3, "stop": true}'):
        with pytest.raises(IllegalActionError):
            s.action_from_string(bad)
    # Well-formed actions parse anywhere; apply_action refuses those not legal in the position
    # (a cell no tile can reach included).
    before = s.to_json()
    for text in ("deal t3", "t0@99,0r0"):
        with pytest.raises(IllegalActionError):
            s.apply_action(s.action_from_string(text))
        assert s.to_json() == before
    assert s.action_to_string(s.action_from_string("t0@99,0r0")) == "t0@99,0r0"
    d = load(2).new_initial_state()
    assert d.action_to_string(d.action_from_string("deal t7")) == "deal t7"
    with pytest.raises(IllegalActionError):
        d.apply_json({"stop": True})


def test_render_shows_table_spots_hands_and_time() -> None:
    tiles = tiles_of("fives")
    game = load(2, tiles=tiles)
    s = game.state_from_json(position(tiles, ring(2), [[0, 9, 10], [11, 12]], placed=1, bonus=1,
                                      time_left=42.5, carry=0.0))
    text = s.render()
    for part in ("phase turn", "player 0 to move", "bonus 1", "42.5 s left", "[1,0] rot 1", "legal spots",
                 "[0,0]", ">P0 (3)", "t0[5 5 5 5 5 5]*30", "t1", "t2"):
        assert part in text, part


def test_num_distinct_actions_is_fixed_and_covers_every_action() -> None:
    game = load(5, clock=None)
    assert game.num_distinct_actions() == 40 + 40 * 79 * 79 * 6 + 40 * 5 + 3
    s = game.new_initial_state()
    random_playout(s, random.Random(2), max_actions=120)
    assert all(0 <= a < game.num_distinct_actions() for a in s.legal_actions())


# --- properties ---------------------------------------------------------------------------

def _conserved(s: ExagonState) -> bool:
    data = s.to_json()
    placed = [e["tile"] for e in data["table"]] + [t for h in data["hands"] for t in h] + data["aside"]
    if data["phase"] == "deal":
        return len(placed) == len(set(placed))
    return sorted(placed) == sorted(t["id"] for t in data["tiles"])


def _step(s: ExagonState, rng: random.Random) -> tuple[int, float | None]:
    """A random action and its elapsed seconds: with a clock, a random elapsed and the
    occasional timeout."""
    if s.is_chance_node():
        return sample_chance(s, rng), None
    legal = s.legal_actions()
    action = legal[rng.randrange(len(legal))]
    left = s.time_left()
    if left is not None:
        if rng.random() < 0.05:
            return s.game.timeout_action, rng.uniform(0, 100)
        if rng.random() < 0.7:
            return action, round(rng.uniform(0, min(left, 20)), 3)
    return action, None


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(players=st.integers(2, 5), clock=st.sampled_from([None, 60, 7.5]), tournament=st.sampled_from([False, True]),
       seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(players: int, clock: float | None, tournament: bool, seed: int) -> None:
    game = load(players, clock=clock, tournament=tournament)
    rng = random.Random(seed)
    s = game.new_initial_state()
    record = Record.start(game)
    steps = 0
    while not s.is_terminal():
        assert steps < 20000
        data = s.to_json()
        # JSON round trip at every step, and the rebuilt state plays on identically.
        rebuilt = game.state_from_json(json.loads(json.dumps(data)))
        assert rebuilt.to_json() == data and rebuilt.legal_actions() == s.legal_actions()
        assert _conserved(s)
        if s.is_chance_node():
            assert math.isclose(sum(p for _, p in s.chance_outcomes()), 1.0)
        action, elapsed = _step(s, rng)
        # Illegal actions raise and change nothing.
        if not s.is_chance_node():
            for bad in (-1, game.num_distinct_actions(), game.give0 - 1):
                if bad not in s.legal_actions():
                    with pytest.raises(IllegalActionError):
                        s.apply_action(bad)
            left = s.time_left()
            if left is not None and action != game.timeout_action:
                with pytest.raises(IllegalActionError, match="hourglass"):
                    s.apply_action(action, elapsed=left + 1)
            assert s.to_json() == data
        # Clones are independent.
        if steps % 5 == 0:
            clone = s.clone()
            clone.apply_action(action, elapsed=elapsed)
            rebuilt.apply_action(action, elapsed=elapsed)
            assert s.to_json() == data and rebuilt.to_json() == clone.to_json()
        assert "elapsed" not in s.action_to_json(action)
        assert s.action_from_json(json.loads(json.dumps(s.action_to_json(action)))) == action
        assert s.action_from_string(s.action_to_string(action)) == action
        record.add(s, action, elapsed=elapsed)
        s.apply_action(action, elapsed=elapsed)
        steps += 1
    assert math.isclose(sum(s.returns()), 1.0)
    assert s.end_reason() in (("tournament",) if tournament else ("last_tile", "perfect_fit", "blocked", "turn_limit"))
    replayed = Record.loads(record.dumps()).replay()
    assert replayed.to_json() == s.to_json()


@SETTINGS
@given(players=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_observation_hides_only_the_aside(players: int, seed: int) -> None:
    game = load(players, clock=None, tiles=tiles_of("fives"))
    s = game.new_initial_state()
    random_playout(s, random.Random(seed), max_actions=30)
    obs = s.observation(0)
    data = s.to_json()
    assert "aside" not in obs and obs["aside_count"] == len(data["aside"])
    assert {k: v for k, v in obs.items() if k != "aside_count"} == {k: v for k, v in data.items() if k != "aside"}


def test_counters_are_copied_by_clone() -> None:
    s = load(2, clock=None).new_initial_state()
    random_playout(s, random.Random(8), max_actions=60)
    c = s.clone()
    random_playout(c, random.Random(8))
    assert s.counters()["placements"] < c.counters()["placements"]
    # Game.counters declares every figure counters() reports (the lab reads the declaration).
    assert set(c.counters()) == {x.name for x in ExagonGame.counters}
    assert all(isinstance(v, int) for v in c.counters().values())


def test_random_games_with_the_default_set_end_by_a_last_tile() -> None:
    # The default set is playable: random games end by a last tile or a perfect fit.
    ends: Counter[str] = Counter()
    for players in range(2, 6):
        game = load(players, clock=None)
        rng = random.Random(players)
        for _ in range(10):
            s = game.new_initial_state()
            random_playout(s, rng)
            ends[s.end_reason()] += 1
    assert ends["last_tile"] + ends["perfect_fit"] >= 36


# --- engine contract v2: int actions, elapsed, events, the game's facts ---------

def clocked(arc: int = 2, **kw: Any) -> ExagonState:
    """A fives position in a clocked turn (clock 60): seat 0 to move, 60 s left."""
    tiles = tiles_of("fives")
    pos = position(tiles, ring(arc), [[0, 9, 10], [11, 12]], time_left=60.0, carry=0.0, **kw)
    return load(2, tiles=tiles).state_from_json(pos)


def kinds(events: list[Any]) -> list[str]:
    return [e.kind for e in events]


def find(events: list[Any], kind: str) -> dict[str, Any]:
    found = [dict(e.data) for e in events if e.kind == kind]
    assert len(found) == 1, (kind, kinds(events))
    return found[0]


def test_actions_are_ints_and_elapsed_enters_through_apply_action() -> None:
    # "Actions are always ints. Time spent enters through the API"; RULES.md: any action
    # may carry "elapsed", which time_left loses.
    s = clocked()
    a = s.action_from_json(place(0, (0, 0), 0, elapsed=10))
    assert type(a) is int and a == s.action_from_json(place(0, (0, 0), 0))
    assert s.action_to_json(a) == place(0, (0, 0), 0)  # never with elapsed
    s.apply_action(a, elapsed=10)
    assert s.time_left() == 50.0 and s.to_json()["time_left"] == 50.0
    s.apply_json({"stop": True, "elapsed": 4})  # apply_json passes the key on
    assert s.to_json()["carry"] == 46.0 and s.time_left() == 106.0


@pytest.mark.parametrize("bad", [-1, -0.001, math.nan, math.inf, True, "3", [1]])
def test_bad_elapsed_is_refused_and_changes_nothing(bad: Any) -> None:
    s = clocked()
    before = s.to_json()
    a = s.legal_actions()[0]
    with pytest.raises(IllegalActionError, match="elapsed must be a number of seconds >= 0"):
        s.apply_action(a, elapsed=bad)
    assert s.to_json() == before
    with pytest.raises(IllegalActionError, match="elapsed"):
        s.action_from_json({**s.action_to_json(a), "elapsed": bad})
    # In the opening (no clock runs) a bad value is refused too; a good one is ignored.
    o = load(2, clock=30).new_initial_state()
    deal(o, random.Random(1))
    first = o.to_json()
    with pytest.raises(IllegalActionError, match="elapsed"):
        o.apply_action(o.legal_actions()[0], elapsed=bad)
    assert o.to_json() == first


def test_elapsed_beyond_time_left_is_refused_the_timeout_ignores_it() -> None:
    # RULES.md: "an action whose elapsed exceeds time_left is refused (the hourglass ran out)";
    # "{"timeout": true} ignores elapsed".
    s = clocked()
    before = s.to_json()
    with pytest.raises(IllegalActionError, match=r"the hourglass ran out: 60\.5 s elapsed but only 60\.0 s"):
        s.apply_action(s.legal_actions()[0], elapsed=60.5)
    assert s.to_json() == before
    s.apply_action(s.game.timeout_action, elapsed=1e9)
    assert s.to_json()["time_left"] == 60.0 and s.to_json()["carry"] == 0.0 and s.current_player() == 1


def test_timeout_is_accepted_unlisted_only_in_a_clocked_turn() -> None:
    # RULES.md: the timeout "is accepted in phase turn whenever a clock is set, and is never listed
    # by legal_actions()"; "The opening steps have no clock".
    s = clocked()
    timeout = s.game.timeout_action
    assert timeout not in s.legal_actions() and s.is_legal(timeout)
    unclocked = state_of(position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]]))
    assert not unclocked.is_legal(timeout)
    with pytest.raises(IllegalActionError, match="not accepted now: this game has no clock"):
        unclocked.apply_action(timeout)
    o = load(2, clock=30).new_initial_state()
    deal(o, random.Random(2))
    assert not o.is_legal(o.game.timeout_action)
    with pytest.raises(IllegalActionError, match="not accepted now: the opening steps have no clock"):
        o.apply_action(o.game.timeout_action)


def test_off_table_placements_are_read_and_refused_with_a_clear_message() -> None:
    # RULES.md: "action_from_json rejects only ill-formed actions; apply_action rejects any action
    # that is not legal": a placement on a cell no tile can reach is well-formed (an int above the
    # normal range, decodable) and never legal.
    s = clocked()
    g = s.game
    before = s.to_json()
    for at in ((99, 0), (0, -18), (10**30, -(10**30))):
        data = place(9, at, 4)
        a = s.action_from_json(data)
        assert type(a) is int and a >= g.num_distinct_actions()
        assert s.action_to_json(a) == data and s.action_from_string(s.action_to_string(a)) == a
        assert not s.is_legal(a)
        with pytest.raises(IllegalActionError, match=r"too far from the table for any tile to reach it"):
            s.apply_action(a)
        assert s.to_json() == before
    # The codes of cells inside the window are not actions (each placement has one int).
    with pytest.raises(ValueError, match="not an action"):
        s.action_to_json(g.num_distinct_actions())  # would be [0, 0]
    with pytest.raises(IllegalActionError, match="not an action"):
        s.apply_action(g.num_distinct_actions())


@SETTINGS
@given(q=st.integers(-(10**12), 10**12), r=st.integers(-(10**12), 10**12), t=st.integers(0, 17),
       rot=st.integers(0, 5))
def test_every_placement_has_one_int_that_reads_back(q: int, r: int, t: int, rot: int) -> None:
    s = clocked()
    data = place(t, (q, r), rot)
    a = s.action_from_json(data)
    assert s.action_to_json(a) == data
    inside = max(abs(q), abs(r)) <= s.game.radius
    assert (a < s.game.num_distinct_actions()) == inside


def test_time_left_hook_is_the_hourglass_in_a_clocked_turn_only() -> None:
    game = load(2, clock=45)
    s = game.new_initial_state()
    assert s.time_left() is None  # deal: no hourglass
    deal(s, random.Random(3))
    assert s.time_left() is None  # opening: "The opening steps have no clock"
    while s.to_json()["phase"] == "opening":
        s.apply_action(s.legal_actions()[0])
    assert s.time_left() == 45.0  # "the first turn of phase turn starts with time_left = clock"
    assert load(2, clock=None).new_initial_state().time_left() is None
    random_playout(s, random.Random(3))
    assert s.is_terminal() and s.time_left() is None


@pytest.mark.parametrize(("tiles", "players", "hidden"), [
    (None, 2, False), (None, 3, False), (None, 4, False), (None, 5, False),  # 40 = 2*20, 3*13+1, ...
    ("fives", 2, False), ("fives", 3, False), ("fives", 4, True), ("fives", 5, True),  # 18 tiles
])
def test_hidden_information_only_when_two_or_more_tiles_are_set_aside(tiles: str | None, players: int,
                                                                       hidden: bool) -> None:
    # RULES.md "Deal": two or more leftovers are "set aside unseen (aside, the only hidden
    # information)"; one leftover is the table tile, and hands are face up.
    game = load(players, tiles=tiles_of(tiles) if tiles else None)
    assert game.has_hidden_information() is hidden
    assert ExagonGame.hidden_information is False


def test_scores_are_the_blocked_order() -> None:
    # RULES.md "End": blocked -> "fewest tiles wins, ties broken by the lower tournament penalty";
    # "Score for turn_limit: the same order". scores() = -tiles - penalty / (all penalties + 1).
    tiles = tiles_of("uniform")  # star points of tile k: 1 + k % 6, 30 in all, no Jolly
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 3], [4, 6], [7, 8, 9]]))
    assert s.scores() == [-2 - 7 / 31, -2 - 6 / 31, -3 - 9 / 31]
    for _ in range(3):
        s.apply_json({"pass": True})
    best = max(s.scores())
    assert s.returns() == [1.0 if x == best else 0.0 for x in s.scores()]
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 9], [3, 8], [4, 5, 6]]))  # 3+4 = 4+3: shared
    assert s.scores()[0] == s.scores()[1] > s.scores()[2]


@SETTINGS
@given(players=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_turn_limit_winners_are_the_leaders_by_scores(players: int, seed: int) -> None:
    s = load(players, clock=None, turn_limit=4).new_initial_state()
    random_playout(s, random.Random(seed))
    assert s.end_reason() in ("turn_limit", "last_tile", "perfect_fit", "blocked")
    if s.end_reason() in ("turn_limit", "blocked"):
        best = max(s.scores())
        assert [r > 0 for r in s.returns()] == [x == best for x in s.scores()]


def test_end_reason_is_empty_until_the_end() -> None:
    s = clocked(arc=6)
    assert s.end_reason() == ""
    s.apply_json(place(0, (0, 0), 0))
    assert s.end_reason() == "perfect_fit"


@SETTINGS
@given(players=st.integers(2, 5), seed=st.integers(0, 2**32 - 1))
def test_counters_count_how_the_game_ended(players: int, seed: int) -> None:
    s = load(players, clock=None).new_initial_state()
    random_playout(s, random.Random(seed))
    c = s.counters()
    ended = {"last_tile": "last_tile_wins", "perfect_fit": "perfect_fit_wins", "blocked": "blocked_games",
             "turn_limit": "turn_limit_games"}
    assert {k: c[k] for k in ended.values()} == {v: int(k == s.end_reason()) for k, v in ended.items()}
    kinds_ = {x.kind for x in ExagonGame.counters}
    assert kinds_ <= {"share_per_game", "share_per_event", "mean_per_game", "ratio_per_event"}
    assert all(x.of in (None, "turns") or x.of in c for x in ExagonGame.counters)


def test_events_of_the_deal_are_public_and_never_name_the_tiles_set_aside() -> None:
    # Deal: 18 fives tiles for 4 players: 4 each, 2 set aside unseen (count only); tiles dealt are
    # public (hands are face up; see docs/rules/exagon.md).
    game = load(4, clock=None, tiles=tiles_of("fives"))
    s = game.new_initial_state()
    rng = random.Random(5)
    seen: list[Any] = []
    k = 0
    while s.is_chance_node():
        t = sample_chance(s, rng)
        events = s.apply_action(t)
        assert all(e.to is None for e in events)
        assert events[0].kind == "chance" and events[0].data == {"outcome": {"deal": game.ids[t]}, "seat": k % 4}
        seen.extend(events)
        k += 1
    assert k == 16 and find(seen, "set_aside") == {"count": 2}
    aside = set(s.to_json()["aside"])
    assert len(aside) == 2
    assert not any(e.data.get("tile") in aside for e in seen)
    assert not any(e.data.get("outcome", {}).get("deal") in aside for e in seen)


def test_events_of_the_table_tile_and_the_opening() -> None:
    game = load(3, clock=None)
    s = game.new_initial_state()
    rng = random.Random(6)
    events: list[Any] = []
    while s.is_chance_node():
        events = s.apply_action(sample_chance(s, rng))
    # The 40th node puts the leftover on the table: no seat receives it.
    table_tile = s.to_json()["table"][0]["tile"]
    assert events[0].data == {"outcome": {"deal": table_tile}}
    assert find(events, "table_tile") == {"tile": table_tile, "at": [0, 0], "rot": 0}
    seat = s.current_player()
    a = s.legal_actions()[0]
    placement = s.action_to_json(a)
    events = s.apply_action(a)
    assert events[0].kind == "move" and dict(events[0].data) == {"seat": seat, "action": placement}
    placed = find(events, "placed")
    assert placed["seat"] == seat and placed["opening"] is True and placed["connections"] >= 1


def test_events_of_a_turn_placements_bonuses_stop() -> None:
    s = clocked(arc=3)
    events = s.apply_json(place(0, (0, 0), 0, elapsed=15))
    assert kinds(events) == ["move", "placed", "bonus_earned"]
    assert dict(events[0].data) == {"seat": 0, "action": place(0, (0, 0), 0)}
    placed = find(events, "placed")
    assert placed == {"seat": 0, "tile": 0, "at": [0, 0], "rot": 0, "connections": 3, "opening": False,
                      "next_to": placed["next_to"]}
    assert len(placed["next_to"]) == 3  # the three tiles it touches, by id (the log names them)
    assert find(events, "bonus_earned") == {"seat": 0, "count": 1}
    events = s.apply_json({"stop": True, "elapsed": 5})
    assert kinds(events) == ["move", "stop", "bonuses_lost", "hourglass"]
    assert find(events, "bonuses_lost") == {"seat": 0, "count": 1}
    # "Time left when a turn ends is added to the next player's turn": 60 - 15 - 5 = 40.
    assert find(events, "hourglass") == {"seat": 1, "carry": 40.0, "time_left": 100.0}


def test_events_of_a_bonus_spent_a_tile_given_and_a_perfect_fit() -> None:
    tiles = tiles_of("fives")
    s = state_of(position(tiles, [(1, (1, 0), 1)], [[0, 9, 10], [11, 12]], placed=1, bonus=1))
    assert find(s.apply_json(place(9, (1, -1), 2)), "bonus_spent") == {"seat": 0}
    s = state_of(position(tiles, ring(2), [[0, 9, 10], [11], [12, 13]], placed=1, bonus=1))
    events = s.apply_json({"give": {"tile": 9, "to": 1}})
    assert kinds(events) == ["move", "given"]
    assert find(events, "given") == {"seat": 0, "tile": 9, "to": 1, "bonus_spent": 1}
    s = state_of(position(tiles, ring(6), [[0, 9, 10], [11, 12]]))
    events = s.apply_json(place(0, (0, 0), 0))
    assert kinds(events) == ["move", "placed", "perfect_fit", "end"]
    assert find(events, "perfect_fit") == {"seat": 0, "tile": 0, "at": [0, 0]}
    assert find(events, "end") == {"reason": "perfect_fit", "returns": [1.0, 0.0], "winners": [0]}


def test_events_of_passes_and_a_blocked_end() -> None:
    tiles = tiles_of("uniform")
    s = state_of(position(tiles, [(1, (0, 0), 0)], [[2, 3], [4, 6], [7, 8, 9]]))
    for seat in range(3):
        events = s.apply_json({"pass": True})
        assert find(events, "pass") == {"seat": seat, "in_a_row": seat + 1}
    assert find(events, "end") == {"reason": "blocked", "returns": [0.0, 1.0, 0.0], "winners": [1]}


def test_events_of_a_timeout() -> None:
    # RULES.md: the timeout ends the turn, "pending bonuses are lost", it carries nothing, and "a
    # turn ended by timeout with no tile placed counts as a pass".
    s = clocked(arc=3)
    s.apply_json(place(0, (0, 0), 0, elapsed=20))  # 3 connections: one bonus pending
    events = s.apply_json({"timeout": True, "elapsed": 999})
    assert kinds(events) == ["timeout", "hourglass"]
    assert dict(events[0].data) == {"seat": 0, "action": {"timeout": True}, "bonuses_lost": 1,
                                    "counts_as_pass": False}
    assert find(events, "hourglass") == {"seat": 1, "carry": 0.0, "time_left": 60.0}
    events = s.apply_json({"timeout": True})
    assert dict(events[0].data)["counts_as_pass"] is True and s.to_json()["passes"] == 1


def test_events_of_a_tournament() -> None:
    # Tournament (seed): the winner gains 20, the others lose their star points plus 3 per Jolly;
    # "Each game is dealt afresh"; over when someone has 50.
    tiles = tiles_of("specials")
    s = state_of(position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[0, 10, 0]), tournament=True)
    events = s.apply_json(place(3, (1, 0), 2))
    assert kinds(events) == ["move", "placed", "tournament_game", "new_game"]
    assert find(events, "tournament_game") == {"winners": [0], "reason": "last_tile", "change": [20, -13, -3],
                                               "scores": [20, -3, -3]}
    assert find(events, "new_game") == {"scores": [20, -3, -3]}
    s = state_of(position(tiles, [(0, (0, 0), 0)], [[3], [1, 7], [6]], scores=[35, 10, 0]), tournament=True)
    events = s.apply_json(place(3, (1, 0), 2))
    assert kinds(events) == ["move", "placed", "tournament_game", "end"]
    assert find(events, "end")["reason"] == "tournament" and s.end_reason() == "tournament"


EVENT_KINDS = {"move", "chance", "timeout", "end", "set_aside", "table_tile", "placed", "bonus_earned",
               "bonus_spent", "given", "perfect_fit", "pass", "stop", "bonuses_lost", "hourglass",
               "tournament_game", "new_game"}


@SETTINGS
@given(players=st.integers(2, 5), clock=st.sampled_from([None, 30]), tournament=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_events_are_public_json_and_the_fast_path_agrees(players: int, clock: float | None, tournament: bool,
                                                         seed: int) -> None:
    game = load(players, clock=clock, tournament=tournament, tiles=tiles_of("fives") if players > 3 else None)
    s = game.new_initial_state()
    fast = s.clone()
    rng = random.Random(seed)
    while not s.is_terminal():
        action, elapsed = _step(s, rng)
        events = s.apply_action(action, elapsed=elapsed)
        if elapsed is None:
            fast.apply_unchecked(action)
        else:  # the fast path has no clock: follow the checked state's time from JSON
            fast = game.state_from_json(s.to_json())
        assert fast.to_json() == s.to_json()
        assert events[0].kind in ("move", "chance", "timeout")
        for e in events:
            assert e.kind in EVENT_KINDS and e.to is None
            json.dumps(e.to_json())
    assert events[-1].kind == "end" and events[-1].data["reason"] == s.end_reason()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hands": [[0, 9, "10"], [11, 12]]}, r"^hands\[0\]\[2\]: expected a whole number, got '10'$"),
        ({"table": [{"tile": 1, "at": [1, 0], "rot": 6}, {"tile": 2, "at": [0, -1], "rot": 2}]},
         r"^table\[0\]\.rot: expected a whole number from 0 to 5, got 6$"),
        ({"phase": "dinner"}, r"^phase: expected one of 'deal', 'opening', 'turn', 'over', got 'dinner'$"),
        ({"time_left": "60"}, r"^time_left: expected a number or null, got '60'$"),
        ({"result": {"winners": [0], "end": "boredom"}}, r"^result\.end: expected one of 'last_tile'"),
        ({"players": 6}, r"^players: expected a whole number from 2 to 5, got 6$"),
        ({"bonus": None}, r"^bonus: expected a whole number, got null$"),
    ],
)
def test_position_shape_errors_name_the_key_path(change: dict[str, Any], message: str) -> None:
    # the position's shape is declared (PositionShape) and read by the shared reader
    # (ludoteca.core.shape), whose messages name the key path; the module keeps the rules' invariants.
    pos = position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]])
    pos.update(change)
    with pytest.raises(ValueError, match=message):
        load(2, clock=None).state_from_json(pos)
    missing = {k: v for k, v in position(tiles_of("fives"), ring(2), [[0, 9, 10], [11, 12]]).items() if k != "bonus"}
    with pytest.raises(ValueError, match=r"^position is missing the key 'bonus'$"):
        load(2, clock=None).state_from_json(missing)


# --- the rulebook's numbers as options (RULES.md section 4, other values) ---------------------------------


def test_rulebook_numbers_default_to_the_seed_and_stay_out_of_records() -> None:
    for players, each in ((2, 20), (3, 13), (4, 10), (5, 8)):
        game = ludoteca.load_game("exagon", players=players)
        assert isinstance(game, ExagonGame) and game.per_seat == each
        assert not {"hand", "bonus_3", "go_on", "tournament_target", "win_points"} & set(game.record_options())
    game = ludoteca.load_game("exagon", players=2, go_on=3, hand=12)
    assert game.record_options()["go_on"] == 3 and game.record_options()["hand"] == 12
    assert ludoteca.load_game("exagon", **game.record_options()).options == game.options


@pytest.mark.parametrize(("options", "named", "words"), [
    ({"hand": 21}, "hand", "at most 20"), ({"hand": 0}, "hand", "1 or more"), ({"go_on": 0}, "go_on", "1 to 6"),
    ({"bonus_3": 7}, "bonus_3", "0 to 6"), ({"tournament_target": 0}, "tournament_target", "1 to 10000")])
def test_bad_rulebook_numbers_are_refused_with_the_reason(options: dict[str, Any], named: str, words: str) -> None:
    with pytest.raises(ValueError, match=named) as info:
        ludoteca.load_game("exagon", players=2, **options)
    assert words in str(info.value)


def test_fewer_tiles_per_hand_set_the_rest_aside() -> None:
    # Deal with hand=12 for two players: 12 tiles each, the 16 others set aside unseen.
    game = ludoteca.load_game("exagon", players=2, hand=12, clock=None)
    state = game.new_initial_state()
    rng = random.Random(3)
    while state.to_json()["phase"] == "deal":
        state.apply_action(sample_chance(state, rng))
    data = state.to_json()
    assert [len(h) for h in data["hands"]] == [12, 12] and not data["table"]
    assert game.has_hidden_information()


def _placements_keep_the_turn(options: dict[str, Any], seeds: int) -> tuple[int, int]:
    """(placements in phase turn that kept the player's turn, those that ended it), wins excluded."""
    game = ludoteca.load_game("exagon", players=3, clock=None, **options)
    kept = ended = 0
    for seed in range(seeds):
        rng = random.Random(seed)
        state = game.new_initial_state()
        while not state.is_terminal():
            action = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
            before = state.to_json()
            placing = before["phase"] == "turn" and "place" in state.action_to_json(action)
            state.apply_action(action)
            after = state.to_json()
            if placing and not state.is_terminal() and after["turn"] == before["turn"]:
                kept += 1
            elif placing and not state.is_terminal():
                ended += 1
    return kept, ended


def test_go_on_one_every_placement_keeps_the_turn_and_six_none_does() -> None:
    # A turn, with go_on=1: every tile touches one tile at least, so no placement ends the turn.
    kept, ended = _placements_keep_the_turn({"go_on": 1}, 3)
    assert kept > 0 and ended == 0
    # with go_on=6 and no bonuses, only a perfect fit (which wins) would let the turn go on
    kept, ended = _placements_keep_the_turn({"go_on": 6, "bonus_3": 0, "bonus_4": 0, "bonus_5": 0}, 3)
    assert kept == 0 and ended > 0
