"""The compiled EXAGON engine (``ludoteca.games.exagon.compiled``) plays exactly the Python engine.

Differential: thousands of seeded random games per player count (the default game: a 60 s clock),
and games under every other option (no clock, other clocks and carry caps, lenient matching,
tournaments, turn limits, designers' tile sets of any size the compiled engine takes, with tiles
set aside or a table tile); at every
step the same current player, legal actions (same ids, same order), chance outcomes and
probabilities, position and, at the end, returns and lab counters. Every golden playthrough of
EXAGON is regenerated on the compiled engine, text for text. The C playout loop plays legal
actions, uniformly, leaves its start position alone, and its games end like the Python engine's.
Without the extension, or with a set beyond it, callers get one warning and the Python engine.
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
from ludoteca.games.exagon import ExagonGame, ExagonState, compiled, default_tiles
from tests.compiled_playthroughs import cases as playthrough_cases
from tests.compiled_playthroughs import designer_cases, python_text
from tests.compiled_playthroughs import generate as generate_compiled

needs_compiled = pytest.mark.skipif(not compiled.available(),
                                    reason="compiled EXAGON engine not built (see docs/compiled.md)")
pytestmark = pytest.mark.compiled  # under CI=true a skip is a failure (tests/ci_required.py)

PLAYTHROUGHS = Path(__file__).parent / "playthroughs"
GAMES_PER_PLAYER_COUNT = 1000
"""Seeded games per player count (every step compared; the position JSON in full every 10th game)."""


def _game(**options: Any) -> ExagonGame:
    game = ludoteca.load_game("exagon", **options)
    assert isinstance(game, ExagonGame)
    return game


def _fields(s: ExagonState) -> tuple[Any, ...]:
    """The Python state's fields in the order of the compiled ``fields()``."""
    from ludoteca.games.exagon import END_REASONS

    res = s.result
    return (s.phase, s.owner, s.hands, s.aside, s.table, s.dealt, s.to_move, s.turn, s.placed, s.bonus, s.passes,
            s.clock_left, s.carry, s.points, None if res is None else res["winners"],
            0 if res is None else END_REASONS.index(res["end"]), tuple(s.counts[n] for n in compiled.COUNTER_NAMES),
            s.games)


def play_both(game: ExagonGame, seed: int, full_json: bool = True, checked: bool = False, json_every: int = 1,
              max_steps: int = 6000) -> int:
    """One seeded random game on both engines, compared at every step (the position's raw fields,
    from which ``to_json`` is built, or with ``full_json`` the JSON itself every ``json_every``
    steps and the fields at the others); returns its length."""
    py = game.new_initial_state()
    c = compiled.CompiledState.initial(game)
    rng = random.Random(seed)
    steps = 0
    while True:
        assert c.current_player() == py.current_player(), (seed, steps)
        assert c.legal_actions() == py.legal_actions(), (seed, steps)
        assert c.chance_outcomes() == py.chance_outcomes(), (seed, steps)
        assert c.is_chance_node() == py.is_chance_node()
        if full_json and steps % json_every == 0:
            assert c.to_json() == py.to_json(), (seed, steps)
            assert c.time_left() == py.time_left()
        else:
            assert c._c.fields() == _fields(py), (seed, steps)
        if py.is_terminal():
            assert c.is_terminal()
            assert c.returns() == py.returns(), seed
            assert c.counters() == py.counters(), seed
            assert c.end_reason() == py.end_reason()
            return steps
        assert c.returns() == py.returns()
        if steps >= max_steps:  # a tournament with a very short turn limit may never end
            return steps
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
        play_both(game, seed, full_json=seed % 20 == 0, checked=seed % 50 == 0)


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5))
@settings(max_examples=100, deadline=None)
def test_property_any_seed(seed: int, players: int) -> None:
    play_both(_game(players=players), seed)


