"""Every page fits a phone, in real Chromium with touch, in Italian and English.

Each game at its smallest and its largest number of players (asked of the game's class) is played to the
end against the fastest AI by tapping the board and the buttons it offers, on a 390×844 or a 360×740
phone (a short game through the game's declared ``turn_limit`` option). On the player's first turn the same
table is also seen at the other phone size and held sideways; at the end, in the other language. Everywhere:

- the page never scrolls sideways (``document.scrollingElement.scrollWidth <= innerWidth``);
- at the default zoom the whole board is inside the screen's width and no taller than the screen, and the
  zoom buttons make it larger;
- every visible control is at least 44×44 CSS px, except the kinds listed with their reason in
  ``small_targets.py``, which are at least 24×24; no text is under 12 px;
- no toast, log line or option control shows JSON (a ``{`` or a ``"``);
- an Italian page shows no text of the English catalogue (a text whose Italian differs) and no English word.

The other pages (lobby, rules, learn, replay, profile, leaderboard, log-in, sign-up) are checked the same way
at both phone sizes and sideways. Screenshots go to ``$LUDOTECA_SCREENSHOTS`` (default
``/tmp/ludoteca-screens``), printed by the tests.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from ludoteca.registry import GAMES, game_class
from tests.browser.conftest import english_on_page, language_context, watch_errors
from tests.browser.small_targets import MIN_CONTROL, MIN_TARGET, SELECTOR
from tests.browser.test_browser_play import state as state_or_none
from tests.browser.test_browser_play import wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PHONES = [(390, 844), (360, 740)]
MIN_TEXT = 12
CASES = [(name, players) for name in GAMES
         for players in sorted({game_class(name).min_players, game_class(name).max_players})]
FINISHED: list[str] = []  # the tables played to the end here (their replays are checked with the other pages)


def state(page: Any) -> dict[str, Any]:
    """The table as the page knows it (its seq, status, whether the player is to move)."""
    s = state_or_none(page)
    assert s is not None, "the table page has no position"
    return s


def screens() -> Path:
    folder = Path(os.environ.get("LUDOTECA_SCREENSHOTS", "/tmp/ludoteca-screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def post(base: str, path: str, body: dict[str, Any], lang: str = "en") -> dict[str, Any]:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Accept-Language": lang})
    with urllib.request.urlopen(req, timeout=20) as res:
        return dict(json.loads(res.read()))


FIT_JS = """([small, minControl, minTarget, minText]) => {
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden"
    && !e.closest("details:not([open]) > :not(summary)");
  const name = (e) => (e.getAttribute("aria-label") || e.textContent || e.id || e.tagName).trim()
    .replace(/\\s+/g, " ").slice(0, 40);
  const problems = [];
  const doc = document.scrollingElement;
  if (doc.scrollWidth > innerWidth) {
    problems.push(`the page is ${doc.scrollWidth} px wide in a ${innerWidth} px screen`);
  }
  const board = document.querySelector("#board");
  if (board && board.getClientRects().length) {
    const b = board.getBoundingClientRect();
    if (b.left < -0.5 || b.right > innerWidth + 0.5) {
      problems.push(`the board spans ${Math.round(b.left)}..${Math.round(b.right)} px of ${innerWidth}`);
    }
    if (b.height > innerHeight + 0.5) {
      problems.push(`the board is ${Math.round(b.height)} px tall in a ${innerHeight} px screen`);
    }
  }
  const controls = [...document.querySelectorAll(
    "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [tabindex='0']")];
  for (const e of controls) {
    if (!shown(e) || getComputedStyle(e).pointerEvents === "none") continue; // (a diagram's board is a picture)
    // a checkbox is tapped through its label too: the larger counts
    const parts = [e, ...(["checkbox", "radio"].includes(e.type) ? [...(e.labels || [])] : [])];
    const r = parts.map((x) => x.getBoundingClientRect())
      .reduce((a, c) => (c.width * c.height > a.width * a.height ? c : a));
    if (r.width < 1 || r.height < 1) continue;
    const least = e.matches(small) ? minTarget : minControl;
    if (r.width < least - 0.5 || r.height < least - 0.5) {
      const what = `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}`;
      problems.push(`"${name(e)}" (${what}) is ${Math.round(r.width)}×${Math.round(r.height)} px, under ${least}`);
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e || e.closest("script, style, noscript, svg") || !shown(e)) continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    if (size < minText - 0.01) problems.push(`text "${n.textContent.trim().slice(0, 30)}" is ${size} px`);
  }
  // a fold shows that it opens: the browser's triangle (a list item) or one drawn before its title
  for (const s of document.querySelectorAll("summary")) {
    if (!shown(s)) continue;
    const style = getComputedStyle(s);
    const drawn = !["none", "normal"].includes(getComputedStyle(s, "::before").content);
    if (!(style.display === "list-item" && style.listStyleType !== "none") && !drawn) {
      problems.push(`the fold "${name(s)}" shows no sign that it opens`);
    }
  }
  return problems;
}"""

JSON_JS = """() => {
  const found = [];
  const texts = [...document.querySelectorAll("#toast, #log li, #announce, #options label, #options option, "
      + "#options select, #options input, .opt-doc, .opt-note")]
    .filter((e) => e.textContent || e.value);
  for (const e of texts) {
    const text = e.matches("input, select") ? String(e.value) : e.textContent;
    if (/[{"]/.test(text)) found.push(text.trim().slice(0, 100));
  }
  return found;
}"""

TEXTS_JS = """() => {
  const shown = (e) => e && e.getClientRects().length && getComputedStyle(e).visibility !== "hidden";
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !shown(e)) continue;
    if (e.closest("script, style, noscript, code, pre, kbd, samp, [translate=no]")) continue;
    out.push(n.textContent.trim());
  }
  for (const e of document.querySelectorAll("[aria-label], [title], [placeholder]")) {
    if (!shown(e) && !e.closest("svg")) continue;
    for (const a of ["aria-label", "title", "placeholder"]) if (e.getAttribute(a)) out.push(e.getAttribute(a).trim());
  }
  return out;
}"""

_catalogue: dict[str, re.Pattern[str]] = {}


def english_catalogue(base: str) -> re.Pattern[str]:
    """The texts of the English catalogue that Italian says differently, as one pattern of whole texts
    ({placeholders} match anything)."""
    if base not in _catalogue:
        with urllib.request.urlopen(base + "/i18n/it.json", timeout=20) as res:
            messages = json.loads(res.read())["messages"]
        english = sorted({k for k, v in messages.items() if v and v != k and len(k) > 3 and re.search(r"[a-z]{3}", k)},
                         key=len, reverse=True)
        parts = [r".+?".join(re.escape(p) for p in re.split(r"\{\w+\}", k)) for k in english]
        _catalogue[base] = re.compile(r"^(?:" + "|".join(parts) + r")$", re.DOTALL)
    return _catalogue[base]


def page_problems(page: Any, where: str, lang: str, base: str, names: tuple[str, ...] = ()) -> list[str]:
    """What breaks the phone rules on this page, each problem prefixed by ``where``."""
    problems = list(page.evaluate(FIT_JS, [SELECTOR, MIN_CONTROL, MIN_TARGET, MIN_TEXT]))
    problems += [f"JSON shown to a player: {t!r}" for t in page.evaluate(JSON_JS)]
    if lang == "it":
        catalogue = english_catalogue(base)
        seats = page.evaluate("(window.ludoteca?.msg ? window.ludoteca.msg.seats : []).map((s) => s.name)")
        others = sorted({*names, *[n for n in seats if n]}, key=len, reverse=True)  # names are names in any language

        def unnamed(text: str) -> str:  # a board may cut a long name short: its first 10 letters on are a name
            for n in others:
                for cut in range(len(n), min(len(n), 10) - 1, -1):
                    text = text.replace(n[:cut], "Maria")
            return text

        problems += [f"English text: {t!r}" for t in page.evaluate(TEXTS_JS) if catalogue.match(unnamed(t))]
        words = english_on_page(page, ("ludoteca", "English", "Italiano", *others))
        problems += [f"English word: {t!r}" for t in words]
        if page.evaluate("document.documentElement.lang") != "it":
            problems.append("the page is not in Italian")
    return [f"{where}: {p}" for p in problems]


def check_zoom(page: Any, where: str) -> list[str]:
    """The zoom buttons make the board larger inside its frame (the page stays as wide), and back."""
    if not page.locator("#zoom-in").is_visible():
        return [f"{where}: no zoom button"]
    before = page.locator("#board").bounding_box()["width"]
    page.locator("#zoom-in").tap()
    page.wait_for_function("(w) => document.querySelector('#board').getBoundingClientRect().width > w + 10", arg=before)
    problems = []
    if page.evaluate("document.scrollingElement.scrollWidth > innerWidth"):
        problems.append(f"{where}: zooming the board widens the page")
    page.locator("#zoom-out").tap()
    page.wait_for_function("(w) => document.querySelector('#board').getBoundingClientRect().width <= w + 1", arg=before)
    # two fingers spread apart on the board zoom it too (and pinched together, back)
    page.evaluate(PINCH_JS, 2)
    wider = "(w) => document.querySelector('#board').getBoundingClientRect().width > w * 1.5"
    page.wait_for_function(wider, arg=before)
    page.evaluate(PINCH_JS, 0.25)
    page.wait_for_function("(w) => document.querySelector('#board').getBoundingClientRect().width <= w + 1", arg=before)
    return problems


PINCH_JS = """(factor) => {
  const wrap = document.querySelector("#board-wrap");
  const r = wrap.getBoundingClientRect();
  const cx = r.left + r.width / 2, cy = r.top + Math.min(r.height, innerHeight) / 2;
  const fingers = (d) => [new Touch({identifier: 1, target: wrap, clientX: cx - d, clientY: cy}),
                          new Touch({identifier: 2, target: wrap, clientX: cx + d, clientY: cy})];
  const send = (type, touches) => wrap.dispatchEvent(new TouchEvent(type, {touches, targetTouches: touches,
    changedTouches: touches, bubbles: true, cancelable: true}));
  send("touchstart", fingers(40));
  send("touchmove", fingers(40 * Math.sqrt(factor)));
  send("touchmove", fingers(40 * factor));
  send("touchend", []);
}"""


# --- playing by tapping, without knowing the game ------------------------------------------------------------
TARGETS_JS = """() => [...document.querySelectorAll("#board .legal, #board [role=button]")]
  .filter((e) => e.getClientRects().length)
  .map((e, i) => { e.dataset.fitIndex = String(i);
                   return {i, key: e.getAttribute("aria-label") || e.outerHTML.slice(0, 80),
                           dest: !!e.closest(".dest") && !e.closest(".dest .legal:not(.dest)")}; })"""


def tap_move(page: Any, rng: random.Random) -> None:
    """One move made by tapping what the page offers: the board's parts, then the buttons that confirm
    (a choice, placing), as a person does; the list of all moves only when that leads nowhere."""
    seq = state(page)["seq"]
    tapped: set[str] = set()
    for _ in range(7):
        s = state_or_none(page)
        if s is None or s["seq"] != seq or not s["mine"] or page.evaluate("window.ludoteca.sent"):
            return
        confirm = page.locator("#controls button.primary:not(#pass):visible")
        targets = page.evaluate(TARGETS_JS)
        fresh = [t for t in targets if t["key"] not in tapped]
        if confirm.count():
            confirm.nth(rng.randrange(confirm.count())).tap()
        elif fresh or targets:
            pick = rng.choice(fresh or targets)
            tapped.add(pick["key"])
            part = page.locator(f"#board [data-fit-index='{pick['i']}']")
            if pick["dest"]:  # a pile that receives: tapped at its left edge, not on a coin stack inside it
                part.scroll_into_view_if_needed()
                box = part.bounding_box()
                page.touchscreen.tap(box["x"] + 4, box["y"] + box["height"] / 2)
            else:
                part.tap()
        elif page.locator("#controls button:visible").count():
            buttons = page.locator("#controls button:visible")
            buttons.nth(rng.randrange(buttons.count())).tap()
        else:
            break
        try:
            page.wait_for_function("(n) => window.ludoteca.sent || window.ludoteca.seq > n", arg=seq, timeout=600)
        except Exception:  # a selection on the board, not a move yet: tap on
            continue
    s = state_or_none(page)
    if s is None or s["seq"] != seq or not s["mine"] or page.evaluate("window.ludoteca.sent"):
        return
    summary = page.locator("#moves summary")
    if summary.count() and not page.locator("#moves details[open]").count():
        summary.tap()
    moves = page.locator("#moves .move-list button")
    moves.nth(rng.randrange(moves.count())).tap()


SHOWN_JS = """(() => {
  // when each announcement appears over the board, and whether the player tapped one away
  window.__shown = [];
  window.__dismissed = 0;
  let last = null;
  document.addEventListener("click", (ev) => {
    if (ev.target.closest && ev.target.closest("#announce")) window.__dismissed++;
  }, true);
  new MutationObserver(() => {
    const a = document.getElementById("announce");
    if (!a || !a.classList.contains("show") || a.dataset.n === last) return;
    last = a.dataset.n;
    window.__shown.push([performance.now(), a.textContent.length]);
  }).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["class", "data-n"]});
})()"""


def announcements_stayed(page: Any, where: str) -> list[str]:
    """Each announcement stayed at least 3 s (longer ones longer) before the next replaced it, unless tapped away."""
    shown, dismissed = page.evaluate("[window.__shown, window.__dismissed]")
    if dismissed:
        return []
    return [f"{where}: an announcement of {chars} characters was replaced after {round(b - a)} ms"
            for (a, chars), (b, _) in itertools.pairwise(shown) if b - a < 2900]


def open_seat(browser: Any, base: str, table: dict[str, Any], lang: str, width: int,
              height: int) -> tuple[Any, Any, list[str]]:
    ctx = language_context(browser, lang, width, height)
    page = ctx.new_page()
    page.add_init_script(SHOWN_JS)
    errors = watch_errors(page)
    page.goto(base + "/leaderboard")
    page.evaluate("([id, token]) => localStorage.setItem(`ludoteca.seat.${id}`, JSON.stringify({seat: 0, token}))",
                  [table["id"], table["token"]])
    page.goto(base + table["url"])
    wait_state(page, "s.you === 0")
    return ctx, page, errors


def settle(page: Any) -> None:
    """The board drawn for the current screen (a resize redraws it after a short pause)."""
    page.wait_for_timeout(250)


@pytest.mark.parametrize(("game", "players"), CASES, ids=[f"{g}-{n}p" for g, n in CASES])
def test_each_game_is_played_to_the_end_by_tapping_on_a_phone(server: str, browser: Any, game: str,
                                                              players: int) -> None:
    k = CASES.index((game, players))
    lang, other_lang = ("it", "en") if k % 2 == 0 else ("en", "it")
    (width, height), (width2, height2) = PHONES[k % 2], PHONES[1 - k % 2]
    cls = game_class(game)
    options = {"turn_limit": 3 * players} if "turn_limit" in {o.name for o in cls.OPTIONS} else {}
    seats = [{"kind": "open"}] + [{"kind": "ai", "level": "random"}] * (players - 1)
    table = post(server, "/api/tables", {"game": game, "players": players, "sit": 0, "name": "Ann", "options": options,
                                         "seats": seats}, lang)
    folder = screens()
    print(f"screenshots: {folder}")
    ctx, page, errors = open_seat(browser, server, table, lang, width, height)
    names = (cls.title, "Ann", *[s["name"] for s in page.evaluate("window.ludoteca.msg.seats")])
    problems: list[str] = []
    rng = random.Random(k)
    made, started = 0, time.monotonic()
    try:
        wait_state(page, "s.status === 'playing' || s.status === 'over'")
        while time.monotonic() - started < 120:
            wait_state(page, "s.mine || s.status !== 'playing'")
            s = state(page)
            if s["status"] != "playing":
                break
            if made == 0 or made % 5 == 2:
                settle(page)
                where = f"{game} {players}p {lang} {width}x{height} move {made}"
                problems += page_problems(page, where, lang, server, names)
            if made == 1:  # the same table at the other phone size, and sideways, then back
                page.screenshot(path=str(folder / f"{game}-{players}p-{lang}-{width}x{height}.png"))
                problems += check_zoom(page, f"{game} {players}p {width}x{height}")
                for w, h in ((width2, height2), (height, width)):
                    page.set_viewport_size({"width": w, "height": h})
                    settle(page)
                    problems += page_problems(page, f"{game} {players}p {lang} {w}x{h}", lang, server, names)
                    page.screenshot(path=str(folder / f"{game}-{players}p-{lang}-{w}x{h}.png"))
                page.set_viewport_size({"width": width, "height": height})
                settle(page)
                if state(page)["seq"] != s["seq"]:
                    continue
            tap_move(page, rng)
            wait_state(page, "arg !== s.seq || !s.mine || s.status !== 'playing'", s["seq"])
            made += 1
        wait_state(page, "s.status === 'over'")
        page.wait_for_timeout(300)
        problems += page_problems(page, f"{game} {players}p {lang} {width}x{height} at the end", lang, server, names)
        if page.locator("#forced-pref").is_visible():  # nothing is left to play: no choice about forced moves
            problems.append(f"{game} {players}p: 'confirm forced moves' is offered after the game")
        page.screenshot(path=str(folder / f"{game}-{players}p-{lang}-{width}x{height}-end.png"), full_page=True)
        assert made >= 1, "the player never had a move to make"
        problems += announcements_stayed(page, f"{game} {players}p")
        assert errors == [], errors
        FINISHED.append(table["id"])
    finally:
        ctx.close()
    # the finished table in the other language, at the other size
    ctx, page, errors = open_seat(browser, server, table, other_lang, width2, height2)
    try:
        wait_state(page, "s.status === 'over'")
        settle(page)
        problems += page_problems(page, f"{game} {players}p {other_lang} {width2}x{height2} at the end", other_lang,
                                  server, names)
        page.screenshot(path=str(folder / f"{game}-{players}p-{other_lang}-{width2}x{height2}-end.png"), full_page=True)
        assert errors == [], errors
    finally:
        ctx.close()
    assert not problems, "\n".join(problems)


SIZES = [(390, 844, "it"), (360, 740, "en"), (844, 390, "en"), (740, 360, "it")]
PAGES = ["/", "/leaderboard", "/players/{account}", "/login", "/signup", "/lab", "/my-tables", "/rules",
         *[f"/rules/{g}" for g in GAMES], *[f"/learn/{g}" for g in GAMES], "/replay/{table}"]
"""The pages besides the tables; each is checked at two of :data:`SIZES` (one upright, one sideways, one in each
language): the even ones at the first and third size, the odd ones at the second and the fourth."""


REPLAY_DOCK_JS = """() => {
  // the header's download link names what a player gets, not a file format
  if (/JSON/.test(document.querySelector("#download").textContent)) return "the download link speaks of JSON";
  if (innerWidth > 600) return null; // (held sideways the board has the screen's height: it is scrolled to)
  scrollTo(0, 0);
  const board = document.querySelector("#board").getBoundingClientRect();
  const dock = document.querySelector(".replay-dock").getBoundingClientRect();
  return board.bottom > dock.top + 0.5
    ? `the board's bottom (${Math.round(board.bottom)} px) is under the zoom buttons (from ${Math.round(dock.top)} px)`
    : null;
}"""


@pytest.mark.parametrize(("width", "height", "lang"), SIZES, ids=[f"{w}x{h}-{lang}" for w, h, lang in SIZES])
def test_every_other_page_fits_a_phone(server: str, browser: Any, width: int, height: int, lang: str) -> None:
    k = SIZES.index((width, height, lang))
    account = f"fit{width}{lang}"
    post(server, "/api/signup", {"name": account, "password": "a long password"})
    pages = [p for j, p in enumerate(PAGES) if (j + k) % 2 == 0 and (FINISHED or "{table}" not in p)]
    ctx = language_context(browser, lang, width, height, phone=True)
    page = ctx.new_page()
    errors = watch_errors(page)
    problems: list[str] = []
    folder = screens()
    print(f"screenshots: {folder}")
    titles = tuple(game_class(g).title for g in GAMES)
    try:
        for template in pages:
            path = template.format(account=account, table=FINISHED[0] if FINISHED else "")
            page.goto(server + path)
            page.wait_for_load_state("networkidle")
            problems += page_problems(page, f"{path} {lang} {width}x{height}", lang, server, (*titles, account))
            if "{table}" in template:  # the replay: at the top of the page the whole board is above the zoom dock
                page.locator("#board-wrap + .replay-dock").wait_for()
                covered = page.evaluate(REPLAY_DOCK_JS)
                problems += [f"{path} {lang} {width}x{height}: {covered}"] if covered else []
            # the header's menu opens, and what it holds fits too (the same on every page: checked on the first)
            toggle = page.locator("#menu-toggle")
            if template == pages[0] and toggle.is_visible():
                toggle.tap()
                problems += page_problems(page, f"{path} {lang} {width}x{height} menu open", lang, server,
                                          (*titles, account))
                toggle.tap()
            shot = re.sub(r"[^a-z0-9]+", "-", template.lower()).strip("-") or "lobby"
            page.screenshot(path=str(folder / f"page-{shot}-{lang}-{width}x{height}.png"))
        assert errors == [], errors
    finally:
        ctx.close()
    assert not problems, "\n".join(problems)
