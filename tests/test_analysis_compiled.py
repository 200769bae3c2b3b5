"""The analysis on the compiled search and its luck estimates (docs/analysis.md "Speed", "Chance").

Hand-checked scenarios: a TOHM position where one move wins outright (RULES.md section 3: the tris
that gives the tenth trophy) and another only shares the win is valued 1 and 1/2 by the compiled
search as by the Python one, so the gift is a blunder of 1/2. The compiled search's root statistics
are those of the search ``strong`` plays (the same seed, the same most visited action). On EXAGON's
deal (RULES.md section 4: the tiles are dealt one by one at random), the luck of the last tile, the
only outcome left, is exactly 0; the luck of a deal's outcomes averages to 0; the luck of the tiles
dealt in a row adds up to the change of one estimate (the estimates' noise does not pile up).
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from ludoteca.agents import make_agent
from ludoteca.analysis import SearchEvaluator, luck
from ludoteca.analysis.evaluators import compiled_values, default_iterations
from ludoteca.analysis.review import Memo, completed, completions, coupled_outcome, decision, expected, weighable
from ludoteca.core.chance import random_action
from ludoteca.core.compiled import ENGINE_VARIABLE
from ludoteca.core.game import State
from ludoteca.registry import load_game
from tests.test_analysis import position

EXAGON = load_game("exagon", players=2)
needs_compiled = pytest.mark.skipif(compiled_values(EXAGON) is None or compiled_values(load_game("tohm")) is None,
                                    reason="compiled engines not built (pip install -e .)")


@needs_compiled
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_the_gift_of_a_shared_win_is_a_blunder_on_either_search(engine: str) -> None:
    # seat 0 leads 5-4 with one trophy left and rolled a 2: moving its own token completes its row
    # (the tenth trophy: a win, 1); moving seat 1's completes seat 1's row (5-5: a shared win, 1/2)
    state = position([[0, 0, None], [None, 0, 1], [1, 1, None]], (5, 4), roll=2)
    winning = state.action_from_json({"move": [[1, 1], [0, 2]]})
    gift = state.action_from_json({"move": [[1, 2], [2, 2]]})
    ev = SearchEvaluator(state.game, iterations=400, engine=engine)
    assert (ev._compiled is not None) == (engine == "auto")
    played, best, best_action = decision(ev, state, gift)
    assert (played, best, best_action) == (0.5, 1.0, winning)


@needs_compiled
@pytest.mark.parametrize("name", ["tohm", "exactly", "exagon"])
def test_the_root_statistics_are_those_of_the_search_strong_plays(name: str) -> None:
    game = load_game(name, players=2)
    module = game.compiled()
    assert module is not None
    rng = random.Random(5)
    state = game.new_initial_state()
    checked = 0
    while not state.is_terminal() and checked < 3:
        if not state.is_chance_node() and len(state.legal_actions()) > 1:
            for seed in (1, 2):
                stats = module.search_values(state, 300, 0.4, 10, seed)
                assert sum(n for n, _w in stats.values()) == 300
                assert set(stats) <= set(state.legal_actions())
                assert all(0.0 <= w <= n for n, w in stats.values())
                most = max(stats, key=lambda a: (stats[a][0], stats[a][1] / stats[a][0], -a))
                assert most == module.search(state, 300, 0.4, 10, seed)
            checked += 1
        state.apply_action(random_action(state, rng))
    assert checked == 3


@needs_compiled
def test_the_compiled_search_is_the_default_and_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SearchEvaluator(EXAGON)._compiled is not None
    assert default_iterations(EXAGON) == 5 * default_iterations(EXAGON, "python")
    monkeypatch.setenv(ENGINE_VARIABLE, "python")
    assert SearchEvaluator(EXAGON)._compiled is None and default_iterations(EXAGON) == default_iterations(
        EXAGON, "python")
    with pytest.raises(ValueError, match="engine"):
        SearchEvaluator(EXAGON, engine="fast")


def test_coupled_draws_follow_the_probabilities() -> None:
    outcomes = [(7, 0.5), (8, 0.3), (9, 0.2)]
    counts = Counter(coupled_outcome(outcomes, 0, chain, 0) for chain in range(20_000))
    for outcome, p in outcomes:
        sd = math.sqrt(20_000 * p * (1 - p))
        assert abs(counts[outcome] - 20_000 * p) < 5 * sd
    assert coupled_outcome([(3, 0.0), (4, 1.0)], 0, 1, 0) == 4


def dealing(tiles_left: int, seed: int = 3) -> State:
    """EXAGON's deal with ``tiles_left`` tiles still to deal (earlier tiles drawn by a seeded generator)."""
    state = EXAGON.new_initial_state()
    rng = random.Random(seed)
    while len(state.chance_outcomes()) > tiles_left:
        state.apply_action(random_action(state, rng))
    assert state.is_chance_node()
    return state


