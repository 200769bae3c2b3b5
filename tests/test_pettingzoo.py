"""The PettingZoo adapter, checked with PettingZoo's own tests."""

from __future__ import annotations

import importlib
import pickle
import random
import warnings

import pytest

pettingzoo = pytest.importorskip(
    "pettingzoo", reason="PettingZoo is not installed (pip install 'ludoteca[pettingzoo]'): adapter not testable"
)
np = pytest.importorskip("numpy")

from pettingzoo.test import api_test, seed_test  # noqa: E402

import ludoteca  # noqa: E402
from ludoteca.interop import pettingzoo as lpz  # noqa: E402
from ludoteca.interop.pettingzoo import ludoteca_tohm_v0, ludoteca_tri_v0  # noqa: E402
from tests.conftest import GAME_CASES, hint  # noqa: E402

CASES = GAME_CASES

# api_test warns about every dict observation {"observation", "action_mask"} unless the
# environment is one of PettingZoo's own (it keeps a list of their names): expected here.
EXPECTED_WARNINGS = (
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
)


def _play(env, seed: int, max_steps: int = 100_000):
    """Random legal play to the end; returns the accumulated rewards."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for steps, agent in enumerate(env.agent_iter()):
        obs, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        assert steps < max_steps
        legal = info["legal_actions"]
        assert list(np.flatnonzero(obs["action_mask"])) == legal
        env.step(legal[rng.randrange(len(legal))])
    return totals


@pytest.mark.parametrize(("name", "players"), CASES)
def test_api_test(name, players):
    options = {"players": players, "turn_limit": 40}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(lpz.env(name, **options), num_cycles=60 if hint(name, "RANDOM_PLAY_SLOW", False) else 150)
    unexpected = {str(w.message) for w in caught} - set(EXPECTED_WARNINGS)
    assert not unexpected


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_seed_test(name):
    def make():
        return lpz.env(name, players=3, turn_limit=60)

    seed_test(make, num_cycles=40 if hint(name, "RANDOM_PLAY_SLOW", False) else 200)


def test_module_forms():
    module = importlib.import_module("ludoteca.interop.pettingzoo.ludoteca_exactly_v0")
    assert module is lpz.ludoteca_exactly_v0
    env = ludoteca_tohm_v0.env(players=3)
    assert env.unwrapped.metadata["name"] == "ludoteca_tohm_v0"
    assert isinstance(env.unwrapped, ludoteca_tohm_v0.raw_env)
    assert env.unwrapped.game.num_players == 3
    assert lpz.raw_env("exagon").game.options["clock"] is None
    copy = pickle.loads(pickle.dumps(ludoteca_tri_v0.raw_env(players=3, size=4)))
    assert copy.game.options["size"] == 4 and copy.game.num_players == 3
    with pytest.raises(ValueError, match="size"):
        ludoteca_tri_v0.raw_env(players=2, size=1)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_full_games_pay_the_engine_returns(name):
    env = lpz.raw_env(name, players=3, turn_limit=200)
    totals = _play(env, seed=11)
    returns = env.game_state.returns()
    assert env.game_state.is_terminal()
    assert [totals[a] for a in env.possible_agents] == pytest.approx(returns)
    assert sum(returns) == pytest.approx(1.0)
    assert env.agents == []


def test_same_seed_same_game_other_seed_other_game():
    def trace(seed):
        env = lpz.raw_env("tohm", players=2)
        env.reset(seed=seed)
        rng = random.Random(0)
        out = []
        for _ in range(60):
            *_, info = env.last()
            out.append(env.game_state.to_json()["roll"])
            legal = info["legal_actions"]
            env.step(legal[rng.randrange(len(legal))])
        return out

    assert trace(5) == trace(5)
    assert trace(5) != trace(6)


def test_observation_is_the_encoded_position_and_the_mask_only_for_the_mover():
    env = lpz.raw_env("exactly", players=4)
    env.reset(seed=3)
    mover = env.agent_selection
    for agent in env.agents:
        obs = env.observe(agent)
        seat = env.agent_seat[agent]
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert np.array_equal(obs["observation"], env.encoder.encode(env.game_state.observation(seat), seat))
        assert env.observation_space(agent).contains(obs)
        assert obs["action_mask"].any() == (agent == mover)
        assert env.infos[agent]["position"] == env.game_state.to_json()
        assert ("legal_actions" in env.infos[agent]) == (agent == mover)
    assert env.state_space.contains(env.state())
    assert np.array_equal(env.state(), env.observe(env.possible_agents[0])["observation"])
    quiet = lpz.raw_env("exactly", players=4, position_info=False)
    quiet.reset(seed=3)
    assert "position" not in quiet.infos[quiet.agent_selection]


def test_tri_observations_hide_the_secret_card():
    env = lpz.raw_env("tri", players=2, size=3)
    rng = random.Random(1)
    for seed in range(100):
        env.reset(seed=seed)
        while env.agents and not env.terminations[env.agent_selection]:
            battle = env.game_state.to_json()["battle"]
            if battle is not None and battle["step"] == "defender_card":
                break
            legal = env.infos[env.agent_selection]["legal_actions"]
            env.step(legal[rng.randrange(len(legal))])
        else:
            continue
        break
    defender = env.possible_agents[battle["defender"]]
    attacker = env.possible_agents[battle["attacker"]]
    assert env.agent_selection == defender
    card = env.game_state.to_json()["battle"]["attacker_card"]
    assert card is not None
    seen = env.infos[defender]["position"]["battle"]
    assert seen["attacker_card"] is None and seen["attacker_roll"] is None
    assert env.infos[attacker]["position"]["battle"]["attacker_card"] == card
    # the same position with another attacker card looks the same to the defender
    data = env.game_state.to_json()
    data["battle"]["attacker_card"] = next(v for v in (0, 2, 3, 4) if v != card)
    twin = env.game.state_from_json(data)
    seat = battle["defender"]
    assert twin.observation(seat) == env.game_state.observation(seat)
    assert np.array_equal(env.encoder.encode(twin.observation(seat), seat), env.observe(defender)["observation"])
    assert twin.observation(battle["attacker"]) != env.game_state.observation(battle["attacker"])


def test_illegal_action_ends_the_game_in_the_wrapped_env():
    env = ludoteca_tohm_v0.env(players=2)
    env.reset(seed=0)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values())
    assert env.rewards[env.possible_agents[0]] == -1


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_render_ansi(name):
    env = lpz.raw_env(name, players=2, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text == env.game_state.render()


@pytest.mark.parametrize("name", ["tohm", "tri"])
def test_render_rgb_array(name):
    env = lpz.raw_env(name, players=3, render_mode="rgb_array")
    _play(env, seed=2)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.shape[0] >= 3 * 32 and len(np.unique(img.reshape(-1, 3), axis=0)) >= 3
    assert "rgb_array" not in lpz.raw_env("exactly").metadata["render_modes"]


def test_research_doc_examples_run(capsys):  # capsys keeps the examples' prints quiet
    """Every Python example of docs/research.md runs as written."""
    pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: the OpenSpiel examples cannot run")
    import pathlib
    import re

    doc = pathlib.Path(__file__).resolve().parents[1] / "docs" / "research.md"
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, block in enumerate(blocks):
            exec(compile(block, f"research.md example {i}", "exec"), {"__name__": f"example{i}"})


def test_tri_teleport_move_option():
    # RULES.md TRI option teleport "move": the environment passes it to the game; the action
    # space holds every (square, side that leaves, target) teleport
    env = lpz.raw_env("tri", players=2, size=3, teleport="move", turn_limit=80)
    assert env.game.options["teleport"] == "move"
    n = env.game.num_distinct_actions()
    assert n == 16 + 4 * 36 + 4 * 9 * 36 + 4 + 1
    assert all(env.action_space(a).n == n for a in env.possible_agents)
    teleports = 0
    for seed in range(6):
        env.reset(seed=seed)
        rng = random.Random(seed)
        for _agent in env.agent_iter():
            obs, _, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            assert obs["action_mask"].shape == (n,)
            legal = info["legal_actions"]
            action = legal[rng.randrange(len(legal))]
            teleports += "from" in env.game_state.action_to_json(action).get("teleport", {})
            env.step(action)
        assert sum(env.game_state.returns()) == pytest.approx(1.0)
    assert teleports > 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(lpz.env("tri", players=3, size=3, teleport="move", turn_limit=40), num_cycles=100)
    assert not {str(w.message) for w in caught} - set(EXPECTED_WARNINGS)


# --- the contract: one source of truth ------------------------------------------

@pytest.mark.parametrize(("name", "players"), CASES)
def test_private_observations_exactly_when_the_game_hides_something(name, players):
    """Observations are computed per seat exactly when the game declares hidden information;
    otherwise every agent shares the one public position."""
    env = lpz.raw_env(name, players=players)
    hidden = env.game.has_hidden_information()
    assert env.private == hidden
    env.reset(seed=players)
    positions = [env.infos[a]["position"] for a in env.possible_agents]
    if hidden:
        assert all(positions[0] is not p for p in positions[1:])
    else:
        assert all(positions[0] is p for p in positions[1:])


def test_rgb_rendering_comes_from_the_game_package():
    for name in ludoteca.GAMES:
        drawing = ludoteca.game_class(name).part("drawing")
        modes = lpz.raw_env(name).metadata["render_modes"]
        assert ("rgb_array" in modes) == (drawing is not None)


def test_a_game_without_an_encoding_module_has_no_tensor():
    """The encoder is found in the game's package; a game class elsewhere (here, in tests/)
    gets a clear error instead of another game's tensor."""
    from ludoteca.games.tohm import TohmGame
    from ludoteca.interop.encoding import make_encoder

    class Bare(TohmGame):
        pass

    assert make_encoder(TohmGame(players=2)).size > 0
    with pytest.raises(ValueError, match="no observation encoder"):
        make_encoder(Bare(players=2))
