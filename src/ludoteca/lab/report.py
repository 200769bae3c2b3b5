"""Reports of a run: ``summary.json``, a self-contained ``report.html`` (plots embedded as
base64 PNG, matplotlib needed) and short tables in the terminal (rich).

In English or Italian (``ludoteca lab --lang``): the texts are marked with ``_()``/``N_()``
(the terminal's catalog, ``locale/it/LC_MESSAGES/messages.po``) and the numbers are written
with Babel for the language (``50.8%``, ``50,8%``). ``summary.json`` stays in English: it is
data for programs; the report translates its names and definitions when it shows them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from ludoteca.core.i18n import N_, _
from ludoteca.lab.metrics import DEFINITIONS, clean_json, label
from ludoteca.lab.runner import Row

LANG = "en"
"""The language of the numbers (``set_language``); the texts follow the installed translator."""

METRIC_NAMES = {
    "advantage": N_("Advantage (first player's win rate)"),
    "balance": N_("Balance"),
    "completion": N_("Completion"),
    "drawishness": N_("Drawishness"),
    "duration": N_("Duration (mean turns)"),
    "duration_spread": N_("Duration spread (sd of turns)"),
    "branching_factor": N_("Branching factor"),
    "decision_factor": N_("Decision factor"),
    "drama": N_("Drama"),
    "lead_changes": N_("Lead changes"),
    "dice_rolled": N_("Dice rolled (chance nodes per game)"),
}
ORDINALS = ("1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th")
PERCENT_METRICS = {"advantage", "balance", "completion", "drawishness", "decision_factor", "drama"}
PLURALS = {
    "game": (N_("{n} game"), N_("{n} games")),
    "tile": (N_("{n} tile"), N_("{n} tiles")),
    "job": (N_("{n} job"), N_("{n} jobs")),
    "test": (N_("{n} test"), N_("{n} tests")),
}
"""Counted words in both languages (Italian, like English, uses the singular for 1 only)."""
MEASURES = (N_("first player win rate"), N_("shared wins"), N_("stopped by turn_limit"), N_("drama"),
            N_("mean turns"))
"""The measures of a comparison (metrics.compare), as the report shows them."""
TESTS = (N_("exact binomial"), N_("z (observed variance)"), N_("z (observed variances)"), N_("two-proportion z"),
         N_("Welch t"), N_("z (cluster-robust)"))
"""The names of the tests (lab.stats, lab.metrics) in a comparison's column ``test``."""


def tr(text: str) -> str:
    """``text`` (a message marked elsewhere with ``N_``, or a name made at run time) translated now."""
    return _(text)


def set_language(lang: str) -> None:
    """Write numbers for ``lang`` (``"en"``: 1,500.5; ``"it"``: 1.500,5) from now on."""
    global LANG
    LANG = lang if lang in ("en", "it") else "en"


# --- numbers and counted words ----------------------------------------------------------------

def dec(x: float, digits: int = 2, *, sign: bool = False, group: bool = False) -> str:
    """``x`` with ``digits`` decimals in the report's language (Babel; rounded as Python's
    ``f"{x:.2f}"``): ``0.51``/``0,51``; ``sign``: ``+0.5``; ``group``: ``1,500``/``1.500``."""
    from babel.numbers import format_decimal

    if not math.isfinite(x):
        return f"{x:+}" if sign else f"{x}"
    pattern = ("#,##0" if group else "0") + ("." + "0" * digits if digits > 0 else "")
    if sign:
        pattern = f"+{pattern};-{pattern}"
    return format_decimal(Decimal(x), format=pattern, locale=LANG)


def localize(text: str) -> str:
    """A number Python wrote (``f"{x:.3g}"``, no grouping) in the report's language."""
    return text.replace(".", ",") if LANG == "it" else text


def plural(count: float, word: str, many: str | None = None) -> str:
    """``"1 tile"``, ``"2 tiles"``, ``"0 tiles"``, ``"1,500 games"`` (``many``: an irregular plural);
    in Italian for the words of :data:`PLURALS` (``"1.500 partite"``)."""
    shown = dec(count, 0, group=True) if float(count).is_integer() else dec(count, 2, group=True)
    if word in PLURALS and many is None:
        one, several = PLURALS[word]
        return tr(one if count == 1 else several).format(n=shown)
    return f"{shown} {word if count == 1 else (many or word + 's')}"


