"""``ludoteca restore``: a backup of ``ludoteca backup`` into a new, empty database."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ludoteca.commands.common import add_database_arguments, database_of
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("restore a backup into a new, empty database (stop the server first)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help=_("a file written by 'ludoteca backup'"))
    add_database_arguments(parser, _("the SQLAlchemy URL to restore into (default: the SQLite database of --data-dir)"))
    add_lang_argument(parser, "messages")


def run(args: argparse.Namespace) -> int:
    from ludoteca.web.repository.backup import BackupError, restore

    use_language(args.lang)
    try:
        done = restore(Path(args.file), database_of(args))
    except BackupError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    print(_("restored ({what})").format(what=done.text()))
    return 0
