"""Rated tables, profiles and leaderboards in a real browser.

Two logged-in players (two browser contexts) create and join a rated TOHM table from the lobby (a short
game: a turn limit of 6), play it to the end by clicking the board, then both profiles show the updated
ratings with the plot and its table, and the leaderboard lists them; screenshots of a profile at phone
and desktop sizes go to ``test-artifacts/``.
"""

from __future__ import annotations

import random
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import DESKTOP_SIZE, assert_accessible, language_context, watch_errors
from tests.browser.test_browser_play import click_move, state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


WIDE_JS = """(w) => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1)
  .map((e) => `${e.tagName}#${e.id}.${e.getAttribute('class')} ${Math.round(e.getBoundingClientRect().right)}`)"""
"""The elements wider than the screen (an assertion's message)."""


def logged_in(browser: Any, server: str, name: str, width: int = 1280, height: int = 900,
              lang: str = "en") -> tuple[Any, Any, list[str]]:
    """A browser context with a new account, logged in (the session cookie set by the sign-up)."""
    ctx = language_context(browser, lang, width, height)
    page = ctx.new_page()
    errors = watch_errors(page)
    res = ctx.request.post(server + "/api/signup", data={"name": name, "password": "a long password"},
                           headers={"Origin": server})
    assert res.status == 201, res.text()
    return ctx, page, errors


def test_two_logged_in_players_play_a_rated_table_and_find_their_ratings(server: str, browser: Any,
                                                                         artifacts: Path) -> None:
    tag = uuid.uuid4().hex[:5]
    ann_name, bob_name = f"Ann {tag}", f"Bob {tag}"
    ctx_a, ann, errors_a = logged_in(browser, server, ann_name)
    ctx_b, bob, errors_b = logged_in(browser, server, bob_name)
    ctx_c = language_context(browser, "en", 1280, 900)  # nobody logged in
    casual = ctx_c.new_page()
    try:
        # the lobby offers "Rated" to a logged-in player only
        casual.goto(server + "/")
        casual.wait_for_function("() => document.querySelectorAll('#game option').length > 0")
        casual.wait_for_selector("#leaderboard-link")
        assert casual.locator("#rated").count() == 0
        ann.goto(server + "/")
        ann.locator("#rated").wait_for()
        # logged in, the lobby's name is the account's (the server seats the account's name anyway)
        assert ann.input_value("#name") == ann_name and ann.locator("#name").get_attribute("readonly") is not None
        ann.select_option("#game", "tohm")
        ann.select_option("#players", "2")
        ann.fill("#opt-turn_limit", "6")
        ann.select_option("#seat-0", "open")
        ann.select_option("#seat-1", "open")
        ann.check("#rated")
        assert_accessible(ann, "the lobby, logged in")
        ann.screenshot(path=str(artifacts / "ratings-lobby.png"))
        ann.click("#create-btn")
        ann.wait_for_url(re.compile(r"/t/"))
        wait_state(ann, "s.you === 0")
        url = ann.url
        table_id = url.rstrip("/").split("/")[-1]
        # the lobby's list marks the table rated; a casual visitor cannot sit at it
        casual.reload()
        row = casual.locator("#table-list tr", has_text=ann_name)
        row.locator(".tag", has_text="rated").wait_for()
        casual.goto(url)
        casual.locator("#rated-tag").wait_for()  # the table page says it is rated before anyone tries to sit
        casual.fill("#my-name", "Eve")
        casual.locator("button.sit").first.click()
        casual.wait_for_function("() => document.querySelector('#toast.show')")
        assert "log in" in casual.inner_text("#toast")
        # Bob sits (logged in: the seat is his account's)
        bob.goto(url)
        bob.locator("button.sit").first.click()
        wait_state(bob, "s.you === 1 && s.status === 'playing'")
        wait_state(ann, "s.status === 'playing'")
        play_to_the_end({0: ann, 1: bob}, random.Random(11))
        # both profiles show the new rating, its plot (with its table) and the finished table's replay
        for page, name in ((ann, ann_name), (bob, bob_name)):
            page.goto(f"{server}/players/{name.replace(' ', '%20')}")
            for _ in range(50):  # the rating is written just after the end
                page.wait_for_function("() => document.body.dataset.ready === '1'")
                if page.locator(".rating-card").count():
                    break
                page.wait_for_timeout(200)
                page.reload()
            card = page.locator(".rating-card")
            assert card.count() == 1
            assert "TOHM, 2 players" in card.inner_text()
            figures = card.locator(".figures").inner_text()
            assert "Games played\n1" in figures and "provisional" in figures
            assert card.locator("svg.rating-plot circle.point:not(.start)").count() == 1
            assert card.locator("svg.rating-plot circle.point.start").count() == 1  # a newcomer's 1,500 first
            assert "Rated games" in card.locator("svg.rating-plot").inner_html()
            card.locator("details summary").click()
            assert card.locator("details table tbody tr").count() == 1
            replay = page.locator("#finished-list a", has_text="replay").first
            assert replay.get_attribute("href") == f"/replay/{table_id}"
            assert_accessible(page, f"{name}'s profile")
        # the figures match the API's
        data = ann.request.get(f"{server}/api/players/{ann_name}").json()
        shown = ann.locator(".rating-card .figures dd").nth(2).inner_text()
        assert str(data["ratings"][0]["rating"]["display"]) in shown.replace(",", "").replace(".", "")
        for width, height in ((390, 844), DESKTOP_SIZE):
            ann.set_viewport_size({"width": width, "height": height})
            ann.reload()
            ann.wait_for_function("() => document.body.dataset.ready === '1'")
            ann.locator(".rating-card details summary").click()
            # mobile first: nothing wider than the screen (wide tables scroll inside their panel)
            assert ann.evaluate("() => document.documentElement.scrollWidth") <= width, ann.evaluate(WIDE_JS, width)
            font = ann.evaluate("() => { const s = document.querySelector('svg.rating-plot');"
                                " return s.getBoundingClientRect().width / s.viewBox.baseVal.width; }")
            assert font > 0.9, "the plot is drawn at the page's width: its texts keep their size"
            ann.screenshot(path=str(artifacts / f"ratings-profile-{width}x{height}.png"), full_page=True)
        # the leaderboard lists both, linked to their profiles
        bob.goto(f"{server}/leaderboard?game=tohm&players=2")
        bob.wait_for_function("() => document.body.dataset.ready === '1'")
        names = bob.locator("#board-list a").all_inner_texts()
        assert ann_name in names and bob_name in names
        assert_accessible(bob, "the leaderboard")
        bob.set_viewport_size({"width": 390, "height": 844})
        bob.screenshot(path=str(artifacts / "ratings-leaderboard-390x844.png"), full_page=True)
        bob.locator("#board-list a", has_text=ann_name).click()
        bob.wait_for_url(re.compile(r"/players/"))
        bob.wait_for_function("() => document.body.dataset.ready === '1'")
        assert bob.inner_text("#player-name") == ann_name
        assert errors_a == errors_b == []
    finally:
        for ctx in (ctx_a, ctx_b, ctx_c):
            ctx.close()


