"""The compiled exactly engine (``ludoteca.games.exactly.compiled``) plays exactly the Python engine.

Differential: a thousand seeded random games per player count (2 to 6), and games under every
option (``start_coin`` round / game / never, any ``turn_limit``, any target, euros to win, cap and
die) and from random positions read from
JSON (piles above the 150-cent cap, a pile already at 100, roll-offs under way); at every step the
same current player, legal actions (same ids, same order), chance outcomes with probabilities,
position and, at the end, returns and lab counters. Every golden playthrough of exactly is
regenerated on the compiled engine, text for text. The C playout loop plays legal actions,
uniformly, leaves its start position alone, and its results have the Python engine's distribution.
The C evaluation (``_value``) equals ``heuristic.value``. Without the extension, ``available()`` is
False and callers get one warning and the Python engine.
"""

from __future__ import annotations

import importlib
import logging
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ludoteca
from ludoteca.core.chance import random_action
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.exactly import BANK_OFFSET, MOVE, ExactlyGame, ExactlyState, compiled, heuristic
from tests.compiled_playthroughs import cases as playthrough_cases
from tests.compiled_playthroughs import designer_cases, python_text
from tests.compiled_playthroughs import generate as generate_compiled

needs_compiled = pytest.mark.skipif(not compiled.available(),
                                    reason="compiled exactly engine not built (pip install -e .)")
pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)

PLAYTHROUGHS = Path(__file__).parent / "playthroughs"
GAMES_PER_PLAYER_COUNT = 1000
"""Seeded games per player count (every step compared; the position JSON in full every 10th game);
the hypothesis tests below add games from any seed and under every option."""
VALUES = (5, 10, 20, 50)
FACES: tuple[int | str, ...] = (0, "?", 50, 20, 10, 5)


def _game(**options: Any) -> ExactlyGame:
    game = ludoteca.load_game("exactly", **options)
    assert isinstance(game, ExactlyGame)
    return game


def _fields(s: ExactlyState) -> tuple[Any, ...]:
    return (s.counts, s.euros, s.to_move, s.phase, s.face, s.turn, s.ro_seats, s.ro_rolls,
            (s.c_rounds, s.c_euros, s.c_question, s.c_cap))


def _same_position(c: compiled.CompiledState, py: ExactlyState, where: Any) -> None:
    assert c.to_json() == py.to_json(), where
    totals = c._c.totals()
    assert totals[1:] == py.totals[1:] and totals[0] + BANK_OFFSET == py.totals[0], where
    assert c.counters() == py.counters(), where


def play_both(py: ExactlyState, c: compiled.CompiledState, seed: int, full_json: bool = True,
              checked: bool = False) -> ExactlyState:
    """One seeded random game on both engines from the same position, compared at every step;
    returns the Python engine's final position."""
    rng = random.Random(seed)
    steps = 0
    while True:
        where = (seed, steps)
        assert c.current_player() == py.current_player(), where
        assert c.legal_actions() == py.legal_actions(), where
        assert c.chance_outcomes() == py.chance_outcomes(), where
        assert c.is_chance_node() == py.is_chance_node(), where
        if full_json:
            _same_position(c, py, where)
        else:
            assert c._c.fields() == _fields(py), where
        assert c.returns() == py.returns(), where
        if py.is_terminal():
            assert c.is_terminal()
            _same_position(c, py, where)
            return py
        action = random_action(py, rng)
        if checked:
            py.apply_action(action)
            c.apply_action(action)
        else:
            py.apply_unchecked(action)
            c.apply_unchecked(action)
        steps += 1


def play_both_from_start(game: ExactlyGame, seed: int, full_json: bool = True,
                         checked: bool = False) -> ExactlyState:
    """From the initial position: the compiled one is built by the compiled engine itself."""
    return play_both(game.new_initial_state(), compiled.CompiledState.initial(game), seed, full_json, checked)


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_thousands_of_seeded_games(players: int) -> None:
    game = _game(players=players)
    seen: Counter[str] = Counter()
    for seed in range(GAMES_PER_PLAYER_COUNT):
        end = play_both_from_start(game, seed, full_json=seed % 10 == 0, checked=seed % 50 == 0)
        seen[end.end_reason()] += 1
        seen.update({k: int(v) for k, v in end.counters().items()})
    # the games went everywhere the rules go: rounds won on '?', two euros on one move, the cap
    assert seen["three_euros"] > 0 and seen["question_rounds"] > 0 and seen["cap_blocks"] > 0, seen
    assert seen["euros"] > seen["rounds"], seen


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6))
@settings(max_examples=150, deadline=None)
def test_property_any_seed(seed: int, players: int) -> None:
    play_both_from_start(_game(players=players), seed)


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6),
       start_coin=st.sampled_from(["round", "game", "never", True, False]),
       turn_limit=st.one_of(st.integers(1, 400), st.just(2**31 - 1)))
