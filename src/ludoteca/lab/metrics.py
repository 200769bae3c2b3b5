"""From the rows of a run to its figures: win rates, lengths, Ludii-style metrics, game figures.

Conventions (also in ``docs/lab.md``):

* A seat's **win rate** is the mean of its returns: a win shared by ``k`` players counts
  ``1/k``, so the rates of all seats add up to 1 and the fair share is ``1/n``.
* The **first player** is the seat whose turn came first (TRI and TOHM: seat 0; exactly: the
  roll-off winner; EXAGON: the holder of the 39). **Play order** ``p`` is the seat ``p``
  places after the first player, clockwise.
* A **shared win** (two or more winners) is ludoteca's draw.
* **Detailed games** (every ``detail``-th game, 4 by default) also measure each decision:
  branching factor, decision factor, drama and lead changes come from them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ludoteca.lab import stats
from ludoteca.lab.runner import Row, RunSpec

SAMPLING_UNIT = (
    "The game is the sampling unit. Games are independent; the events inside a game (turns, rounds, "
    "battles, decisions) are not, so a share of events pooled over games gets a cluster-robust interval "
    "(Wilson on the effective number of events, from the spread of the games' own shares) and is compared "
    "between variants with a cluster-robust z-test; per-game means (battles per game, duration, ...) get a "
    "t interval and Welch's t-test."
)

FORMAT = "ludoteca-lab-summary"
VERSION = 1

DEFINITIONS: dict[str, str] = {
    "advantage": "Win rate of the player who took the first turn (a shared win counts 1/k), next to "
                 "the fair share 1/n; tested against 1/n (exact binomial test, or a z-test with the "
                 "observed variance when wins are shared).",
    "balance": "1 minus the largest gap between the win rates of the play-order positions "
               "(first player, second, ...): 1 is perfectly balanced.",
    "completion": "Share of games that ended by the rules rather than by reaching turn_limit.",
    "drawishness": "Share of games whose win is shared by two or more players (ludoteca's draws).",
    "duration": "Mean number of player turns per game (RULES.md's `turn`), with its t interval.",
    "duration_spread": "Standard deviation of the number of turns per game.",
    "branching_factor": "Mean number of legal actions at decision nodes (a forced choice counts 1), "
                        "over every decision of the detailed games (interval: the detailed games as the unit).",
    "decision_factor": "Share of decision nodes with more than one legal action (detailed games; interval: "
                       "the detailed games as the unit).",
    "drama": "Among detailed games with a single winner: share in which the winner was strictly "
             "behind the leader at mid-game — the scores as they stood when turn floor(T/2) of a "
             "T-turn game was played — by the game's score: exactly: euros; TRI: units; TOHM: "
             "trophies; EXAGON: fewest tiles in hand.",
    "lead_changes": "Mean number of times the sole leader by the game's score (read at each "
                    "decision) became another player (detailed games).",
    "dice_rolled": "Mean number of chance nodes per game: die rolls (exactly's roll-off included), "
                   "TRI's battle, income and tie-break draws, EXAGON's deal of each tile.",
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


def summarise_variant(spec: RunSpec, rows: Sequence[Row]) -> dict[str, Any]:
    """Every figure of one variant's rows."""
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
        "figures": game_figures(spec.game, rows),
        "counters": counter_table(rows),
    }


# --- game-specific figures ------------------------------------------------------------------
#
# Every figure keeps its per-game material (``Samples``): the game is the sampling unit of
# every interval and test (see :mod:`ludoteca.lab.stats`). Kinds:
#
# * ``proportion`` — a share of events pooled over games (x_i of n_i events in game i):
#   Wilson interval on the effective number of events (cluster-robust variance);
# * ``ratio`` — events per event pooled over games (e.g. battles per turn): R ± 1.96 se,
#   cluster-robust;
# * ``mean`` — a per-game count (e.g. battles per game): t interval of the mean.


Samples = tuple[list[float], list[float] | None]
"""Per game: ``(x, n)`` for a proportion or a ratio, ``(x, None)`` for a per-game mean."""


def _col(rows: Sequence[Row], key: str) -> list[float]:
    return [float(r["counters"].get(key, 0) or 0) for r in rows]


def _has(rows: Sequence[Row], *keys: str) -> bool:
    return bool(rows) and all(k in rows[0]["counters"] for k in keys)


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
         ) -> tuple[dict[str, Any], Samples]:
    fig: dict[str, Any] = {"name": name, "kind": kind, "definition": definition}
    fig.update(figure_stats(kind, xs, ns))
    return fig, (xs, ns)


