"""The ``ludoteca`` command. Each subcommand lives in ``ludoteca.commands.<name>``.

A command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``; heavy imports (web server, plotting) happen inside ``run`` so the
command starts fast. Bad arguments: a one-line error on stderr and exit code 2.

When the reader of the output goes away (``ludoteca rules exactly | head -4``) the command stops
quietly, without a traceback, with exit code 1 (as Python's documentation on SIGPIPE recommends,
and as Rich does for the commands that draw with it; ``--help`` is handled by argparse: 0).
SIGPIPE itself stays ignored, as Python sets it, so the web server survives closed sockets.

Languages: :func:`main` chooses the language before it builds the parser (``--lang X``
found anywhere in the command line, else the locale variables: :func:`ludoteca.i18n.use_language`),
so the help texts (marked ``_()``) and the errors come in that language. argparse's own words
("usage:", "options", "the following arguments are required: %s", ...) come from its gettext domain
"argparse", looked up with ``gettext.gettext`` at call time; no catalog can be passed to it, so
:func:`translate_argparse` replaces the module's ``argparse._`` with a function that answers the
few texts of :data:`ARGPARSE_TEXTS` from the terminal's catalog (and asks gettext for the others, as
before). That replacement is process-wide and stays; in English it changes nothing.
"""

from __future__ import annotations

import argparse
import gettext
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from ludoteca.commands import UsageError
from ludoteca.core.i18n import N_, _

__all__ = ["UsageError", "build_parser", "main"]

COMMANDS = ("rules", "random", "replay", "play", "arena", "lab", "serve",
            "backup", "restore", "admin", "analyse", "balance")
EXIT_BROKEN_PIPE = 1
"""Exit code when standard output is closed by its reader."""

ARGPARSE_TEXTS = frozenset({
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("unrecognized arguments: %s"),
    N_("the following arguments are required: %s"), N_("one of the arguments %s is required"),
    N_("expected one argument"), N_("expected at most one argument"), N_("expected at least one argument"),
    N_("invalid %(type)s value: %(value)r"), N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("ambiguous option: %(option)s could match %(matches)s"), N_("not allowed with argument %s"),
    N_("ignored explicit argument %r"),
})
"""argparse's own texts (its gettext domain) that the terminal's catalog translates."""

LANG_HELP = N_("language of the {what} (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG; Italian when it "
               "starts with 'it', else English)")
"""The help of every command's ``--lang`` (:func:`ludoteca.i18n.add_lang_argument` writes it in English)."""
LANG_WHAT = {
    "messages": N_("messages"),
    "game's messages": N_("game's messages"),
    "game's texts": N_("game's texts"),
    "events' texts": N_("events' texts"),
    "output: report, tables and messages": N_("output: report, tables and messages"),
    "command's messages (the web pages follow each browser's language)":
        N_("command's messages (the web pages follow each browser's language)"),
}


def _argparse_text(text: str) -> str:
    return _(text) if text in ARGPARSE_TEXTS else gettext.gettext(text)


def translate_argparse() -> None:
    """Make argparse look its texts of :data:`ARGPARSE_TEXTS` up in the terminal's catalog (the
    language :func:`ludoteca.i18n.use_language` installed); see the module's documentation."""
    argparse._ = _argparse_text  # type: ignore[attr-defined]


def language_in(argv: Sequence[str]) -> str | None:
    """The value of ``--lang X`` or ``--lang=X`` in a command line (before a ``--``), None without one
    or with a value that is not a language (argparse reports it later)."""
    from ludoteca.i18n import LANGUAGES

    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            found = argv[i + 1].lower()
        elif arg.startswith("--lang="):
            found = arg.partition("=")[2].lower()
    return found if found in LANGUAGES else None


def _translate_lang_help(parser: argparse.ArgumentParser) -> None:
    prefix, suffix = "language of the ", " (default: from LANGUAGE"
    for action in parser._actions:
        help_text = action.help or ""
        if "--lang" in action.option_strings and help_text.startswith(prefix) and suffix in help_text:
            what = help_text[len(prefix):help_text.index(suffix)]
            if what in LANG_WHAT:
                action.help = _(LANG_HELP).format(what=_(LANG_WHAT[what]))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


EXTRAS = {"fastapi": "web", "starlette": "web", "uvicorn": "web", "sqlalchemy": "web", "argon2": "web",
          "redis": "web", "prometheus_client": "web", "psycopg": "web", "matplotlib": "lab", "numpy": "lab",
          "jinja2": "lab", "ray": "ray"}
"""The optional extra (pyproject.toml) that installs a third-party module a command imports."""


def _missing_extra(command: str, module: str) -> Any:
    """A stand-in for a command whose module cannot be imported because a third-party package is not
    installed: listed as usual, it says what to install instead of breaking every other command."""
    import types

    extra = EXTRAS.get(module)
    install = f"pip install 'ludoteca[{extra}]'" if extra else f"pip install {module}"
    message = _("'{command}' needs the Python package {module}, which is not installed: {install}").format(
        command=command, module=module, install=install)

    def run(_args: argparse.Namespace) -> int:
        raise UsageError(message)

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    return types.SimpleNamespace(HELP=message, run=run, add_arguments=add_arguments)


def build_parser() -> argparse.ArgumentParser:
    from ludoteca import __version__
    from ludoteca.registry import GAMES

    parser = _Parser(prog="ludoteca", description=_("Designer board games: {games}.").format(games=", ".join(GAMES)))

    parser.add_argument("--version", action="version", version=f"ludoteca {__version__}",
                        help=_("show program's version number and exit"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"ludoteca.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ludoteca.commands.{name}":
                continue
            if not exc.name or exc.name.split(".")[0] == "ludoteca":
                raise
            module = _missing_extra(name, exc.name.split(".")[0])  # e.g. serve without ludoteca[web]
        # argparse %-formats help strings (not descriptions): "95%" must reach it as "95%%".
        text = _(module.HELP)
        p = sub.add_parser(name, help=text.replace("%", "%%"), description=text)
        module.add_arguments(p)
        _translate_lang_help(p)
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
    from ludoteca.i18n import use_language

    use_language(language_in(sys.argv[1:] if argv is None else argv))
    translate_argparse()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not getattr(args, "command", None):
            parser.print_help()
            return 2
        try:
            return int(args._module.run(args) or 0)
        except ModuleNotFoundError as exc:  # an optional package the command needs (pyproject's extras)
            if not exc.name or exc.name.split(".")[0] == "ludoteca":
                raise
            raise UsageError(_missing_extra(args.command, exc.name.split(".")[0]).HELP) from None
    except UsageError as exc:
        # The prefix stays "ludoteca: error:" in every language (scripts and tests match it; the
        # message after it is in the chosen language).
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\n" + _("ludoteca: interrupted"), file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
