"""Languages of the terminal (issue 12): English and Italian, with Babel's gettext catalogs.

The messages are marked in the source with ``_()`` (translated when shown) and ``N_()`` (tables
of texts, translated when shown) from :mod:`ludoteca.core.i18n`; ``scripts/i18n`` extracts them
with Babel into ``locale/messages.pot`` and merges them into ``locale/it/LC_MESSAGES/messages.po``;
a game's own messages (every ``_()``/``N_()`` in its folder: its ``board.py``, its engine's
explanations, its counters) into its own ``games/<game>/locale/terminal.it.po``, so a new game
touches no file outside its folder. The terminal finds a text in the games' catalogs first, then
in the shared one. The ``.po`` files are read with Babel at the first use (no build step, no ``.mo``).

The language: ``--lang``, else the locale variables ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``,
``LANG`` (the first one set: Italian when it starts with "it"), else English.
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludoteca.core import i18n as hook

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

LANGUAGES = ("en", "it")
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "messages"
SOURCES = ("play/*.py", "commands/play.py", "commands/replay.py", "commands/random.py",
           "core/drawing.py", "i18n.py", "lab/*.py", "commands/lab.py", "commands/arena.py", "commands/serve.py",
           "commands/common.py", "core/options.py", "core/registry.py", "agents/base.py",
           "agents/strong.py",
           "core/game.py", "cli.py", "commands/rules.py", "commands/backup.py", "commands/restore.py",
           "commands/admin.py", "commands/balance.py", "web/repository/backup.py", "web/admin_cli.py",
           "agents/perfect.py", "analysis/*.py", "commands/analyse.py")
"""The files whose ``_()`` and ``N_()`` messages make the terminal's shared catalog (globs under the
package); a game's own files make its catalog (:data:`GAME_SOURCES`)."""
GAME_SOURCES = ("*.py",)
"""The files of a game's folder whose ``_()`` and ``N_()`` messages make its terminal catalog
(:func:`game_terminal_catalog_path`): its board, its engine's explanations, its counters' names."""
GAMES_DIR = Path(__file__).parent / "games"
TERMINAL = "terminal"
"""A game's terminal catalog is ``games/<game>/locale/terminal.<lang>.po``."""

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


def game_terminal_catalog_path(name: str, lang: str) -> Path:
    """Game ``name``'s catalog of its terminal texts: ``games/<name>/locale/terminal.<lang>.po``."""
    return game_dir(name) / "locale" / f"{TERMINAL}.{lang}.po"


def terminal_catalog_paths(lang: str) -> list[Path]:
    """The terminal's catalogs in ``lang`` that exist: every game folder's own (the example games' only
    when the registry finds them), then the shared ``messages.po``. Found by their folders, no game
    imported (the command line reads them at start)."""
    from ludoteca.core.registry import examples_included

    examples = examples_included()
    folders = sorted(p for p in GAMES_DIR.iterdir()
                     if p.is_dir() and (p / "__init__.py").exists() and (examples or not p.name.startswith("_")))
    paths = [folder / "locale" / f"{TERMINAL}.{lang}.po" for folder in folders]
    return [path for path in (*paths, catalog_path(lang)) if path.exists()]


def terminal_messages(catalog: Catalog) -> dict[str, str]:
    """msgid -> msgstr of a terminal catalog's translated messages (not fuzzy, not plural)."""
    return {str(m.id): str(m.string) for m in catalog
            if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string and not m.fuzzy}


@cache
def translations(lang: str) -> dict[str, str]:
    """msgid -> msgstr of ``lang``'s terminal catalogs (translated, not fuzzy): a game's own catalog
    first, then the shared one; empty for English."""
    if lang not in LANGUAGES or lang == LANGUAGES[0]:
        return {}
    merged: dict[str, str] = {}
    for path in reversed(terminal_catalog_paths(lang)):  # the shared one first, each game's over it
        merged.update(terminal_messages(read_catalog(path, lang, DOMAIN)))
    return merged


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
    """The shared terminal catalog: every ``_()`` and ``N_()`` message in :data:`SOURCES` (Babel's
    Python extractor)."""
    return _extract_python(source_files())


