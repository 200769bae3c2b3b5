"""Languages of the terminal (issue 12): English and Italian, with Babel's gettext catalogs.

The messages are marked in the source with ``_()`` (translated when shown) and ``N_()`` (tables
of texts, translated when shown) from :mod:`ludoteca.core.i18n`; ``scripts/i18n`` extracts them
with Babel into ``locale/messages.pot`` and merges them into ``locale/it/LC_MESSAGES/messages.po``.
The ``.po`` file is read with Babel at the first use (no build step, no ``.mo`` file).

The language: ``--lang``, else the locale variables ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``,
``LANG`` (the first one set: Italian when it starts with "it"), else English.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ludoteca.core import i18n as hook

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

LANGUAGES = ("en", "it")
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"
SOURCES = ("play/*.py", "commands/play.py", "commands/replay.py", "commands/random.py", "games/*/board.py",
           "core/drawing.py", "i18n.py")
"""The files whose ``_()`` and ``N_()`` messages make the terminal's catalog (globs under the package)."""

_ = hook._


def terminal_language(environ: Mapping[str, str]) -> str:
    """``"it"`` when the first locale variable set (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``,
    ``LANG``) starts with "it", else ``"en"``."""
    for variable in LOCALE_VARIABLES:
        value = environ.get(variable, "").strip()
        if value:
            return "it" if value.lower().startswith("it") else "en"
    return "en"


def catalog_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


@cache
def translations(lang: str) -> dict[str, str]:
    """msgid -> msgstr of ``lang``'s catalog (translated, not fuzzy); empty for English."""
    path = catalog_path(lang)
    if lang == "en" or not path.exists():
        return {}
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f, locale=lang, domain=DOMAIN)
    return {str(m.id): str(m.string) for m in catalog
            if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string and not m.fuzzy}


def use_language(lang: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """Translate ``_()`` into ``lang`` from now on (None: from the locale variables); returns it."""
    chosen = lang or terminal_language(os.environ if environ is None else environ)
    if chosen not in LANGUAGES:
        chosen = "en"
    table = translations(chosen)
    hook.install((lambda text: table.get(text, text)) if table else None)
    return chosen


def add_lang_argument(parser: argparse.ArgumentParser, what: str = "messages") -> None:
    """``--lang it|en`` on an argparse parser."""
    parser.add_argument(
        "--lang", type=str.lower, choices=LANGUAGES, default=None,
        help=f"language of the {what} (default: from LANGUAGE, LC_ALL, LC_MESSAGES or LANG; "
             "Italian when it starts with 'it', else English)")


def source_files() -> list[Path]:
    """The files of :data:`SOURCES`, sorted."""
    package = Path(__file__).parent
    return sorted({p for pattern in SOURCES for p in package.glob(pattern)})


def extract() -> Catalog:
    """The catalog of every ``_()`` and ``N_()`` message in :data:`SOURCES` (Babel's Python extractor)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_python

    catalog = Catalog(project="ludoteca", domain=DOMAIN)
    package = Path(__file__).parent
    for path in source_files():
        with path.open("rb") as f:
            for lineno, _function, message, comments in extract_python(f, {"_": None, "N_": None}, [], {}):
                if isinstance(message, str) and message:
                    catalog.add(message, locations=[(path.relative_to(package).as_posix(), lineno)],
                                auto_comments=comments)
    return catalog
