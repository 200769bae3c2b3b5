"""TOHM: scenario tests (each tied to a rule of RULES.md section 3), properties, bad input."""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca import CHANCE, TERMINAL, IllegalActionError, Record
from ludoteca.core.chance import random_playout, sample_chance
from ludoteca.games.tohm import DEFAULT_BOARD, TohmGame, TohmState

PROPS = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))

# The RULES.md board (default layout):
#   3 4 5 6 4
#   5 6 3 4 6
#   4 3 6 5 3
#   6 5 4 3 5
#   5 3 6 4 4


def load(players: int = 2, **options: Any) -> TohmGame:
    game = ludoteca.load_game("tohm", players=players, **options)
    assert isinstance(game, TohmGame)
    return game


def position(
    game: TohmGame,
    board: list[str],
    *,
    to_move: int = 0,
    roll: int | None = None,
    trophies: list[int] | None = None,
    turn: int = 0,
) -> TohmState:
    """A position from a picture: one string per row, ``.`` empty, a digit = the seat's token.

    ``roll`` None means phase ``roll``; otherwise phase ``act`` with that die.
    """
    n = game.num_players
    grid = [[None if ch == "." else int(ch) for ch in row.replace(" ", "")] for row in board]
    on_board = [sum(row.count(p) for row in grid) for p in range(n)]
    trophies = trophies if trophies is not None else [0] * n
    data = game.new_initial_state().to_json()
    data.update(
        board=grid,
        supply=[game.tokens - k for k in on_board],
        trophies=trophies,
        trophies_left=game.trophies_total - sum(trophies),
        to_move=to_move,
        phase="roll" if roll is None else "act",
        roll=roll,
        turn=turn,
    )
    state = game.state_from_json(data)
    assert isinstance(state, TohmState)
    return state


def act(state: TohmState, data: dict) -> None:
    state.apply_action(state.action_from_json(data))


def legal_json(state: TohmState) -> list[dict]:
    return [state.action_to_json(a) for a in state.legal_actions()]


def board_picture(state: TohmState) -> list[str]:
    return ["".join("." if x is None else str(x) for x in row) for row in state.to_json()["board"]]


# --- Material: board area by player count (seed) and cell numbers (default) ------------

@pytest.mark.parametrize(("players", "rows", "cols"), [(2, 3, 3), (3, 3, 4), (4, 4, 4), (5, 5, 5)])
def test_board_area_by_player_count_is_top_left_of_the_rules_board(players: int, rows: int, cols: int) -> None:
    # RULES.md "Material": 2 -> 3x3, 3 -> 3 rows x 4 cols, 4 -> 4x4, 5 -> 5x5, top-left corner.
    game = load(players)
    data = game.new_initial_state().to_json()
    assert (data["rows"], data["cols"]) == (rows, cols)
    assert data["layout"] == [list(DEFAULT_BOARD[r][:cols]) for r in range(rows)]
    assert game.record_options()["layout"] == data["layout"]


def test_rules_example_position_is_the_2_player_start_layout() -> None:
    # RULES.md "Position JSON" example: the 2-player layout, read as a position.
    example = {"game": "tohm", "players": 2, "rows": 3, "cols": 3,
               "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 6]],
               "board": [[None, 0, None], [1, None, None], [None, None, None]],
               "supply": [4, 4], "trophies": [0, 0], "trophies_left": 10,
               "to_move": 0, "phase": "roll", "roll": None, "turn": 0}
    state = load(2).state_from_json(example)
    assert state.to_json() == example
    assert state.current_player() == CHANCE


def test_initial_position() -> None:
    # Material: 5 tokens each, 10 trophies; Order: seat 0 starts with a roll (chance).
    state = load(4).new_initial_state()
    data = state.to_json()
    assert data["supply"] == [5, 5, 5, 5] and data["trophies"] == [0, 0, 0, 0]
    assert data["trophies_left"] == 10 and data["to_move"] == 0
    assert data["phase"] == "roll" and data["roll"] is None and data["turn"] == 0
    assert state.current_player() == CHANCE
    outcomes = state.chance_outcomes()
    assert [a for a, _ in outcomes] == [1, 2, 3, 4, 5, 6]
    assert all(math.isclose(p, 1 / 6) for _, p in outcomes)


# --- A turn ---------------------------------------------------------------------------

@pytest.mark.parametrize("die", [3, 4, 5, 6])
def test_placement_only_on_empty_cells_of_the_rolled_number(die: int) -> None:
    # "3-6: place one of your own tokens ... on an empty cell with that number."
    game = load(5)
    state = position(game, [".....", "1....", ".....", ".....", "....."], roll=die)
    expected = [
        {"place": [r, c]} for r in range(5) for c in range(5)
        if DEFAULT_BOARD[r][c] == die and (r, c) != (1, 0)
    ]
    assert legal_json(state) == expected
    act(state, expected[0])
    r, c = expected[0]["place"]
    assert state.to_json()["board"][r][c] == 0
    assert state.to_json()["supply"][0] == 4


def test_placement_on_a_wrong_number_is_illegal() -> None:
    state = position(load(2), ["...", "...", "..."], roll=4)  # (0,0) carries a 3, not a 4
    before = state.to_json()
    with pytest.raises(IllegalActionError, match="not legal"):
        act(state, {"place": [0, 0]})
    assert state.to_json() == before


def test_no_such_cell_empty_means_pass() -> None:
    # "Pass if ... no such cell is empty": the 2-player board's 4s are (0,1) and (2,0).
    state = position(load(2), [".1.", "...", "1.."], roll=4)
    assert legal_json(state) == [{"pass": True}]
    act(state, {"pass": True})
    data = state.to_json()
    assert data["to_move"] == 1 and data["phase"] == "roll" and data["turn"] == 1
    assert state.counters()["passes"] == 1