def game_source_files(name: str) -> list[Path]:
    """The files of game ``name``'s folder that :data:`GAME_SOURCES` names, sorted."""
    folder = game_dir(name)
    return sorted({p for pattern in GAME_SOURCES for p in folder.glob(pattern)})


def extract_game_terminal(name: str) -> Catalog:
    """Game ``name``'s terminal catalog: every ``_()`` and ``N_()`` message of its folder's modules."""
    return _extract_python(game_source_files(name))


def _extract_python(paths: list[Path]) -> Catalog:
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_python

    catalog = Catalog(project="ludoteca", domain=DOMAIN)
    for path in paths:
        with path.open("rb") as f:
            for lineno, _function, message, comments in extract_python(f, {"_": None, "N_": None}, [], {}):
                if isinstance(message, str) and message:
                    catalog.add(message, locations=[(_location(path), lineno)], auto_comments=comments)
    return catalog


def terminal_catalogs() -> list[tuple[str, Path, Callable[[], Catalog]]]:
    """Every terminal catalog: (label, its Italian ``.po``, its extractor) — the shared one (label
    ``terminal``), then each game's (label ``<name>:terminal``)."""
    out: list[tuple[str, Path, Callable[[], Catalog]]] = [("terminal", catalog_path("it"), extract)]
    for name in game_names():
        out.append((f"{name}:{TERMINAL}", game_terminal_catalog_path(name, "it"),
                    functools.partial(extract_game_terminal, name)))
    return out


# --- the browser's catalogs (issue 12): the shell's "web" domain and each game's own ------------------------
WEB_DOMAIN = "web"
"""The shell's browser catalog: ``locale/<lang>/LC_MESSAGES/web.po``."""
WEB_SCRIPTS = ("web/static/js/*.js",)
"""The browser scripts whose ``t("…")`` and ``tn("…", "…", n)`` messages make the shell's catalog."""
WEB_PAGES = ("web/static/*.html",)
"""The pages whose ``data-i18n`` texts and attributes make the shell's catalog."""
WEB_SERVER = ("web/*.py", "web/*/*.py")
"""The server's modules: the messages of ``WebError``/``error_body``/``conn.error`` and ``N_()``."""
JS_KEYWORDS: dict[str, Any] = {"t": (1,), "tn": (1, 2)}
"""Babel's keywords for the browser scripts: ``t(msgid, params)``, ``tn(singular, plural, n, params)``."""
HTML_ATTRIBUTES = ("placeholder", "title", "aria-label")
"""Attributes a page marks for translation with ``data-i18n-<attribute>``."""
ERROR_CALLS = frozenset({"WebError", "error_body", "error"})
"""Calls whose second argument (after the error code) is a server message template."""


def web_catalog_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{WEB_DOMAIN}.po"


def game_names() -> tuple[str, ...]:
    """The installed games (the registry discovers them)."""
    from ludoteca.registry import GAMES

    return GAMES


def game_dir(name: str) -> Path:
    """The package directory of game ``name`` (where its client.js and ``locale/`` live)."""
    import importlib

    from ludoteca.registry import game_class

    module = importlib.import_module(game_class(name).__module__)
    return Path(str(module.__file__)).parent


def game_catalog_path(name: str, lang: str) -> Path:
    """Game ``name``'s own catalog of its browser client's texts: ``games/<name>/locale/<lang>.po``."""
    return game_dir(name) / "locale" / f"{lang}.po"


def game_options_catalog_path(name: str, lang: str) -> Path:
    """Game ``name``'s catalog of its options' labels and help texts (the lobby shows them):
    ``games/<name>/locale/options.<lang>.po``."""
    return game_dir(name) / "locale" / f"options.{lang}.po"


def _translated(string: Any) -> bool:
    strings = string if isinstance(string, list | tuple) else (string,)
    return bool(strings) and all(isinstance(s, str) and s.strip() for s in strings)