@st.composite
def tile_sets(draw: Any, players: int) -> list[dict[str, Any]]:
    """A designer's tile set of ``players`` to 40 tiles: random numbers, a Jolly or an Exagon area
    on some tiles, any ids; distinct up to rotation (a rare duplicate is redrawn)."""
    count = draw(st.integers(players, 40))
    ids = draw(st.lists(st.integers(0, 10**6), min_size=count, max_size=count, unique=True))
    tiles, shapes = [], set()
    for tid in ids:
        while True:
            sides: list[Any] = draw(st.lists(st.integers(1, 9), min_size=6, max_size=6))
            special = draw(st.sampled_from([None, None, None, "J", "X"]))
            if special is not None:
                sides[draw(st.integers(0, 5))] = special
            codes = tuple(10 if x == "J" else 11 if x == "X" else x for x in sides)
            shape = min(codes[i:] + codes[:i] for i in range(6))
            if shape not in shapes:
                shapes.add(shape)
                break
        star = sum(x for x in sides if isinstance(x, int))
        tiles.append({"id": tid, "sides": sides, "star": star, "star_points": draw(st.integers(0, 6))})
    return tiles


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), clock=st.sampled_from([None, 60, 0.25, 7.5]),
       tournament=st.booleans(), turn_limit=st.integers(1, 120), tournament_games=st.sampled_from([1, 2, 5, 1000]),
       matching=st.sampled_from(["strict", "lenient"]), data=st.data())
@settings(max_examples=60, deadline=None)
def test_property_options(seed: int, players: int, clock: float | None, tournament: bool, turn_limit: int,
                          tournament_games: int, matching: str, data: Any) -> None:
    """Every option: the clock (and its carry_cap), tournaments (and their bound on games), turn
    limits, matching and designers' tile sets (2 to 40 tiles)."""
    tiles = data.draw(st.one_of(st.none(), tile_sets(players)))
    cap = data.draw(st.sampled_from(["default", None, 0, 0.1, 30]))
    extra = {} if cap == "default" else {"carry_cap": cap}
    game = _game(players=players, clock=clock, tournament=tournament, turn_limit=turn_limit, tiles=tiles,
                 tournament_games=tournament_games, matching=matching, **extra)
    assert compiled.supports(game)
    play_both(game, seed, json_every=5)


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("options", [{"matching": "lenient"}, {"matching": "lenient", "clock": None},
                                     {"matching": "lenient", "tournament": True, "clock": None},
                                     {"matching": "lenient", "carry_cap": None}])
def test_lenient_games(players: int, options: dict[str, Any]) -> None:
    """``matching="lenient"``: the open cells keep what fits any neighbour, connections are counted
    per tile and rotation (the matching sides); seeded games equal step by step."""
    game = _game(players=players, **options)
    for seed in range(40):
        play_both(game, seed, full_json=seed % 4 == 0, checked=seed % 10 == 0)


@needs_compiled
@pytest.mark.parametrize("options", [{"carry_cap": 2}, {"carry_cap": None}, {"carry_cap": 0, "matching": "lenient"},
                                     {"clock": 5, "carry_cap": 1.5, "tournament": True}])
def test_the_carry_cap_is_mirrored(options: dict[str, Any]) -> None:
    """Time spent and carried under every cap: the capped carry, the next turn's time_left and the
    timeout, equal on both engines."""
    game = _game(players=3, **options)
    rng = random.Random(9)
    py = game.new_initial_state()
    c = compiled.CompiledState.initial(game)
    capped = 0
    for step in range(1500):
        if py.is_terminal():
            break
        left = py.time_left()
        action = game.timeout_action if left is not None and step % 13 == 0 else random_action(py, rng)
        elapsed = None if left is None else rng.choice([0.0, min(0.25, left), min(1.75, left)])
        py.apply_action(action, elapsed=elapsed)
        c.apply_action(action, elapsed=elapsed)
        got = py.to_json()
        assert c.to_json() == got, step
        cap = game.carry_cap
        if got["carry"] is not None and cap is not None:
            assert got["carry"] <= cap
            capped += got["carry"] == cap
    assert capped or game.carry_cap is None


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_tournaments(players: int) -> None:
    """Tournaments: one-shot games dealt again and again until someone has 50 points."""
    game = _game(players=players, tournament=True, clock=None)
    for seed in range(15):
        play_both(game, seed, full_json=seed % 3 == 0)


@needs_compiled
@pytest.mark.parametrize(("count", "players"), [(7, 3), (9, 4), (11, 5), (12, 5), (2, 2), (5, 2)])
def test_sets_with_a_table_tile_or_tiles_aside(count: int, players: int) -> None:
    """The last tile of a deal goes to the table (one left over) or aside (two or more)."""
    game = _game(players=players, tiles=default_tiles()[:count], clock=None)
    for seed in range(60):
        play_both(game, seed)


