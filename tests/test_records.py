"""Game records: save, load, replay; bad records name the step and the reason."""

from __future__ import annotations

import json
import random

import pytest

import ludoteca
from ludoteca import Record, RecordError
from tests.conftest import options_for, random_states


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_record_of_an_unfinished_game_replays(name: str, tmp_path) -> None:
    game = ludoteca.load_game(name, **options_for(name, 3))
    state = game.new_initial_state()
    record = Record.start(game)
    for s, action in random_states(state, random.Random(11), max_actions=40):
        record.add(s, action)
    path = tmp_path / "game.json"
    record.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "ludoteca-record" and data["version"] == 1
    assert data["game"] == name and data["options"]["players"] == 3
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
