"""Languages of the terminal: English and Italian, with Babel's gettext catalogs.

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
import functools
import os
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludoteca.core import i18n as hook
from ludoteca.i18n_extract import DOMAIN as DOMAIN
from ludoteca.i18n_extract import ERROR_CALLS as ERROR_CALLS
from ludoteca.i18n_extract import HTML_ATTRIBUTES as HTML_ATTRIBUTES
from ludoteca.i18n_extract import JS_KEYWORDS as JS_KEYWORDS
from ludoteca.i18n_extract import (
    add_message,
    extract_pages,
    extract_python_messages,
    extract_scripts,
    extract_server,
)
from ludoteca.i18n_extract import page_texts as page_texts
from ludoteca.i18n_extract import server_messages as server_messages

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

LANGUAGES = ("en", "it")
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
LOCALE_DIR = Path(__file__).parent / "locale"
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
    return extract_python_messages(source_files())


def game_source_files(name: str) -> list[Path]:
    """The files of game ``name``'s folder that :data:`GAME_SOURCES` names, sorted."""
    folder = game_dir(name)
    return sorted({p for pattern in GAME_SOURCES for p in folder.glob(pattern)})


def extract_game_terminal(name: str) -> Catalog:
    """Game ``name``'s terminal catalog: every ``_()`` and ``N_()`` message of its folder's modules."""
    return extract_python_messages(game_source_files(name))


def terminal_catalogs() -> list[tuple[str, Path, Callable[[], Catalog]]]:
    """Every terminal catalog: (label, its Italian ``.po``, its extractor) — the shared one (label
    ``terminal``), then each game's (label ``<name>:terminal``)."""
    out: list[tuple[str, Path, Callable[[], Catalog]]] = [("terminal", catalog_path("it"), extract)]
    for name in game_names():
        out.append((f"{name}:{TERMINAL}", game_terminal_catalog_path(name, "it"),
                    functools.partial(extract_game_terminal, name)))
    return out


# --- the browser's catalogs: the shell's "web" domain and each game's own ------------------------
WEB_DOMAIN = "web"
"""The shell's browser catalog: ``locale/<lang>/LC_MESSAGES/web.po``."""
WEB_SCRIPTS = ("web/static/js/*.js",)
"""The browser scripts whose ``t("…")`` and ``tn("…", "…", n)`` messages make the shell's catalog."""
WEB_PAGES = ("web/static/*.html",)
"""The pages whose ``data-i18n`` texts and attributes make the shell's catalog."""
WEB_SERVER = ("web/*.py", "web/*/*.py")
"""The server's modules: the messages of ``WebError``/``error_body``/``conn.error`` and ``N_()``."""


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
            add_message(catalog, text, init, 0)
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
