"""A game's options in a person's words, in a language: the lobby's controls, the rules pages'
option sections and ``ludoteca rules`` all say them the same way.

The words come from each option's declaration (:class:`~ludoteca.core.options.Option`: its kind,
label, help, choices) translated by the game's own catalog (``games/<name>/locale/options.<lang>.po``);
the few words of this module (yes, no, "Default: …") by the shell's catalog. Nothing here names a
game or an option: every fact is asked of the game's class.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ludoteca.core.game import Game
from ludoteca.core.i18n import N_, using
from ludoteca.core.options import Option
from ludoteca.i18n import translations, web_text

YES = N_("yes")
NO = N_("no")
SECONDS = N_("{n} s")
DEFAULT = N_("Default: {value}.")
DEFAULT_BY_PLAYERS = N_("with {n} players: {value}")
RANGE = N_("From {low} to {high}.")
AT_LEAST = N_("{low} or more.")
OR_NONE = N_("Or: {none}.")
OPTIONS_HEADING = N_("Options")
"""The heading of a rules page's option section (its list is drawn from the declarations)."""


def in_language(lang: str | None, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the engines' messages (``_``: a refusal's reason) in ``lang``, in
    this thread only (a server answers several languages at once)."""
    table = translations(lang) if lang else {}
    with using((lambda text: table.get(text, text)) if table else None):
        return fn(*args, **kwargs)


def label(option: Option, lang: str | None) -> str:
    """The option's label in ``lang``, with a capital first letter."""
    text = web_text(lang, option.shown_label)
    return text[:1].upper() + text[1:]


def help_text(option: Option, lang: str | None) -> str:
    return web_text(lang, option.shown_help)


def _number(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def value_words(option: Option, value: Any, lang: str | None) -> str:
    """``value`` of ``option`` as a player reads it: a choice's label, yes/no, "60 s", the words
    of None ("no hourglass"); a file's value is its default's words (a designer's set has no name)."""
    if option.kind == "choice":
        choice = option.choice(value)
        return web_text(lang, choice.label) if choice else str(value)
    if option.kind == "bool":
        return web_text(lang, YES if value else NO)
    if option.kind == "seconds_or_none":
        if value is None:
            return web_text(lang, option.none_label or NO)
        return web_text(lang, SECONDS, n=_number(value))
    if option.kind == "file":
        return web_text(lang, option.default_label) if option.default_label else ""
    if isinstance(value, bool):
        return web_text(lang, YES if value else NO)
    if isinstance(value, int | float):
        return _number(value)
    return str(value)


def default_words(cls: type[Game], option: Option, lang: str | None) -> str:
    """The default of ``option`` in words: one value, or one per player count when it depends on it
    ("with 2 players: 4; with 3 players: 5"); a default declared in words (``default_label``) as it is."""
    if option.default_label:
        return web_text(lang, option.default_label)
    if not callable(option.default):
        return value_words(option, option.default, lang)
    by_players: list[tuple[int, str]] = []
    for n in range(cls.min_players, cls.max_players + 1):
        try:
            value = cls(players=n).options[option.name]
        except ValueError:
            continue
        by_players.append((n, value_words(option, value, lang)))
    if len({words for _n, words in by_players}) == 1:
        return by_players[0][1]
    return "; ".join(web_text(lang, DEFAULT_BY_PLAYERS, n=n, value=words) for n, words in by_players)


def range_words(option: Option, lang: str | None) -> str:
    if option.kind not in ("int", "seconds_or_none") or option.low is None:
        return ""
    if option.high is not None:
        return web_text(lang, RANGE, low=option.low, high=option.high)
    return web_text(lang, AT_LEAST, low=option.low)


def catalogue_entry(cls: type[Game], option: Option, lang: str | None) -> dict[str, Any]:
    """What the lobby needs to draw ``option``'s control: its kind, words, choices, range, default."""
    entry: dict[str, Any] = {
        "name": option.name, "kind": option.kind, "label": web_text(lang, option.shown_label),
        "help": help_text(option, lang),
        "default": None if callable(option.default) else option.default,
        "default_follows": callable(option.default),  # the default follows other options (players, the clock)
        "default_words": default_words(cls, option, lang),
        "variant": option.variant,  # a rulebook variant for designers: folded in the lobby
    }
    entry["doc"] = entry["help"]
    if option.choices:
        entry["choices"] = [{"value": c.value, "label": web_text(lang, c.label), "help": web_text(lang, c.help)}
                            for c in option.choices]
    if option.low is not None:
        entry["low"] = option.low
    if option.high is not None:
        entry["high"] = option.high
    if option.none_label:
        entry["none_label"] = web_text(lang, option.none_label)
    return entry


# --- the rules pages: the option section drawn from the declarations ---------------------------------------

def _escape(text: str) -> str:
    """``text`` as Markdown that shows it literally."""
    return re.sub(r"([\\`*_\[\]<>#|])", r"\\\1", text)


def summary(cls: type[Game], option: Option, lang: str | None) -> str:
    """What ``option`` does, its range, whether it can be turned off and its default, in sentences."""
    parts = [help_text(option, lang).rstrip(".") + ".", range_words(option, lang)]
    if option.kind == "seconds_or_none" and option.none_label:
        parts.append(web_text(lang, OR_NONE, none=web_text(lang, option.none_label)))
    default = default_words(cls, option, lang)
    if default:
        parts.append(web_text(lang, DEFAULT, value=default))
    return " ".join(p for p in parts if p)


def options_markdown(cls: type[Game], lang: str | None) -> str:
    """The option section's list: each option's label and :func:`summary`, each choice with its label
    and help."""
    lines: list[str] = []
    for option in cls.OPTIONS:
        lines.append(f"- **{_escape(label(option, lang))}**: {_escape(summary(cls, option, lang))}")
        for c in option.choices:
            words = web_text(lang, c.help)
            lines.append(f"  - **{_escape(web_text(lang, c.label))}**" + (f": {_escape(words)}" if words else ""))
    return "\n".join(lines) + "\n"


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def with_options(page: str, cls: type[Game], lang: str | None,
                 draw: Callable[[type[Game], str | None], str] = options_markdown) -> str:
    """``page`` (a rules page's Markdown) with the list of its option section (the heading
    "Options" in ``lang``) replaced by the options drawn from the declarations; the section's other
    paragraphs stay. A page without that section is returned as it is."""
    lines = page.splitlines(keepends=True)
    wanted = web_text(lang, OPTIONS_HEADING).strip().lower()
    fenced = False
    start = level = -1
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line.rstrip("\n"))
        if match and match.group(2).strip().lower() == wanted:
            start, level = i, len(match.group(1))
            break
    if start < 0:
        return page
    end = len(lines)
    for i in range(start + 1, len(lines)):
        match = _HEADING.match(lines[i].rstrip("\n"))
        if match and len(match.group(1)) <= level:
            end = i
            break
    first = next((i for i in range(start + 1, end) if re.match(r"^[-*+]\s", lines[i])), None)
    if first is None:
        return "".join([*lines[:start + 1], "\n", draw(cls, lang), *lines[start + 1:]])
    last = first
    for i in range(first + 1, end):
        line = lines[i]
        if re.match(r"^([-*+]\s|\s+\S)", line):
            last = i
        elif line.strip():
            break
    return "".join([*lines[:first], draw(cls, lang), *lines[last + 1:]])
