"""``ludoteca admin``: name the club's moderators (docs/web.md, "Moderation")."""

from __future__ import annotations

import argparse
import sys

from ludoteca.commands.common import add_database_arguments, database_of
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("name the club's moderators: grant or revoke the admin role, list them")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["grant", "revoke", "list"],
                        help=_("grant NAME the admin role, revoke it, or list the moderators"))
    parser.add_argument("name", nargs="?", metavar="NAME", help=_("the account's name (for grant and revoke)"))
    add_database_arguments(parser, _("the server's SQLAlchemy URL (default: the SQLite database of --data-dir)"))
    add_lang_argument(parser, "messages")


def run(args: argparse.Namespace) -> int:
    from ludoteca.cli import UsageError
    from ludoteca.web.accounts.moderation import ADMIN, moderators, set_role
    from ludoteca.web.repository.store import Repository

    use_language(args.lang)
    if args.action != "list" and not args.name:
        raise UsageError(_("{action} needs the account's name").format(action=args.action))
    repo = Repository(database_of(args))
    try:
        if args.action == "list":
            names = moderators(repo)
            print("\n".join(names) if names else _("no moderator yet: the first account made becomes one"))
            return 0
        try:
            account = set_role(repo, args.name, ADMIN if args.action == "grant" else None)
        except LookupError:
            print("ludoteca: error: " + _("there is no account named {name}").format(name=args.name), file=sys.stderr)
            return 1
        print((_("{name} is now a moderator") if account.role == ADMIN else _("{name} is no longer a moderator"))
              .format(name=account.name))
        return 0
    finally:
        repo.close()