def test_profile_and_leaderboard_in_italian_and_an_unknown_player(server: str, browser: Any, artifacts: Path) -> None:
    ctx = language_context(browser, "it", 390, 844)
    page = ctx.new_page()
    errors = watch_errors(page)
    try:
        res = page.goto(f"{server}/players/nobody-{uuid.uuid4().hex[:6]}")
        assert res is not None and res.status == 404
        page.wait_for_function("() => document.querySelector('#status.error')")
        assert "nessun giocatore" in page.inner_text("#status")
        assert page.title() == "ludoteca — giocatore inesistente"
        assert_accessible(page, "an unknown player's page")
        page.goto(f"{server}/leaderboard")
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        assert page.locator("h1").inner_text() == "Classifiche"
        assert "punteggio prudente" in page.inner_text("main")
        assert_accessible(page, "the leaderboard in Italian")
        page.screenshot(path=str(artifacts / "ratings-leaderboard-it-390x844.png"), full_page=True)
        assert errors == []
    finally:
        ctx.close()


OVERFLOW_JS = """([selector, w]) => [...document.querySelectorAll(selector)].filter((e) => {
    const r = e.getBoundingClientRect(), box = e.closest('.scroll-x');
    const edge = box ? Math.min(w, box.getBoundingClientRect().left + box.clientLeft + box.clientWidth) : w;
    return r.width > 1 && (r.left < 0 || r.right > edge + 0.5); })
  .map((e) => { const r = e.getBoundingClientRect();
    const what = `${e.tagName}.${e.getAttribute('class')} "${e.textContent.slice(0, 30)}"`;
    return `${what} ${Math.round(r.left)}..${Math.round(r.right)}`; })"""
"""The elements matching ``selector`` cut at the right edge: beyond a ``w`` pixels wide screen, or beyond
the frame they scroll in (a visually hidden header, 1 pixel wide, is left out: nobody sees it)."""


def play_to_the_end(players: dict[int, Any], rng: random.Random) -> None:
    """The players' pages click random legal moves until the game is over."""
    first = players[0]
    for _ in range(200):
        s = state(first)
        if s["status"] == "over":
            break
        page = players[s["to_move"]]
        wait_state(page, "s.mine || s.status !== 'playing' || s.seq !== arg", s["seq"])
        if state(page)["seq"] != s["seq"] or not state(page)["mine"]:
            continue
        click_move(page, "tohm", rng)
        for p in players.values():
            wait_seq_above(p, s["seq"])
    else:
        raise AssertionError("the game did not end")
    for page in players.values():
        wait_state(page, "s.status === 'over'")


