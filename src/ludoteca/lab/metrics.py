"""From the rows of a run to its figures: win rates, lengths, Ludii-style metrics, game figures.

Conventions (also in ``docs/lab.md``):

* A seat's **win rate** is the mean of its returns: a win shared by ``k`` players counts
  ``1/k``, so the rates of all seats add up to 1 and the fair share is ``1/n``.
* The **first player** is the seat that took the first decision of the game (after any
  chance nodes such as a roll-off or a deal). **Play order** ``p`` is the seat ``p`` places
  after the first player, clockwise.
* A **shared win** (two or more winners) is ludoteca's draw.
* **Detailed games** (every ``detail``-th game, 8 by default) also measure each decision:
  branching factor, decision factor, drama and lead changes come from them.
* **Game figures** come from the game's own declarations (``Game.counters``, read with
  ``State.counters()`` at the end of each game) and its end reasons (``State.end_reason()``):
  nothing here knows a game by name.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ludoteca.core.game import Counter as Declared
from ludoteca.core.i18n import N_, _
from ludoteca.lab import stats
from ludoteca.lab.probes import DEFAULT_END
from ludoteca.lab.runner import Row, RunSpec

SAMPLING_UNIT = N_(
    "The game is the sampling unit. Games are independent; the events inside a game (turns, rounds, "
    "battles, decisions) are not, so a share of events pooled over games gets a cluster-robust interval "
    "(Wilson on the effective number of events, from the spread of the games' own shares) and is compared "
    "between variants with a cluster-robust z-test; per-game means (battles per game, duration, ...) get a "
    "t interval and Welch's t-test."
)

FORMAT = "ludoteca-lab-summary"
VERSION = 1

DEFINITIONS: dict[str, str] = {
    "advantage": N_("Win rate of the player who took the first turn (a shared win counts 1/k), next to "
                    "the fair share 1/n; tested against 1/n (exact binomial test, or a z-test with the "
                    "observed variance when wins are shared)."),
    "balance": N_("1 minus the largest gap between the win rates of the play-order positions "
                  "(first player, second, ...): 1 is perfectly balanced."),
    "completion": N_("Share of games that ended by the rules rather than by reaching turn_limit."),
    "drawishness": N_("Share of games whose win is shared by two or more players (ludoteca's draws)."),
    "duration": N_("Mean number of player turns per game (RULES.md's `turn`), with its t interval."),
    "duration_spread": N_("Standard deviation of the number of turns per game."),
    "branching_factor": N_("Mean number of legal actions at decision nodes (a forced choice counts 1), "
                           "over every decision of the detailed games (interval: the detailed games as the unit)."),
    "decision_factor": N_("Share of decision nodes with more than one legal action (detailed games; interval: "
                          "the detailed games as the unit)."),
    "drama": N_("Among detailed games with a single winner: share in which the winner was strictly "
                "behind the leader at mid-game — the scores as they stood when turn floor(T/2) of a "
                "T-turn game was played — by the game's own score (its scores(), the measure turn_limit "
                "uses; see the score line above)."),
    "lead_changes": N_("Mean number of times the sole leader by the game's score (read at each "
                       "decision) became another player (detailed games)."),
    "dice_rolled": N_("Mean number of chance nodes per game: every die roll, draw and deal, those that "
                      "decide who starts included."),
}


def _mean_metric(xs: Sequence[float]) -> dict[str, Any]:
    """A per-game mean with its t interval (None with fewer than two games)."""
    ci = stats.mean_interval(xs)
    return {"value": stats.mean(xs), "ci": list(ci) if ci is not None else None, "games": len(xs)}


def _rate(x: float, n: int) -> dict[str, Any]:
    """A proportion of games (every game counts 0 or 1) with its Wilson interval."""
    lo, hi = stats.wilson(x, n)
    return {"count": x, "games": n, "rate": x / n if n else 0.0, "ci": [lo, hi]}


def _win_rate(values: list[float]) -> dict[str, Any]:
    """A win rate from per-game results (1, 1/k for a shared win, 0), with its Wilson
    interval on the effective sample size (see :mod:`ludoteca.lab.stats`)."""
    n = len(values)
    x = sum(values)
    lo, hi = stats.rate_interval(values)
    return {"count": x, "games": n, "rate": x / n if n else 0.0, "ci": [lo, hi],
            "effective_games": stats.effective_n(values)}


def seat_values(rows: Sequence[Row], n: int) -> list[list[float]]:
    """``[seat][game]``: each seat's result in each game."""
    return [[r["returns"][s] for r in rows] for s in range(n)]