def _figures(game: str, rows: Sequence[Row]) -> list[tuple[dict[str, Any], Samples]]:
    """The figures designers asked for, game by game (from ``counters()``), each with its
    per-game material."""
    if not rows:
        return []
    figs: list[tuple[dict[str, Any], Samples]] = []
    add = figs.append
    turns = [float(r["turns"]) for r in rows]
    if game == "exactly" and _has(rows, "rounds", "euros"):
        rounds = _col(rows, "rounds")
        add(_fig("euros per round", "1-euro tokens awarded / rounds completed (two players can score on one "
                 "move)", "ratio", _col(rows, "euros"), rounds))
        add(_fig("rounds per game", "rounds completed by a scoring move, per game", "mean", rounds))
        if _has(rows, "question_rounds"):
            add(_fig("rounds decided by a ?", "share of rounds whose scoring move was made on a '?' roll",
                     "proportion", _col(rows, "question_rounds"), rounds))
        if _has(rows, "cap_blocks"):
            caps = _col(rows, "cap_blocks")
            add(_fig("turns limited by the 150-cent cap", "share of turns in which the cap forbade at least "
                     "one move of the rolled value that would otherwise be legal", "proportion", caps, turns))
            add(_fig("cap blocks per round", "turns limited by the cap / rounds completed", "ratio", caps, rounds))
    elif game == "tri" and _has(rows, "battles"):
        add(_fig("eliminations per game", "players eliminated, per game", "mean", _col(rows, "eliminations")))
        add(_fig("squares closed per game", "times a square became closed (all four triangles one player's), "
                 "per game", "mean", _col(rows, "squares_closed")))
        battles = _col(rows, "battles")
        add(_fig("battles per game", "attacks played, per game", "mean", battles))
        add(_fig("battles per turn", "battles / player turns", "ratio", battles, turns))
        if _has(rows, "teleports"):
            add(_fig("teleports per game", "teleports played, per game", "mean", _col(rows, "teleports")))
        won_all = [0.0] * len(rows)
        for k in (1, 2, 3):
            dice = "die" if k == 1 else "dice"
            wk = _col(rows, f"attacker_wins_k{k}")
            won_all = [a + b for a, b in zip(won_all, wk, strict=True)]
            add(_fig(f"attacker win rate, {k} {dice}", f"battles won by an attacker rolling {k} {dice} (units "
                     f"adjacent to the target) / such battles, over all games", "proportion", wk,
                     _col(rows, f"battles_k{k}")))
        add(_fig("attacker win rate, all battles", "battles won by the attacker / battles", "proportion",
                 won_all, battles))
    elif game == "tohm" and _has(rows, "trophies_given"):
        add(_fig("trophies per turn", "trophies given / player turns", "ratio", _col(rows, "trophies_given"), turns))
        if _has(rows, "tris", "tris_for_others"):
            tris = _col(rows, "tris")
            add(_fig("tris made by others' moves", "share of tris scored by a move of another player than the "
                     "owner (a 2 moved someone else's token into line)", "proportion",
                     _col(rows, "tris_for_others"), tris))
            add(_fig("tris per game", "tris scored, per game", "mean", tris))
    elif game == "exagon" and _has(rows, "placements"):
        ones = [1.0] * len(rows)
        for reason, label in (("blocked", "blocked games"), ("last_tile", "wins by last tile"),
                              ("perfect_fit", "wins by perfect fit"), ("turn_limit", "games stopped by turn_limit")):
            ended = [1.0 if r["counters"].get("end") == reason else 0.0 for r in rows]
            add(_fig(label, f"share of games that ended with end reason {reason!r}", "proportion", ended, ones))
        add(_fig("perfect fits per game", "tiles placed with 6 connections, per game", "mean",
                 _col(rows, "perfect_fits")))
        add(_fig("bonuses earned per turn", "bonus tiles earned (3/4/5 connections: 1/2/3) / player turns",
                 "ratio", _col(rows, "bonuses_earned"), turns))
        add(_fig("bonuses spent per turn", "bonuses spent (to go on after a one-connection tile, or to give a "
                 "tile) / player turns", "ratio", _col(rows, "bonuses_spent"), turns))
        add(_fig("tiles given per game", "tiles given to a player holding one, per game", "mean",
                 _col(rows, "tiles_given")))
        add(_fig("placements per turn", "tiles placed / player turns", "ratio", _col(rows, "placements"), turns))
        add(_fig("passes per turn", "turns ended by pass (no legal placement) / player turns", "ratio",
                 _col(rows, "passes"), turns))
    return figs


def game_figures(game: str, rows: Sequence[Row]) -> list[dict[str, Any]]:
    """The figures designers asked for, game by game, with their 95% intervals."""
    return [f for f, _ in _figures(game, rows)]


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

def _row_out(name: str, v0: float, v1: float, z: float, p: float, test: str, *, percent: bool = True,
             ) -> dict[str, Any]:
    """One measure of a comparison; ``percent``: a share (shown as a percentage)."""
    return {"measure": name, "baseline": v0, "value": v1, "diff": v1 - v0, "z": z, "p_value": p,
            "test": test, "significant": p < stats.ALPHA, "percent": percent}


