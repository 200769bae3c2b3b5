"""Game records: save, load, replay; bad records name the step and the reason."""

from __future__ import annotations

import json
import random

import pytest

import ludoteca
from ludoteca import Record, RecordError
from tests.conftest import options_for, players_near, random_states


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_record_of_an_unfinished_game_replays(name: str, tmp_path) -> None:
    players = players_near(name, 3)
    game = ludoteca.load_game(name, **options_for(name, players))
    state = game.new_initial_state()
    record = Record.start(game)
    for s, action in random_states(state, random.Random(11), max_actions=40):
        record.add(s, action)
    path = tmp_path / "game.json"
    record.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "ludoteca-record" and data["version"] == 1
    assert data["game"] == name and data["options"]["players"] == players
    assert len(data["actions"]) == 40
    assert Record.load(path).replay().to_json() == state.to_json()


def test_record_that_does_not_replay_names_the_step() -> None:
    game = ludoteca.load_game("tohm", players=2)
    record = Record.start(game)
    record.actions = [{"roll": 3}, {"roll": 4}]  # a roll where the player must act
    with pytest.raises(RecordError, match=r"step 2 .*roll.* does not replay"):
        record.replay()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json", "not valid JSON"),
        ("[]", "JSON object"),
        ('{"format": "pgn"}', "not a ludoteca record"),
        ('{"format": "ludoteca-record", "version": 9}', "version"),
        ('{"format": "ludoteca-record", "version": 1, "game": "chess", "options": {}, "actions": []}', "unknown game"),
        ('{"format": "ludoteca-record", "version": 1, "game": "tohm", "options": {"players": 9}, "actions": []}',
         "2 to 5 players"),
        ('{"format": "ludoteca-record", "version": 1, "game": "tohm", "options": {}, "actions": {}}', "actions"),
    ],
)
def test_bad_records_are_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(RecordError, match=reason):
        Record.loads(text).replay()


def test_record_errors_are_value_errors() -> None:
    assert issubclass(RecordError, ValueError)
    assert issubclass(ludoteca.IllegalActionError, ValueError)


def _exagon_in_a_clocked_turn(seed: int = 3) -> tuple[ludoteca.Game, Record, object]:
    """An EXAGON game (clock 60) played to its first clocked turn, with its record."""
    game = ludoteca.load_game("exagon", players=2, clock=60)
    state = game.new_initial_state()
    record = Record.start(game)
    rng = random.Random(seed)
    while state.time_left() is None:
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        record.add(state, action)
        state.apply_action(action)
    return game, record, state


def test_record_keeps_the_time_spent_and_replay_charges_it() -> None:
    # RULES.md section 4: any EXAGON action may carry "elapsed", which time_left loses. A record
    # keeps it beside the action's canonical JSON (format unchanged: a float, after the action's
    # keys) and replay gives it back to apply_action(elapsed=...).
    _, record, state = _exagon_in_a_clocked_turn()
    action = state.legal_actions()[0]
    record.add(state, action, elapsed=12)
    state.apply_action(action, elapsed=12)
    assert json.dumps(record.actions[-1]) == json.dumps(state.action_to_json(action))[:-1] + ', "elapsed": 12.0}'
    data = state.to_json()
    assert 48.0 in (data["time_left"], data["carry"])  # 60 s at the first turn, 12 spent
    replayed = Record.loads(record.dumps()).replay()
    assert replayed.to_json() == data
    assert [s.to_json() for s, _ in Record.loads(record.dumps()).states()][-1] == state.to_json()


def test_record_whose_time_spent_exceeds_the_hourglass_names_the_step() -> None:
    _, record, state = _exagon_in_a_clocked_turn()
    record.add(state, state.legal_actions()[0], elapsed=61)
    step = len(record.actions)
    with pytest.raises(RecordError, match=rf"step {step} .*elapsed.* does not replay: the hourglass ran out"):
        record.replay()


def test_record_of_a_game_without_a_clock_ignores_the_time_spent() -> None:
    # Only EXAGON's actions may carry "elapsed" (RULES.md section 4); a game without a clock
    # ignores it in apply_action, and its record keeps the canonical JSON alone, which replays.
    game = ludoteca.load_game("tohm", players=2)
    state = game.new_initial_state()
    record = Record.start(game)
    for s, action in random_states(state, random.Random(4), max_actions=6):
        record.add(s, action, elapsed=2.5)
    assert all("elapsed" not in a for a in record.actions)
    assert Record.loads(record.dumps()).replay().to_json() == state.to_json()