def test_no_token_left_means_pass() -> None:
    # "Pass if you have no token left."
    state = position(load(3), ["00.0", "0.0.", "...."], roll=6)
    assert state.to_json()["supply"][0] == 0
    assert legal_json(state) == [{"pass": True}]


@pytest.mark.parametrize("die", [1, 2])
def test_one_and_two_on_an_empty_board_only_pass(die: int) -> None:
    # "1: ... Nothing if the board is empty." / "2: ... Nothing if the board is empty."
    state = position(load(2), ["...", "...", "..."], roll=die)
    assert legal_json(state) == [{"pass": True}]


def test_two_on_a_full_board_only_pass_but_one_removes_anything() -> None:
    # "2: ... Nothing if the board is ... full." "1: remove any token (anyone's)".
    full = ["001", "110", "001"]  # no three in a row anywhere
    game = load(2)
    assert legal_json(position(game, full, roll=2)) == [{"pass": True}]
    state = position(game, full, roll=1)
    assert legal_json(state) == [{"remove": [r, c]} for r in range(3) for c in range(3)]
    act(state, {"remove": [1, 0]})  # the opponent's token goes back to its owner
    assert board_picture(state) == ["001", ".10", "001"]
    assert state.to_json()["supply"] == [0, 2]
    assert state.counters()["removes"] == 1


def test_two_moves_any_token_to_any_empty_cell_whatever_its_number() -> None:
    # "2: move any token (anyone's) to any empty cell, whatever its number."
    state = position(load(2), ["0..", "...", "..1"], roll=2)
    moves = legal_json(state)
    assert len(moves) == 2 * 7
    assert {"move": [[2, 2], [0, 1]]} in moves and {"move": [[0, 0], [1, 1]]} in moves
    act(state, {"move": [[2, 2], [0, 1]]})
    assert board_picture(state) == ["01.", "...", "..."]
    assert state.to_json()["supply"] == [4, 4]


def test_legal_actions_are_sorted_ints_in_range() -> None:
    game = load(5)
    state = position(game, ["01...", "2.3..", "....4", ".....", "....."], roll=2)
    legal = state.legal_actions()
    assert legal == sorted(legal)
    assert all(0 <= a < game.num_distinct_actions() for a in legal)
    # 7 ids below the player actions (die faces 1-6), then place, remove, move, pass.
    assert game.num_distinct_actions() == 7 + 2 * 25 + 25 * 25 + 1


# --- Tris -----------------------------------------------------------------------------

def test_three_in_a_row_scores_and_tokens_return() -> None:
    # "Tris": a placement making three in a row through the cell scores one trophy.
    state = position(load(2), ["00.", "1..", "..."], roll=5)  # (0,2) carries a 5
    act(state, {"place": [0, 2]})
    data = state.to_json()
    assert board_picture(state) == ["...", "1..", "..."]
    assert data["supply"] == [5, 4] and data["trophies"] == [1, 0] and data["trophies_left"] == 9
    assert state.counters()["tris"] == 1 and state.counters()["trophies_given"] == 1


# --- the rulebook's numbers and switches as options (RULES.md section 3, other values) -----------

def test_rulebook_values_are_the_defaults_and_stay_out_of_records() -> None:
    game = load(3)
    assert (game.tokens, game.trophies_total, game.tris_length) == (5, 10, 3)
    assert [game.options[f"face_{d}"] for d in range(1, 7)] == [True] * 6 and not game.options["place_anywhere"]
    assert set(game.record_options()) == {"players", "layout", "turn_limit"}
    assert game.rulebook_changes() == []
    changed = load(3, tris=4, face_1=False)
    assert changed.record_options()["tris"] == 4 and changed.record_options()["face_1"] is False
    assert changed.rulebook_changes() == ["tris", "face_1"]
    assert load(**changed.record_options()).options == changed.options


def test_tris_of_four_three_in_a_row_do_not_score_four_do() -> None:
    # "Tris" with option tris=4: three in a row no longer score; four in a row through the cell do.
    game = load(4, tris=4)  # the 4x4 corner of the board; row 0 is 3 4 5 6
    state = position(game, ["00..", "1...", "....", "...."], roll=5)
    act(state, {"place": [0, 2]})
    assert board_picture(state)[0] == "000." and state.to_json()["trophies"] == [0, 0, 0, 0]
    state = position(game, ["000.", "1...", "....", "...."], roll=6)
    act(state, {"place": [0, 3]})
    assert board_picture(state)[0] == "...." and state.to_json()["trophies"] == [1, 0, 0, 0]
    assert state.to_json()["supply"] == [5, 4, 5, 5]


def test_tris_of_two_a_pair_scores() -> None:
    state = position(load(2, tris=2), ["0..", "...", "..."], roll=4)  # (0,1) carries a 4
    act(state, {"place": [0, 1]})
    assert state.to_json()["trophies"] == [1, 0]


def test_tokens_per_player_and_trophies_in_the_box() -> None:
    # Material with tokens=3 and trophies=1: three tokens each; the first trophy ends the game.
    game = load(2, tokens=3, trophies=1)
    start = game.new_initial_state().to_json()
    assert start["supply"] == [3, 3] and start["trophies_left"] == 1
    state = position(game, ["00.", "1..", "..."], roll=5)
    act(state, {"place": [0, 2]})
    assert state.is_terminal() and state.returns() == [1.0, 0.0]
    with pytest.raises(ValueError, match="between 0 and 3"):
        game.state_from_json({**start, "supply": [5, 5]})