def test_a_deal_is_estimated_by_completions_and_a_die_outcome_by_outcome() -> None:
    assert not weighable(dealing(20)) and not weighable(dealing(5))
    assert weighable(dealing(1)) and weighable(dealing(2))  # the last two tiles: every order weighed
    tohm = load_game("tohm", players=3).new_initial_state()
    assert tohm.is_chance_node() and weighable(tohm)


@needs_compiled
def test_the_luck_of_the_only_tile_left_is_zero() -> None:
    state = dealing(1)
    ev = SearchEvaluator(EXAGON, iterations=200)
    (only, _p), = state.chance_outcomes()
    gained, after = luck(ev, state, only)
    assert gained == [0.0, 0.0]
    end = state.clone()
    end.apply_action(only)
    assert after == ev.for_chance().values(end)


@needs_compiled
def test_the_luck_of_a_deals_outcomes_averages_to_zero() -> None:
    # wider than a weighed node: every figure from 32 coupled completions, so the mean is 0 within
    # their sampling error (about 2 points of win chance), while single tiles are worth far more
    state = dealing(30)
    ev = SearchEvaluator(EXAGON, iterations=200)
    memo: Memo = {}
    lucks = [luck(ev, state, o, memo)[0] for o, _p in state.chance_outcomes()]
    mean = [sum(x[seat] for x in lucks) / len(lucks) for seat in (0, 1)]
    assert max(abs(x[0]) for x in lucks) > 0.2
    assert abs(mean[0]) < 0.03 and abs(mean[1]) < 0.03


@needs_compiled
def test_the_luck_of_tiles_dealt_in_a_row_adds_up_to_the_change_of_one_estimate() -> None:
    state = dealing(30)
    ev = SearchEvaluator(EXAGON, iterations=200)
    memo: Memo = {}
    start = expected(ev.for_chance(), state, memo)
    total = [0.0, 0.0]
    rng = random.Random(8)
    for _ in range(10):
        outcome = random_action(state, rng)
        gained, after = luck(ev, state, outcome, memo)
        total = [t + g for t, g in zip(total, gained, strict=True)]
        state.apply_action(outcome)
    assert after == expected(ev.for_chance(), state, memo)
    assert total == pytest.approx([after[0] - start[0], after[1] - start[1]], abs=1e-12)


@needs_compiled
def test_completions_are_reproducible_and_shared_by_neighbours() -> None:
    state = dealing(12)
    ev = SearchEvaluator(EXAGON, iterations=200)
    assert completions(ev.for_chance(), state, 8) == completions(ev.for_chance(), state, 8)
    for chain in range(8):
        # after the tile a chain draws first, the chain deals the same tiles: the same position
        drawn = coupled_outcome(state.chance_outcomes(), 0, chain, 0)
        after = state.clone()
        after.apply_action(drawn)
        assert completed(state, 0, chain).to_json() == completed(after, 0, chain).to_json()


def test_a_strong_game_of_exagon_is_analysed_within_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # the whole path on a short budget: every deal event has a luck, every decision a loss >= 0
    from ludoteca.analysis import analyse, review
    from ludoteca.core.records import Record

    monkeypatch.setattr(review, "COMPLETIONS", 8)
    rng = random.Random(2)
    agents = [make_agent("strong", seed=p, game="exagon") for p in range(2)]
    state = EXAGON.new_initial_state()
    record = Record.start(EXAGON)
    while not state.is_terminal():
        action = random_action(state, rng) if state.is_chance_node() else agents[state.current_player()].step(state)
        record.add(state, action)
        state.apply_action(action)
    result = analyse(record, iterations=200)
    chances = [s for s in result.steps if s.kind == "chance"]
    assert len(chances) == 40 and chances[-1].luck == [0.0, 0.0]
    assert all(s.loss is not None and s.loss >= 0 for s in result.steps if s.kind == "decision")
    assert all(abs(x) <= 1.0 for s in chances for x in (s.luck or []))
