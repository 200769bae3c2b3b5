"""A table created in this browser shows under "Your tables" back in the lobby."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

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


BROKEN_JS = """(selector) => {
  // the words cut across two lines, and the tags or labels (.tag, .status) drawn in pieces on two lines
  const found = [];
  for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.textContent.matchAll(/[^\\s-]+/g)) { // (a line may end after a hyphen)
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) found.push(`the word "${m[0]}" cut across lines`);
      }
    }
    for (const e of root.querySelectorAll(".tag, .status")) {
      if (e.getClientRects().length > 1) found.push(`"${e.textContent}" drawn in ${e.getClientRects().length} pieces`);
    }
  }
  return found;
}"""


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_lobby_lists_keep_whole_words_on_a_phone(server: str, browser: Any, lang: str, artifacts: Path) -> None:
    """At 390 px the lobby's lists (your tables, all tables) wrap between words: no word, status or tag is cut in
    two, whatever the language, with turn-based tables (the longest tags) among them."""
    from tests.browser.conftest import language_context, layout_problems, watch_errors
    from tests.browser.test_browser_phone import post_json

    ctx = language_context(browser, lang, 390, 844)
    page = ctx.new_page()
    errors = watch_errors(page)
    try:
        page.goto(f"{server}/leaderboard")
        for pace in ({}, {"pace": "turn-based", "move_time": 86400, "reserve": 3600}):
            made = post_json(server, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Anna",
                                                     "seats": [{"kind": "open"}, {"kind": "open"}], **pace})
            post_json(server, f"/api/tables/{made['id']}/join", {"seat": 1, "name": "Bob"})  # in play
            page.evaluate("([id, s]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify(s))",
                          [made["id"], {"seat": 0, "token": made["token"]}])
        page.goto(f"{server}/")
        page.locator("#my-table-list .status.playing").nth(1).wait_for()
        page.locator("#table-list .status.playing").first.wait_for()
        cut = page.evaluate(BROKEN_JS, "#my-table-list, #table-list")
        page.locator("#my-tables").screenshot(path=str(artifacts / f"your-tables-390-{lang}.png"))
        assert not cut, cut[:10]
        assert layout_problems(page, phone=True) == []
        assert errors == []
    finally:
        ctx.close()
