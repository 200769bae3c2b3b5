"""Every position an engine writes is one that engine reads back (RULES.md, Conventions).

A property test through the public API only (``load_game``, ``new_initial_state``,
``apply_action``/``apply_json``, ``to_json``, ``state_from_json``): random games of every game
with every player count, and a few options (small ``turn_limit`` values, so games end at the
limit; the option sets of each game's ``VARIANTS`` hint, e.g. EXAGON with and without its
hourglass), each position checked after every action; a game with a clock spends random time.
The JSON goes through text (``json.dumps``/``json.loads``) as it would between programs.
Deterministic: hypothesis is derandomized and every game is played from an explicit seed.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca.core.chance import random_action
from ludoteca.core.game import Game, State
from tests.conftest import GAME_CASES, hint

CASES = GAME_CASES
TURN_LIMITS = (None, None, 1, 2, 3, 5, 12, 40)
"""``None``: the default limit (1000). Small limits end games at the limit, often mid-round."""
MAX_ACTIONS = 1500
"""A bound on one game's length (TRI with four players can run to thousands of actions)."""


def options_for(name: str, players: int, turn_limit: int | None, extra: int) -> dict[str, Any]:
    opts: dict[str, Any] = {"players": players}
    if turn_limit is not None:
        opts["turn_limit"] = turn_limit
    variants = hint(name, "VARIANTS", ({},))
    opts.update(variants[extra % len(variants)])
    return opts


def timed(state: State, action: Any, rng: random.Random) -> dict[str, Any]:
    """A player's action with a random ``elapsed`` (or a timeout) when a clock runs (``time_left``)."""
    data = state.action_to_json(action)
    time_left = state.time_left()
    if time_left is None:
        return data
    if rng.random() < 0.05:
        return {"timeout": True}
    data["elapsed"] = round(rng.uniform(0, time_left), 3)
    return data


def check_reads_back(game: Game, state: State) -> None:
    written = state.to_json()
    text = json.dumps(written)
    read = game.state_from_json(json.loads(text))
    assert read.to_json() == written, f"position changed when read back: {text}"
    assert read.current_player() == state.current_player()
    assert read.is_terminal() == state.is_terminal()
    assert read.legal_actions() == state.legal_actions()
    if state.is_terminal():
        assert read.returns() == state.returns()
    else:
        assert read.chance_outcomes() == state.chance_outcomes()


def play_and_check(name: str, players: int, seed: int, turn_limit: int | None, extra: int) -> None:
    game = ludoteca.load_game(name, **options_for(name, players, turn_limit, extra))
    rng = random.Random(seed)
    state = game.new_initial_state()
    check_reads_back(game, state)
    for _ in range(MAX_ACTIONS):
        if state.is_terminal():
            break
        action = random_action(state, rng)
        if not state.is_chance_node():
            state.apply_json(timed(state, action, rng))
        else:
            state.apply_action(action)
        check_reads_back(game, state)


@pytest.mark.parametrize(("name", "players"), CASES)
def test_every_position_written_is_read_back(name: str, players: int) -> None:
    @settings(max_examples=hint(name, "PROPERTY_GAMES", 12), derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(seed=st.integers(0, 2**32 - 1), turn_limit=st.sampled_from(TURN_LIMITS), extra=st.integers(0, 2))
    def games(seed: int, turn_limit: int | None, extra: int) -> None:
        play_and_check(name, players, seed, turn_limit, extra)

    games()


@pytest.mark.parametrize("players", range(2, 6))
def test_exagon_games_ended_by_the_turn_limit_after_a_placing_turn_read_back(players: int) -> None:
    # The defect of with turn_limit=12 every game ended right after a turn that placed
    # a tile, with placed_this_turn > 0 in the final position, which the reader refused.
    for seed in range(10):
        play_and_check("exagon", players, seed, 12, 0)