@settings(max_examples=200, deadline=None)
def test_property_options(seed: int, players: int, start_coin: Any, turn_limit: int) -> None:
    """Every option of exactly: ``start_coin`` (and its aliases) and any turn limit."""
    game = _game(players=players, start_coin=start_coin, turn_limit=turn_limit)
    assert compiled.supports(game)
    play_both_from_start(game, seed, checked=seed % 2 == 0)


@st.composite
def rulebook_options(draw: st.DrawFn) -> dict[str, Any]:
    """Any of the rulebook's numbers as a designer sets them: target, euros to win, cap, the die."""
    players = draw(st.integers(2, 6))
    die = draw(st.lists(st.integers(0, 3), min_size=6, max_size=6).filter(lambda d: sum(1 for k in d if k) >= 2))
    names = ("die_zero", "die_question", "die_50", "die_20", "die_10", "die_5")
    return {"players": players, "target": 5 * draw(st.integers(1, 60)),
            "euros_to_win": draw(st.integers(1, (15 - 2) // players + 1)),
            "cap": draw(st.sampled_from([0, 45, 100, 150, 300, 850])), **dict(zip(names, die, strict=True)),
            "start_coin": draw(st.sampled_from(["round", "game", "never"])), "turn_limit": draw(st.integers(1, 300))}


@needs_compiled
@given(options=rulebook_options(), seed=st.integers(0, 2**32))
@settings(max_examples=300, deadline=None)
def test_property_rulebook_options(options: dict[str, Any], seed: int) -> None:
    """The rulebook's numbers as options (target, euros to win, cap, the die's faces): both engines
    play them alike, step for step, chance probabilities included, and evaluate alike."""
    game = _game(**options)
    assert compiled.supports(game)
    play_both_from_start(game, seed, checked=seed % 2 == 0)
    rng = random.Random(seed)
    py = game.new_initial_state()
    for _ in range(60):
        if py.is_terminal():
            break
        got = compiled.CompiledState.from_state(py).value()
        assert all(abs(a - b) < 1e-9 for a, b in zip(got, heuristic.value(py), strict=True))
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
@pytest.mark.parametrize("start_coin", ["round", "game", "never"])
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_every_start_coin_many_games(players: int, start_coin: str) -> None:
    game = _game(players=players, start_coin=start_coin)
    for seed in range(60):
        play_both_from_start(game, seed, full_json=seed % 3 == 0)


@needs_compiled
@pytest.mark.parametrize("turn_limit", [1, 2, 7, 40])
@pytest.mark.parametrize("players", [2, 6])
def test_turn_limit_ends(players: int, turn_limit: int) -> None:
    game = _game(players=players, turn_limit=turn_limit)
    for seed in range(30):
        assert play_both_from_start(game, seed).turn >= 1


@st.composite
def positions(draw: st.DrawFn) -> tuple[ExactlyGame, dict[str, Any]]:
    """A valid exactly position JSON, anywhere: coins spread at random (piles over the cap, or at
    exactly 100 already), any euros, phase start_roll (with a roll-off under way), roll or move."""
    players = draw(st.integers(2, 6))
    game = _game(players=players, start_coin=draw(st.sampled_from(["round", "game", "never"])),
                 turn_limit=draw(st.integers(1, 300)))
    piles = [{str(v): 0 for v in VALUES} for _ in range(players)]
    bank = {str(v): 0 for v in VALUES}
    skew = draw(st.integers(0, players))  # most coins to one pile: totals above 150
    for v in VALUES:
        for _ in range(10):
            where = draw(st.integers(-1, players - 1)) if draw(st.booleans()) else skew - 1
            (bank if where < 0 else piles[where])[str(v)] += 1
    phase = draw(st.sampled_from(["start_roll", "roll", "move"]))
    data: dict[str, Any] = {"game": "exactly", "players": players, "bank": bank, "piles": piles,
                            "to_move": draw(st.integers(0, players - 1)), "phase": phase, "roll": None}
    if phase == "start_roll":
        seats = sorted(draw(st.sets(st.integers(0, players - 1), min_size=1)))
        rolls = draw(st.lists(st.sampled_from(FACES), max_size=len(seats) - 1))
        data.update(euros=[0] * players, turn=0, rolloff={"seats": seats, "rolls": rolls})
    else:
        data.update(euros=draw(st.lists(st.integers(0, 2), min_size=players, max_size=players)),
                    turn=draw(st.integers(0, game.turn_limit - 1)))
        if phase == "move":
            data["roll"] = draw(st.sampled_from(FACES[1:]))
    return game, data


@needs_compiled
@given(pos=positions(), seed=st.integers(0, 2**32))
@settings(max_examples=300, deadline=None)
def test_property_positions_from_json(pos: tuple[ExactlyGame, dict[str, Any]], seed: int) -> None:
    """Any position read from JSON plays on alike (and the compiled copy writes the same JSON)."""
    game, data = pos
    py = game.state_from_json(data)
    c = compiled.CompiledState.from_json(game, data)
    assert c.to_json() == py.to_json()
    assert c.to_state().to_json() == py.to_json()
    play_both(py, c, seed)


@needs_compiled
@pytest.mark.parametrize(("stem", "options", "seed", "limit"), playthrough_cases("exactly"),
                         ids=[c[0] for c in playthrough_cases("exactly")])
def test_golden_playthroughs_on_compiled(stem: str, options: dict[str, Any], seed: int, limit: int) -> None:
    expected = (PLAYTHROUGHS / f"{stem}.txt").read_text(encoding="utf-8")
    assert generate_compiled("exactly", compiled.CompiledState, options, seed, limit) == expected


def test_every_exactly_playthrough_is_replayed() -> None:
    stems = sorted(p.stem for p in PLAYTHROUGHS.glob("exactly_*.txt"))
    assert stems
    assert stems == sorted(c[0] for c in playthrough_cases("exactly"))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_positions_round_trip_mid_game(players: int) -> None:
    """A Python position (from JSON or a state) compiled and back is the same; play goes on equal."""
    game = _game(players=players)
    rng = random.Random(players)
    py = game.new_initial_state()
    for _ in range(400):
        if py.is_terminal():
            break
        data = py.to_json()
        c = compiled.CompiledState.from_json(game, data)
        assert c.to_json() == data
        back = c.to_state()
        assert back.to_json() == data
        assert back.legal_actions() == py.legal_actions()
        assert back.totals == py.totals
        assert c.clone().to_json() == data
        assert compiled.CompiledState.from_state(py).counters() == py.counters()
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
def test_apply_action_refuses_illegal() -> None:
    c = compiled.CompiledState.initial(_game(players=2))
    before = c.to_json()
    for bad in (6, 7, 42, -1, 10_000, True):
        with pytest.raises(IllegalActionError):
            c.apply_action(bad)  # a pass or a move at the roll-off; no action at all
        assert c.to_json() == before
    c.apply_action(1)  # '?' in the roll-off: seat 1 rolls next
    assert c.to_json()["rolloff"] == {"seats": [0, 1], "rolls": ["?"]}
    # an id the position cannot hold is refused even unchecked (no memory is touched)
    with pytest.raises(ValueError):
        c.apply_unchecked(500)
    assert c.to_json()["rolloff"] == {"seats": [0, 1], "rolls": ["?"]}


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 6])
def test_playouts_leave_the_start_and_end_the_games(players: int) -> None:
    game = _game(players=players)
    rng = random.Random(1)
    py = game.new_initial_state()
    for _ in range(40):
        py.apply_unchecked(random_action(py, rng))
    before = py.to_json()
    out = compiled.playouts(py, 200, seed=3)
    assert py.to_json() == before
    assert len(out) == 200
    for r in out:
        assert len(r) == players and abs(sum(r) - 1.0) < 1e-9 and max(r) > 0
    assert compiled.playouts(py, 200, seed=3) == out  # seeded
    assert compiled.playouts(py, 200, seed=4) != out


