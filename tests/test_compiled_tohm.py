"""The compiled TOHM engine (``ludoteca.games.tohm.compiled``) plays exactly the Python engine.

Differential: a thousand seeded random games per player count, and games under other options
(layouts 3x3 to 10x10, short turn limits); at every step the same current player, legal actions
(same ids, same order), chance outcomes, position and, at the end, returns. Every golden
playthrough of TOHM is regenerated on the compiled engine, text for text. The C playout loop plays
legal actions, uniformly, and leaves its start position alone. Without the extension,
``available()`` is False and callers get one warning and the Python engine.
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
from ludoteca.games.tohm import TohmGame, TohmState, compiled, heuristic
from tests.compiled_playthroughs import cases as playthrough_cases
from tests.compiled_playthroughs import designer_cases, python_text
from tests.compiled_playthroughs import generate as generate_compiled

needs_compiled = pytest.mark.skipif(not compiled.available(),
                                    reason="compiled TOHM engine not built (pip install -e .)")
pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)

PLAYTHROUGHS = Path(__file__).parent / "playthroughs"
GAMES_PER_PLAYER_COUNT = 1000
"""Seeded games per player count (every step compared; the position JSON in full every 10th game);
the hypothesis tests below add games from any seed, layout and turn limit."""


def _game(**options: Any) -> TohmGame:
    game = ludoteca.load_game("tohm", **options)
    assert isinstance(game, TohmGame)
    return game


def _fields(s: TohmState) -> tuple[Any, ...]:
    return (s.board, s.supply, s.trophies, s.trophies_left, s.to_move, s.phase, s.roll, s.turn,
            (s.n_tris, s.n_tris_others, s.n_trophies, s.n_removes, s.n_moves, s.n_places, s.n_passes))


def play_both(game: TohmGame, seed: int, full_json: bool = True, checked: bool = False) -> int:
    """One seeded random game on both engines, compared at every step; returns its length."""
    py = game.new_initial_state()
    c = compiled.CompiledState.initial(game)
    rng = random.Random(seed)
    steps = 0
    while True:
        assert c.current_player() == py.current_player(), (seed, steps)
        assert c.legal_actions() == py.legal_actions(), (seed, steps)
        assert c.chance_outcomes() == py.chance_outcomes(), (seed, steps)
        assert c.is_chance_node() == py.is_chance_node()
        if full_json:
            assert c.to_json() == py.to_json(), (seed, steps)
        else:
            assert c._c.fields() == _fields(py), (seed, steps)
        if py.is_terminal():
            assert c.is_terminal()
            assert c.returns() == py.returns(), seed
            assert c.counters() == py.counters(), seed
            return steps
        assert c.returns() == py.returns()
        action = random_action(py, rng)
        if checked:
            py.apply_action(action)
            c.apply_action(action)
        else:
            py.apply_unchecked(action)
            c.apply_unchecked(action)
        steps += 1


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_thousands_of_seeded_games(players: int) -> None:
    game = _game(players=players)
    for seed in range(GAMES_PER_PLAYER_COUNT):
        play_both(game, seed, full_json=seed % 10 == 0, checked=seed % 50 == 0)


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5))
@settings(max_examples=150, deadline=None)
def test_property_any_seed(seed: int, players: int) -> None:
    play_both(_game(players=players), seed)


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), rows=st.integers(3, 10), cols=st.integers(3, 10),
       turn_limit=st.integers(1, 400), data=st.data())
@settings(max_examples=80, deadline=None)
def test_property_options(seed: int, players: int, rows: int, cols: int, turn_limit: int, data: Any) -> None:
    """The options that change play: any layout (3x3 to 10x10, numbers 3-6) and any turn limit."""
    layout = data.draw(st.lists(st.lists(st.integers(3, 6), min_size=cols, max_size=cols), min_size=rows,
                                max_size=rows))
    game = _game(players=players, layout=layout, turn_limit=turn_limit)
    assert compiled.supports(game)
    play_both(game, seed)


@st.composite
def rulebook_options(draw: st.DrawFn) -> dict[str, Any]:
    """The rulebook's numbers and switches set as a designer would: tokens, trophies, the tris's
    length and what each die face does, on any layout."""
    rows, cols = draw(st.integers(3, 7)), draw(st.integers(3, 7))
    layout = draw(st.lists(st.lists(st.integers(3, 6), min_size=cols, max_size=cols), min_size=rows, max_size=rows))
    tokens = draw(st.integers(2, 8))
    options: dict[str, Any] = {
        "players": draw(st.integers(2, 5)), "layout": layout, "tokens": tokens, "trophies": draw(st.integers(1, 15)),
        "tris": draw(st.integers(2, min(tokens, max(rows, cols)))), "turn_limit": draw(st.integers(1, 300))}
    for d in range(1, 7):
        options[f"face_{d}"] = draw(st.booleans())
    options["place_anywhere"] = draw(st.booleans())
    return options


@needs_compiled
@given(options=rulebook_options(), seed=st.integers(0, 2**32))
@settings(max_examples=200, deadline=None)
def test_property_rulebook_options(options: dict[str, Any], seed: int) -> None:
    """Tokens per player, trophies, the tris's length, each die face: both engines play them alike,
    step for step, and the C evaluation equals ``heuristic.value``."""
    game = _game(**options)
    assert compiled.supports(game)
    play_both(game, seed, checked=seed % 2 == 0)
    rng = random.Random(seed)
    py = game.new_initial_state()
    for _ in range(80):
        got = compiled.CompiledState.from_state(py)._c.value()
        want = heuristic.value(py)
        assert all(abs(a - b) < 1e-9 for a, b in zip(got, want, strict=True)), (got, want, py.to_json())
        if py.is_terminal():
            break
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_value_equals_the_heuristic_at_the_rulebook_values(players: int) -> None:
    game = _game(players=players)
    rng = random.Random(players)
    py = game.new_initial_state()
    for _ in range(1500):
        got = compiled.CompiledState.from_state(py)._c.value()
        assert all(abs(a - b) < 1e-9 for a, b in zip(got, heuristic.value(py), strict=True)), py.to_json()
        if py.is_terminal():
            py = game.new_initial_state()
        else:
            py.apply_unchecked(random_action(py, rng))


@needs_compiled
@pytest.mark.parametrize("turn_limit", [1, 2, 7, 40])
@pytest.mark.parametrize("players", [2, 5])
def test_turn_limit_ends(players: int, turn_limit: int) -> None:
    game = _game(players=players, turn_limit=turn_limit)
    for seed in range(30):
        play_both(game, seed)


@needs_compiled
@pytest.mark.parametrize(("stem", "options", "seed", "limit"), playthrough_cases("tohm"),
                         ids=[c[0] for c in playthrough_cases("tohm")])
def test_golden_playthroughs_on_compiled(stem: str, options: dict[str, Any], seed: int, limit: int) -> None:
    expected = (PLAYTHROUGHS / f"{stem}.txt").read_text(encoding="utf-8")
    assert generate_compiled("tohm", compiled.CompiledState, options, seed, limit) == expected


def test_every_tohm_playthrough_is_replayed() -> None:
    stems = sorted(p.stem for p in PLAYTHROUGHS.glob("tohm_*.txt"))
    assert stems == sorted(c[0] for c in playthrough_cases("tohm"))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_positions_round_trip_mid_game(players: int) -> None:
    """A Python position (from JSON or a state) compiled and back is the same; play goes on equal."""
    game = _game(players=players)
    rng = random.Random(players)
    py = game.new_initial_state()
    for _ in range(300):
        if py.is_terminal():
            break
        data = py.to_json()
        c = compiled.CompiledState.from_json(game, data)
        assert c.to_json() == data
        back = c.to_state()
        assert back.to_json() == data
        assert back.legal_actions() == py.legal_actions()
        assert c.clone().to_json() == data
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
def test_apply_action_refuses_illegal() -> None:
    c = compiled.CompiledState.initial(_game(players=2))
    before = c.to_json()
    with pytest.raises(IllegalActionError):
        c.apply_action(7)  # a placement at a roll
    assert c.to_json() == before


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 5])
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
    """The C sampler never lists actions (a 2 picks a filled cell and an empty one by one draw):
    its choice is legal, and uniform over the legal list."""
    game = _game(players=3)
    rng = random.Random(5)
    py = game.new_initial_state()
    seen_move = False
    for step in range(400):
        if py.is_terminal():
            break
        c = compiled.CompiledState.from_state(py)
        legal = py.legal_actions()
        if step % 20 == 0 or (py.roll == 2 and len(legal) > 1 and not seen_move):
            draws = 60 * len(legal)
            counts = Counter(c.sample_action(seed * 7919 + step) for seed in range(draws))
            assert set(counts) == set(legal), step
            # each count is Binomial(draws, 1/len): within 6 standard deviations of 60
            sd = (draws * (1 / len(legal)) * (1 - 1 / len(legal))) ** 0.5
            assert all(abs(k - 60) <= 6 * sd + 1 for k in counts.values()), (step, counts)
            seen_move |= py.roll == 2 and len(legal) > 1
        py.apply_unchecked(random_action(py, rng))
    assert seen_move


@needs_compiled
def test_playout_results_match_the_python_distribution() -> None:
    """Mean returns of C playouts and Python playouts from one position agree (5 standard errors)."""
    game = _game(players=2)
    state = game.new_initial_state()
    c_out = compiled.playouts(state, 20000, seed=11)
    rng = random.Random(11)
    py_out = []
    for _ in range(1500):
        s = state.clone()
        while not s.is_terminal():
            s.apply_unchecked(random_action(s, rng))
        py_out.append(s.returns())
    for seat in range(2):
        mc = sum(r[seat] for r in c_out) / len(c_out)
        mp = sum(r[seat] for r in py_out) / len(py_out)
        se = (0.25 / len(py_out) + 0.25 / len(c_out)) ** 0.5
        assert abs(mc - mp) < 5 * se, (seat, mc, mp)


def test_fallback_without_the_extension(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The extension failing to import: available() is False, one warning, the Python engine plays."""
    import ludoteca.games.tohm as package

    monkeypatch.setitem(sys.modules, "ludoteca.games.tohm._compiled", None)  # import raises ImportError
    monkeypatch.delattr(package, "_compiled", raising=False)
    fallback = importlib.reload(compiled)
    try:
        assert not fallback.available()
        game = _game(players=2)
        state = game.new_initial_state()
        assert not fallback.supports(game)
        assert "not built" in fallback.unsupported(game)
        with caplog.at_level(logging.WARNING, logger="ludoteca.games.tohm.compiled"):
            assert fallback.compile_state(state) is None
            out = fallback.playouts(state, 20, seed=1)
            fallback.playouts(state, 5, seed=2)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "Python TOHM engine" in warnings[0].getMessage()
        assert len(out) == 20 and all(abs(sum(r) - 1.0) < 1e-9 for r in out)
        assert fallback.playouts(state, 20, seed=1) == out  # seeded in Python too
    finally:
        monkeypatch.undo()
        importlib.reload(compiled)


@needs_compiled
@pytest.mark.parametrize(("options", "seed"), designer_cases("tohm"))
def test_designer_variants_play_the_python_engines_playthrough(options: dict[str, Any], seed: int) -> None:
    """A designer's variant (the rulebook's numbers and switches changed) played on the compiled
    engine gives the Python engine's playthrough, text for text."""
    assert compiled.supports(ludoteca.load_game("tohm", **options))
    expected = python_text("tohm", options, seed, 300)
    assert generate_compiled("tohm", compiled.CompiledState, options, seed, 300) == expected