def test_faces_switched_off_pass_and_place_anywhere_ignores_the_numbers() -> None:
    # A turn with face_1 and face_2 off: a 1 removes nothing, a 2 moves nothing; the only action is a pass.
    game = load(2, face_1=False, face_2=False)
    for die in (1, 2):
        assert legal_json(position(game, ["0..", "1..", "..."], roll=die)) == [{"pass": True}]
    assert len(legal_json(position(game, ["0..", "1..", "..."], roll=3))) == 2  # the two empty 3s
    # face_5 off: a 5 passes even with an empty 5 on the board
    assert legal_json(position(load(2, face_5=False), ["...", "...", "..."], roll=5)) == [{"pass": True}]
    # place_anywhere: a 3 places on any of the seven empty cells, whatever its number
    state = position(load(2, place_anywhere=True), ["0..", "1..", "..."], roll=3)
    assert len(legal_json(state)) == 7
    act(state, {"place": [2, 2]})  # a 6 on the board
    assert board_picture(state)[2] == "..0"


@pytest.mark.parametrize(
    ("options", "named", "words"),
    [({"tris": 4}, "tris", "does not fit"), ({"tris": 1}, "tris", "2 to 10"),
     ({"tokens": 2}, "tris", "needs at least 3 tokens"), ({"tokens": 0}, "tokens", "1 to 25"),
     ({"trophies": 0}, "trophies", "1 to 100"), ({"face_1": "place"}, "face_1", "true or false"),
     ({"place_anywhere": 3}, "place_anywhere", "true or false")],
)
def test_bad_rulebook_values_are_refused_with_the_reason(options: dict[str, Any], named: str, words: str) -> None:
    with pytest.raises(ValueError, match=named) as info:
        load(2, **options)  # a 3x3 board
    assert words in str(info.value)


def test_diagonal_is_not_a_tris() -> None:
    # "horizontally or vertically (not diagonally)".
    state = position(load(2), ["0..", ".0.", "..."], roll=6)  # (2,2) carries a 6
    act(state, {"place": [2, 2]})
    assert board_picture(state) == ["0..", ".0.", "..0"]
    assert state.to_json()["trophies"] == [0, 0]


def test_cross_tris_scores_two_and_returns_every_token() -> None:
    # "Each maximal run of 3+ counts as one tris, so a row and a column through the same
    # cell score two."
    game = load(5)
    state = position(game, ["..0..", "..0..", "00...", ".....", "....."], roll=6)  # (2,2)=6
    act(state, {"place": [2, 2]})
    data = state.to_json()
    assert all(x is None for row in data["board"] for x in row)
    assert data["supply"][0] == 5 and data["trophies"][0] == 2 and data["trophies_left"] == 8
    assert state.counters()["tris"] == 2


def test_a_run_of_four_is_one_tris() -> None:
    # "Each maximal run of 3+ counts as one tris": four in a row -> one trophy, 4 tokens back.
    state = position(load(5), ["00.0.", ".....", ".....", ".....", "....."], roll=5)  # (0,2)=5
    act(state, {"place": [0, 2]})
    data = state.to_json()
    assert board_picture(state)[0] == "....."
    assert data["supply"][0] == 5 and data["trophies"][0] == 1


def test_a_run_of_five_across_the_whole_row_is_one_tris() -> None:
    state = position(load(5), [".....", "00.00", ".....", ".....", "....."], roll=3)  # (1,2)=3
    act(state, {"place": [1, 2]})
    assert state.to_json()["trophies"][0] == 1 and state.to_json()["supply"][0] == 5


def test_only_runs_through_the_filled_cell_count() -> None:
    # "through the cell just filled": a run elsewhere (unreachable, but readable) is ignored
    # and stays on the board.
    state = position(load(5), ["111..", ".....", ".....", ".....", "....."], to_move=0, roll=3)
    act(state, {"place": [3, 3]})  # (3,3) carries a 3, far from the 1s
    assert board_picture(state)[0] == "111.."
    assert state.to_json()["trophies"] == [0, 0, 0, 0, 0]


def test_a_move_completing_an_opponents_line_scores_for_the_owner() -> None:
    # "The tokens ... go back to their owner, who gains one trophy per tris - the owner, not
    # necessarily the mover."
    state = position(load(2), ["...", "11.", "0.1"], to_move=0, roll=2)
    act(state, {"move": [[2, 2], [1, 2]]})
    data = state.to_json()
    assert board_picture(state) == ["...", "...", "0.."]
    assert data["trophies"] == [0, 1] and data["supply"] == [4, 5]
    counters = state.counters()
    assert counters["tris"] == 1 and counters["tris_for_others"] == 1 and counters["moves"] == 1


def test_a_move_into_a_gap_of_someone_elses_line_does_not_score() -> None:
    # The run through the filled cell is made of the moved token's owner only.
    state = position(load(2), ["0.0", "...", "..1"], to_move=0, roll=2)
    act(state, {"move": [[2, 2], [0, 1]]})
    assert board_picture(state) == ["010", "...", "..."]
    assert state.to_json()["trophies"] == [0, 0]


def test_a_move_along_its_own_line_can_score() -> None:
    # The token is lifted before it lands: ". 0 0 . 0", moving (0,4) to (0,3) makes 0 0 0.
    state = position(load(5), [".00.0", ".....", ".....", ".....", "....."], roll=2)
    act(state, {"move": [[0, 4], [0, 3]]})
    assert board_picture(state)[0] == "....."
    assert state.to_json()["trophies"][0] == 1


def test_a_move_scores_only_through_its_destination() -> None:
    # Lifting a token never scores: the origin is emptied, not filled.
    state = position(load(5), ["0.0..", ".1...", ".....", ".....", "....."], to_move=1, roll=2)
    act(state, {"move": [[1, 1], [4, 4]]})
    assert board_picture(state)[0] == "0.0.."
    assert state.to_json()["trophies"] == [0] * 5


