"""The lab's self-contained ``report.html``: the context (every text translated, every number written
for the report's language) rendered through an autoescaping Jinja2 template
(``lab/templates/report.html.j2``). A value is HTML only when marked so here (:class:`Markup`: the
catalogue's notes with ``<code>``); everything else, the designer's variant names and options
included, is escaped by the template.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ludoteca.core.i18n import N_, _
from ludoteca.lab import report
from ludoteca.lab.luck import section as luck_section
from ludoteca.lab.metrics import DEFINITIONS
from ludoteca.lab.plots import figure_plot, hist_plot, rate_plot
from ludoteca.lab.provenance import summary as summary_of
from ludoteca.lab.report import (
    METRIC_NAMES,
    ORDINALS,
    _cell,
    _whole,
    ci_text,
    conclusion_sentence,
    dec,
    diff_ci_text,
    every_kth_game,
    figure_definition,
    figure_name,
    figure_text,
    first_player_sentence,
    measure_name,
    metric_text,
    num,
    p_is,
    pct,
    player_in_order,
    plural,
    pval,
    reason_text,
    tr,
)
from ludoteca.lab.runner import Row

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;
color:#222}
h1{font-size:1.6em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.8em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}td.left,th.left{text-align:left}td:first-child{min-width:8em}
td.def{text-align:left;color:#555;font-size:.9em;min-width:20em;max-width:34em}
.sig{color:#a00;font-weight:bold}.note{color:#555}.warn{background:#fff6e0;border-left:4px solid #e0a000;
padding:.4em .8em}img{max-width:100%}
code{background:#f3f3f3;padding:0 .2em}.conclusion{font-weight:bold}
"""
TEMPLATE = "report.html.j2"
STAT_NAMES = {"mean": N_("mean"), "sd": N_("sd"), "min": N_("min"), "p10": N_("p10"), "median": N_("median"),
              "p90": N_("p90"), "max": N_("max")}


@cache
def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("ludoteca.lab", "templates"), autoescape=True,
                       undefined=StrictUndefined, keep_trailing_newline=True)


def _html(text: str) -> Any:
    """A translated text that holds markup of its own (``<code>``, ``<b>``): shown as HTML."""
    from markupsafe import Markup

    return Markup(text)


def _table(head: Sequence[Any], body: Sequence[Sequence[Any]],
           cell_class: dict[int, str] | None = None) -> dict[str, Any]:
    return {"head": list(head), "body": [list(r) for r in body], "cell_class": cell_class or {}}


def _plot(alt: str, src: str) -> dict[str, str]:
    return {"alt": alt, "src": src}


def _info(summary: dict[str, Any], keys: list[str], command: str | None) -> list[dict[str, Any]]:
    variants = summary["variants"]
    lineup = ", ".join(_("seat {seat}: {agent}").format(seat=s, agent=a) for s, a in enumerate(summary["lineup"]))
    detailed = plural(variants[0]["detailed_games"], "game")
    rows: list[tuple[str, str]] = [
        (_("agents"), lineup + (_(" (rotated: in game i seat s is played by the lineup's agent (s + i) mod n)")
                                if summary["rotate"] else "")),
        (_("seed"), str(summary["seed"])),
        (_("games per variant"), dec(summary["games_per_variant"], 0, group=True)
         + ("" if summary["complete"] else _(" (run incomplete: figures use the games done so far)"))),
        (_("variants"), ", ".join(keys)),
        (_("detailed games"),
         _("{every} ({games} per variant): branching factor, decision factor, drama and lead changes come "
           "from them").format(every=every_kth_game(summary["detail"]), games=detailed)
         if summary["detail"] else _("none (--detail 0)")),
        (_("score"), _("{score} (the game's scores(): the measure turn_limit uses; drama and lead "
                       "changes read it)").format(score=tr(summary.get("score_name", "score")))),
        (_("sampling unit"), tr(summary.get("sampling_unit", ""))),
    ]
    made = summary.get("provenance")
    if made:
        played = {key: "; ".join(summary_of(a) for a in agents) for key, agents in made["agents"].items()}
        if len(set(played.values())) == 1:
            rows.append((_("agents as played"), next(iter(played.values()))))
        else:
            rows.extend((_("agents as played ({variant})").format(variant=key), text) for key, text in played.items())
        rows.append((_("ludoteca"), made["ludoteca"] + (f" ({made['commit'][:12]})" if made.get("commit") else "")))
    out = [{"label": label, "value": value, "code": False} for label, value in rows]
    if command:
        out.append({"label": _("command"), "value": command, "code": True})
    return out


