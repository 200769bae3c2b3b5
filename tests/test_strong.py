"""The ``strong`` agent and the compiled MCTS it runs (``core/_mcts.pxi`` through TOHM's compiled engine).

The search returns legal actions, the same ones for the same seed, finds a move that wins the game on
the spot, beats random play clearly; a game without a compiled search gets one warning and the Python
``mcts``; the lab plays ``--agents strong`` through the real command line and says who played.
TRI (hidden information) is played through its compiled module's search, which it declares (its card
choices by the information-set MCTS in C); a hidden-information module that does not declare it plays
those positions with the Python ``mcts``.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ludoteca
from ludoteca.agents import strong
from ludoteca.agents.base import make_agent
from ludoteca.agents.mcts import MCTSAgent
from ludoteca.core.chance import random_action
from ludoteca.core.game import Game
from ludoteca.games.exagon import compiled as exagon_compiled
from ludoteca.games.tohm import TohmGame, TohmState, compiled, heuristic
from ludoteca.games.tri import compiled as tri_compiled

needs_compiled = pytest.mark.skipif(not compiled.available(),
                                    reason="compiled TOHM engine not built (pip install -e .)")
pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "120", "LANGUAGE": "en"}


def _tohm(players: int = 2, **options: Any) -> TohmGame:
    game = ludoteca.load_game("tohm", players=players, **options)
    assert isinstance(game, TohmGame)
    return game


def _decisions(game: TohmGame, games: int, seed: int) -> list[TohmState]:
    """Every position of seeded random games where a player must choose among several actions."""
    rng = random.Random(seed)
    out: list[TohmState] = []
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if not s.is_chance_node() and len(s.legal_actions()) > 1:
                out.append(s.clone())
            s.apply_action(random_action(s, rng))
    return out


def _play(game: TohmGame, specs: list[str], seed: int) -> list[float]:
    agents = [make_agent(spec, seed=seed * 10 + k, game="tohm") for k, spec in enumerate(specs)]
    rng = random.Random(seed)
    s = game.new_initial_state()
    while not s.is_terminal():
        s.apply_action(random_action(s, rng) if s.is_chance_node() else agents[s.current_player()].step(s))
    return s.returns()


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 5])
def test_the_search_plays_legal_actions_and_leaves_the_position_alone(players: int) -> None:
    game = _tohm(players)
    for s in _decisions(game, 3, seed=players)[::3]:
        before = s.to_json()
        action = compiled.search(s, 200, 0.4, 20, seed=len(before["board"]))
        assert action in s.legal_actions()
        assert s.to_json() == before


@needs_compiled
def test_the_search_works_on_a_large_board() -> None:
    layout = [[3 + (r * 10 + c) % 4 for c in range(10)] for r in range(10)]
    game = _tohm(2, layout=layout)
    for s in _decisions(game, 1, seed=4)[::25]:
        assert compiled.search(s, 300, 0.4, 30, seed=1) in s.legal_actions()


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_compiled_evaluation_is_the_heuristics(players: int) -> None:
    """A rollout cut short is scored by ``_value``: the heuristic's ``value`` in C, at every phase."""
    game = _tohm(players)
    rng = random.Random(players)
    checked = 0
    for _ in range(15):
        s = game.new_initial_state()
        while True:
            c = compiled.CompiledState.from_state(s)._c.value()
            assert c == pytest.approx(heuristic.value(s), abs=1e-9)
            checked += 1
            if s.is_terminal():
                break
            s.apply_action(random_action(s, rng))
    assert checked > 1000


@needs_compiled
def test_the_same_seed_gives_the_same_search_and_the_same_games() -> None:
    game = _tohm(2)
    positions = _decisions(game, 2, seed=11)
    first = [compiled.search(s, 300, 0.4, 10, seed=5) for s in positions]
    assert first == [compiled.search(s, 300, 0.4, 10, seed=5) for s in positions]
    # an agent with a seed plays the same game twice
    assert _play(game, ["strong:iterations=200", "strong:iterations=200"], 3) == \
        _play(game, ["strong:iterations=200", "strong:iterations=200"], 3)
    a, b = make_agent("strong:iterations=200", seed=8, game="tohm"), make_agent("strong:iterations=200", seed=8)
    assert [a.step(s) for s in positions] == [b.step(s) for s in positions]


