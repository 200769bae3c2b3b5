#!/usr/bin/env python3
"""Extract the terminal's messages into locale/messages.pot and merge them into the Italian catalog.

    .venv/bin/python scripts/i18n.py          # write messages.pot, update it/LC_MESSAGES/messages.po
    .venv/bin/python scripts/i18n.py --check  # exit 1 when a message lacks an Italian translation

New messages arrive in the .po with an empty msgstr (tests/test_i18n.py fails until they are
translated); messages gone from the source are dropped. No .mo file: ludoteca reads the .po.
"""

from __future__ import annotations

import argparse
import sys

from babel.messages.pofile import read_po, write_po

from ludoteca.i18n import DOMAIN, LOCALE_DIR, catalog_path, extract


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report untranslated messages")
    args = parser.parse_args()
    template = extract()
    po = catalog_path("it")
    if po.exists():
        with po.open("rb") as f:
            catalog = read_po(f, locale="it", domain=DOMAIN)
    else:
        from babel.messages.catalog import Catalog

        catalog = Catalog(locale="it", domain=DOMAIN, project="ludoteca")
    catalog.update(template, no_fuzzy_matching=True)
    missing = [m.id for m in catalog if m.id and not m.string]
    if args.check:
        for msgid in missing:
            print(f"untranslated: {msgid!r}")
        return 1 if missing else 0
    LOCALE_DIR.mkdir(exist_ok=True)
    with (LOCALE_DIR / f"{DOMAIN}.pot").open("wb") as f:
        write_po(f, template, width=120, omit_header=False, sort_output=False)
    po.parent.mkdir(parents=True, exist_ok=True)
    with po.open("wb") as f:
        write_po(f, catalog, width=120, ignore_obsolete=True)
    print(f"{len(template)} messages; {len(missing)} without an Italian translation in {po}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
