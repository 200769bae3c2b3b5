"""Fixtures of the end-to-end browser tests: a real server subprocess and Debian's Chromium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.launch import running_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright package is not installed (pip install playwright)"
    for item in items:
        if "tests/browser" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("web-data")
    with running_server(str(data), "--ai-delay", "0.2") as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


# --- helpers shared by the journey, accessibility and screenshot tests ---

PHONE_SIZES = [(390, 844), (360, 740)]
DESKTOP_SIZE = (1280, 800)
MIN_TAP = 44
MIN_TEXT = 14
A11Y_RULES = ["button-name", "aria-command-name", "color-contrast", "image-alt", "label", "link-name",
              "html-has-lang", "document-title"]
"""The axe-core rules a page must pass (color-contrast: on the header, see :func:`axe_violations`)."""
ENGLISH_WORDS = ("the", "and", "you", "your", "player", "players", "seat", "table", "wins", "move", "click",
                 "waiting", "turn", "over", "pass", "next", "play", "rules")
"""Whole English words that never belong to an Italian page (game and player names are excluded)."""


def language_context(browser: Any, lang: str, width: int, height: int, *, phone: bool | None = None,
                     storage_state: Any = None) -> Any:
    """A browser context whose person prefers ``lang`` ("en" or "it"): the browser's locale and
    Accept-Language, no language cookie (the page must follow the browser). ``phone`` (default: a
    width under 500) makes it a touch screen."""
    phone = width < 500 if phone is None else phone
    locale = {"en": "en-GB", "it": "it-IT"}[lang]
    accept = {"en": "en-GB,en;q=0.9", "it": "it-IT,it;q=0.9"}[lang]
    ctx = browser.new_context(viewport={"width": width, "height": height}, has_touch=phone, is_mobile=phone,
                              device_scale_factor=2 if phone else 1, locale=locale,
                              extra_http_headers={"Accept-Language": accept}, storage_state=storage_state)
    ctx.set_default_timeout(20_000)
    return ctx


def open_menu(page: Any) -> None:
    """Opens the header's menu when the page shows it folded (a small screen: style.css, common.js headerMenu)."""
    toggle = page.locator("#menu-toggle")
    toggle.wait_for(state="attached")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()


def watch_errors(page: Any) -> list[str]:
    """The page's uncaught errors and anything its Content-Security-Policy blocks, collected."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    return errors


def _axe_script() -> str:
    from axe_playwright_python.base import AXE_SCRIPT  # axe-core's axe.min.js, shipped in the PyPI package

    return AXE_SCRIPT


def axe_run(page: Any, context: Any, rules: list[str]) -> list[dict[str, Any]]:
    """axe-core's violations of ``rules`` on the part ``context`` of the page (a selector, a list
    of selectors or axe's ``{"include": …, "exclude": …}``)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_script())
    options = {"runOnly": {"type": "rule", "values": rules}, "resultTypes": ["violations"]}
    result = page.evaluate("([context, options]) => axe.run(context, options)", [context, options])
    return list(result["violations"])


def axe_violations(page: Any, rules: list[str] | None = None) -> list[dict[str, Any]]:
    """The violations of :data:`A11Y_RULES` (or ``rules``) on the whole page, colour contrast
    checked on the header (the page's own colours; a game's board picks its own)."""
    rules = list(A11Y_RULES if rules is None else rules)
    found = axe_run(page, "html", [r for r in rules if r != "color-contrast"]) if rules != ["color-contrast"] else []
    if "color-contrast" in rules and page.locator("header").count():
        found += axe_run(page, "header", ["color-contrast"])
    return found