def _winning_position(game: TohmGame) -> TohmState:
    """Seat 0 leads 5-4 with the last trophy left and rolled a 3: placing on the free 3 cell of the top row
    (two tokens of seat 0 beside it) makes a tris, takes the last trophy and wins; the other free 3
    cells do not (RULES.md: the game ends when every trophy is given, the most trophies win)."""
    # the 2-player board:  3 4 5 / 5 6 3 / 4 3 6
    return game.state_from_json({
        "game": "tohm", "players": 2, "rows": 3, "cols": 3, "layout": [list(r) for r in game.layout],
        "board": [[None, 0, 0], [1, 1, None], [None, None, 1]],
        "supply": [3, 2], "trophies": [5, 4], "trophies_left": 1,
        "to_move": 0, "phase": "act", "roll": 3, "turn": 40,
    })


@needs_compiled
def test_the_search_finds_the_move_that_wins_the_game() -> None:
    game = _tohm(2)
    s = _winning_position(game)
    assert s.legal_actions() == [7, 12, 14]  # cells 0, 5 and 7 carry a 3
    win = s.clone()
    win.apply_action(7)
    assert win.is_terminal() and win.returns() == [1.0, 0.0]
    for seed in range(5):
        assert compiled.search(s, 100, 0.4, 60, seed=seed) == 7
        assert make_agent("strong", seed=seed, game="tohm").step(s) == 7


@needs_compiled
def test_strong_beats_random_clearly() -> None:
    game = _tohm(2)
    score = 0.0
    games = 12
    for k in range(games):
        seat = k % 2
        specs = ["strong:iterations=200", "random"] if seat == 0 else ["random", "strong:iterations=200"]
        score += _play(game, specs, 100 + k)[seat]
    assert score / games >= 0.9


def test_parameters_come_from_the_game_and_the_spec() -> None:
    agent = make_agent("strong:iterations=123:c=0.9", seed=1, game="tohm")
    assert isinstance(agent, strong.StrongAgent)
    assert agent.spec == "strong:iterations=123:c=0.9"
    game = _tohm(2)
    assert agent.settings(game) == {"iterations": 123, "c": 0.9, "cap": game.agent_defaults["strong"]["cap"]}
    assert make_agent("strong").settings(game) == dict(game.agent_defaults["strong"])


