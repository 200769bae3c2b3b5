#!/usr/bin/env python3
"""Extract the messages into the catalogs and merge them into the Italian ones.

    .venv/bin/python scripts/i18n.py          # update every catalog (terminal, browser, each game's)
    .venv/bin/python scripts/i18n.py --check  # exit 1 when a message of any catalog lacks Italian

The catalogs:

- the terminal's shared one: ``_()``/``N_()`` of the terminal's modules -> ``locale/messages.pot`` and
  ``locale/it/LC_MESSAGES/messages.po``;
- each game's terminal texts: ``_()``/``N_()`` of the modules in its folder (its board, its engine's
  explanations, its counters) -> ``games/<name>/locale/terminal.it.po``;
- the browser's shell: ``t()``/``tn()`` of ``web/static/js/*.js``, the ``data-i18n`` texts of the
  pages, the server's messages (``WebError``, ``N_()`` in ``web/``) -> ``locale/it/LC_MESSAGES/web.po``;
- each game's browser texts: its ``client.js``'s ``t()``/``tn()`` -> ``games/<name>/locale/it.po``,
  and its options' labels and help texts -> ``games/<name>/locale/options.it.po``.

New messages arrive in a .po with an empty msgstr (tests/test_i18n.py and tests/test_i18n_web.py
fail until they are translated); messages gone from the source are dropped; translations already
there are kept (Babel's update, without fuzzy matching). No .mo file: ludoteca reads the .po.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

os.environ.setdefault("LUDOTECA_EXAMPLE_GAMES", "1")  # the example game's catalogs too (games/_example)

from ludoteca.i18n import (
    DOMAIN,
    LOCALE_DIR,
    WEB_DOMAIN,
    browser_catalogs,
    catalog_path,
    read_catalog,
    terminal_catalogs,
)


def merged(po: Path, domain: str, template: Catalog) -> Catalog:
    """The Italian catalog at ``po`` (or a new one) updated to ``template``'s messages."""
    if po.exists():
        catalog = read_catalog(po, "it", domain)  # a msgid appended twice keeps its translation
    else:
        catalog = Catalog(locale="it", domain=domain, project="ludoteca")
    catalog.update(template, no_fuzzy_matching=True)
    return catalog


def _without_dates(text: bytes) -> bytes:
    return b"\n".join(line for line in text.splitlines() if not line.startswith(b'"POT-Creation-Date:'))


def write_if_changed(path: Path, catalog: Catalog, **options: Any) -> None:
    """Write ``catalog`` to ``path`` unless only its creation date would change (no noise in diffs)."""
    out = io.BytesIO()
    write_po(out, catalog, width=120, **options)
    new = out.getvalue()
    if path.exists() and _without_dates(path.read_bytes()) == _without_dates(new):
        return
    path.write_bytes(new)


def untranslated(catalog: Catalog) -> list[str]:
    out = []
    for m in catalog:
        if not m.id:
            continue
        strings = m.string if isinstance(m.string, list | tuple) else (m.string,)
        if not all(isinstance(s, str) and s.strip() for s in strings):
            out.append(str(m.id[0] if isinstance(m.id, list | tuple) else m.id))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report untranslated messages")
    args = parser.parse_args()
    jobs: list[tuple[str, Path, str, Callable[[], Catalog]]] = [
        (label, po, DOMAIN, make) for label, po, make in terminal_catalogs()]
    jobs += [(label, po, WEB_DOMAIN, make) for label, po, make in browser_catalogs()]
    missing_total = 0
    for label, po, domain, make in jobs:
        template = make()
        catalog = merged(po, domain, template)
        missing = untranslated(catalog)
        missing_total += len(missing)
        if args.check:
            for msgid in missing:
                print(f"{label}: untranslated: {msgid!r} ({po})")
            continue
        if po == catalog_path("it"):  # the shared terminal catalog's template
            LOCALE_DIR.mkdir(exist_ok=True)
            write_if_changed(LOCALE_DIR / f"{DOMAIN}.pot", template, omit_header=False, sort_output=False)
        po.parent.mkdir(parents=True, exist_ok=True)
        write_if_changed(po, catalog, ignore_obsolete=True)
        print(f"{label}: {len(template)} messages; {len(missing)} without an Italian translation in {po}")
    return 1 if args.check and missing_total else 0


if __name__ == "__main__":
    sys.exit(main())