@needs_compiled
def test_random_actions_are_legal_and_uniform() -> None:
    """The C sampler never lists actions (it counts the moves, then walks to the k-th): its choice
    is legal, and uniform over the legal list, on '?' rolls with closed piles too."""
    rng = random.Random(5)
    seen = Counter()
    for players in (2, 4, 6):
        game = _game(players=players)
        py = game.new_initial_state()
        for step in range(3000):
            if py.is_terminal():
                py = game.new_initial_state()
            legal = py.legal_actions()
            closed = any(py.totals[t] > 150 for t in range(1, game.piles))
            interesting = py.phase == MOVE and (py.face == 1 or closed) and len(legal) > 1
            if step % 97 == 0 or (interesting and seen[players, closed] < 4):
                c = compiled.CompiledState.from_state(py)
                draws = 40 * len(legal)
                counts = Counter(c.sample_action(seed * 7919 + step) for seed in range(draws))
                assert set(counts) == set(legal), step
                # each count is Binomial(draws, 1/len): within 6 standard deviations of 40
                sd = (draws * (1 / len(legal)) * (1 - 1 / len(legal))) ** 0.5
                assert all(abs(k - 40) <= 6 * sd + 1 for k in counts.values()), (step, counts)
                if interesting:
                    seen[players, closed] += 1
            py.apply_unchecked(random_action(py, rng))
    assert all(seen[p, closed] > 0 for p in (2, 4, 6) for closed in (False, True)), seen


