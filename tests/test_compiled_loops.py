"""The lab's game loop and the research adapters on the compiled engines (``core.compiled.compiled_copy``):
the same rows, the same games and the same API answers as on the Python engine, which they use when
the compiled engine is missing, cannot play the options, or ``LUDOTECA_ENGINE=python`` asks for it."""

from __future__ import annotations

import multiprocessing
import random
from typing import Any

import pytest

import ludoteca
from ludoteca.core.compiled import ENGINE_VARIABLE, compiled_copy
from ludoteca.core.errors import IllegalActionError
from ludoteca.lab.runner import RunSpec, Variant, play_game
from tests.conftest import options_for

pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)


def _built(name: str, players: int) -> bool:
    return compiled_copy(ludoteca.load_game(name, **options_for(name, players)).new_initial_state()) is not None


COMPILED = [name for name in ludoteca.GAMES if _built(name, ludoteca.game_class(name).min_players)]
"""The games whose compiled engine is built here (a game without one is not concerned)."""
needs_compiled = pytest.mark.skipif(not COMPILED, reason="no compiled engine is built (pip install -e .)")
PUBLIC = [name for name in COMPILED
          if not ludoteca.load_game(name, players=ludoteca.game_class(name).min_players).has_hidden_information()]
"""Of those, the games that hide nothing: the adapters play them on the compiled engine (a game with
hidden information keeps the Python engine, whose events say who sees what)."""


def _python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_VARIABLE, "python")


def _rows(name: str, players: int, lineup: tuple[str, ...], games: int) -> list[dict[str, Any]]:
    game = ludoteca.load_game(name, **options_for(name, players))
    spec = RunSpec(name, players, lineup, 11, (Variant("base", {}, game.record_options()),), rotate=True, detail=4)
    return [play_game(spec, 0, i) for i in range(games)]


@needs_compiled
@pytest.mark.parametrize("name", COMPILED)
def test_the_lab_plays_random_games_on_the_compiled_engine_with_the_same_rows(name, monkeypatch) -> None:
    """Random agents: the lean games run on the compiled engine, every row (result, length, chance
    nodes, counters, end, scores) equal to the Python engine's; detailed games are Python's anyway."""
    import ludoteca.lab.runner as runner

    cls = ludoteca.game_class(name)
    real = runner.compiled_copy
    played: list[bool] = []

    def counted(state: Any) -> Any:
        fast = real(state)
        played.append(fast is not None)
        return fast

    monkeypatch.setattr(runner, "compiled_copy", counted)
    for players in sorted({cls.min_players, min(cls.max_players, cls.min_players + 1)}):
        played.clear()
        fast = _rows(name, players, ("random",) * players, 24)
        assert played == [True] * 18  # the 24 games less the detailed ones (every 4th)
        with monkeypatch.context() as m:
            _python(m)
            slow = _rows(name, players, ("random",) * players, 24)
        assert fast == slow


@needs_compiled
def test_the_lab_keeps_the_python_engine_for_agents_that_read_it(monkeypatch) -> None:
    """An agent that reads the Python state (``heuristic``) keeps every game on the Python engine."""
    import ludoteca.lab.runner as runner

    monkeypatch.setattr(runner, "compiled_copy", lambda s: pytest.fail("the compiled engine was asked"))
    name = COMPILED[0]
    players = ludoteca.game_class(name).min_players
    rows = _rows(name, players, ("heuristic",) + ("random",) * (players - 1), 6)
    assert len(rows) == 6


@needs_compiled
@pytest.mark.parametrize("name", COMPILED)
def test_the_compiled_state_refuses_what_is_not_a_legal_action(name) -> None:
    """``is_legal`` / ``play``: anything but a legal int is refused and nothing changes."""
    state = ludoteca.load_game(name, **options_for(name, ludoteca.game_class(name).min_players)).new_initial_state()
    fast = compiled_copy(state)
    assert fast is not None
    core = fast._c
    legal = core.legal_actions()
    before = fast.to_json()
    for bad in (True, 1.0, "1", None, -1, 2**40, max(legal) + 1):
        assert not core.is_legal(bad)
        assert not core.play(bad)
        with pytest.raises(IllegalActionError):
            fast.apply_action(bad)  # type: ignore[arg-type]
    assert fast.to_json() == before
    assert all(core.is_legal(a) for a in legal)