@pytest.mark.parametrize(("spec", "message"), [
    ("strong:depth=3", "has no parameter 'depth'; its parameters are: iterations, c, cap"),
    ("strong:iterations=0", "iterations must be a whole number from 1 to 1000000, not 0"),
    ("strong:iterations=99999999", "iterations must be a whole number from 1 to 1000000"),
    ("strong:cap=-1", "cap must be a whole number from 0 to 100000, not -1"),
    ("strong:c=fast", "c must be a number from 0 to 100.0, not 'fast'"),
])
def test_bad_parameters_are_refused_clearly(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        make_agent(spec, seed=1, game="tohm")


class PlainTohm(TohmGame):
    """TOHM as a game without a compiled engine would be (as exactly, TRI and EXAGON are until theirs come)."""

    compiled_part = None
    agent_defaults = {"mcts": {"iterations": 60, "cap": 10}, "strong": {"iterations": 5000}}


def test_a_game_without_compiled_search_warns_once_and_plays_mcts(caplog: pytest.LogCaptureFixture,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(strong, "_warned", set())
    game = PlainTohm(players=2)
    assert game.compiled() is None
    positions = _decisions(game, 1, seed=2)[:6]
    agent = make_agent("strong:iterations=90000:cap=10", seed=9, game="tohm")
    with caplog.at_level(logging.WARNING, logger="ludoteca.agents.strong"):
        played = [agent.step(s) for s in positions]
        again = make_agent("strong:iterations=90000:cap=10", seed=9, game="tohm")
        assert [again.step(s) for s in positions] == played  # reproducible with a seed
    warnings = [r.getMessage() for r in caplog.records if r.name == "ludoteca.agents.strong"]
    assert warnings == ["agent 'strong': TOHM has no compiled engine; playing the Python mcts instead (much slower)"]
    # what it plays is the game's tuned Python mcts (60 iterations here), seeded from the agent's seed:
    # strong's budget (90,000 simulations, meant for C) is not handed to the Python search
    mcts = MCTSAgent(seed=random.Random(9).getrandbits(64), game="tohm")
    assert [mcts.step(s) for s in positions] == played
    assert mcts.last_iterations == 60


def test_a_game_names_its_compiled_engine_through_the_hook() -> None:
    assert Game.compiled_part is None  # by default a game has none
    assert _tohm(2).compiled() is compiled


@needs_compiled
def test_the_lab_plays_strong_through_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    done = subprocess.run([*LUDOTECA, "lab", "tohm", "--players", "2", "--agents", "strong:iterations=100",
                           "--games", "6", "--jobs", "2", "--seed", "1", "--out", str(out), "--no-report",
                           "--no-progress"], capture_output=True, text=True, timeout=120, env=ENV)
    assert done.returncode == 0, done.stderr
    assert "Agents: seat 0: strong:iterations=100, seat 1: strong:iterations=100" in done.stdout
    assert "much slower" not in done.stderr  # the compiled search, no fallback
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lineup"] == ["strong:iterations=100", "strong:iterations=100"]
    rows = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["agents"] == ["strong:iterations=100"] * 2 for r in rows)


# --- TRI: hidden information: the compiled search where the seat sees everything -----------------

def _tri_decisions(players: int, seed: int) -> list[Any]:
    """Decision positions (several legal actions) of one seeded random TRI game, battles included."""
    game = ludoteca.load_game("tri", players=players, size=3)
    rng = random.Random(seed)
    s = game.new_initial_state()
    out = []
    while not s.is_terminal():
        if not s.is_chance_node() and len(s.legal_actions()) > 1:
            out.append(s.clone())
        s.apply_unchecked(random_action(s, rng))
    return out


@pytest.mark.skipif(not tri_compiled.available(), reason="compiled TRI engine not built (pip install -e .)")
def test_strong_plays_every_tri_move_in_c(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """TRI hides battle rolls and cards (RULES.md TRI "Battles"). Its compiled module declares
    ``SEARCHES_HIDDEN_INFORMATION``: ``strong`` plays every move with the module's search and the game's
    strong settings — the compiled search where the seat to move sees everything (``worlds(seat)`` is
    None), the information-set search in C at a card choice with something hidden — and never makes a
    Python search; no warning."""
    monkeypatch.setattr(strong, "_warned", set())
    positions = _tri_decisions(2, seed=3)[:40]
    hidden = [s for s in positions if s.worlds(s.current_player()) is not None]
    assert hidden and len(hidden) < len(positions)  # both kinds met
    game = positions[0].game
    assert game.has_hidden_information() and game.compiled() is tri_compiled
    assert tri_compiled.SEARCHES_HIDDEN_INFORMATION
    agent = make_agent("strong:iterations=80", seed=4, game="tri")
    assert isinstance(agent, strong.StrongAgent)
    settings = agent.settings(game)
    assert settings == {**game.agent_defaults["strong"], "iterations": 80}
    assert agent.engine(game) == {"engine": "compiled"}
    rng = random.Random(4)
    with caplog.at_level(logging.WARNING, logger="ludoteca.agents.strong"):
        for s in positions:
            seed = rng.getrandbits(64)
            expected = tri_compiled.search(s, 80, settings["c"], settings["cap"], seed)
            if s.worlds(s.current_player()) is not None:
                assert expected == tri_compiled.search_hidden(s, 80, settings["c"], settings["cap"], seed)
            assert agent.step(s) == expected
    assert agent._fallback is None
    assert not [r for r in caplog.records if r.name == "ludoteca.agents.strong"]


@pytest.mark.skipif(not tri_compiled.available(), reason="compiled TRI engine not built (pip install -e .)")
def test_a_module_not_declaring_its_hidden_search_leaves_those_moves_to_python(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A hidden-information module that does not declare ``SEARCHES_HIDDEN_INFORMATION`` gets only the
    positions where the seat sees everything; the others are played by the Python information-set
    ``mcts`` with the game's tuned settings, made once and seeded from the agent."""
    monkeypatch.setattr(tri_compiled, "SEARCHES_HIDDEN_INFORMATION", False)
    positions = _tri_decisions(2, seed=3)[:40]
    game = positions[0].game
    agent = make_agent("strong:iterations=40", seed=4, game="tri")
    assert isinstance(agent, strong.StrongAgent)
    assert agent.engine(game) == {"engine": "compiled", "hidden": "python ismcts"}
    rng = random.Random(4)
    mirror: MCTSAgent | None = None
    for s in positions:
        if s.worlds(s.current_player()) is None:
            expected = tri_compiled.search(s, 40, 0.7, 10, rng.getrandbits(64))
        else:
            if mirror is None:
                mirror = MCTSAgent(seed=rng.getrandbits(64), game="tri")
            expected = mirror.step(s)
            assert mirror.last_iterations == game.agent_defaults["mcts"]["iterations"]
        assert agent.step(s) == expected
    assert mirror is not None and agent._fallback is not None


# --- EXAGON: the compiled search with the heuristic's candidates, greedy rollouts and value -------

needs_exagon = pytest.mark.skipif(not exagon_compiled.available(), reason="compiled EXAGON engine not built")


def _exagon_decisions(options: dict[str, Any], seed: int) -> list[Any]:
    game = ludoteca.load_game("exagon", **options)
    rng = random.Random(seed)
    out = []
    s = game.new_initial_state()
    while not s.is_terminal():
        if not s.is_chance_node():
            out.append(s.clone())
        s.apply_action(random_action(s, rng))
    return out


@needs_exagon
@pytest.mark.parametrize("options", [{"players": 2, "clock": None}, {"players": 3}, {"players": 4, "tournament": True}])
def test_strong_plays_exagon_with_its_compiled_search(options: dict[str, Any], caplog: pytest.LogCaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """No warning, with or without the hourglass: every move is ``compiled.search`` with the game's
    ``agent_defaults["strong"]`` and a seed drawn from the agent's own generator."""
    monkeypatch.setattr(strong, "_warned", set())
    positions = _exagon_decisions(options, seed=6)[:40]
    game = positions[0].game
    assert game.compiled() is exagon_compiled
    agent = make_agent("strong:iterations=150", seed=4, game="exagon")
    with caplog.at_level(logging.WARNING, logger="ludoteca.agents.strong"):
        played = [agent.step(s) for s in positions]
    assert not [r for r in caplog.records if r.name == "ludoteca.agents.strong"]
    settings = dict(game.agent_defaults["strong"], iterations=150)
    rng = random.Random(4)
    expected = []
    for s in positions:
        legal = s.legal_actions()
        expected.append(legal[0] if len(legal) == 1 else exagon_compiled.search(
            s, settings["iterations"], settings["c"], settings["cap"], rng.getrandbits(64)))
    assert played == expected
    assert all(a in s.legal_actions() for a, s in zip(played, positions, strict=True))


@needs_exagon
def test_strong_takes_a_perfect_fit_in_exagon() -> None:
    from tests.test_compiled_exagon import _perfect_fit_position

    s = _perfect_fit_position()
    hole = [f"t1@1,0r{k}" for k in range(6)]
    for seed in range(4):
        assert s.action_to_string(make_agent("strong", seed=seed, game="exagon").step(s)) in hole


@needs_exagon
def test_strong_searches_in_c_where_exagon_sets_tiles_aside(caplog: pytest.LogCaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A designer's set that leaves two tiles aside hides them, but they never enter play: no seat's
    choice depends on them (``worlds(seat)`` is None, and ``mcts`` too searches the real position), so
    ``strong`` plays every move with the compiled search, without a warning."""
    monkeypatch.setattr(strong, "_warned", set())
    from ludoteca.games.exagon import default_tiles

    game = ludoteca.load_game("exagon", players=3, clock=None, tiles=default_tiles()[:11])
    assert game.has_hidden_information() and exagon_compiled.supports(game)
    agent = make_agent("strong:iterations=20", seed=1, game="exagon")
    assert isinstance(agent, strong.StrongAgent)
    rng = random.Random(2)
    s = game.new_initial_state()
    moves = 0
    with caplog.at_level(logging.WARNING, logger="ludoteca.agents.strong"):
        while not s.is_terminal() and moves < 12:
            if s.is_chance_node():
                s.apply_action(random_action(s, rng))
                continue
            assert s.worlds(s.current_player()) is None
            s.apply_action(agent.step(s))
            moves += 1
    assert moves >= 4 and agent._fallback is None
    assert not [r for r in caplog.records if r.name == "ludoteca.agents.strong"]
