"""The lab's statistics: bounds of intervals, the game as the sampling unit, per-game means,
multiple comparisons. Expected values are computed by hand (or by an independent formula
written out here); scipy, when installed, cross-checks Student's t."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludoteca.lab import stats

Z = 1.959963984540054


def wilson_by_hand(p: float, n: float) -> tuple[float, float]:
    """The textbook Wilson score interval, written out independently of the lab's code."""
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return centre - half, centre + half


# --- bounds -------------------------------------------------------------------------------------

def test_wilson_bounds_at_zero_and_one_are_exact() -> None:
    # 1.7e-18 instead of 0 and 0.9999999999999999 instead of 1 gave a negative error bar
    lo, hi = stats.wilson(0, 150)
    assert lo == 0.0 and 0.0 < hi < 0.03
    lo, hi = stats.wilson(150, 150)
    assert hi == 1.0 and 0.97 < lo < 1.0
    for n in (1, 3, 7, 49, 150, 1000, 12345):
        assert stats.wilson(0, n)[0] == 0.0
        assert stats.wilson(n, n)[1] == 1.0


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 100_000), frac=st.floats(0, 1))
def test_wilson_interval_always_holds_the_estimate(n: int, frac: float) -> None:
    x = round(frac * n)
    lo, hi = stats.wilson(x, n)
    assert 0.0 <= lo <= x / n <= hi <= 1.0


@settings(max_examples=200, deadline=None)
@given(games=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), min_size=1, max_size=40))
def test_share_interval_always_holds_the_estimate(games: list[tuple[int, int]]) -> None:
    ns = [float(a + b) for a, b in games]
    xs = [float(a) for a, _ in games]
    lo, hi = stats.share_interval(xs, ns)
    r = sum(xs) / sum(ns) if sum(ns) else 0.0
    assert 0.0 <= lo <= r <= hi <= 1.0


# --- the game as the sampling unit ----------------------------------------------------------------

def test_share_interval_of_clustered_events_by_hand() -> None:
    # 10 games of 10 turns: in 5 games 4 turns are capped, in 5 games none. R = 20 / 100 = 0.2.
    # Residuals x_i - R n_i: +2 (five times), -2 (five times); variance 40 / 100^2 = 0.004;
    # effective events 0.2 * 0.8 / 0.004 = 40 (not 100): Wilson on 40 events, centre
    # (0.2 + 3.841459 / 80) / 1.0960365 = 0.226286, half 1.959964 * sqrt(0.004 + 0.00060023) / 1.0960365
    # = 0.121287.
    xs = [4.0] * 5 + [0.0] * 5
    ns = [10.0] * 10
    r, var = stats.ratio(xs, ns)
    assert r == pytest.approx(0.2) and var == pytest.approx(0.004)
    assert stats.share_effective_n(xs, ns) == pytest.approx(40.0)
    lo, hi = stats.share_interval(xs, ns)
    assert (lo, hi) == pytest.approx(wilson_by_hand(0.2, 40.0))
    assert lo == pytest.approx(0.104999, abs=1e-5) and hi == pytest.approx(0.347573, abs=1e-5)
    # treating the 100 turns as independent would claim a narrower interval
    naive = wilson_by_hand(0.2, 100.0)
    assert hi - lo > 1.5 * (naive[1] - naive[0])


def test_one_event_per_game_is_the_plain_wilson_interval() -> None:
    xs = [1.0] * 37 + [0.0] * 113
    ns = [1.0] * 150
    assert stats.share_effective_n(xs, ns) == pytest.approx(150)
    assert stats.share_interval(xs, ns) == pytest.approx(stats.wilson(37, 150))
    # at 0 and 1 the effective size is the number of games holding an event
    assert stats.share_interval([0.0] * 20, [5.0] * 20) == pytest.approx(stats.wilson(0, 20))
    assert stats.share_interval([3.0] * 20, [3.0] * 20)[1] == 1.0


