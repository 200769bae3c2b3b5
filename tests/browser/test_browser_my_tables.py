""""Your games" (/my-tables) on a 390 px phone in Italian and English: the turn-based games waiting
for this browser's player come first with the time left, the tab's title counts them, everything fits; the
table page shows its creator the club webhook (its host only) to add, replace or remove, and nobody else."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import language_context, watch_errors
from tests.browser.test_browser_fit import page_problems

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

RESERVE = {"en": "Reserve", "it": "Riserva"}
WORDS = {"en": ("Waiting for your move", "left", "your games"), "it": ("In attesa della tua mossa", "restano",
                                                                       "le tue partite")}


def call(base: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method="POST" if body is not None else "GET",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as res:
        return dict(json.loads(res.read()))


@pytest.mark.parametrize("lang", ["en", "it"])
def test_your_games_on_a_phone(server: str, browser: Any, artifacts: Path, lang: str) -> None:
    ctx = language_context(browser, lang, 390, 844, phone=True)
    page = ctx.new_page()
    errors = watch_errors(page)
    try:
        page.goto(f"{server}/")
        page.wait_for_selector("#pace", state="attached")
        seats: dict[str, int] = {}
        bob_tokens: dict[str, str] = {}
        for i in range(3):  # three turn-based games made in this browser, Bob joining each
            page.goto(f"{server}/")
            page.wait_for_selector("#seat-0", state="attached")
            page.fill("#name", "Ann")
            assert not page.locator("#table-webhook").is_visible()  # a live table has no webhook
            page.select_option("#pace", "turn-based")
            page.select_option("#move-time", "86400")
            page.select_option("#reserve", "3600")
            if i == 0:  # the turn-based rows fit the phone, the club's webhook among them; a bad one is told
                page.fill("#table-webhook", "ftp://example.org/hook")
                page.click("#create-btn")
                page.locator("#create-error").filter(has_text="https://").wait_for(timeout=10_000)
                problems = page_problems(page, f"/ turn-based {lang} 390x844", lang, server,
                                         ("Ann", "webhook", "Discord", "Slack", "ftp", "example.org", "hook"))
                page.locator("#table-webhook").scroll_into_view_if_needed()
                page.screenshot(path=str(artifacts / f"lobby-turn-based-{lang}.png"), full_page=True)
                assert not problems, "\n".join(problems)
                page.fill("#table-webhook", "")
            page.click("#create-btn")
            page.wait_for_url("**/t/*")
            table = page.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
            bob_tokens[table] = str(call(server, f"/api/tables/{table}/join", {"seat": 1, "name": "Bob"})["token"])
            seats[table] = int(call(server, f"/api/tables/{table}/pace")["seat"])
        mine = [t for t, s in seats.items() if s == 0]
        page.goto(f"{server}/my-tables")
        page.wait_for_function("() => !document.querySelector('#summary').textContent.includes('…')")
        waiting, left_word, title_word = WORDS[lang]
        cards = page.locator("#waiting-list .game-card")
        assert cards.count() == len(mine)
        expected_title = f"({len(mine)}) " if mine else ""
        assert page.title().startswith(expected_title) and title_word in page.title().lower()
        if mine:
            assert page.locator("#waiting-panel h2").inner_text() == waiting
            assert left_word in cards.first.inner_text()
        assert page.locator(".game-card").count() == len(seats)
        problems = page_problems(page, f"/my-tables {lang} 390x844", lang, server, ("Ann", "Bob", "EXAGON", "TRI",
                                                                                       "TOHM", "exactly"))
        page.screenshot(path=str(artifacts / f"my-tables-{lang}.png"), full_page=True)
        assert not problems, "\n".join(problems)
        # the table page of a game waiting for this player says how long they have
        if mine:
            cards.first.locator("a.go").tap()
            page.wait_for_url("**/t/*")
            page.locator("#pace-left").wait_for(timeout=10_000)
            assert left_word in page.locator("#pace-left").inner_text()
            assert "Ann" in page.locator("#pace-left").inner_text()
            reserves = page.locator("#pace-reserves").inner_text()  # each seat's saved time
            assert "Ann" in reserves and "Bob" in reserves and RESERVE[lang] in reserves
            page.screenshot(path=str(artifacts / f"turn-based-table-{lang}.png"), full_page=True)
        table = next(iter(seats))
        club_webhook(page, server, artifacts, lang, table)
        # Bob, with his own seat's token in his browser, never learns whether the table has a webhook
        bob = language_context(browser, lang, 390, 844, phone=True)
        try:
            seat = json.dumps({"seat": 1, "token": bob_tokens[table]})
            bob.add_init_script(f"localStorage.setItem('ludoteca.seat.{table}', {json.dumps(seat)})")
            other = bob.new_page()
            with other.expect_response(lambda r: r.url.endswith(f"/api/tables/{table}/webhook")) as asked:
                other.goto(f"{server}/t/{table}")
            assert asked.value.status == 403  # he asked (he holds a seat) and was refused, as for any table
            other.locator("#pace-box").wait_for(timeout=10_000)
            assert other.locator("#pace-hook").count() == 0
        finally:
            bob.close()
        assert errors == [], errors
    finally:
        ctx.close()


HOOK_WORDS = {"en": ("No club webhook", "Club webhook: ", "https://"),
              "it": ("Nessun webhook del club", "Webhook del club: ", "https://")}
CLUB = "https://162.159.128.233/api/webhooks/1234/secret-part"
"""A club's webhook at a public address written as one (nothing to resolve on the test machine)."""


