"""The guided first game of every game ("Learn to play") in real Chromium on a 390x844 phone.

A new player, in Italian, opens ``/learn/<game>`` (the lobby links to it), makes every asked move by
tapping the real board (the game's own client.js), reads what happened, and reaches the last step's
"Play a real game against the easiest AI" button; one run in English presses it and lands at a real
table against the easiest AI. Along the way: a wrong (but legal) move gets the friendly "not this one"
and the position stays; the page never scrolls sideways; text is at least 14 px and buttons 44 px.
Screenshots: ``test-artifacts/guide-<game>-<lang>.png`` (a step of each game in both languages).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ludoteca.registry import GAMES as ALL_GAMES
from ludoteca.registry import game_class
from tests.conftest import hint

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

GAMES = [g for g in ALL_GAMES if game_class(g).guide() is not None]
"""The games that ship a guided first game (``guide.json``)."""


def shot_step(game: str) -> int:
    """The step whose explanation is photographed (a scoring moment: the game's ``GUIDE_SHOT_STEP`` hint)."""
    return int(hint(game, "GUIDE_SHOT_STEP", 1))

MIN_TAP = 44
MIN_TEXT = 14

LAYOUT_JS = """() => {
  const doc = document.documentElement;
  const shown = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length);
  const texts = ["body", "#before", "#progress", "#after", ".guide-log li", "#feedback", "#controls span"]
    .flatMap((sel) => shown(sel).map((e) => [sel, parseFloat(getComputedStyle(e).fontSize)]));
  const buttons = shown("main button").map((e) => {
    const r = e.getBoundingClientRect();
    return [e.textContent, r.width, r.height];
  });
  return {scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth, texts, buttons};
}"""


def phone(browser: Any, lang: str) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                              device_scale_factor=2, locale="it-IT" if lang == "it" else "en-US")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.set_default_timeout(20_000)
    return ctx, page, errors


def check_layout(page: Any) -> None:
    m = page.evaluate(LAYOUT_JS)
    assert m["scrollWidth"] <= m["innerWidth"], f"the page scrolls sideways: {m['scrollWidth']} > {m['innerWidth']}"
    small = [t for t in m["texts"] if t[1] < MIN_TEXT]
    assert not small, f"text under {MIN_TEXT} px: {small}"
    narrow = [b for b in m["buttons"] if b[1] < MIN_TAP or b[2] < MIN_TAP]
    assert not narrow, f"buttons under {MIN_TAP} px: {narrow}"
    cut = page.evaluate(CUT_TEXT_JS)
    assert not cut, f"board texts cut by the board's edge: {cut}"


CUT_TEXT_JS = """() => {
  // the words drawn on the board (its labels, in the page's language) lie whole inside it
  const board = document.querySelector("#board");
  const edge = board.getBoundingClientRect();
  return [...board.querySelectorAll("text")].filter((t) => t.textContent.trim() && t.getClientRects().length)
    .map((t) => [t.textContent.trim(), t.getBoundingClientRect()])
    .filter(([, r]) => r.left < edge.left - 1 || r.right > edge.right + 1)
    .map(([text, r]) => `"${text}" spans ${Math.round(r.left)}..${Math.round(r.right)} px of ${Math.round(edge.left)}..`
                        + `${Math.round(edge.right)}`);
}"""


def tap(page: Any, selector: str, **kw: Any) -> None:
    page.locator(selector).first.click(**kw)