def order_values(rows: Sequence[Row], n: int) -> list[list[float]]:
    """``[position][game]``: the result of the player ``position`` places after the first."""
    out = [[0.0] * len(rows) for _ in range(n)]
    for j, r in enumerate(rows):
        f = r["first"] if r["first"] >= 0 else 0
        for s in range(n):
            out[(s - f) % n][j] = r["returns"][s]
    return out


def agent_values(rows: Sequence[Row], agent: str) -> list[float]:
    """An agent's result in each game: the results of every seat it holds, added."""
    return [sum(x for x, who in zip(r["returns"], r["agents"], strict=True) if who == agent) for r in rows]


def _dist(xs: Sequence[float]) -> dict[str, float]:
    return {
        "mean": stats.mean(xs), "sd": stats.stdev(xs), "min": min(xs, default=0),
        "p10": stats.percentile(xs, 10), "median": stats.median(xs),
        "p90": stats.percentile(xs, 90), "max": max(xs, default=0),
    }


def _drama(rows: Sequence[Row]) -> tuple[int, int]:
    behind = decided = 0
    for r in rows:
        if len(r["winners"]) != 1 or not r.get("mid_scores"):
            continue
        decided += 1
        w = r["winners"][0]
        mid = r["mid_scores"]
        if mid[w] < max(mid):
            behind += 1
    return behind, decided