@needs_compiled
@pytest.mark.parametrize("turn_limit", [1, 2, 7, 40])
@pytest.mark.parametrize("players", [2, 5])
def test_turn_limit_ends(players: int, turn_limit: int) -> None:
    game = _game(players=players, turn_limit=turn_limit)
    for seed in range(20):
        play_both(game, seed)


@needs_compiled
@pytest.mark.parametrize(("stem", "options", "seed", "limit"), playthrough_cases("exagon"),
                         ids=[c[0] for c in playthrough_cases("exagon")])
def test_golden_playthroughs_on_compiled(stem: str, options: dict[str, Any], seed: int, limit: int) -> None:
    expected = (PLAYTHROUGHS / f"{stem}.txt").read_text(encoding="utf-8")
    assert generate_compiled("exagon", compiled.CompiledState, options, seed, limit) == expected


def test_every_exagon_playthrough_is_replayed() -> None:
    stems = sorted(p.stem for p in PLAYTHROUGHS.glob("exagon_*.txt"))
    assert stems
    assert stems == sorted(c[0] for c in playthrough_cases("exagon"))


@needs_compiled
@pytest.mark.parametrize(("players", "options"), [(2, {}), (3, {"tournament": True}), (4, {"clock": None}),
                                                  (5, {"tiles": default_tiles()[:13]}),
                                                  (3, {"matching": "lenient", "carry_cap": 12})])
def test_positions_round_trip_mid_game(players: int, options: dict[str, Any]) -> None:
    """A Python position (from JSON or a state) compiled and back is the same; play goes on equal."""
    game = _game(players=players, **options)
    rng = random.Random(players)
    py = game.new_initial_state()
    for _ in range(250):
        if py.is_terminal():
            break
        data = py.to_json()
        c = compiled.CompiledState.from_json(game, data)
        assert c.to_json() == data
        assert c.legal_actions() == py.legal_actions()
        back = c.to_state()
        assert back.to_json() == data
        assert back.legal_actions() == py.legal_actions()
        assert back.render() == game.state_from_json(data).render()
        assert c.clone().to_json() == data
        py.apply_unchecked(random_action(py, rng))


@needs_compiled
def test_the_hourglass_is_mirrored() -> None:
    """``elapsed`` is charged as by the Python engine, too much of it is refused, and the timeout
    (never listed) is accepted in a clocked turn only."""
    game = _game(players=3, clock=10)
    rng = random.Random(4)
    py = game.new_initial_state()
    c = compiled.CompiledState.initial(game)
    timeouts = refused = 0
    for step in range(600):
        if py.is_terminal():
            break
        left = py.time_left()
        assert c.time_left() == left
        if left is not None and step % 7 == 0:
            action = game.timeout_action
            timeouts += 1
        else:
            action = random_action(py, rng)
        elapsed = None if left is None else rng.choice([0.0, min(0.5, left), min(3.25, left), left])
        if left is not None and step % 11 == 0:
            before = c.to_json()
            with pytest.raises(IllegalActionError):
                py.apply_action(action if action != game.timeout_action else py.legal_actions()[0],
                                elapsed=left + 1)
            with pytest.raises(IllegalActionError):
                c.apply_action(action if action != game.timeout_action else c.legal_actions()[0], elapsed=left + 1)
            assert c.to_json() == before == py.to_json()
            refused += 1
        py.apply_action(action, elapsed=elapsed)
        c.apply_action(action, elapsed=elapsed)
        assert c.to_json() == py.to_json(), step
        assert c.counters() == py.counters()
    assert timeouts and refused
    opening = compiled.CompiledState.initial(game)
    while opening.is_chance_node():
        opening.apply_action(opening.legal_actions()[0])
    with pytest.raises(IllegalActionError):  # no clock during the opening
        opening.apply_action(game.timeout_action)