# --- OpenSpiel ------------------------------------------------------------------------------

def _chance(state: Any, rng: random.Random) -> int:
    x, acc = rng.random(), 0.0
    outcomes = state.chance_outcomes()
    for a, p in outcomes:
        acc += p
        if x < acc:
            return int(a)
    return int(outcomes[-1][0])


def _spiel_game(game: Any, seed: int) -> tuple[list[int], list[float], str, int]:
    """A seeded random game through the pyspiel API: history, returns, last observation, moves."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_chance(state, rng))
        else:
            legal = state.legal_actions()
            assert legal == state.legal_actions(state.current_player())
            state.apply_action(legal[rng.randrange(len(legal))])
    return state.history(), state.returns(), state.observation_string(0), state.move_number()


@needs_compiled
@pytest.mark.parametrize("name", PUBLIC)
def test_openspiel_plays_the_same_games_on_both_engines(name, monkeypatch) -> None:
    los = pytest.importorskip("ludoteca.interop.openspiel", exc_type=ImportError)
    players = ludoteca.game_class(name).min_players
    game = los.load(name, players=players)  # research play: no clock by default
    assert game.new_initial_state()._pos.fast is not None
    fast = [_spiel_game(game, seed) for seed in range(3)]
    _python(monkeypatch)
    game = los.load(name, players=players)  # the engine is chosen with a game's first position
    assert game.new_initial_state()._pos.fast is None
    assert [_spiel_game(game, seed) for seed in range(3)] == fast
    history, _returns, _obs, moves = fast[0]
    assert moves == len(history)


@needs_compiled
@pytest.mark.skipif(not PUBLIC, reason="no compiled engine of a game without hidden information is built")
def test_openspiel_refuses_an_illegal_action_on_the_compiled_engine() -> None:
    los = pytest.importorskip("ludoteca.interop.openspiel", exc_type=ImportError)
    name = PUBLIC[0]
    game = los.load(name, players=ludoteca.game_class(name).min_players)
    state = game.new_initial_state()
    bad = max(state.legal_actions()) + 1
    with pytest.raises(IllegalActionError):
        state.apply_action(bad)
    assert state.history() == [] and state.move_number() == 0


def _play_in_child(game: Any, seed: int) -> tuple[list[int], list[float]]:
    history, returns, _, _ = _spiel_game(game, seed)
    return history, returns


@pytest.mark.slow
def test_openspiel_games_pickle_and_play_in_spawned_processes() -> None:
    """A game object travels to a spawn-started worker (pickled) and plays there as here."""
    pytest.importorskip("ludoteca.interop.openspiel", exc_type=ImportError)
    import pickle

    from ludoteca.interop import openspiel as los

    name = ludoteca.GAMES[0]
    game = los.load(name, players=ludoteca.game_class(name).max_players)
    again = pickle.loads(pickle.dumps(game))
    assert str(again) == str(game) and again.num_players() == game.num_players()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        there = pool.apply(_play_in_child, (game, 5))
    assert there == _play_in_child(game, 5)


# --- PettingZoo -----------------------------------------------------------------------------

def _episode(env: Any, seed: int) -> tuple[list[int], dict[str, float]]:
    rng = random.Random(seed)
    env.reset(seed=seed)
    actions: list[int] = []
    rewards: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        rewards[agent] = rewards.get(agent, 0.0) + reward
        if termination or truncation:
            env.step(None)
            continue
        legal = info["legal_actions"]
        assert sorted(legal) == [int(a) for a in obs["action_mask"].nonzero()[0]]
        action = legal[rng.randrange(len(legal))]
        actions.append(action)
        env.step(action)
    return actions, rewards


@needs_compiled
@pytest.mark.parametrize("name", PUBLIC)
def test_pettingzoo_plays_the_same_episodes_on_both_engines(name, monkeypatch) -> None:
    pz = pytest.importorskip("ludoteca.interop.pettingzoo", exc_type=ImportError)
    players = ludoteca.game_class(name).min_players
    env = pz.raw_env(name, players=players, position_info=False)
    fast = [_episode(env, seed) for seed in range(2)]
    assert env._fast is not None
    assert env.game_state.is_terminal()
    _python(monkeypatch)
    env = pz.raw_env(name, players=players, position_info=False)
    assert [_episode(env, seed) for seed in range(2)] == fast
    assert env._fast is None
