"""The AI players: legal, reproducible, no peeking, budgets, the registry, sanity strength."""

from __future__ import annotations

import random
import time

import pytest

import ludoteca
from ludoteca.agents import make_agent
from ludoteca.agents.base import agent_names
from ludoteca.agents.heuristics import HeuristicAgent
from ludoteca.agents.mcts import FALLBACKS, MCTSAgent
from ludoteca.core.chance import sample_chance
from tests.conftest import hint, options_for


def small(name: str) -> str:
    """A small MCTS budget for ``name`` (its ``MCTS_SMALL`` hint): these tests check behaviour, not strength."""
    return str(hint(name, "MCTS_SMALL", "mcts:iterations=12:cap=8"))


def play(name: str, specs: list[str], seed: int, players: int | None = None,
         max_actions: int = 5000) -> list[object]:
    """Play a whole game with the given agents (one spec per seat); return every action."""
    players = players or len(specs)
    game = ludoteca.load_game(name, **options_for(name, players))
    agents = [make_agent(spec, seed=seed + k, game=name) for k, spec in enumerate(specs)]
    rng = random.Random(seed)
    state = game.new_initial_state()
    actions: list[object] = []
    for _ in range(max_actions):
        if state.is_terminal():
            break
        if state.is_chance_node():
            action = sample_chance(state, rng)
        else:
            legal = state.legal_actions()
            action = agents[state.current_player()].step(state)
            assert action in legal, f"{specs[state.current_player()]} played an illegal action"
        state.apply_action(action)
        actions.append(action)
    assert state.is_terminal()
    return actions


# --- legal actions over whole games --------------------------------------------------------

@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_heuristic_and_mcts_play_whole_games_legally(name: str) -> None:
    play(name, ["heuristic", small(name)], seed=1)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_agents_play_multiplayer_games_legally(name: str) -> None:
    cls = ludoteca.game_class(name)
    players = min(cls.max_players, 4 if cls.max_players > 5 else 3)  # exactly: 4; TRI, TOHM, EXAGON: 3
    specs = ["heuristic", small(name), "random", "heuristic"][:players]
    play(name, specs, seed=2)


def test_heuristic_works_without_being_told_the_game() -> None:
    game = ludoteca.load_game("tohm", players=2)
    agent = make_agent("heuristic", seed=0)
    rng = random.Random(0)
    state = game.new_initial_state()
    for _ in range(200):
        if state.is_terminal():
            break
        action = sample_chance(state, rng) if state.is_chance_node() else agent.step(state)
        state.apply_action(action)


# --- reproducibility -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_same_seed_same_game(name: str) -> None:
    specs = ["heuristic", small(name)]
    assert play(name, specs, seed=5) == play(name, specs, seed=5)


# --- no peeking (TRI's secret rolls and cards) ---------------------------------------------

def tri_battle(step: str, attacker_roll: int | None, defender_roll: int | None,
               attacker_card: int | None) -> ludoteca.State:
    game = ludoteca.load_game("tri", players=2)
    owner = {"0,0,N": 0, "0,0,E": 0, "0,0,W": 0, "0,0,S": 1, "1,0,N": 1, "1,0,E": 1, "2,2,N": 0}
    data = {
        "game": "tri", "players": 2, "size": 4, "owner": owner,
        "hands": [[0, 2, 3, 4], [0, 2, 3, 4, 4]], "alive": [True, True], "teleports_used": [],
        "to_move": 0, "round": 4, "turn": 9, "phase": "battle",
        "battle": {"attacker": 0, "defender": 1, "target": "0,0,S", "dice": 2, "step": step,
                   "attacker_roll": attacker_roll, "defender_roll": defender_roll,
                   "attacker_card": attacker_card, "defender_card": None},
    }
    return game.state_from_json(data)


@pytest.mark.parametrize("spec", ["heuristic", "mcts:iterations=150"])
def test_tri_attacker_does_not_see_the_defender_roll(spec: str) -> None:
    decisions = set()
    for droll in range(1, 7):
        state = tri_battle("attacker_card", 3, droll, None)
        assert state.current_player() == 0
        decisions.add(make_agent(spec, seed=11, game="tri").step(state))
    assert len(decisions) == 1


