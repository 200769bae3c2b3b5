"""The one rating scale (core/rating.py): openskill's Plackett-Luce, read as a whole number."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from ludoteca.core.rating import DISPLAY_BASE, Rating, display, ranks_from_returns, rate


def test_two_newcomers_winner_and_loser_match_openskill() -> None:
    # openskill 6 documents (and computes) mu 27.6354 / 22.3646, sigma 8.0659 for this game
    winner, loser = rate([Rating(), Rating()], [1.0, 0.0])
    assert winner.mu == pytest.approx(27.635389, abs=1e-5)
    assert loser.mu == pytest.approx(22.364611, abs=1e-5)
    assert winner.sigma == pytest.approx(8.065901, abs=1e-5) == loser.sigma
    assert (winner.games, loser.games) == (1, 1)


def test_a_shared_win_is_a_tie() -> None:
    a, b, c = rate([Rating(), Rating(), Rating()], [0.5, 0.5, 0.0])
    assert a.mu == pytest.approx(b.mu)
    assert a.mu > 25 > c.mu


@given(st.lists(st.floats(min_value=-3, max_value=3, allow_nan=False), min_size=2, max_size=6),
       st.lists(st.floats(min_value=10, max_value=40), min_size=6, max_size=6))
def test_rate_agrees_with_openskill(returns: list[float], mus: list[float]) -> None:
    ratings = [Rating(mu, 5.0, 3) for mu in mus[:len(returns)]]
    model = PlackettLuce()
    expected = model.rate([[model.rating(mu=r.mu, sigma=r.sigma)] for r in ratings],
                          ranks=ranks_from_returns(returns))
    for new, team in zip(rate(ratings, returns), expected, strict=True):
        assert new.mu == pytest.approx(team[0].mu) and new.sigma == pytest.approx(team[0].sigma)
        assert new.games == 4


def test_ranks_and_display() -> None:
    assert ranks_from_returns([1, 0, 1, -1]) == [0, 1, 0, 2]
    assert display(25.0) == DISPLAY_BASE and display(35.0) == DISPLAY_BASE + 300
    newcomer = Rating()
    assert newcomer.provisional and newcomer.interval()[0] < DISPLAY_BASE < newcomer.interval()[1]
    assert not Rating(30.0, 2.0, 25).provisional
    with pytest.raises(ValueError):
        rate([Rating()], [1.0])
