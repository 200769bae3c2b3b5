"""Phone-sized play: tapping moves on a 390x844 touch screen, in real Chromium.

The helpers tap a move of each game (the journey test uses them) checking on the way that the page never
scrolls sideways, every button is at least 44 px both ways and the page text at least 14 px, and the
board's legal targets at least 24 px (the board fits the screen's width: small_targets.py). Each game played
to the end on phones: test_browser_fit.py. Here: TRI's battle cards come into sight.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.browser.small_targets import MIN_TARGET
from tests.browser.test_browser_play import create_via_lobby, state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PHONES = [(390, 844), (360, 740)]
GAMES = [("exactly", 3), ("tohm", 2), ("tri", 2), ("exagon", 2)]
# what a player taps on the board while it is their turn
TARGETS = {"exactly": ".stack.legal", "tohm": ".cell.legal", "tri": ".highlights .legal, .card.legal",
           "exagon": ".hand .legal, .spot.legal"}
MIN_TAP = 44
MIN_TEXT = 14

LAYOUT_JS = """() => {
  const doc = document.documentElement;
  const size = (sel) => [...document.querySelectorAll(sel)].filter((e) => e.getClientRects().length)
    .map((e) => [sel, parseFloat(getComputedStyle(e).fontSize)]);
  const texts = [...size("body"), ...size("#banner"), ...size("#controls span"), ...size("#controls button"),
    ...size("#log li"), ...size(".seat .name"), ...size(".seat .detail"), ...size("#my-name"), ...size("#conn")];
  const board = document.querySelector("#board");
  const scale = board.getScreenCTM().a;
  // (not counted: the "€1" stamped on each 1-euro token, a picture, the tokens are counted in words beside them;
  // the star value in the middle of an EXAGON hand tile, readable once the tile is on the table)
  const svgText = [...board.querySelectorAll("text")].filter((t) => t.getAttribute("font-size")
    && t.textContent.trim() && t.textContent !== "€1"
    && !t.closest(".hand .tile text:last-child"))
    .map((t) => [t.textContent, parseFloat(t.getAttribute("font-size")) * t.getScreenCTM().a]);
  const buttons = [...document.querySelectorAll("main button")].filter((e) => e.getClientRects().length)
    .map((e) => { const r = e.getBoundingClientRect(); return [e.textContent, r.width, r.height]; });
  return {scrollWidth: doc.scrollWidth, innerWidth: window.innerWidth, bodyScroll: document.body.scrollWidth,
          texts, svgText, buttons, scale};
}"""


def phone_page(browser: Any, width: int, height: int) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": width, "height": height}, has_touch=True, is_mobile=True,
                              device_scale_factor=2)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(20_000)
    return ctx, page, errors


def check_layout(page: Any, game: str) -> None:
    m = page.evaluate(LAYOUT_JS)
    assert m["scrollWidth"] <= m["innerWidth"], f"the page scrolls sideways: {m['scrollWidth']} > {m['innerWidth']}"
    assert m["bodyScroll"] <= m["innerWidth"]
    small = [t for t in m["texts"] if t[1] < MIN_TEXT]
    assert not small, f"text under {MIN_TEXT} px: {small}"
    narrow = [b for b in m["buttons"] if b[1] < MIN_TAP or b[2] < MIN_TAP]
    assert not narrow, f"buttons under {MIN_TAP} px: {narrow}"
    targets = page.locator("#board").locator(TARGETS[game])
    assert targets.count() > 0 or page.locator("#pass").count(), "nothing to tap"
    for k in range(targets.count()):
        box = targets.nth(k).bounding_box()
        assert box["width"] >= MIN_TARGET and box["height"] >= MIN_TARGET, f"{game} target {k} is {box}"


def tap_move(page: Any, game: str, rng: random.Random) -> None:
    """One legal move made by tapping the board (and the buttons it offers)."""
    board = page.locator("#board")
    if game == "tohm":
        cells = board.locator(".cell.legal")
        if cells.count() == 0:
            page.tap("#pass")
            return
        cell = cells.nth(rng.randrange(cells.count()))
        from_cell = "move-from" in (cell.get_attribute("class") or "")
        cell.tap()
        if from_cell:
            targets = board.locator(".cell.legal:not(.move-from)")
            targets.first.wait_for()
            targets.nth(rng.randrange(targets.count())).tap()
    elif game == "exactly":
        stacks = board.locator(".stack.legal")
        if stacks.count() == 0:
            page.tap("#pass")
            return
        stacks.nth(rng.randrange(stacks.count())).tap()
        dests = board.locator(".pile.dest")
        dests.first.wait_for()
        dests.nth(rng.randrange(dests.count())).tap(position={"x": 20, "y": 20})
    elif game == "tri":
        cards = board.locator(".card.legal")
        targets = board.locator(".highlights .legal")
        if cards.count():
            cards.nth(rng.randrange(cards.count())).tap()
        elif targets.count():
            seq = state(page)["seq"]
            targets.nth(rng.randrange(targets.count())).tap()
            page.wait_for_function(
                "(n) => window.ludoteca.seq > n || window.ludoteca.sent"
                " || document.querySelector('#controls button.primary:not(#pass)')", arg=seq)
            choice = page.locator("#controls button.primary:not(#pass)")
            if not page.evaluate("window.ludoteca.sent") and choice.count():
                choice.first.tap()
        else:
            page.tap("#pass")
    elif game == "exagon":
        if page.locator("#pass").count():
            page.tap("#pass")
            return
        tiles = board.locator(".hand .legal")
        for k in rng.sample(range(tiles.count()), tiles.count()):
            tiles.nth(k).tap()
            spots = board.locator(".spot.legal")
            if spots.count():
                check_layout(page, game)  # the spots of the chosen tile are tap-sized too
                spots.nth(rng.randrange(spots.count())).tap()
                page.locator("#place").wait_for()
                check_layout(page, game)  # and so are the rotate / place buttons
                page.tap("#place")
                return
        page.tap("#stop")
    else:
        raise AssertionError(game)


def test_tri_battle_cards_come_into_sight_on_a_phone(server: str, browser: Any, artifacts: Path) -> None:
    """On a phone the battle's cards, drawn under the board, are in sight when the player must choose one."""
    ctx, page, errors = phone_page(browser, 390, 844)
    create_via_lobby(page, server, "tri", ["open", "ai:random"], "Ann")
    wait_state(page, "s.status === 'playing'")
    rng = random.Random(5)
    battles = 0
    for _ in range(120):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        if s["status"] != "playing":
            break
        page.wait_for_timeout(150)
        if state(page)["seq"] != s["seq"] or not state(page)["mine"]:
            continue
        cards = page.locator("#board .card.legal")
        if cards.count():
            width = page.evaluate("window.innerWidth")
            boxes = [cards.nth(k).bounding_box() for k in range(cards.count())]
            assert all(b["x"] >= 0 and b["x"] + b["width"] <= width for b in boxes), f"a card out of sight: {boxes}"
            if battles == 0:
                page.screenshot(path=str(artifacts / "phone-tri-battle-390.png"))
            battles += 1
            if battles >= 3:
                break
        tap_move(page, "tri", rng)
        wait_seq_above(page, s["seq"])
    assert battles >= 1, "no battle card choice came up"
    assert errors == []
    ctx.close()