def read_catalog(path: Path, lang: str, domain: str = WEB_DOMAIN) -> Catalog:
    """A ``.po`` file read with Babel, where a msgid written twice (several people append to the
    same catalog) keeps a translation: a later entry's text fills an earlier empty one (Babel alone
    keeps the first)."""
    from babel.messages.catalog import Catalog
    from babel.messages.catalog import Message as BabelMessage
    from babel.messages.pofile import PoFileParser

    class Merging(Catalog):
        def __setitem__(self, id: Any, message: BabelMessage) -> None:
            current = self.get(id, message.context) if id else None
            if current is not None and _translated(message.string) and not _translated(current.string) \
                    and isinstance(current.id, list | tuple) == isinstance(message.id, list | tuple):
                current.string = message.string
            super().__setitem__(id, message)

    catalog = Merging(locale=lang, domain=domain)
    with path.open("rb") as f:
        PoFileParser(catalog, False).parse(f)
    return catalog


def _read(path: Path, lang: str, domain: str) -> Catalog | None:
    return read_catalog(path, lang, domain) if path.exists() else None


def catalog_messages(catalog: Catalog) -> dict[str, str]:
    """msgid -> msgstr of a catalog's translated messages (fuzzy and empty ones left out); a plural
    message gives its singular and its plural each their own translation (as i18n.js's ``tn`` looks
    them up)."""
    out: dict[str, str] = {}
    for m in catalog:
        if not m.id or m.fuzzy:
            continue
        ids = m.id if isinstance(m.id, list | tuple) else (m.id,)
        strings = m.string if isinstance(m.string, list | tuple) else (m.string,)
        for msgid, text in zip(ids, (*strings, *[strings[-1]] * len(ids)), strict=False):
            if isinstance(msgid, str) and msgid and isinstance(text, str) and text:
                out[msgid] = text
    return out


def browser_catalog_paths(lang: str) -> list[Path]:
    """The catalogs of the browser in ``lang``: every game's own (its client's, its options'), then the
    shell's ``web.po``."""
    paths = [path for name in game_names()
             for path in (game_catalog_path(name, lang), game_options_catalog_path(name, lang))]
    return [*paths, web_catalog_path(lang)]


@cache
def web_translations(lang: str) -> dict[str, str]:
    """The browser's messages in ``lang`` (msgid -> text), merged from every game's catalog and the
    shell's ``web.po`` (which wins when both translate a msgid); empty for English. Read once."""
    if lang not in LANGUAGES or lang == LANGUAGES[0]:
        return {}
    merged: dict[str, str] = {}
    for path in browser_catalog_paths(lang):
        catalog = _read(path, lang, WEB_DOMAIN)
        if catalog is not None:
            merged.update(catalog_messages(catalog))
    return merged


DEFAULT_PLURAL = "(n != 1)"
"""English's plural rule as a gettext expression (form 0: one, form 1: other)."""


@cache
def web_plurals(lang: str) -> tuple[str, dict[str, list[str]]]:
    """``lang``'s plural rule (the gettext ``plural=`` expression of its catalogs' ``Plural-Forms``,
    which Babel writes from the CLDR rules) and its plural messages: the singular msgid -> the
    translated forms, in the rule's order (``tn`` of i18n.js picks one by the count). English: its
    rule and no messages (the source's singular and plural are the forms)."""
    if lang not in LANGUAGES or lang == LANGUAGES[0]:
        return DEFAULT_PLURAL, {}
    rule = ""
    forms: dict[str, list[str]] = {}
    for path in browser_catalog_paths(lang):
        catalog = _read(path, lang, WEB_DOMAIN)
        if catalog is None:
            continue
        rule = rule or str(catalog.plural_expr)
        for m in catalog:
            if not m.fuzzy and isinstance(m.id, list | tuple) and m.id and isinstance(m.string, list | tuple) \
                    and _translated(m.string):
                forms[str(m.id[0])] = [str(s) for s in m.string]
    if not rule:
        from babel.messages.catalog import Catalog

        rule = str(Catalog(locale=lang).plural_expr)
    return rule, forms


