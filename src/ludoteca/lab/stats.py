"""Statistics for the balance lab, in plain Python (no numpy/scipy needed).

Every function here is small and checked against hand-computed values in
``tests/test_lab.py`` and ``tests/test_lab_stats.py``: Wilson score intervals, the exact
two-sided binomial test, the chi-square goodness-of-fit test, the two-proportion z-test,
Student's t (intervals for per-game means, Welch's test), ratio estimators with the game as
the sampling unit (cluster-robust), Holm's adjustment for multiple comparisons, percentiles
with linear interpolation (numpy's default).

**The sampling unit is the game.** Games are independent; the events inside one game
(turns, battles, rounds, decisions) are not. A share of events pooled over games (e.g. the
share of turns in which some rule blocked a move) is a *ratio estimator* ``R = sum(x_i) / sum(n_i)``
over games ``i`` (``x_i`` events of interest among ``n_i`` events in game ``i``), and its
variance comes from the spread of the games' residuals ``x_i - R n_i`` (the linearization, or
cluster-robust, variance), not from ``R (1 - R) / sum(n_i)``, which would treat every event
as an independent draw and give intervals far too narrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile."""

ALPHA = 0.05
"""Significance level used by the reports."""


# --- distributions ---------------------------------------------------------------------

def normal_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def normal_two_sided(z: float) -> float:
    """P(|Z| >= |z|)."""
    return min(1.0, math.erfc(abs(z) / math.sqrt(2.0)))


def _gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) (Numerical Recipes 6.2)."""
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1.0:  # series for P, then Q = 1 - P
        ap, total = a, 1.0 / a
        delta = total
        for _ in range(10_000):
            ap += 1.0
            delta *= x / ap
            total += delta
            if abs(delta) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - gln))
    # continued fraction (modified Lentz)
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return min(1.0, math.exp(-x + a * math.log(x) - gln) * h)


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("a chi-square distribution needs df >= 1")
    return _gamma_q(df / 2.0, x / 2.0)


# --- intervals and tests ---------------------------------------------------------------

def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for a proportion ``successes / n`` (``(0, 1)`` when n = 0).

    ``successes`` may be fractional (shared wins count 1/k)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z2 / (4 * n * n))) / denom
    return _clamp_interval(p, centre - half, centre + half)


def _clamp_interval(p: float, lo: float, hi: float) -> tuple[float, float]:
    """``(lo, hi)`` with ``0 <= lo <= p <= hi <= 1``: rounding can put a bound a hair on the
    wrong side (1.7e-18 for p = 0, 0.9999999999999999 for p = 1), which would give a negative
    error bar."""
    p = min(1.0, max(0.0, p))
    return (min(p, max(0.0, lo)), max(p, min(1.0, hi)))


def binom_pmf(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if p >= 1.0:
        return 1.0 if k == n else 0.0
    log = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    return math.exp(log + k * math.log(p) + (n - k) * math.log1p(-p))


def binom_test(k: float, n: int, p: float) -> float:
    """Exact two-sided binomial test of ``k`` successes in ``n`` against probability ``p``.

    The p-value sums the probabilities of every outcome no more likely than ``k`` (as R's
    ``binom.test`` does, with the same relative tolerance). A fractional ``k`` (shared wins)
    is rounded."""
    if n <= 0:
        return 1.0
    k = max(0, min(n, round(k)))
    observed = binom_pmf(k, n, p)
    limit = observed * (1 + 1e-7)
    total = 0.0
    for i in range(n + 1):
        q = binom_pmf(i, n, p)
        if q <= limit:
            total += q
    return min(1.0, total)


def chi_square_uniform(observed: Sequence[float]) -> tuple[float, float]:
    """Chi-square goodness of fit of ``observed`` counts against equal shares: (statistic, p)."""
    total = sum(observed)
    k = len(observed)
    if k < 2 or total <= 0:
        return (0.0, 1.0)
    expected = total / k
    stat = sum((o - expected) ** 2 / expected for o in observed)
    return (stat, chi2_sf(stat, k - 1))


def two_proportion_z(x1: float, n1: float, x2: float, n2: float) -> tuple[float, float]:
    """Pooled two-proportion z-test of ``x1/n1`` against ``x2/n2``: (z, two-sided p)."""
    if n1 <= 0 or n2 <= 0:
        return (0.0, 1.0)
    p1, p2 = x1 / n1, x2 / n2
    pooled = (x1 + x2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return (0.0, 1.0)
    z = (p1 - p2) / se
    return (z, normal_two_sided(z))


def welch_z(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Difference of two means, Welch's standard error, normal approximation: (z, p)."""
    if len(a) < 2 or len(b) < 2:
        return (0.0, 1.0)
    se = math.sqrt(variance(a) / len(a) + variance(b) / len(b))
    if se == 0:
        return (0.0, 1.0)
    z = (mean(a) - mean(b)) / se
    return (z, normal_two_sided(z))


# --- descriptive ------------------------------------------------------------------------

