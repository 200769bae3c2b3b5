"""The lab report's plots (matplotlib, imported when a plot is drawn), each a PNG as a ``data:`` URL
for the self-contained report.html; labels in the report's language, numbers with its decimal sign."""

from __future__ import annotations

import base64
import io
from typing import Any

from ludoteca.core.i18n import _
from ludoteca.lab import report
from ludoteca.lab.report import figure_name, localize, num, player_in_order
from ludoteca.lab.runner import Row


def png(fig: Any) -> str:
    if report.LANG != "en":  # the axes' numbers with the language's decimal sign
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


def rate_plot(summary: dict[str, Any], which: str, kind: str) -> str:
    from matplotlib.figure import Figure

    variants = summary["variants"]
    n = summary["players"]
    fig = Figure(figsize=(max(4.5, 1.2 * n * len(variants) ** 0.5 + 2), 3.2))
    ax = fig.subplots()
    width = 0.8 / len(variants)
    counts = {int(v.get("players") or n) for v in variants}
    low = high = 1 / n
    for k, v in enumerate(variants):
        fair = 1 / int(v.get("players") or n)  # each variant's own fair share (a sweep of the player count)
        low, high = min(low, fair), max(high, fair)
        xs = [i + (k - (len(variants) - 1) / 2) * width for i in range(len(v[which]))]
        rates = [e["rate"] for e in v[which]]
        err = [[max(0.0, e["rate"] - e["ci"][0]) for e in v[which]],
               [max(0.0, e["ci"][1] - e["rate"]) for e in v[which]]]
        # bars grow from the fair share, so an edge of a few points shows as a bar of its own height
        ax.bar(xs, [r - fair for r in rates], bottom=fair, width=width, yerr=err, capsize=3, label=v["key"])
        low = min(low, *(e["ci"][0] for e in v[which]))
        high = max(high, *(e["ci"][1] for e in v[which]))
    for count in sorted(counts):
        ax.axhline(1 / count, color="black", linestyle="--", linewidth=1,
                   label=_("fair 1/n") if len(counts) == 1 else f"1/{count}")
    margin = max(0.01, 0.15 * (high - low))
    ax.set_ylim(max(0.0, low - margin), min(1.0, high + margin))
    ax.set_xticks(range(n))
    ax.set_xticklabels([_("seat {seat}").format(seat=i) if kind == "seat" else player_in_order(i)
                        for i in range(n)])
    ax.set_ylabel(_("win rate"))
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # off the bars
    return png(fig)


def hist_plot(rows_by_variant: dict[str, list[Row]], field: str, summary: dict[str, Any]) -> str:
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
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    ax.set_xlabel(_("turns") if field == "turns" else _("rounds") if field == "rounds" else field)
    ax.set_ylabel(_("games"))
    return png(fig)


def figure_plot(summary: dict[str, Any]) -> str | None:
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
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return png(fig)