def test_trophy_cap_one_left_two_tris_tokens_all_return() -> None:
    # "No trophy beyond the ten is given"; gap decided (docs/rules/tohm.md): the owner takes
    # the last trophy, every token of both runs still goes back, and the game ends.
    game = load(5)
    state = position(
        game, ["..0..", "..0..", "00...", ".....", "....."], roll=6, trophies=[4, 5, 0, 0, 0]
    )
    act(state, {"place": [2, 2]})
    data = state.to_json()
    assert data["trophies"] == [5, 5, 0, 0, 0] and data["trophies_left"] == 0
    assert all(x is None for row in data["board"] for x in row) and data["supply"][0] == 5
    assert data["phase"] == "over" and state.is_terminal()
    assert state.returns() == [0.5, 0.5, 0.0, 0.0, 0.0]
    counters = state.counters()
    assert counters["tris"] == 2 and counters["trophies_given"] == 1


# --- End ------------------------------------------------------------------------------

def test_last_trophy_ends_the_game_most_trophies_wins() -> None:
    # "End: when all ten trophies are given, most trophies wins."
    state = position(load(3), ["00..", "....", "...."], to_move=0, roll=5, trophies=[3, 4, 2], turn=40)
    act(state, {"place": [0, 2]})  # (0,2)=5
    data = state.to_json()
    assert data["phase"] == "over" and data["roll"] is None and data["turn"] == 41
    assert data["trophies"] == [4, 4, 2] and data["trophies_left"] == 0
    assert state.current_player() == TERMINAL and state.legal_actions() == []
    assert state.returns() == [0.5, 0.5, 0.0]  # "ties share"
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action(0)


def test_single_winner() -> None:
    state = position(load(2), ["00.", "...", "..."], roll=5, trophies=[5, 4])
    act(state, {"place": [0, 2]})
    assert state.returns() == [1.0, 0.0]


def test_turn_limit_ends_the_game_and_leaders_share() -> None:
    # Conventions: reaching turn_limit ends the game; leaders by trophies share.
    game = load(3, turn_limit=3)
    state = game.new_initial_state()
    for _ in range(3):
        state.apply_action(1)  # roll 1 on an empty board
        act(state, {"pass": True})
    assert state.to_json()["turn"] == 3 and state.is_terminal()
    assert state.returns() == pytest.approx([1 / 3, 1 / 3, 1 / 3])
    led = position(game, ["....", "....", "...."], to_move=2, roll=1, trophies=[1, 3, 3], turn=2)
    act(led, {"pass": True})
    assert led.is_terminal() and led.returns() == [0.0, 0.5, 0.5]


def test_turn_counts_completed_player_turns() -> None:
    state = load(2).new_initial_state()
    state.apply_action(4)
    assert state.to_json()["turn"] == 0 and state.current_player() == 0
    act(state, {"place": [0, 1]})
    assert state.to_json()["turn"] == 1 and state.to_json()["to_move"] == 1


# --- Options --------------------------------------------------------------------------

@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_custom_layout_is_the_whole_board_whatever_the_player_count(players: int) -> None:
    grid = [[3, 4, 5, 6, 3], [6, 5, 4, 3, 6], [4, 4, 4, 4, 4]]
    game = load(players, layout=grid)
    state = game.new_initial_state()
    data = state.to_json()
    assert (data["rows"], data["cols"]) == (3, 5) and data["layout"] == grid
    assert game.record_options() == {"players": players, "layout": grid, "turn_limit": 1000}
    state.apply_action(4)
    assert legal_json(state) == [{"place": [0, 1]}, {"place": [1, 2]}] + [
        {"place": [2, c]} for c in range(5)
    ]
    random_playout(state, random.Random(players))
    assert state.is_terminal()


def test_layout_from_json_text_and_files(tmp_path: Path) -> None:
    grid = [[3, 3, 3], [4, 4, 4], [5, 5, 6], [6, 6, 6]]
    path = tmp_path / "board.json"
    path.write_text(json.dumps(grid))
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"layout": grid}))
    for value in (json.dumps(grid), str(path), path, str(wrapped), tuple(tuple(r) for r in grid)):
        game = load(2, layout=value)
        assert game.record_options()["layout"] == grid  # the grid itself, never a path
    # a record made with a file replays anywhere (the options hold the grid)
    record = Record.start(load(2, layout=str(path)))
    assert record.load_game().record_options()["layout"] == grid


def test_layout_none_is_the_default() -> None:
    assert load(4, layout=None).record_options() == load(4).record_options()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([[3, 4, 5], [5, 6], [4, 3, 6]], "not rectangular"),
        ([[3, 4, 5], [5, 6, 3]], "at least 3 rows"),
        ([[3, 4], [5, 6], [4, 3]], "at least 3 columns"),
        ([[3, 4, 5], [5, 7, 3], [4, 3, 6]], r"cell \[1, 1\] must be a number from 3 to 6"),
        ([[3, 4, 5], [5, 2, 3], [4, 3, 6]], "from 3 to 6"),
        ([[3, 4, 5], [5, True, 3], [4, 3, 6]], "from 3 to 6"),
        ([[3, 4, 5], [5, "6", 3], [4, 3, 6]], "from 3 to 6"),
        ([[3, 4, 5], "543", [4, 3, 6]], "row 1 must be a list"),
        (7, "a layout is a grid"),
        ("[[3, 4, 5], [5, 6", "not valid JSON"),
        ("/nonexistent/tohm_board.json", "not found"),
        ({"rows": 3}, "'layout' key"),
        ("", "empty"),
    ],
)
def test_layout_validation_errors_name_the_option(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match="option layout") as info:
        load(2, layout=value)
    assert info.match(message)