@needs_compiled
def test_apply_action_refuses_illegal() -> None:
    game = _game(players=2)
    c = compiled.CompiledState.initial(game)
    before = c.to_json()
    for bad in (game.stop_action, game.pass_action, game.timeout_action, game.place0, -1, 10**9):
        with pytest.raises(IllegalActionError):
            c.apply_action(bad)
    assert c.to_json() == before


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 5])
def test_playouts_leave_the_start_and_end_the_games(players: int) -> None:
    game = _game(players=players)
    rng = random.Random(1)
    py = game.new_initial_state()
    for _ in range(45):
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
    """The C sampler never lists actions (it counts the placements per open cell and picks one,
    or a gift, or stop, by one draw): its choice is legal, and uniform over the legal list."""
    game = _game(players=3, tiles=default_tiles()[:16], clock=None)
    seen_give = False
    for seed in range(300):  # gifts are rare: a few of these games have one
        rng = random.Random(seed)
        py = game.new_initial_state()
        for step in range(400):
            if py.is_terminal():
                break
            legal = py.legal_actions()
            gives = any(game.give0 <= a < game.stop_action for a in legal)
            if not py.is_chance_node() and 1 < len(legal) <= 60 and ((seed < 30 and step % 9 == 0) or gives):
                c = compiled.CompiledState.from_state(py)
                draws = 60 * len(legal)
                counts = Counter(c.sample_action(seed * 7919 + step * 104729 + k) for k in range(draws))
                assert set(counts) == set(legal), step
                # each count is Binomial(draws, 1/len): within 6 standard deviations of 60
                sd = (draws * (1 / len(legal)) * (1 - 1 / len(legal))) ** 0.5
                assert all(abs(k - 60) <= 6 * sd + 1 for k in counts.values()), (step, counts)
                seen_give = seen_give or gives
            py.apply_unchecked(random_action(py, rng))
    assert seen_give


@needs_compiled
@pytest.mark.parametrize("players", [2, 4])
def test_playout_results_match_the_python_distribution(players: int) -> None:
    """Mean returns and game lengths of C playouts and Python playouts from one position agree
    (5 standard errors)."""
    game = _game(players=players, clock=None)
    state = game.new_initial_state()
    core = compiled.CompiledState.from_state(state)
    c_out = core.playouts(20000, seed=11)
    c_len = core._c.last_actions / 20000
    rng = random.Random(11)
    py_out, py_lens = [], []
    n = 500
    for _ in range(n):
        s = state.clone()
        k = 0
        while not s.is_terminal():
            s.apply_unchecked(random_action(s, rng))
            k += 1
        py_out.append(s.returns())
        py_lens.append(k)
    for seat in range(players):
        mc = sum(r[seat] for r in c_out) / len(c_out)
        mp = sum(r[seat] for r in py_out) / n
        var = mp * (1 - mp) + 1e-3
        se = (var / n + var / len(c_out)) ** 0.5
        assert abs(mc - mp) < 5 * se, (seat, mc, mp)
    mean = sum(py_lens) / n
    sd = (sum((x - mean) ** 2 for x in py_lens) / (n - 1)) ** 0.5
    assert abs(c_len - mean) < 5 * sd * (1 / n + 1 / 20000) ** 0.5, (c_len, mean)


@needs_compiled
def test_a_set_beyond_the_compiled_engine_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    """More than 40 tiles: unsupported() says so, playouts() warns once and plays in Python."""
    extra = [{"id": 100 + i, "sides": [1, 1, 1, 1, 1, 1 + i], "star": 6 + i, "star_points": 0} for i in range(1, 4)]
    game = _game(players=2, tiles=default_tiles() + extra, clock=None)
    assert "at most 40 tiles" in compiled.unsupported(game)
    with pytest.raises(RuntimeError):
        compiled.CompiledState.initial(game)
    monkey = pytest.MonkeyPatch()
    monkey.setattr(compiled, "_warned", False)
    try:
        with caplog.at_level(logging.WARNING, logger="ludoteca.games.exagon.compiled"):
            out = compiled.playouts(game.new_initial_state(), 3, seed=1)
            compiled.playouts(game.new_initial_state(), 2, seed=2)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "43" in warnings[0].getMessage()
        assert len(out) == 3 and all(abs(sum(r) - 1.0) < 1e-9 for r in out)
    finally:
        monkey.undo()