def ordinal(k: int, feminine: bool = False) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th``, ``11th``, ``12th``, ``13th``, ``21st``, ...; in Italian
    ``1º`` (``1ª`` for a feminine noun)."""
    if LANG == "it":
        return f"{k}{'ª' if feminine else 'º'}"
    if 10 <= k % 100 <= 20:
        return f"{k}th"
    return f"{k}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def every_kth_game(k: int) -> str:
    return _("every game") if k == 1 else _("every {nth} game").format(nth=ordinal(k, feminine=True))


def player_in_order(p: int) -> str:
    """The player ``p`` places after the first (0: ``"1st player"``)."""
    return _("{nth} player").format(nth=ordinal(p + 1))


def pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else dec(100 * x, digits) + "%"


def _pair(a: str, b: str) -> str:
    """An interval's two ends: ``[1.5, 2.5]``; ``[1,5; 2,5]`` where the comma is the decimal sign."""
    return f"[{a}; {b}]" if LANG == "it" else f"[{a}, {b}]"


def ci_text(ci: Sequence[float] | None) -> str:
    return "" if ci is None else _pair(dec(100 * ci[0], 1), dec(100 * ci[1], 1))


def ci_num(ci: Sequence[float] | None, digits: int = 2) -> str:
    """An interval of a mean or a ratio, not a percentage."""
    return "" if ci is None else _pair(dec(ci[0], digits), dec(ci[1], digits))


def pval(p: float | None) -> str:
    if p is None:
        return "-"
    return "< " + dec(0.0001, 4) if p < 1e-4 else dec(p, 4)


def p_is(p: float | None) -> str:
    """``p = 0.0123`` or ``p < 0.0001``."""
    text = pval(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x)}"
    return dec(x, digits)


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
        return localize(f"{f['value']:.3g}")
    digits = 3 if f["kind"] == "mean" else 4
    text = f"{dec(f['value'], digits)} {ci_num(f.get('ci'), digits)}".strip()
    if f["kind"] == "mean" and "sd" in f:
        text += " " + _("(sd {sd})").format(sd=dec(f["sd"], 2))
    return text


# --- names and definitions, translated when shown ----------------------------------------------

def reason_text(reason: str) -> str:
    """An end reason or a counter (``"all_trophies_given"``): itself in English, words in Italian."""
    words = label(reason)
    shown = tr(words)
    return reason if shown == words else shown


def figure_name(f: dict[str, Any]) -> str:
    """A game figure's name in the report's language."""
    if "ending" in f:
        return _("games ended by {reason}").format(reason=reason_text(f["ending"]))
    if "counter" in f:
        return tr(label(f["counter"]))
    return tr(f["name"])


def _doc(summary: dict[str, Any], counter: str) -> str:
    docs = {c["name"]: c["doc"] for c in summary.get("counters_declared") or []}
    doc = tr(docs.get(counter, label(counter)))
    return doc[:1].upper() + doc[1:].rstrip(".")


def figure_definition(f: dict[str, Any], summary: dict[str, Any]) -> str:
    """A game figure's definition in the report's language (as ``metrics._counter_figure`` writes it)."""
    if "ending" in f:
        return _("Share of games whose end reason (end_reason()) was '{reason}'.").format(reason=f["ending"])
    if "counter" not in f:
        return tr(str(f["definition"]))
    doc = _doc(summary, f["counter"])
    kind = f.get("counter_kind")
    if kind == "share_per_game":
        return _("{doc}. Share of games where it is non-zero.").format(doc=doc)
    if kind == "mean_per_game":
        if doc.lower().endswith(_("per game")):
            return f"{doc}."
        return _("{doc}. Mean per game.").format(doc=doc)
    return _("{doc}. Pooled over games: {name} / {of}.").format(
        doc=doc, name=tr(label(f["counter"])), of=tr(label(f.get("of_counter") or "turns")))


def measure_name(measure: str, figures: dict[str, dict[str, Any]]) -> str:
    """A measure of a comparison (``"seat 1 win rate"``, a figure's name, ...) in the report's language."""
    seat = re.fullmatch(r"seat (\d+) win rate", measure)
    if seat:
        return _("seat {seat} win rate").format(seat=seat.group(1))
    if measure in figures:
        return figure_name(figures[measure])
    return tr(measure)