@needs_compiled
@pytest.mark.parametrize("players", [2, 4])
def test_playout_results_match_the_python_distribution(players: int) -> None:
    """Mean returns, game lengths and end reasons of C playouts and Python playouts from one
    position agree (within 5 standard errors)."""
    game = _game(players=players, turn_limit=300)  # some games end on the turn limit
    state = game.new_initial_state()
    c = compiled.CompiledState.from_state(state)
    c_out = c.playouts(20000, seed=11)
    c_len = c._c.last_actions / len(c_out)
    rng = random.Random(11)
    py_out, py_lens = [], []
    for _ in range(2000):
        s = state.clone()
        n = 0
        while not s.is_terminal():
            s.apply_unchecked(random_action(s, rng))
            n += 1
        py_out.append(s.returns())
        py_lens.append(n)
    for seat in range(players):
        mc = sum(r[seat] for r in c_out) / len(c_out)
        mp = sum(r[seat] for r in py_out) / len(py_out)
        se = (0.25 / len(py_out) + 0.25 / len(c_out)) ** 0.5
        assert abs(mc - mp) < 5 * se, (seat, mc, mp)
    # a game cut by the turn limit with a tie shares the win: the share of ties agrees too
    tie_c = sum(max(r) < 1.0 for r in c_out) / len(c_out)
    tie_p = sum(max(r) < 1.0 for r in py_out) / len(py_out)
    assert abs(tie_c - tie_p) < 5 * (0.25 / len(py_out) + 0.25 / len(c_out)) ** 0.5, (tie_c, tie_p)
    mean_p = sum(py_lens) / len(py_lens)
    sd_p = (sum((x - mean_p) ** 2 for x in py_lens) / len(py_lens)) ** 0.5
    assert abs(c_len - mean_p) < 5 * sd_p * (1 / len(py_out) + 1 / len(c_out)) ** 0.5, (c_len, mean_p)


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_value_equals_the_heuristic(players: int) -> None:
    """The C evaluation of a cut-off rollout equals ``heuristic.value`` on thousands of positions."""
    game = _game(players=players, start_coin=["round", "game", "never"][players % 3])
    rng = random.Random(players)
    checked = 0
    py = game.new_initial_state()
    while checked < 2000:
        if py.is_terminal():
            assert compiled.CompiledState.from_state(py).value() == heuristic.value(py)
            py = game.new_initial_state()
        got = compiled.CompiledState.from_state(py).value()
        want = heuristic.value(py)
        assert len(got) == players
        assert all(abs(a - b) < 1e-9 for a, b in zip(got, want, strict=True)), (got, want, py.to_json())
        checked += 1
        py.apply_unchecked(random_action(py, rng))


