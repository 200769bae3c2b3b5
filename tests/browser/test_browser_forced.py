"""Forced moves and grouped log lines, end to end in a real browser (Playwright driving Chromium).

A player whose only legal move is a single action (TOHM's lone pass) sees a short note and the
move is played for them; with "confirm forced moves" checked (remembered in the browser) the move
waits for their click. Either way the action is sent as any other: the table's record holds it.
EXAGON's deal (consecutive chance entries, no decision between them) is one line of the log.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_play import click_move, create_via_lobby, new_page, state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

# every text the forced-move note shows, as the page shows it (the note lasts 1.5 s: a test that
# looked only now and then could miss it)
WATCH_NOTE_JS = """() => {
  window.__forcedNotes = [];
  const watch = () => {
    const box = document.getElementById("forced");
    if (!box) { requestAnimationFrame(watch); return; }
    new MutationObserver(() => {
      if (!box.hidden && box.textContent) window.__forcedNotes.push(box.textContent);
    }).observe(box, {childList: true, subtree: true, characterData: true, attributes: true});
  };
  watch();
}"""

# the legal moves, and the index the next action takes in the log and in the record
LEGAL_JS = "() => { const s = window.ludoteca; return {legal: s.msg.legal, index: s.log.length}; }"


def notes(page: Any) -> list[str]:
    return list(page.evaluate("() => window.__forcedNotes || []"))


def play_tohm_against_ai(browser: Any, server: str, artifacts: Path) -> tuple[dict[str, Any], list[tuple]] | None:
    """One TOHM table, the human (seat 0) against a random AI, played to its end (60 turns).

    The first lone pass is left to the page (it plays it after its note); then "confirm forced
    moves" is checked (and survives a reload) and the next lone pass waits for the click; then the
    box is unchecked, and the next forced move is stopped by "wait" and clicked; the rest of the
    forced moves are played by the page again. Returns the record and the forced moves seen
    as (how, index in the record, action), or None when the game offered too few forced moves."""
    ctx, page, errors = new_page(browser)
    page.add_init_script(f"({WATCH_NOTE_JS})()")
    url = create_via_lobby(page, server, "tohm", ["open", "ai:random"], "Ann", {"turn_limit": 60})
    table_id = url.rstrip("/").split("/")[-1]
    assert not page.is_checked("#confirm-forced")  # the default: forced moves are played for you
    rng = random.Random(3)
    seen: list[tuple[str, int, dict[str, Any]]] = []
    for _ in range(500):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        if s["status"] != "playing":
            break
        info = page.evaluate(LEGAL_JS)
        legal, index = info["legal"], info["index"]
        if len(legal) != 1:
            click_move(page, "tohm", rng)
            wait_seq_above(page, s["seq"])
            continue
        action = legal[0]
        kinds = [k for k, _, a in seen if a == {"pass": True}]
        if action == {"pass": True} and "auto" not in kinds:
            # the note is on screen, then the page plays the pass by itself (nobody clicks)
            page.wait_for_function("() => (window.__forcedNotes || []).some((t) => t.includes('passes — playing'))")
            page.screenshot(path=str(artifacts / "forced-note.png"))
            text = [t for t in notes(page) if "passes" in t][-1]
            assert text.startswith("Only move: passes — playing it in 1.5 s") and "wait" in text
            wait_seq_above(page, s["seq"])
            assert page.locator("#forced").is_hidden()
            seen.append(("auto", index, action))
            # from now on this player confirms forced moves; the choice is remembered across a reload
            page.check("#confirm-forced")
            page.reload()
            wait_state(page, "s.you === 0")
            assert page.is_checked("#confirm-forced")
            continue
        if action == {"pass": True} and "confirmed" not in kinds:
            # the pass waits for the click: well past the delay, nothing has been sent
            page.wait_for_selector("#forced-play")
            page.wait_for_timeout(2500)
            after = state(page)
            assert after["seq"] == s["seq"] and after["mine"]
            assert "it is yours to play" in page.inner_text("#forced")
            page.screenshot(path=str(artifacts / "forced-confirm.png"))
            page.click("#forced-play")
            wait_seq_above(page, s["seq"])
            seen.append(("confirmed", index, action))
            page.uncheck("#confirm-forced")
            continue
        if page.is_checked("#confirm-forced"):
            page.click("#forced-play")
        elif "confirmed" in kinds and not any(k == "waited" for k, _, _ in seen):
            # "wait" stops the countdown of this move: it is then the player's to play
            page.click("#forced-wait")
            page.wait_for_timeout(2500)
            after = state(page)
            assert after["seq"] == s["seq"] and after["mine"]
            assert "it is yours to play" in page.inner_text("#forced")
            page.click("#forced-play")
            wait_seq_above(page, s["seq"])
            seen.append(("waited", index, action))
            continue
        wait_seq_above(page, s["seq"])  # played by the page after its note
        seen.append(("auto", index, action))
    else:
        raise AssertionError("the game did not end")
    wait_state(page, "s.status === 'over'")
    assert not errors, errors
    passes = {k for k, _, a in seen if a == {"pass": True}}
    if not {"auto", "confirmed"} <= passes or "waited" not in {k for k, _, _ in seen}:
        ctx.close()
        return None
    res = page.request.get(f"{server}/api/tables/{table_id}/record")
    assert res.ok, res.text()
    record = res.json()
    ctx.close()
    return record, seen


def test_a_lone_pass_is_played_after_a_note_unless_the_player_confirms_forced_moves(
        server: str, browser: Any, artifacts: Path) -> None:
    for _ in range(3):  # a game with fewer than two lone passes for the human (1 in 200) is played again
        out = play_tohm_against_ai(browser, server, artifacts)
        if out is not None:
            break
    else:
        raise AssertionError("three games without two lone passes")
    record, seen = out
    assert record["game"] == "tohm"
    actions = record["actions"]
    # every forced move, played by the page or clicked, is in the record where it was played
    for _, index, action in seen:
        assert actions[index] == action
    assert sum(1 for k, _, a in seen if a == {"pass": True}) >= 2
    assert {k for k, _, _ in seen} == {"auto", "confirmed", "waited"}


def test_the_deal_is_one_line_of_the_log(server: str, browser: Any, artifacts: Path) -> None:
    ctx, page, errors = new_page(browser)
    create_via_lobby(page, server, "exagon", ["open", "ai:random"], "Ann")
    wait_state(page, "s.status === 'playing'")
    deal = page.locator("#log li.group")
    deal.first.wait_for()
    wait_state(page, "s.mine")  # the log stands still while the human thinks
    entries = page.evaluate("() => window.ludoteca.log.filter(Boolean)")

    def is_deal(e: dict[str, Any]) -> bool:
        return (e["seat"] is None and len(e["events"]) > 0
                and all(x["kind"] == "chance" and "deal" in x.get("outcome", {}) for x in e["events"]))

    runs: list[int] = []  # the lengths of the runs of consecutive deal entries, in order
    for before, e in zip([None, *entries], entries, strict=False):
        if is_deal(e):
            if before is not None and is_deal(before):
                runs[-1] += 1
            else:
                runs.append(1)
    assert runs and runs[0] >= 2
    # each run of two deals or more is one line; every other entry is a line of its own
    lines = page.locator("#log > li")
    assert lines.count() == len(entries) - sum(n - 1 for n in runs)
    assert deal.count() == sum(1 for n in runs if n > 1)
    first = deal.first
    assert first.locator("summary").inner_text() == f"the tiles are dealt ({runs[0]})"
    assert "is dealt tile" not in first.inner_text()  # the items are folded away
    # the lines keep the numbers of the log's entries (the record's steps): the line after the deal
    # is numbered past it
    start = next(i for i, e in enumerate(entries) if is_deal(e))
    assert first.get_attribute("value") == str(start + 1)
    after = page.locator("#log > li.group + li")
    if after.count():
        assert after.first.get_attribute("value") == str(start + runs[0] + 1)
    first.locator("summary").click()
    items = first.locator(".group-item")
    assert items.count() == runs[0]
    assert "is dealt tile" in items.first.inner_text()
    page.screenshot(path=str(artifacts / "exagon-deal-log.png"))
    assert not errors, errors
    ctx.close()