def _cell(variant: dict[str, Any], name: str, fmt: Callable[[dict[str, Any]], str]) -> str:
    """A variant's figure ``name`` as text, or ``-`` when the variant lacks it."""
    for f in variant["figures"]:
        if f["name"] == name:
            return fmt(f)
    return "-"


def short(x: float) -> str:
    """A length figure: whole numbers as such, else one decimal."""
    return f"{int(x)}" if float(x).is_integer() else dec(x, 1)


def first_player_sentence(v: dict[str, Any]) -> str:
    fp = v["first_player"]
    fields = {"rate": pct(fp["rate"]), "ci": ci_text(fp["ci"]), "fair": pct(fp["fair"]),
              "advantage": dec(100 * fp["advantage"], 1, sign=True), "p": p_is(fp["p_value"])}
    if fp["first_is_seat0"]:
        if fp["significant"]:
            text = _("seat 0 wins {rate} {ci} against a fair {fair} (advantage {advantage} points, {p}, "
                     "significant at 5%)")
        else:
            text = _("seat 0 wins {rate} {ci} against a fair {fair} (advantage {advantage} points, {p}, "
                     "not significant at 5%)")
    elif fp["significant"]:
        text = _("the first player wins {rate} {ci} against a fair {fair} (advantage {advantage} points, {p}, "
                 "significant at 5%)")
    else:
        text = _("the first player wins {rate} {ci} against a fair {fair} (advantage {advantage} points, {p}, "
                 "not significant at 5%)")
    return text.format(**fields)


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
    console.print(_("[bold]{title}, {n} players[/bold] — win rate by seat (95% Wilson interval)").format(
        title=summary["title"], n=n))
    t = Table()
    t.add_column(_("seat"))
    if not summary["rotate"] and len(set(summary["lineup"])) > 1:
        t.add_column(_("agent"))
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
    lineup = ", ".join(_("seat {seat}: {agent}").format(seat=s, agent=a) for s, a in enumerate(summary["lineup"]))
    console.print((_("Agents (rotated round the seats): {lineup}") if summary["rotate"] else
                   _("Agents: {lineup}")).format(lineup=lineup))
    for v in variants:
        prefix = f"{v['key']}: " if many else ""
        console.print(_("First player: {sentence}").format(sentence=prefix + first_player_sentence(v)))
    agents_present = [v for v in variants if v["agents"]]
    if agents_present:
        console.print(_("Win rate by agent (95% Wilson interval):"))
        t = Table()
        t.add_column(_("agent"))
        for v in agents_present:
            t.add_column(v["key"] if many else _("win rate"), justify="right")
        t.add_column(_("fair"), justify="right")
        for i, a in enumerate(agents_present[0]["agents"]):
            t.add_row(a["agent"], *[f"{pct(v['agents'][i]['rate'])} {ci_text(v['agents'][i]['ci'])}"
                                    for v in agents_present], pct(a["fair"]))
        console.print(t)
    t = Table()
    t.add_column(_("length and endings"))
    for v in variants:
        t.add_column(v["key"] if many else "", justify="right")
    rows = [
        (_("turns: median / p90"),
         lambda v: f"{short(v['length']['turns']['median'])} / {short(v['length']['turns']['p90'])}"),
        (_("rounds: median / p90"),
         lambda v: f"{short(v['length']['rounds']['median'])} / {short(v['length']['rounds']['p90'])}"),
        (_("shared wins"), lambda v: f"{num(v['shared_wins']['count'])} ({pct(v['shared_wins']['rate'])})"),
        (_("stopped by turn_limit"),
         lambda v: f"{num(v['turn_limit']['count'])} ({pct(v['turn_limit']['rate'])})"),
        (_("balance"), lambda v: pct(v["metrics"]["balance"]["value"])),
        (_("drama"), lambda v: pct(v["metrics"]["drama"]["value"])),
    ]
    for row_label, fn in rows:
        t.add_row(row_label, *[fn(v) for v in variants])
    for f in variants[0]["figures"][:5]:
        t.add_row(figure_name(f), *[_cell(v, f["name"], lambda x: figure_text(x, short=True)) for v in variants])
    console.print(t)
    if summary["comparisons"]:
        base = summary["comparisons"][0]["baseline"]
        console.print(_("Variants against {base} (value (difference, p of the test); * significant at 5% "
                        "before adjustment):").format(base=base))
        t = Table()
        measures = ("first player win rate", "shared wins", "mean turns")
        t.add_column(_("variant"))
        for m in measures:
            t.add_column(tr(m), justify="right")
        for comp in summary["comparisons"]:
            found = {r["measure"]: r for r in comp["rows"]}
            cells = []
            for m in measures:
                r = found[m]
                star = "*" if r["significant"] else ""
                if m == "mean turns":
                    cells.append(f"{num(r['value'], 1)} ({dec(r['diff'], 1, sign=True)}, p {pval(r['p_value'])})"
                                 f"{star}")
                else:
                    cells.append(f"{pct(r['value'])} ({dec(100 * r['diff'], 1, sign=True)}, "
                                 f"p {pval(r['p_value'])}){star}")
            t.add_row(comp["variant"], *cells)
        console.print(t)
        mc = summary.get("multiple_comparisons")
        if mc:
            console.print(_("Multiple comparisons: this sweep ran {tests}; {significant} significant at 5% before "
                            "adjustment, {significant_holm} after Holm's adjustment (report.html, column p "
                            "(Holm)). At 5% each, about one test in twenty comes out significant by chance.").format(
                tests=plural(mc["tests"], "test"), significant=mc["significant"],
                significant_holm=mc["significant_holm"]))
        console.print(_("All measures, figure by figure: report.html and summary.json."))


