"""The new player's journey, end to end in real Chromium: a person who never saw these
games, with a browser set to Italian, on a 390x844 touch phone.

They open the lobby, open a game's rules page from it and read it to the end, complete the guided
first game of each of the four games (``/learn/<game>``, reached from the lobby: each step's asked
move is tapped on the highlighted board, the explanation read, the next step opened); TOHM's guide
ends with "play against the AI", and they play that whole game against the easiest AI by tapping —
the forced passes are played for them (at least one happens) — and see the result. Every page is
in Italian (``<html lang="it">``, no English word of :data:`tests.browser.conftest.ENGLISH_WORDS`
visible), never scrolls sideways, and the pages where they play (the lobby, the guides, the table)
keep text at least 14 px and tap targets at least 44 px. Screenshots of each stage go to
``test-artifacts/journey-*.png``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import english_on_page, language_context, layout_problems, watch_errors
from tests.browser.test_browser_phone import tap_move
from tests.browser.test_browser_play import state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]

GAMES = ("exactly", "tri", "exagon", "tohm")
NAMES = ("exactly", "TRI", "TOHM", "EXAGON", "ludoteca", "Anna", "English", "Italiano")
"""Words that are names (of the games, the product, the player, the languages), not English text."""


def assert_italian(page: Any, where: str) -> None:
    lang = page.evaluate("document.documentElement.lang")
    assert lang == "it", f"{where}: <html lang={lang!r}>, not Italian"
    english = english_on_page(page, NAMES)
    assert not english, f"{where}: English shown to an Italian reader: {english[:8]}"


def assert_phone_layout(page: Any, where: str, play: bool) -> None:
    problems = layout_problems(page, phone=play)
    assert not problems, f"{where}: " + "; ".join(problems)


def open_lobby(page: Any, base: str) -> None:
    page.goto(base + "/")
    page.wait_for_selector("#seat-0")  # the create form is built from /api/games
    page.fill("#name", "Anna")


def read_rules(page: Any, base: str, game: str, artifacts: Path) -> None:
    """From the lobby, the rules link of ``game``, then the page read by swiping to its end."""
    open_lobby(page, base)
    page.select_option("#game", game)
    page.locator("#rules-link").tap()
    page.wait_for_url(f"**/rules/{game}*")
    page.wait_for_load_state("networkidle")
    assert_italian(page, f"the rules of {game}")
    assert_phone_layout(page, f"the rules of {game}", play=False)
    page.screenshot(path=str(artifacts / f"journey-rules-{game}.png"))
    for _ in range(200):  # read on, a screen at a time, to the end
        at_end = page.evaluate("() => scrollY + innerHeight >= document.documentElement.scrollHeight - 2")
        if at_end:
            break
        page.mouse.wheel(0, 700)
        page.wait_for_timeout(30)
    assert page.evaluate("() => scrollY > 0 && scrollY + innerHeight >= document.documentElement.scrollHeight - 2")
    figures = page.locator("figure svg")
    assert figures.count() >= 1, f"the rules of {game} show no drawing"


def tap_highlighted(page: Any, game: str) -> None:
    """The move a guide's step asks for, made as a person does: tap what the board highlights
    (only the asked moves are), then what it highlights next, then the button that confirms."""
    board = page.locator("#board")
    if board.locator(".clickable").count() == 0:  # a pass (or EXAGON's stop) is asked
        page.locator("#controls #pass, #controls #stop").first.tap()
        return
    if game == "tohm":
        first = board.locator(".cell.legal").first
        two_taps = "move-from" in (first.get_attribute("class") or "")
        first.tap()
        if two_taps:
            board.locator(".cell.legal:not(.move-from)").first.tap()
    elif game == "exactly":
        board.locator(".stack.legal").first.tap()
        board.locator(".pile.dest").first.tap(position={"x": 20, "y": 20})
    elif game == "tri":
        cards = board.locator(".card.legal")
        if cards.count():
            cards.first.tap()
            return
        board.locator(".clickable").first.tap()
        page.wait_for_timeout(150)
        choice = page.locator("#controls button.primary:not(#pass)")
        if page.locator("#after-box").is_hidden() and choice.count():
            choice.first.tap()
    elif game == "exagon":
        board.locator(".hand .legal").first.tap()
        spots = board.locator(".spot.legal")
        if spots.count():
            spots.first.tap()
            for _ in range(page.evaluate("() => window.ludotecaGuide.step.offered.length")):
                page.locator("#rotate").tap()  # the lesson asks for the tile turned, as its text says
            page.locator("#place").tap()
        else:  # the last tile is given away
            page.locator("#controls button:not(#stop):not(#pass)").first.tap()
    else:
        raise AssertionError(f"no taps for {game}")


def learn(page: Any, base: str, game: str, artifacts: Path) -> None:
    """The guided first game of ``game``, from the lobby's link: every step's move tapped on the
    highlighted board, its explanation read, the next step opened, up to the last page."""
    open_lobby(page, base)
    page.select_option("#game", game)
    link = page.locator("#learn-link")
    assert link.count(), f"the lobby has no link to the guided game of {game}"
    link.tap()
    page.wait_for_url(f"**/learn/{game}*")
    page.wait_for_selector("#progress:not(:empty)")
    for n in range(1, 41):
        if page.locator("#finish").is_visible():
            break
        page.locator("#board .clickable, #controls #pass, #controls #stop").first.wait_for()
        page.wait_for_timeout(100)
        where = f"step {n} of the guided {game} game"
        assert_italian(page, where)
        assert_phone_layout(page, where, play=True)
        if n == 1:
            page.screenshot(path=str(artifacts / f"journey-learn-{game}.png"), full_page=True)
        tap_highlighted(page, game)
        page.locator("#after-box").wait_for(state="visible")
        assert page.locator("#after").inner_text().strip(), f"{where} explains nothing"
        assert_italian(page, f"the explanation of {where}")
        page.locator("#next").tap()
    else:
        raise AssertionError(f"the guided {game} game did not end")
    assert n >= 3, f"the guided {game} game has only {n - 1} steps"
    assert_italian(page, f"the end of the guided {game} game")
    assert_phone_layout(page, f"the end of the guided {game} game", play=True)
    assert page.locator("#play").is_visible()


def play_tohm_to_the_end(page: Any, artifacts: Path) -> int:
    """The TOHM game of this page (the person at seat 1, an AI opposite) played to its end by
    tapping; a lone legal move (a forced pass) is left to the page, which plays it after its note.
    Returns how many forced moves the page played."""
    rng = random.Random(12)
    forced = taps = 0
    for _ in range(2000):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        assert s is not None
        if s["status"] != "playing":
            break
        legal = page.evaluate("() => window.ludoteca.msg.legal")
        if len(legal) == 1:
            page.locator("#forced").wait_for(state="visible", timeout=5000)  # the note, then the page plays it
            if forced == 0:
                page.screenshot(path=str(artifacts / "journey-tohm-forced.png"))
                assert_italian(page, "the forced-move note")
            wait_seq_above(page, s["seq"])
            forced += 1
            continue
        if taps == 2:
            page.wait_for_timeout(200)
            assert_italian(page, "the TOHM table")
            assert_phone_layout(page, "the TOHM table", play=True)
            page.screenshot(path=str(artifacts / "journey-tohm-playing.png"), full_page=True)
        tap_move(page, "tohm", rng)
        wait_seq_above(page, s["seq"])
        taps += 1
    else:
        raise AssertionError("the TOHM game did not end")
    assert taps > 5, f"only {taps} moves were tapped"
    return forced


def test_a_new_italian_player_on_a_phone_learns_every_game_and_plays_tohm_to_the_end(
        server: str, browser: Any, artifacts: Path) -> None:
    ctx = language_context(browser, "it", 390, 844)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    errors = watch_errors(page)

    open_lobby(page, server)
    assert_italian(page, "the lobby")
    assert_phone_layout(page, "the lobby", play=True)
    page.screenshot(path=str(artifacts / "journey-lobby.png"), full_page=True)

    read_rules(page, server, "tohm", artifacts)

    for game in GAMES:  # TOHM last: its guide ends at a real game against the easiest AI
        learn(page, server, game, artifacts)
    page.fill("#my-name", "Anna")
    page.locator("#play").tap()
    page.wait_for_url("**/t/*")
    wait_state(page, "s.you === 0 && s.status === 'playing'")
    forced = play_tohm_to_the_end(page, artifacts)
    assert forced >= 1, "no forced pass was played for the player in a whole TOHM game"

    wait_state(page, "s.status === 'over'")
    result = page.locator("#result-box")
    result.wait_for(state="visible")
    seats = page.evaluate("() => window.ludoteca.msg.seats.map((seat) => seat.name)")
    assert seats[0] == "Anna"
    winners = page.evaluate("() => window.ludoteca.msg.result.winners")
    text = result.inner_text()
    assert text.strip() and all(seats[w] in text for w in winners), f"the result does not name the winner: {text}"
    page.wait_for_timeout(300)
    assert_italian(page, "the end of the TOHM game")
    assert_phone_layout(page, "the end of the TOHM game", play=True)
    page.screenshot(path=str(artifacts / "journey-tohm-over.png"), full_page=True)
    assert errors == []
    ctx.close()
