"""``ludoteca rules GAME [--lang it|en]``: the game's full rules page, then its options.

The page is the game's ``rules/<lang>.md`` (the same text as the web's rules page), drawn with
Rich's Markdown; its diagram blocks (```` ```position ````, see :func:`ludoteca.web.lobby.rules.parse_diagram`)
are drawn as ``ludoteca play`` draws a board (the game's ``board.py``), each under a line with its
label and the moves it highlights, then the names of the seats and the caption. The language:
``--lang``, else the locale variables ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (the first
one set: Italian when it starts with "it"), else English.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import LANGUAGES, terminal_language

HELP = N_("show a game's rules and its options")
MAX_WIDTH = 100
"""Columns of the rules text at most (wider terminals get the same line length)."""

TEXTS = {
    "en": {"players": "Players: {low} to {high}.", "options": "Options:",
           "typed": "to choose: --option {name}={values}", "seconds": "SECONDS", "file": "FILE.json",
           "source": "The rules as ludoteca implements them, with every decision the rulebook leaves open: "
                     "{notes} in ludoteca's source.",
           "try": "Try it: ludoteca play {name}   (or: ludoteca random {name} --players 2)"},
    "it": {"players": "Giocatori: da {low} a {high}.", "options": "Opzioni:",
           "typed": "per sceglierla: --option {name}={values}", "seconds": "SECONDI", "file": "FILE.json",
           "source": "Le regole come ludoteca le applica, con ogni decisione che il regolamento lascia aperta "
                     "(in inglese): {notes} nel sorgente di ludoteca.",
           "try": "Provalo: ludoteca play {name}   (oppure: ludoteca random {name} --players 2)"},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    parser.add_argument("--lang", type=str.lower, choices=LANGUAGES, default=None,
                        help=_("language of the rules (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG; "
                             "Italian when it starts with 'it', else English)"))


def run(args: argparse.Namespace) -> int:
    from ludoteca.registry import game_class

    try:
        cls = game_class(args.game)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    lang = args.lang or terminal_language(os.environ)
    t = TEXTS[lang]
    page = cls.rules_text(lang)
    lines = cls.rules_summary().splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("Players:")), len(lines))
    doc = "\n".join(lines[:at]).rstrip()
    if page is None or lang == "en":
        print(doc)  # the one-paragraph summary of the game first, as before the pages existed
        print()
    if page is not None:
        from rich.console import Console

        from ludoteca.i18n import use_language
        from ludoteca.web.lobby.option_words import with_options

        use_language(lang)  # the boards' own texts (board.py) in the page's language
        console = Console(highlight=False)
        console.width = min(console.width, MAX_WIDTH)
        with console.capture() as drawn:
            print_page(console, cls.name, with_options(page, cls, lang), lang)
        for line in drawn.get().splitlines():
            print(line.rstrip())  # Rich pads every line to the full width
        print()
    print(t["players"].format(low=cls.min_players, high=cls.max_players))
    print(t["options"])
    for line in option_lines(cls, lang):
        print(line)
    print()
    if cls.rules_notes:
        print(t["source"].format(notes=cls.rules_notes))
    print(t["try"].format(name=cls.name))
    return 0


def option_lines(cls: Any, lang: str) -> list[str]:
    """The game's options as the rules pages say them (label, help, range, default, each choice), each
    with the ``--option`` a terminal player types to choose it."""
    from ludoteca.i18n import web_text
    from ludoteca.web.lobby.option_words import label, summary, value_words

    t = TEXTS[lang]
    lines: list[str] = []
    for option in cls.OPTIONS:
        lines.append(f"  {label(option, lang)}: {summary(cls, option, lang)}")
        for choice in option.choices:
            words = web_text(lang, choice.help)
            lines.append(f"    - {value_words(option, choice.value, lang)}" + (f": {words}" if words else ""))
        if option.choices:
            values = "|".join(c.value for c in option.choices)
        elif option.kind == "bool":
            values = "yes|no"
        elif option.kind == "seconds_or_none":
            values = f"{t['seconds']}|none"
        elif option.kind == "file":
            values = t["file"]
        else:
            values = "N"
        lines.append("      " + t["typed"].format(name=option.name, values=values))
    return lines


def print_page(console: Any, name: str, page: str, lang: str) -> None:
    """Print a rules page: its Markdown with Rich, each diagram block drawn by the terminal board."""
    from rich.markdown import Markdown
    from rich.text import Text

    from ludoteca.web.lobby.rules import diagram_blocks, highlighted, legend, parse_diagram, terminal_board

    lines = page.splitlines(keepends=True)
    at = 0
    for start, source in diagram_blocks(page):
        end = start + 2 + source.count("\n")  # the fences and the JSON between them
        console.print(Markdown("".join(lines[at:start]), hyperlinks=False))
        at = end
        try:
            diagram = parse_diagram(name, source, lang)
        except (ValueError, TypeError) as exc:
            console.print(Text(f"[{exc}]", style="red"))
            continue
        console.print()
        for board in diagram.boards:
            if board.label:
                console.print(Text(board.label, style="bold underline"))
            console.print(terminal_board(board))
            if board.highlight:
                console.print(Text(highlighted(board, lang), style="yellow"))
            console.print()
        console.print(Text(legend(diagram), style="dim"))
        console.print(Markdown(diagram.caption, hyperlinks=False), style="italic")
        console.print()
    console.print(Markdown("".join(lines[at:]), hyperlinks=False))