def test_layout_file_not_json_or_unreadable(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("3 4 5\n")
    with pytest.raises(ValueError, match=r"option layout: layout file .*bad\.json.* is not valid JSON"):
        load(2, layout=str(bad))
    with pytest.raises(ValueError, match=r"option layout: .*directory"):
        load(2, layout=str(tmp_path))
    small = tmp_path / "small.json"
    small.write_text("[[3, 4, 5]]")
    with pytest.raises(ValueError, match="at least 3 rows"):
        load(2, layout=small)


@pytest.mark.parametrize(("rows", "cols"), [(3, 3), (10, 10), (3, 10), (10, 3)])
def test_layouts_up_to_10_by_10_are_accepted(rows: int, cols: int) -> None:
    # RULES.md: "any rectangular grid of at least 3x3 numbers 3-6"; docs/rules/tohm.md bounds it
    # at 10x10 (default), so a layout can never make a game costly to build.
    grid = [[3 + (r + c) % 4 for c in range(cols)] for r in range(rows)]
    game = load(2, layout=grid)
    assert (game.rows, game.cols) == (rows, cols)
    assert game.num_distinct_actions() == 7 + 2 * rows * cols + (rows * cols) ** 2 + 1


@pytest.mark.parametrize(("rows", "cols", "named"), [(11, 3, "at most 10 rows"), (3, 11, "at most 10 columns"),
                                                     (80, 80, "at most 10 rows"), (120, 120, "at most 10 rows")])
def test_layouts_beyond_10_by_10_are_refused_before_anything_is_built(rows: int, cols: int, named: str) -> None:
    # an 80x80 layout took 2 GB and froze the server. The grid's size is refused first,
    # so even a 120x120 grid of bad cells is refused for its size, in no time.
    grid = [["x"] * cols for _ in range(rows)]
    start = time.process_time()
    with pytest.raises(ValueError, match="option layout") as info:
        load(2, layout=grid)
    assert info.match(named)
    with pytest.raises(ValueError, match="option layout"):
        load(2, layout=json.dumps([[3] * cols] * rows))
    assert time.process_time() - start < 0.5


def test_oversized_layout_text_and_files_are_refused_unread(tmp_path: Path) -> None:
    # A layout file or text of more than 64 KiB cannot hold a 10x10 grid: refused without parsing.
    big = tmp_path / "big.json"
    big.write_text("[" * 200_000)
    with pytest.raises(ValueError, match=r"option layout: layout file .*big\.json.* too big"):
        load(2, layout=str(big))
    with pytest.raises(ValueError, match="option layout: layout text has 200001 characters"):
        load(2, layout="[" * 200_001)
    with pytest.raises(ValueError, match="option layout: layout text is nested too deeply"):
        load(2, layout="[" * 30_000 + "]" * 30_000)


@pytest.mark.parametrize(("options", "name"), [({"turn_limit": 0}, "turn_limit"),
                                               ({"turn_limit": "many"}, "turn_limit"),
                                               ({"colour": "red"}, "colour"),
                                               ({"players": 6}, "not 6"),
                                               ({"players": 1}, "not 1")])
def test_bad_options_are_named(options: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ludoteca.load_game("tohm", **options)


# --- Actions as JSON and text ---------------------------------------------------------

def test_action_json_and_strings_round_trip() -> None:
    game = load(5)
    state = position(game, ["01...", ".....", ".....", ".....", "....."], roll=2)
    for a in state.legal_actions():
        assert state.action_from_json(state.action_to_json(a)) == a
        assert state.action_from_string(state.action_to_string(a)) == a
        assert state.action_from_string(json.dumps(state.action_to_json(a))) == a
    assert state.action_to_string(state.action_from_json({"move": [[0, 1], [4, 4]]})) == "move 0,1-4,4"
    assert state.action_from_string("mv 0,1 4,4") == state.action_from_string("move 0,1->4,4")
    assert state.action_from_string("m 0 1 - 4 4") == state.action_from_json({"move": [[0, 1], [4, 4]]})
    assert state.action_from_string("p 1,2") == state.action_from_json({"place": [1, 2]})
    assert state.action_from_string("rm 0 0") == state.action_from_json({"remove": [0, 0]})
    assert state.action_from_string("PASS") == game.num_distinct_actions() - 1
    chance = game.new_initial_state()
    assert chance.action_to_string(4) == "roll 4" and chance.action_from_string("roll 4") == 4
    assert chance.action_to_json(6) == {"roll": 6}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "exactly one"),
        ({"place": [0, 0], "remove": [0, 0]}, "exactly one"),
        ({"place": [0, 0], "who": 1}, "unknown key 'who'"),
        ({"nonsense": 1}, "unknown key"),
        ({"pass": "maybe"}, "pass"),
        ({"pass": False}, "pass"),
        ({"place": [0]}, "place must be a cell"),
        ({"place": "0,0"}, "place must be a cell"),
        ({"place": [0, True]}, "place must be a cell"),
        ({"place": [3, 0]}, "off the board"),
        ({"remove": [-1, 0]}, "off the board"),
        ({"move": [[0, 0]]}, "move must be"),
        ({"move": [[0, 0], [0, 9]]}, "move destination"),
        ({"roll": 7}, "die face"),
        ({"roll": "4"}, "die face"),
        ([1, 2], "JSON object"),
    ],
)
def test_malformed_action_json(data: Any, message: str) -> None:
    state = position(load(2), ["0..", "...", "..."], roll=2)
    with pytest.raises(IllegalActionError, match=message):
        state.action_from_json(data)


def test_actions_of_the_wrong_phase_are_refused() -> None:
    # RULES.md: "action_from_json rejects only ill-formed actions; apply_action rejects any
    # action that is not legal in the position" -- a well-formed action of the wrong phase
    # parses, then is refused when applied, leaving the state unchanged.
    game = load(2)
    chance = game.new_initial_state()
    place = chance.action_from_json({"place": [0, 1]})
    with pytest.raises(IllegalActionError):
        chance.apply_action(place)
    acting = position(game, ["...", "...", "..."], roll=4)
    before = acting.to_json()
    roll = acting.action_from_json({"roll": 4})
    with pytest.raises(IllegalActionError):
        acting.apply_action(roll)
    assert acting.to_json() == before


