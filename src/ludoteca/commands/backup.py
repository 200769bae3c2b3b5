"""``ludoteca backup``: a consistent copy of a server's database, taken while it runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("back up a server's database while it runs (SQLite or PostgreSQL)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help=_("the backup file to write (never overwritten)"))
    parser.add_argument("--database", metavar="URL", default=None,
                        help=_("the server's SQLAlchemy URL (default: the SQLite database of --data-dir)"))
    parser.add_argument("--data-dir", default="data", help=_("directory of the SQLite database (default ./data)"))
    add_lang_argument(parser, "messages")


def run(args: argparse.Namespace) -> int:
    from ludoteca.web.backup import BackupError, backup
    from ludoteca.web.repository import database_url

    use_language(args.lang)
    try:
        done = backup(database_url(args.data_dir, args.database), Path(args.out))
    except BackupError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    print(_("backed up to {path} ({what})").format(what=done.text(), path=args.out))
    return 0
