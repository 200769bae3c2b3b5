"""Table life in a real browser: resign, leave a seat, a rematch offer accepted, sounds off by default."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_play import create_via_lobby, new_page, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Origin": base})
    with urllib.request.urlopen(req, timeout=10) as res:
        data: dict[str, Any] = json.loads(res.read())
        return data


def sit(page: Any, url: str, name: str, seat: int = 1) -> None:
    page.goto(url)
    page.fill("#my-name", name)
    page.locator(f"button.sit[data-seat='{seat}']").click()
    wait_state(page, "s.you === arg", seat)


def confirm(page: Any, button: str) -> str:
    page.click(button)
    dialog = page.locator("dialog#confirm")
    dialog.wait_for(state="visible")
    text = str(page.inner_text("#confirm-text"))
    page.click("#confirm-yes")
    return text


def test_resign_then_a_rematch_offer_accepted_then_leave(server: str, browser: Any, artifacts: Path) -> None:
    ctx_a, ann, errors_a = new_page(browser)
    ctx_b, bob, errors_b = new_page(browser)
    try:
        url = create_via_lobby(ann, server, "tohm", ["open", "open"], "Ann")
        sit(bob, url, "Bob")
        wait_state(ann, "s.status === 'playing'")
        bob.locator("#resign").wait_for()
        assert "the other player wins" in confirm(bob, "#resign")
        for page in (ann, bob):
            page.wait_for_function("() => document.querySelector('#result-box:not([hidden])')")
            assert "Bob resigned." in page.inner_text("#result-box")
            assert "Ann wins!" in page.inner_text("#banner")
            assert page.locator("#log li.notice[data-kind='resigned']").count() == 1
        bob.screenshot(path=str(artifacts / "table-life-resigned.png"))
        replay = ctx_b.new_page()  # the replay says so too
        replay.goto(url.replace("/t/", "/replay/"))
        replay.wait_for_function("() => document.body.innerText.includes('Ann wins! Bob resigned.')")
        replay.close()
        # Ann offers a rematch; Bob sees it and accepts; both go to the new table, in the same seats
        ann.click("#offer-rematch")
        bob.locator("#accept-rematch").wait_for()
        assert "Ann offers a rematch" in bob.inner_text("#offer")
        bob.screenshot(path=str(artifacts / "table-life-rematch-offer.png"))
        bob.click("#accept-rematch")
        for page, seat in ((ann, 0), (bob, 1)):
            page.wait_for_url(lambda u: u != url and "/t/" in u)
            wait_state(page, "s.you === arg && s.status === 'playing'", seat)
        assert ann.url == bob.url
        # Ann leaves the new game: the easiest AI plays her seat for good, Bob is told
        assert "cannot take it back" in confirm(ann, "#leave")
        bob.locator("#log li.notice[data-kind='ai_took_over']").wait_for()
        assert "Ann left; the AI (random) plays the seat." in bob.inner_text("#log")
        bob.wait_for_function("() => window.ludoteca?.msg?.seats?.[0]?.kind === 'ai'")
        wait_state(ann, "s.you === null")
        assert ann.locator("#seat-actions button").count() == 0
        bob.screenshot(path=str(artifacts / "table-life-left.png"))
        assert errors_a == [] and errors_b == []
    finally:
        ctx_a.close()
        ctx_b.close()


def test_leaving_before_the_start_opens_the_seat_again(server: str, browser: Any, artifacts: Path) -> None:
    ctx, ann, errors = new_page(browser)
    try:
        create_via_lobby(ann, server, "exactly", ["open", "open"], "Ann")
        assert "Someone else may take it" in confirm(ann, "#leave")
        ann.locator("button.sit[data-seat='0']").wait_for()
        ann.wait_for_function("() => window.ludoteca?.msg?.you === null"
                              " && window.ludoteca?.msg?.seats?.[0]?.kind === 'open'")
        ann.screenshot(path=str(artifacts / "table-life-left-before-start.png"))
        assert errors == []
    finally:
        ctx.close()


def test_sounds_are_off_by_default_and_the_toggle_is_remembered(server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = new_page(browser)
    try:
        made = post(server, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Ann",
                                            "seats": [{"kind": "open"}, {"kind": "ai", "level": "random"}]})
        page.goto(server + "/")
        page.evaluate("([id, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat: 0, token}))",
                      [made["id"], made["token"]])
        page.goto(server + made["url"])
        wait_state(page, "s.you === 0 && s.status === 'playing'")
        toggle = page.locator("#sound-toggle")
        assert toggle.inner_text() == "Sounds off" and toggle.get_attribute("aria-pressed") == "false"
        page.wait_for_function("() => window.ludoteca?.msg && window.ludoteca?.msg?.legal")
        assert page.evaluate("() => window.ludoteca.sounds") == []  # my turn came, silently
        toggle.click()
        assert toggle.inner_text() == "Sounds on" and toggle.get_attribute("aria-pressed") == "true"
        assert page.evaluate("() => window.ludoteca.sounds") == ["turn"]  # a sample beep, made by WebAudio
        page.reload()
        wait_state(page, "s.you === 0")
        assert page.locator("#sound-toggle").inner_text() == "Sounds on"
        page.screenshot(path=str(artifacts / "table-life-sounds-on.png"))
        assert errors == []  # no audio file, nothing the CSP blocks
    finally:
        ctx.close()


def test_the_creator_chooses_the_away_limit_and_the_chat_in_the_lobby(server: str, browser: Any,
                                                                      artifacts: Path) -> None:
    ctx, page, errors = new_page(browser)
    try:
        page.goto(server + "/")
        page.wait_for_selector("#abandon-after option[value='600']", state="attached")
        assert page.input_value("#abandon-after") == "180" and page.input_value("#abandoned") == "ai"
        assert page.input_value("#chat-mode") == "shared"
        page.fill("#name", "Ann")
        page.select_option("#game", "tohm")
        page.select_option("#abandon-after", "600")
        page.select_option("#abandoned", "end")
        page.select_option("#chat-mode", "separate")
        page.screenshot(path=str(artifacts / "table-life-lobby-settings.png"))
        page.click("#create-btn")
        page.wait_for_url(lambda u: "/t/" in u)
        page.wait_for_function("() => window.ludoteca?.msg && window.ludoteca?.msg?.you === 0")
        assert page.evaluate("() => window.ludoteca.settings") == {"abandon_after": 600, "abandoned": "end",
                                                                   "chat": "separate"}
        assert errors == []
    finally:
        ctx.close()


def test_an_away_players_seat_goes_to_the_ai_and_they_take_it_back(server: str, browser: Any,
                                                                   artifacts: Path) -> None:
    made = post(server, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Ann", "abandon_after": 3,
                                        "seats": [{"kind": "open"}, {"kind": "open"}]})
    ctx_a, ann, errors_a = new_page(browser)
    ctx_b, bob_page, errors_b = new_page(browser)
    try:
        ann.goto(server + "/")
        ann.evaluate("([id, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat: 0, token}))",
                     [made["id"], made["token"]])
        ann.goto(server + made["url"])
        wait_state(ann, "s.you === 0")
        bob = post(server, f"/api/tables/{made['id']}/join", {"seat": 1, "name": "Bob"})  # the game starts
        wait_state(ann, "s.status === 'playing'")
        # Bob never opens the table: Ann sees the countdown, then the AI takes Bob's seat
        ann.locator("#seats .abandon-left").wait_for()
        ann.locator("#log li.notice[data-kind='ai_took_over']").wait_for(timeout=15_000)
        assert "Bob was away too long; the AI (random) plays the seat until they take it back." in \
            ann.inner_text("#log")
        ann.screenshot(path=str(artifacts / "table-life-ai-took-over.png"))
        # Bob comes back: his page says so and he takes his seat back
        bob_page.goto(server + "/")
        bob_page.evaluate("([id, token]) => localStorage.setItem(`ludoteca.seat.${id}`, "
                          "JSON.stringify({seat: 1, token}))", [made["id"], bob["token"]])
        bob_page.goto(server + made["url"])
        wait_state(bob_page, "s.you === 1")
        assert "An AI plays your seat" in bob_page.inner_text("#banner")
        bob_page.click("#take-back")
        bob_page.wait_for_function("() => window.ludoteca?.msg?.seats?.[1]?.kind === 'human'")
        ann.locator("#log li.notice[data-kind='took_back']").wait_for()
        assert bob_page.locator("#resign").is_visible()
        bob_page.screenshot(path=str(artifacts / "table-life-taken-back.png"))
        assert errors_a == [] and errors_b == []
    finally:
        ctx_a.close()
        ctx_b.close()
