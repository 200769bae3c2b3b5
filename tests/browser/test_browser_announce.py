"""Announcements and the last move, end to end in Chromium (issue 12).

A TOHM table (the human against a random AI) is played to its end by clicking the board while a
spectator with ``prefers-reduced-motion: reduce`` watches. Events the game announces (a tris, the
end) show for a moment over the board with the log's own words, and stay in the log; for the
spectator the announcement does not animate. The log's newest line and the last move's cell are
highlighted.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_play import click_move, create_via_lobby, state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

# every text the announcement shows, as it appears (announcements last 3 s: a move may hide one)
WATCH_JS = """() => {
  window.__announced = [];
  let seen = null;
  new MutationObserver(() => {
    const a = document.getElementById("announce");
    if (!a || !a.classList.contains("show") || a.dataset.n === seen) return;
    seen = a.dataset.n;
    for (const line of a.querySelectorAll(".announce-line")) window.__announced.push(line.textContent);
  }).observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
}"""


def open_page(browser: Any, **options: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **options)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(20_000)
    return ctx, page, errors


def announced(page: Any) -> list[str]:
    return list(page.evaluate("window.__announced"))


def log_lines(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#log li").all_inner_texts()]


def test_tohm_announces_tris_and_the_end_and_marks_the_last_move(server: str, browser: Any,
                                                                  artifacts: Path) -> None:
    ctx, page, errors = open_page(browser)
    url = create_via_lobby(page, server, "tohm", ["open", "ai:random"], "Ann", {"turn_limit": 40})
    page.evaluate(WATCH_JS)
    ctx_s, watcher, errors_s = open_page(browser, reduced_motion="reduce")
    watcher.goto(url)
    wait_state(watcher, "s.status === 'playing'")
    watcher.evaluate(WATCH_JS)
    assert page.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is False
    assert watcher.evaluate("matchMedia('(prefers-reduced-motion: reduce)').matches") is True

    rng = random.Random(11)
    checked_last_move = False
    for _ in range(500):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        if s["status"] != "playing":
            break
        placing = page.locator("#board .cell.legal:not(.move-from)").count() > 0 and s["phase"] != "roll"
        click_move(page, "tohm", rng)
        wait_seq_above(page, s["seq"])
        # the log's newest line is highlighted, and only that one
        assert page.locator("#log li.last-entry").count() == 1
        assert page.locator("#log li").last.get_attribute("class").split().count("last-entry") == 1
        if placing and not checked_last_move:
            # the cell just played is marked on the board (the AI may have played since: some cell is)
            page.wait_for_function("() => document.querySelectorAll('#board .cell.last-move').length > 0")
            checked_last_move = True
            page.screenshot(path=str(artifacts / "announce-last-move.png"))
        if any(t.startswith("tris for") for t in announced(page)) and not (artifacts / "announce-tris.png").exists():
            page.screenshot(path=str(artifacts / "announce-tris.png"))
    else:
        raise AssertionError("the game did not end")
    assert checked_last_move

    for p in (page, watcher):
        wait_state(p, "s.status === 'over'")
        # the end is announced with the log's own words, and the log keeps it
        p.wait_for_function("() => (window.__announced || []).some((t) => t.startsWith('game over'))")
        end = [t for t in announced(p) if t.startswith("game over")][-1]
        assert any(end in line for line in log_lines(p))
        # every tris of the log was announced to the player (a tris is an announced kind of TOHM)
    tris_log = [part for line in log_lines(page) for part in line.split(" · ") if part.startswith("tris for")]
    tris_shown = [t for t in announced(page) if t.startswith("tris for")]
    assert sorted(tris_shown) == sorted(tris_log)
    # a roll is not announced: only the announced kinds are
    assert all(t.startswith(("tris for", "game over")) for t in announced(page) + announced(watcher))

    box = page.locator("#announce")
    assert box.is_visible() and "game over" in box.inner_text()
    assert page.evaluate("getComputedStyle(document.getElementById('announce')).transitionDuration") != "0s"
    page.screenshot(path=str(artifacts / "announce-end.png"))
    # reduced motion: the announcement appears without a transition
    assert watcher.locator("#announce").is_visible()
    durations = watcher.evaluate("getComputedStyle(document.getElementById('announce')).transitionDuration")
    assert set(d.strip() for d in durations.split(",")) == {"0s"}
    watcher.screenshot(path=str(artifacts / "announce-reduced-motion.png"))
    # it goes away after a few seconds (the log keeps the line)
    page.wait_for_function("() => !document.getElementById('announce').classList.contains('show')", timeout=6_000)
    box.wait_for(state="hidden", timeout=2_000)  # once its fade-out ends
    assert errors == [] and errors_s == []
    ctx.close()
    ctx_s.close()
