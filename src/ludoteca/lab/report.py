"""Reports of a run: ``summary.json``, a self-contained ``report.html`` (plots embedded as
base64 PNG, matplotlib needed) and short tables in the terminal (rich)."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ludoteca.lab.metrics import DEFINITIONS, clean_json
from ludoteca.lab.runner import Row

METRIC_NAMES = {
    "advantage": "Advantage (first player's win rate)",
    "balance": "Balance",
    "completion": "Completion",
    "drawishness": "Drawishness",
    "duration": "Duration (mean turns)",
    "duration_spread": "Duration spread (sd of turns)",
    "branching_factor": "Branching factor",
    "decision_factor": "Decision factor",
    "drama": "Drama",
    "lead_changes": "Lead changes",
    "dice_rolled": "Dice rolled (chance nodes per game)",
}
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")
PERCENT_METRICS = {"advantage", "balance", "completion", "drawishness", "decision_factor", "drama"}


def plural(count: float, word: str, many: str | None = None) -> str:
    """``"1 tile"``, ``"2 tiles"``, ``"0 tiles"``, ``"1,500 games"`` (``many``: an irregular plural)."""
    shown = f"{int(count):,}" if float(count).is_integer() else f"{count:,.2f}"
    return f"{shown} {word if count == 1 else (many or word + 's')}"


def ordinal(k: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ..."""
    if 10 <= k % 100 <= 20:
        return f"{k}th"
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def every_kth_game(k: int) -> str:
    return "every game" if k == 1 else f"every {ordinal(k)} game"


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def ci_text(ci: Sequence[float] | None) -> str:
    return "" if ci is None else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def ci_num(ci: Sequence[float] | None, digits: int = 2) -> str:
    """An interval of a mean or a ratio, not a percentage."""
    return "" if ci is None else f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def pval(p: float | None) -> str:
    if p is None:
        return "-"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def p_is(p: float | None) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = pval(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.{digits}f}"


def metric_text(key: str, m: dict[str, Any]) -> str:
    if key in PERCENT_METRICS:
        text = pct(m["value"])
        if m.get("ci") is not None:
            text += " " + ci_text(m["ci"])
        return text
    if m.get("ci") is not None:
        return f"{num(m['value'])} {ci_num(m['ci'])}"
    return num(m["value"])


def figure_text(f: dict[str, Any], short: bool = False) -> str:
    if f["kind"] == "proportion":
        return f"{pct(f['value'])} {ci_text(f.get('ci'))}".strip()
    if short:
        return f"{f['value']:.3g}"
    digits = 3 if f["kind"] == "mean" else 4
    text = f"{f['value']:.{digits}f} {ci_num(f.get('ci'), digits)}".strip()
    if f["kind"] == "mean" and "sd" in f:
        text += f" (sd {f['sd']:.2f})"
    return text


def _cell(variant: dict[str, Any], name: str, fmt: Callable[[dict[str, Any]], str]) -> str:
    """A variant's figure ``name`` as text, or ``-`` when the variant lacks it."""
    for f in variant["figures"]:
        if f["name"] == name:
            return fmt(f)
    return "-"


def short(x: float) -> str:
    """A length figure: whole numbers as such, else one decimal."""
    return f"{int(x)}" if float(x).is_integer() else f"{x:.1f}"


def first_player_sentence(v: dict[str, Any]) -> str:
    fp = v["first_player"]
    who = "seat 0" if fp["first_is_seat0"] else "the first player"
    verdict = "significant" if fp["significant"] else "not significant"
    return (f"{who} wins {pct(fp['rate'])} {ci_text(fp['ci'])} against a fair {pct(fp['fair'])} "
            f"(advantage {100 * fp['advantage']:+.1f} points, {p_is(fp['p_value'])}, {verdict} at 5%)")


def write_summary(summary: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(clean_json(summary), indent=1) + "\n", encoding="utf-8")


# --- terminal ----------------------------------------------------------------------------------