def agent_table(spec: RunSpec, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per distinct agent: seats it holds, win rate with its interval and test against its fair
    share (seats held / n), games won outright, and its win rate in each seat."""
    n = spec.players
    out = []
    for a in dict.fromkeys(spec.lineup):
        instances = spec.lineup.count(a)
        by_seat = [0.0] * n
        seat_games = [0] * n
        outright = 0
        for r in rows:
            for s, who in enumerate(r["agents"]):
                if who == a:
                    by_seat[s] += r["returns"][s]
                    seat_games[s] += 1
                    if r["returns"][s] == 1.0:
                        outright += 1
        fair = instances / n
        values = agent_values(rows, a)
        entry = _win_rate(values)
        test, p_value = stats.rate_test(values, fair)
        entry.update({
            "agent": a, "instances": instances, "fair": fair, "test": test, "p_value": p_value,
            "outright": outright,
            "by_seat": [
                {"seat": s, "games": seat_games[s], "rate": by_seat[s] / seat_games[s] if seat_games[s] else None}
                for s in range(n)
            ],
        })
        entry["significant"] = entry["p_value"] < stats.ALPHA
        out.append(entry)
    return out


def declared_counters(game: str) -> tuple[Declared, ...]:
    """The figures a game declares for the lab (``Game.counters``)."""
    from ludoteca.registry import game_class

    return tuple(game_class(game).counters)


def summarise_variant(spec: RunSpec, rows: Sequence[Row], counters: Sequence[Declared] | None = None,
                      endings: Sequence[str] | None = None) -> dict[str, Any]:
    """Every figure of one variant's rows. ``counters``: the game's declarations (default: read
    from the game); ``endings``: the end reasons to report (default: those of ``rows``)."""
    if counters is None:
        counters = declared_counters(spec.game)
    n = spec.players
    g = len(rows)
    by_seat = seat_values(rows, n)
    by_order = order_values(rows, n)
    fair = 1.0 / n
    seats = []
    for s in range(n):
        entry = _win_rate(by_seat[s])
        entry["seat"] = s
        if not spec.rotate:
            entry["agent"] = spec.lineup[s]
        seats.append(entry)
    positions = []
    for p in range(n):
        entry = _win_rate(by_order[p])
        entry["position"] = p
        positions.append(entry)
    first = positions[0]
    first_test, p_first = stats.rate_test(by_order[0], fair)
    chi, _, p_chi = stats.chi_square_equal_rates(by_order)
    chi_s, _, p_chi_s = stats.chi_square_equal_rates(by_seat)
    turns = [r["turns"] for r in rows]
    rounds = [r["rounds"] for r in rows]
    shared = sum(1 for r in rows if len(r["winners"]) > 1)
    limited = sum(1 for r in rows if r["limit"])
    detailed = [r for r in rows if r.get("detail")]
    behind, decided = _drama(detailed)
    rates = [p["rate"] for p in positions]
    metrics = {
        "advantage": {"value": first["rate"], "ci": first["ci"], "fair": fair,
                      "excess": first["rate"] - fair, "p_value": p_first},
        "balance": {"value": 1 - (max(rates) - min(rates)) if g else 0.0},
        "completion": {"value": (g - limited) / g if g else 0.0, "ci": list(stats.wilson(g - limited, g))},
        "drawishness": {"value": shared / g if g else 0.0, "ci": list(stats.wilson(shared, g))},
        "duration": _mean_metric(turns),
        "duration_spread": {"value": stats.stdev(turns)},
        "branching_factor": {**figure_stats("ratio", [float(r["legal"]) for r in detailed],
                                            [float(r["decisions"]) for r in detailed]), "games": len(detailed)},
        "decision_factor": {**figure_stats("proportion", [float(r["multi"]) for r in detailed],
                                           [float(r["decisions"]) for r in detailed]), "games": len(detailed)},
        "drama": {"value": behind / decided if decided else 0.0, "ci": list(stats.wilson(behind, decided)),
                  "count": behind, "games": decided},
        "lead_changes": _mean_metric([r["lead_changes"] for r in detailed]),
        "dice_rolled": _mean_metric([r["chance"] for r in rows]),
    }
    for key, m in metrics.items():
        m["definition"] = DEFINITIONS[key]
    return {
        "games": g,
        "detailed_games": len(detailed),
        "seats": seats,
        "positions": positions,
        "first_player": {
            "rate": first["rate"], "ci": first["ci"], "fair": fair, "advantage": first["rate"] - fair,
            "test": f"{first_test} against 1/n", "p_value": p_first,
            "significant": p_first < stats.ALPHA,
            "first_is_seat0": all(r["first"] in (0, -1) for r in rows),
        },
        "order_test": {"test": "chi-square goodness of fit (Rao-Scott corrected), play-order positions vs "
                               "equal shares", "chi2": chi, "df": n - 1, "p_value": p_chi,
                       "significant": p_chi < stats.ALPHA},
        "seat_test": {"test": "chi-square goodness of fit (Rao-Scott corrected), seats vs equal shares",
                      "chi2": chi_s, "df": n - 1, "p_value": p_chi_s, "significant": p_chi_s < stats.ALPHA},
        "agents": agent_table(spec, rows) if len(set(spec.lineup)) > 1 else None,
        "length": {"turns": _dist(turns), "rounds": _dist(rounds)},
        "shared_wins": _rate(shared, g),
        "turn_limit": _rate(limited, g),
        "metrics": metrics,
        "figures": game_figures(counters, rows, endings),
        "counters": counter_table(rows),
    }


# --- game figures: the game's declared counters and its end reasons -------------------------------
#
# Every figure keeps its per-game material (``Samples``): the game is the sampling unit of
# every interval and test (see :mod:`ludoteca.lab.stats`). Kinds, from the declaration:
#
# * ``share_per_game`` -> ``proportion`` of games where the counter is non-zero: Wilson interval;
# * ``share_per_event`` -> the counter out of ``of`` (another counter, or ``turns``), events pooled
#   over games (x_i of n_i in game i): a ``proportion`` with the Wilson interval on the effective
#   number of events (cluster-robust variance); a ``ratio`` (R ± 1.96 se, cluster-robust) when a
#   game counts more than its ``of`` (e.g. two tokens scored by one move);
# * ``ratio_per_event`` -> ``ratio``: the counter per ``of`` (may exceed 1, e.g. bonuses per turn),
#   events pooled over games: R ± 1.96 se, cluster-robust;
# * ``mean_per_game`` -> ``mean``: t interval of the per-game mean.
#
# End reasons (``State.end_reason()``) give one ``proportion`` of games each.


Samples = tuple[list[float], list[float] | None]
"""Per game: ``(x, n)`` for a proportion or a ratio, ``(x, None)`` for a per-game mean."""

KINDS = ("share_per_game", "share_per_event", "ratio_per_event", "mean_per_game")
TURNS = "turns"
"""``of`` naming the player turns of the game (the lab knows them for every game)."""


def _col(rows: Sequence[Row], key: str) -> list[float]:
    return [float(r["counters"].get(key, 0) or 0) for r in rows]


def _present(rows: Sequence[Row], key: str) -> bool:
    """True when the rows carry counter ``key`` (rows of an older engine may not)."""
    return any(key in r["counters"] for r in rows)


def figure_stats(kind: str, xs: Sequence[float], ns: Sequence[float] | None) -> dict[str, Any]:
    """Value and 95% interval of a figure from its per-game material."""
    if kind == "mean":
        ci = stats.mean_interval(xs)
        return {"value": stats.mean(xs), "sd": stats.stdev(xs), "games": len(xs),
                "ci": list(ci) if ci is not None else None}
    assert ns is not None
    value, _ = stats.ratio(xs, ns)
    out: dict[str, Any] = {"value": value, "games": len(xs), "count": sum(xs), "of": sum(ns)}
    if kind == "proportion":
        out["ci"] = list(stats.share_interval(xs, ns))
        out["effective_n"] = stats.share_effective_n(xs, ns)
    else:
        out["ci"] = list(stats.ratio_interval(xs, ns))
    return out


def _fig(name: str, definition: str, kind: str, xs: list[float], ns: list[float] | None = None,
         **extra: Any) -> tuple[dict[str, Any], Samples]:
    fig: dict[str, Any] = {"name": name, "kind": kind, "definition": definition, **extra}
    fig.update(figure_stats(kind, xs, ns))
    return fig, (xs, ns)


def label(name: str) -> str:
    """A counter's name as words: ``"cap_blocks"`` -> ``"cap blocks"``."""
    return name.replace("_", " ")


def check_declaration(d: Declared, declared: set[str]) -> str | None:
    """Why the lab cannot read declaration ``d`` (None: it can)."""
    if d.kind not in KINDS:
        return _("unknown kind {kind} (the kinds are: {kinds})").format(kind=repr(d.kind), kinds=", ".join(KINDS))
    if d.kind in ("share_per_event", "ratio_per_event") and (d.of or TURNS) not in declared | {TURNS}:
        return _("'of' names {of}, which is neither a counter of the game nor {turns}").format(
            of=repr(d.of), turns=repr(TURNS))
    return None


def _counter_figure(d: Declared, rows: Sequence[Row], declared: set[str],
                    ) -> tuple[dict[str, Any], Samples] | None:
    """The figure of one declared counter, or None when the rows do not carry it."""
    if check_declaration(d, declared) is not None or not _present(rows, d.name):
        return None
    xs = _col(rows, d.name)
    doc = d.doc[:1].upper() + d.doc[1:].rstrip(".")
    if d.kind == "share_per_game":
        return _fig(label(d.name), f"{doc}. Share of games where it is non-zero.", "proportion",
                    [1.0 if x else 0.0 for x in xs], [1.0] * len(rows), counter=d.name, counter_kind=d.kind)
    if d.kind == "mean_per_game":
        what = doc if doc.lower().endswith("per game") else f"{doc}. Mean per game"
        return _fig(label(d.name), f"{what}.", "mean", xs, counter=d.name, counter_kind=d.kind)
    of = d.of or TURNS
    if of in declared:
        if not _present(rows, of):
            return None
        ns = _col(rows, of)
    else:
        ns = [float(r["turns"]) for r in rows]
    bounded = d.kind == "share_per_event" and all(x <= n for x, n in zip(xs, ns, strict=True))
    return _fig(label(d.name), f"{doc}. Pooled over games: {label(d.name)} / {label(of)}.",
                "proportion" if bounded else "ratio", xs, ns, counter=d.name, counter_kind=d.kind, of_counter=of)


def unread_counters(counters: Sequence[Declared]) -> list[dict[str, str]]:
    """The declarations the lab cannot read, with the reason (the report lists them)."""
    declared = {d.name for d in counters}
    out = []
    for d in counters:
        why = check_declaration(d, declared)
        if why is not None:
            out.append({"name": d.name, "reason": why})
    return out


def end_reasons(rows: Sequence[Row]) -> list[str]:
    """The end reasons of ``rows``, sorted; none when no game gave a reason of its own."""
    reasons = sorted({r["end"] for r in rows if isinstance(r.get("end"), str) and r["end"]})
    return [] if reasons == [DEFAULT_END] else reasons


def _ending_figures(rows: Sequence[Row], endings: Sequence[str] | None) -> list[tuple[dict[str, Any], Samples]]:
    """One share of games per end reason (``State.end_reason()``)."""
    if endings is None:
        endings = end_reasons(rows)
    ones = [1.0] * len(rows)
    return [_fig(f"games ended by {reason}", f"Share of games whose end reason (end_reason()) was {reason!r}.",
                 "proportion", [1.0 if r.get("end") == reason else 0.0 for r in rows], ones, ending=reason)
            for reason in endings]


def _figures(counters: Sequence[Declared], rows: Sequence[Row], endings: Sequence[str] | None = None,
             ) -> list[tuple[dict[str, Any], Samples]]:
    """The game's figures: how its games ended, then each counter it declares (in its order),
    each with its per-game material."""
    if not rows:
        return []
    figs = _ending_figures(rows, endings)
    declared = {d.name for d in counters}
    for d in counters:
        fig = _counter_figure(d, rows, declared)
        if fig is not None:
            figs.append(fig)
    return figs


def game_figures(counters: Sequence[Declared], rows: Sequence[Row], endings: Sequence[str] | None = None,
                 ) -> list[dict[str, Any]]:
    """The game's figures with their 95% intervals (see :func:`_figures`)."""
    return [f for f, _ in _figures(counters, rows, endings)]


def counter_table(rows: Sequence[Row]) -> dict[str, Any]:
    """Every counter: numbers as mean per game and per turn, text as a tally."""
    out: dict[str, Any] = {}
    if not rows:
        return out
    turns = sum(r["turns"] for r in rows) or 1
    keys = list(dict.fromkeys(k for r in rows[:50] for k in r["counters"]))
    for k in keys:
        values = [r["counters"].get(k) for r in rows]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values if v is not None):
            nums = [float(v or 0) for v in values]
            out[k] = {"per_game": stats.mean(nums), "per_turn": sum(nums) / turns}
        else:
            tally = Counter(str(v) for v in values)
            out[k] = {"tally": dict(sorted(tally.items()))}
    return out


