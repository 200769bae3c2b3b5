"""Small breaks a player meets in real Chromium on a 390x844 phone: an address that leads
nowhere (an unknown table, guided game or game's rules) answers a 404 page in the player's language with a
way back to the lobby, and after a rematch
the address bar holds the new table (the link a player copies to invite a friend)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

MISSING = {
    "/t/nosuchtable": ("Qui non c’è nessun tavolo «nosuchtable»", "There is no table “nosuchtable” here"),
    "/rules/nosuch": ("Non esiste un gioco chiamato «nosuch»", "There is no game called “nosuch”"),
    "/learn/nosuchgame": ("Non c’è nessun gioco che si chiami «nosuchgame»", "There is no game called “nosuchgame”"),
}


def phone(browser: Any, lang: str) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                              device_scale_factor=2, locale="it-IT" if lang == "it" else "en-US")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(20_000)
    return ctx, page, errors


@pytest.mark.parametrize("lang", ["it", "en"])
def test_unknown_addresses_answer_a_404_page_with_the_way_back(server: str, browser: Any, artifacts: Path,
                                                                 lang: str) -> None:
    ctx, page, errors = phone(browser, lang)
    try:
        for path, (italian, english) in MISSING.items():
            response = page.goto(server + path)
            assert response is not None and response.status == 404, path
            text = page.locator("main").inner_text()
            assert (italian if lang == "it" else english) in text, text
            assert not page.locator("#board, #chat, #seats").count()  # not a table page
            assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
            assert page.locator('main a[href="/"]').count()  # the way back to the lobby
            if not path.startswith("/rules/"):  # the rules pages' own 404 page (web/lobby/rules.py) lists the games
                assert ("Pagina non trovata" if lang == "it" else "Page not found") in text
                box = page.locator("#back-to-lobby").bounding_box()
                assert box is not None and box["height"] >= 44 and box["width"] >= 44
            if path == "/t/nosuchtable":
                page.screenshot(path=str(artifacts / f"not-found-{lang}.png"), full_page=True)
        page.locator("#back-to-lobby").click()
        page.wait_for_url(re.compile(r"/$"))
        assert not errors, errors
    finally:
        ctx.close()


def post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Origin": base})
    with urllib.request.urlopen(req, timeout=10) as res:
        data: dict[str, Any] = json.loads(res.read())
        return data


def test_after_a_rematch_the_address_bar_holds_the_new_table(server: str, browser: Any) -> None:
    ctx, page, errors = phone(browser, "en")
    try:
        made = post(server, "/api/tables", {"game": "tohm", "players": 2, "sit": 0, "name": "Ann",
                                            "seats": [{"kind": "open"}, {"kind": "ai", "level": "beginner"}]})
        page.goto(server + "/")  # the seat's token is kept by the page
        page.evaluate("([id, seat, token]) => localStorage.setItem(`ludoteca.seat.${id}`, "
                      "JSON.stringify({seat, token}))", [made["id"], made["seat"], made["token"]])
        old = f"{server}/t/{made['id']}"
        page.goto(old)
        page.wait_for_function("() => window.ludoteca?.msg?.you === 0 && window.ludoteca.msg.status === 'playing'")
        page.locator("#resign").click()
        page.locator("#confirm-yes").click()
        page.locator("#offer-rematch").click()  # the only player at the table: the rematch starts at once
        page.wait_for_function("(old) => location.href !== old && location.pathname.startsWith('/t/')", arg=old)
        page.wait_for_function("() => window.ludoteca?.msg?.you === 0")
        assert page.evaluate("() => window.ludoteca.rematchOf") == made["id"]  # the page shows the new table
        assert page.url != old and re.search(r"/t/[\w-]+$", page.url)
        assert page.evaluate("() => document.getElementById('share').value") == page.url  # the invitation link
        assert not errors, errors
    finally:
        ctx.close()