def make(page: Any, game: str, action: dict[str, Any], offered: list[dict[str, Any]] | None = None) -> None:
    """Makes ``action`` by tapping the board as a player would (``offered``: the step's other moves shown
    first, e.g. the ways a tile fits before the asked one)."""
    offered = offered or []
    if "pass" in action:
        tap(page, "#controls #pass")
    elif "stop" in action:
        tap(page, "#controls #stop")
    elif game == "exactly":
        tap(page, f'#board .stack.legal[data-pile="{action["from"]}"][data-coin="{action["coin"]}"]')
        tap(page, f'#board .pile.dest[data-pile="{action["to"]}"]', position={"x": 30, "y": 12})
    elif game == "tri":
        if "card" in action:
            tap(page, f'#board .card.legal[data-card="{action["card"]}"]')
        else:
            kind, where = next(iter(action.items()))
            triangle = where["to"] if kind == "teleport" else where
            tap(page, f'#board .legal[data-tri="{",".join(map(str, triangle))}"]')
    elif game == "tohm":
        if "move" in action:
            start, end = action["move"]
            tap(page, f'#board .cell.legal[data-cell="{start[0]},{start[1]}"]')
            tap(page, f'#board .cell.legal[data-cell="{end[0]},{end[1]}"]')
        else:
            cell = next(iter(action.values()))
            tap(page, f'#board .cell.legal[data-cell="{cell[0]},{cell[1]}"]')
    elif game == "exagon":
        if "give" in action:
            tap(page, f'#board [data-hand-tile="{action["give"]["tile"]}"]')
            tap(page, "#controls button")
        else:
            p = action["place"]
            tap(page, f'#board [data-hand-tile="{p["tile"]}"]')
            tap(page, f'#board .spot.legal[data-spot="{p["at"][0]},{p["at"][1]}"]')
            shown = [o["place"]["rot"] for o in offered if "place" in o and o["place"]["tile"] == p["tile"]
                     and o["place"]["at"] == p["at"]]
            for _ in shown:  # the tile first appears turned the offered way: Rotate to the asked one
                tap(page, "#controls #rotate")
            tap(page, "#controls #place")
    else:  # any other game: the taps its package's testing.py gives (``taps(action)``: CSS selectors, in order)
        taps = hint(game, "taps", None)
        assert taps is not None, f"{game}'s testing.py has no taps(action) for the browser tests"
        for selector in taps(action):
            tap(page, selector)


def step_info(page: Any) -> dict[str, Any]:
    info: dict[str, Any] = page.evaluate("() => window.ludotecaGuide && window.ludotecaGuide.step")
    return info


def complete(page: Any, server: str, game: str, lang: str, artifacts: Path) -> int:
    """Goes through every step of ``game``'s guide by tapping; returns the number of steps."""
    page.goto(f"{server}/learn/{game}")
    page.wait_for_selector("#progress:not(:empty)")
    count = page.evaluate("() => window.ludotecaGuide.info.steps.length")
    assert 5 <= count <= 12
    for n in range(1, count + 1):
        page.wait_for_function(f"() => window.ludotecaGuide.step && window.ludotecaGuide.step.step === {n}")
        step = step_info(page)
        assert step["before"] and step["title"]
        assert page.locator("#step-title").inner_text() == step["title"]
        check_layout(page)
        make(page, game, step["moves"][0], step["offered"])
        page.wait_for_selector("#after-box:not([hidden])")
        assert page.locator("#after").inner_text().strip()
        assert page.locator("#log li").count() >= 1  # the engine's events, announced like at a table
        check_layout(page)
        if n == shot_step(game):
            page.locator("#after-box").scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"guide-{game}-{lang}.png"), full_page=True)
        page.locator("#next").click()
        if n == count:  # the game is over: said in words beside the board, not hidden by an announcement
            assert page.locator("#result").inner_text().strip()
            assert not page.locator("#announce.show").count()
    page.wait_for_selector("#finish:not([hidden])")
    check_layout(page)
    return int(count)


@pytest.mark.parametrize("game", GAMES)
def test_each_guide_in_italian_on_a_phone(server: str, browser: Any, artifacts: Path, game: str) -> None:
    ctx, page, errors = phone(browser, "it")
    try:
        ctx.add_cookies([{"name": "ludoteca_lang", "value": "it", "url": server}])
        complete(page, server, game, "it", artifacts)
        assert page.locator("#finish-title").inner_text() == "Gioca una vera partita contro l'IA più facile"
        assert page.locator("#play").inner_text() == "Gioca contro l'IA"
        page.screenshot(path=str(artifacts / f"guide-{game}-it-finish.png"), full_page=True)
        assert not errors, errors
    finally:
        ctx.close()


def test_a_wrong_move_is_not_this_one_and_the_position_stays(server: str, browser: Any) -> None:
    ctx, page, errors = phone(browser, "it")
    try:
        page.goto(f"{server}/learn/tohm#1")
        page.wait_for_function("() => window.ludotecaGuide?.step && window.ludotecaGuide?.step?.step === 1")
        # only the asked move is highlighted on the board
        assert page.locator("#board .cell.legal").count() == 1
        before = page.evaluate("() => JSON.stringify(window.ludotecaGuide.step.position)")
        page.locator("#other summary").click()
        page.locator("#other-moves button").first.click()
        page.wait_for_selector("#feedback:not([hidden])")
        text = page.locator("#feedback").inner_text()
        assert text.startswith("Non questa:") and "Invece:" in text, text
        assert page.locator("#after-box").is_hidden()
        assert page.evaluate("() => JSON.stringify(window.ludotecaGuide.step.position)") == before
        make(page, "tohm", json.loads(page.evaluate("() => JSON.stringify(window.ludotecaGuide.step.moves[0])")))
        page.wait_for_selector("#after-box:not([hidden])")
        assert not errors, errors
    finally:
        ctx.close()