def _options(summary: dict[str, Any]) -> dict[str, Any]:
    body = []
    for v in summary["variants"]:
        shown = {k: (plural(len(x), "tile") if k == "tiles" and isinstance(x, list) else x)
                 for k, x in v["options"].items()}
        text = json.dumps(shown)
        body.append([v["key"], text if len(text) <= 400 else text[:400] + " …"])
    return _table([_("variant"), _("options")], body, cell_class={1: "left"})


def _seats(summary: dict[str, Any], keys: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    variants, n = summary["variants"], summary["players"]
    seats = [[str(s), *[f"{pct(v['seats'][s]['rate'])} {ci_text(v['seats'][s]['ci'])}" if s < len(v["seats"])
                        else "—" for v in variants]]
             for s in range(n)]
    orders = [[player_in_order(p) if p < len(ORDINALS) else _("player {number}").format(number=p + 1),
               *[f"{pct(v['positions'][p]['rate'])} {ci_text(v['positions'][p]['ci'])}" if p < len(v["positions"])
                 else "—" for v in variants]]
              for p in range(n)]
    return _table([_("seat"), *keys], seats), _table([_("play order"), *keys], orders)


def _first_players(summary: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for v in summary["variants"]:
        tests = _("Chi-square over play-order positions: χ² = {chi2}, df = {df}, {p}; over seats: {p_seats}.").format(
            chi2=dec(v["order_test"]["chi2"], 2), df=v["order_test"]["df"], p=p_is(v["order_test"]["p_value"]),
            p_seats=p_is(v["seat_test"]["p_value"]))
        out.append({"key": v["key"], "significant": v["first_player"]["significant"],
                    "sentence": first_player_sentence(v), "tests": tests})
    return out


def _agents(summary: dict[str, Any]) -> dict[str, Any] | None:
    variants = summary["variants"]
    if not any(v["agents"] for v in variants):
        return None
    body = []
    for v in variants:
        for a in v["agents"] or []:
            seats = ", ".join(f"{b['seat']}: {pct(b['rate'])}" for b in a["by_seat"] if b["rate"] is not None)
            body.append([v["key"], a["agent"], f"{pct(a['rate'])} {ci_text(a['ci'])}", pct(a["fair"]),
                         pval(a["p_value"]), seats])
    return {"heading": _("Win rate by agent"),
            "note": _("An agent's win rate adds the returns of every seat it holds; its fair share is the number of "
                      "seats it holds / n. p: test against the fair share (as for seats)."),
            "table": _table([_("variant"), _("agent"), _("win rate"), _("fair"), "p", _("by seat")], body,
                            cell_class={5: "left"})}


def _length(summary: dict[str, Any], keys: list[str], rows_by_variant: dict[str, list[Row]]) -> dict[str, Any]:
    variants = summary["variants"]
    body = []
    for field, field_name in (("turns", _("turns")), ("rounds", _("rounds"))):
        for stat, stat_name in STAT_NAMES.items():
            body.append([f"{field_name}: {tr(stat_name)}", *[num(v["length"][field][stat]) for v in variants]])
    return {
        "heading": _("Game length"),
        "note": _html(_("Turns: player turns (RULES.md's <code>turn</code>). Rounds: the game's <code>rounds</code> "
                        "counter when it declares one, else the position's <code>round</code> when it has one, else "
                        "turns / players rounded up.")),
        "table": _table(["", *keys], body),
        "plots": [_plot(_("turns"), hist_plot(rows_by_variant, "turns", summary)),
                  _plot(_("rounds"), hist_plot(rows_by_variant, "rounds", summary))],
    }


def _shared(summary: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    variants = summary["variants"]
    body = [
        [_("shared wins"), *[f"{num(v['shared_wins']['count'])} ({pct(v['shared_wins']['rate'])} "
                             f"{ci_text(v['shared_wins']['ci'])})" for v in variants]],
        [_("stopped by turn_limit"), *[f"{num(v['turn_limit']['count'])} ({pct(v['turn_limit']['rate'])} "
                                       f"{ci_text(v['turn_limit']['ci'])})" for v in variants]],
    ]
    return {"heading": _("Shared wins and the turn limit"), "table": _table(["", *keys], body)}


def _figures(summary: dict[str, Any], keys: list[str], title: str) -> dict[str, Any] | None:
    variants = summary["variants"]
    if not variants[0]["figures"]:
        return None
    body = [[figure_name(f), *[_cell(v, f["name"], lambda x: _whole(figure_text(x))) for v in variants],
             figure_definition(f, summary)] for f in variants[0]["figures"]]
    img = figure_plot(summary)
    return {
        "heading": _("{title} figures").format(title=title),
        "note": _html(_(
            "How the games ended (the game's <code>end_reason()</code>), then the figures the game declares "
            "(<code>Game.counters</code>, read from <code>counters()</code> at the end of each game). Intervals "
            "(95%): shares of games: Wilson; shares of events pooled over games (per turn, per battle, per "
            "round): Wilson interval on the effective number of events, from the spread of the games' own "
            "shares, since the events of one game are not independent; ratios above 1 per event: estimate ± "
            "1.96 cluster-robust standard errors; per-game means: t interval. The game is the sampling unit "
            "throughout.")),
        "table": _table([_("figure"), *keys, _("definition")], body, cell_class={len(keys) + 1: "def"}),
        "plot": _plot(_("game figures"), img) if img else None,
    }


def _metrics(summary: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    variants = summary["variants"]
    body = [[tr(name), *[_whole(metric_text(key, v["metrics"][key])) for v in variants], tr(DEFINITIONS[key])]
            for key, name in METRIC_NAMES.items()]
    return {"heading": _("Evaluation metrics (after Ludii)"),
            "table": _table([_("metric"), *keys, _("definition")], body, cell_class={len(keys) + 1: "def"})}


def _counters(summary: dict[str, Any], keys: list[str]) -> dict[str, Any] | None:
    variants = summary["variants"]
    if not variants[0]["counters"]:
        return None
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
    return {"heading": _("Event counters"),
            "note": _html(_("The engine's <code>counters()</code> at the end of each game: mean per game / per turn "
                            "(text values: how often each occurred).")),
            "table": _table([_("counter"), *keys], body)}


def _comparisons(summary: dict[str, Any]) -> dict[str, Any] | None:
    if not summary["comparisons"]:
        return None
    from markupsafe import Markup, escape

    variants = summary["variants"]
    figures = {f["name"]: f for f in variants[0]["figures"]}
    mc = summary.get("multiple_comparisons") or {}
    warning = None
    if mc:
        warning = _html(_(
            "<b>Multiple comparisons.</b> This sweep ran {tests}: {significant} significant at 5% before "
            "adjustment, {significant_holm} after Holm's adjustment.").format(
            tests=escape(plural(mc["tests"], "test")), significant=mc["significant"],
            significant_holm=mc["significant_holm"]) + " ") + tr(mc["note"])
    items = []
    for comp in summary["comparisons"]:
        body = []
        for r in comp["rows"]:
            is_pct = r.get("percent", r["measure"] != "mean turns")
            fmt: Callable[[Any], str] = pct if is_pct else (lambda x: num(x, 4))
            diff = (_("{diff} pts").format(diff=dec(100 * r["diff"], 2, sign=True)) if is_pct
                    else dec(r["diff"], 4, sign=True))
            interval = "-" if r.get("constant") else diff_ci_text(r["ci"], is_pct)
            sig: Any = (Markup("<span class='sig'>{}</span>").format(_("significant after Holm"))
                        if r.get("significant_holm")
                        else _("significant before adjustment only") if r["significant"] else "")
            if r.get("constant"):
                sig = _("never varies: not tested")
            elif r.get("same_as"):
                sig = _("the same test as {measure}").format(measure=measure_name(r["same_as"], figures))
            body.append([measure_name(r["measure"], figures), fmt(r["baseline"]), fmt(r["value"]), diff, interval,
                         "-" if r["z"] is None else dec(r["z"], 2), pval(r["p_value"]),
                         pval(r.get("p_holm")), tr(r["test"]) if r["test"] else "-", sig])
        items.append({
            "heading": _("{variant} vs {baseline}").format(variant=comp["variant"], baseline=comp["baseline"]),
            "conclusion": conclusion_sentence(comp),
            "table": _table([_("measure"), comp["baseline"], comp["variant"], _("difference"),
                             _("95% interval of the difference"), _("z or t"), "p", _("p (Holm)"), _("test"), ""],
                            body, cell_class={8: "left", 9: "left"}),
        })
    return {
        "heading": _("Variants compared"),
        "note": _(
            "Each variant against the first one, the game as the sampling unit. Shares of games: two-proportion "
            "z-test (pooled); win rates with shared wins: z-test with the observed variances; shares and ratios "
            "of events pooled over games (turns, battles, rounds): z-test with cluster-robust variances (each "
            "game one cluster); per-game means (turns, battles per game, ...): Welch's t-test. The variants "
            "share the seeds of their games (game i uses the same seed in every variant); the tests treat them "
            "as independent samples, which errs on the cautious side."),
        "warning": warning,
        "entries": items,
    }


def context(summary: dict[str, Any], rows: Sequence[Row], command: str | None = None) -> dict[str, Any]:
    """Everything the template shows, translated and formatted."""
    variants = summary["variants"]
    n = summary["players"]
    keys = [v["key"] for v in variants]
    rows_by_variant: dict[str, list[Row]] = {k: [] for k in keys}
    limit = summary["games_per_variant"]
    for r in rows:
        if r["variant"] in rows_by_variant and r["game"] < limit:
            rows_by_variant[r["variant"]].append(r)
    title = summary["title"]
    seats, orders = _seats(summary, keys)
    return {
        "lang": report.LANG, "css": _html(CSS),
        "page_title": _("ludoteca lab: {title}").format(title=title),
        "heading": _("Balance lab: {title}, {n} players").format(title=title, n=n),
        "info": _info(summary, keys, command),
        "options_note": _html(_("Options of each variant (the game's <code>record_options()</code>, full in "
                                "summary.json):")),
        "options": _options(summary),
        "seats_heading": _("Win rate by seat and by play order"),
        "seats_note": _(
            "Win rate = mean return: a win shared by k players counts 1/k, so the rates add up to 1 and the fair "
            "share is 1/n. Intervals: 95% Wilson score intervals; when wins are shared, on the effective number "
            "of games n·p(1−p)/variance (a shared result varies less than a win or a loss, so the plain interval "
            "would be too wide). Tests against 1/n: exact binomial without shared wins, else a z-test with the "
            "observed variance; across positions: chi-square with the Rao–Scott correction for shared wins."),
        "seats": seats, "orders": orders,
        "first_players": _first_players(summary),
        "order_plot": _plot(_("win rate by play order"), rate_plot(summary, "positions", "order")),
        "seat_plot": (None if all(v["first_player"]["first_is_seat0"] for v in variants)
                      else _plot(_("win rate by seat"), rate_plot(summary, "seats", "seat"))),
        "agents": _agents(summary),
        "luck": luck_section(summary),  # the luck share (lab/luck.py)
        "length": _length(summary, keys, rows_by_variant),
        "shared": _shared(summary, keys),
        "figures": _figures(summary, keys, title),
        "no_counters": None if summary.get("counters_declared") else _html(_(
            "This game declares no counters (<code>Game.counters</code>): no figures of its own beyond how its "
            "games ended.")),
        "unread": [_html(_("Counter <code>{name}</code> is not reported: {reason}.").format(
            name=_escape(c["name"]), reason=_escape(c["reason"]))) for c in summary.get("counters_unread") or []],
        "metrics": _metrics(summary, keys),
        "counters": _counters(summary, keys),
        "comparisons": _comparisons(summary),
        "footer": _html(_("Generated by <code>ludoteca lab</code>. Rows: games.jsonl; figures: summary.json.")),
    }


def _escape(x: Any) -> str:
    from markupsafe import escape

    return str(escape(x))


def render_html(summary: dict[str, Any], rows: Sequence[Row], command: str | None = None) -> str:
    """The report page, self-contained (plots inline)."""
    return str(_environment().get_template(TEMPLATE).render(**context(summary, rows, command)))


def write_html(summary: dict[str, Any], rows: Sequence[Row], path: str | Path, command: str | None = None) -> None:
    Path(path).write_text(render_html(summary, rows, command), encoding="utf-8")
