"""The AI ladder: levels by name, softened agents, the measured ratings, the script that
measures them, and the lobby offering the levels with their ratings."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import ludoteca
from ludoteca.agents import make_agent
from ludoteca.agents.ladder import ladder, level_rating
from ludoteca.agents.levels import ALIASES, EXPERT_FACTOR, LEVELS, SOLVED_LEVELS, spec
from ludoteca.agents.soft import SoftAgent
from ludoteca.agents.strong import FALLBACKS as STRONG_FALLBACKS
from ludoteca.core.chance import sample_chance
from ludoteca.core.rating import Rating
from ludoteca.registry import GAMES, game_class
from tests.conftest import game_dir

ROOT = Path(__file__).resolve().parent.parent
RATED = [g for g in GAMES if ladder(g)]
"""The games that ship a measured ladder (their ``ladder.json``, written by benchmarks/ladder.py): an
optional part of a game; without it the levels play unrated."""
FAST = {"hard": "mcts:iterations=20", "expert": "mcts:iterations=40"}
"""Small search budgets for the tests that only check the moves are legal."""


def play(game: str, specs: list[str], seed: int, limit: int = 10_000) -> list[int]:
    """The actions of one two-player game between ``specs`` (chance seeded), at most ``limit``."""
    options = {"players": 2}
    clock = game_class(game).clock_option
    if clock is not None:
        options[clock] = None
    state = ludoteca.load_game(game, **options).new_initial_state()
    agents = [make_agent(s, seed=seed + k, game=game) for k, s in enumerate(specs)]
    rng = random.Random(seed)
    actions = []
    while not state.is_terminal() and len(actions) < limit:
        if state.is_chance_node():
            action = sample_chance(state, rng)
        else:
            action = agents[state.current_player()].step(state)
            assert action in state.legal_actions()
        state.apply_action(action)
        actions.append(action)
    return actions


# --- the levels ----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_every_level_exists_for_every_game_and_plays_legal_moves(game: str) -> None:
    for level in LEVELS:
        agent = make_agent(level, seed=1, game=game)  # a level name is an agent spec
        assert agent.spec.split(":")[0] == spec(level, game).split(":")[0]
    # the searching levels at small budgets (their full budgets are measured by benchmarks/ladder.py)
    play(game, [spec("beginner", game), spec("easy", game)], seed=3)
    play(game, [spec("medium", game), FAST["hard"]], seed=4, limit=60)
    play(game, [FAST["expert"], spec("easy", game)], seed=5, limit=60)


def test_the_levels_go_from_random_moves_to_the_longest_search() -> None:
    for game in GAMES:
        tuned = game_class(game).agent_defaults.get("strong", {}).get("iterations", STRONG_FALLBACKS["iterations"])
        base = {level: spec(level, game).split(":turn=")[0] for level in LEVELS}  # without a pace (below)
        assert base["beginner"] == "soft:p=0.5" and base["easy"] == "soft:p=0.8" and base["medium"] == "heuristic"
        assert base["hard"] == "strong"  # the compiled search at its tuned budget
        assert base["expert"] == f"strong:iterations={EXPERT_FACTOR * tuned}"
    assert spec("hard") == "strong" and spec("expert") == "strong"  # no game: the agent's own defaults
    # the older names stay valid: as levels and as agents
    assert ALIASES == {"random": "random", "heuristic": "medium", "mcts": "expert"}
    assert spec("heuristic", "tri") == "heuristic" and spec("mcts", "tri") == spec("expert", "tri")
    assert make_agent("mcts", seed=0, game="tri").spec == "mcts"  # the agent keeps its own defaults
    assert spec("mcts:iterations=50", "tri") == "mcts:iterations=50"


def test_a_game_can_give_a_level_another_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = game_class("tri")
    monkeypatch.setattr(cls, "agent_defaults", {**cls.agent_defaults,
                                                "levels": {"expert": "mcts:x2", "easy": "soft:p=0.3"}})
    assert spec("expert", "tri") == f"mcts:iterations={2 * cls.agent_defaults['mcts']['iterations']}"
    assert spec("easy", "tri") == "soft:p=0.3" and spec("easy", "tohm") == "soft:p=0.8"
    assert make_agent("easy", seed=0, game="tri").spec == "soft:p=0.3"


def test_a_softened_agent_is_reproducible_by_seed_and_checks_its_parameter() -> None:
    first = play("tohm", ["soft:p=0.5", "soft:p=0.5"], seed=11)
    again = play("tohm", ["soft:p=0.5", "soft:p=0.5"], seed=11)
    other = play("tohm", ["soft:p=0.5", "soft:p=0.5"], seed=12)
    assert first == again and first != other
    assert make_agent("soft:p=0.25", seed=0, game="tri").spec == "soft:p=0.25"
    for bad in ("soft:p=2", "soft:p=-0.1", "soft:p=yes", "soft:q=1"):
        with pytest.raises(ValueError, match=r"p must be|no parameter"):
            make_agent(bad, seed=0, game="tri")
    with pytest.raises(ValueError):
        make_agent("soft", seed=0, game="no-such-game")


def test_soft_with_p_1_plays_the_heuristic_and_p_0_never_asks_it() -> None:
    game = "exactly"
    state = ludoteca.load_game(game, players=2).new_initial_state()
    rng = random.Random(2)
    while state.is_chance_node() or len(state.legal_actions()) < 2:
        state.apply_action(sample_chance(state, rng) if state.is_chance_node() else state.legal_actions()[0])
    from ludoteca.agents.heuristics import module

    for seed in range(5):
        rng = random.Random(seed)
        rng.random()  # the coin comes first, then the heuristic draws from the same stream
        assert SoftAgent(seed=seed, game=game, p=1).step(state.clone()) == module(game).choose(state.clone(), rng)
        legal = state.legal_actions()
        assert SoftAgent(seed=seed, game=game, p=0).step(state.clone()) == legal[
            (lambda r: (r.random(), r.randrange(len(legal)))[1])(random.Random(seed))]


# --- the measured ratings ------------------------------------------------------------------------


def test_the_ladder_script_runs_on_a_small_sample_and_writes_a_valid_ladder(tmp_path: Path) -> None:
    jsonl = tmp_path / "games.jsonl"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "ladder.py"), "exactly", "--games", "4", "--procs", "1",
           "--pairings", "beginner-easy,easy-medium,beginner-medium", "--bootstrap", "20",
           "--out", str(tmp_path), "--json", str(jsonl)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=True)
    data = json.loads((tmp_path / "exactly" / "ladder.json").read_text(encoding="utf-8"))
    assert data["players"] == 2 and data["games"] == 12 and data["games_per_pairing"] == 4
    assert data["anchor"] == {"level": "medium", "display": 1200}
    assert "--games 4" in data["command"] and data["measured"]
    assert list(data["levels"]) == ["beginner", "easy", "medium"]
    for level, entry in data["levels"].items():
        assert entry["low"] <= entry["display"] <= entry["high"]
        assert entry["games"] == 8 and entry["spec"] == spec(level, "exactly")
        assert Rating(entry["mu"], entry["sigma"]).display == entry["display"]
    assert data["levels"]["medium"]["display"] == 1200
    assert [(p["a"], p["b"], p["games"]) for p in data["pairings"]] == [
        ("beginner", "easy", 4), ("easy", "medium", 4), ("beginner", "medium", 4)]
    assert "exactly" in done.stdout.lower() or "Exactly" in done.stdout
    # reproducible: a second run plays the same games (same seeds) and rates them the same
    rows = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    again = tmp_path / "again"
    subprocess.run([*cmd[:-4], "--out", str(again)], capture_output=True, text=True, timeout=300, check=True)
    second = json.loads((again / "exactly" / "ladder.json").read_text(encoding="utf-8"))
    assert ratings(second) == ratings(data) and len(rows) == 12
    # resumed from its games file, nothing is played again and the result is the same
    third = tmp_path / "third"
    subprocess.run([*cmd[:-4], "--out", str(third), "--json", str(jsonl), "--no-play"],
                   capture_output=True, text=True, timeout=300, check=True)
    assert json.loads((third / "exactly" / "ladder.json").read_text(encoding="utf-8"))["levels"] == data["levels"]


def ratings(data: dict) -> dict:
    """The levels of a ladder.json without their times per move (those vary from run to run)."""
    return {level: {k: v for k, v in entry.items() if "s_per_move" not in k} for level, entry in data["levels"].items()}


def test_the_ladder_script_refuses_bad_arguments() -> None:
    script = str(ROOT / "benchmarks" / "ladder.py")
    for args in (["--pairings", "easy-easy"], ["--pairings", "easy-godlike"], ["--games", "0"]):
        done = subprocess.run([sys.executable, script, "exactly", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "error" in done.stderr


@pytest.mark.parametrize("game", RATED)
def test_the_shipped_ladders_are_measured_and_ordered_from_beginner_to_expert(game: str) -> None:
    rungs = ladder(game)
    assert [level for level, *_ in rungs if level not in SOLVED_LEVELS] == list(LEVELS)  # (+ perfect: a solved game)
    shown = {level: rating.display for level, rating, _, _ in rungs}
    # measured with hard = strong and expert = strong:x20 (24 games per pairing, docs/strength.md): the
    # levels come out in order in every game, though hard's and expert's intervals overlap
    assert shown["beginner"] < shown["easy"] < shown["medium"] < shown["hard"] < shown["expert"], shown
    for _level, rating, low, high in rungs:
        assert low <= rating.display <= high and rating.games > 0
    medium = level_rating(game, "medium")
    assert medium is not None and medium.display == 1200  # the anchor
    data = json.loads((game_dir(game) / "ladder.json").read_text(encoding="utf-8"))
    assert data["players"] == 2 and data["games"] >= 20 and "benchmarks/ladder.py" in data["command"]
    for level in LEVELS:
        assert data["levels"][level]["spec"] == spec(level, game)


def test_level_rating_reads_the_ladder_and_knows_the_older_names() -> None:
    game = GAMES[0]
    expert = level_rating(game, "expert")
    assert isinstance(expert, Rating) and expert.display > level_rating(game, "beginner").display  # type: ignore[union-attr]
    assert level_rating(game, "mcts") == expert and level_rating(game, "heuristic") == level_rating(game, "medium")
    assert level_rating(game, "random") is None  # not a ladder level: not measured
    assert level_rating(game, "expert", players=4) is None  # measured with two players only
    assert level_rating(game, "godlike") is None
    with pytest.raises(ValueError):
        level_rating("no-such-game", "medium")


# --- the lobby -----------------------------------------------------------------------------------


def test_the_lobby_offers_the_levels_with_their_ratings_and_the_ai_plays_them(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from tests.test_web_api import connect, create, server

    with server(tmp_path, ai_specs={"hard": "mcts:iterations=20"}) as client:
        data = client.get("/api/games").json()
        # random: any legal move, not rated; perfect: only where a table's game is solved (test_web_perfect.py)
        assert data["levels"] == ["random", *LEVELS, *SOLVED_LEVELS]
        assert set(data["level_info"]) == {*LEVELS, *SOLVED_LEVELS, "random"} and all(data["level_info"].values())
        for game in RATED:
            ratings = data["level_ratings"][game]["2"]
            assert [level for level in ratings if level not in SOLVED_LEVELS] == list(LEVELS)
            assert ratings["medium"] == {"rating": 1200, "low": 1200, "high": 1200}
            for level, _rating, low, high in ladder(game):
                assert ratings[level]["low"] == low and ratings[level]["high"] == high
            assert "4" not in data["level_ratings"][game]  # measured with two players only
        italian = client.get("/api/games", headers={"Accept-Language": "it"}).json()
        assert italian["level_info"]["beginner"] != data["level_info"]["beginner"]
        # tables of the ladder's levels play by themselves; the older names still make tables
        made = create(client, "tri", [{"kind": "ai", "level": "beginner"}, {"kind": "ai", "level": "hard"}], sit=None)
        with connect(client, made["id"]) as spectator:
            spectator.until(lambda m: m["type"] == "update" and m["seq"] >= 10)
        seats = client.get(f"/api/tables/{made['id']}").json()["seats"]
        assert [s["level"] for s in seats] == ["beginner", "hard"]
        old = create(client, "tri", [{"kind": "open"}, {"kind": "ai", "level": "mcts"}])
        assert old["table"]["seats"][1]["level"] == "mcts"  # an older name: plays the expert level
        bad = client.post("/api/tables", json={"game": "tri", "players": 2,
                                               "seats": [{"kind": "open"}, {"kind": "ai", "level": "godlike"}]})
        assert bad.status_code == 400 and "godlike" in bad.json()["message"]


# --- the first AI a newcomer meets, and the pace of a turn ----------------------------------------


def duel(game: str, a: str, b: str, games: int, seed: int = 22) -> float:
    """``a``'s score against ``b`` over ``games`` two-player games, seats rotated, everything seeded (a
    shared win counts 1/2)."""
    score = 0.0
    for i in range(games):
        specs = [a, b] if i % 2 == 0 else [b, a]
        options: dict[str, object] = {"players": 2}
        clock = game_class(game).clock_option
        if clock is not None:
            options[clock] = None
        state = ludoteca.load_game(game, **options).new_initial_state()
        agents = [make_agent(s, seed=seed * 1000 + 10 * i + k, game=game) for k, s in enumerate(specs)]
        rng = random.Random(seed * 7919 + i)
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                state.apply_action(agents[state.current_player()].step(state))
        mine = state.returns()[i % 2]
        theirs = state.returns()[1 - i % 2]
        score += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
    return score / games


@pytest.mark.parametrize("game", GAMES)
def test_the_beginner_plays_sensibly_but_can_be_beaten(game: str) -> None:
    """The first AI a newcomer meets is not the uniformly random player: it clearly beats ``random``
    and clearly loses to ``medium`` (the heuristic), in every game: over 60 seeded games each way, the
    95% Wilson interval of its score lies above one half against random and below it against medium
    (measured: 0.67-1.00 against random, 0.00-0.31 against medium; TRI and TOHM are the luckiest)."""
    from ludoteca.lab.stats import wilson

    assert spec("beginner", game).split(":")[0] != "random"
    n = 60
    low, _high = wilson(duel(game, "beginner", "random", n) * n, n)
    assert low > 0.5, (game, "beginner against random", low)
    _low, high = wilson(duel(game, "beginner", "medium", n) * n, n)
    assert high < 0.5, (game, "beginner against medium", high)


def test_a_paced_level_ends_its_turn_after_its_cap_and_the_others_are_unpaced() -> None:
    """A level with a pace in its game (the game's ladder.json ``pace``) never goes on past its cap: once
    it has made ``turn`` moves of a turn it ends the turn (with one more tile at most, the one that ends it)."""
    paced = [g for g in GAMES if ":turn=" in spec("medium", g)]
    assert paced, "a game where a turn may go on paces its levels (EXAGON)"
    for game in GAMES:
        for level in LEVELS:
            agent = make_agent(spec(level, game) if level in ("beginner", "easy", "medium") else FAST[level],
                               seed=1, game=game)
            assert (":turn=" in agent.spec) is (game in paced and level in ("beginner", "easy", "medium")), \
                (game, level, agent.spec)
    for game in paced:
        key = json.loads((game_dir(game) / "ladder.json").read_text())["pace"]["counted"]
        cap = int(spec("medium", game).split(":turn=")[1])
        longest = 0
        for seed in range(4):
            options: dict[str, object] = {"players": 2}
            clock = game_class(game).clock_option
            if clock is not None:
                options[clock] = None
            state = ludoteca.load_game(game, **options).new_initial_state()
            agents = [make_agent("medium", seed=seed, game=game), make_agent("heuristic", seed=seed, game=game)]
            rng = random.Random(seed)
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(sample_chance(state, rng))
                    continue
                player = state.current_player()
                action = agents[player].step(state)
                state.apply_action(action)
                if player == 0 and not state.is_terminal() and state.current_player() == 0:
                    longest = max(longest, state.to_json()[key])
        assert longest <= cap, (game, longest, cap)  # the paced seat never goes past its cap


def test_pace_checks_its_parameter_and_means_nothing_where_a_game_does_not_count_moves() -> None:
    for bad in ("heuristic:turn=0", "heuristic:turn=yes", "soft:p=0.5:turn=1.5"):
        with pytest.raises(ValueError, match="turn"):
            make_agent(bad, seed=0, game="exagon")
    unpaced = [g for g in GAMES if ":turn=" not in spec("medium", g)]
    assert unpaced
    for game in unpaced:  # no count of the moves of a turn in its position: plays exactly like the agent
        assert play(game, ["heuristic:turn=1", "random"], seed=9) == play(game, ["heuristic", "random"], seed=9)


def test_no_level_wins_a_game_of_a_paced_game_in_one_turn_most_of_the_time() -> None:
    """benchmarks/ai_turns.py: the share of games a level wins in one turn (its winning turn holding more
    than half of what it placed in the game), against the easy level, at the levels' own budgets
    (expert, a few hundred milliseconds a move, left to the benchmark)."""
    import importlib.util

    path = ROOT / "benchmarks" / "ai_turns.py"
    module_spec = importlib.util.spec_from_file_location("ai_turns", path)
    assert module_spec is not None and module_spec.loader is not None
    sys.path.insert(0, str(path.parent))
    try:
        ai_turns = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(ai_turns)
    finally:
        sys.path.remove(str(path.parent))
    for game in [g for g in GAMES if ":turn=" in spec("medium", g)]:
        for level in ("beginner", "easy", "medium", "hard"):
            rows = [ai_turns.play(game, level, spec(level, game), spec("easy", game), i, 1) for i in range(8)]
            summary = ai_turns.summary(rows)
            assert summary["one_turn_wins"] < len(rows) / 2, (game, level, summary)
            assert summary["max"] <= int(spec(level, game).split(":turn=")[1]) + 1, (game, level, summary)


def test_strong_x20_as_the_docs_write_it_is_an_agent() -> None:
    """docs/strength.md names the expert ``strong:x20``: typed as such it plays 20 times the game's tuned
    ``strong`` iterations (in the arena, the lab, ``--seats``)."""
    from ludoteca.agents import make_agent
    from ludoteca.agents.levels import resolve
    from ludoteca.registry import GAMES, game_class

    game = GAMES[0]
    tuned = game_class(game).agent_defaults.get("strong", {}).get("iterations")
    if tuned is None:
        from ludoteca.agents.strong import FALLBACKS

        tuned = FALLBACKS["iterations"]
    assert resolve("strong:x20", game) == f"strong:iterations={20 * tuned}"
    agent = make_agent("strong:x20", seed=1, game=game)
    assert getattr(agent, "iterations", None) == 20 * tuned
    with pytest.raises(ValueError):
        make_agent("strong:xx", seed=1, game=game)