@pytest.mark.parametrize("text", ["", "jump 1,2", "place 1", "place 1,2,3", "move 0,0", "roll", "p -1,0",
                                  "{nope", "[1]"])
def test_malformed_action_strings(text: str) -> None:
    state = position(load(2), ["0..", "...", "..."], roll=2)
    with pytest.raises(IllegalActionError):
        state.action_from_string(text)


# --- Positions --------------------------------------------------------------------------

def _start(players: int = 2) -> dict:
    return load(players).new_initial_state().to_json()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"game": "tri"}, "'tri'"),
        ({"players": 3}, "3 players"),
        ({"rows": 4}, "4x3"),
        ({"layout": [[3, 4, 5], [5, 6, 3], [4, 3, 5]]}, "layout does not match"),
        ({"layout": [[3, 4, 5], [5, 6, 3], [4, 3, 9]]}, "from 3 to 6"),
        ({"board": [[None] * 3] * 2}, "3 rows"),
        ({"board": [[None] * 3, [None] * 4, [None] * 3]}, "board row 1"),
        ({"board": [[0, 0, 0], [0, 0, 0], [None] * 3]}, "6 tokens on the board"),
        ({"board": [[0, None, None], [None] * 3, [None] * 3]}, "must add up to 5"),
        ({"board": [[2, None, None], [None] * 3, [None] * 3]}, r"board\[0\]\[0\]"),
        ({"supply": [5]}, r"supply must list one number per player \(2\), not 1"),
        ({"supply": [5, 6]}, r"supply\[1\]"),
        ({"trophies": [1, 0]}, "must be 10"),
        ({"trophies_left": 11}, "trophies_left"),
        ({"trophies": [5, 5], "trophies_left": 0}, "must be over"),
        ({"to_move": 2}, "to_move"),
        ({"phase": "move"}, "phase: expected one of .roll., .act., .over."),
        ({"phase": "act"}, "roll"),
        ({"phase": "act", "roll": 7}, "roll"),
        ({"roll": 3}, "null during phase roll"),
        ({"phase": "over"}, "phase is over"),
        ({"turn": -1}, "turn"),
        ({"turn": 1001}, "turn"),
        ({"turn": 1000}, "turn_limit"),
        ({"turn": "0"}, "turn"),
    ],
)
def test_malformed_positions_say_what_is_wrong(change: dict, message: str) -> None:
    data = _start(2)
    data.update(change)
    with pytest.raises(ValueError, match=message):
        load(2).state_from_json(data)


def test_to_move_at_over_is_any_whole_number() -> None:
    # RULES.md, "Reading a position": to_move at `over` is not fixed by the rules, so any whole
    # number is read; the engine writes its own convention (a seat) back.
    data = _start(2)
    data.update(trophies=[6, 4], trophies_left=0, phase="over", turn=40)
    for to_move, written in ((1, 1), (0, 0), (5, 0), (-3, 0)):
        state = load(2).state_from_json(dict(data, to_move=to_move))
        assert state.is_terminal() and state.returns() == [1.0, 0.0]
        assert state.to_json() == dict(data, to_move=written)
    with pytest.raises(ValueError, match="to_move"):
        load(2).state_from_json(dict(data, to_move=None))  # not a whole number
    with pytest.raises(ValueError, match="to_move"):
        load(2).state_from_json(dict(_start(2), to_move=2))  # phase roll: to_move is the roller


@pytest.mark.parametrize("key", ["rows", "cols", "layout", "board", "supply", "trophies",
                                 "trophies_left", "to_move", "phase", "roll", "turn", "game", "players"])
def test_missing_position_key_is_named(key: str) -> None:
    data = _start(3)
    del data[key]
    with pytest.raises(ValueError, match=key):
        load(3).state_from_json(data)


def test_position_of_a_custom_layout_needs_the_same_game() -> None:
    grid = [[3, 4, 5, 6, 3], [6, 5, 4, 3, 6], [4, 4, 4, 4, 4]]
    data = load(2, layout=grid).new_initial_state().to_json()
    with pytest.raises(ValueError, match="3x5"):
        load(2).state_from_json(data)
    assert load(2, layout=grid).state_from_json(data).to_json() == data


def test_render_shows_board_supplies_trophies_turn_and_die() -> None:
    state = position(load(2), ["0..", ".1.", "..."], to_move=1, roll=5, trophies=[2, 1])
    text = state.render()
    assert "3A" in text and "6B" in text  # cell numbers with tokens
    assert "supply:" in text and "A0=4" in text and "B1=4" in text
    assert "trophies:" in text and "left 7" in text
    assert "to move: B1" in text and "phase: act" in text and "die: 5" in text


# --- Properties -------------------------------------------------------------------------