def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def variance(xs: Sequence[float]) -> float:
    """The sample variance (n - 1)."""
    n = len(xs)
    if n < 2:
        return 0.0
    m = mean(xs)
    return sum((x - m) ** 2 for x in xs) / (n - 1)


def stdev(xs: Sequence[float]) -> float:
    return math.sqrt(variance(xs))


def percentile(xs: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks."""
    if not xs:
        return 0.0
    data = sorted(xs)
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(data) - 1)
    frac = pos - lo
    return data[lo] + (data[hi] - data[lo]) * frac


def median(xs: Sequence[float]) -> float:
    return percentile(xs, 50.0)


# --- win rates with shared wins ---------------------------------------------------------------
#
# A seat's result in a game is 1 (sole winner), 1/k (a win shared by k) or 0. Without shared
# wins these are Bernoulli draws and the classic binomial tools apply as they are. With shared
# wins the variance is smaller than p(1 - p), so those tools are conservative (intervals too
# wide, p-values too large); the functions below use the observed variance instead, through
# the effective sample size n_eff = n p (1 - p) / var (Kish's design effect). They reduce to
# the classic ones when every result is 0 or 1.

def _is_binary(values: Sequence[float]) -> bool:
    return all(v == 0 or v == 1 for v in values)


def _pvar(values: Sequence[float]) -> float:
    """Population variance (divide by n)."""
    n = len(values)
    if n == 0:
        return 0.0
    m = sum(values) / n
    return max(0.0, sum(v * v for v in values) / n - m * m)


def effective_n(values: Sequence[float]) -> float:
    """``n p (1 - p) / var``: the number of Bernoulli games carrying as much information."""
    n = len(values)
    if n == 0:
        return 0.0
    p = sum(values) / n
    var = _pvar(values)
    if var <= 0 or _is_binary(values):
        return float(n)
    return n * p * (1 - p) / var


def rate_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """Wilson interval of the mean of per-game results in [0, 1] (shared wins as 1/k), on the
    effective sample size (the plain Wilson interval when every result is 0 or 1)."""
    n = len(values)
    if n == 0:
        return (0.0, 1.0)
    p = sum(values) / n
    n_eff = effective_n(values)
    return wilson(p * n_eff, n_eff, z)


def rate_test(values: Sequence[float], p0: float) -> tuple[str, float]:
    """Test the mean of per-game results against ``p0``: (test name, two-sided p).

    Every result 0 or 1: the exact binomial test. Otherwise (shared wins) a z-test with the
    observed variance (results are bounded, so the normal approximation holds for a few
    dozen games and more)."""
    n = len(values)
    if n == 0:
        return ("none", 1.0)
    if _is_binary(values):
        return ("exact binomial", binom_test(sum(values), n, p0))
    var = _pvar(values)
    m = sum(values) / n
    if var == 0:
        return ("z (observed variance)", 1.0 if m == p0 else 0.0)
    z = (m - p0) / math.sqrt(var / n)
    return ("z (observed variance)", normal_two_sided(z))


def chi_square_equal_rates(columns: Sequence[Sequence[float]]) -> tuple[float, int, float]:
    """Do ``k`` positions (seats, play order) win equally often? ``columns[j]`` holds position
    ``j``'s result in every game. Chi-square goodness of fit of the total results against
    equal shares, with the Rao-Scott first-order correction for shared wins (the statistic
    divided by the mean design effect). Returns (statistic, df, p)."""
    k = len(columns)
    totals = [sum(c) for c in columns]
    stat, _ = chi_square_uniform(totals)
    if k < 2 or sum(totals) <= 0:
        return (0.0, max(0, k - 1), 1.0)
    effects = []
    for c in columns:
        n = len(c)
        p = sum(c) / n if n else 0.0
        if 0 < p < 1:
            effects.append(_pvar(c) / (p * (1 - p)))
    d = sum(effects) / len(effects) if effects else 1.0
    if d > 0:
        stat /= d
    return (stat, k - 1, chi2_sf(stat, k - 1))


def compare_rates(xs: Sequence[float], ys: Sequence[float]) -> tuple[str, float, float]:
    """Two samples of per-game results: (test name, z, p) for the difference of their means,
    ``mean(xs) - mean(ys)``. Results all 0 or 1: the pooled two-proportion z-test; otherwise
    (shared wins) the unpooled z-test with the observed variances."""
    if _is_binary(xs) and _is_binary(ys):
        z, p = two_proportion_z(sum(xs), len(xs), sum(ys), len(ys))
        return ("two-proportion z", z, p)
    if not xs or not ys:
        return ("z (observed variances)", 0.0, 1.0)
    se = math.sqrt(_pvar(xs) / len(xs) + _pvar(ys) / len(ys))
    if se == 0:
        return ("z (observed variances)", 0.0, 1.0)
    z = (sum(xs) / len(xs) - sum(ys) / len(ys)) / se
    return ("z (observed variances)", z, normal_two_sided(z))


# --- Student's t: per-game means ------------------------------------------------------------------

def _beta_cf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (tiny if abs(d) < tiny else d)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (tiny if abs(d) < tiny else d)
        c = 1.0 + aa / c
        c = tiny if abs(c) < tiny else c
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_cf(a, b, x) / a
    return 1.0 - front * _beta_cf(b, a, 1.0 - x) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom (the normal for df = inf)."""
    if math.isinf(df):
        return normal_two_sided(t)
    if df <= 0:
        raise ValueError("Student's t needs df > 0")
    return min(1.0, beta_inc(df / 2.0, 0.5, df / (df + t * t)))


def t_quantile(q: float, df: float) -> float:
    """The ``q``-quantile (0.5 < q < 1) of Student's t with ``df`` degrees of freedom."""
    if not 0.5 < q < 1.0:
        raise ValueError("t_quantile takes 0.5 < q < 1")
    target = 2.0 * (1.0 - q)  # two-sided tail probability
    lo, hi = 0.0, 1.0
    while t_two_sided(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def mean_interval(xs: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The t interval of the mean of per-game values (None with fewer than two games)."""
    n = len(xs)
    if n < 2:
        return None
    m = mean(xs)
    half = t_quantile(0.5 + level / 2.0, n - 1) * stdev(xs) / math.sqrt(n)
    return (m - half, m + half)


def welch_t(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Welch's t-test of ``mean(a) - mean(b)`` (unequal variances, Welch–Satterthwaite
    degrees of freedom): (t, df, two-sided p). Fewer than two values on a side: (0, 0, 1)."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return (0.0, 0.0, 1.0)
    va, vb = variance(a) / na, variance(b) / nb
    se2 = va + vb
    diff = mean(a) - mean(b)
    if se2 == 0:
        return (0.0, 0.0, 1.0) if diff == 0 else (math.copysign(math.inf, diff), math.inf, 0.0)
    df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1))
    t = diff / math.sqrt(se2)
    return (t, df, t_two_sided(t, df))


# --- ratios over games: events pooled, the game as the sampling unit ----------------------------

def ratio(xs: Sequence[float], ns: Sequence[float]) -> tuple[float, float]:
    """``R = sum(xs) / sum(ns)`` and its cluster-robust (linearization) variance
    ``sum((x_i - R n_i)^2) / sum(n_i)^2``, each game ``i`` one cluster. (0, 0) when no event."""
    if len(xs) != len(ns):
        raise ValueError("ratio needs one numerator and one denominator per game")
    total = float(sum(ns))
    if total <= 0:
        return (0.0, 0.0)
    r = sum(xs) / total
    resid = sum((x - r * n) ** 2 for x, n in zip(xs, ns, strict=True))
    return (r, resid / (total * total))


def share_effective_n(xs: Sequence[float], ns: Sequence[float]) -> float:
    """The effective number of independent events of a pooled share: ``R (1 - R) / var(R)``.

    Equal to the number of games when each game holds one event (the plain binomial case).
    At a share of 0 or 1 the games' spread says nothing; then the number of games holding an
    event is used, the smallest the effective size can be (as if all events of a game were
    one)."""
    r, var = ratio(xs, ns)
    total = float(sum(ns))
    if 0.0 < r < 1.0:
        return r * (1 - r) / var if var > 0 else total
    return float(sum(1 for n in ns if n > 0))


def share_interval(xs: Sequence[float], ns: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """95% interval of a share of events pooled over games: the Wilson interval on the
    effective number of events (:func:`share_effective_n`)."""
    r, _ = ratio(xs, ns)
    n_eff = share_effective_n(xs, ns)
    return wilson(r * n_eff, n_eff, z)


def ratio_interval(xs: Sequence[float], ns: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """95% interval of a non-negative ratio of events pooled over games (e.g. battles per
    turn): ``R ± z·se`` with the cluster-robust standard error, cut at 0."""
    r, var = ratio(xs, ns)
    half = z * math.sqrt(var)
    return (max(0.0, r - half), r + half)


def compare_ratios(x1: Sequence[float], n1: Sequence[float], x0: Sequence[float],
                   n0: Sequence[float]) -> tuple[float, float]:
    """z-test of the difference of two pooled ratios ``R1 - R0`` (two independent sets of
    games), with cluster-robust variances: (z, two-sided p)."""
    r1, v1 = ratio(x1, n1)
    r0, v0 = ratio(x0, n0)
    se = math.sqrt(v1 + v0)
    if se == 0:
        return (0.0, 1.0) if r1 == r0 else (math.copysign(math.inf, r1 - r0), 0.0)
    z = (r1 - r0) / se
    return (z, normal_two_sided(z))


# --- multiple comparisons ----------------------------------------------------------------------------

def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: each p-value multiplied by the number of hypotheses not
    yet rejected, kept monotone and at most 1. Rejecting where the adjusted p < alpha keeps
    the chance of any false positive in the whole family at most alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted
