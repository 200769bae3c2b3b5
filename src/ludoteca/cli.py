"""The ``ludoteca`` command. Each subcommand lives in ``ludoteca.commands.<name>``.

A command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; heavy imports (web server, plotting) happen inside ``run`` so the
command starts fast. Bad arguments: a one-line error on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from ludoteca.commands import UsageError

__all__ = ["UsageError", "build_parser", "main"]

COMMANDS = ("rules", "random", "replay", "play", "arena", "lab", "serve")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ludoteca", description="Four designer board games: exactly, TRI, TOHM, EXAGON.")
    from ludoteca import __version__

    parser.add_argument("--version", action="version", version=f"ludoteca {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"ludoteca.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ludoteca.commands.{name}":
                continue
            raise
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        return int(args._module.run(args) or 0)
    except UsageError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nludoteca: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
