"""Reports of a run: ``summary.json``, a self-contained ``report.html`` (plots embedded as
base64 PNG, matplotlib needed) and short tables in the terminal (rich).

In English or Italian (``ludoteca lab --lang``): the texts are marked with ``_()``/``N_()``
(the terminal's catalog, ``locale/it/LC_MESSAGES/messages.po``) and the numbers are written
with Babel for the language (``50.8%``, ``50,8%``). ``summary.json`` stays in English: it is
data for programs; the report translates its names and definitions when it shows them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from ludoteca.core.i18n import N_, _
from ludoteca.lab.metrics import clean_json, label

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


def diff_ci_text(ci: Sequence[float], percent: bool) -> str:
    """A difference's 95% interval with its signs: ``[-3.7, +2.5]`` (points for a share)."""
    if percent:
        return _pair(dec(100 * ci[0], 1, sign=True), dec(100 * ci[1], 1, sign=True))
    return _pair(dec(ci[0], 4, sign=True), dec(ci[1], 4, sign=True))


def conclusion_sentence(comp: dict[str, Any]) -> str:
    """What a designer should conclude from one comparison, about the first player's win rate."""
    c = comp.get("conclusion")
    if not c:
        return ""
    fields = {"variant": comp["variant"], "baseline": comp["baseline"], "diff": dec(100 * c["diff"], 1, sign=True),
              "ci": diff_ci_text(c["ci"], True), "mde": dec(100 * c["mde"], 1)}
    if c["verdict"] == "other_players":
        return _("{variant} is played by another number of players than {baseline}: compare the first player's "
                 "advantage over the fair share (the win rate minus 1/n, in the tables above), not the raw win "
                 "rates.").format(**fields)
    if c["verdict"] == "changes":
        text = _("{variant} changes the first player's win rate by {diff} points {ci} against {baseline} "
                 "(significant after Holm's adjustment).")
    elif c["verdict"] == "hint":
        text = _("A hint that {variant} changes the first player's win rate against {baseline}: {diff} points "
                 "{ci}, significant before Holm's adjustment only; check it with a new run (another seed).")
    else:
        text = _("No evidence that {variant} changes the first player's win rate against {baseline}: {diff} "
                 "points {ci}.")
    return text.format(**fields) + " " + _("With these games this comparison detects a change of about {mde} "
                                           "points (80% power at 5%).").format(**fields)


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
        cells += [f"{pct(v['seats'][s]['rate'])} {ci_text(v['seats'][s]['ci'])}" if s < len(v["seats"]) else "—"
                  for v in variants]
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
        for comp in summary["comparisons"]:
            sentence = conclusion_sentence(comp)
            if sentence:
                console.print(sentence)
        mc = summary.get("multiple_comparisons")
        if mc:
            console.print(_("Multiple comparisons: this sweep ran {tests}; {significant} significant at 5% before "
                            "adjustment, {significant_holm} after Holm's adjustment (report.html, column p "
                            "(Holm)). At 5% each, about one test in twenty comes out significant by chance.").format(
                tests=plural(mc["tests"], "test"), significant=mc["significant"],
                significant_holm=mc["significant_holm"]))
        console.print(_("All measures, figure by figure: report.html and summary.json."))


def _whole(text: str) -> str:
    """An interval kept on one line (``[1.0001, 1.0065]`` never breaks after its comma)."""
    return text.replace(", ", ",\u00a0").replace("; ", ";\u00a0")
