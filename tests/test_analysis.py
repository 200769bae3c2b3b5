"""The analysis of finished games (``ludoteca.analysis``, ``ludoteca analyse``): scenarios checked by hand.

TOHM two-player positions use the exact solution (RULES.md section 3): a tris that gives the tenth
trophy wins outright, so the value after it is 1 and the other moves are worth less. TRI's battle
choices are analysed from what the seat to move knows (its information set), never the hidden value.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from ludoteca.agents import make_agent
from ludoteca.analysis import SearchEvaluator, analyse, evaluator_for, label_for, luck
from ludoteca.analysis.review import decision
from ludoteca.cli import main
from ludoteca.core.records import Record
from ludoteca.games.tohm import TohmGame, TohmState
from ludoteca.i18n import use_language
from ludoteca.registry import load_game

GAME = TohmGame(players=2)
EXACT = evaluator_for(GAME)


def position(board: list[list[int | None]], trophies: tuple[int, int], to_move: int = 0,
             roll: int | None = None) -> TohmState:
    supply = [5 - sum(row.count(p) for row in board) for p in range(2)]
    return GAME.state_from_json({
        "game": "tohm", "players": 2, "rows": 3, "cols": 3, "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 6]],
        "board": board, "supply": supply, "trophies": list(trophies), "trophies_left": 10 - sum(trophies),
        "to_move": to_move, "phase": "roll" if roll is None else "act", "roll": roll, "turn": 0})


def test_the_exact_evaluator_is_chosen_for_the_solved_variant_only() -> None:
    assert EXACT.kind == "exact"
    assert evaluator_for(TohmGame(players=3)).kind == "search"


def test_completing_the_other_seats_line_instead_of_ones_own_is_a_blunder() -> None:
    # seat 0 leads 5-4, one trophy left, and rolled a 2 (move any token): moving its own (1,1) to (0,2)
    # completes its top row (the tenth trophy: 6-4, a win, 1); moving seat 1's (1,2) to (2,2) completes
    # seat 1's bottom row instead (5-5: a shared win, 1/2)
    state = position([[0, 0, None], [None, 0, 1], [1, 1, None]], (5, 4), roll=2)
    winning = state.action_from_json({"move": [[1, 1], [0, 2]]})
    gift = state.action_from_json({"move": [[1, 2], [2, 2]]})
    played, best, best_action = decision(EXACT, state, gift)
    assert (played, best) == (0.5, 1.0) and best_action == winning
    assert label_for(best - played) == "blunder"
    played, best, _ = decision(EXACT, state, winning)
    assert played == best == 1.0 and label_for(best - played) is None


def test_labels_follow_the_documented_thresholds() -> None:
    assert [label_for(x) for x in (0.0, 0.049, 0.05, 0.099, 0.10, 0.149, 0.15, 0.9)] == [
        None, None, "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder", "blunder"]


def six_only_position() -> TohmState:
    # seat 0's only tokens stand on (0,1) and (2,1): the column is completed by (1,1) alone, a 6-cell;
    # a 2 cannot do it (moving one of the two empties its own cell), 3, 4, 5 place elsewhere, 1 removes
    return position([[None, 0, None], [None, None, 1], [None, 0, None]], (5, 4), to_move=0)


def test_a_six_when_only_sixes_win_is_lucky() -> None:
    state = six_only_position()
    result = luck(EXACT, state, 6)
    assert result is not None
    gained, after = result
    assert after == pytest.approx([1.0, 0.0], abs=1e-10)  # the 6 is placed on (1,1): the tenth trophy
    assert gained[0] > 0 and gained[1] < 0
    assert gained[0] == pytest.approx(1.0 - EXACT.values(state)[0], abs=1e-12)


@pytest.mark.parametrize("state", [six_only_position(), GAME.new_initial_state()], ids=["six", "start"])
def test_luck_sums_to_zero_over_the_outcomes_of_a_chance_node(state: TohmState) -> None:
    for seat in (0, 1):
        total = 0.0
        for outcome, p in state.chance_outcomes():
            result = luck(EXACT, state, outcome)
            assert result is not None
            total += p * result[0][seat]
        assert total == pytest.approx(0.0, abs=1e-12)


def test_search_luck_sums_to_zero_too() -> None:
    game = TohmGame(players=3)
    state = game.new_initial_state()
    ev = SearchEvaluator(game, iterations=30)
    for seat in range(3):
        total = sum(p * luck(ev, state, o)[0][seat] for o, p in state.chance_outcomes())
        assert total == pytest.approx(0.0, abs=1e-12)


def hidden_choice(seed: int = 0) -> tuple[object, str, list[int]]:
    """A TRI battle decision where something is hidden from the seat to move, the name of a hidden
    field of the battle, and the values it may take for that seat."""
    game = load_game("tri")
    rng = random.Random(seed)
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                seat = state.current_player()
                worlds = state.worlds(seat)
                if worlds is not None and len(state.legal_actions()) > 1:
                    battle = state.battle  # type: ignore[attr-defined]
                    key = "attacker_card" if seat != battle.attacker and battle.attacker_card is not None \
                        else "defender_roll" if seat != battle.defender else "attacker_roll"
                    values = sorted({getattr(w.battle, key) for w in worlds[0]})  # type: ignore[attr-defined]
                    if len(values) > 1:
                        return state, key, values
            state.apply_action(rng.choice(state.legal_actions()))


def test_a_hidden_value_never_changes_the_analysis() -> None:
    state, key, values = hidden_choice()
    figures = []
    for value in values:
        variant = state.clone()  # type: ignore[attr-defined]
        variant.battle = dataclasses.replace(variant.battle, **{key: value})
        ev = SearchEvaluator(variant.game, iterations=60)
        played = variant.legal_actions()[0]
        figures.append((ev.action_values(variant), decision(ev, variant, played)))
    assert all(f == figures[0] for f in figures)


def record_file(tmp_path: Path) -> Path:
    rng = random.Random(4)
    state = GAME.new_initial_state()
    record = Record.start(GAME)
    agents = [make_agent("strong", seed=1, game="tohm"), make_agent("random", seed=2, game="tohm")]
    while not state.is_terminal():
        action = rng.randrange(1, 7) if state.is_chance_node() else agents[state.current_player()].step(state)
        record.add(state, action)
        state.apply_action(action)
    path = tmp_path / "game.json"
    record.save(path)
    return path


def test_a_whole_record(tmp_path: Path) -> None:
    result = analyse(Record.load(record_file(tmp_path)))
    assert result.evaluator == "exact" and result.returns is not None
    decisions = [s for s in result.steps if s.kind == "decision"]
    chances = [s for s in result.steps if s.kind == "chance"]
    assert decisions and chances and len(result.moments) == 3
    assert all(s.best is not None and s.played is not None and s.best >= s.played - 1e-12 for s in decisions)
    assert all(s.luck is not None and sum(s.luck) == pytest.approx(0.0, abs=1e-9) for s in chances)
    assert [row["moves"] for row in result.summary] == [sum(s.seat == p for s in decisions) for p in (0, 1)]


@pytest.mark.parametrize(("lang", "words"), [("en", ("Summary", "Player 1", "moments that decided")),
                                              ("it", ("Riepilogo", "Giocatore 1", "momenti che hanno deciso"))])
def test_the_command_in_both_languages(tmp_path: Path, capsys: pytest.CaptureFixture[str], lang: str,
                                       words: tuple[str, ...]) -> None:
    path = record_file(tmp_path)
    out = tmp_path / "analysis.json"
    try:
        assert main(["analyse", str(path), "--json", str(out), "--lang", lang, "--no-progress"]) == 0
    finally:
        use_language("en")  # the process language back to English
    text = capsys.readouterr().out
    for word in words:
        assert word in text
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "ludoteca-analysis" and data["evaluator"] == "exact"


def test_the_command_refuses_a_bad_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    assert main(["analyse", str(bad), "--no-progress"]) == 2
    assert "not a ludoteca record" in capsys.readouterr().err


def test_the_result_is_the_start_value_plus_luck_plus_the_other_seats_losses(tmp_path: Path) -> None:
    # exact figures on a two-player game: each step moves a seat's win chance by its luck (chance),
    # by minus its own loss (its move) or by the other seat's loss (their move), from the start value
    # to the final returns
    result = analyse(Record.load(record_file(tmp_path)))
    assert result.returns is not None
    for seat in (0, 1):
        total = EXACT.values(GAME.new_initial_state())[seat]
        for s in result.steps:
            if s.kind == "chance":
                assert s.luck is not None
                total += s.luck[seat]
            else:
                total += -(s.loss or 0.0) if s.seat == seat else (s.loss or 0.0)
        assert total == pytest.approx(result.returns[seat], abs=1e-9)
