"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse
from typing import Any

from ludoteca.cli import UsageError
from ludoteca.core.i18n import _
from ludoteca.core.options import parse_option_text
from ludoteca.registry import GAMES


def add_game_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", type=str.lower, help=_("one of: {games}").format(games=", ".join(GAMES)))


def add_option_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=None, help=_("number of players"))
    parser.add_argument(
        "--option", "-o", action="append", default=[], metavar="NAME=VALUE",
        help=_("a game option as RULES.md names it (repeatable), e.g. --option size=5"),
    )


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise UsageError(_("--option takes NAME=VALUE, not {pair}").format(pair=repr(pair)))
        options[name.strip()] = parse_option_text(value)
    return options


def load_game_from_args(args: argparse.Namespace) -> Any:
    """The game named by ``args.game`` with ``--players`` and ``--option``; UsageError if bad."""
    from ludoteca.registry import load_game

    options = parse_options(getattr(args, "option", []) or [])
    if getattr(args, "players", None) is not None:
        options["players"] = args.players
    try:
        return load_game(args.game, **options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def add_database_arguments(parser: argparse.ArgumentParser, url_help: str) -> None:
    """``--database URL`` (help ``url_help``) and ``--data-dir``: a server's database, as ``serve`` takes it."""
    parser.add_argument("--database", metavar="URL", default=None, help=url_help)
    parser.add_argument("--data-dir", default="data", help=_("directory of the SQLite database (default ./data)"))


def database_of(args: argparse.Namespace) -> str:
    """The SQLAlchemy URL the command's ``--database``/``--data-dir`` name."""
    from ludoteca.web.repository.store import database_url

    return database_url(args.data_dir, args.database)
