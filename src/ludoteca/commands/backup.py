"""``ludoteca backup``: a consistent copy of a server's database, taken while it runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ludoteca.commands.common import add_database_arguments, database_of
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("back up a server's database while it runs (SQLite or PostgreSQL)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help=_("the backup file to write (never overwritten)"))
    add_database_arguments(parser, _("the server's SQLAlchemy URL (default: the SQLite database of --data-dir)"))
    add_lang_argument(parser, "messages")


def run(args: argparse.Namespace) -> int:
    from ludoteca.web.repository.backup import BackupError, backup

    use_language(args.lang)
    try:
        done = backup(database_of(args), Path(args.out))
    except BackupError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    print(_("backed up to {path} ({what})").format(what=done.text(), path=args.out))
    return 0
