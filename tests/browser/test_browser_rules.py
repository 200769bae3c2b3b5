"""The rules pages in a real browser (Playwright driving Debian's Chromium, headless).

A new player opens the lobby, picks a game, follows its "Rules" link, reads the page, switches to
Italian (the choice sticks on the next visit), goes back to the lobby; an Italian browser gets the
Italian page first; the table page links to its game's rules; every diagram of every page, in both
languages, at 1280x800 and 390x844, is drawn as SVG by the game's own client and fits the width;
without JavaScript the terminal's drawings show instead. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ludoteca.registry import GAMES, game_class
from tests.browser.conftest import open_menu

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

PHONE = {"width": 390, "height": 844}


def new_page(browser: Any, **context: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(**context)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # anything the Content-Security-Policy blocks (an inline style or script) is an error too
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(20_000)
    return ctx, page, errors


def no_horizontal_scroll(page: Any) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1"))


def test_a_new_player_reads_the_rules_from_the_lobby_and_switches_to_italian(
        server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = new_page(browser, viewport=PHONE, locale="en-US", has_touch=True, is_mobile=True)
    try:
        page.goto(server + "/")
        link = page.locator("#rules-link")
        link.wait_for()
        assert link.get_attribute("href") == f"/rules/{GAMES[0]}"  # the game selected first
        name = GAMES[-1]
        page.select_option("#game", name)
        assert link.get_attribute("href") == f"/rules/{name}"  # follows the selection
        link.click()
        page.wait_for_url(re.compile(rf"/rules/{name}$"))
        assert page.locator("html").get_attribute("lang") == "en"
        heading = page.locator("#rules h1")
        heading.wait_for()
        assert heading.inner_text().strip()
        assert page.locator("#rules h2").count() >= 3  # the sections of the rulebook
        assert no_horizontal_scroll(page), "the rules page scrolls sideways on a phone"
        page.screenshot(path=str(artifacts / f"rules-{name}-en-390.png"))

        open_menu(page)  # (on a phone the language switch is in the header's menu)
        page.locator(".lang-switch a", has_text="Italiano").click()
        page.wait_for_url(re.compile(rf"/rules/{name}\?lang=it$"))
        assert page.locator("html").get_attribute("lang") == "it"
        assert page.locator(".lang-switch a.current").inner_text() == "Italiano"
        assert page.locator("#back").inner_text() == "← Torna alla lobby"
        italian = heading.inner_text().strip()
        assert italian and italian in (game_class(name).rules_text("it") or "").replace("*", "")
        assert no_horizontal_scroll(page)
        page.screenshot(path=str(artifacts / f"rules-{name}-it-390.png"))
        page.screenshot(path=str(artifacts / f"rules-{name}-it-390-full.png"), full_page=True)

        # the choice sticks: the lobby's link (no ?lang=) opens the Italian page again
        page.click("#back")
        page.wait_for_url(server + "/")
        page.locator("#rules-link").click()
        page.wait_for_url(re.compile(rf"/rules/{GAMES[0]}$"))
        assert page.locator("html").get_attribute("lang") == "it"
        assert not errors, errors
    finally:
        ctx.close()


def test_an_italian_browser_gets_the_italian_page_and_an_unknown_game_a_clear_page(
        server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = new_page(browser, viewport={"width": 1280, "height": 900}, locale="it-IT")
    try:
        page.goto(f"{server}/rules/{GAMES[1]}")
        assert page.locator("html").get_attribute("lang") == "it"
        page.screenshot(path=str(artifacts / f"rules-{GAMES[1]}-it-1280.png"))
        response = page.goto(f"{server}/rules/chess")
        assert response is not None and response.status == 404
        assert "Non esiste un gioco chiamato «chess»." in page.locator(".error").inner_text()
        assert page.locator(".rules-games a").count() == len(GAMES)
        assert not errors, errors
    finally:
        ctx.close()


def test_the_table_links_to_its_games_rules_in_a_new_tab(server: str, browser: Any) -> None:
    name = GAMES[1]
    body = json.dumps({"game": name, "players": 2, "seats": [{"kind": "open"}, {"kind": "open"}]}).encode()
    request = urllib.request.Request(server + "/api/tables", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as answer:
        table = json.loads(answer.read())
    ctx, page, errors = new_page(browser, viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        page.goto(server + table["url"])
        link = page.locator("#rules-link")
        link.wait_for()
        assert link.get_attribute("href") == f"/rules/{name}"
        assert link.get_attribute("target") == "_blank"
        with ctx.expect_page() as opened:
            link.click()
        rules = opened.value
        rules.wait_for_load_state()
        assert re.search(rf"/rules/{name}$", rules.url)
        assert rules.locator("#rules h1").inner_text().strip()
        assert page.url.endswith(table["url"])  # the table stays open
        assert not errors, errors
    finally:
        ctx.close()


SIZES = {"1280": {"width": 1280, "height": 800}, "390": PHONE}


@pytest.mark.parametrize("lang", ["en", "it"])
@pytest.mark.parametrize("name", GAMES)
def test_every_diagram_is_drawn_by_the_games_own_client(server: str, browser: Any, artifacts: Path, name: str,
                                                        lang: str) -> None:
    """Each figure of the page holds boards drawn as SVG by /games/<name>/client.js, at desktop and phone
    sizes, scaled to the width (no sideways scroll); the captions are in the page's language."""
    for size, viewport in SIZES.items():
        phone = size == "390"
        ctx, page, errors = new_page(browser, viewport=viewport, locale="it-IT" if lang == "it" else "en-US",
                                     has_touch=phone, is_mobile=phone)
        try:
            page.goto(f"{server}/rules/{name}?lang={lang}")
            page.locator("body.diagrams-drawn").wait_for()
            figures = page.locator("figure.rules-figure")
            assert figures.count() >= 2
            boards = page.locator("figure.rules-figure svg.rules-board")
            assert boards.count() >= figures.count()
            for k in range(boards.count()):
                board = boards.nth(k)
                assert board.get_attribute("data-drawn") == "true", k
                assert board.locator("polygon, rect, circle").count() >= 4, k  # a board was drawn, not an error
                box = board.bounding_box()
                assert box is not None and box["width"] <= viewport["width"] and box["height"] > 60
            for k in range(figures.count()):
                assert figures.nth(k).locator("figcaption").inner_text().strip()
            assert page.locator("noscript").count() == figures.count()  # the text fallback is kept
            assert no_horizontal_scroll(page), f"{name}/{lang} scrolls sideways at {size}"
            figures.first.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"rules-{name}-{lang}-{size}-figure.png"))
            page.screenshot(path=str(artifacts / f"rules-{name}-{lang}-{size}-full.png"), full_page=True)
            assert not errors, errors
        finally:
            ctx.close()


def test_without_javascript_the_page_shows_the_terminal_drawings(server: str, browser: Any, artifacts: Path) -> None:
    name = GAMES[0]
    ctx, page, _errors = new_page(browser, viewport=PHONE, java_script_enabled=False, locale="it-IT")
    try:
        page.goto(f"{server}/rules/{name}?lang=it")
        drawings = page.locator("pre.rules-drawing")
        assert drawings.count() == page.locator("figure.rules-figure").count() >= 2
        assert "A Anna" in drawings.first.inner_text()
        assert no_horizontal_scroll(page)
        page.screenshot(path=str(artifacts / f"rules-{name}-it-390-nojs.png"))
    finally:
        ctx.close()