def print_tables(summary: dict[str, Any], console: Any = None) -> None:
    """Seats with intervals, the first-player verdict, lengths, and sweep differences."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    variants = summary["variants"]
    n = summary["players"]
    many = len(variants) > 1
    console.print(f"[bold]{summary['title']}, {n} players[/bold] — win rate by seat (95% Wilson interval)")
    t = Table()
    t.add_column("seat")
    if not summary["rotate"] and len(set(summary["lineup"])) > 1:
        t.add_column("agent")
    for v in variants:
        t.add_column(f"{v['key']} ({plural(v['games'], 'game')})" if many else plural(v["games"], "game"),
                     justify="right")
    for s in range(n):
        cells = [str(s)]
        if not summary["rotate"] and len(set(summary["lineup"])) > 1:
            cells.append(summary["lineup"][s])
        cells += [f"{pct(v['seats'][s]['rate'])} {ci_text(v['seats'][s]['ci'])}" for v in variants]
        t.add_row(*cells)
    console.print(t)
    for v in variants:
        prefix = f"{v['key']}: " if many else ""
        console.print(f"First player: {prefix}{first_player_sentence(v)}")
    agents_present = [v for v in variants if v["agents"]]
    if agents_present:
        console.print("Win rate by agent (95% Wilson interval):")
        t = Table()
        t.add_column("agent")
        for v in agents_present:
            t.add_column(v["key"] if many else "win rate", justify="right")
        t.add_column("fair", justify="right")
        for i, a in enumerate(agents_present[0]["agents"]):
            t.add_row(a["agent"], *[f"{pct(v['agents'][i]['rate'])} {ci_text(v['agents'][i]['ci'])}"
                                    for v in agents_present], pct(a["fair"]))
        console.print(t)
    t = Table()
    t.add_column("length and endings")
    for v in variants:
        t.add_column(v["key"] if many else "", justify="right")
    rows = [
        ("turns: median / p90",
         lambda v: f"{short(v['length']['turns']['median'])} / {short(v['length']['turns']['p90'])}"),
        ("rounds: median / p90",
         lambda v: f"{short(v['length']['rounds']['median'])} / {short(v['length']['rounds']['p90'])}"),
        ("shared wins", lambda v: f"{num(v['shared_wins']['count'])} ({pct(v['shared_wins']['rate'])})"),
        ("stopped by turn_limit", lambda v: f"{num(v['turn_limit']['count'])} ({pct(v['turn_limit']['rate'])})"),
        ("balance", lambda v: pct(v["metrics"]["balance"]["value"])),
        ("drama", lambda v: pct(v["metrics"]["drama"]["value"])),
    ]
    for label, fn in rows:
        t.add_row(label, *[fn(v) for v in variants])
    for f in variants[0]["figures"][:5]:
        t.add_row(f["name"], *[_cell(v, f["name"], lambda x: figure_text(x, short=True)) for v in variants])
    console.print(t)
    if summary["comparisons"]:
        base = summary["comparisons"][0]["baseline"]
        console.print(f"Variants against {base} (value (difference, p of the test); * significant at 5% "
                      "before adjustment):")
        t = Table()
        measures = ("first player win rate", "shared wins", "mean turns")
        t.add_column("variant")
        for m in measures:
            t.add_column(m, justify="right")
        for comp in summary["comparisons"]:
            found = {r["measure"]: r for r in comp["rows"]}
            cells = []
            for m in measures:
                r = found[m]
                star = "*" if r["significant"] else ""
                if m == "mean turns":
                    cells.append(f"{num(r['value'], 1)} ({r['diff']:+.1f}, p {pval(r['p_value'])}){star}")
                else:
                    cells.append(f"{pct(r['value'])} ({100 * r['diff']:+.1f}, p {pval(r['p_value'])}){star}")
            t.add_row(comp["variant"], *cells)
        console.print(t)
        mc = summary.get("multiple_comparisons")
        if mc:
            console.print(f"Multiple comparisons: this sweep ran {plural(mc['tests'], 'test')}; "
                          f"{mc['significant']} significant at 5% before adjustment, {mc['significant_holm']} "
                          "after Holm's adjustment (report.html, column p (Holm)). At 5% each, about one "
                          "test in twenty comes out significant by chance.")
        console.print("All measures, figure by figure: report.html and summary.json.")


# --- plots ---------------------------------------------------------------------------------------

def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _rate_plot(summary: dict[str, Any], which: str, label: str) -> str:
    from matplotlib.figure import Figure

    variants = summary["variants"]
    n = summary["players"]
    fig = Figure(figsize=(max(4.5, 1.2 * n * len(variants) ** 0.5 + 2), 3.2))
    ax = fig.subplots()
    width = 0.8 / len(variants)
    for k, v in enumerate(variants):
        xs = [i + (k - (len(variants) - 1) / 2) * width for i in range(n)]
        rates = [e["rate"] for e in v[which]]
        err = [[max(0.0, e["rate"] - e["ci"][0]) for e in v[which]],
               [max(0.0, e["ci"][1] - e["rate"]) for e in v[which]]]
        ax.bar(xs, rates, width=width, yerr=err, capsize=3, label=v["key"])
    ax.axhline(1 / n, color="black", linestyle="--", linewidth=1, label="fair 1/n")
    ax.set_xticks(range(n))
    ax.set_xticklabels([f"seat {i}" if label == "seat" else ORDINALS[i] + " player" for i in range(n)])
    ax.set_ylabel("win rate")
    ax.legend(fontsize="small")
    return _png(fig)


def _hist_plot(rows_by_variant: dict[str, list[Row]], field: str, summary: dict[str, Any]) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 3.2))
    ax = fig.subplots()
    values = [r[field] for rows in rows_by_variant.values() for r in rows]
    if values:
        lo, hi = min(values), max(values)
        width = -(-(hi - lo + 1) // 60)  # whole-number bins, at most 60 of them
        edges = [lo + k * width for k in range((hi - lo) // width + 2)]
        single = len(rows_by_variant) == 1
        for key, rows in rows_by_variant.items():
            xs = [r[field] for r in rows]
            ax.hist(xs, bins=edges, histtype="bar" if single else "step",
                    label=key, alpha=0.8 if single else 1.0, linewidth=1.5)
        if single:
            v = summary["variants"][0]["length"][field]
            ax.axvline(v["median"], color="black", linestyle="-", linewidth=1, label=f"median {num(v['median'])}")
            ax.axvline(v["p90"], color="black", linestyle=":", linewidth=1, label=f"p90 {num(v['p90'])}")
        ax.legend(fontsize="small")
    ax.set_xlabel(field)
    ax.set_ylabel("games")
    return _png(fig)


def _figure_plot(summary: dict[str, Any]) -> str | None:
    from matplotlib.figure import Figure

    variants = summary["variants"]
    names = [f["name"] for f in variants[0]["figures"] if f["kind"] == "proportion" and f.get("of")]
    if not names:
        return None
    fig = Figure(figsize=(6.5, 0.45 * len(names) * max(1, len(variants) ** 0.5) + 1.2))
    ax = fig.subplots()
    height = 0.8 / len(variants)
    for k, v in enumerate(variants):
        figs = {f["name"]: f for f in v["figures"]}
        ys, xs, lo, hi = [], [], [], []
        for i, name in enumerate(names):
            f = figs.get(name)
            if f is None or "ci" not in f:
                continue
            ys.append(i + (k - (len(variants) - 1) / 2) * height)
            xs.append(f["value"])
            lo.append(max(0.0, f["value"] - f["ci"][0]))
            hi.append(max(0.0, f["ci"][1] - f["value"]))
        ax.barh(ys, xs, height=height, xerr=[lo, hi], capsize=3, label=v["key"])
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("share (95% interval, games as the sampling unit)")
    if len(variants) > 1:
        ax.legend(fontsize="small")
    return _png(fig)


# --- HTML ------------------------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;
color:#222}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.8em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}td.left,th.left{text-align:left}td:first-child{min-width:8em}
td.def{text-align:left;color:#555;font-size:.9em;min-width:20em;max-width:34em}
.sig{color:#a00;font-weight:bold}.note{color:#555}.warn{background:#fff6e0;border-left:4px solid #e0a000;
padding:.4em .8em}img{max-width:100%}
code{background:#f3f3f3;padding:0 .2em}
"""


