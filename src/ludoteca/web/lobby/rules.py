"""The rules pages: ``GET /rules/{game}?lang=en|it``, rendered on the server from Markdown.

Each game's rules are Markdown files of its own package (``games/<name>/rules/<lang>.md``, read
with :meth:`Game.rules_text <ludoteca.core.game.Game.rules_text>`), turned into HTML by
markdown-it-py with HTML in the source disabled (raw tags are shown as text, ``javascript:`` links
are refused). The language switch is two links.

**Diagrams.** A fenced block with the info string ``position`` holds a diagram as JSON (see
:func:`parse_diagram`): a real position, read with the game's ``state_from_json``, optionally the
actions that follow it (each one a further board: before/after pairs), highlights and a caption
in the page's language. The page shows it as a ``<figure>`` whose boards are ``<svg>`` elements
drawn in the browser by the game's own client (``/games/<name>/client.js`` ``render(ctx)``, as
the table draws it) from ``static/js/rules.js``, the only script of the page (a module: the CSP
allows it); inside ``<noscript>`` the same boards as the terminal draws them (the game's
``board.py``), so the page reads without JavaScript. ``ludoteca rules GAME`` draws the blocks with
the terminal renderer too (commands/rules.py uses :func:`parse_diagram` and
:func:`terminal_board`).

The language: ``?lang=`` when it names a language of :data:`LANGUAGES` (and then it sticks: a
cookie, :data:`COOKIE`, remembers it); else the cookie; else the browser's ``Accept-Language``
(its preferred language among ours); else English. An unknown ``lang`` gives English. Pictures a
page shows (``![...](battle.svg)``) are files beside the Markdown, served by
``GET /rules/{game}/{file}``.
"""

from __future__ import annotations

import functools
import html
import importlib.resources
import io
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt
from rich.console import Console, RenderableType
from rich.text import Text

from ludoteca.core import i18n as i18n_hook
from ludoteca.core.drawing import SEAT_MARKS
from ludoteca.core.game import State
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.lobby.option_words import with_options

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
        "player": "Player {n}",
        "before": "Before",
        "after": "After",
        "step": "Step {n}",
        "bad_diagram": "This drawing cannot be shown: {error}",
        "highlighted": "highlighted: {moves}",
        "more": "… ({count} in all)",
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
        "player": "Giocatore {n}",
        "before": "Prima",
        "after": "Dopo",
        "step": "Passo {n}",
        "bad_diagram": "Questo disegno non si può mostrare: {error}",
        "highlighted": "evidenziate: {moves}",
        "more": "… ({count} in tutto)",
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


def render_markdown(text: str, game: str, lang: str = "en") -> str:
    """HTML of a rules page's Markdown; relative pictures point at ``/rules/{game}/{file}``;
    diagram blocks become figures (:func:`render_figure`) with captions in ``lang``."""
    tokens = MARKDOWN.parse(text)
    figures = 0
    for token in tokens:
        if token.type == "fence" and token.info.strip() == FENCE:
            figures += 1
            token.type = "html_block"  # rendered as its content: the figure's HTML, made here
            token.content = render_figure(game, token.content, lang, figures)
            continue
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


def _page(lang: str, title: str, path: str, body: str, script: bool = False) -> str:
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
        f'<p class="rules-back"><a href="/">{html.escape(t["back"])}</a></p>\n</main>\n'
        + ('<script type="module" src="/static/js/rules.js"></script>\n' if script else "")
        + "</body>\n</html>\n"
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
    article = _article(name, lang, text)
    body = f'{note}<article class="rules" id="rules" data-game="{name}" data-lang="{lang}">\n{article}</article>'
    return 200, _page(lang, title, f"/rules/{name}", body, script='class="rules-figure"' in article)


@functools.lru_cache(maxsize=32)
def _article(name: str, lang: str, text: str) -> str:
    """The rendered page (kept: the texts are the package's files, the engines are deterministic); its
    option section lists the game's declared options in words (web/lobby/option_words.py)."""
    return render_markdown(with_options(text, game_class(name), lang), name, lang)


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


# --- diagrams: ```position blocks, drawn by the game's own renderers ----------------------------

FENCE = "position"
"""The info string of a diagram block in a rules page (```` ```position ````)."""
MAX_BOARDS = 8
"""Boards one diagram may show at most (its position and the steps after it)."""
MAX_BLOCK = 40_000
"""Characters of one diagram block at most."""
DIAGRAM_KEYS = frozenset({"caption", "position", "options", "names", "you", "highlight", "then", "labels", "ui"})


@dataclass(frozen=True)
class Board:
    """One board of a diagram: the position, the actions highlighted on it, the client's ``ui``
    state, the events of the step that led to it (its last move), and its label."""

    state: State
    highlight: list[dict[str, Any]]
    ui: dict[str, Any]
    events: list[dict[str, Any]]
    label: str