def _check_invariants(state: TohmState) -> None:
    data = state.to_json()
    n = data["players"]
    cells = [x for row in data["board"] for x in row]
    for p in range(n):  # conservation of tokens
        assert data["supply"][p] + cells.count(p) == 5
    assert sum(data["trophies"]) + data["trophies_left"] == 10  # conservation of trophies
    counters = state.counters()
    assert counters["trophies_given"] == sum(data["trophies"])
    assert counters["tris"] >= counters["trophies_given"]
    assert counters["tris"] >= counters["tris_for_others"]
    assert counters["places"] + counters["moves"] + counters["removes"] + counters["passes"] == data["turn"]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@PROPS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_round_trip_conserve_and_replay(players: int, seed: int) -> None:
    game = load(players)
    rng = random.Random(seed)
    state = game.new_initial_state()
    record = Record.start(game)
    step = 0
    while not state.is_terminal():
        data = state.to_json()
        rebuilt = game.state_from_json(json.loads(json.dumps(data)))
        assert rebuilt.to_json() == data
        assert rebuilt.legal_actions() == state.legal_actions()
        _check_invariants(state)
        if state.is_chance_node():
            assert math.isclose(sum(p for _, p in state.chance_outcomes()), 1.0)
            action = sample_chance(state, rng)
        else:
            legal = state.legal_actions()
            assert legal == sorted(legal) and len(set(legal)) == len(legal)
            action = legal[rng.randrange(len(legal))]
        if step % 5 == 0:  # clone independence, and the rebuilt state plays on identically
            clone = state.clone()
            clone.apply_action(action)
            rebuilt.apply_action(action)
            assert state.to_json() == data
            assert rebuilt.to_json() == clone.to_json()
            if not state.is_chance_node():  # every player action is counted
                assert clone.counters() != state.counters()
        record.add(state, action)
        state.apply_action(action)
        step += 1
    _check_invariants(state)
    data = state.to_json()
    assert data["trophies_left"] == 0 or data["turn"] == 1000
    assert game.state_from_json(data).to_json() == data
    assert math.isclose(sum(state.returns()), 1.0)
    assert Record.loads(record.dumps()).replay().to_json() == data


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@PROPS
@given(seed=st.integers(0, 2**32 - 1), stop=st.integers(0, 300))
def test_illegal_actions_raise_and_change_nothing(players: int, seed: int, stop: int) -> None:
    game = load(players)
    rng = random.Random(seed)
    state = game.new_initial_state()
    random_playout(state, rng, max_actions=stop)
    legal = set(state.legal_actions())
    space = game.max_chance_outcomes() if state.is_chance_node() else game.num_distinct_actions()
    before = state.to_json()
    counters = state.counters()
    for a in [*[x for x in range(space) if x not in legal][:40], -1, space, "x", None, 1.5, True, 1.0]:
        with pytest.raises(IllegalActionError):
            state.apply_action(a)
    assert state.to_json() == before and state.counters() == counters
    if not state.is_terminal():
        state.apply_action(sorted(legal)[0])  # still playable


def test_counters_are_copied_by_clone_and_start_at_zero() -> None:
    state = load(2).new_initial_state()
    assert set(state.counters()) == {"tris", "tris_for_others", "trophies_given", "removes",
                                     "moves", "places", "passes"}
    assert not any(state.counters().values())
    random_playout(state, random.Random(11), max_actions=120)
    assert state.clone().counters() == state.counters()


def test_actions_are_plain_ints() -> None:
    # Bools and floats equal to a legal int are refused; integer-like objects are normalised.
    class Index:
        def __init__(self, value: int) -> None:
            self.value = value

        def __index__(self) -> int:
            return self.value

    state = load(2).new_initial_state()
    for bad in (True, 4.0):
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)
    state.apply_action(Index(4))  # e.g. a numpy integer
    assert state.to_json()["roll"] == 4 and type(state.to_json()["roll"]) is int
    assert state.action_to_json(Index(8)) == {"place": [0, 1]}  # player actions start at 7


# --- events (core/events.py; the kinds are listed in the module docstring) ------------------

def events(state: TohmState, action: dict) -> list[dict]:
    """The events of one action, as JSON (every TOHM event is public)."""
    out = state.apply_action(state.action_from_json(action))
    assert all(e.to is None for e in out)
    return [e.to_json() for e in out]


def test_event_of_a_roll_says_whose_and_the_face() -> None:
    state = load(3).new_initial_state()
    assert events(state, {"roll": 4}) == [{"kind": "chance", "outcome": {"roll": 4}, "seat": 0, "face": 4}]


def test_events_of_a_tris_return_the_tokens_and_give_a_trophy() -> None:
    # "Tris": three in a row through the cell just filled; the tokens go back to their owner, who
    # gains one trophy.
    state = position(load(2), ["00.", "1..", "..."], roll=5)  # (0,2) carries a 5
    assert events(state, {"place": [0, 2]}) == [
        {"kind": "move", "seat": 0, "action": {"place": [0, 2]}},
        {"kind": "placed", "seat": 0, "cell": [0, 2]},
        {"kind": "tris", "owner": 0, "by": 0, "line": "row", "cells": [[0, 0], [0, 1], [0, 2]], "trophy": True,
         "trophies_left": 9},
    ]
    assert state.to_json()["supply"] == [5, 4]


def test_events_of_a_row_and_a_column_through_one_cell_are_two_tris() -> None:
    # "a row and a column through the same cell score two" (default).
    state = position(load(2), [".00", "0..", "0.."], roll=3)  # (0,0) carries a 3
    assert events(state, {"place": [0, 0]})[2:] == [
        {"kind": "tris", "owner": 0, "by": 0, "line": "row", "cells": [[0, 0], [0, 1], [0, 2]], "trophy": True,
         "trophies_left": 9},
        {"kind": "tris", "owner": 0, "by": 0, "line": "column", "cells": [[0, 0], [1, 0], [2, 0]], "trophy": True,
         "trophies_left": 8},
    ]
    assert state.to_json()["trophies"] == [2, 0]


def test_events_when_the_last_trophy_is_given_and_none_is_left_for_the_second_tris() -> None:
    # "No trophy beyond the ten is given"; "when all ten trophies are given, most trophies wins".
    state = position(load(2), [".00", "0..", "0.."], roll=3, trophies=[5, 4])
    assert events(state, {"place": [0, 0]})[2:] == [
        {"kind": "tris", "owner": 0, "by": 0, "line": "row", "cells": [[0, 0], [0, 1], [0, 2]], "trophy": True,
         "trophies_left": 0},
        {"kind": "tris", "owner": 0, "by": 0, "line": "column", "cells": [[0, 0], [1, 0], [2, 0]], "trophy": False,
         "trophies_left": 0},
        {"kind": "end", "reason": "all_trophies_given", "returns": [1.0, 0.0], "winners": [0]},
    ]
    assert state.end_reason() == "all_trophies_given" and state.scores() == [6.0, 4.0]