def test_english_guide_ends_at_a_real_table_against_the_easiest_ai(server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = phone(browser, "en")
    try:
        page.goto(f"{server}/")
        page.wait_for_selector("#learn-link[href]")
        page.select_option("#game", "tohm")
        page.locator("#learn-link").click()
        page.wait_for_url("**/learn/tohm**")
        complete(page, server, "tohm", "en", artifacts)
        assert page.locator("#finish-title").inner_text() == "Play a real game against the easiest AI"
        page.fill("#my-name", "Ada")
        page.locator("#play").click()
        page.wait_for_url("**/t/**")
        page.wait_for_selector(".seat[data-seat='1']")
        seats = page.locator("#seats").inner_text()
        assert "Ada" in seats and "beginner" in seats and "random" not in seats  # the easiest ladder level
        assert not errors, errors
    finally:
        ctx.close()


def test_the_guides_in_english_screenshots(server: str, browser: Any, artifacts: Path) -> None:
    """A step of each game in English (the Italian ones come from the runs above)."""
    ctx, page, errors = phone(browser, "en")
    try:
        for game in GAMES:
            page.goto(f"{server}/learn/{game}#{shot_step(game)}")
            page.wait_for_function(f"() => window.ludotecaGuide.step?.step === {shot_step(game)}")
            make(page, game, step_info(page)["moves"][0], step_info(page)["offered"])
            page.wait_for_selector("#after-box:not([hidden])")
            check_layout(page)
            page.screenshot(path=str(artifacts / f"guide-{game}-en.png"), full_page=True)
        assert not errors, errors
    finally:
        ctx.close()


def test_turning_a_tile_is_the_only_way_through_the_rotation_lesson(server: str, browser: Any, artifacts: Path) -> None:
    """The lesson on turning a tile: placed the way it first fits, it is "not this one" and nothing changes;
    turned with the Rotate control, it passes. The hourglass runs on screen meanwhile."""
    ctx, page, errors = phone(browser, "it")
    try:
        page.goto(f"{server}/learn/exagon#1")
        page.wait_for_function("() => window.ludotecaGuide?.step?.step === 1")
        count = page.evaluate("() => window.ludotecaGuide.info.steps.length")
        n = next(k for k in range(1, count + 1)
                 if page.evaluate(f"async () => (await (await fetch('/api/guide/exagon/{k}')).json()).offered.length"))
        page.goto(f"{server}/learn/exagon#{n}")
        page.reload()
        page.wait_for_function(f"() => window.ludotecaGuide?.step?.step === {n}")
        step = step_info(page)
        asked = step["moves"][0]["place"]
        tap(page, f'#board [data-hand-tile="{asked["tile"]}"]')
        tap(page, f'#board .spot.legal[data-spot="{asked["at"][0]},{asked["at"][1]}"]')
        assert "2" in page.locator("#controls #rotate").inner_text()  # two ways fit
        tap(page, "#controls #place")  # not turned: the way it first fits
        page.wait_for_selector("#feedback:not([hidden])")
        assert page.locator("#feedback").inner_text().startswith("Non questa:")
        assert page.locator("#after-box").is_hidden()
        make(page, "exagon", step["moves"][0], step["offered"])  # turned with Rotate, then placed
        page.wait_for_selector("#after-box:not([hidden])")
        assert page.locator("#after").inner_text().strip()
        # the hourglass of a turn is on screen, in Italian, and it runs
        page.goto(f"{server}/learn/exagon#{n + 1}")
        page.reload()
        page.wait_for_function(f"() => window.ludotecaGuide?.step?.step === {n + 1}")
        page.wait_for_selector("#guide-clock:not([hidden])")
        assert "clessidra" in page.locator("#guide-clock").inner_text().lower()
        first = page.locator("#guide-clock-seconds").inner_text()
        page.wait_for_function(f"() => document.getElementById('guide-clock-seconds').textContent !== {first!r}")
        check_layout(page)
        page.screenshot(path=str(artifacts / "guide-exagon-it-clock.png"), full_page=False)
        assert not errors, errors
    finally:
        ctx.close()
