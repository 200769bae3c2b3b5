"""``ludoteca rules GAME [--lang it|en]``: the game's full rules page, then its options.

The page is the game's ``rules/<lang>.md`` (the same text as the web's rules page), drawn with
Rich's Markdown. The language: ``--lang``, else the locale variables ``LANGUAGE``, ``LC_ALL``,
``LC_MESSAGES``, ``LANG`` (the first one set: Italian when it starts with "it"), else English.
"""

from __future__ import annotations

import argparse
import os

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument
from ludoteca.i18n import LANGUAGES, terminal_language

HELP = "show a game's rules and its options"
MAX_WIDTH = 100
"""Columns of the rules text at most (wider terminals get the same line length)."""

TEXTS = {
    "en": {"players": "Players: {low} to {high}.", "options": "Options:",
           "source": "The rules as ludoteca implements them, with every decision the rulebook leaves open: "
                     "docs/rules/{name}.md in ludoteca's source.",
           "try": "Try it: ludoteca play {name}   (or: ludoteca random {name} --players 2)"},
    "it": {"players": "Giocatori: da {low} a {high}.", "options": "Opzioni:",
           "source": "Le regole come ludoteca le applica, con ogni decisione che il regolamento lascia aperta "
                     "(in inglese): docs/rules/{name}.md nel sorgente di ludoteca.",
           "try": "Provalo: ludoteca play {name}   (oppure: ludoteca random {name} --players 2)"},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    parser.add_argument("--lang", type=str.lower, choices=LANGUAGES, default=None,
                        help="language of the rules (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG; "
                             "Italian when it starts with 'it', else English)")


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
    options = [line for line in lines[at + 1:] if line != "Options:"]
    if page is None or lang == "en":
        print(doc)  # the one-paragraph summary of the game first, as before the pages existed
        print()
    if page is not None:
        from rich.console import Console
        from rich.markdown import Markdown

        console = Console(highlight=False)
        console.width = min(console.width, MAX_WIDTH)
        with console.capture() as drawn:
            console.print(Markdown(page, hyperlinks=False))
        for line in drawn.get().splitlines():
            print(line.rstrip())  # Rich pads every line to the full width
        print()
    print(t["players"].format(low=cls.min_players, high=cls.max_players))
    print(t["options"])
    for line in options:
        print(line)
    print()
    print(t["source"].format(name=cls.name))
    print(t["try"].format(name=cls.name))
    return 0
