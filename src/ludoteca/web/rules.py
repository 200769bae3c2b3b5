"""The rules pages: ``GET /rules/{game}?lang=en|it``, rendered on the server from Markdown.

Each game's rules are Markdown files of its own package (``games/<name>/rules/<lang>.md``, read
with :meth:`Game.rules_text <ludoteca.core.game.Game.rules_text>`), turned into HTML by
markdown-it-py with HTML in the source disabled (raw tags are shown as text, ``javascript:`` links
are refused). The page needs no script: the language switch is two links.

The language: ``?lang=`` when it names a language of :data:`LANGUAGES` (and then it sticks: a
cookie, :data:`COOKIE`, remembers it); else the cookie; else the browser's ``Accept-Language``
(its preferred language among ours); else English. An unknown ``lang`` gives English. Pictures a
page shows (``![...](battle.svg)``) are files beside the Markdown, served by
``GET /rules/{game}/{file}``.
"""

from __future__ import annotations

import html
import importlib.resources
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt

from ludoteca.registry import GAMES, game_class

LANGUAGES = ("en", "it")
"""The languages of the rules pages; the first is the default."""
LANGUAGE_NAMES = {"en": "English", "it": "Italiano"}
COOKIE = "ludoteca_lang"
"""The cookie that keeps the language chosen with the switch (a year)."""
COOKIE_AGE = 365 * 24 * 3600
ASSET = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,80}\.(svg|png)")
"""Names of the pictures a rules page may show (files beside its Markdown)."""
ASSET_TYPES = {"svg": "image/svg+xml", "png": "image/png"}

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Rules of {title}",
        "back": "← Back to the lobby",
        "language": "Language",
        "fallback": "",
        "missing_title": "No such game",
        "missing": "There is no game called “{name}”.",
        "unwritten": "The rules of {title} are not written yet.",
        "games": "The games:",
        "index_title": "Rules of the games",
    },
    "it": {
        "title": "Regole di {title}",
        "back": "← Torna alla lobby",
        "language": "Lingua",
        "fallback": "Questa pagina non è ancora tradotta in italiano: ecco il testo inglese.",
        "missing_title": "Gioco inesistente",
        "missing": "Non esiste un gioco chiamato «{name}».",
        "unwritten": "Le regole di {title} non sono ancora scritte.",
        "games": "I giochi:",
        "index_title": "Regole dei giochi",
    },
}


def accepted_language(header: str | None) -> str | None:
    """The browser's preferred language among :data:`LANGUAGES` (``Accept-Language``, with its
    q-values: ``"fr, it;q=0.8"`` gives ``"it"``), or None when it names none of them."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(header[:1000].split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        match = re.search(r"q\s*=\s*([0-9.]+)", params)
        if match:
            try:
                quality = float(match.group(1))
            except ValueError:
                quality = 0.0
        code = tag.strip().lower().split("-")[0]
        if code in LANGUAGES and quality > 0:
            ranked.append((-quality, index, code))
    return min(ranked)[2] if ranked else None


@dataclass(frozen=True)
class Choice:
    """The language of a page, and whether the request chose it (then the cookie keeps it)."""

    lang: str
    chosen: bool


def choose_language(query: str | None, cookie: str | None, accept: str | None) -> Choice:
    """``?lang=`` first, then the cookie, then ``Accept-Language``, then English."""
    if query is not None:
        code = query.strip().lower()
        return Choice(code, True) if code in LANGUAGES else Choice(LANGUAGES[0], False)
    if cookie in LANGUAGES:
        return Choice(cookie, False)
    return Choice(accepted_language(accept) or LANGUAGES[0], False)


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "typographer": False}).enable(["table", "strikethrough"])


MARKDOWN = _markdown()


def render_markdown(text: str, game: str) -> str:
    """HTML of a rules page's Markdown; relative pictures point at ``/rules/{game}/{file}``."""
    tokens = MARKDOWN.parse(text)
    for token in tokens:
        if token.type == "table_open":
            token.attrSet("class", "rules-table")
        style = str(token.attrGet("style") or "")
        if token.type in ("th_open", "td_open") and style.startswith("text-align:"):
            # a column's alignment as a class: the CSP refuses style attributes
            token.attrs.pop("style", None)
            token.attrSet("class", f"align-{style.split(':', 1)[1].strip()}")
        for child in token.children or ():
            if child.type == "image":
                src = str(child.attrGet("src") or "")
                if ASSET.fullmatch(src):
                    child.attrSet("src", f"/rules/{game}/{src}")
    return MARKDOWN.renderer.render(tokens, MARKDOWN.options, {})


