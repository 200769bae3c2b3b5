"""The translation hook every layer may call (the catalogs and Babel live in :mod:`ludoteca.i18n`).

``_(text)`` translates a message now, into the language the front end chose (English until one
installs a translator); ``N_(text)`` only marks a message for the catalog (a table of texts made
at import time, translated later with ``_``). Both are found by Babel's extractor
(``scripts/i18n``), so every marked message must have an Italian translation
(tests/test_i18n.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar


def _identity(text: str) -> str:
    return text


_translator: Callable[[str], str] = _identity
_local: ContextVar[Callable[[str], str] | None] = ContextVar("ludoteca_translator", default=None)


def install(translator: Callable[[str], str] | None) -> None:
    """Make ``translator`` (msgid -> text) the one ``_`` uses in the whole process (a terminal
    front end's choice); None: English again."""
    global _translator
    _translator = translator or _identity


@contextmanager
def using(translator: Callable[[str], str] | None) -> Iterator[None]:
    """Translate with ``translator`` inside the block, in this thread or asyncio task only (a server
    answering requests in several languages at once); None: English inside the block."""
    token = _local.set(translator or _identity)
    try:
        yield
    finally:
        _local.reset(token)


def _(text: str) -> str:
    """``text`` in the current language (itself when the catalog lacks it); ``""`` stays ``""``."""
    if not text:
        return text
    local = _local.get()
    return (local or _translator)(text)


def N_(text: str) -> str:
    """Marks ``text`` for the catalog without translating it (translate it later with ``_``)."""
    return text
