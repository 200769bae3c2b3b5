"""Reports of a run: ``summary.json``, a self-contained ``report.html`` (plots embedded as
base64 PNG, matplotlib needed) and short tables in the terminal (rich)."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
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


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def ci_text(ci: Sequence[float]) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def pval(p: float | None) -> str:
    if p is None:
        return "-"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x)}"
    return f"{x:.{digits}f}"


def metric_text(key: str, m: dict[str, Any]) -> str:
    if key in PERCENT_METRICS:
        text = pct(m["value"])
        if "ci" in m:
            text += " " + ci_text(m["ci"])
        return text
    return num(m["value"])


def figure_text(f: dict[str, Any], short: bool = False) -> str:
    if f["kind"] == "proportion":
        return f"{pct(f['value'])} {ci_text(f['ci'])}" if "ci" in f else pct(f["value"])
    if short:
        return f"{f['value']:.3g}"
    if f["kind"] == "mean" and "sd" in f:
        return f"{f['value']:.3f} (sd {f['sd']:.2f})"
    return f"{f['value']:.4f}"


def short(x: float) -> str:
    """A length figure: whole numbers as such, else one decimal."""
    return f"{int(x)}" if float(x).is_integer() else f"{x:.1f}"


def first_player_sentence(v: dict[str, Any]) -> str:
    fp = v["first_player"]
    who = "seat 0" if fp["first_is_seat0"] else "the first player"
    verdict = "significant" if fp["significant"] else "not significant"
    return (f"{who} wins {pct(fp['rate'])} {ci_text(fp['ci'])} against a fair {pct(fp['fair'])} "
            f"(advantage {100 * fp['advantage']:+.1f} points, p = {pval(fp['p_value'])}, {verdict} at 5%)")


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
        t.add_column(f"{v['key']} ({v['games']} games)" if many else f"{v['games']} games", justify="right")
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
    for i, f in enumerate(variants[0]["figures"][:5]):
        t.add_row(f["name"], *[figure_text(v["figures"][i], short=True) if i < len(v["figures"]) else "-"
                               for v in variants])
    console.print(t)
    if summary["comparisons"]:
        base = summary["comparisons"][0]["baseline"]
        console.print(f"Variants against {base} (value (difference, p of a z-test); * significant at 5%):")
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
        err = [[e["rate"] - e["ci"][0] for e in v[which]], [e["ci"][1] - e["rate"] for e in v[which]]]
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
            lo.append(f["value"] - f["ci"][0])
            hi.append(f["ci"][1] - f["value"])
        ax.barh(ys, xs, height=height, xerr=[lo, hi], capsize=3, label=v["key"])
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    ax.set_xlabel("share (95% Wilson interval)")
    if len(variants) > 1:
        ax.legend(fontsize="small")
    return _png(fig)


# --- HTML ------------------------------------------------------------------------------------------

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;
color:#222}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.8em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}td.def{text-align:left;color:#555;
font-size:.9em;max-width:34em}.sig{color:#a00;font-weight:bold}.note{color:#555}img{max-width:100%}
code{background:#f3f3f3;padding:0 .2em}
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(head: Sequence[str], body: Sequence[Sequence[str]], raw_cols: set[int] | None = None) -> str:
    raw_cols = raw_cols or set()
    out = ["<table><tr>", *[f"<th>{_e(h)}</th>" for h in head], "</tr>"]
    for row in body:
        out.append("<tr>")
        for i, cell in enumerate(row):
            out.append(f"<td>{cell}</td>" if i in raw_cols else f"<td>{_e(cell)}</td>")
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
        ("detailed games", (f"every {summary['detail']}th game ({variants[0]['detailed_games']} per variant): "
                            "branching factor, decision factor, drama and lead changes come from them")
         if summary["detail"] else "none (--detail 0)"),
    ]
    if command:
        info.append(("command", f"<code>{_e(command)}</code>"))
    add("<table>" + "".join(
        f"<tr><th>{_e(k)}</th><td style='text-align:left'>{v if k == 'command' else _e(v)}</td></tr>"
        for k, v in info) + "</table>")
    opts = []
    for v in variants:
        shown = {k: (f"{len(x)} tiles" if k == "tiles" and isinstance(x, list) else x) for k, x in v["options"].items()}
        text = json.dumps(shown)
        if len(text) > 400:
            text = text[:400] + " …"
        opts.append([v["key"], text])
    add("<p class='note'>Options of each variant (the game's <code>record_options()</code>, full in "
        "summary.json):</p>" + _table(["variant", "options"], opts))

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
            f"df = {v['order_test']['df']}, p = {pval(v['order_test']['p_value'])}; over seats: "
            f"p = {pval(v['seat_test']['p_value'])}.</p>")
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
        add(_table(["variant", "agent", "win rate", "fair", "p", "by seat"], body))

    # length
    add("<h2>Game length</h2><p class='note'>Turns: player turns (RULES.md's <code>turn</code>). "
        "Rounds: exactly — rounds completed by a scoring move; TRI — the position's round; "
        "TOHM, EXAGON — turns / players rounded up.</p>")
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
        body = []
        for i, f in enumerate(variants[0]["figures"]):
            body.append([f["name"], *[figure_text(v["figures"][i]) if i < len(v["figures"]) else "-"
                                      for v in variants], f"<span class='def'>{_e(f['definition'])}</span>"])
        add(_table(["figure", *keys, "definition"], body, raw_cols={len(keys) + 1}))
        img = _figure_plot(summary)
        if img:
            add(f"<img alt='game figures' src='{img}'>")

    # Ludii metrics
    add("<h2>Evaluation metrics (after Ludii)</h2>")
    body = []
    for key, label in METRIC_NAMES.items():
        body.append([label, *[metric_text(key, v["metrics"][key]) for v in variants],
                     f"<span class='def'>{_e(DEFINITIONS[key])}</span>"])
    add(_table(["metric", *keys, "definition"], body, raw_cols={len(keys) + 1}))

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
        add("<h2>Variants compared</h2><p class='note'>Each variant against the first one. Proportions: "
            "two-proportion z-test (pooled); win rates with shared wins: z-test with the observed "
            "variances; mean turns: Welch's z. Significant at 5% in red. The variants share the seeds of "
            "their games (game i uses the same seed in every variant).</p>")
        for comp in summary["comparisons"]:
            add(f"<h3>{_e(comp['variant'])} vs {_e(comp['baseline'])}</h3>")
            body = []
            for r in comp["rows"]:
                is_pct = r["test"] is not None and r["measure"] != "mean turns"
                fmt = pct if is_pct else (lambda x: num(x, 4))
                diff = f"{100 * r['diff']:+.2f} pts" if is_pct else f"{r['diff']:+.4f}"
                sig = "<span class='sig'>significant</span>" if r["significant"] else ""
                body.append([_e(r["measure"]), _e(fmt(r["baseline"])), _e(fmt(r["value"])), _e(diff),
                             _e("-" if r["z"] is None else f"{r['z']:.2f}"), _e(pval(r["p_value"])), sig])
            add(_table(["measure", comp["baseline"], comp["variant"], "difference", "z", "p", ""], body,
                       raw_cols=set(range(7))))
    add("<p class='note'>Generated by <code>ludoteca lab</code>. Rows: games.jsonl; figures: summary.json.</p>")
    add("</body></html>")
    return "\n".join(parts)


def write_html(summary: dict[str, Any], rows: Sequence[Row], path: str | Path, command: str | None = None) -> None:
    Path(path).write_text(render_html(summary, rows, command), encoding="utf-8")
