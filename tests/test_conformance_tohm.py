"""Conformance of the TOHM engine with /work/shared/RULES.md section 3, written from RULES.md alone.

Positions are built from RULES.md's JSON example, actions applied as canonical JSON, and the
results compared key by key with what a quoted RULES.md sentence implies. ``Ref`` is an
independent reference model of the RULES.md text, used to cross-check random playouts.
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

# "Cell numbers ... (default ...)"
DEFAULT_LAYOUT = [
    [3, 4, 5, 6, 4],
    [5, 6, 3, 4, 6],
    [4, 3, 6, 5, 3],
    [6, 5, 4, 3, 5],
    [5, 3, 6, 4, 4],
]
# "Board area by players: 2 -> 3x3, 3 -> 3 rows x 4 columns, 4 -> 4x4, 5 -> ... 5x5"
AREA = {2: (3, 3), 3: (3, 4), 4: (4, 4), 5: (5, 5)}
KEYS = ("game", "players", "rows", "cols", "layout", "board", "supply", "trophies", "trophies_left",
        "to_move", "phase", "roll", "turn")
EXAMPLE = {"game": "tohm", "players": 2, "rows": 3, "cols": 3,
           "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 6]],
           "board": [[None, 0, None], [1, None, None], [None, None, None]],
           "supply": [4, 4], "trophies": [0, 0], "trophies_left": 10,
           "to_move": 0, "phase": "roll", "roll": None, "turn": 0}
PASS = json.dumps({"pass": True}, sort_keys=True)


# --------------------------------------------------------------------------------------------
# helpers
def required(d: dict) -> dict:
    return {k: d[k] for k in KEYS}


def position(board: list[list], players: int | None = None, layout=None, **over) -> dict:
    """A RULES.md position (required keys only): supply = 5 minus the tokens on the board
    ("five tokens per player"), trophies_left = 10 minus those given ("ten trophies")."""
    rows, cols = len(board), len(board[0])
    if players is None:
        players = next(n for n, rc in AREA.items() if rc == (rows, cols))
    layout = layout or [row[:cols] for row in DEFAULT_LAYOUT[:rows]]
    supply = [5 - sum(v == p for row in board for v in row) for p in range(players)]
    d = {"game": "tohm", "players": players, "rows": rows, "cols": cols, "layout": layout,
         "board": board, "supply": supply, "trophies": [0] * players, "trophies_left": 10,
         "to_move": 0, "phase": "roll", "roll": None, "turn": 0}
    d.update(over)
    if "trophies" in over and "trophies_left" not in over:
        d["trophies_left"] = 10 - sum(d["trophies"])
    return d


def empty(rows: int, cols: int) -> list[list]:
    return [[None] * cols for _ in range(rows)]


def state_of(d: dict, **opts):
    game = ludoteca.load_game("tohm", players=d["players"], **opts)
    return game.state_from_json(copy.deepcopy(d))


def rolled(d: dict, face: int, **opts):
    s = state_of(d, **opts)
    s.apply_action(s.action_from_json({"roll": face}))
    return s


def expected_legal(d: dict) -> set[str]:
    """RULES.md "A turn": 1 remove any token / 2 move any token to any empty cell / 3-6 place
    your own token on an empty cell with that number; otherwise the lone `{"pass": true}`."""
    b, face, me = d["board"], d["roll"], d["to_move"]
    cells = [(r, c) for r in range(d["rows"]) for c in range(d["cols"])]
    full = [rc for rc in cells if b[rc[0]][rc[1]] is not None]
    free = [rc for rc in cells if b[rc[0]][rc[1]] is None]
    if face == 1:
        out = {key({"remove": list(rc)}) for rc in full}
    elif face == 2:
        out = {key({"move": [list(a), list(z)]}) for a in full for z in free}
    else:
        out = set()
        if d["supply"][me] > 0:
            out = {key({"place": list(rc)}) for rc in free if d["layout"][rc[0]][rc[1]] == face}
    return out or {PASS}


class Ref:
    """The RULES.md text as a tiny model of the required keys."""

    def __init__(self, d: dict, turn_limit: int = 1000):
        self.d = copy.deepcopy(required(d))
        self.turn_limit = turn_limit

    def tris(self, r: int, c: int) -> None:
        # "three or more tokens of one player in a row, horizontally or vertically ..., through the
        # cell just filled, scores. Each maximal run of 3+ counts as one tris ... The tokens in the
        # runs go back to their owner, who gains one trophy per tris ... No trophy beyond the ten"
        d, b = self.d, self.d["board"]
        p = b[r][c]
        runs = []
        for dr, dc in ((0, 1), (1, 0)):
            run = [(r, c)]
            for sgn in (1, -1):
                rr, cc = r + sgn * dr, c + sgn * dc
                while 0 <= rr < d["rows"] and 0 <= cc < d["cols"] and b[rr][cc] == p:
                    run.append((rr, cc))
                    rr, cc = rr + sgn * dr, cc + sgn * dc
            if len(run) >= 3:
                runs.append(run)
        cells = {rc for run in runs for rc in run}
        for rr, cc in cells:
            b[rr][cc] = None
        d["supply"][p] += len(cells)
        given = min(len(runs), d["trophies_left"])
        d["trophies"][p] += given
        d["trophies_left"] -= given

    def apply(self, a: dict) -> None:
        d = self.d
        if d["phase"] == "roll":
            d["phase"], d["roll"] = "act", a["roll"]
            return
        me, b = d["to_move"], d["board"]
        if "place" in a:
            r, c = a["place"]
            b[r][c] = me
            d["supply"][me] -= 1
            self.tris(r, c)
        elif "remove" in a:
            r, c = a["remove"]
            d["supply"][b[r][c]] += 1  # "return it to its owner"
            b[r][c] = None
        elif "move" in a:
            (r, c), (r2, c2) = a["move"]
            b[r2][c2], b[r][c] = b[r][c], None
            self.tris(r2, c2)
        d["turn"] += 1
        d["to_move"] = (me + 1) % d["players"]
        d["phase"], d["roll"] = "roll", None
        # "when all ten trophies are given" the game ends; so does `turn_limit`
        if d["trophies_left"] == 0 or d["turn"] >= self.turn_limit:
            d["phase"] = "over"

    def check(self, got: dict) -> None:
        got = required(got)
        if self.d["phase"] == "over":
            settled = ("board", "supply", "trophies", "trophies_left", "phase", "turn")
            assert {k: got[k] for k in settled} == {k: self.d[k] for k in settled}
        else:
            assert got == self.d


def winners_share(scores: list[int]) -> list[float]:
    best = max(scores)
    win = [i for i, v in enumerate(scores) if v == best]
    return [1 / len(win) if i in win else 0.0 for i in range(len(scores))]


# --------------------------------------------------------------------------------------------
# options, set-up
@pytest.mark.parametrize("n", range(2, 6))
def test_initial_position(n: int) -> None:
    g = ludoteca.load_game("tohm", players=n)
    assert g.options["turn_limit"] == 1000
    s = g.new_initial_state()
    d = s.to_json()
    rows, cols = AREA[n]
    # "Each area is the top-left corner of the 5x5 board."
    assert d["layout"] == [row[:cols] for row in DEFAULT_LAYOUT[:rows]]
    assert (d["rows"], d["cols"]) == (rows, cols)
    assert d["board"] == empty(rows, cols)
    # "five tokens per player, ten trophies"; "seat 0 starts"; `roll` (chance)
    assert d["supply"] == [5] * n and d["trophies"] == [0] * n and d["trophies_left"] == 10
    assert (d["to_move"], d["phase"], d["roll"], d["turn"]) == (0, "roll", None, 0)
    assert (d["game"], d["players"]) == ("tohm", n)
    assert s.current_player() == CHANCE and s.returns() == [0.0] * n


@pytest.mark.parametrize("bad", [{"players": 1}, {"players": 6}, {"players": 2, "colour": "red"},
                                 {"players": 2, "layout": [[3, 4], [5, 6]]},
                                 {"players": 2, "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 7]]},
                                 {"players": 2, "layout": [[3, 4, 5], [5, 6, 3], [4, 3]]}])
def test_bad_options_raise_value_error(bad) -> None:
    # "2 to 5 players"; "`layout` takes any rectangular grid of at least 3x3 numbers 3-6"
    with pytest.raises(ValueError):
        ludoteca.load_game("tohm", **bad)


@pytest.mark.parametrize("n", [2, 5])
def test_layout_option_is_the_whole_board_whatever_the_players(n: int) -> None:
    layout = [[3, 3, 4, 4], [5, 5, 6, 6], [6, 5, 4, 3]]
    d = ludoteca.load_game("tohm", players=n, layout=layout).new_initial_state().to_json()
    assert d["layout"] == layout and (d["rows"], d["cols"]) == (3, 4)
    assert d["board"] == empty(3, 4)


def test_die_is_uniform() -> None:
    # chance `{"roll": 4}`; "one die" (faces 1-6 with the effects listed)
    s = state_of(EXAMPLE)
    outs = {key(s.action_to_json(a)): p for a, p in s.chance_outcomes()}
    assert set(outs) == {key({"roll": f}) for f in range(1, 7)}
    assert all(math.isclose(p, 1 / 6) for p in outs.values())


def test_rules_example_reads_and_writes_back() -> None:
    # "Keys listed are required; implementations may add keys"
    s = state_of(EXAMPLE)
    assert required(s.to_json()) == EXAMPLE
    s.apply_action(s.action_from_json({"roll": 4}))
    d = s.to_json()
    assert (d["phase"], d["roll"], d["to_move"]) == ("act", 4, 0) and s.current_player() == 0


def test_errors() -> None:
    assert issubclass(IllegalActionError, ValueError)
    s = rolled(EXAMPLE, 4)
    before = s.to_json()
    with pytest.raises(IllegalActionError):  # [0, 0] holds a 3, not a 4
        s.apply_action(s.action_from_json({"place": [0, 0]}))
    assert s.to_json() == before
    with pytest.raises(IllegalActionError):
        s.action_from_json({"jump": [0, 0]})


# --------------------------------------------------------------------------------------------
# the die's effects
def test_roll_1_removes_any_token_back_to_its_owner() -> None:
    # "`1`: remove any token from the board (anyone's) and return it to its owner."
    s = rolled(EXAMPLE, 1)
    assert legal_json(s) == {key({"remove": [0, 1]}), key({"remove": [1, 0]})}
    s.apply_action(s.action_from_json({"remove": [1, 0]}))
    d = s.to_json()
    assert d["board"] == [[None, 0, None], [None, None, None], [None, None, None]]
    assert d["supply"] == [4, 5]
    assert (d["to_move"], d["phase"], d["roll"], d["turn"]) == (1, "roll", None, 1)


def test_roll_1_on_empty_board_is_a_lone_pass() -> None:
    # "Nothing if the board is empty." / "'Nothing' and 'pass' are both the action {"pass": true}"
    s = rolled(position(empty(3, 3)), 1)
    assert legal_json(s) == {PASS}
    s.apply_action(s.action_from_json({"pass": True}))
    d = s.to_json()
    assert (d["to_move"], d["phase"], d["turn"]) == (1, "roll", 1)


def test_roll_2_moves_any_token_anywhere_empty() -> None:
    # "`2`: move any token (anyone's) to any empty cell, whatever its number."
    s = rolled(EXAMPLE, 2)
    exp = expected_legal(rolled(EXAMPLE, 2).to_json())
    assert legal_json(s) == exp and len(exp) == 2 * 7
    s.apply_action(s.action_from_json({"move": [[1, 0], [2, 2]]}))
    d = s.to_json()
    assert d["board"] == [[None, 0, None], [None, None, None], [None, None, 1]]
    assert d["supply"] == [4, 4]


@pytest.mark.parametrize("board", [empty(3, 3), [[0, 1, 0], [1, 0, 1], [1, 0, 1]]])
def test_roll_2_on_empty_or_full_board_is_a_lone_pass(board) -> None:
    # "Nothing if the board is empty or full."
    d = position(board)
    assert rolled(d, 2).legal_actions() and legal_json(rolled(d, 2)) == {PASS}


@pytest.mark.parametrize("face", [3, 4, 5, 6])
def test_roll_3_to_6_places_on_cells_with_that_number(face: int) -> None:
    # "place one of your own tokens from your supply on an empty cell with that number"
    d = position([[None, 0, None], [1, None, None], [None, None, None]], to_move=1)
    s = rolled(d, face)
    exp = {key({"place": [r, c]}) for r in range(3) for c in range(3)
           if d["layout"][r][c] == face and d["board"][r][c] is None}
    assert legal_json(s) == (exp or {PASS})


def test_place_json_and_result() -> None:
    s = rolled(EXAMPLE, 5)  # the only 5 is [0, 2]
    assert legal_json(s) == {key({"place": [0, 2]})}
    s.apply_action(s.action_from_json({"place": [0, 2]}))
    d = s.to_json()
    assert d["board"][0] == [None, 0, 0] and d["supply"] == [3, 4]


def test_no_token_left_is_a_pass() -> None:
    # "Pass if you have no token left or no such cell is empty."
    board = [[0, 0, None], [None, 0, None], [0, None, 0]]  # five tokens of seat 0, no tris
    d = position(board)
    assert d["supply"] == [0, 5]
    for face in (3, 4, 5, 6):
        assert legal_json(rolled(d, face)) == {PASS}
    # no empty cell with that number: the only 6s are [1, 1] and [2, 2], both taken
    assert legal_json(rolled(position(board, to_move=1), 6)) == {PASS}


# --------------------------------------------------------------------------------------------
# tris
def test_row_tris_scores_one_and_tokens_go_home() -> None:
    board = [[0, 0, None], [1, None, None], [1, None, None]]
    s = rolled(position(board), 5)  # [0, 2] is a 5
    s.apply_action(s.action_from_json({"place": [0, 2]}))
    d = s.to_json()
    assert d["board"] == [[None, None, None], [1, None, None], [1, None, None]]
    assert d["supply"] == [5, 3] and d["trophies"] == [1, 0] and d["trophies_left"] == 9


def test_diagonal_does_not_score() -> None:
    # "horizontally or vertically (not diagonally)"
    board = [[0, None, None], [None, 0, None], [None, None, None]]
    s = rolled(position(board), 6)  # [2, 2] is a 6 ([1, 1] is taken)
    s.apply_action(s.action_from_json({"place": [2, 2]}))
    d = s.to_json()
    assert d["board"][2][2] == 0 and d["trophies"] == [0, 0] and d["supply"] == [2, 5]


def test_cross_tris_scores_two() -> None:
    # "a row and a column through the same cell score two"
    board = [[None, None, 0], [None, None, 0], [0, 0, None]]
    s = rolled(position(board), 6)  # [2, 2] is a 6
    s.apply_action(s.action_from_json({"place": [2, 2]}))
    d = s.to_json()
    assert d["board"] == empty(3, 3)
    assert d["supply"] == [5, 5] and d["trophies"] == [2, 0] and d["trophies_left"] == 8


def test_run_of_four_is_one_tris() -> None:
    # "Each maximal run of 3+ counts as one tris"
    board = empty(4, 4)
    board[0] = [1, 1, None, 1]
    s = rolled(position(board, to_move=1), 5)  # layout[0][2] == 5
    s.apply_action(s.action_from_json({"place": [0, 2]}))
    d = s.to_json()
    assert d["board"] == empty(4, 4) and d["trophies"][1] == 1 and d["supply"][1] == 5


def test_move_completing_opponent_tris_gives_owner_the_trophy() -> None:
    # "The tokens in the runs go back to their owner, who gains one trophy per tris -- the owner,
    # not necessarily the mover"
    board = [[1, 1, None], [None, None, None], [None, None, 1]]
    s = rolled(position(board, to_move=0), 2)
    s.apply_action(s.action_from_json({"move": [[2, 2], [0, 2]]}))
    d = s.to_json()
    assert d["board"] == empty(3, 3)
    assert d["trophies"] == [0, 1] and d["supply"] == [5, 5] and d["trophies_left"] == 9


def test_trophy_cap_and_end() -> None:
    # "No trophy beyond the ten is given." / "when all ten trophies are given, most trophies wins"
    board = [[None, None, 0], [None, None, 0], [0, 0, None]]
    d = position(board, trophies=[5, 4])
    assert d["trophies_left"] == 1
    s = rolled(d, 6)
    s.apply_action(s.action_from_json({"place": [2, 2]}))  # a cross tris worth two
    got = s.to_json()
    assert got["trophies"] == [6, 4] and got["trophies_left"] == 0
    assert got["phase"] == "over" and s.is_terminal() and s.current_player() == TERMINAL
    assert s.returns() == [1.0, 0.0] and s.legal_actions() == []


def test_end_with_tied_trophies_shares() -> None:
    # "most trophies wins; ties share"
    board = [[None, None, 0], [None, None, 0], [None, None, None]]
    d = position(board, players=2, trophies=[4, 5])
    s = rolled(d, 6)
    s.apply_action(s.action_from_json({"place": [2, 2]}))
    assert s.is_terminal() and s.to_json()["trophies"] == [5, 5]
    assert s.returns() == [0.5, 0.5]


def test_turn_limit_leaders_share() -> None:
    # "Score for `turn_limit`: trophies."; "the leaders ... share the win"
    d = position(empty(3, 4), trophies=[2, 0, 2], to_move=2, turn=6)
    s = rolled(d, 1, turn_limit=7)
    s.apply_action(s.action_from_json({"pass": True}))
    assert s.to_json()["turn"] == 7 and s.to_json()["phase"] == "over"
    assert s.is_terminal() and s.returns() == [0.5, 0.0, 0.5]


# --------------------------------------------------------------------------------------------
# random playouts cross-checked against the reference model
@pytest.mark.parametrize(("n", "seed"), [(2, 11), (3, 12), (4, 13), (5, 14)])
def test_playout_matches_reference(n: int, seed: int) -> None:
    rng = random.Random(seed)
    history: list = []
    s = ludoteca.load_game("tohm", players=n).new_initial_state()
    ref = Ref(s.to_json())
    for _ in range(3000):
        if s.is_terminal():
            break
        assert s.returns() == [0.0] * n  # "all 0 before the end"
        d = s.to_json()
        if s.is_chance_node():
            outs = {key(s.action_to_json(a)): p for a, p in s.chance_outcomes()}
            assert set(outs) == {key({"roll": f}) for f in range(1, 7)}
        else:
            assert s.current_player() == d["to_move"]
            assert legal_json(s) == expected_legal(d)
        assert_required_keys_rebuild(s, KEYS)
        play_random_checked(s, rng, history, ref)
    assert s.is_terminal()
    assert s.returns() == pytest.approx(winners_share(s.to_json()["trophies"]))
    # "a game is fully determined by its options plus its list of actions (chance outcomes included)"
    r = s.game.new_initial_state()
    for aj in history:
        r.apply_action(r.action_from_json(aj))
    assert r.to_json() == s.to_json() and r.returns() == s.returns()


# --------------------------------------------------------------------------------------------
# "`action_from_json` rejects only ill-formed actions; `apply_action` rejects any action that is
# not legal in the position."
WELL_FORMED = [{"roll": f} for f in range(1, 7)] + [
    {"place": [0, 2]}, {"place": [2, 2]}, {"remove": [0, 1]}, {"remove": [2, 2]},
    {"move": [[1, 0], [2, 2]]}, {"move": [[2, 2], [1, 0]]}, {"pass": True},
    # well-formed but never legal: "move any token (anyone's) to any empty cell" (its own cell is
    # not empty)
    {"move": [[1, 0], [1, 0]]}]


def test_action_from_json_accepts_every_well_formed_action_anywhere() -> None:
    states = [state_of(EXAMPLE), rolled(EXAMPLE, 1), rolled(EXAMPLE, 2), rolled(EXAMPLE, 5)]
    problems = [p for st in states for p in parse_then_apply_problems(st, WELL_FORMED)]
    assert not problems, "\n".join(problems)


def test_unknown_option_is_a_value_error_naming_it() -> None:
    # "Unknown option / bad value -> ValueError naming it" (docs/architecture.md)
    with pytest.raises(ValueError, match="frobnicate"):
        ludoteca.load_game("tohm", players=2, frobnicate=1)
    with pytest.raises(ValueError, match="turn_limit"):
        ludoteca.load_game("tohm", players=2, turn_limit="soon")