def _proportion_row(name: str, x1: float, n1: int, x0: float, n0: int) -> dict[str, Any]:
    """A share of games (each game 0 or 1): the pooled two-proportion z-test."""
    z, p = stats.two_proportion_z(x1, n1, x0, n0)
    return _row_out(name, x0 / n0 if n0 else 0.0, x1 / n1 if n1 else 0.0, z, p, "two-proportion z")


def _rates_row(name: str, xs: list[float], ys: list[float]) -> dict[str, Any]:
    test, z, p = stats.compare_rates(xs, ys)
    return _row_out(name, stats.mean(ys), stats.mean(xs), z, p, test)


def _welch_row(name: str, xs: Sequence[float], ys: Sequence[float]) -> dict[str, Any]:
    """A per-game mean: Welch's t-test (the variant's games against the baseline's)."""
    t, _, p = stats.welch_t(xs, ys)
    return _row_out(name, stats.mean(ys), stats.mean(xs), t, p, "Welch t", percent=False)


def _figure_row(name: str, kind: str, s1: Samples, s0: Samples) -> dict[str, Any]:
    if kind == "mean":
        return _welch_row(name, s1[0], s0[0])
    assert s1[1] is not None and s0[1] is not None
    z, p = stats.compare_ratios(s1[0], s1[1], s0[0], s0[1])
    return _row_out(name, stats.ratio(s0[0], s0[1])[0], stats.ratio(s1[0], s1[1])[0], z, p,
                    "z (cluster-robust)", percent=kind == "proportion")


def compare(spec: RunSpec, base: dict[str, Any], base_rows: Sequence[Row],
            other: dict[str, Any], other_rows: Sequence[Row]) -> list[dict[str, Any]]:
    """A variant against the baseline: each difference and its significance (unadjusted; see
    :func:`adjust_for_multiple_comparisons`)."""
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
    figs0 = {f["name"]: (f, samples) for f, samples in _figures(spec.game, base_rows)}
    for f1, s1 in _figures(spec.game, other_rows):
        hit = figs0.get(f1["name"])
        if hit is not None:
            out.append(_figure_row(f1["name"], f1["kind"], s1, hit[1]))
    return out


MULTIPLE_COMPARISONS = (
    "A sweep runs many tests at once: at 5% each, about one in twenty differences between "
    "identical variants comes out \"significant\" by chance. The column p (Holm) adjusts every p-value "
    "of the sweep (all variants and measures together) by Holm's method, which keeps the chance of "
    "any false positive at 5%; trust a difference that is significant after the adjustment, and "
    "treat the others as leads to check with a new run (another seed)."
)


def adjust_for_multiple_comparisons(comparisons: list[dict[str, Any]]) -> dict[str, Any]:
    """Add ``p_holm`` and ``significant_holm`` to every tested row of every comparison (Holm
    over the whole sweep) and describe the family of tests."""
    tested = [r for c in comparisons for r in c["rows"] if r["p_value"] is not None]
    for r, adjusted in zip(tested, stats.holm([r["p_value"] for r in tested]), strict=True):
        r["p_holm"] = adjusted
        r["significant_holm"] = adjusted < stats.ALPHA
    return {
        "method": "Holm", "tests": len(tested),
        "significant": sum(1 for r in tested if r["significant"]),
        "significant_holm": sum(1 for r in tested if r["significant_holm"]),
        "note": MULTIPLE_COMPARISONS,
    }


def summarise(spec: RunSpec, rows: Sequence[Row], games: int) -> dict[str, Any]:
    """The whole run: every variant, and each variant compared with the first one."""
    from ludoteca.registry import game_class

    by_variant: dict[str, list[Row]] = {v.key: [] for v in spec.variants}
    for r in rows:
        if r["variant"] in by_variant and r["game"] < games:
            by_variant[r["variant"]].append(r)
    for lst in by_variant.values():
        lst.sort(key=lambda r: r["game"])
    variants = []
    for v in spec.variants:
        summary = summarise_variant(spec, by_variant[v.key])
        variants.append({"key": v.key, "overrides": v.overrides, "options": v.options, **summary})
    comparisons = []
    if len(variants) > 1:
        b = variants[0]
        for v in variants[1:]:
            comparisons.append({
                "variant": v["key"], "baseline": b["key"],
                "rows": compare(spec, b, by_variant[b["key"]], v, by_variant[v["key"]]),
            })
    multiple = adjust_for_multiple_comparisons(comparisons) if comparisons else None
    return {
        "format": FORMAT, "version": VERSION,
        "game": spec.game, "title": game_class(spec.game).title, "players": spec.players,
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
