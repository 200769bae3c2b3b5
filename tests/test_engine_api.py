"""The engine contract, checked the same way on every game and player count."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca import CHANCE, TERMINAL, IllegalActionError, Record
from ludoteca.core.chance import random_playout
from tests.conftest import GAME_CASES, options_for, random_states

SETTINGS = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize(("name", "players"), GAME_CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_random_playout_ends_with_valid_returns(name: str, players: int, seed: int) -> None:
    game = ludoteca.load_game(name, **options_for(name, players))
    state = game.new_initial_state()
    random_playout(state, random.Random(seed))
    assert state.is_terminal() and state.current_player() == TERMINAL
    returns = state.returns()
    assert len(returns) == players
    # Winners share 1 (RULES.md conventions): every winner gets 1/k, the others 0.
    assert math.isclose(sum(returns), 1.0)
    winners = [r for r in returns if r > 0]
    assert all(math.isclose(r, 1 / len(winners)) for r in winners)
    assert state.legal_actions() == []


@pytest.mark.parametrize(("name", "players"), GAME_CASES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_every_step_round_trips_and_respects_the_contract(name: str, players: int, seed: int) -> None:
    game = ludoteca.load_game(name, **options_for(name, players))
    rng = random.Random(seed)
    record = Record.start(game)
    state = game.new_initial_state()
    n_actions, n_chance = game.num_distinct_actions(), game.max_chance_outcomes()
    for step, (s, action) in enumerate(random_states(state, rng, max_actions=600)):
        data = s.to_json()
        assert data["game"] == name and data["players"] == players
        # Position JSON round-trips exactly, and the rebuilt state plays on identically.
        rebuilt = game.state_from_json(json.loads(json.dumps(data)))
        assert rebuilt.to_json() == data
        assert rebuilt.current_player() == s.current_player()
        assert rebuilt.legal_actions() == s.legal_actions()
        legal = s.legal_actions()
        assert legal, "a non-terminal position always has an action"
        assert legal == sorted(legal)
        if s.is_chance_node():
            assert s.current_player() == CHANCE
            outcomes = s.chance_outcomes()
            assert math.isclose(sum(p for _, p in outcomes), 1.0)
            assert sorted(a for a, _ in outcomes) == legal
            assert all(0 <= a < n_chance for a in legal)
        else:
            assert 0 <= s.current_player() < players
            assert s.chance_outcomes() == []
            assert all(0 <= a < n_actions for a in legal)
        # Action JSON round-trips.
        action_json = s.action_to_json(action)
        assert s.action_from_json(json.loads(json.dumps(action_json))) == action
        assert s.action_from_string(s.action_to_string(action)) == action
        # Clones are independent.
        if step % 7 == 0:
            clone = s.clone()
            clone.apply_action(action)
            assert s.to_json() == data
            rebuilt.apply_action(action)
            assert rebuilt.to_json() == clone.to_json()
        record.add(s, action)
    # The record replays to the identical position.
    assert Record.loads(record.dumps()).replay().to_json() == state.to_json()


@pytest.mark.parametrize(("name", "players"), GAME_CASES)
def test_illegal_actions_raise_and_change_nothing(name: str, players: int) -> None:
    game = ludoteca.load_game(name, **options_for(name, players))
    rng = random.Random(7)
    state = game.new_initial_state()
    checked = 0
    for s, _action in random_states(state, rng, max_actions=200):
        legal = set(s.legal_actions())
        space = game.max_chance_outcomes() if s.is_chance_node() else game.num_distinct_actions()
        illegal = [*[a for a in range(min(space, 400)) if a not in legal][:3], -1, space + 5]
        before = s.to_json()
        for a in illegal:
            with pytest.raises(IllegalActionError):
                s.apply_action(a)
            assert s.to_json() == before
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_terminal_state_refuses_actions(name: str) -> None:
    game = ludoteca.load_game(name, **options_for(name, 2))
    state = game.new_initial_state()
    random_playout(state, random.Random(3))
    with pytest.raises(IllegalActionError, match="over"):
        state.apply_action(0)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_observation_is_json_of_the_same_game(name: str) -> None:
    game = ludoteca.load_game(name, **options_for(name, 2))
    state = game.new_initial_state()
    for s, _ in random_states(state, random.Random(5), max_actions=100):
        for seat in (None, 0, 1):
            obs = s.observation(seat)
            assert obs["game"] == name
            json.dumps(obs)


# --- bad input ------------------------------------------------------------------------

def test_unknown_game_is_named() -> None:
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        ludoteca.load_game("chess")


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_unknown_option_is_named(name: str) -> None:
    with pytest.raises(ValueError, match="unknown option 'colour'"):
        ludoteca.load_game(name, players=2, colour="red")


@pytest.mark.parametrize(("name", "bad"), [(g, n) for g in ludoteca.GAMES for n in (
    ludoteca.game_class(g).min_players - 1, ludoteca.game_class(g).max_players + 1)])
def test_players_out_of_range(name: str, bad: int) -> None:
    with pytest.raises(ValueError, match=f"not {bad}"):
        ludoteca.load_game(name, players=bad)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_turn_limit_option_is_validated(name: str) -> None:
    with pytest.raises(ValueError, match="turn_limit"):
        ludoteca.load_game(name, players=2, turn_limit=0)


@pytest.mark.parametrize("name", ludoteca.GAMES)
@pytest.mark.parametrize("bad", [[], "x", 3, {"game": "other"}, {}])
def test_malformed_positions_raise_value_error(name: str, bad: object) -> None:
    game = ludoteca.load_game(name, **options_for(name, 2))
    with pytest.raises(ValueError):
        game.state_from_json(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ludoteca.GAMES)
@pytest.mark.parametrize("bad", [{}, {"nonsense": 1}, {"pass": "maybe"}])
def test_malformed_actions_raise_illegal_action_error(name: str, bad: dict) -> None:
    state = ludoteca.load_game(name, **options_for(name, 2)).new_initial_state()
    with pytest.raises(IllegalActionError):
        state.action_from_json(bad)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_position_missing_a_key_is_named(name: str) -> None:
    game = ludoteca.load_game(name, **options_for(name, 2))
    data = game.new_initial_state().to_json()
    key = next(k for k in data if k not in ("game", "players"))
    del data[key]
    with pytest.raises(ValueError, match=key):
        game.state_from_json(data)


@pytest.mark.parametrize("name", ludoteca.GAMES)
@pytest.mark.parametrize("bad", [True, 1.0, "3", None, (1,)])
def test_non_integer_actions_are_refused(name: str, bad: object) -> None:
    state = ludoteca.load_game(name, **options_for(name, 2)).new_initial_state()
    before = state.to_json()
    with pytest.raises(IllegalActionError):
        state.apply_action(bad)
    assert state.to_json() == before