def finish_a_rated_table(page: Any, opponent: Any, server: str) -> None:
    """From the lobby, the logged-in player of ``page`` creates a rated TOHM table (a turn limit of 6:
    three moves each, the least a rated result needs), the logged-in ``opponent`` sits, and they play it
    to the end by clicking: a finished rated table and a new rating on their profiles."""
    page.goto(server + "/")
    page.locator("#rated").wait_for()
    page.select_option("#game", "tohm")
    page.select_option("#players", "2")
    page.fill("#opt-turn_limit", "6")
    page.select_option("#seat-0", "open")
    page.select_option("#seat-1", "open")
    page.check("#rated")
    page.click("#create-btn")
    page.wait_for_url(re.compile(r"/t/"))
    wait_state(page, "s.you === 0")
    opponent.goto(page.url)
    opponent.locator("button.sit").first.click()
    wait_state(opponent, "s.you === 1 && s.status === 'playing'")
    wait_state(page, "s.status === 'playing'")
    play_to_the_end({0: page, 1: opponent}, random.Random(5))


def finish_a_table_against_the_ai(page: Any, server: str, *, rated: bool) -> None:
    """From the lobby, the logged-in player of ``page`` sits at a TOHM table against the easiest AI
    (rated or not) and resigns at once: a finished table on their profile (lost; rated: a new rating)."""
    page.goto(server + "/")
    page.locator("#rated").wait_for()
    page.select_option("#game", "tohm")
    page.select_option("#players", "2")
    page.select_option("#seat-0", "open")
    page.select_option("#seat-1", "ai:beginner")
    page.set_checked("#rated", rated)
    page.click("#create-btn")
    page.wait_for_url(re.compile(r"/t/"))
    wait_state(page, "s.you === 0 && s.status === 'playing'")
    page.click("#resign")
    page.locator("dialog#confirm").wait_for(state="visible")
    page.click("#confirm-yes")
    wait_state(page, "s.status === 'over'")


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_profiles_finished_tables_fit_a_phone(server: str, browser: Any, artifacts: Path, lang: str) -> None:
    width, height = 390, 844
    name = f"Bartholomew Longname {uuid.uuid4().hex[:6]}"
    ctx, page, errors = logged_in(browser, server, name, width, height, lang)
    ctx_o, opponent, _ = logged_in(browser, server, f"Opponent {uuid.uuid4().hex[:6]}")
    try:
        # a rated result needs a real game between two accounts (a resignation at once against the AI
        # would rate nothing): a rated table played to its end, then a casual one against the AI
        finish_a_rated_table(page, opponent, server)
        finish_a_table_against_the_ai(page, server, rated=False)
        page.goto(f"{server}/players/{name.replace(' ', '%20')}")
        page.wait_for_function("() => document.body.dataset.ready === '1'")
        rows = page.locator("#finished-list tr")
        assert rows.count() == 2
        # every figure of a row is on screen, each with its column's name: nothing is cut at the right edge
        assert page.evaluate(OVERFLOW_JS, ["#finished-tables *", width]) == []
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width, page.evaluate(WIDE_JS, width)
        page.locator(".rating-card details summary").click()  # the rating history as a table fits too
        assert page.evaluate(OVERFLOW_JS, [".rating-card details *", width]) == []
        ended, replay = ("Ended", "replay") if lang == "en" else ("Conclusa", "rivedi")
        rated_row = rows.nth(1)  # newest first: the unrated table, then the rated one
        assert rated_row.locator(".tag").inner_text() == ("rated" if lang == "en" else "classificato")
        assert rows.nth(0).locator(".tag").count() == 0
        for k in range(2):
            cell = rows.nth(k).locator("td.ended")
            assert cell.is_visible() and ended in cell.inner_text()
            assert rows.nth(k).locator("a", has_text=replay).is_visible()
        assert_accessible(page, f"a profile on a phone ({lang})")
        page.screenshot(path=str(artifacts / f"ratings-profile-finished-{lang}-{width}x{height}.png"), full_page=True)
        # on a desktop the same figures are a table with its column headers
        page.set_viewport_size({"width": DESKTOP_SIZE[0], "height": DESKTOP_SIZE[1]})
        assert page.locator("#finished-tables thead th").first.is_visible()
        assert page.evaluate(OVERFLOW_JS, ["#finished-tables *", DESKTOP_SIZE[0]]) == []
        assert errors == []
    finally:
        ctx.close()
        ctx_o.close()