COVERED_JS = """() => {
  // every scroll position of the page: is a control below the board (the list of all moves, resign, the pace box)
  // ever under the sticky play bar (whose turn) or the sticky dock (the move buttons)?
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden";
  const controls = [...document.querySelectorAll("#moves summary, #moves button, #forced-pref, #seat-actions button, "
    + "#pace-box button, #pace-box input")].filter(shown);
  const sticky = [document.querySelector("#play-bar"), document.querySelector("#play-dock")];
  const found = [];
  const last = document.scrollingElement.scrollHeight - innerHeight;
  for (let y = 0; y <= last + 8; y += 8) {
    scrollTo(0, Math.min(y, last));
    for (const cover of sticky) {
      const c = cover.getBoundingClientRect();
      for (const e of controls) {
        const r = e.getBoundingClientRect();
        if (r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom && r.bottom > 0) {
          found.push(`${cover.id} over "${(e.textContent || e.id).trim().slice(0, 40)}" scrolled to ${scrollY} px`);
        }
      }
    }
  }
  scrollTo(0, 0);
  return found.slice(0, 8);
}"""


def post_json(base: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    import json
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method="GET" if body is None else "POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as res:
        return dict(json.loads(res.read()))


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_sticky_play_bar_never_covers_the_list_of_moves_on_a_phone(server: str, browser: Any, lang: str,
                                                                        artifacts: Path) -> None:
    """At 390x844 the play bar (whose turn) stays on screen only while the board does: scrolled down to the list
    of all legal moves, resign and a turn-based table's box, none of them is ever under it (nor under the dock)."""
    from ludoteca.registry import GAMES
    from tests.browser.conftest import language_context, watch_errors

    problems: list[str] = []
    for game in GAMES:  # a turn-based table of two people (the longest table page), seen by the one to move
        made = post_json(server, "/api/tables", {
            "game": game, "players": 2, "sit": 0, "name": "Anna", "seats": [{"kind": "open"}, {"kind": "open"}],
            "pace": "turn-based", "move_time": 86400, "reserve": 3600})
        joined = post_json(server, f"/api/tables/{made['id']}/join", {"seat": 1, "name": "Bob"})
        seat = int(post_json(server, f"/api/tables/{made['id']}/pace")["seat"])
        token = made["token"] if seat == 0 else joined["token"]
        ctx = language_context(browser, lang, 390, 844)
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(server + "/leaderboard")
        page.evaluate("([id, s]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify(s))",
                      [made["id"], {"seat": seat, "token": token}])
        page.goto(server + made["url"])
        wait_state(page, "s.mine && s.status === 'playing'")
        page.locator("#moves summary").wait_for()
        page.locator("#pace-box").wait_for()
        page.wait_for_timeout(300)  # the board drawn for the screen
        problems += [f"{game} {lang}: {p}" for p in page.evaluate(COVERED_JS)]
        page.locator("#moves summary").scroll_into_view_if_needed()
        page.screenshot(path=str(artifacts / f"phone-moves-{game}-{lang}.png"))
        problems += [f"{game} {lang}: page error {e}" for e in errors]
        ctx.close()
    assert not problems, "\n".join(problems)