def _whole(text: str) -> str:
    """An interval kept on one line (``[1.0001, 1.0065]`` never breaks after its comma)."""
    return text.replace(", ", ",\u00a0")


def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(head: Sequence[str], body: Sequence[Sequence[str]], raw_cols: set[int] | None = None,
           cell_class: dict[int, str] | None = None) -> str:
    """An HTML table; ``raw_cols`` hold HTML already, ``cell_class`` gives a column a CSS class
    (``def``: a definition, left-aligned text; ``left``: left-aligned)."""
    raw_cols = raw_cols or set()
    cell_class = cell_class or {}
    out = ["<table><tr>", *[f"<th class='left'>{_e(h)}</th>" if i in cell_class else f"<th>{_e(h)}</th>"
                            for i, h in enumerate(head)], "</tr>"]
    for row in body:
        out.append("<tr>")
        for i, cell in enumerate(row):
            cls = f" class='{cell_class[i]}'" if i in cell_class else ""
            out.append(f"<td{cls}>{cell if i in raw_cols else _e(cell)}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def render_html(summary: dict[str, Any], rows: Sequence[Row], command: str | None = None) -> str:
    variants = summary["variants"]
    n = summary["players"]
    keys = [v["key"] for v in variants]
    rows_by_variant: dict[str, list[Row]] = {k: [] for k in keys}
    limit = summary["games_per_variant"]
    for r in rows:
        if r["variant"] in rows_by_variant and r["game"] < limit:
            rows_by_variant[r["variant"]].append(r)
    parts: list[str] = []
    add = parts.append
    add(f"<!doctype html><html><head><meta charset='utf-8'><title>ludoteca lab: {_e(summary['title'])}"
        f"</title><style>{CSS}</style></head><body>")
    add(f"<h1>Balance lab: {_e(summary['title'])}, {n} players</h1>")
    lineup = ", ".join(f"seat {s}: {a}" for s, a in enumerate(summary["lineup"]))
    info = [
        ("agents", lineup + (" (rotated: in game i seat s is played by the lineup's agent (s + i) mod n)"
                             if summary["rotate"] else "")),
        ("seed", str(summary["seed"])),
        ("games per variant", str(summary["games_per_variant"])
         + ("" if summary["complete"] else " (run incomplete: figures use the games done so far)")),
        ("variants", ", ".join(keys)),
        ("detailed games", (f"{every_kth_game(summary['detail'])} "
                            f"({plural(variants[0]['detailed_games'], 'game')} per variant): "
                            "branching factor, decision factor, drama and lead changes come from them")
         if summary["detail"] else "none (--detail 0)"),
        ("score", f"{summary.get('score_name', 'score')} (the game's scores(): the measure turn_limit uses; "
                  "drama and lead changes read it)"),
        ("sampling unit", summary.get("sampling_unit", "")),
    ]
    if command:
        info.append(("command", f"<code>{_e(command)}</code>"))
    add("<table>" + "".join(
        f"<tr><th>{_e(k)}</th><td style='text-align:left'>{v if k == 'command' else _e(v)}</td></tr>"
        for k, v in info) + "</table>")
    opts = []
    for v in variants:
        shown = {k: (plural(len(x), "tile") if k == "tiles" and isinstance(x, list) else x)
                 for k, x in v["options"].items()}
        text = json.dumps(shown)
        if len(text) > 400:
            text = text[:400] + " …"
        opts.append([v["key"], text])
    add("<p class='note'>Options of each variant (the game's <code>record_options()</code>, full in "
        "summary.json):</p>" + _table(["variant", "options"], opts, cell_class={1: "left"}))

    # seats
    add("<h2>Win rate by seat and by play order</h2>")
    add("<p class='note'>Win rate = mean return: a win shared by k players counts 1/k, so the rates add "
        "up to 1 and the fair share is 1/n. Intervals: 95% Wilson score intervals; when wins are shared, "
        "on the effective number of games n·p(1−p)/variance (a shared result varies less than a win or a "
        "loss, so the plain interval would be too wide). Tests against 1/n: exact binomial without shared "
        "wins, else a z-test with the observed variance; across positions: chi-square with the Rao–Scott "
        "correction for shared wins.</p>")
    head = ["seat", *keys]
    body = [[str(s), *[f"{pct(v['seats'][s]['rate'])} {ci_text(v['seats'][s]['ci'])}" for v in variants]]
            for s in range(n)]
    add(_table(head, body))
    body = [[f"{ORDINALS[p]} player" if p < len(ORDINALS) else f"player {p + 1}",
             *[f"{pct(v['positions'][p]['rate'])} {ci_text(v['positions'][p]['ci'])}" for v in variants]]
            for p in range(n)]
    add(_table(["play order", *keys], body))
    for v in variants:
        fp = v["first_player"]
        cls = " class='sig'" if fp["significant"] else ""
        add(f"<p><b>{_e(v['key'])}</b>: <span{cls}>{_e(first_player_sentence(v))}</span>. "
            f"Chi-square over play-order positions: χ² = {v['order_test']['chi2']:.2f}, "
            f"df = {v['order_test']['df']}, {p_is(v['order_test']['p_value'])}; over seats: "
            f"{p_is(v['seat_test']['p_value'])}.</p>")
    add(f"<img alt='win rate by play order' src='{_rate_plot(summary, 'positions', 'order')}'>")
    if not all(v["first_player"]["first_is_seat0"] for v in variants):
        add(f"<img alt='win rate by seat' src='{_rate_plot(summary, 'seats', 'seat')}'>")

    if any(v["agents"] for v in variants):
        add("<h2>Win rate by agent</h2><p class='note'>An agent's win rate adds the returns of every "
            "seat it holds; its fair share is the number of seats it holds / n. p: test against the fair "
            "share (as for seats).</p>")
        body = []
        for v in variants:
            for a in v["agents"] or []:
                seats = ", ".join(f"{b['seat']}: {pct(b['rate'])}" for b in a["by_seat"] if b["rate"] is not None)
                body.append([v["key"], a["agent"], f"{pct(a['rate'])} {ci_text(a['ci'])}", pct(a["fair"]),
                             pval(a["p_value"]), seats])
        add(_table(["variant", "agent", "win rate", "fair", "p", "by seat"], body, cell_class={5: "left"}))

    # length
    add("<h2>Game length</h2><p class='note'>Turns: player turns (RULES.md's <code>turn</code>). "
        "Rounds: the game's <code>rounds</code> counter when it declares one, else the position's "
        "<code>round</code> when it has one, else turns / players rounded up.</p>")
    body = []
    for field in ("turns", "rounds"):
        for stat in ("mean", "sd", "min", "p10", "median", "p90", "max"):
            body.append([f"{field}: {stat}", *[num(v["length"][field][stat]) for v in variants]])
    add(_table(["", *keys], body))
    add(f"<img alt='turns' src='{_hist_plot(rows_by_variant, 'turns', summary)}'>")
    add(f"<img alt='rounds' src='{_hist_plot(rows_by_variant, 'rounds', summary)}'>")
    add("<h2>Shared wins and the turn limit</h2>")
    body = [
        ["shared wins", *[f"{num(v['shared_wins']['count'])} ({pct(v['shared_wins']['rate'])} "
                          f"{ci_text(v['shared_wins']['ci'])})" for v in variants]],
        ["stopped by turn_limit", *[f"{num(v['turn_limit']['count'])} ({pct(v['turn_limit']['rate'])} "
                                    f"{ci_text(v['turn_limit']['ci'])})" for v in variants]],
    ]
    add(_table(["", *keys], body))

    # game figures
    if variants[0]["figures"]:
        add(f"<h2>{_e(summary['title'])} figures</h2>")
        add("<p class='note'>How the games ended (the game's <code>end_reason()</code>), then the figures the "
            "game declares (<code>Game.counters</code>, read from <code>counters()</code> at the end of each "
            "game). Intervals (95%): shares of games: Wilson; shares of events pooled over games (per turn, "
            "per battle, per round): Wilson interval on the effective number of events, from the spread of "
            "the games' own shares, since the events of one game are not independent; ratios above 1 per "
            "event: estimate ± 1.96 cluster-robust standard errors; per-game means: t interval. The game is "
            "the sampling unit throughout.</p>")
        body = []
        for f in variants[0]["figures"]:
            body.append([f["name"], *[_cell(v, f["name"], lambda x: _whole(figure_text(x))) for v in variants],
                         f["definition"]])
        add(_table(["figure", *keys, "definition"], body, cell_class={len(keys) + 1: "def"}))
        img = _figure_plot(summary)
        if img:
            add(f"<img alt='game figures' src='{img}'>")
    if not summary.get("counters_declared"):
        add("<p class='note'>This game declares no counters (<code>Game.counters</code>): no figures of its "
            "own beyond how its games ended.</p>")
    for c in summary.get("counters_unread") or []:
        add(f"<p class='warn'>Counter <code>{_e(c['name'])}</code> is not reported: {_e(c['reason'])}.</p>")

    # Ludii metrics
    add("<h2>Evaluation metrics (after Ludii)</h2>")
    body = []
    for key, label in METRIC_NAMES.items():
        body.append([label, *[_whole(metric_text(key, v["metrics"][key])) for v in variants], DEFINITIONS[key]])
    add(_table(["metric", *keys, "definition"], body, cell_class={len(keys) + 1: "def"}))

    # counters
    if variants[0]["counters"]:
        add("<h2>Event counters</h2><p class='note'>The engine's <code>counters()</code> at the end of "
            "each game: mean per game / per turn (text values: how often each occurred).</p>")
        body = []
        for k in variants[0]["counters"]:
            cells = []
            for v in variants:
                cv = v["counters"].get(k, {})
                if "tally" in cv:
                    cells.append(", ".join(f"{a}: {b}" for a, b in cv["tally"].items()))
                else:
                    cells.append(f"{cv.get('per_game', 0):.3f} / {cv.get('per_turn', 0):.4f}")
            body.append([k, *cells])
        add(_table(["counter", *keys], body))

    # sweeps
    if summary["comparisons"]:
        mc = summary.get("multiple_comparisons") or {}
        add("<h2>Variants compared</h2><p class='note'>Each variant against the first one, the game as the "
            "sampling unit. Shares of games: two-proportion z-test (pooled); win rates with shared wins: "
            "z-test with the observed variances; shares and ratios of events pooled over games (turns, "
            "battles, rounds): z-test with cluster-robust variances (each game one cluster); per-game means "
            "(turns, battles per game, ...): Welch's t-test. The variants share the seeds of their games "
            "(game i uses the same seed in every variant); the tests treat them as independent samples, "
            "which errs on the cautious side.</p>")
        if mc:
            add(f"<p class='warn'><b>Multiple comparisons.</b> This sweep ran {plural(mc['tests'], 'test')}: "
                f"{mc['significant']} significant at 5% before adjustment, {mc['significant_holm']} after "
                f"Holm's adjustment. {_e(mc['note'])}</p>")
        for comp in summary["comparisons"]:
            add(f"<h3>{_e(comp['variant'])} vs {_e(comp['baseline'])}</h3>")
            body = []
            for r in comp["rows"]:
                is_pct = r.get("percent", r["measure"] != "mean turns")
                fmt = pct if is_pct else (lambda x: num(x, 4))
                diff = f"{100 * r['diff']:+.2f} pts" if is_pct else f"{r['diff']:+.4f}"
                sig = ("<span class='sig'>significant after Holm</span>" if r.get("significant_holm")
                       else "significant before adjustment only" if r["significant"] else "")
                body.append([r["measure"], fmt(r["baseline"]), fmt(r["value"]), diff,
                             "-" if r["z"] is None else f"{r['z']:.2f}", pval(r["p_value"]),
                             pval(r.get("p_holm")), r["test"] or "-", sig])
            add(_table(["measure", comp["baseline"], comp["variant"], "difference", "z or t", "p", "p (Holm)",
                        "test", ""], body, raw_cols={8}, cell_class={7: "left", 8: "left"}))
    add("<p class='note'>Generated by <code>ludoteca lab</code>. Rows: games.jsonl; figures: summary.json.</p>")
    add("</body></html>")
    return "\n".join(parts)


def write_html(summary: dict[str, Any], rows: Sequence[Row], path: str | Path, command: str | None = None) -> None:
    Path(path).write_text(render_html(summary, rows, command), encoding="utf-8")