def test_fallback_without_the_extension(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The extension failing to import: available() is False, one warning, the Python engine plays."""
    import ludoteca.games.exagon as package

    monkeypatch.setitem(sys.modules, "ludoteca.games.exagon._compiled", None)  # import raises ImportError
    monkeypatch.delattr(package, "_compiled", raising=False)
    fallback = importlib.reload(compiled)
    try:
        assert not fallback.available()
        game = _game(players=2, turn_limit=30)
        state = game.new_initial_state()
        assert not fallback.supports(game)
        assert "not built" in fallback.unsupported(game)
        with caplog.at_level(logging.WARNING, logger="ludoteca.games.exagon.compiled"):
            assert fallback.compile_state(state) is None
            out = fallback.playouts(state, 10, seed=1)
            fallback.playouts(state, 3, seed=2)
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert "Python EXAGON engine" in warnings[0].getMessage()
        assert len(out) == 10 and all(abs(sum(r) - 1.0) < 1e-9 for r in out)
        assert fallback.playouts(state, 10, seed=1) == out  # seeded in Python too
    finally:
        monkeypatch.undo()
        importlib.reload(compiled)


@needs_compiled
def test_a_tournament_that_cannot_reach_50_ends_by_its_game_bound() -> None:
    """A tournament with a one-turn limit need not end by points (the opener wins each game, the
    other loses more, no one reaches 50): the bound on its games (option ``tournament_games``)
    ends it in both engines, the highest score winning; only a bound beyond the C playout's
    MAX_PLAYOUT_ACTIONS leaves a playout cut, unscored."""
    game = _game(players=2, clock=None, tournament=True, turn_limit=1, tournament_games=30)
    for seed in range(10):
        play_both(game, seed)
    state = game.new_initial_state()
    state.points = [-1000, -1000]  # 53 won games in a row to reach 50: the bound ends it first
    core = compiled.CompiledState.from_state(state)
    results = core.playouts(20, seed=1)
    assert all(sorted(r) in ([0.0, 1.0], [0.5, 0.5]) for r in results)
    assert core._c.last_actions < 20 * 30 * 45  # 30 games of a 40-tile deal and a turn or so
    huge = _game(players=2, clock=None, tournament=True, turn_limit=1, tournament_games=10**7)
    state = huge.new_initial_state()
    state.points = [-1000, -1000]
    core = compiled.CompiledState.from_state(state)
    assert core.playouts(1, seed=1) == [[0.0, 0.0]]
    assert core._c.last_actions == compiled._compiled.MAX_PLAYOUT_ACTIONS
    assert core.to_json() == state.to_json()


def test_a_bound_beyond_a_c_int_falls_back() -> None:
    game = _game(players=2, tournament=True, tournament_games=2**31)
    assert "tournament_games up to 2147483647" in compiled.unsupported(game)


# --- the evaluation and the compiled search (the ``strong`` agent) ---------------------------------

def _value_and_greedy_agree(game: ExagonGame, seed: int, json_every: int = 0) -> int:
    """One seeded random game on the Python engine; at every position the compiled ``value``
    equals ``heuristic.value`` (to 1e-12) and, where a player moves, the compiled greedy choice
    is ``heuristic.greedy_action`` (the search's rollouts) and its candidates are
    ``heuristic.candidates`` (the search's pruned nodes), same actions in the same order. Every
    ``json_every``-th position is also compiled from its JSON (the open cells rebuilt from the
    table keep the heuristic's order). Returns the positions."""
    from ludoteca.games.exagon import heuristic

    rng = random.Random(seed)
    s = game.new_initial_state()
    count = 0
    while True:
        c = compiled.CompiledState.from_state(s)
        expected = heuristic.value(s)
        assert c.value() == pytest.approx(expected, abs=1e-12, rel=0), (seed, count)
        if json_every and count % json_every == 0:
            assert compiled.CompiledState.from_json(game, s.to_json()).value() == pytest.approx(
                expected, abs=1e-12, rel=0)
        if s.current_player() >= 0:
            assert c.greedy_action() == heuristic.greedy_action(s, s.to_move), (seed, count)
            for limit in (3, compiled.SEARCH_PRUNE):
                assert c._c.candidates(limit) == heuristic.candidates(s, limit), (seed, count, limit)
        count += 1
        if s.is_terminal() or count > 600:
            return count
        s.apply_action(random_action(s, rng))


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("tournament", [False, True])
def test_the_compiled_evaluation_is_the_heuristics(players: int, tournament: bool) -> None:
    """``_value`` (the leaf evaluation of the compiled search) is ``heuristic.value`` in C, and so
    are its greedy rollouts and pruned nodes: over every position of seeded random games, with and
    without the clock, one-shot or tournament."""
    positions = 0
    for seed in range(6 if tournament else 25):  # a tournament: many deals, 600 positions each
        game = _game(players=players, tournament=tournament, clock=None if seed % 2 else 60)
        positions += _value_and_greedy_agree(game, seed, json_every=7)
    assert positions > 1000


@needs_compiled
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_compiled_evaluation_is_the_heuristics_when_lenient(players: int) -> None:
    """The same under ``matching="lenient"``, where a placement's connections are its matching
    sides (counted per tile and rotation in C as in the state's ``links``)."""
    positions = 0
    for seed in range(12):
        game = _game(players=players, matching="lenient", tournament=seed % 3 == 0, clock=None if seed % 2 else 60)
        positions += _value_and_greedy_agree(game, seed, json_every=7)
    assert positions > 500


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), turn_limit=st.integers(1, 120), data=st.data())
@settings(max_examples=40, deadline=None)
def test_property_the_compiled_evaluation_on_any_set(seed: int, players: int, turn_limit: int, data: Any) -> None:
    """The same on designers' tile sets (Jolly and Exagon areas, tables tiles, tiles aside) and
    short turn limits."""
    tiles = data.draw(st.one_of(st.none(), tile_sets(players)))
    game = _game(players=players, clock=None, tournament=data.draw(st.booleans()), turn_limit=turn_limit, tiles=tiles)
    _value_and_greedy_agree(game, seed, json_every=5)


def test_the_search_defaults_are_mcts_settings_for_exagon() -> None:
    """The compiled search prunes and rolls out as ``mcts`` does on EXAGON (its defaults)."""
    from ludoteca.games.exagon import heuristic

    mcts = ExagonGame.agent_defaults["mcts"]
    assert mcts["prune"] == compiled.SEARCH_PRUNE
    assert compiled.SEARCH_GREEDY is (mcts["rollout"] == "heuristic")
    if compiled.available():
        assert compiled._compiled.VALUE_SHARPNESS == heuristic.VALUE_K


def _decisions(game: ExagonGame, games: int, seed: int) -> list[ExagonState]:
    """Positions of seeded random games where a player chooses among several actions."""
    rng = random.Random(seed)
    out: list[ExagonState] = []
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            if not s.is_chance_node() and len(s.legal_actions()) > 1:
                out.append(s.clone())
            s.apply_action(random_action(s, rng))
    return out


@needs_compiled
@pytest.mark.parametrize("options", [{"players": 2, "clock": None}, {"players": 3}, {"players": 5, "clock": 7.5},
                                     {"players": 2, "tournament": True, "clock": None},
                                     {"players": 3, "matching": "lenient", "clock": None}])
def test_the_search_plays_legal_actions_and_leaves_the_position_alone(options: dict[str, Any]) -> None:
    game = _game(**options)
    positions = _decisions(game, 1, seed=4)
    assert len(positions) > 10
    for k, s in enumerate(positions):
        before = s.to_json()
        core = compiled.CompiledState.from_state(s)
        action = core._c.search(200, 0.3, k % 3 * 5, k, k % 2 == 0)
        assert action in s.legal_actions()
        assert s.to_json() == before and core.to_json() == before
        simulations, nodes, _rollout = core._c.last_stats
        assert simulations == 200 and nodes > 1


@needs_compiled
def test_the_search_is_the_same_for_the_same_seed() -> None:
    game = _game(players=2, clock=None)
    positions = _decisions(game, 2, seed=9)
    first = [compiled.search(s, 300, 0.3, 4, seed=5) for s in positions]
    assert first == [compiled.search(s, 300, 0.3, 4, seed=5) for s in positions]
    assert len(set(first)) > 1


@needs_compiled
def test_the_search_needs_a_player_to_move() -> None:
    game = _game(players=2)
    with pytest.raises(ValueError, match="a player is to move"):
        compiled.search(game.new_initial_state(), 100, 0.3, 0, seed=1)  # the deal: chance


def _first_position(game: ExagonGame, wanted: Any, seed: int = 0) -> tuple[ExagonState, list[int]]:
    """The first decision position of seeded random games where ``wanted(state, winning)`` holds,
    ``winning`` being the legal actions that win the game on the spot."""
    rng = random.Random(seed)
    while True:
        s = game.new_initial_state()
        while not s.is_terminal():
            if not s.is_chance_node():
                winning = []
                for a in s.legal_actions():
                    t = s.clone()
                    t.apply_action(a)
                    if t.is_terminal() and t.returns()[s.to_move] == 1.0:
                        winning.append(a)
                if wanted(s, winning):
                    return s, winning
            s.apply_action(random_action(s, rng))


def _perfect_fit_position() -> ExagonState:
    """A designer's set of ones: six tiles ring the empty cell [1, 0], each with its one other
    number facing out, so seat 0's all-ones tile fills the hole in any rotation (six connections:
    a perfect fit wins at once, RULES.md, End); its other placements (around the ring) do not."""
    directions = [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)]

    def tile(tid: int, sides: list[int]) -> dict[str, Any]:
        return {"id": tid, "sides": sides, "star": sum(sides), "star_points": 1}

    tiles = [tile(1, [1] * 6)] + [tile(k, [1, 1, 1, 1, 1, k]) for k in range(2, 8)]
    tiles += [tile(k, [1, 1, 1, 1, k - 5, k - 5]) for k in range(8, 13)]
    # ring tile k sits in direction d from the hole; rotation d + 1 turns its side k outwards
    ring = [{"tile": k, "at": [1 + dq, dr], "rot": (d + 1) % 6} for d, ((dq, dr), k) in enumerate(
        zip(directions, range(2, 8), strict=True))]
    ring.sort(key=lambda e: e["at"] != [0, 0])  # the opening tile first, on [0, 0]
    game = _game(players=2, clock=None, tiles=tiles)
    return game.state_from_json({
        "game": "exagon", "players": 2, "tiles": tiles, "table": ring, "hands": [[1, 8, 9], [10, 11, 12]],
        "aside": [], "to_move": 0, "phase": "turn", "turn": 6, "placed_this_turn": 0, "bonus": 0,
        "time_left": None, "carry": None, "scores": None, "clock": None, "passes": 0, "result": None})


@needs_compiled
def test_the_search_finds_a_perfect_fit() -> None:
    s = _perfect_fit_position()
    winning = []
    for a in s.legal_actions():
        t = s.clone()
        t.apply_action(a)
        if t.is_terminal():
            assert t.returns() == [1.0, 0.0] and t.end_reason() == "perfect_fit"
            winning.append(a)
    assert [s.action_to_string(a) for a in winning] == [f"t1@1,0r{k}" for k in range(6)]
    assert len(s.legal_actions()) > 10 * len(winning)
    for seed in range(6):
        assert compiled.search(s, 300, 0.3, 10, seed=seed) in winning  # the strong agent's search


@needs_compiled
def test_the_search_places_its_last_tile() -> None:
    """With one tile left mid-turn, any placement wins; ``stop`` would hand the turn on."""
    game = _game(players=3, clock=None)

    def last_tile(s: ExagonState, winning: list[int]) -> bool:
        return len(s.hands[s.to_move]) == 1 and game.stop_action in s.legal_actions() and len(winning) > 0

    s, winning = _first_position(game, last_tile, seed=1)
    assert set(s.legal_actions()) == {*winning, game.stop_action}
    for seed in range(4):
        assert compiled.search(s, 300, 0.3, 0, seed=seed) in winning


@needs_compiled
@pytest.mark.parametrize(("options", "seed"), designer_cases("exagon"))
def test_designer_variants_play_the_python_engines_playthrough(options: dict[str, Any], seed: int) -> None:
    """The rulebook's numbers changed (tiles per hand, bonuses, connections to go on, tournament
    points): the compiled engine gives the Python engine's playthrough, text for text."""
    assert compiled.supports(ludoteca.load_game("exagon", **options))
    expected = python_text("exagon", options, seed, 300)
    assert generate_compiled("exagon", compiled.CompiledState, options, seed, 300) == expected


@needs_compiled
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), data=st.data())
@settings(max_examples=60, deadline=None)
def test_property_rulebook_numbers(seed: int, players: int, data: Any) -> None:
    """Tiles per hand, the bonus table, the connections to go on and the tournament's points, at any
    value: both engines play alike, step for step."""
    options: dict[str, Any] = {
        "players": players, "clock": None, "hand": data.draw(st.integers(1, 40 // players)),
        "bonus_3": data.draw(st.integers(0, 3)), "bonus_4": data.draw(st.integers(0, 4)),
        "bonus_5": data.draw(st.integers(0, 5)), "go_on": data.draw(st.integers(1, 6)),
        "tournament": data.draw(st.booleans()), "tournament_target": data.draw(st.integers(1, 60)),
        "win_points": data.draw(st.integers(0, 30)), "jolly_penalty": data.draw(st.integers(0, 9)),
        "turn_limit": data.draw(st.integers(1, 200)), "tournament_games": data.draw(st.integers(1, 4))}
    game = _game(**options)
    assert compiled.supports(game)
    play_both(game, seed, json_every=5)