@dataclass(frozen=True)
class Diagram:
    """A diagram block of a rules page, read and checked with the game's own engine."""

    game: str
    caption: str
    names: list[str]
    you: int | None
    boards: list[Board]


def _seat_names(count: int, lang: str) -> list[str]:
    return [TEXTS[lang]["player"].format(n=i + 1) for i in range(count)]


def parse_diagram(name: str, source: str, lang: str = "en") -> Diagram:
    """Read a diagram block of game ``name``: JSON with ``position`` (a position the engine reads
    with ``state_from_json``) and ``caption``; optional ``options`` (of the game), ``names`` (of the
    seats), ``you`` (the seat whose view the board shows, where the game's drawing depends on it),
    ``highlight`` (``"legal"`` or a list of legal actions to highlight on the first board),
    ``then`` (actions applied in turn, each one a further board: an action, or a list of actions
    shown as one step), ``labels`` (one per board) and ``ui`` (the client's selection state: an
    object, or one per board). ValueError (saying what is wrong) for a block that does not read,
    a position the engine refuses or an action that is not legal."""
    if len(source) > MAX_BLOCK:
        raise ValueError(f"a diagram block holds at most {MAX_BLOCK} characters")
    try:
        data = json.loads(source)
    except ValueError as exc:
        raise ValueError(f"a diagram block is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("a diagram block is a JSON object")
    unknown = sorted(set(data) - DIAGRAM_KEYS)
    if unknown:
        raise ValueError(f"unknown keys in a diagram block: {', '.join(unknown)}")
    caption = data.get("caption")
    if not isinstance(caption, str) or not caption.strip():
        raise ValueError("a diagram block needs a caption")
    position = data.get("position")
    if not isinstance(position, dict):
        raise ValueError("a diagram block needs a position (a JSON object)")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ValueError("options is a JSON object")
    players = position.get("players")
    if not isinstance(players, int) or isinstance(players, bool):
        raise ValueError("the position needs its number of players")
    try:
        game = load_game(name, players=players, **options)
        state = game.state_from_json(position)
    except (KeyError, TypeError) as exc:  # a reader's slip on a malformed position: still the block's fault
        raise ValueError(f"the position does not read: {exc!r}") from None
    names = data.get("names", _seat_names(players, lang))
    if not (isinstance(names, list) and len(names) == players and all(isinstance(n, str) and n for n in names)):
        raise ValueError(f"names lists one name per player ({players})")
    you = data.get("you")
    if you is not None and (not isinstance(you, int) or isinstance(you, bool) or not 0 <= you < players):
        raise ValueError("you is a seat of the position")
    steps = data.get("then", [])
    if not isinstance(steps, list) or len(steps) >= MAX_BOARDS:
        raise ValueError(f"then lists at most {MAX_BOARDS - 1} steps")
    steps = [step if isinstance(step, list) else [step] for step in steps]
    count = len(steps) + 1
    labels = data.get("labels", [""] * count if count == 1 else
                      [TEXTS[lang]["before"]] + [TEXTS[lang]["after"]] * (count - 1) if count == 2 else
                      [TEXTS[lang]["before"]] + [TEXTS[lang]["step"].format(n=k) for k in range(1, count)])
    if not (isinstance(labels, list) and len(labels) == count and all(isinstance(x, str) for x in labels)):
        raise ValueError(f"labels lists one label per board ({count})")
    ui = data.get("ui", {})
    uis = ui if isinstance(ui, list) else [ui] * count
    if len(uis) != count or not all(isinstance(u, dict) for u in uis):
        raise ValueError(f"ui is an object, or a list of one object per board ({count})")
    highlight = data.get("highlight")
    boards: list[Board] = []
    events: list[dict[str, Any]] = []
    for k in range(count):
        shown: list[dict[str, Any]] = []
        if k == 0 and highlight == "legal":
            if not state.is_chance_node() and not state.is_terminal():
                shown = [state.action_to_json(a) for a in state.legal_actions()]
        elif k == 0 and highlight is not None:
            if not isinstance(highlight, list):
                raise ValueError('highlight is "legal" or a list of legal actions')
            shown = [_legal(state, a) for a in highlight]
        elif k < len(steps) and not state.is_chance_node():
            try:
                shown = [_legal(state, steps[k][0])]
            except ValueError as exc:
                raise ValueError(f"step {k + 1}: {exc}") from None
        boards.append(Board(state.clone(), shown, uis[k], events, labels[k]))
        if k < len(steps):
            events = []
            for action in steps[k]:
                if not isinstance(action, dict):
                    raise ValueError("an action of then is a JSON object")
                try:
                    found = state.apply_json(action)
                except ValueError as exc:
                    raise ValueError(f"step {k + 1}: {json.dumps(action)}: {exc}") from None
                events += [e for e in (ev.view(None, everything=True) for ev in found) if e is not None]
    return Diagram(name, caption, names, you, boards)


def _legal(state: State, action: Any) -> dict[str, Any]:
    """``action`` in its canonical form; ValueError when it is not legal in ``state``."""
    if not isinstance(action, dict):
        raise ValueError("an action is a JSON object")
    parsed = state.action_from_json(action)
    if not state.is_legal(parsed):
        raise ValueError(f"{json.dumps(action)} is not legal in the diagram's position")
    return state.action_to_json(parsed)


def diagram_blocks(text: str) -> list[tuple[int, str]]:
    """The diagram blocks of a rules page: (line of the opening fence, 0-based; the JSON)."""
    return [(token.map[0] if token.map else 0, token.content) for token in MARKDOWN.parse(text)
            if token.type == "fence" and token.info.strip() == FENCE]


def terminal_board(board: Board) -> RenderableType:
    """The board as ``ludoteca play`` draws it (the game's ``board.py``), in the language installed
    with :func:`ludoteca.core.i18n.install`; the engine's text when the game has no terminal board."""
    module = board.state.game.part("board")
    draw = getattr(module, "draw", None)
    if draw is None:
        return Text(board.state.render())
    drawn: RenderableType = draw(board.state, board.state.to_json())
    return drawn


SHOWN_MOVES = 12
"""Highlighted moves listed under a board drawn as text at most."""


def highlighted(board: Board, lang: str) -> str:
    """``highlighted: exp 0,1,E, ...``: the moves a board highlights, in the terminal's notation
    (``""`` when it highlights none)."""
    if not board.highlight:
        return ""
    state = board.state
    moves = [state.action_to_string(state.action_from_json(a)) for a in board.highlight]
    text = ", ".join(moves[:SHOWN_MOVES])
    if len(moves) > SHOWN_MOVES:
        text += " " + TEXTS[lang]["more"].format(count=len(moves))
    return TEXTS[lang]["highlighted"].format(moves=text)


def legend(diagram: Diagram) -> str:
    """``A Anna · B Bruno``: the seats' marks on the terminal board and their names."""
    return " · ".join(f"{SEAT_MARKS[i % len(SEAT_MARKS)]} {name}" for i, name in enumerate(diagram.names))


def drawing_text(diagram: Diagram, lang: str, width: int = 90) -> str:
    """The diagram's boards as the terminal draws them, as plain text in ``lang`` (the page's
    fallback without JavaScript)."""
    from ludoteca.i18n import translations

    table = translations(lang)
    console = Console(width=width, record=True, color_system=None, force_terminal=False, file=io.StringIO())
    with i18n_hook.using((lambda text: table.get(text, text)) if table else None):
        for board in diagram.boards:
            if board.label:
                console.print(board.label, markup=False, highlight=False)
            console.print(terminal_board(board))
            if board.highlight:
                console.print(highlighted(board, lang), markup=False, highlight=False)
            console.print()
    console.print(legend(diagram), markup=False, highlight=False)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()).strip("\n")


