"""A table created in this browser shows under "Your tables" back in the lobby."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.browser.test_browser_ratings import logged_in


def test_created_table_appears_under_your_tables(server: str, browser: Any, artifacts: Path) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    try:
        page.goto(f"{server}/")
        page.wait_for_selector("#seat-0", state="attached")
        assert page.locator("#my-tables").is_hidden()  # a fresh browser holds no seat
        page.fill("#name", "Ann")
        page.click("#create-btn")
        page.wait_for_url("**/t/*")
        table_id = page.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        page.goto(f"{server}/")
        row = page.locator("#my-table-list tr", has=page.locator(f'a[href="/t/{table_id}"]'))
        row.wait_for(timeout=10_000)
        assert page.locator("#my-tables").is_visible()
        assert "Ann" in row.inner_text()
        assert "waiting" in row.inner_text()
        page.screenshot(path=str(artifacts / "your-tables.png"), full_page=True)
        row.locator("a").click()
        page.wait_for_url(f"**/t/{table_id}")
    finally:
        page.close()


def test_your_tables_say_which_are_rated_in_both_languages(server: str, browser: Any, artifacts: Path) -> None:
    """The lobby's "your tables" marks a rated table as the lobby's list and the table page do."""
    for lang, word in (("en", "rated"), ("it", "classificato")):
        name = f"Rita {lang} {uuid.uuid4().hex[:6]}"
        ctx, page, errors = logged_in(browser, server, name, 1100, 900, lang)
        try:
            made = {}
            for rated in (True, False):
                page.goto(f"{server}/")
                page.locator("#rated").wait_for()
                page.select_option("#seat-1", "open")
                page.set_checked("#rated", rated)
                page.click("#create-btn")
                page.wait_for_url("**/t/*")
                made[rated] = page.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
            page.goto(f"{server}/")
            rows = {rated: page.locator("#my-table-list tr", has=page.locator(f'a[href="/t/{table_id}"]'))
                    for rated, table_id in made.items()}
            rows[True].wait_for(timeout=10_000)
            assert rows[True].locator(".tag").inner_text() == word
            assert rows[False].locator(".tag").count() == 0
            page.screenshot(path=str(artifacts / f"your-tables-rated-{lang}.png"), full_page=True)
            assert errors == []
        finally:
            ctx.close()