# --- plots ---------------------------------------------------------------------------------------

def _png(fig: Any) -> str:
    if LANG != "en":  # the axes' numbers with the language's decimal sign
        from matplotlib.ticker import ScalarFormatter

        class Localized(ScalarFormatter):
            def __call__(self, x: float, pos: int | None = None) -> str:
                return localize(super().__call__(x, pos))

        for ax in fig.get_axes():
            for axis in (ax.xaxis, ax.yaxis):
                if isinstance(axis.get_major_formatter(), ScalarFormatter):
                    axis.set_major_formatter(Localized())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _rate_plot(summary: dict[str, Any], which: str, kind: str) -> str:
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
    ax.axhline(1 / n, color="black", linestyle="--", linewidth=1, label=_("fair 1/n"))
    ax.set_xticks(range(n))
    ax.set_xticklabels([_("seat {seat}").format(seat=i) if kind == "seat" else player_in_order(i)
                        for i in range(n)])
    ax.set_ylabel(_("win rate"))
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
            ax.axvline(v["median"], color="black", linestyle="-", linewidth=1,
                       label=_("median {value}").format(value=num(v["median"])))
            ax.axvline(v["p90"], color="black", linestyle=":", linewidth=1,
                       label=_("p90 {value}").format(value=num(v["p90"])))
        ax.legend(fontsize="small")
    ax.set_xlabel(_("turns") if field == "turns" else _("rounds") if field == "rounds" else field)
    ax.set_ylabel(_("games"))
    return _png(fig)