@pytest.mark.parametrize("spec", ["heuristic", "mcts:iterations=150"])
def test_tri_defender_does_not_see_the_attacker_roll_or_card(spec: str) -> None:
    decisions = set()
    for aroll in (1, 4, 6):
        for acard in (0, 2, 4):
            state = tri_battle("defender_card", aroll, 2, acard)
            assert state.current_player() == 1
            decisions.add(make_agent(spec, seed=11, game="tri").step(state))
    assert len(decisions) == 1


def test_tri_mcts_card_choice_depends_on_what_it_does_see() -> None:
    """Sanity for the test above: the decision is not constant whatever the agent's own roll."""
    choices = {make_agent("heuristic", seed=0, game="tri").step(tri_battle("attacker_card", r, 3, None))
               for r in range(1, 7)}
    assert len(choices) > 1


# --- budgets --------------------------------------------------------------------------------

def some_position(name: str, seed: int = 0) -> ludoteca.State:
    game = ludoteca.load_game(name, **options_for(name, 2))
    rng = random.Random(seed)
    state = game.new_initial_state()
    moves = 0
    while True:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        legal = state.legal_actions()
        if moves >= 6 and len(legal) > 2:
            return state
        state.apply_action(legal[rng.randrange(len(legal))])
        moves += 1


@pytest.mark.parametrize("name", ["exactly", "tohm", "tri"])
def test_mcts_iteration_budget(name: str) -> None:
    agent = make_agent("mcts:iterations=37", seed=0, game=name)
    assert isinstance(agent, MCTSAgent)
    agent.step(some_position(name))
    assert agent.last_iterations == 37


def test_mcts_time_budget() -> None:
    agent = make_agent("mcts:seconds=0.3", seed=0, game="tohm")
    assert isinstance(agent, MCTSAgent)
    state = some_position("tohm")
    t0 = time.perf_counter()
    agent.step(state)
    elapsed = time.perf_counter() - t0
    assert agent.last_iterations > 1
    # stops after the simulation that crosses 0.3 s (a busy machine may stretch that simulation and
    # the set-up: the upper bounds only tell a stop from a search that runs on)
    assert 0.3 <= agent.last_seconds <= 3.0
    assert elapsed <= 5.0


def test_mcts_both_budgets_whichever_comes_first() -> None:
    agent = make_agent("mcts:iterations=5:seconds=30", seed=0, game="tohm")
    assert isinstance(agent, MCTSAgent)
    agent.step(some_position("tohm"))
    assert agent.last_iterations == 5 and agent.last_seconds < 30


@pytest.mark.parametrize("name", ["exactly", "tohm", "tri"])
def test_mcts_default_budget_is_under_a_second(name: str) -> None:
    agent = make_agent("mcts", seed=0, game=name)
    t0 = time.process_time()  # CPU time: robust to a busy machine
    agent.step(some_position(name))
    assert time.process_time() - t0 < 1.0


# --- the registry ---------------------------------------------------------------------------

def test_agent_names() -> None:
    assert {"random", "heuristic", "mcts"} <= set(agent_names())


def test_make_agent_by_name_with_parameters() -> None:
    agent = make_agent("mcts:iterations=50:c=1.2:cap=10:rollout=heuristic", seed=3, game="tohm")
    assert isinstance(agent, MCTSAgent)
    assert (agent.iterations, agent.c, agent.cap, agent.rollout) == (50, 1.2, 10, "heuristic")
    assert agent.spec == "mcts:iterations=50:c=1.2:cap=10:rollout=heuristic"
    assert isinstance(make_agent("heuristic", game="tri"), HeuristicAgent)


