"""The texts marked for translation in ludoteca's sources, found for the catalogs of :mod:`ludoteca.i18n`:
``_()``/``N_()`` in Python modules (Babel's Python extractor), ``t()``/``tn()`` in browser scripts
(Babel's JavaScript extractor and the calls it misses), ``data-i18n`` texts of pages, and the server's
error messages (``WebError``, ``error_body``, ``conn.error``, ``BadInput``)."""

from __future__ import annotations

import ast
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

DOMAIN = "messages"
"""The terminal catalogs' gettext domain."""
JS_KEYWORDS: dict[str, Any] = {"t": (1,), "tn": (1, 2)}
"""Babel's keywords for the browser scripts: ``t(msgid, params)``, ``tn(singular, plural, n, params)``."""
HTML_ATTRIBUTES = ("placeholder", "title", "aria-label")
"""Attributes a page marks for translation with ``data-i18n-<attribute>``."""
ERROR_CALLS = frozenset({"WebError", "error_body", "error"})
"""Calls whose second argument (after the error code) is a server message template."""


def _location(path: Path) -> str:
    package = Path(__file__).parent
    try:
        return path.relative_to(package).as_posix()
    except ValueError:
        return path.name


def add_message(catalog: Catalog, message: str | tuple[str, ...], path: Path, lineno: int) -> None:
    ids = message if isinstance(message, tuple) else (message,)
    if not all(isinstance(m, str) and m for m in ids):
        return
    catalog.add(message if len(ids) > 1 else ids[0], locations=[(_location(path), lineno)])


def extract_scripts(catalog: Catalog, paths: list[Path]) -> None:
    """Add the ``t``/``tn`` messages of browser scripts (Babel's JavaScript extractor)."""
    from babel.messages.extract import extract

    for path in paths:
        with path.open("rb") as f:
            for lineno, message, _comments, _context in extract(
                    "javascript", f, keywords=JS_KEYWORDS, options={"parse_template_string": False}):
                add_message(catalog, tuple(message) if isinstance(message, list | tuple) else message, path, lineno)
        _add_nested_calls(catalog, path)


_JS_STRING = r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
_JS_CALL = re.compile(r"(?<![\w.$])t\(\s*" + _JS_STRING)
"""A ``t("…")`` call with a literal first argument (Babel's extractor misses those nested in the
arguments of another ``t`` call, e.g. ``t("{a} · {b}", {b: t("1 die")})``)."""
_JS_PLURAL_CALL = re.compile(r"(?<![\w.$])tn\(\s*" + _JS_STRING + r"\s*,\s*" + _JS_STRING)
"""A ``tn("…", "…", n)`` call with literal singular and plural (nested ones too)."""


def _js_literal(literal: str) -> str | None:
    body = literal[1:-1]
    if literal[0] == "'":
        body = body.replace('\\\'', "'").replace('"', '\\"')
    try:
        message = json.loads(f'"{body}"')
    except ValueError:
        return None
    return message if isinstance(message, str) and message else None


def _add_nested_calls(catalog: Catalog, path: Path) -> None:
    """Add the ``t("…")`` and ``tn("…", "…")`` literals of a script that Babel's extractor did not report."""
    text = path.read_text(encoding="utf-8")
    for match in _JS_CALL.finditer(text):
        message = _js_literal(match.group(1))
        if message is not None and message not in catalog:
            add_message(catalog, message, path, text.count("\n", 0, match.start()) + 1)
    for match in _JS_PLURAL_CALL.finditer(text):
        singular, plural = _js_literal(match.group(1)), _js_literal(match.group(2))
        if singular is not None and plural is not None and singular not in catalog:
            add_message(catalog, (singular, plural), path, text.count("\n", 0, match.start()) + 1)


class _PageTexts(HTMLParser):
    """The ``data-i18n`` texts of a page (an element's text, or the attribute's own value) and the
    attributes marked with ``data-i18n-placeholder``, ``-title``, ``-aria-label``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, int]] = []
        self._open: list[tuple[str, str | None, list[str], int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        line = self.getpos()[0]
        for attribute in HTML_ATTRIBUTES:
            if f"data-i18n-{attribute}" in values:
                text = values.get(f"data-i18n-{attribute}") or values.get(attribute) or ""
                if text.strip():
                    self.found.append((" ".join(text.split()), line))
        if "data-i18n" in values:
            self._open.append((tag, values.get("data-i18n"), [], line))

    def handle_data(self, data: str) -> None:
        for _tag, _given, parts, _line in self._open:
            parts.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _tag, given, parts, line = self._open.pop()
            text = " ".join((given or "".join(parts)).split())
            if text:
                self.found.append((text, line))


def page_texts(source: str) -> list[tuple[str, int]]:
    """(text, line) of every text a page marks for translation (``data-i18n`` attributes)."""
    parser = _PageTexts()
    parser.feed(source)
    parser.close()
    return parser.found


def extract_pages(catalog: Catalog, paths: list[Path]) -> None:
    for path in paths:
        for text, line in page_texts(path.read_text(encoding="utf-8")):
            add_message(catalog, text, path, line)


def server_messages(source: str) -> list[tuple[str | tuple[str, str], int]]:
    """(template, line) of the server's messages in a module: the second argument of ``WebError(code,
    "…")``, ``error_body(code, "…")``, ``conn.error(code, "…")`` and ``BadInput("code", "…")`` when it
    is a string literal (or a conditional expression of literals), and every ``N_("…")`` (a plural:
    ``N_("singular", "plural")``, its template a pair)."""
    out: list[tuple[str | tuple[str, str], int]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        first = node.args[0] if node.args else None
        coded = (isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == "Code") \
            or (isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "Code")
        if name == "N_" and len(node.args) == 2 and all(_literals(a) for a in node.args):
            out.append(((_literals(node.args[0])[0][0], _literals(node.args[1])[0][0]), node.lineno))  # a plural
            continue
        if name == "N_":
            index = 0
        elif name == "BadInput" or (name in ERROR_CALLS and coded):
            index = 1
        else:
            continue
        if len(node.args) > index:
            out.extend(_literals(node.args[index]))
    return out


def _literals(node: ast.expr) -> list[tuple[str, int]]:
    """The string literals an argument may be: itself, or each branch of a conditional expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
        return [(node.value, node.lineno)]
    if isinstance(node, ast.IfExp):
        return _literals(node.body) + _literals(node.orelse)
    return []


def extract_server(catalog: Catalog, paths: list[Path]) -> None:
    for path in paths:
        for text, line in server_messages(path.read_text(encoding="utf-8")):
            add_message(catalog, text, path, line)


def extract_python_messages(paths: list[Path]) -> Catalog:
    """A terminal catalog of every ``_()`` and ``N_()`` message of ``paths``."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_python

    catalog = Catalog(project="ludoteca", domain=DOMAIN)
    for path in paths:
        with path.open("rb") as f:
            for lineno, _function, message, comments in extract_python(f, {"_": None, "N_": None}, [], {}):
                if isinstance(message, str) and message:
                    catalog.add(message, locations=[(_location(path), lineno)], auto_comments=comments)
    return catalog