# --- sweeps ------------------------------------------------------------------------------------

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile: a difference's interval is the difference ± Z95 standard errors."""
MDE_FACTOR = Z95 + 0.8416212335729143
"""Standard errors in the minimum detectable effect: a 5% two-sided test with 80% power (z_0.975 + z_0.8)."""


def _row_out(name: str, v0: float, v1: float, z: float, p: float, test: str, se: float, *,
             percent: bool = True) -> dict[str, Any]:
    """One measure of a comparison; ``percent``: a share (shown as a percentage). ``se``: the standard
    error of the difference without pooling (its 95% interval, ``ci``); 0 when both sides are constant
    (nothing varies: no test, ``constant``)."""
    diff = v1 - v0
    constant = se == 0 and diff == 0
    return {"measure": name, "baseline": v0, "value": v1, "diff": diff, "z": z, "p_value": None if constant else p,
            "test": test, "significant": (not constant) and p < stats.ALPHA, "percent": percent,
            "se": se, "ci": [diff - Z95 * se, diff + Z95 * se], "constant": constant}


def _proportion_row(name: str, x1: float, n1: int, x0: float, n0: int) -> dict[str, Any]:
    """A share of games (each game 0 or 1): the pooled two-proportion z-test; the interval unpooled."""
    z, p = stats.two_proportion_z(x1, n1, x0, n0)
    p1, p0 = (x1 / n1 if n1 else 0.0), (x0 / n0 if n0 else 0.0)
    se = math.sqrt((p1 * (1 - p1) / n1 if n1 else 0.0) + (p0 * (1 - p0) / n0 if n0 else 0.0))
    return _row_out(name, p0, p1, z, p, "two-proportion z", se)