@pytest.mark.parametrize(("spec", "word"), [
    ("mcts:speed=3", "speed"),
    ("heuristic:depth=2", "depth"),
    ("random:x=1", "x"),
    ("mcts:iterations=0", "iterations"),
    ("mcts:seconds=-1", "seconds"),
    ("mcts:rollout=smart", "rollout"),
    ("mcts:c=-2", "c"),
    ("mcts:cap=x", "cap"),
    ("alphazero", "alphazero"),
    ("mcts:iterations", "iterations"),
])
def test_make_agent_errors_name_the_problem(spec: str, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        make_agent(spec, seed=0, game="tohm")


def test_heuristic_for_an_unknown_game() -> None:
    with pytest.raises(ValueError, match="chess"):
        make_agent("heuristic", game="chess")


# --- sanity strength (positions where one move wins at once) -------------------------------

def tohm_winning_position() -> ludoteca.State:
    game = ludoteca.load_game("tohm", players=2)
    return game.state_from_json({
        "game": "tohm", "players": 2, "rows": 3, "cols": 3,
        "layout": [[3, 4, 5], [5, 6, 3], [4, 3, 6]],
        "board": [[0, 0, None], [None, 1, 1], [None, None, None]],
        "supply": [3, 3], "trophies": [5, 4], "trophies_left": 1,
        "to_move": 0, "phase": "act", "roll": 5, "turn": 20,
    })


def exactly_winning_position() -> ludoteca.State:
    game = ludoteca.load_game("exactly", players=2)
    return game.state_from_json({
        "game": "exactly", "players": 2,
        "bank": {"5": 7, "10": 10, "20": 8, "50": 9},
        "piles": [{"5": 2, "10": 0, "20": 1, "50": 1}, {"5": 1, "10": 0, "20": 1, "50": 0}],
        "euros": [2, 2], "to_move": 0, "phase": "move", "roll": "?", "turn": 30,
    })


@pytest.mark.parametrize("spec", ["mcts:iterations=200", "heuristic"])
def test_tohm_completes_the_winning_tris(spec: str) -> None:
    state = tohm_winning_position()
    win = state.action_from_json({"place": [0, 2]})
    assert len(state.legal_actions()) > 1
    assert make_agent(spec, seed=4, game="tohm").step(state) == win


@pytest.mark.parametrize("spec", ["mcts:iterations=200", "heuristic"])
def test_exactly_reaches_one_euro_exactly(spec: str) -> None:
    state = exactly_winning_position()  # seat 0 holds 80 cents and rolled "?": a 20 in wins
    assert state.pile_total(0) == 80
    after = state.clone()
    after.apply_action(make_agent(spec, seed=4, game="exactly").step(state))
    assert after.is_terminal() and after.returns() == [1.0, 0.0]


@pytest.mark.parametrize("spec", ["mcts:iterations=200", "heuristic"])
def test_exactly_never_hands_the_opponent_a_euro(spec: str) -> None:
    """Seat 1 holds 80 cents and seat 0 rolled 20: a 20 into seat 1's pile gives them a euro."""
    game = ludoteca.load_game("exactly", players=2)
    state = game.state_from_json({
        "game": "exactly", "players": 2,
        "bank": {"5": 9, "10": 10, "20": 6, "50": 10},
        "piles": [{"5": 1, "10": 0, "20": 0, "50": 0}, {"5": 0, "10": 0, "20": 4, "50": 0}],
        "euros": [0, 0], "to_move": 0, "phase": "move", "roll": 20, "turn": 4,
    })
    after = state.clone()
    after.apply_action(make_agent(spec, seed=1, game="exactly").step(state))
    assert after.euros == [0, 0]


# --- EXAGON turns ------------------------------------------------------------------------------

def exagon_midgame(seed: int = 0) -> ludoteca.State:
    """A position in the middle of a two-player game, seat ``to_move`` starting a turn."""
    game = ludoteca.load_game("exagon", players=2, clock=None)
    rng = random.Random(seed)
    state = game.new_initial_state()
    while state.is_chance_node() or state.to_json()["phase"] == "opening" or state.to_json()["turn"] < 6:
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    return state


@pytest.mark.parametrize("spec", ["heuristic", "mcts:iterations=60"])
def test_exagon_gives_a_tile_to_a_player_about_to_finish(spec: str) -> None:
    """Bonus in hand, the opponent down to one tile: give them a tile rather than let their
    last tile win next turn."""
    state = exagon_midgame()
    data = state.to_json()
    me = data["to_move"]
    other = 1 - me
    data["hands"][me] += data["hands"][other][1:]
    data["hands"][other] = data["hands"][other][:1]
    data["placed_this_turn"], data["bonus"] = 1, 1
    pos = state.game.state_from_json(data)
    legal = pos.legal_actions()
    gives = [a for a in legal if "give" in pos.action_to_json(a)]
    assert gives
    action = make_agent(spec, seed=0, game="exagon").step(pos)
    after = pos.clone()
    after.apply_action(action)
    assert "give" in pos.action_to_json(action) or (after.is_terminal() and after.returns()[me] == 1.0)


def test_exagon_heuristic_plays_the_turn_out() -> None:
    """In heuristic self-play every immediate win (perfect fit, last tile) is taken, and turns
    go on for several placements."""
    from ludoteca.games.exagon import heuristic as h

    game = ludoteca.load_game("exagon", players=2, clock=None)
    agents = [make_agent("heuristic", seed=k, game="exagon") for k in range(2)]
    rng = random.Random(3)
    state = game.new_initial_state()
    longest = 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        p = state.current_player()
        action = agents[p].step(state)
        if h.immediate_win(state, p):
            after = state.clone()
            after.apply_action(action)
            assert after.is_terminal() and after.returns()[p] == 1.0
        state.apply_action(action)
        longest = max(longest, state.to_json()["placed_this_turn"])
    assert longest >= 2


# --- the contract: tuning defaults, hidden information, no game names ----------

def test_the_tuned_defaults_of_docs_strength_are_declared_on_the_games() -> None:
    # docs/strength.md's tuned defaults (declared on each game class)
    declared = {name: {**FALLBACKS, **ludoteca.game_class(name).agent_defaults["mcts"]}
                for name in ("exactly", "tohm", "tri", "exagon")}
    assert declared == {
        "exactly": {"iterations": 1000, "cap": 10, "c": 0.4, "rollout": "random", "prune": 0},
        "tohm": {"iterations": 3000, "cap": 60, "c": 0.4, "rollout": "random", "prune": 0},
        "tri": {"iterations": 400, "cap": 10, "c": 0.7, "rollout": "heuristic", "prune": 8},
        "exagon": {"iterations": 300, "cap": 10, "c": 0.3, "rollout": "heuristic", "prune": 8},
    }


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_mcts_defaults_come_from_the_game(name: str) -> None:
    game = ludoteca.load_game(name, **options_for(name, 2))
    tuned = {**FALLBACKS, **type(game).agent_defaults.get("mcts", {})}  # the game's declaration over the agent's own
    assert MCTSAgent().settings(game) == {**tuned, "seconds": None}
    # an explicit parameter wins; a time budget alone lifts the iteration budget
    mine = MCTSAgent(cap=3, c=1, rollout="random", prune=0, seconds=0.5).settings(game)
    assert mine == {**tuned, "cap": 3, "c": 1.0, "rollout": "random", "prune": 0,
                    "seconds": 0.5, "iterations": None}


def test_mcts_reads_the_defaults_a_game_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    """No table keyed by game names: change the class's declaration and the agent follows."""
    game = ludoteca.load_game("tohm", players=2)
    monkeypatch.setattr(type(game), "agent_defaults", {"mcts": {"iterations": 7, "cap": 2}})
    agent = MCTSAgent(seed=0)
    assert agent.settings(game) == {"iterations": 7, "cap": 2, "c": 0.7, "rollout": "random",
                                    "prune": 0, "seconds": None}
    state = some_position("tohm")
    agent.step(state)
    assert agent.last_iterations == 7
    monkeypatch.setattr(type(game), "agent_defaults", {"mcts": {"cap": -1}})
    with pytest.raises(ValueError, match="cap must be a whole number >= 0"):
        agent.settings(game)
    monkeypatch.setattr(type(game), "agent_defaults", {"mcts": {"depth": 3}})
    with pytest.raises(ValueError, match="no parameter 'depth'"):
        agent.settings(game)


def _decision_with_choices(name: str, players: int, seed: int, want_worlds: bool) -> ludoteca.State:
    """A position with a choice to make (for a hidden-information game, one where the mover
    cannot see everything when ``want_worlds``)."""
    game = ludoteca.load_game(name, **options_for(name, players))
    rng = random.Random(seed)
    state = game.new_initial_state()
    fallback = None
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        if len(state.legal_actions()) > 1:
            if not want_worlds or state.worlds(state.current_player()) is not None:
                return state
            fallback = fallback or state.clone()
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    assert fallback is not None
    return fallback


HIDDEN_CASES = [(g, n) for g in ludoteca.GAMES
                for n in range(ludoteca.game_class(g).min_players, ludoteca.game_class(g).max_players + 1)]


@pytest.mark.parametrize(("name", "players"), HIDDEN_CASES)
def test_mcts_asks_for_worlds_exactly_when_the_game_hides_something(
        name: str, players: int, monkeypatch: pytest.MonkeyPatch) -> None:
    state = _decision_with_choices(name, players, seed=players, want_worlds=True)
    cls = type(state)
    calls = {"worlds": 0, "label": 0}
    worlds, label = cls.worlds, cls.action_label

    def counting_worlds(self: ludoteca.State, seat: int) -> object:
        calls["worlds"] += 1
        return worlds(self, seat)

    def counting_label(self: ludoteca.State, action: int, seat: int) -> object:
        calls["label"] += 1
        return label(self, action, seat)

    monkeypatch.setattr(cls, "worlds", counting_worlds)
    monkeypatch.setattr(cls, "action_label", counting_label)
    make_agent("mcts:iterations=20:cap=4", seed=1, game=name).step(state)
    hidden = state.game.has_hidden_information()
    assert (calls["worlds"] > 0) == hidden
    if not hidden:
        assert calls["label"] == 0
    elif state.worlds(state.current_player()) is not None:
        assert calls["label"] > 0  # one tree per seat, edges as each seat observes them


def test_heuristics_are_found_in_the_game_package() -> None:
    from ludoteca.agents import heuristics

    for name in ludoteca.GAMES:
        game = ludoteca.load_game(name, **options_for(name, 2))
        mod = heuristics.module(game)
        assert mod.__name__ == f"{type(game).__module__}.heuristic"
        assert heuristics.module(name) is mod and heuristics.value_function(game) is mod.value


def test_a_game_without_a_heuristic_module() -> None:
    """A game class whose package has no ``heuristic`` module: no heuristic player (clear error),
    MCTS still searches with even leaf values and random rollouts."""
    from ludoteca.agents import heuristics
    from ludoteca.games.tohm import TohmGame

    class Bare(TohmGame):  # defined in tests/: its package has no heuristic
        agent_defaults = {"mcts": {"iterations": 10, "cap": 3, "rollout": "heuristic", "prune": 4}}

    game = Bare(players=2)
    assert heuristics.find_module(game) is None
    with pytest.raises(ValueError, match="has no heuristic"):
        heuristics.module(game)
    assert heuristics.value_function(game)(game.new_initial_state()) == [0.5, 0.5]
    state = game.new_initial_state()
    rng = random.Random(0)
    while state.is_chance_node() or len(state.legal_actions()) < 2:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else state.legal_actions()[0])
    assert state.is_legal(MCTSAgent(seed=0).step(state))


def _source_files(*packages: str) -> list:
    import pathlib

    root = pathlib.Path(ludoteca.__file__).parent
    return [p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))]


def test_agents_and_adapters_use_only_the_public_contract() -> None:
    """No private hooks of the engines (``_apply``, ``_legal``, ``_legal_actions``, ``_copy``)
    outside core/ and games/, and no game named in agents/ or interop/ (string constants)."""
    import ast
    import re

    private = re.compile(r"\.(_apply|_legal|_legal_actions|_copy)\b")
    names = {g.lower() for g in ludoteca.GAMES}
    for path in _source_files("agents", "interop"):
        text = path.read_text(encoding="utf-8")
        assert not private.search(text), f"{path.name} calls a private engine hook"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                words = {node.value.lower(), node.value.lower().removeprefix("ludoteca_").removesuffix("_v0")}
                assert not words & names, f"{path.name} names the game {node.value!r}"