class Message:
    """A message of the catalogs with its fields' values, translated when it is shown: a value of
    another message's field (``"the request body: {reason}"``, the reason a message of its own)."""

    def __init__(self, template: str, params: Mapping[str, Any] | None = None) -> None:
        self.template = template
        self.params = dict(params or {})

    def text(self, lang: str | None) -> str:
        return web_text(lang, self.template, **self.params)

    def __str__(self) -> str:
        return self.text(None)

    def __repr__(self) -> str:
        return f"Message({self.template!r}, {self.params!r})"


def web_text(lang: str | None, template: str, /, **params: Any) -> str:
    """``template`` (a message of the browser catalogs, with ``{name}`` fields) in ``lang``, filled
    with ``params`` (a :class:`Message` value translated too); English (the template itself) when
    ``lang`` is None or the catalog lacks it."""
    text = web_translations(lang).get(template, template) if lang else template
    if not params:
        return text
    params = {k: v.text(lang) if isinstance(v, Message) else v for k, v in params.items()}
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        return template.format(**params)


def _package_files(patterns: tuple[str, ...]) -> list[Path]:
    package = Path(__file__).parent
    return sorted({p for pattern in patterns for p in package.glob(pattern)})


def _location(path: Path) -> str:
    package = Path(__file__).parent
    try:
        return path.relative_to(package).as_posix()
    except ValueError:
        return path.name


def _add(catalog: Catalog, message: str | tuple[str, ...], path: Path, lineno: int) -> None:
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
                _add(catalog, tuple(message) if isinstance(message, list | tuple) else message, path, lineno)
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
            _add(catalog, message, path, text.count("\n", 0, match.start()) + 1)
    for match in _JS_PLURAL_CALL.finditer(text):
        singular, plural = _js_literal(match.group(1)), _js_literal(match.group(2))
        if singular is not None and plural is not None and singular not in catalog:
            _add(catalog, (singular, plural), path, text.count("\n", 0, match.start()) + 1)


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
            _add(catalog, text, path, line)


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
            _add(catalog, text, path, line)


def extract_web() -> Catalog:
    """The shell's browser catalog: the scripts' ``t``/``tn``, the pages' ``data-i18n`` and the
    server's messages (errors, the AI levels' hints)."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(project="ludoteca", domain=WEB_DOMAIN)
    extract_scripts(catalog, _package_files(WEB_SCRIPTS))
    extract_pages(catalog, _package_files(WEB_PAGES))
    extract_server(catalog, _package_files(WEB_SERVER))
    return catalog


def extract_game(name: str) -> Catalog:
    """Game ``name``'s own browser catalog: its client.js's ``t``/``tn``."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(project="ludoteca", domain=WEB_DOMAIN)
    client = game_dir(name) / "client.js"
    if client.exists():
        extract_scripts(catalog, [client])
    return catalog


def extract_game_options(name: str) -> Catalog:
    """Game ``name``'s options as the lobby and the rules pages show them: each one's label, help
    and value names (:meth:`Option.texts <ludoteca.core.options.Option.texts>`)."""
    from babel.messages.catalog import Catalog

    from ludoteca.registry import game_class

    catalog = Catalog(project="ludoteca", domain=WEB_DOMAIN)
    init = game_dir(name) / "__init__.py"
    for option in game_class(name).OPTIONS:
        for text in option.texts():
            _add(catalog, text, init, 0)
    return catalog


def browser_catalogs() -> list[tuple[str, Path, Callable[[], Catalog]]]:
    """Every browser catalog: (label, its Italian ``.po``, its extractor) — the shell's, then each game's
    client's (label: the game's name) and options' (label: ``<name>:options``)."""
    out: list[tuple[str, Path, Callable[[], Catalog]]] = [(WEB_DOMAIN, web_catalog_path("it"), extract_web)]
    for name in game_names():
        out.append((name, game_catalog_path(name, "it"), functools.partial(extract_game, name)))
        out.append((f"{name}:options", game_options_catalog_path(name, "it"),
                    functools.partial(extract_game_options, name)))
    return out
