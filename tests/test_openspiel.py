"""The OpenSpiel adapter, checked with OpenSpiel's own tools."""

from __future__ import annotations

import itertools
import json
import pickle
import random

import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="OpenSpiel is not installed (pip install 'ludoteca[openspiel]'): adapter not testable"
)
np = pytest.importorskip("numpy")

from open_spiel.python.algorithms import mcts  # noqa: E402
from open_spiel.python.observation import make_observation  # noqa: E402

import ludoteca  # noqa: E402
from ludoteca.interop import openspiel as los  # noqa: E402
from tests.conftest import GAME_CASES, hint, options_for  # noqa: E402

CASES = GAME_CASES


def _chance(state, rng: random.Random) -> int:
    outcomes = state.chance_outcomes()
    x, acc = rng.random(), 0.0
    for a, p in outcomes:
        acc += p
        if x < acc:
            return a
    return outcomes[-1][0]


def _random_game(game, seed: int, stop=None):
    """Play ``game`` randomly; return the final state (or the first one where ``stop(state)``)."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    while not state.is_terminal():
        if stop is not None and stop(state):
            return state
        if state.is_chance_node():
            state.apply_action(_chance(state, rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    return state


def test_every_game_is_registered_with_its_type():
    names = set(pyspiel.registered_names())
    for name in ludoteca.GAMES:
        assert f"ludoteca_{name}" in names
        game = pyspiel.load_game(f"ludoteca_{name}")
        gt = game.get_type()
        assert gt.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        assert gt.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        assert gt.utility == pyspiel.GameType.Utility.CONSTANT_SUM
        assert gt.reward_model == pyspiel.GameType.RewardModel.TERMINAL
        native = ludoteca.load_game(name, **options_for(name, ludoteca.game_class(name).min_players))
        expected = ("IMPERFECT_INFORMATION" if native.has_hidden_information() else "PERFECT_INFORMATION")
        assert gt.information == getattr(pyspiel.GameType.Information, expected)
        assert gt.provides_information_state_string and gt.provides_observation_string
        assert gt.provides_observation_tensor
        cls = ludoteca.game_class(name)
        assert (gt.min_num_players, gt.max_num_players) == (cls.min_players, cls.max_players)
        assert game.utility_sum() == 1.0
        assert (game.min_utility(), game.max_utility()) == (0.0, 1.0)
        assert game.num_distinct_actions() == native.num_distinct_actions()
        assert game.max_chance_outcomes() == native.max_chance_outcomes()


def test_parameters_are_the_options():
    game = pyspiel.load_game("ludoteca_tri(players=3,size=4,ties=attacker,turn_limit=50)")
    native = game.ludoteca_game
    assert native.options["size"] == 4 and native.options["ties"] == "attacker"
    assert native.num_players == 3 and native.options["turn_limit"] == 50
    assert game.max_game_length() == los.max_game_length(native)
    # sentinels mean "the ludoteca default"
    assert pyspiel.load_game("ludoteca_tri", {"players": 4}).ludoteca_game.options["size"] == 6
    tohm = pyspiel.load_game("ludoteca_tohm", {"players": 2, "layout": "[[3,4,5,6],[6,5,4,3],[3,3,4,4]]"})
    assert tohm.ludoteca_game.options["layout"][1] == [6, 5, 4, 3]
    assert pyspiel.load_game("ludoteca_exagon").ludoteca_game.options["clock"] is None
    assert pyspiel.load_game("ludoteca_exagon", {"clock": 30.0}).ludoteca_game.options["clock"] == 30.0
    # the game string rebuilds the same game
    again = pyspiel.load_game(str(game))
    assert again.ludoteca_game.options == native.options
    with pytest.raises(Exception, match="size"):
        pyspiel.load_game("ludoteca_tri", {"players": 2, "size": 99})
    assert los.load("ludoteca_tohm", players=3).num_players() == 3


def test_list_options_travel_comma_free_in_game_strings():
    tohm = pyspiel.load_game("ludoteca_tohm", {"players": 2, "layout": "[[3,4,5,6],[6,5,4,3],[3,3,4,4]]"})
    assert "layout=3456;6543;3344," in str(tohm)
    assert pyspiel.load_game(str(tohm)).ludoteca_game.options["layout"] == [[3, 4, 5, 6], [6, 5, 4, 3], [3, 3, 4, 4]]
    pyspiel.random_sim_test(tohm, num_sims=1, serialize=True, verbose=False)
    # a designer's EXAGON set leaving two tiles over: they are set aside, unseen
    tiles = ludoteca.load_game("exagon", clock=None).new_initial_state().to_json()["tiles"][:38]
    exagon = pyspiel.load_game("ludoteca_exagon", {"players": 3, "tiles": json.dumps(tiles)})
    assert exagon.ludoteca_game.n_tiles == 38
    assert pyspiel.load_game(str(exagon)).ludoteca_game.tiles == exagon.ludoteca_game.tiles
    pyspiel.random_sim_test(exagon, num_sims=1, serialize=True, verbose=False)
    state = exagon.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert len(state.ludoteca_state.to_json()["aside"]) == 2
    for p in range(3):
        assert "aside" not in state.position(p)
        assert '"aside"' not in state.observation_string(p)


@pytest.mark.parametrize(("name", "players"), CASES)
def test_random_sim_test(name, players):
    """OpenSpiel's own API checks: clone, serialization, masks, returns sum, game length."""
    params = {"players": players, **hint(name, "SHORT_OPTIONS", {}).get(players, {})}  # (4-player TRI: ~1000 turns)
    game = pyspiel.load_game(f"ludoteca_{name}", params)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_mcts_bot_plays_each_game_to_the_end(name):
    params = {"players": 2, "turn_limit": 16}
    game = pyspiel.load_game(f"ludoteca_{name}", params)
    rs = np.random.RandomState(7)
    bot = mcts.MCTSBot(game, uct_c=1.4, max_simulations=8,
                       evaluator=mcts.RandomRolloutEvaluator(1, rs), solve=False, random_state=rs)
    rng = random.Random(7)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_chance(state, rng))
        else:
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions += 1
    assert decisions > 0
    assert sum(state.returns()) == pytest.approx(1.0)
    assert state.returns() == state.ludoteca_state.returns()