def test_events_of_moving_someone_elses_token_into_a_tris() -> None:
    # "the owner, not necessarily the mover" gains the trophy.
    state = position(load(2), ["11.", "0..", "..1"], roll=2)
    assert events(state, {"move": [[2, 2], [0, 2]]})[1:] == [
        {"kind": "moved", "seat": 0, "from": [2, 2], "to": [0, 2], "owner": 1},
        {"kind": "tris", "owner": 1, "by": 0, "line": "row", "cells": [[0, 0], [0, 1], [0, 2]], "trophy": True,
         "trophies_left": 9},
    ]
    assert state.to_json()["trophies"] == [0, 1]
    assert state.counters()["tris_for_others"] == 1 and state.counters()["tris"] == 1


def test_events_of_a_remove_and_of_a_pass() -> None:
    state = position(load(2), ["01.", "...", "..."], roll=1)
    assert events(state, {"remove": [0, 1]})[1:] == [{"kind": "removed", "seat": 0, "cell": [0, 1], "owner": 1}]
    state = position(load(2), ["...", "...", "..."], roll=2)  # "2: nothing if the board is empty"
    assert events(state, {"pass": True})[1:] == [{"kind": "pass", "seat": 0}]


def test_event_of_the_end_by_turn_limit() -> None:
    state = position(load(2, turn_limit=5), ["...", "...", "..."], to_move=1, roll=1, turn=4, trophies=[1, 2])
    assert events(state, {"pass": True})[2:] == [
        {"kind": "end", "reason": "turn_limit", "returns": [0.0, 1.0], "winners": [1]},
    ]
    assert state.end_reason() == "turn_limit"
    assert load(2).new_initial_state().end_reason() == ""


def test_scores_are_trophies() -> None:
    # "Score for turn_limit: trophies."
    assert position(load(3), ["....", "....", "...."], trophies=[1, 3, 0]).scores() == [1.0, 3.0, 0.0]
    assert TohmGame.score_name == "trophies"


def test_counters_are_the_declared_ones() -> None:
    declared = {c.name for c in TohmGame.counters}
    assert set(load(2).new_initial_state().counters()) == declared == {
        "tris", "tris_for_others", "trophies_given", "removes", "moves", "places", "passes"}
    for c in TohmGame.counters:
        assert c.kind in ("share_per_game", "share_per_event", "ratio_per_event", "mean_per_game")
        assert c.of is None or c.of == "turns" or c.of in declared


@pytest.mark.parametrize("players", range(2, 6))
def test_events_tell_the_whole_game_and_the_fast_path_plays_it_alike(players: int) -> None:
    """Random games: apply_unchecked (no events) plays the same positions and counters as
    apply_action, and the events agree with the positions (rolls, tokens, trophies)."""
    rng = random.Random(players)
    game = load(players)
    checked = game.new_initial_state()
    fast = checked.clone()
    kinds: set[str] = set()
    trophies = [0] * players
    while not checked.is_terminal():
        before = checked.to_json()
        action = sample_chance(checked, rng) if checked.is_chance_node() else rng.choice(checked.legal_actions())
        out = [e.to_json() for e in checked.apply_action(action)]
        after = checked.to_json()
        kinds |= {e["kind"] for e in out}
        if out[0]["kind"] == "chance":
            assert out[0]["seat"] == before["to_move"] and out[0]["face"] == after["roll"]
        for e in out:
            if e["kind"] == "tris":
                trophies[e["owner"]] += e["trophy"]
                assert e["by"] == before["to_move"] and len(e["cells"]) >= 3
                assert all(after["board"][r][c] is None for r, c in e["cells"])  # back to the owner
            elif e["kind"] in ("placed", "removed", "moved", "pass"):
                assert e["seat"] == before["to_move"]
        assert trophies == after["trophies"]
        fast.apply_unchecked(action)
        assert fast.to_json() == after
        assert fast.counters() == checked.counters()
    assert out[-1]["kind"] == "end" and out[-1]["reason"] == checked.end_reason() != ""
    assert {"chance", "move", "placed", "tris", "end"} <= kinds


# --- positions: what the shared shape reader says ------------------------------------------

@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"board": [[None, None, None], [None, "0", None], [None] * 3]},
         "board[1][1]: expected a whole number or null, got '0'"),
        ({"supply": [5, True]}, "supply[1]: expected a whole number, got true"),
        ({"layout": "3x3"}, "layout: expected a list, got '3x3'"),
        ({"roll": "4"}, "roll: expected a whole number or null, got '4'"),
        ({"phase": "ACT"}, "phase: expected one of 'roll', 'act', 'over', got 'ACT'"),
        ({"game": "exactly"}, "game: expected 'tohm', got 'exactly'"),
    ],
)
def test_malformed_positions_exact_messages(change: dict, message: str) -> None:
    data = _start(2)
    data.update(change)
    with pytest.raises(ValueError) as info:
        load(2).state_from_json(data)
    assert str(info.value) == message


def test_a_position_must_be_an_object_and_may_carry_extra_keys() -> None:
    with pytest.raises(ValueError, match="position must be a JSON object, not a list"):
        load(2).state_from_json([])  # type: ignore[arg-type]
    # RULES.md: "implementations may add keys"
    assert load(2).state_from_json({**_start(2), "note": "hi"}).to_json() == _start(2)


def test_heuristic_looks_ahead_on_copies_and_leaves_the_state_alone() -> None:
    # The heuristic (games/tohm/heuristic.py) plays its candidates on fast copies of the state.
    from ludoteca.games.tohm import heuristic

    state = position(load(2), ["00.", "1..", "..."], roll=5)
    before = state.to_json()
    action = heuristic.choose(state, random.Random(0))
    assert state.to_json() == before
    assert state.action_to_json(action) == {"place": [0, 2]}  # completes the tris
