"""Chat at a table in a real browser: it reaches the other player and a spectator, the
separate channel keeps spectators among themselves, lines are text, the panel can be hidden; in Italian."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import open_menu
from tests.browser.test_browser_play import new_page, wait_state
from tests.browser.test_browser_table_life import post

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def seated(browser: Any, base: str, table: str, seat: int, token: str, locale: str | None = None) -> tuple[Any, Any,
                                                                                                         list[str]]:
    if locale is None:
        ctx, page, errors = new_page(browser)
    else:
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, locale=locale, is_mobile=True,
                                  has_touch=True)
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
        page.set_default_timeout(20_000)
    page.goto(base + "/")
    page.evaluate("([id, seat, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat, token}))",
                  [table, seat, token])
    page.goto(f"{base}/t/{table}")
    wait_state(page, "s.you === arg", seat)
    return ctx, page, errors


def two_player_table(base: str, chat: str) -> tuple[str, str, str]:
    made = post(base, "/api/tables", {"game": "exactly", "players": 2, "sit": 0, "name": "Ann", "chat": chat,
                                      "seats": [{"kind": "open"}, {"kind": "open"}]})
    bob = post(base, f"/api/tables/{made['id']}/join", {"seat": 1, "name": "Bob"})
    return made["id"], made["token"], bob["token"]


def say(page: Any, text: str) -> None:
    page.fill("#chat-text", text)
    page.click("#chat-send")


def lines(page: Any) -> list[str]:
    return [str(x) for x in page.locator("#chat-lines li.chat-line").all_inner_texts()]


def test_chat_reaches_the_other_player_and_a_spectator(server: str, browser: Any, artifacts: Path) -> None:
    table, ann_token, bob_token = two_player_table(server, "shared")
    ctx_a, ann, errors_a = seated(browser, server, table, 0, ann_token)
    ctx_b, bob, errors_b = seated(browser, server, table, 1, bob_token)
    ctx_z, zoe, errors_z = new_page(browser)
    try:
        zoe.goto(f"{server}/t/{table}")
        wait_state(zoe, "s.you === null")
        say(ann, "<b>hello</b> Bob")
        for page in (ann, bob, zoe):
            page.locator("#chat-lines li.chat-line").first.wait_for()
            assert lines(page) == ["Ann <b>hello</b> Bob"]  # shown as typed: text, never markup
            assert page.locator("#chat-lines b").count() == 0
        zoe.evaluate("() => localStorage.setItem('ludoteca.name', 'Zoe')")  # the name she gave in the lobby
        say(zoe, "nice game")
        for page in (ann, bob, zoe):
            page.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 2")
            assert lines(page)[1] == "Zoe (watching) nice game"
        assert ann.input_value("#chat-text") == ""
        ann.screenshot(path=str(artifacts / "chat-shared.png"))
        # a reload brings the lines back (stored with the table)
        bob.reload()
        wait_state(bob, "s.you === 1")
        bob.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 2")
        # the chat can be hidden, and stays hidden
        bob.click("#chat-toggle")
        assert not bob.locator("#chat-box").is_visible()
        assert bob.locator("#chat-toggle").inner_text() == "Show chat"
        bob.reload()
        wait_state(bob, "s.you === 1")
        assert not bob.locator("#chat-box").is_visible()
        bob.click("#chat-toggle")
        assert bob.locator("#chat-box").is_visible()
        assert errors_a == [] and errors_b == [] and errors_z == []
    finally:
        for ctx in (ctx_a, ctx_b, ctx_z):
            ctx.close()


def test_separate_chat_keeps_spectators_among_themselves(server: str, browser: Any, artifacts: Path) -> None:
    table, ann_token, _ = two_player_table(server, "separate")
    ctx_a, ann, errors_a = seated(browser, server, table, 0, ann_token)
    ctx_z, zoe, errors_z = new_page(browser)
    ctx_y, yan, errors_y = new_page(browser)
    try:
        for page in (zoe, yan):
            page.goto(f"{server}/t/{table}")
            wait_state(page, "s.you === null")
        assert "Spectators' messages reach spectators only." in zoe.inner_text("#chat-note")
        assert "you do not see their messages" in ann.inner_text("#chat-note")
        say(zoe, "she is winning")
        yan.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 1")
        assert lines(yan) == ["Spectator (watching) she is winning"]
        say(ann, "thanks all")
        for page in (zoe, yan):
            page.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 2")
        ann.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 1")
        assert lines(ann) == ["Ann thanks all"]  # the spectators' line never reached the player
        zoe.screenshot(path=str(artifacts / "chat-separate-spectator.png"))
        assert errors_a == [] and errors_z == [] and errors_y == []
    finally:
        for ctx in (ctx_a, ctx_z, ctx_y):
            ctx.close()


def test_the_table_with_its_chat_in_italian_on_a_phone(server: str, browser: Any, artifacts: Path) -> None:
    table, ann_token, bob_token = two_player_table(server, "shared")
    ctx_a, ann, errors_a = seated(browser, server, table, 0, ann_token, locale="it-IT")
    ctx_b, bob, errors_b = seated(browser, server, table, 1, bob_token)
    try:
        say(bob, "ciao Ann!")
        ann.wait_for_function("() => document.querySelectorAll('#chat-lines li.chat-line').length === 1")
        assert ann.locator("#chat-send").inner_text() == "Invia"
        assert ann.locator("#chat-toggle").inner_text() == "Nascondi chat"
        assert ann.locator("#sound-toggle").inner_text() == "Suoni spenti"
        assert ann.locator("#chat-box h2").inner_text() == "Chat"
        assert ann.get_attribute("#chat-text", "placeholder") == "Scrivi un messaggio"
        open_menu(ann)  # (on a phone the header's toggles are in its menu)
        for sel in ("#chat-send", "#chat-toggle", "#sound-toggle", "#resign", "#leave"):
            box = ann.locator(sel).bounding_box()
            assert box is not None and box["height"] >= 44, sel
        assert ann.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        ann.locator("#chat-box").scroll_into_view_if_needed()
        ann.screenshot(path=str(artifacts / "chat-italian-390x844.png"), full_page=True)
        ann.click("#resign")
        ann.locator("dialog#confirm").wait_for(state="visible")
        assert "Abbandoni" in ann.inner_text("#confirm-text")
        ann.screenshot(path=str(artifacts / "table-life-italian-resign-dialog.png"))
        ann.click("#confirm-no")
        assert errors_a == [] and errors_b == []
    finally:
        ctx_a.close()
        ctx_b.close()