def _figure_plot(summary: dict[str, Any]) -> str | None:
    from matplotlib.figure import Figure

    variants = summary["variants"]
    shown = [f for f in variants[0]["figures"] if f["kind"] == "proportion" and f.get("of")]
    names = [f["name"] for f in shown]
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
    ax.set_yticklabels([figure_name(f) for f in shown])
    ax.invert_yaxis()
    ax.set_xlabel(_("share (95% interval, games as the sampling unit)"))
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
    return text.replace(", ", ",\u00a0").replace("; ", ";\u00a0")


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
    figures = {f["name"]: f for f in variants[0]["figures"]}
    rows_by_variant: dict[str, list[Row]] = {k: [] for k in keys}
    limit = summary["games_per_variant"]
    for r in rows:
        if r["variant"] in rows_by_variant and r["game"] < limit:
            rows_by_variant[r["variant"]].append(r)
    parts: list[str] = []
    add = parts.append
    title = _e(summary["title"])
    alt_order, alt_seat = _("win rate by play order"), _("win rate by seat")
    alt_turns, alt_rounds, alt_figures = _("turns"), _("rounds"), _("game figures")
    add(f"<!doctype html><html lang='{LANG}'><head><meta charset='utf-8'><title>"
        + _("ludoteca lab: {title}").format(title=title) + f"</title><style>{CSS}</style></head><body>")
    add("<h1>" + _("Balance lab: {title}, {n} players").format(title=title, n=n) + "</h1>")
    lineup = ", ".join(_("seat {seat}: {agent}").format(seat=s, agent=a) for s, a in enumerate(summary["lineup"]))
    detailed = plural(variants[0]["detailed_games"], "game")
    info = [
        ("agents", _("agents"), lineup + (_(" (rotated: in game i seat s is played by the lineup's agent (s + i) "
                                            "mod n)") if summary["rotate"] else "")),
        ("seed", _("seed"), str(summary["seed"])),
        ("games", _("games per variant"), dec(summary["games_per_variant"], 0, group=True)
         + ("" if summary["complete"] else _(" (run incomplete: figures use the games done so far)"))),
        ("variants", _("variants"), ", ".join(keys)),
        ("detail", _("detailed games"),
         _("{every} ({games} per variant): branching factor, decision factor, drama and lead changes come "
           "from them").format(every=every_kth_game(summary["detail"]), games=detailed)
         if summary["detail"] else _("none (--detail 0)")),
        ("score", _("score"), _("{score} (the game's scores(): the measure turn_limit uses; drama and lead "
                                "changes read it)").format(score=tr(summary.get("score_name", "score")))),
        ("unit", _("sampling unit"), tr(summary.get("sampling_unit", ""))),
    ]
    if command:
        info.append(("command", _("command"), f"<code>{_e(command)}</code>"))
    add("<table>" + "".join(
        f"<tr><th>{_e(k)}</th><td style='text-align:left'>{v if key == 'command' else _e(v)}</td></tr>"
        for key, k, v in info) + "</table>")
    opts = []
    for v in variants:
        shown = {k: (plural(len(x), "tile") if k == "tiles" and isinstance(x, list) else x)
                 for k, x in v["options"].items()}
        text = json.dumps(shown)
        if len(text) > 400:
            text = text[:400] + " …"
        opts.append([v["key"], text])
    add("<p class='note'>" + _("Options of each variant (the game's <code>record_options()</code>, full in "
                               "summary.json):") + "</p>"
        + _table([_("variant"), _("options")], opts, cell_class={1: "left"}))

    # seats
    add("<h2>" + _("Win rate by seat and by play order") + "</h2>")
    add("<p class='note'>" + _(
        "Win rate = mean return: a win shared by k players counts 1/k, so the rates add up to 1 and the fair "
        "share is 1/n. Intervals: 95% Wilson score intervals; when wins are shared, on the effective number of "
        "games n·p(1−p)/variance (a shared result varies less than a win or a loss, so the plain interval would "
        "be too wide). Tests against 1/n: exact binomial without shared wins, else a z-test with the observed "
        "variance; across positions: chi-square with the Rao–Scott correction for shared wins.") + "</p>")
    head = [_("seat"), *keys]
    body = [[str(s), *[f"{pct(v['seats'][s]['rate'])} {ci_text(v['seats'][s]['ci'])}" for v in variants]]
            for s in range(n)]
    add(_table(head, body))
    body = [[player_in_order(p) if p < len(ORDINALS) else _("player {number}").format(number=p + 1),
             *[f"{pct(v['positions'][p]['rate'])} {ci_text(v['positions'][p]['ci'])}" for v in variants]]
            for p in range(n)]
    add(_table([_("play order"), *keys], body))
    for v in variants:
        fp = v["first_player"]
        cls = " class='sig'" if fp["significant"] else ""
        tests = _("Chi-square over play-order positions: χ² = {chi2}, df = {df}, {p}; over seats: {p_seats}.").format(
            chi2=dec(v["order_test"]["chi2"], 2), df=v["order_test"]["df"], p=p_is(v["order_test"]["p_value"]),
            p_seats=p_is(v["seat_test"]["p_value"]))
        add(f"<p><b>{_e(v['key'])}</b>: <span{cls}>{_e(first_player_sentence(v))}</span>. {tests}</p>")
    add(f"<img alt='{_e(alt_order)}' src='{_rate_plot(summary, 'positions', 'order')}'>")
    if not all(v["first_player"]["first_is_seat0"] for v in variants):
        add(f"<img alt='{_e(alt_seat)}' src='{_rate_plot(summary, 'seats', 'seat')}'>")

    if any(v["agents"] for v in variants):
        add("<h2>" + _("Win rate by agent") + "</h2><p class='note'>" + _(
            "An agent's win rate adds the returns of every seat it holds; its fair share is the number of seats "
            "it holds / n. p: test against the fair share (as for seats).") + "</p>")
        body = []
        for v in variants:
            for a in v["agents"] or []:
                seats = ", ".join(f"{b['seat']}: {pct(b['rate'])}" for b in a["by_seat"] if b["rate"] is not None)
                body.append([v["key"], a["agent"], f"{pct(a['rate'])} {ci_text(a['ci'])}", pct(a["fair"]),
                             pval(a["p_value"]), seats])
        add(_table([_("variant"), _("agent"), _("win rate"), _("fair"), "p", _("by seat")], body,
                   cell_class={5: "left"}))

    # length
    add("<h2>" + _("Game length") + "</h2><p class='note'>" + _(
        "Turns: player turns (RULES.md's <code>turn</code>). Rounds: the game's <code>rounds</code> counter "
        "when it declares one, else the position's <code>round</code> when it has one, else turns / players "
        "rounded up.") + "</p>")
    body = []
    stat_names = {"mean": N_("mean"), "sd": N_("sd"), "min": N_("min"), "p10": N_("p10"), "median": N_("median"),
                  "p90": N_("p90"), "max": N_("max")}
    for field, field_name in (("turns", _("turns")), ("rounds", _("rounds"))):
        for stat, stat_name in stat_names.items():
            body.append([f"{field_name}: {tr(stat_name)}", *[num(v["length"][field][stat]) for v in variants]])
    add(_table(["", *keys], body))
    add(f"<img alt='{_e(alt_turns)}' src='{_hist_plot(rows_by_variant, 'turns', summary)}'>")
    add(f"<img alt='{_e(alt_rounds)}' src='{_hist_plot(rows_by_variant, 'rounds', summary)}'>")
    add("<h2>" + _("Shared wins and the turn limit") + "</h2>")
    body = [
        [_("shared wins"), *[f"{num(v['shared_wins']['count'])} ({pct(v['shared_wins']['rate'])} "
                             f"{ci_text(v['shared_wins']['ci'])})" for v in variants]],
        [_("stopped by turn_limit"), *[f"{num(v['turn_limit']['count'])} ({pct(v['turn_limit']['rate'])} "
                                       f"{ci_text(v['turn_limit']['ci'])})" for v in variants]],
    ]
    add(_table(["", *keys], body))

    # game figures
    if variants[0]["figures"]:
        add("<h2>" + _("{title} figures").format(title=title) + "</h2>")
        add("<p class='note'>" + _(
            "How the games ended (the game's <code>end_reason()</code>), then the figures the game declares "
            "(<code>Game.counters</code>, read from <code>counters()</code> at the end of each game). Intervals "
            "(95%): shares of games: Wilson; shares of events pooled over games (per turn, per battle, per "
            "round): Wilson interval on the effective number of events, from the spread of the games' own "
            "shares, since the events of one game are not independent; ratios above 1 per event: estimate ± "
            "1.96 cluster-robust standard errors; per-game means: t interval. The game is the sampling unit "
            "throughout.") + "</p>")
        body = []
        for f in variants[0]["figures"]:
            body.append([figure_name(f), *[_cell(v, f["name"], lambda x: _whole(figure_text(x))) for v in variants],
                         figure_definition(f, summary)])
        add(_table([_("figure"), *keys, _("definition")], body, cell_class={len(keys) + 1: "def"}))
        img = _figure_plot(summary)
        if img:
            add(f"<img alt='{_e(alt_figures)}' src='{img}'>")
    if not summary.get("counters_declared"):
        add("<p class='note'>" + _("This game declares no counters (<code>Game.counters</code>): no figures of its "
                                   "own beyond how its games ended.") + "</p>")
    for c in summary.get("counters_unread") or []:
        add("<p class='warn'>" + _("Counter <code>{name}</code> is not reported: {reason}.").format(
            name=_e(c["name"]), reason=_e(c["reason"])) + "</p>")

    # Ludii metrics
    add("<h2>" + _("Evaluation metrics (after Ludii)") + "</h2>")
    body = []
    for key, metric_name in METRIC_NAMES.items():
        body.append([tr(metric_name), *[_whole(metric_text(key, v["metrics"][key])) for v in variants],
                     tr(DEFINITIONS[key])])
    add(_table([_("metric"), *keys, _("definition")], body, cell_class={len(keys) + 1: "def"}))

    # counters
    if variants[0]["counters"]:
        add("<h2>" + _("Event counters") + "</h2><p class='note'>" + _(
            "The engine's <code>counters()</code> at the end of each game: mean per game / per turn (text "
            "values: how often each occurred).") + "</p>")
        body = []
        for k in variants[0]["counters"]:
            cells = []
            for v in variants:
                cv = v["counters"].get(k, {})
                if "tally" in cv:
                    cells.append(", ".join(f"{a}: {b}" for a, b in cv["tally"].items()))
                else:
                    cells.append(f"{dec(cv.get('per_game', 0), 3)} / {dec(cv.get('per_turn', 0), 4)}")
            body.append([reason_text(k), *cells])
        add(_table([_("counter"), *keys], body))

    # sweeps
    if summary["comparisons"]:
        mc = summary.get("multiple_comparisons") or {}
        add("<h2>" + _("Variants compared") + "</h2><p class='note'>" + _(
            "Each variant against the first one, the game as the sampling unit. Shares of games: two-proportion "
            "z-test (pooled); win rates with shared wins: z-test with the observed variances; shares and ratios "
            "of events pooled over games (turns, battles, rounds): z-test with cluster-robust variances (each "
            "game one cluster); per-game means (turns, battles per game, ...): Welch's t-test. The variants "
            "share the seeds of their games (game i uses the same seed in every variant); the tests treat them "
            "as independent samples, which errs on the cautious side.") + "</p>")
        if mc:
            add("<p class='warn'>" + _(
                "<b>Multiple comparisons.</b> This sweep ran {tests}: {significant} significant at 5% before "
                "adjustment, {significant_holm} after Holm's adjustment.").format(
                tests=plural(mc["tests"], "test"), significant=mc["significant"],
                significant_holm=mc["significant_holm"]) + f" {_e(tr(mc['note']))}</p>")
        for comp in summary["comparisons"]:
            add("<h3>" + _("{variant} vs {baseline}").format(variant=_e(comp["variant"]),
                                                             baseline=_e(comp["baseline"])) + "</h3>")
            body = []
            for r in comp["rows"]:
                is_pct = r.get("percent", r["measure"] != "mean turns")
                fmt = pct if is_pct else (lambda x: num(x, 4))
                diff = (_("{diff} pts").format(diff=dec(100 * r["diff"], 2, sign=True)) if is_pct
                        else dec(r["diff"], 4, sign=True))
                sig = ("<span class='sig'>" + _("significant after Holm") + "</span>" if r.get("significant_holm")
                       else _("significant before adjustment only") if r["significant"] else "")
                body.append([measure_name(r["measure"], figures), fmt(r["baseline"]), fmt(r["value"]), diff,
                             "-" if r["z"] is None else dec(r["z"], 2), pval(r["p_value"]),
                             pval(r.get("p_holm")), tr(r["test"]) if r["test"] else "-", sig])
            add(_table([_("measure"), comp["baseline"], comp["variant"], _("difference"), _("z or t"), "p",
                        _("p (Holm)"), _("test"), ""], body, raw_cols={8}, cell_class={7: "left", 8: "left"}))
    add("<p class='note'>" + _("Generated by <code>ludoteca lab</code>. Rows: games.jsonl; figures: summary.json.")
        + "</p>")
    add("</body></html>")
    return "\n".join(parts)


def write_html(summary: dict[str, Any], rows: Sequence[Row], path: str | Path, command: str | None = None) -> None:
    Path(path).write_text(render_html(summary, rows, command), encoding="utf-8")
