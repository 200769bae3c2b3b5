"""A lab run as the page shows it: its settings in words (options and their values by their labels,
in the reader's language), its progress, its results (read from the lab's ``summary.json`` or
``balance.json``) and the comparison of two runs. Numbers stay numbers (the page formats them in its
language); no engine identifier is meant to be read by a person: the page names agents with its own
words and options with the labels given here."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ludoteca.core.game import Game
from ludoteca.core.i18n import N_
from ludoteca.core.options import Option
from ludoteca.i18n import web_text
from ludoteca.registry import game_class
from ludoteca.web.labs.orders import DEFAULT, PLAYERS, Order, variant_values
from ludoteca.web.lobby.option_words import label, value_words

YOUR_FILE = N_("your file")
PLAYERS_LABEL = N_("Players")
THE_DEFAULT = N_("as the rules say ({value})")


def _option(cls: type[Game], name: str) -> Option | None:
    return next((o for o in cls.OPTIONS if o.name == name), None)


def name_words(cls: type[Game], name: str, lang: str) -> str:
    if name == PLAYERS:
        return web_text(lang, PLAYERS_LABEL)
    option = _option(cls, name)
    return label(option, lang) if option is not None else name


def value_text(cls: type[Game], name: str, value: Any, lang: str) -> str:
    """A value of an option in words: a choice's label, yes/no, "your file", the default's words."""
    option = _option(cls, name)
    if value == DEFAULT:
        if name == PLAYERS or option is None:
            return web_text(lang, THE_DEFAULT, value="")
        from ludoteca.web.lobby.option_words import default_words

        return web_text(lang, THE_DEFAULT, value=default_words(cls, option, lang))
    if name == PLAYERS or option is None:
        return str(value)
    if isinstance(value, dict | list):
        return web_text(lang, YOUR_FILE)
    return value_words(option, value, lang)


def settings_words(order: Order, lang: str) -> dict[str, Any]:
    cls = game_class(order.game)
    return {
        "options": [{"label": name_words(cls, n, lang), "value": value_text(cls, n, v, lang)}
                    for n, v in sorted(order.options.items())],
        "compare": [{"label": name_words(cls, n, lang), "values": [value_text(cls, n, v, lang) for v in values]}
                    for n, values in order.compare],
        "variants": [_variant_words(cls, values, lang) for values in variant_values(order)] if order.compare else [],
    }


def _variant_words(cls: type[Game], values: dict[str, Any], lang: str) -> str:
    return ", ".join(f"{name_words(cls, n, lang)}: {value_text(cls, n, v, lang)}" for n, v in values.items())


def run_view(row: dict[str, Any], lang: str, viewer: int | None, out: Path | None = None) -> dict[str, Any]:
    """A run for the page; with ``out`` (the run's folder) its results too, once it is done."""
    order = Order.from_json(row["request"])
    cls = game_class(order.game)
    view = {
        "id": row["id"], "kind": order.kind, "game": order.game, "title": cls.title, "owner": row["owner"],
        "mine": viewer is not None and viewer == row["account_id"], "status": row["status"], "done": row["done"],
        "total": row["total"], "created_at": row["created_at"], "started_at": row["started_at"],
        "finished_at": row["finished_at"], "players": order.players, "agents": order.agents, "games": order.games,
        "seed": order.seed, "target": order.target, "length": order.length, "variants": order.variants,
        **settings_words(order, lang),
    }
    if row["status"] == "failed" and view["mine"]:
        view["message"] = row.get("message") or ""
    if out is not None and row["status"] == "done":
        view["results"] = results(order, out, lang)
    return view


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def results(order: Order, out: Path, lang: str) -> dict[str, Any] | None:
    if order.kind == "balance":
        return _balance(order, _read(out / "balance.json"), lang)
    summary = _read(out / "summary.json")
    if not isinstance(summary, dict):
        return None
    names = settings_words(order, lang)["variants"]
    variants = []
    for k, v in enumerate(summary.get("variants", [])):
        variants.append({
            "label": names[k] if k < len(names) else "", "players": v.get("players"), "games": v.get("games"),
            "first_player": _pick(v.get("first_player"), "rate", "ci", "p_value", "significant"),
            "seats": [_pick(s, "seat", "rate", "ci") for s in v.get("seats", [])],
            "turns": _pick((v.get("length") or {}).get("turns"), "mean", "median", "p10", "p90"),
            "shared": _pick(v.get("shared_wins"), "rate", "ci"),
            "turn_limit": _pick(v.get("turn_limit"), "rate"),
        })
    comparisons = []
    for c in summary.get("comparisons") or []:
        conclusion = c.get("conclusion") or {}
        comparisons.append({"variant": _index(summary, c.get("variant")),
                            "baseline": _index(summary, c.get("baseline")),
                            **_pick(conclusion, "verdict", "diff", "ci", "mde")})
    return {"variants": variants, "comparisons": comparisons}


def _index(summary: dict[str, Any], key: Any) -> int:
    keys = [v.get("key") for v in summary.get("variants", [])]
    return keys.index(key) if key in keys else -1


def _pick(data: Any, *keys: str) -> dict[str, Any]:
    return {k: data.get(k) for k in keys} if isinstance(data, dict) else {}


def _balance(order: Order, found: Any, lang: str) -> dict[str, Any] | None:
    if not isinstance(found, dict):
        return None
    keys = [v.get("key") for v in (found.get("spec") or {}).get("variants", [])]
    names = settings_words(order, lang)["variants"]

    def words(key: Any) -> str:
        return names[keys.index(key)] if key in keys and keys.index(key) < len(names) else ""

    return {
        "best": words(found.get("best")), "runner_up": words(found.get("runner_up")), "stop": found.get("stop"),
        "games": found.get("games"), "budget": found.get("budget"), "cpu_seconds": found.get("cpu_seconds"),
        "candidates": [{"label": words(c.get("setting")), "games": c.get("games"), "estimate": c.get("estimate"),
                        "interval": c.get("interval"), "dropped_after_round": c.get("dropped_after_round"),
                        "best": c.get("setting") == found.get("best")} for c in found.get("candidates", [])],
    }


# --- two runs side by side ---------------------------------------------------------------------------------

def first_player_returns(out: Path) -> list[float]:
    """The first player's return in each game of a run's first variant (from ``games.jsonl``)."""
    values: list[float] = []
    first_variant = None
    try:
        with (out / "games.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                first_variant = first_variant or row.get("variant")
                if row.get("variant") == first_variant:
                    values.append(float(row["returns"][int(row.get("first", 0))]))
    except OSError:
        return []
    return values


def difference(a: list[float], b: list[float]) -> dict[str, Any] | None:
    """B's first-player win rate minus A's, with its 95% interval and two-sided p (z with each sample's
    own variance: the lab's test for win rates with shared wins)."""
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1)
    se = math.sqrt(va / len(a) + vb / len(b))
    diff = mb - ma
    if se == 0:
        return {"diff": diff, "ci": [diff, diff], "p_value": 1.0 if diff == 0 else 0.0, "significant": diff != 0}
    p = math.erfc(abs(diff / se) / math.sqrt(2))
    return {"diff": diff, "ci": [diff - 1.96 * se, diff + 1.96 * se], "p_value": p, "significant": p < 0.05}