def _mean_se(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The standard error of ``mean(xs) - mean(ys)`` with each sample's own variance (Welch's)."""
    return math.sqrt((stats.variance(xs) / len(xs) if len(xs) > 1 else 0.0)
                     + (stats.variance(ys) / len(ys) if len(ys) > 1 else 0.0))


def _rates_row(name: str, xs: list[float], ys: list[float]) -> dict[str, Any]:
    test, z, p = stats.compare_rates(xs, ys)
    return _row_out(name, stats.mean(ys), stats.mean(xs), z, p, test, _mean_se(xs, ys))


def _welch_row(name: str, xs: Sequence[float], ys: Sequence[float]) -> dict[str, Any]:
    """A per-game mean: Welch's t-test (the variant's games against the baseline's)."""
    t, _, p = stats.welch_t(xs, ys)
    return _row_out(name, stats.mean(ys), stats.mean(xs), t, p, "Welch t", _mean_se(xs, ys), percent=False)


def _figure_row(name: str, kind: str, s1: Samples, s0: Samples) -> dict[str, Any]:
    if kind == "mean":
        return _welch_row(name, s1[0], s0[0])
    assert s1[1] is not None and s0[1] is not None
    z, p = stats.compare_ratios(s1[0], s1[1], s0[0], s0[1])
    (r0, v0), (r1, v1) = stats.ratio(s0[0], s0[1]), stats.ratio(s1[0], s1[1])
    return _row_out(name, r0, r1, z, p, "z (cluster-robust)", math.sqrt(v0 + v1), percent=kind == "proportion")