def test_ismcts_plays_tri_to_the_end():
    ismcts = pytest.importorskip("open_spiel.python.algorithms.ismcts",
                                 reason="this OpenSpiel has no Python information-set MCTS")
    game = pyspiel.load_game("ludoteca_tri", {"players": 2, "size": 2, "turn_limit": 16})
    rs = np.random.RandomState(3)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=1.4, max_simulations=8,
                           random_state=rs)
    rng = random.Random(3)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_chance(state, rng))
        else:
            state.apply_action(bot.step(state))
    assert sum(state.returns()) == pytest.approx(1.0)


def _battle_step(step):
    def stop(state):
        battle = state.position()["battle"]
        return battle is not None and battle["step"] == step
    return stop


def _replay(game, history, swap):
    """Replay ``history`` with ``swap`` = {index: action}."""
    state = game.new_initial_state()
    for i, a in enumerate(history):
        state.apply_action(swap.get(i, a))
    return state


def _views(state, seat):
    return (state.information_state_string(seat), state.observation_string(seat),
            list(state.observation_tensor(seat)))


def test_tri_information_state_never_holds_the_secret_card_or_roll():
    game = pyspiel.load_game("ludoteca_tri", {"players": 3, "size": 3})
    for seed in range(200):
        state = _random_game(game, seed, _battle_step("defender_card"))
        if state.is_terminal():
            continue
        history = state.history()
        card_at = len(history) - 1  # the attacker's card was the last action
        roll_at = len(history) - 3  # the attacker's roll (chance) before the defender's
        before = _replay(game, history[:card_at], {})
        cards = before.legal_actions()
        rolls = [a for a, _ in _replay(game, history[:roll_at], {}).chance_outcomes()]
        if len(cards) > 1:
            break
    else:  # pragma: no cover - the seeds above always find one
        pytest.fail("no battle with a choice of cards found")
    battle = state.position()["battle"]
    attacker, defender = battle["attacker"], battle["defender"]
    bystander = 3 - attacker - defender
    other_card = next(c for c in cards if c != history[card_at])
    other_roll = next(r for r in rolls if r != history[roll_at])
    for swap in ({card_at: other_card}, {roll_at: other_roll}, {card_at: other_card, roll_at: other_roll}):
        twin = _replay(game, history, swap)
        assert twin.ludoteca_state.to_json() != state.ludoteca_state.to_json()
        for seat in (defender, bystander):
            assert _views(twin, seat) == _views(state, seat), f"seat {seat} can tell {swap}"
        assert _views(twin, attacker) != _views(state, attacker)
    assert "?" in state.information_state_string(defender)
    # the reveal makes both cards public: after it the defender knows
    last = state.legal_actions()[0]
    after, twin = state.clone(), _replay(game, history, {card_at: other_card})
    after.apply_action(last)
    twin.apply_action(last)
    assert after.information_state_string(defender) != twin.information_state_string(defender)
    # resampling keeps the defender's information state, and may change the hidden card
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    seen = set()
    for _ in range(30):
        world = state.resample_from_infostate(defender, sampler)
        assert world.information_state_string(defender) == state.information_state_string(defender)
        assert world.legal_actions() == state.legal_actions()
        seen.add(world.history()[card_at])
    assert len(seen) > 1


