#!/usr/bin/env python3
"""Extract the messages into the catalogs and merge them into the Italian ones.

    .venv/bin/python scripts/i18n.py          # update every catalog (terminal, browser, each game's)
    .venv/bin/python scripts/i18n.py --check  # exit 1 when a catalog lacks Italian or is out of date

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

``--check`` changes nothing: it lists every message without Italian, and every catalog (and the
terminal's ``messages.pot``) that is out of date with the sources — what running the script would
change in it, apart from its ``#:`` source lines and its creation date (a message gone, new, or moved
between source files, which moves its entry; a msgid written twice) — and exits 1 when it found any.
scripts/test runs it before the tests.
"""

from __future__ import annotations

import argparse
import difflib
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


def rendered(catalog: Catalog, **options: Any) -> bytes:
    """``catalog`` as this script writes it (Babel's ``write_po``, lines up to 120 characters)."""
    out = io.BytesIO()
    write_po(out, catalog, width=120, **options)
    return out.getvalue()


def _without_dates(text: bytes) -> bytes:
    return b"\n".join(line for line in text.splitlines() if not line.startswith(b'"POT-Creation-Date:'))


def write_if_changed(path: Path, new: bytes) -> None:
    """Write ``new`` to ``path`` unless only its creation date would change (no noise in diffs)."""
    if path.exists() and _without_dates(path.read_bytes()) == _without_dates(new):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(new)


IGNORED = ("#:", '"POT-Creation-Date:')
"""Lines a catalog may differ in and still be up to date: its messages' places in the source (a line
added above a message moves them) and its creation date."""
SHOWN = 12
"""Changed lines ``--check`` shows of an out-of-date catalog."""


def out_of_date(path: Path, new: bytes) -> list[str]:
    """What writing ``new`` would change in the catalog at ``path``, apart from the :data:`IGNORED` lines:
    the lines it would remove (``-``) and add (``+``), at most :data:`SHOWN` of them and then how many
    more; empty when the file is up to date."""
    if not path.exists():
        return ["(the file does not exist)"]

    def lines(text: bytes) -> list[str]:
        return [line for line in text.decode("utf-8", "replace").splitlines() if not line.startswith(IGNORED)]

    changed = [line for line in difflib.unified_diff(lines(path.read_bytes()), lines(new), lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    if len(changed) > SHOWN:
        return [*changed[:SHOWN], f"(and {len(changed) - SHOWN} more changed lines)"]
    return changed


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
    parser.add_argument("--check", action="store_true",
                        help="change nothing: report untranslated messages and out-of-date catalogs (exit 1)")
    args = parser.parse_args()
    jobs: list[tuple[str, Path, str, Callable[[], Catalog]]] = [
        (label, po, DOMAIN, make) for label, po, make in terminal_catalogs()]
    jobs += [(label, po, WEB_DOMAIN, make) for label, po, make in browser_catalogs()]
    problems = 0
    for label, po, domain, make in jobs:
        template = make()
        catalog = merged(po, domain, template)
        missing = untranslated(catalog)
        files = [(po, rendered(catalog, ignore_obsolete=True))]
        if po == catalog_path("it"):  # the shared terminal catalog's template
            files.insert(0, (LOCALE_DIR / f"{DOMAIN}.pot", rendered(template, omit_header=False, sort_output=False)))
        if args.check:
            problems += check(label, po, missing, files)
            continue
        for path, new in files:
            write_if_changed(path, new)
        print(f"{label}: {len(template)} messages; {len(missing)} without an Italian translation in {po}")
    return 1 if problems else 0


def check(label: str, po: Path, missing: list[str], files: list[tuple[Path, bytes]]) -> int:
    """Print the messages of catalog ``label`` without Italian and its ``files`` out of date (path, what
    this script would write there); how many problems it found."""
    for msgid in missing:
        print(f"{label}: untranslated: {msgid!r} ({po})")
    stale = 0
    for path, new in files:
        changes = out_of_date(path, new)
        if changes:
            stale += 1
            print(f"{label}: out of date with the sources, run scripts/i18n.py to update it ({path}):")
            print("\n".join(f"    {line}" for line in changes))
    return len(missing) + stale


if __name__ == "__main__":
    sys.exit(main())
