"""The AI ladder in the lobby: each level offered by name and measured rating.

The seat picker shows "AI: medium ≈ 1,200 — ..." for the games and player counts the ladder was
measured for (two players), in the page's language and number format, and the bare name for the
others; a table made with a ladder level starts with that AI in the seat.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ludoteca.agents.ladder import ladder
from ludoteca.registry import GAMES
from tests.browser.conftest import language_context

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def seat_labels(page: Any) -> list[str]:
    page.wait_for_selector("#seat-1 option[value='ai:expert']", state="attached")
    return page.locator("#seat-1 option").all_inner_texts()


def test_the_lobby_offers_each_level_with_its_measured_rating(server: str, browser: Any, artifacts: Path) -> None:
    game = GAMES[0]
    shown = {level: rating.display for level, rating, _low, _high in ladder(game)}
    ctx = language_context(browser, "en", 1280, 900)
    try:
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server + "/")
        page.select_option("#game", game)
        page.select_option("#players", "2")
        labels = seat_labels(page)
        for level in ("beginner", "easy", "medium", "hard", "expert"):
            expected = f"AI: {level} ≈ {shown[level]:,} — "
            assert any(label.startswith(expected) for label in labels), (expected, labels)
        assert "AI: random — plays any legal move" in labels  # not on the ladder: no rating
        page.select_option("#seat-1", "ai:medium")
        page.screenshot(path=str(artifacts / "levels-lobby-en.png"))
        # with three players the ladder has no measurement: the names alone
        page.select_option("#players", "3")
        labels = seat_labels(page)
        assert not any("≈" in label for label in labels)
        assert any(label.startswith("AI: expert — strongest") for label in labels)
        assert errors == []
    finally:
        ctx.close()


def test_an_italian_lobby_shows_the_levels_in_italian_with_italian_numbers(
        server: str, browser: Any, artifacts: Path) -> None:
    game = GAMES[0]
    ctx = language_context(browser, "it", 1280, 900)
    try:
        page = ctx.new_page()
        page.goto(server + "/")
        page.select_option("#game", game)
        page.select_option("#players", "2")
        labels = seat_labels(page)
        medium = next(label for label in labels if "medio" in label)
        # Italian digits: 1.200 or 1200 (Italian groups four-digit numbers or not, by the ICU version)
        assert re.fullmatch(r"IA: medio ≈ 1\.?200 — gioca mosse sensate secondo regole pratiche", medium), medium
        for name in ("principiante", "facile", "difficile", "esperto"):
            assert any(re.search(rf"\b{name} ≈ \d", label) for label in labels), (name, labels)
        page.screenshot(path=str(artifacts / "levels-lobby-it.png"))
        # a table with a ladder level: the AI sits in its seat, named by its level
        page.select_option("#seat-1", "ai:easy")
        page.click("#create-btn")
        page.wait_for_url(re.compile(r"/t/"))
        page.wait_for_selector("text=facile", timeout=20_000)
        page.screenshot(path=str(artifacts / "levels-table-it.png"))
    finally:
        ctx.close()