def test_perfect_information_state_is_the_history():
    game = pyspiel.load_game("ludoteca_tohm", {"players": 3})
    state = _random_game(game, 1, lambda s: len(s.history()) >= 30)
    text = " ".join(map(str, state.history()))
    assert all(state.information_state_string(p) == text for p in range(3))


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_serialize_pickle_and_positions(name):
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": 3})
    for cut in (0, 1, 7, 40, 200):
        state = _random_game(game, cut, lambda s, cut=cut: len(s.history()) >= cut)
        text = pyspiel.serialize_game_and_state(game, state)
        game2, state2 = pyspiel.deserialize_game_and_state(text)
        for other in (state2, pickle.loads(pickle.dumps(state)), game.deserialize_state(state.serialize())):
            assert other.history() == state.history()
            assert other.ludoteca_state.to_json() == state.ludoteca_state.to_json()
            assert str(other) == str(state)
            assert other.legal_actions() == state.legal_actions()
            for p in range(3):
                assert other.information_state_string(p) == state.information_state_string(p)
        assert str(game2) == str(game)
        # a state from a canonical position JSON plays on and serializes too
        if not state.is_terminal():
            position = state.ludoteca_state.to_json()
            fresh = game.new_initial_state(position)
            assert fresh.ludoteca_state.to_json() == position
            assert fresh.legal_actions() == state.legal_actions()
            fresh2 = game.new_initial_state(json.dumps(position))
            back = pickle.loads(pickle.dumps(fresh2))
            assert back.ludoteca_state.to_json() == position


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_observations_and_action_strings(name):
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": 2})
    encoder = game.encoder
    obs = make_observation(game)
    assert game.observation_tensor_size() == encoder.size
    rng = random.Random(5)
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal() and steps < 300:
        player = state.current_player()
        legal = state.legal_actions()
        strings = [state.action_to_string(player, a) for a in legal]
        assert len(set(strings)) == len(strings)
        if not state.is_chance_node():
            a = legal[rng.randrange(len(legal))]
            assert state.string_to_action(state.action_to_string(player, a)) == a
            for p in range(2):
                tensor = np.asarray(state.observation_tensor(p))
                assert tensor.shape == (encoder.size,)
                assert np.all(tensor >= encoder.low) and np.all(tensor <= encoder.high)
                obs.set_from(state, p)
                assert np.array_equal(obs.tensor, tensor)
                assert json.loads(state.observation_string(p)) == state.position(p)
            mask = state.legal_actions_mask() if game.num_distinct_actions() <= 100_000 else None  # (EXAGON: 1.5 M)
            if mask is not None:
                assert [i for i, m in enumerate(mask) if m] == legal
        else:
            a = _chance(state, rng)
        state.apply_action(a)
        steps += 1


def test_encoder_segments_cover_the_vector():
    for name in ludoteca.GAMES:
        enc = pyspiel.load_game(f"ludoteca_{name}", {"players": 3}).encoder
        segments = enc.segments()
        assert segments[0][1] == 0
        for (_, off, length), (_, nxt, _) in itertools.pairwise(segments):
            assert off + length == nxt
        assert segments[-1][1] + segments[-1][2] == enc.size == enc.low.size == enc.high.size