def _switch(path: str, lang: str) -> str:
    links = []
    for code in LANGUAGES:
        name = html.escape(LANGUAGE_NAMES[code])
        if code == lang:
            links.append(f'<a href="{path}?lang={code}" lang="{code}" aria-current="true" class="current">{name}</a>')
        else:
            links.append(f'<a href="{path}?lang={code}" lang="{code}" hreflang="{code}">{name}</a>')
    label = html.escape(TEXTS[lang]["language"])
    return f'<nav class="lang-switch" aria-label="{label}">{" · ".join(links)}</nav>'


def _page(lang: str, title: str, path: str, body: str) -> str:
    t = TEXTS[lang]
    return (
        "<!doctype html>\n"
        f'<html lang="{lang}">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ludoteca — {html.escape(title)}</title>\n"
        '<link rel="icon" href="/favicon.ico">\n<link rel="stylesheet" href="/static/style.css">\n</head>\n<body>\n'
        '<header class="top"><a href="/" class="title">ludoteca</a>'
        f'<span class="rules-heading">{html.escape(title)}</span>{_switch(path, lang)}</header>\n'
        f'<main class="rules-page">\n<p class="rules-back"><a href="/" id="back">{html.escape(t["back"])}</a></p>\n'
        f"{body}\n"
        f'<p class="rules-back"><a href="/">{html.escape(t["back"])}</a></p>\n</main>\n</body>\n</html>\n'
    )


def _game_list(lang: str) -> str:
    items = "".join(f'<li><a href="/rules/{name}">{html.escape(game_class(name).title)}</a></li>' for name in GAMES)
    return f'<p>{html.escape(TEXTS[lang]["games"])}</p>\n<ul class="rules-games">{items}</ul>'


def rules_page(name: str, lang: str) -> tuple[int, str]:
    """(HTTP status, HTML) of the rules page of game ``name`` in ``lang`` (404: no such game, or
    no rules written for it)."""
    t = TEXTS[lang]
    if name not in GAMES:
        shown = name if len(name) <= 40 else name[:37] + "..."
        body = (f'<article class="rules missing"><h1>{html.escape(t["missing_title"])}</h1>\n'
                f'<p class="error">{html.escape(t["missing"].format(name=shown))}</p>\n{_game_list(lang)}</article>')
        return 404, _page(lang, t["missing_title"], f"/rules/{html.escape(quote(name, safe=''))}", body)
    cls = game_class(name)
    title = t["title"].format(title=cls.title)
    text = cls.rules_text(lang)
    if text is None:
        body = (f'<article class="rules missing"><h1>{html.escape(title)}</h1>\n'
                f'<p class="error">{html.escape(t["unwritten"].format(title=cls.title))}</p>\n'
                f"{_game_list(lang)}</article>")
        return 404, _page(lang, title, f"/rules/{name}", body)
    note = ""
    if lang != LANGUAGES[0] and text == cls.rules_text(LANGUAGES[0]) and t["fallback"]:
        note = f'<p class="rules-note">{html.escape(t["fallback"])}</p>\n'
    body = f'{note}<article class="rules" id="rules" data-game="{name}">\n{render_markdown(text, name)}</article>'
    return 200, _page(lang, title, f"/rules/{name}", body)


def index_page(lang: str) -> str:
    """The list of the rules pages (``GET /rules``)."""
    t = TEXTS[lang]
    body = f'<article class="rules"><h1>{html.escape(t["index_title"])}</h1>\n{_game_list(lang)}</article>'
    return _page(lang, t["index_title"], "/rules", body)


def asset(name: str, file: str) -> tuple[bytes, str] | None:
    """A picture of a game's rules page (bytes, media type), or None."""
    match = ASSET.fullmatch(file)
    if name not in GAMES or not match or ".." in file:
        return None
    source: Any = importlib.resources.files(game_class(name).__module__).joinpath("rules").joinpath(file)
    if not source.is_file():
        return None
    return source.read_bytes(), ASSET_TYPES[match.group(1)]