def test_ratio_interval_and_comparison_by_hand() -> None:
    # battles per turn: games (x, n) = (2, 10), (6, 10), (1, 5), (3, 15): R = 12 / 40 = 0.3;
    # residuals -1, 3, -0.5, -1.5: squares 1 + 9 + 0.25 + 2.25 = 12.5; var = 12.5 / 1600
    xs, ns = [2.0, 6.0, 1.0, 3.0], [10.0, 10.0, 5.0, 15.0]
    r, var = stats.ratio(xs, ns)
    assert r == pytest.approx(0.3) and var == pytest.approx(12.5 / 1600)
    lo, hi = stats.ratio_interval(xs, ns)
    assert lo == pytest.approx(max(0.0, 0.3 - Z * math.sqrt(12.5 / 1600)))
    assert hi == pytest.approx(0.3 + Z * math.sqrt(12.5 / 1600))
    # against 10 games with exactly 3 battles in 10 turns each (R0 = 0.3, variance 0)
    z, p = stats.compare_ratios(xs, ns, [3.0] * 10, [10.0] * 10)
    assert z == pytest.approx(0.0) and p == pytest.approx(1.0)
    # against R0 = 0.1 with variance 0: z = 0.2 / sqrt(12.5 / 1600) = 2.26274
    z, p = stats.compare_ratios(xs, ns, [1.0] * 10, [10.0] * 10)
    assert z == pytest.approx(2.262742, abs=1e-5)
    assert p == pytest.approx(math.erfc(2.262742 / math.sqrt(2)), abs=1e-6)


def test_cluster_intervals_cover_the_truth_when_games_differ() -> None:
    """Games whose own rate varies (as a game's cap blocks depend on how that game goes):
    the cluster-robust interval covers the true share about 95% of the time; the interval
    treating every event as independent does not."""
    rng = random.Random(10)
    covered = naive_covered = 0
    reps = 300
    for _ in range(reps):
        xs, ns = [], []
        for _ in range(60):
            p = rng.uniform(0.05, 0.45)  # this game's own rate; the mean rate is 0.25
            n = rng.randint(20, 60)
            xs.append(float(sum(rng.random() < p for _ in range(n))))
            ns.append(float(n))
        lo, hi = stats.share_interval(xs, ns)
        covered += lo <= 0.25 <= hi
        nlo, nhi = stats.wilson(sum(xs), sum(ns))
        naive_covered += nlo <= 0.25 <= nhi
    assert 0.90 <= covered / reps <= 0.99
    assert naive_covered / reps < 0.80


# --- per-game means --------------------------------------------------------------------------------

def test_student_t_against_tables() -> None:
    assert stats.t_quantile(0.975, 1) == pytest.approx(12.7062, abs=1e-4)
    assert stats.t_quantile(0.975, 4) == pytest.approx(2.77645, abs=1e-5)
    assert stats.t_quantile(0.975, 9) == pytest.approx(2.26216, abs=1e-5)
    assert stats.t_quantile(0.975, 30) == pytest.approx(2.04227, abs=1e-5)
    assert stats.t_quantile(0.975, 10**7) == pytest.approx(Z, abs=1e-5)
    assert stats.t_two_sided(2.22814, 10) == pytest.approx(0.05, abs=1e-5)
    assert stats.t_two_sided(0.0, 5) == pytest.approx(1.0)


def test_student_t_cross_checked_with_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (1, 2, 3, 7.5, 19, 149, 1000):
        assert stats.t_quantile(0.975, df) == pytest.approx(scipy_stats.t.ppf(0.975, df), rel=1e-9)
        for t in (0.3, 1.0, 2.1, 4.0):
            assert stats.t_two_sided(t, df) == pytest.approx(2 * scipy_stats.t.sf(t, df), rel=1e-8)


def test_mean_interval_by_hand() -> None:
    # 1..5: mean 3, sd sqrt(2.5), se sqrt(0.5); t(0.975, 4) = 2.776445 -> half 1.963243
    lo, hi = stats.mean_interval([1, 2, 3, 4, 5])
    assert lo == pytest.approx(3 - 1.963243, abs=1e-6) and hi == pytest.approx(3 + 1.963243, abs=1e-6)
    assert stats.mean_interval([4.0]) is None
    assert stats.mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0)


def test_welch_t_by_hand() -> None:
    # means 3 and 6; variances of the means 2.5/5 = 0.5 and 10/5 = 2: se sqrt(2.5), t = -3 / 1.58114;
    # df = 2.5^2 / (0.5^2/4 + 2^2/4) = 6.25 / 1.0625 = 5.88235; p (two-sided) = 0.107531
    t, df, p = stats.welch_t([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert t == pytest.approx(-1.897367, abs=1e-6)
    assert df == pytest.approx(6.25 / 1.0625)
    assert p == pytest.approx(0.107531, abs=1e-5)
    assert stats.welch_t([1], [2, 3]) == (0.0, 0.0, 1.0)


# --- multiple comparisons ------------------------------------------------------------------------------

def test_holm_by_hand() -> None:
    # sorted 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04, kept >= 0.06)
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert stats.holm([]) == []
