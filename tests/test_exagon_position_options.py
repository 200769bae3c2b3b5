"""An EXAGON position carries its game's rulebook numbers (RULES.md section 4).

RULES.md: "A position is self-contained" and "Every position an engine writes, finished games
included, is one that engine reads back". A position written by a game with other rulebook numbers
(``hand``, ``bonus_3``/``bonus_4``/``bonus_5``, ``go_on``, the tournament's ``tournament_target``,
``win_points``, ``jolly_penalty``) is therefore read back, by any EXAGON game object, as a position
of *that* game: the same legal actions and the same continuation as the game that wrote it, on the
Python engine and on the compiled one. A key a position does not carry is the reading game's (as
for ``matching`` and ``carry_cap``); a value no game can have is refused, naming the key.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import ludoteca
from ludoteca.core.chance import sample_chance
from ludoteca.games.exagon import ExagonGame, compiled

ONE_SHOT = {"players": 2, "clock": None, "go_on": 3, "bonus_3": 0, "bonus_4": 1, "bonus_5": 4, "hand": 12}
TOURNAMENT = {"players": 2, "clock": None, "tournament": True, "tournament_target": 15, "win_points": 10,
              "jolly_penalty": 1, "go_on": 1}
THREE = {"players": 3, "clock": None, "go_on": 1, "bonus_4": 4, "bonus_5": 0}


def _play(state: Any, rng: random.Random, until: Any) -> None:
    while not state.is_terminal() and not until(state):
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))


def _in_turn(state: Any) -> bool:
    return bool(state.to_json()["phase"] == "turn" and state.to_json()["turn"] >= 4)


def _same_continuation(a: Any, b: Any, seed: int) -> None:
    """``a`` and ``b`` play the same game from here on: the same legal actions, outcomes and positions."""
    rng = random.Random(seed)
    while not a.is_terminal():
        assert b.to_json() == a.to_json()
        if a.is_chance_node():
            assert b.chance_outcomes() == a.chance_outcomes()
            action = sample_chance(a, rng)
        else:
            assert b.legal_actions() == a.legal_actions()
            action = rng.choice(a.legal_actions())
        a.apply_action(action)
        b.apply_action(action)
    assert b.is_terminal() and b.returns() == a.returns() and b.to_json() == a.to_json()


@pytest.mark.parametrize("options", [ONE_SHOT, TOURNAMENT, THREE], ids=["one-shot", "tournament", "three"])
@pytest.mark.parametrize("reader", [{}, {"players": 4, "go_on": 5, "hand": 6, "win_points": 30}],
                         ids=["default-reader", "other-reader"])
def test_another_game_object_reads_the_writers_rulebook(options: dict[str, Any], reader: dict[str, Any]) -> None:
    writer = ludoteca.load_game("exagon", **options)
    for seed in range(3):
        state = writer.new_initial_state()
        _play(state, random.Random(seed), _in_turn)
        written = state.to_json()
        other = ludoteca.load_game("exagon", **{"players": 2, "clock": None, **reader})
        read = other.state_from_json(written)
        for name in ("hand", "bonus_3", "bonus_4", "bonus_5", "go_on", "tournament_target", "win_points",
                     "jolly_penalty"):
            if name in options:
                assert read.game.options[name] == options[name], name
        assert read.to_json() == written
        _same_continuation(state.clone(), read, seed)


@pytest.mark.skipif(not compiled.available(), reason="the compiled EXAGON engine is not built")
@pytest.mark.parametrize("options", [ONE_SHOT, TOURNAMENT], ids=["one-shot", "tournament"])
def test_the_compiled_engine_reads_the_same_game(options: dict[str, Any]) -> None:
    writer = ludoteca.load_game("exagon", **options)
    state = writer.new_initial_state()
    _play(state, random.Random(7), _in_turn)
    written = state.to_json()
    reader = ludoteca.load_game("exagon", players=2, clock=None)
    assert isinstance(reader, ExagonGame)
    fast = compiled.CompiledState.from_json(reader, written)
    assert fast.to_json() == written
    _same_continuation(state, fast, 7)


def test_a_position_without_the_keys_is_read_with_the_readers_numbers() -> None:
    # a default game's position carries none of the keys; a reader with go_on=3 reads it as its own
    state = ludoteca.load_game("exagon", players=2, clock=None).new_initial_state()
    _play(state, random.Random(1), _in_turn)
    written = state.to_json()
    assert not {"go_on", "hand", "bonus_3", "win_points"} & set(written)
    reader = ludoteca.load_game("exagon", players=2, clock=None, go_on=3, bonus_3=2)
    read = reader.state_from_json(written)
    assert read.game.options["go_on"] == 3 and read.game.options["bonus_3"] == 2
    assert read.to_json() == {**written, "go_on": 3, "bonus_3": 2}


@pytest.mark.parametrize(("key", "value", "words"), [
    ("go_on", 0, "1 to 6"), ("bonus_4", 9, "0 to 6"), ("hand", 21, "at most 20"), ("go_on", "3", "whole number"),
    ("win_points", -1, "0 to 1000")])
def test_a_position_with_an_impossible_number_is_refused_naming_the_key(key: str, value: Any, words: str) -> None:
    game = ludoteca.load_game("exagon", players=2, clock=None)
    state = game.new_initial_state()
    _play(state, random.Random(2), _in_turn)
    with pytest.raises(ValueError, match=f"^(position\\['{key}'\\]|{key}): ") as info:
        game.state_from_json({**state.to_json(), key: value})
    assert words in str(info.value)


def test_a_hand_that_contradicts_the_deal_in_progress_is_refused() -> None:
    # "Deal: ... the k-th chance node gives a uniformly chosen undealt tile to seat k % n, until every
    # seat has hand tiles": hands of 6 and 5 tiles cannot be a deal of 4 each
    during = ludoteca.load_game("exagon", players=2, clock=None, hand=12).new_initial_state()
    _play(during, random.Random(4), lambda s: len(s.to_json()["hands"][0]) == 6)
    written = during.to_json()
    assert written["hand"] == 12 and [len(h) for h in written["hands"]] == [6, 5]
    default = ludoteca.load_game("exagon", players=2, clock=None)
    assert default.state_from_json(written).to_json() == written
    with pytest.raises(ValueError, match="not a round-robin deal of 4 each"):
        default.state_from_json({**written, "hand": 4})


def test_openspiel_starts_a_position_as_the_game_that_wrote_it() -> None:
    los = pytest.importorskip("ludoteca.interop.openspiel", exc_type=ImportError)
    state = ludoteca.load_game("exagon", **ONE_SHOT).new_initial_state()
    _play(state, random.Random(5), _in_turn)
    written = state.to_json()
    spiel = los.load("exagon", players=2).new_initial_state(written)  # a default game's adapter
    assert spiel.ludoteca_state.game.options["go_on"] == ONE_SHOT["go_on"]
    rng = random.Random(5)
    while not state.is_terminal():
        assert spiel.legal_actions() == state.legal_actions()
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        spiel.apply_action(action)
    assert spiel.is_terminal() and spiel.returns() == state.returns()