def test_tri_teleport_move_parameter():
    # RULES.md TRI option teleport: "claim" (default) or "move" (the action carries "from")
    claim = pyspiel.load_game("ludoteca_tri", {"players": 2})
    assert claim.ludoteca_game.options["teleport"] == "claim"
    game = pyspiel.load_game("ludoteca_tri(players=2,size=3,teleport=move,turn_limit=60)")
    native = game.ludoteca_game
    assert native.options["teleport"] == "move"
    # size 3: T = 36 triangles, S = 9 squares; one teleport per (side, square, target)
    assert game.num_distinct_actions() == native.num_distinct_actions() == 16 + 4 * 36 + 4 * 9 * 36 + 4 + 1
    assert claim.num_distinct_actions() == ludoteca.load_game("tri", players=2).num_distinct_actions()
    assert pyspiel.load_game(str(game)).ludoteca_game.options == native.options
    with pytest.raises(Exception, match="teleport"):
        pyspiel.load_game("ludoteca_tri", {"players": 2, "teleport": "fly"})
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    # a teleport's action string names the unit that leaves, and reads back
    pos = {"game": "tri", "players": 2, "size": 3, "owner": {**{f"1,1,{d}": 0 for d in "NESW"}, "0,0,N": 1},
           "hands": [[0, 2, 3, 4], [0, 2, 3, 4]], "alive": [True, True], "teleports_used": [], "to_move": 0,
           "round": 2, "turn": 4, "phase": "act", "battle": None}
    state = game.new_initial_state(pos)
    tps = [a for a in state.legal_actions() if state.action_to_string(0, a).startswith("tp ")]
    assert len(tps) == 4 * (36 - 5)
    a = state.string_to_action("tp 1,1,W>2,2,S")
    assert state.ludoteca_state.action_to_json(a) == {"teleport": {"square": [1, 1], "to": [2, 2, "S"], "from": "W"}}
    state.apply_action(a)
    assert "1,1,W" not in state.position()["owner"] and state.position()["owner"]["2,2,S"] == 0
    # OpenSpiel's MCTS plays it to the end
    rs = np.random.RandomState(2)
    bot = mcts.MCTSBot(game, uct_c=1.4, max_simulations=8,
                       evaluator=mcts.RandomRolloutEvaluator(1, rs), solve=False, random_state=rs)
    rng = random.Random(2)
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(_chance(state, rng) if state.is_chance_node() else bot.step(state))
    assert sum(state.returns()) == pytest.approx(1.0)


# --- the contract: one source of truth ------------------------------------------

@pytest.mark.parametrize(("name", "players"), CASES)
def test_information_type_is_the_game_declaration(name, players):
    """IMPERFECT_INFORMATION exactly when the game declares hidden information, for every game and
    player count; the information-state strings then hide the actions a seat did not see."""
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": players})
    hidden = game.ludoteca_game.has_hidden_information()
    info = pyspiel.GameType.Information
    assert game.get_type().information == (info.IMPERFECT_INFORMATION if hidden else info.PERFECT_INFORMATION)
    assert los.GAME_TYPES[name].information == (
        info.IMPERFECT_INFORMATION if type(game.ludoteca_game).hidden_information else info.PERFECT_INFORMATION)
    state = _random_game(game, players, lambda s: len(s.history()) >= 60)
    if not hidden:  # every seat reads the same history
        assert len({state.information_state_string(p) for p in range(players)}) == 1


def test_information_type_follows_a_game_with_options_that_hide(monkeypatch):
    """A game whose secrecy depends on its options (``has_hidden_information``) gets the type of
    its options, not of its name."""
    native = ludoteca.game_class("tohm")
    monkeypatch.setattr(native, "has_hidden_information", lambda self: self.options["turn_limit"] == 77)
    info = pyspiel.GameType.Information
    assert los.load("tohm", players=2, turn_limit=77).get_type().information == info.IMPERFECT_INFORMATION
    assert los.load("tohm", players=2, turn_limit=78).get_type().information == info.PERFECT_INFORMATION


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_parameters_are_derived_from_the_declared_options(name):
    """Every declared option is a parameter (but the unoffered ones), with its ludoteca default,
    or a sentinel of its type when the default depends on other options or is a list or null;
    a clock defaults to 0.0 (no clock)."""
    cls = ludoteca.game_class(name)
    spec = los.parameters(cls)
    assert spec["players"] == cls.min_players
    game = los.load(name)
    for option in cls.OPTIONS:
        if option.name not in spec:
            assert option.name == "tournament"  # EXAGON's mode without a bound on its length
            continue
        value = spec[option.name]
        if option.name == cls.clock_option:
            assert value == 0.0 and game.ludoteca_game.options[option.name] is None
        elif callable(option.default) or not isinstance(option.default, (bool, int, float, str)):
            assert value in (0, 0.0, "")
        else:
            assert value == option.default and game.ludoteca_game.options[option.name] == option.default
    assert game.get_parameters() == spec