def club_webhook(page: Any, server: str, artifacts: Path, lang: str, table: str) -> None:
    """The table's creator (this browser's seat) sees its club webhook, adds, replaces and removes it."""
    none, shown, bad_words = HOOK_WORDS[lang]
    page.goto(f"{server}/t/{table}")
    page.locator("#pace-hook-line").filter(has_text=none).wait_for(timeout=10_000)
    page.locator("#pace-hook-edit").tap()
    page.locator("#pace-hook-save").tap()  # nothing typed: said so, nothing sent
    page.locator("#pace-hook-error").filter(has_text=bad_words).wait_for(timeout=10_000)
    page.fill("#pace-hook-url", "ftp://example.org/hook")
    page.locator("#pace-hook-save").tap()
    page.locator("#pace-hook-error").filter(has_text=bad_words).wait_for(timeout=10_000)
    assert page.locator("#pace-hook-url").input_value() == "ftp://example.org/hook"  # kept to be corrected
    problems = page_problems(page, f"/t/ club webhook form {lang} 390x844", lang, server,
                             ("Ann", "Bob", "webhook", "Discord", "Slack", "ftp", "example.org", "hook", "discord.com"))
    page.locator("#pace-hook").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"turn-based-webhook-form-{lang}.png"), full_page=True)
    assert not problems, "\n".join(problems)
    page.fill("#pace-hook-url", CLUB)
    page.locator("#pace-hook-save").tap()
    page.locator("#pace-hook-line").filter(has_text=shown + "162.159.128.233").wait_for(timeout=10_000)
    text = page.locator("body").inner_text()
    assert "secret-part" not in text and "/api/webhooks" not in text  # the host only, never the address
    assert page.locator("#pace-hook-error").inner_text() == ""
    problems = page_problems(page, f"/t/ club webhook {lang} 390x844", lang, server,
                             ("Ann", "Bob", "webhook", "162.159.128.233"))
    page.locator("#pace-hook").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"turn-based-webhook-{lang}.png"), full_page=True)
    assert not problems, "\n".join(problems)
    page.reload()  # what the server keeps, not what the page remembers
    page.locator("#pace-hook-line").filter(has_text=shown + "162.159.128.233").wait_for(timeout=10_000)
    page.locator("#pace-hook-remove").tap()
    page.locator("#pace-hook-line").filter(has_text=none).wait_for(timeout=10_000)
