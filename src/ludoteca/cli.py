"""The ``ludoteca`` command. Each subcommand lives in ``ludoteca.commands.<name>``.

A command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; heavy imports (web server, plotting) happen inside ``run`` so the
command starts fast. Bad arguments: a one-line error on stderr and exit code 2.

When the reader of the output goes away (``ludoteca rules exactly | head -4``) the command stops
quietly, without a traceback, with exit code 1 (as Python's documentation on SIGPIPE recommends,
and as Rich does for the commands that draw with it; ``--help`` is handled by argparse: 0).
SIGPIPE itself stays ignored, as Python sets it, so the web server survives closed sockets.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from ludoteca.commands import UsageError

__all__ = ["UsageError", "build_parser", "main"]

COMMANDS = ("rules", "random", "replay", "play", "arena", "lab", "serve")
EXIT_BROKEN_PIPE = 1
"""Exit code when standard output is closed by its reader."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from ludoteca import __version__
    from ludoteca.registry import GAMES

    parser = _Parser(prog="ludoteca", description=f"Designer board games: {', '.join(GAMES)}.")

    parser.add_argument("--version", action="version", version=f"ludoteca {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"ludoteca.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ludoteca.commands.{name}":
                continue
            raise
        # argparse %-formats help strings (not descriptions): "95%" must reach it as "95%%".
        p = sub.add_parser(name, help=module.HELP.replace("%", "%%"), description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv``; returns the exit code."""
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows up here, not at interpreter exit
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE


def _discard_stdout() -> None:
    """Point stdout at /dev/null so Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _main(argv: Sequence[str] | None) -> int:
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