def board_data(diagram: Diagram, board: Board) -> dict[str, Any]:
    """What rules.js hands the game's browser client for one board (table.js's context())."""
    return {"pos": board.state.to_json(), "legal": board.highlight, "ui": board.ui, "events": board.events,
            "names": diagram.names, "you": diagram.you}


def render_figure(name: str, source: str, lang: str, number: int) -> str:
    """The ``<figure>`` of a diagram block: one ``<svg>`` per board, drawn in the browser by the
    game's own client (rules.js), the terminal's drawing inside ``<noscript>``, the caption."""
    try:
        diagram = parse_diagram(name, source, lang)
    except (ValueError, TypeError) as exc:
        message = TEXTS[lang]["bad_diagram"].format(error=str(exc)[:300])
        return f'<p class="error rules-bad-diagram">{html.escape(message)}</p>\n'
    caption = MARKDOWN.renderInline(diagram.caption)
    boxes = []
    for k, board in enumerate(diagram.boards):
        label = board.label or re.sub(r"<[^>]*>", "", caption)
        data = html.escape(json.dumps(board_data(diagram, board), separators=(",", ":")), quote=True)
        shown = f'<p class="rules-board-label">{html.escape(board.label)}</p>' if board.label else ""
        boxes.append(f'<div class="rules-board-box">{shown}<svg class="rules-board" role="img" '
                     f'aria-label="{html.escape(label, quote=True)}" data-board="{data}" data-step="{k}"></svg></div>')
    text = html.escape(drawing_text(diagram, lang))
    return (f'<figure class="rules-figure" id="figure-{number}" data-figure="{number}" '
            f'data-boards="{len(diagram.boards)}">\n<div class="rules-boards">{"".join(boxes)}</div>\n'
            f'<noscript><pre class="rules-drawing">{text}</pre></noscript>\n'
            f"<figcaption>{caption}</figcaption>\n</figure>\n")
