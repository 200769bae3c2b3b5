"""The screenshot matrix of each game's table mid-game, in English and Italian, on two
phones (390x844 and 360x740, touch) and a desktop (1280x800), in real Chromium.

One table per game is played from the lobby to mid-game (a few moves by clicking, against random
AIs); the same seat is then opened in a fresh browser of each language and size, which follows the
browser's preferred language (no cookie). Each view is saved as
``test-artifacts/table-<game>-<lang>-<width>x<height>.png`` and checked: the page is in that
language (``<html lang>``; in Italian no English word of ``ENGLISH_WORDS`` shows), it never scrolls
sideways, and on the phones the text is at least 14 px and every tap target (the buttons and fields)
at least 44 px both ways, the board's clickable parts (the board fits the screen's width: small_targets.py)
at least 24 px.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import (
    DESKTOP_SIZE,
    GAME_SEATS,
    PHONE_SIZES,
    english_on_page,
    language_context,
    layout_problems,
    table_mid_game,
    watch_errors,
)
from tests.browser.small_targets import MIN_TARGET
from tests.browser.test_browser_play import wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

SIZES = [*PHONE_SIZES, DESKTOP_SIZE]
NAMES = ("exactly", "TRI", "TOHM", "EXAGON", "ludoteca", "Anna", "English", "Italiano")
"""Names (of the games, the product, the player, the languages), not English text."""
BOARD_TARGETS_JS = """() => [...document.querySelectorAll('#board .clickable')].filter((e) => e.getClientRects().length)
  .map((e) => { const r = e.getBoundingClientRect();
                return [e.getAttribute('aria-label') || e.getAttribute('class'), Math.round(r.width),
                        Math.round(r.height)]; })"""


@pytest.mark.parametrize("game", list(GAME_SEATS))
def test_each_game_mid_game_in_both_languages_on_phones_and_desktop(server: str, browser: Any, artifacts: Path,
                                                                    game: str) -> None:
    url, storage = table_mid_game(browser, server, game)
    problems: list[str] = []
    for lang in ("en", "it"):
        for width, height in SIZES:
            phone = width < 500
            ctx = language_context(browser, lang, width, height, storage_state=storage)
            page = ctx.new_page()
            errors = watch_errors(page)
            page.goto(url)
            wait_state(page, "s.mine && s.status === 'playing'")
            page.wait_for_timeout(300)  # let the board settle (fonts, the announcement's transition)
            shot = artifacts / f"table-{game}-{lang}-{width}x{height}.png"
            page.screenshot(path=str(shot), full_page=True)
            where = f"{game}, {lang}, {width}x{height}"
            html_lang = page.evaluate("document.documentElement.lang")
            if html_lang != lang:
                problems.append(f"{where}: <html lang={html_lang!r}>, expected {lang!r}")
            if lang == "it":
                english = english_on_page(page, NAMES)
                if english:
                    problems.append(f"{where}: English shown to an Italian reader: {english[:6]}")
            problems += [f"{where}: {p}" for p in layout_problems(page, phone)]
            if phone:
                targets = page.evaluate(BOARD_TARGETS_JS)
                if not targets:
                    problems.append(f"{where}: nothing to tap on the board while it is the player's turn")
                # the board fits the screen: its parts are listed in small_targets.py, at least 24 px (and zoomable)
                narrow = [t for t in targets if t[1] < MIN_TARGET or t[2] < MIN_TARGET]
                if narrow:
                    problems.append(f"{where}: board targets under {MIN_TARGET} px: {narrow[:6]}")
            if errors:
                problems.append(f"{where}: page errors {errors}")
            ctx.close()
    assert not problems, "\n".join(problems)
