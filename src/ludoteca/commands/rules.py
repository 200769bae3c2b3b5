"""``ludoteca rules GAME``: the rules summary and the game's options."""

from __future__ import annotations

import argparse

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument

HELP = "show a game's rules summary and its options"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)


def run(args: argparse.Namespace) -> int:
    from ludoteca.registry import game_class

    try:
        cls = game_class(args.game)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(cls.rules_summary())
    print()
    print(f"The full rules, with every decision the rulebook leaves open: docs/rules/{cls.name}.md "
          "in ludoteca's source.")
    print(f"Try it: ludoteca play {cls.name}   (or: ludoteca random {cls.name} --players 2)")
    return 0