def _at(game, seed: int, chance: bool):
    """A state of a seeded random game where the next node is a chance node (``chance``) or a decision."""
    return _random_game(game, seed, lambda s: len(s.history()) > 3 and s.is_chance_node() == chance)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_python_answers_and_openspiels_cpp_hooks_agree(name):
    """OpenSpiel's C++ State (its algorithms, ``random_sim_test``) asks the Python game by hook names
    (``current_player``, ``is_terminal``, ``chance_outcomes``, ``_legal_actions``, ``_apply_action``);
    Python callers get the adapter's own answers. Both describe the same state, at a chance node and
    at a decision, and after OpenSpiel's C++ clone and apply."""
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": ludoteca.game_class(name).min_players})
    cpp = pyspiel.State  # the C++ methods, called on our state: they go through the hooks
    for chance in (True, False):
        state = _at(game, 3, chance)
        if state.is_terminal() or state.is_chance_node() != chance:
            continue  # a game without chance nodes after its start
        assert cpp.current_player(state) == state.current_player()
        assert cpp.is_terminal(state) is state.is_terminal() is False
        assert cpp.is_chance_node(state) is state.is_chance_node() is chance
        assert cpp.legal_actions(state) == [a for a, _ in state.chance_outcomes()] if chance else state.legal_actions()
        if chance:
            assert cpp.chance_outcomes(state) == state.chance_outcomes()
        twin = cpp.clone(state)  # C++ Clone: a new state, the position deep-copied into it
        action = state.legal_actions()[0] if not chance else state.chance_outcomes()[0][0]
        cpp.apply_action(twin, action)  # C++ ApplyAction -> the _apply_action hook
        assert twin.history() == [*state.history(), action]
        assert state.is_chance_node() is chance and len(state.history()) == len(twin.history()) - 1
        mine = state.clone()
        mine.apply_action(action)
        assert mine.ludoteca_state.to_json() == twin.ludoteca_state.to_json()
        assert mine.legal_actions() == twin.legal_actions() and mine.is_chance_node() == twin.is_chance_node()


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_a_copy_answers_for_itself(name):
    """A clone, an unpickled state and a deserialised one each answer for their own position: playing
    one changes none of the others (nor the state they were copied from)."""
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": ludoteca.game_class(name).min_players})
    state = _at(game, 5, False)
    before = (state.history(), state.legal_actions(), state.current_player(), state.ludoteca_state.to_json())
    copies = [state.clone(), pickle.loads(pickle.dumps(state)), game.deserialize_state(state.serialize())]
    rng = random.Random(2)
    for other in copies:
        other.apply_action(other.legal_actions()[0])
        while not other.is_terminal() and not other.is_chance_node():
            other.apply_action(rng.choice(other.legal_actions()))
        assert other.history()[:len(before[0])] == before[0] and len(other.history()) > len(before[0])
    assert (state.history(), state.legal_actions(), state.current_player(),
            state.ludoteca_state.to_json()) == before
    assert state.move_number() == len(before[0])
    history = state.history()
    history.append(0)  # the caller's list, not the state's
    assert state.history() == before[0]


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_numpy_actions_are_played_and_recorded_as_ints(name):
    """RL code hands actions over as numpy integers: played like the int, the history holds ints."""
    game = pyspiel.load_game(f"ludoteca_{name}", {"players": ludoteca.game_class(name).min_players})
    state, twin = _at(game, 7, False), _at(game, 7, False)
    action = state.legal_actions()[-1]
    state.apply_action(np.int64(action))
    twin.apply_action(action)
    assert state.history() == twin.history() and all(type(a) is int for a in state.history())
    assert state.ludoteca_state.to_json() == twin.ludoteca_state.to_json()
    with pytest.raises(ValueError):
        twin.apply_action(game.num_distinct_actions() + 5)  # not legal here: refused, nothing played
    assert twin.history() == state.history()


def test_a_c_function_hook_is_wrapped_so_pybind11_calls_it():
    """pybind11 takes a C function found under a hook's name for its own C++ method (and would call
    the pure virtual): an engine built without Cython's ``binding`` gives such methods, so they are
    wrapped; a Cython or Python bound method is an override as it is."""
    items = [3, 1]
    wrapped = los._hook(items.copy)  # a builtin_function_or_method
    assert wrapped is not items.copy and wrapped() == [3, 1]

    class Engine:
        def is_terminal(self) -> bool:
            return True

    engine = Engine()
    assert los._hook(engine.is_terminal) == engine.is_terminal