def test_fallback_without_the_extension(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The extension failing to import: available() is False, one warning, the Python engine plays."""
    import ludoteca.games.exactly as package

    monkeypatch.setitem(sys.modules, "ludoteca.games.exactly._compiled", None)  # import raises ImportError
    monkeypatch.delattr(package, "_compiled", raising=False)
    fallback = importlib.reload(compiled)
    try:
        assert not fallback.available()
        game = _game(players=3)
        state = game.new_initial_state()
        assert not fallback.supports(game)
        assert "not built" in fallback.unsupported(game)
        with caplog.at_level(logging.WARNING, logger="ludoteca.games.exactly.compiled"):
            assert fallback.compile_state(state) is None
            out = fallback.playouts(state, 20, seed=1)
            fallback.playouts(state, 5, seed=2)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "Python exactly engine" in warnings[0].getMessage()
        assert len(out) == 20 and all(abs(sum(r) - 1.0) < 1e-9 for r in out)
        assert fallback.playouts(state, 20, seed=1) == out  # seeded in Python too
    finally:
        monkeypatch.undo()
        importlib.reload(compiled)


@needs_compiled
def test_unsupported_names_what_it_cannot_play() -> None:
    """A turn limit beyond a C int: the compiled engine says so, and the Python engine is used."""
    game = _game(players=2, turn_limit=2**31)
    assert "turn_limit" in compiled.unsupported(game)
    with pytest.raises(RuntimeError, match="turn_limit"):
        compiled.CompiledState.initial(game)
    assert compiled.compile_state(game.new_initial_state()) is None
    assert compiled.supports(_game(players=6, turn_limit=2**31 - 1))


def _winning_position(game: ExactlyGame) -> dict[str, Any]:
    """Seat 0 holds two euros and 95 cents and rolled '?': a 5-cent coin to its pile wins."""
    piles = [{"5": 1, "10": 0, "20": 2, "50": 1}, {"5": 2, "10": 3, "20": 1, "50": 0}]
    bank = {v: 10 - piles[0][v] - piles[1][v] for v in ("5", "10", "20", "50")}
    return {"game": "exactly", "players": 2, "bank": bank, "piles": piles, "euros": [2, 1], "to_move": 0,
            "phase": "move", "roll": "?", "turn": 30}


@needs_compiled
def test_search_plays_legal_seeded_and_finds_the_win() -> None:
    """The compiled MCTS (core/_mcts.pxi on this engine) answers a legal action, the same for the
    same seed, leaves the position alone, takes a win on the table, and refuses a roll."""
    game = _game(players=2)
    assert game.compiled() is compiled  # the hook through which agents (``strong``) find the search
    py = game.state_from_json(_winning_position(game))
    before = py.to_json()
    winning = set()
    for a in py.legal_actions():
        after = py.clone()
        after.apply_action(a)
        if after.returns() == [1.0, 0.0]:
            winning.add(a)
    assert winning and len(winning) < len(py.legal_actions())
    for seed in range(5):
        action = compiled.search(py, 1000, 0.4, 10, seed)
        assert action in winning
        assert compiled.search(py, 1000, 0.4, 10, seed) == action
    assert py.to_json() == before
    rng = random.Random(3)
    for players in (3, 6):
        state = _game(players=players).new_initial_state()
        for _ in range(200):
            if state.is_terminal():
                break
            if not state.is_chance_node():
                assert compiled.search(state, 200, 0.4, 10, 1, evaluate=rng.random() < 0.5) in state.legal_actions()
            state.apply_unchecked(random_action(state, rng))
    with pytest.raises(ValueError):
        compiled.search(_game(players=2).new_initial_state(), 100, 0.4, 10, 1)  # the roll-off: chance


@needs_compiled
@pytest.mark.parametrize(("options", "seed"), designer_cases("exactly"))
def test_designer_variants_play_the_python_engines_playthrough(options: dict[str, Any], seed: int) -> None:
    """A designer's variant (the rulebook's numbers and switches changed) played on the compiled
    engine gives the Python engine's playthrough, text for text."""
    assert compiled.supports(ludoteca.load_game("exactly", **options))
    expected = python_text("exactly", options, seed, 300)
    assert generate_compiled("exactly", compiled.CompiledState, options, seed, 300) == expected
