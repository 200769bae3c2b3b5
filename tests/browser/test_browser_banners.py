"""Banners that tell a visitor their role at a table, and the AI levels' strength hints in the lobby.

A friend who opens an invite link with an open seat is told how to join; someone who opens a full
table is told they are watching; the lobby's seat choices say how strong each AI level is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_play import create_via_lobby, new_page

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]


def test_lobby_seat_choices_show_ai_strength(server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = new_page(browser)
    try:
        page.goto(server + "/")
        page.wait_for_selector("#seat-1 option[value='ai:medium']", state="attached")
        labels = page.locator("#seat-1 option").all_inner_texts()
        assert "AI: random — plays any legal move" in labels
        assert "AI: medium ≈ 1,200 — plays sound moves by rules of thumb" in labels  # the AI ladder
        assert any(label.startswith("AI: expert ≈ ") for label in labels)
        page.select_option("#seat-1", "ai:medium")
        page.screenshot(path=str(artifacts / "banner-lobby.png"))
        assert errors == []
    finally:
        ctx.close()


def test_invitee_sees_how_to_join_and_creator_does_not(server: str, browser: Any, artifacts: Path) -> None:
    ctx1, host, errors1 = new_page(browser)
    ctx2, guest, errors2 = new_page(browser)
    try:
        url = create_via_lobby(host, server, "tohm", ["open", "open"], "Ada")
        guest.goto(url)
        role = guest.locator("#role")
        role.wait_for(state="visible")
        assert "Type your name and press Sit here to join" in role.inner_text()
        assert guest.locator("button.sit").first.is_visible()
        guest.screenshot(path=str(artifacts / "banner-invitee.png"))
        assert not host.locator("#role").is_visible()
        # once seated, the invitation disappears
        guest.fill("#my-name", "Bea")
        guest.locator("button.sit").first.click()
        role.wait_for(state="hidden")
        assert errors1 == [] and errors2 == []
    finally:
        ctx1.close()
        ctx2.close()


def test_spectator_of_a_full_table_is_told_they_are_watching(server: str, browser: Any, artifacts: Path) -> None:
    ctx1, host, errors1 = new_page(browser)
    ctx2, viewer, errors2 = new_page(browser)
    try:
        url = create_via_lobby(host, server, "tohm", ["open", "ai:random"], "Ada")
        viewer.goto(url)
        role = viewer.locator("#role")
        role.wait_for(state="visible")
        text = role.inner_text()
        assert text.startswith("You are watching:")
        assert "Ada" in text and "only watch" in text
        assert viewer.locator("button.sit").count() == 0
        viewer.screenshot(path=str(artifacts / "banner-spectator.png"))
        assert not host.locator("#role").is_visible()
        assert errors1 == [] and errors2 == []
    finally:
        ctx1.close()
        ctx2.close()