def describe_violations(violations: list[dict[str, Any]]) -> str:
    """axe's violations as lines a person reads: the rule, what it wants, each element and why."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v.get('impact')}): {v['help']} — {v.get('helpUrl', '')}")
        for node in v["nodes"][:12]:
            why = "; ".join(c["message"] for c in node.get("any", []) + node.get("all", []) + node.get("none", []))
            lines.append(f"    {' '.join(map(str, node['target']))}: {node['html'][:160]}")
            if why:
                lines.append(f"        {why[:300]}")
        if len(v["nodes"]) > 12:
            lines.append(f"    … and {len(v['nodes']) - 12} more")
    return "\n".join(lines)


def assert_accessible(page: Any, where: str, rules: list[str] | None = None) -> None:
    """No violation of :data:`A11Y_RULES` on the page; the failure lists each one readably."""
    found = axe_violations(page, rules)
    assert not found, f"axe-core finds accessibility violations on {where}:\n{describe_violations(found)}"


CLICKABLE_JS = """() => [...document.querySelectorAll('#board .clickable, #board [role=button]')]
  .filter((e) => e.getClientRects().length)
  .map((e) => ({cls: e.getAttribute('class') || '', role: e.getAttribute('role'),
                html: e.outerHTML.slice(0, 140)}))"""


def unnamed_board_parts(page: Any) -> list[str]:
    """The clickable parts of the board that lack role=button or an accessible name (as the
    browser's accessibility tree computes it), described; [] when every part is a named button."""
    import re

    from playwright.sync_api import expect

    problems = []
    parts = page.evaluate(CLICKABLE_JS)
    for part in parts:
        if part["role"] != "button":
            problems.append(f"no role=button: {part['html']}")
    named = re.compile(r"\S")
    board_buttons = page.locator("#board").get_by_role("button")
    for k in range(board_buttons.count()):
        button = board_buttons.nth(k)
        try:
            expect(button).to_have_accessible_name(named, timeout=1000)
        except AssertionError:
            problems.append(f"a button without an accessible name: {button.evaluate('e => e.outerHTML')[:140]}")
    return problems


ENGLISH_JS = """([words, skip]) => {
  const re = new RegExp(`\\\\b(${words.join("|")})\\\\b`, "i");
  const visible = (e) => e && e.getClientRects().length && getComputedStyle(e).visibility !== "hidden";
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    const e = n.parentElement;
    // (commands and code are not prose: "ludoteca play tohm --option …" stays as typed)
    if (!text || !visible(e) || e.closest("script, style, noscript, code, pre, kbd, samp, [translate=no]")) continue;
    let rest = text;
    for (const s of skip) rest = rest.split(s).join(" ");
    if (re.test(rest)) found.push(text.slice(0, 120));
  }
  for (const e of document.querySelectorAll("[aria-label], [title], [placeholder]")) {
    if (!visible(e) && !e.closest("svg")) continue;
    for (const a of ["aria-label", "title", "placeholder"]) {
      let v = e.getAttribute(a);
      if (!v) continue;
      for (const s of skip) v = v.split(s).join(" ");
      if (re.test(v)) found.push(`${a}="${e.getAttribute(a).slice(0, 120)}"`);
    }
  }
  if (re.test(document.title)) found.push(`<title>${document.title}</title>`);
  return found;
}"""


def english_on_page(page: Any, skip: tuple[str, ...] = ()) -> list[str]:
    """Visible texts (and labels, titles, placeholders) of the page holding a word of
    :data:`ENGLISH_WORDS`; ``skip``: names (of games, of players) taken out first."""
    return list(page.evaluate(ENGLISH_JS, [list(ENGLISH_WORDS), list(skip)]))


LAYOUT_JS = """([minTap, excepted, minTarget]) => {
  const doc = document.documentElement;
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden";
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || !e || e.closest("svg, script, style, noscript") || !shown(e)) continue;
    const size = parseFloat(getComputedStyle(e).fontSize);
    small.push([n.textContent.trim().slice(0, 40), size]);
  }
  const taps = [...document.querySelectorAll(
      "main button, main a[href], main input, main select, main [role=button], header button, header select")]
    .filter((e) => shown(e) && !e.closest("#moves details:not([open])") && e.type !== "hidden")
    .map((e) => { // a checkbox (and a hidden file input: options.js) is tapped through its label too: the larger counts
                  const labels = ["checkbox", "radio", "file"].includes(e.type) ? [...(e.labels || [])] : [];
                  const r = [e, ...labels].map((x) => x.getBoundingClientRect())
                    .reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
                  return [(e.getAttribute("aria-label") || e.textContent || e.id || e.tagName).trim().slice(0, 40),
                          Math.round(r.width), Math.round(r.height), e.matches(excepted)]; });
  return {scrollWidth: Math.max(doc.scrollWidth, document.body.scrollWidth), innerWidth: window.innerWidth,
          texts: small, taps: taps.filter(([, w, h, s]) => Math.min(w, h) < (s ? minTarget : minTap))};
}"""


def layout_problems(page: Any, phone: bool) -> list[str]:
    """What breaks the phone rules on this page: sideways scrolling, text under
    :data:`MIN_TEXT` px, tap targets under :data:`MIN_TAP` px (these two only when ``phone``)."""
    from tests.browser.small_targets import MIN_TARGET, SELECTOR  # the listed exceptions: 24 px (WCAG 2.5.8)

    m = page.evaluate(LAYOUT_JS, [MIN_TAP, SELECTOR, MIN_TARGET])
    problems = []
    if m["scrollWidth"] > m["innerWidth"]:
        problems.append(f"the page scrolls sideways: {m['scrollWidth']} px wide in a {m['innerWidth']} px window")
    if phone:
        small = [t for t in m["texts"] if t[1] < MIN_TEXT]
        if small:
            problems.append(f"text under {MIN_TEXT} px: {small[:10]}")
        if m["taps"]:
            problems.append(f"tap targets under {MIN_TAP} px: {m['taps'][:10]}")
    return problems


GAME_SEATS = {"exactly": 3, "tohm": 2, "tri": 2, "exagon": 2}
"""The games and the players at the test tables: the person at seat 1, the easiest AI at the others."""


def table_mid_game(browser: Any, base: str, game: str, moves: int = 4, seed: int = 3) -> tuple[str, Any]:
    """A table of ``game`` created from the lobby by "Anna" against random AIs, played by clicking
    for ``moves`` of her moves and left when it is her turn again with a choice of moves: (its URL, the browser storage
    holding her seat, for ``browser.new_context(storage_state=…)``)."""
    import random

    from tests.browser.test_browser_play import click_move, create_via_lobby, state, wait_seq_above, wait_state

    ctx = browser.new_context(viewport={"width": DESKTOP_SIZE[0], "height": DESKTOP_SIZE[1]}, locale="en-GB")
    try:
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        url = create_via_lobby(page, base, game, ["open"] + ["ai:random"] * (GAME_SEATS[game] - 1), "Anna")
        wait_state(page, "s.status === 'playing'")
        rng = random.Random(seed)
        made = 0
        for _ in range(moves + 60):
            wait_state(page, "s.mine || s.status !== 'playing'")
            s = state(page)
            assert s is not None and s["status"] == "playing", f"the {game} game ended after {made} moves"
            # stop on a real choice (a lone legal move, a forced pass, is played by the page itself)
            if made >= moves and page.evaluate("() => window.ludoteca.msg.legal.length") > 1:
                return url, ctx.storage_state()
            click_move(page, game, rng)
            wait_seq_above(page, s["seq"])
            made += 1
        raise AssertionError(f"no choice for the player in {made} moves of {game}")
    finally:
        ctx.close()
