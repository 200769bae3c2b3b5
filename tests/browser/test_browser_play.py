"""End to end in a real browser (Playwright driving Debian's Chromium, headless).

Two browser contexts create and join a TOHM table from the lobby and play it to the end by
clicking the board, a third watches as a spectator, one player reloads mid-game; for each other
game a table starts and a few moves are made by clicking. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

STATE_JS = """() => {
  const s = window.ludoteca;
  if (!s || !s.msg) return null;
  return {seq: s.seq, status: s.msg.status, to_move: s.msg.to_move, you: s.msg.you,
          mine: !!(s.msg.legal && s.msg.legal.length) && !s.sent, phase: s.msg.position.phase};
}"""


def new_page(browser: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # anything the Content-Security-Policy blocks (an inline style or script) is an error too
    page.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    page.set_default_timeout(20_000)
    return ctx, page, errors


def state(page: Any) -> dict[str, Any] | None:
    return page.evaluate(STATE_JS)


def wait_state(page: Any, condition: str, arg: Any = None) -> None:
    page.wait_for_function(f"(arg) => {{ const s = ({STATE_JS})(); return s && ({condition}); }}", arg=arg,
                           timeout=20_000)


def wait_seq_above(page: Any, seq: int) -> None:
    wait_state(page, "s.seq > arg", seq)


def create_via_lobby(page: Any, base: str, game: str, seats: list[str], name: str,
                     options: dict[str, Any] | None = None) -> str:
    page.goto(base + "/")
    page.fill("#name", name)
    page.select_option("#game", game)
    page.select_option("#players", str(len(seats)))
    for key, value in (options or {}).items():
        page.fill(f"#opt-{key}", json.dumps(value))
    for i, seat in enumerate(seats):
        page.select_option(f"#seat-{i}", seat)
    page.click("#create-btn")
    page.wait_for_url(re.compile(r"/t/"))
    wait_state(page, "s.you === 0")
    return page.url


def click_move(page: Any, game: str, rng: random.Random, shot: Path | None = None) -> None:
    """Make one legal move by clicking the board (the move-list buttons are not used).

    ``shot``: a screenshot taken just before the confirming click (a selection on screen)."""

    def snap() -> None:
        if shot is not None:
            page.screenshot(path=str(shot))

    board = page.locator("#board")
    if game == "tohm":
        cells = board.locator(".cell.legal")
        if cells.count() == 0:
            page.click("#pass")
            return
        cell = cells.nth(rng.randrange(cells.count()))
        from_cell = "move-from" in (cell.get_attribute("class") or "")
        cell.click()
        if from_cell:
            targets = board.locator(".cell.legal:not(.move-from)")
            targets.first.wait_for()
            snap()
            targets.nth(rng.randrange(targets.count())).click()
    elif game == "exactly":
        stacks = board.locator(".stack.legal")
        if stacks.count() == 0:
            page.click("#pass")
            return
        stacks.nth(rng.randrange(stacks.count())).click()
        dests = board.locator(".pile.dest")
        dests.first.wait_for()
        snap()
        dests.nth(rng.randrange(dests.count())).click(position={"x": 14, "y": 14})
    elif game == "tri":
        cards = board.locator(".card.legal")
        targets = board.locator(".highlights .legal")
        attacks = board.locator(".highlights .target-attack")
        if attacks.count() and not cards.count():
            targets = attacks  # battles are the interesting part
        if cards.count():
            snap()
            cards.nth(rng.randrange(cards.count())).click()
        elif targets.count():
            seq = state(page)["seq"]
            targets.nth(rng.randrange(targets.count())).click()
            page.wait_for_function(
                "(n) => window.ludoteca.seq > n || window.ludoteca.sent"
                " || document.querySelector('#controls button.primary:not(#pass)')", arg=seq)
            choice = page.locator("#controls button.primary:not(#pass)")
            if not page.evaluate("window.ludoteca.sent") and choice.count():
                choice.first.click()
        else:
            page.click("#pass")
    elif game == "exagon":
        if page.locator("#pass").count():
            page.click("#pass")
            return
        tiles = board.locator(".hand .legal")
        for k in rng.sample(range(tiles.count()), tiles.count()):
            tiles.nth(k).click()
            spots = board.locator(".spot.legal")
            if spots.count():
                spots.nth(rng.randrange(spots.count())).click()
                snap()
                page.click("#place")
                return
        page.click("#stop")
    else:
        raise AssertionError(game)


def test_two_friends_play_tohm_to_the_end_while_a_spectator_watches(server: str, browser: Any,
                                                                   artifacts: Path) -> None:
    ctx_a, ann, errors_a = new_page(browser)
    url = create_via_lobby(ann, server, "tohm", ["open", "open"], "Ann")
    table_id = url.rstrip("/").split("/")[-1]
    assert "Waiting for 1 more player" in ann.inner_text("#banner")
    ctx_b, bob, errors_b = new_page(browser)
    bob.goto(url)
    bob.fill("#my-name", "Bob")
    bob.click("button.sit")
    wait_state(bob, "s.you === 1 && s.status === 'playing'")
    wait_state(ann, "s.status === 'playing'")
    ctx_c, spectator, errors_c = new_page(browser)
    spectator.goto(url)
    wait_state(spectator, "s.status === 'playing'")
    assert spectator.locator("button.sit").count() == 0
    players = {0: ann, 1: bob}
    rng = random.Random(7)
    moves, reloaded = 0, False
    for _ in range(3000):
        s = state(ann)
        if s["status"] == "over":
            break
        page = players[s["to_move"]]
        wait_state(page, "s.mine || s.status !== 'playing' || s.seq !== arg", s["seq"])
        if state(page)["seq"] != s["seq"] or not state(page)["mine"]:
            continue
        click_move(page, "tohm", rng)
        for p in (ann, bob):
            wait_seq_above(p, s["seq"])
        moves += 1
        if moves == 12 and not reloaded:
            reloaded = True
            spectator.screenshot(path=str(artifacts / "tohm-spectator.png"))
            ann.screenshot(path=str(artifacts / "tohm-table.png"))
            before = state(ann)
            ann.reload()
            wait_state(ann, "s.you === 0 && s.seq >= arg", before["seq"])
            after = state(ann)
            assert after["seq"] == state(bob)["seq"]
            assert ann.locator("#log li").count() == after["seq"]
    else:
        raise AssertionError("the game did not end")
    assert reloaded and moves > 12
    for page in (ann, bob, spectator):
        wait_state(page, "s.status === 'over'")
        assert "Game over" in page.inner_text("#banner")
        assert page.locator("#result-box").is_visible()
    assert state(spectator)["seq"] == state(ann)["seq"]
    spectator.screenshot(path=str(artifacts / "tohm-over.png"))
    # the replay page steps forward and back and offers the record
    spectator.goto(f"{server}/replay/{table_id}")
    spectator.wait_for_function("() => document.querySelector('#step').textContent.includes('/')")
    spectator.click("#next")
    spectator.click("#next")
    assert spectator.inner_text("#step").startswith("position 2 /")
    spectator.click("#prev")
    assert spectator.inner_text("#step").startswith("position 1 /")
    spectator.click("#last")
    assert "End:" in spectator.inner_text("#banner")
    spectator.screenshot(path=str(artifacts / "tohm-replay.png"))
    with spectator.expect_download() as download:
        spectator.click("#download")
    record = json.loads(Path(download.value.path()).read_text())
    assert record["format"] == "ludoteca-record" and record["game"] == "tohm"
    assert errors_a == errors_b == errors_c == []
    for ctx in (ctx_a, ctx_b, ctx_c):
        ctx.close()


@pytest.mark.parametrize(("game", "players", "options"), [
    ("exactly", 3, {}),
    ("tri", 2, {}),
    ("exagon", 2, {}),
])
def test_a_table_of_each_game_starts_and_moves_are_made_by_clicking(
        server: str, browser: Any, artifacts: Path, game: str, players: int, options: dict) -> None:
    ctx, page, errors = new_page(browser)
    create_via_lobby(page, server, game, ["open"] + ["ai:random"] * (players - 1), "Ann", options)
    wait_state(page, "s.status === 'playing'")
    rng = random.Random(3)
    made = 0
    battle_shot = False
    for _ in range(60):
        wait_state(page, "s.mine || s.status !== 'playing'")
        s = state(page)
        if s["status"] != "playing":
            break
        shot = None
        if made == 3:
            page.screenshot(path=str(artifacts / f"{game}-table.png"))
            shot = artifacts / f"{game}-selecting.png"
        if game == "tri" and s["phase"] == "battle" and not battle_shot:
            shot, battle_shot = artifacts / "tri-battle.png", True
        click_move(page, game, rng, shot)
        wait_seq_above(page, s["seq"])
        made += 1
        if made >= 8 and (game != "tri" or battle_shot or made >= 30):
            break
    assert made >= 4, f"only {made} moves were made"
    if game == "exagon" and state(page)["phase"] == "turn":
        assert page.locator("#clock-box").is_visible()
        assert re.search(r"\d+\.\d s", page.inner_text("#clock"))
    log = page.locator("#log li")
    assert log.count() >= made
    assert errors == []
    ctx.close()