def compare(spec: RunSpec, base: dict[str, Any], base_rows: Sequence[Row],
            other: dict[str, Any], other_rows: Sequence[Row], counters: Sequence[Declared] | None = None,
            endings: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """A variant against the baseline: each difference and its significance (unadjusted; see
    :func:`adjust_for_multiple_comparisons`)."""
    if counters is None:
        counters = declared_counters(spec.game)
    n0, n1 = base["games"], other["games"]
    n = spec.players
    out = [_rates_row("first player win rate", order_values(other_rows, n)[0], order_values(base_rows, n)[0])]
    seats0, seats1 = seat_values(base_rows, n), seat_values(other_rows, n)
    for s in range(n):
        out.append(_rates_row(f"seat {s} win rate", seats1[s], seats0[s]))
    out.append(_proportion_row("shared wins", other["shared_wins"]["count"], n1, base["shared_wins"]["count"], n0))
    out.append(_proportion_row("stopped by turn_limit", other["turn_limit"]["count"], n1,
                               base["turn_limit"]["count"], n0))
    d0, d1 = base["metrics"]["drama"], other["metrics"]["drama"]
    out.append(_proportion_row("drama", d1["count"], d1["games"], d0["count"], d0["games"]))
    out.append(_welch_row("mean turns", [r["turns"] for r in other_rows], [r["turns"] for r in base_rows]))
    figs0 = {f["name"]: (f, samples) for f, samples in _figures(counters, base_rows, endings)}
    for f1, s1 in _figures(counters, other_rows, endings):
        hit = figs0.get(f1["name"])
        if hit is not None:
            out.append(_figure_row(f1["name"], f1["kind"], s1, hit[1]))
    return out


MULTIPLE_COMPARISONS = N_(
    "A sweep runs many tests at once: at 5% each, about one in twenty differences between "
    "identical variants comes out \"significant\" by chance. The column p (Holm) adjusts every p-value "
    "of the sweep (all variants and measures together) by Holm's method, which keeps the chance of "
    "any false positive at 5%; trust a difference that is significant after the adjustment, and "
    "treat the others as leads to check with a new run (another seed). A measure that repeats "
    "another one's test (with two players, seat 1's win rate is one minus seat 0's; without rotation "
    "the first player is seat 0) and a measure that never varies are not counted."
)


def _same_test(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two rows of one comparison that are the same test (one is the other's complement or copy)."""
    za, zb = a["z"], b["z"]
    return (a["p_value"] is not None and b["p_value"] is not None and math.isfinite(za) and math.isfinite(zb)
            and abs(abs(za) - abs(zb)) <= 1e-9 * max(1.0, abs(za)) and abs(a["p_value"] - b["p_value"]) <= 1e-12
            and abs(abs(a["diff"]) - abs(b["diff"])) <= 1e-12)


def adjust_for_multiple_comparisons(comparisons: list[dict[str, Any]]) -> dict[str, Any]:
    """Add ``p_holm`` and ``significant_holm`` to every tested row of every comparison (Holm over the
    whole sweep) and describe the family of tests. The family leaves out a row that repeats an
    earlier row's test in the same comparison (``same_as``: it takes that row's adjusted p) and a
    constant one (no p-value)."""
    family: list[dict[str, Any]] = []
    for c in comparisons:
        kept: list[dict[str, Any]] = []
        for r in c["rows"]:
            if r["p_value"] is None:
                continue
            twin = next((k for k in kept if _same_test(k, r)), None)
            if twin is not None:
                r["same_as"] = twin["measure"]
                continue
            kept.append(r)
        family.extend(kept)
    for r, adjusted in zip(family, stats.holm([r["p_value"] for r in family]), strict=True):
        r["p_holm"] = adjusted
        r["significant_holm"] = adjusted < stats.ALPHA
    for c in comparisons:
        by_name = {r["measure"]: r for r in c["rows"]}
        for r in c["rows"]:
            if "same_as" in r:
                r["p_holm"] = by_name[r["same_as"]]["p_holm"]
                r["significant_holm"] = by_name[r["same_as"]]["significant_holm"]
        c["conclusion"] = _conclusion(c)
    return {
        "method": "Holm", "tests": len(family),
        "significant": sum(1 for r in family if r["significant"]),
        "significant_holm": sum(1 for r in family if r["significant_holm"]),
        "note": MULTIPLE_COMPARISONS,
    }


def _conclusion(comparison: dict[str, Any]) -> dict[str, Any]:
    """What a designer should conclude about the first player's win rate: ``verdict`` ``changes``
    (significant after Holm), ``hint`` (before the adjustment only) or ``no_evidence``, with the
    difference, its interval and the run's minimum detectable effect (80% power at 5%)."""
    row = next(r for r in comparison["rows"] if r["measure"] == "first player win rate")
    verdict = ("changes" if row.get("significant_holm") else "hint" if row["significant"] else "no_evidence")
    counts = comparison.get("players") or []
    if len(set(counts)) > 1:
        verdict = "other_players"  # 1/n differs: the raw rates do not compare; the advantages (rate - 1/n) do
    return {"measure": row["measure"], "verdict": verdict, "diff": row["diff"], "ci": row["ci"],
            "mde": MDE_FACTOR * row["se"]}


def summarise(spec: RunSpec, rows: Sequence[Row], games: int, counters: Sequence[Declared] | None = None,
              ) -> dict[str, Any]:
    """The whole run: every variant, and each variant compared with the first one.
    ``counters``: the game's declarations (default: read from the game)."""
    from ludoteca.registry import game_class

    cls = game_class(spec.game)
    if counters is None:
        counters = tuple(cls.counters)
    by_variant: dict[str, list[Row]] = {v.key: [] for v in spec.variants}
    for r in rows:
        if r["variant"] in by_variant and r["game"] < games:
            by_variant[r["variant"]].append(r)
    for lst in by_variant.values():
        lst.sort(key=lambda r: r["game"])
    endings = end_reasons([r for lst in by_variant.values() for r in lst])
    variants: list[dict[str, Any]] = []
    for k, variant in enumerate(spec.variants):
        summary = summarise_variant(spec.for_variant(k), by_variant[variant.key], counters, endings)
        variants.append({"key": variant.key, "overrides": variant.overrides, "options": variant.options,
                         "players": spec.players_of(k), **summary})
    comparisons = []
    if len(variants) > 1:
        b = variants[0]
        for k, v in enumerate(variants[1:], 1):
            comparisons.append({
                "variant": v["key"], "baseline": b["key"], "players": [b["players"], v["players"]],
                "rows": compare(spec.for_comparison(0, k), b, by_variant[b["key"]], v, by_variant[v["key"]], counters,
                                endings),
            })
    multiple = adjust_for_multiple_comparisons(comparisons) if comparisons else None
    return {
        "format": FORMAT, "version": VERSION,
        "game": spec.game, "title": cls.title, "players": spec.players, "score_name": cls.score_name,
        "counters_declared": [{"name": d.name, "kind": d.kind, "of": d.of, "doc": d.doc} for d in counters],
        "counters_unread": unread_counters(counters),
        "lineup": list(spec.lineup), "rotate": spec.rotate, "seed": spec.seed, "detail": spec.detail,
        "games_per_variant": games, "complete": all(v["games"] >= games for v in variants),
        "alpha": stats.ALPHA, "definitions": DEFINITIONS,
        "sampling_unit": SAMPLING_UNIT,
        "variants": variants, "comparisons": comparisons, "multiple_comparisons": multiple,
    }


def clean_json(x: Any) -> Any:
    """Replace NaN/inf (not valid JSON) with None, recursively."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [clean_json(v) for v in x]
    return x
