"""A table created in this browser shows under "Your tables" back in the lobby."""

from __future__ import annotations

from pathlib import Path
from typing import Any


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
