"""The four boards in a real browser: in English and Italian, by keyboard, the last move.

For each game a table is stored mid-game with Ann (seat 0) to move (a seeded game played by the
engine, stored as the server stores tables), and opened in Chromium:

- in English and in Italian (the browser's preferred language), desktop and phone sizes: a
  screenshot of each (test-artifacts/board-<game>-<lang>-<size>.png); the board is a labelled
  group; every clickable part of it is a button with a unique name in the page's language;
- with the keyboard only: Tab reaches a part of the board, Enter plays (or Space), and the move
  is made (the server's sequence number moves on);
- the last move is marked on the board where it happened (lastMoveCells of the game's client).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.core.game import State
from ludoteca.web.launch import running_server
from tests.browser.test_browser_announce import Finder, legal_json, open_as_ann, open_page, single_target, store_tables
from tests.browser.test_browser_play import state, wait_seq_above, wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]


def tohm_place(st: State) -> list[dict[str, Any]] | None:
    moves = [a for a in legal_json(st) if "place" in a]
    return moves[:1] if moves and st.observation(None)["trophies_left"] < 10 else None


def exactly_coin(st: State) -> list[dict[str, Any]] | None:
    obs = st.observation(None)
    moves = [a for a in legal_json(st) if "coin" in a and a["from"] == "bank"]
    return moves[:1] if moves and sum(obs["euros"]) >= 1 else None


def tri_expand(st: State) -> list[dict[str, Any]] | None:
    obs = st.observation(None)
    moves = [a for a in legal_json(st) if "expand" in a and single_target(st, a)]
    return moves[:1] if moves and obs["round"] >= 4 and len(obs["owner"]) >= 12 else None


def exagon_place(st: State) -> list[dict[str, Any]] | None:
    obs = st.observation(None)
    moves = [a for a in legal_json(st) if "place" in a]
    return moves[:1] if moves and obs["phase"] == "turn" and len(obs["table"]) >= 8 else None


BOARDS: dict[str, tuple[str, int, dict[str, Any], Finder, range]] = {
    "exactly": ("exactly", 3, {}, exactly_coin, range(1, 100)),
    "tri": ("tri", 2, {}, tri_expand, range(1, 100)),
    "tohm": ("tohm", 3, {}, tohm_place, range(1, 100)),
    "exagon": ("exagon", 2, {"clock": None}, exagon_place, range(1, 100)),
}
# a clickable part of each board, as the page draws it
PARTS = {"exactly": ".stack.legal", "tohm": ".cell.legal", "tri": ".highlights .legal, .card.legal",
         "exagon": ".hand .legal, .spot.legal"}
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
LOCALES = {"en": "en-US", "it": "it-IT"}


@pytest.fixture(scope="module")
def boards() -> Iterator[tuple[str, dict[str, tuple[str, str, list[dict[str, Any]]]]]]:
    with tempfile.TemporaryDirectory() as data:
        tables = store_tables(data, BOARDS)
        with running_server(data, "--ai-delay", "0.2") as base:
            yield base, tables


def board_parts(page: Any) -> list[dict[str, Any]]:
    """Every element of the board a person can press: its role, focus order and name."""
    return list(page.evaluate("""() => [...document.querySelectorAll('#board [role=button]')].map((e) => ({
        role: e.getAttribute('role'), tabindex: e.getAttribute('tabindex'), label: e.getAttribute('aria-label'),
        classes: e.getAttribute('class') || ''}))"""))


@pytest.mark.parametrize("game", list(BOARDS))
def test_the_board_in_both_languages_with_named_parts(game: str, boards: tuple[str, dict[str, Any]], browser: Any,
                                                      artifacts: Path) -> None:
    base, tables = boards
    table_id, token, _ = tables[game]
    labels: dict[str, list[str]] = {}
    for lang, locale in LOCALES.items():
        for size, viewport in SIZES.items():
            ctx = browser.new_context(viewport=viewport, locale=locale,
                                      **({"is_mobile": True, "has_touch": True} if size == "phone" else {}))
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.set_default_timeout(20_000)
            open_as_ann(page, base, table_id, token)
            wait_state(page, "s.you === 0 && s.mine")
            assert page.evaluate("document.documentElement.lang") == lang
            board = page.locator("#board")
            assert board.get_attribute("role") == "group"
            assert board.get_attribute("aria-label")
            parts = board_parts(page)
            assert page.locator(f"#board :is({PARTS[game]})").count() > 0
            # every part the board highlights for a click is a button, focusable, with a name of its own
            assert page.locator(f"#board :is({PARTS[game]}):not([role=button])").count() == 0
            names = [p["label"] for p in parts]
            assert all(p["tabindex"] == "0" and p["label"] for p in parts)
            assert len(names) == len(set(names)), names
            labels[f"{lang}-{size}"] = sorted(names)
            if size == "desktop":
                labels[f"{lang}-board"] = [board.get_attribute("aria-label")]
            page.screenshot(path=str(artifacts / f"board-{game}-{lang}-{size}.png"), full_page=True)
            assert errors == []
            ctx.close()
    # the same parts in both languages, named in each language's words
    assert len(labels["en-desktop"]) == len(labels["it-desktop"])
    assert set(labels["en-desktop"]).isdisjoint(labels["it-desktop"])
    assert labels["en-board"] != labels["it-board"]
    english = re.compile(r"\b(cell|place|choose|move|coin|coins|tile|triangle|expand|empty|here)\b")
    assert not any(english.search(label) for label in labels["it-desktop"]), labels["it-desktop"]


def focus_part(page: Any, part: str, limit: int = 300) -> dict[str, Any]:
    """Press Tab until the part ``part`` of the board (its data-focus) has the focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        info = page.evaluate("""(part) => {
            const e = document.activeElement;
            if (!e || !e.closest('#board') || e.getAttribute('role') !== 'button') return null;
            return e.getAttribute('data-focus') === part ? {focus: part, label: e.getAttribute('aria-label')} : null;
        }""", part)
        if info:
            return dict(info)
    raise AssertionError(f"Tab never reached the part {part} of the board")


def focus_button(page: Any, selector: str, limit: int = 300) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement && document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"Tab never reached {selector}")


def expected_marks(game: str, move: dict[str, Any]) -> set[str]:
    """What the last move marks on the board (the game's lastMoveCells)."""
    if game == "tohm":
        return {",".join(map(str, move["place"]))}
    if game == "exactly":
        return {f"{move['from']}:{move['coin']}", f"{move['to']}:{move['coin']}"}
    if game == "tri":
        return {",".join(map(str, move["expand"]))}
    return {",".join(map(str, move["place"]["at"]))}


@pytest.mark.parametrize("game", list(BOARDS))
def test_a_move_made_with_the_keyboard_is_marked_as_the_last_move(
        game: str, boards: tuple[str, dict[str, Any]], browser: Any, artifacts: Path) -> None:
    base, tables = boards
    table_id, token, moves = tables[game]
    ctx, page, errors = open_page(browser)
    open_as_ann(page, base, table_id, token)
    wait_state(page, "s.you === 0 && s.mine")
    seq = state(page)["seq"]
    move = moves[0]
    legal = page.evaluate("window.ludoteca.msg.legal")
    if game == "tohm":
        cell = ",".join(map(str, move["place"]))
        focus_part(page, f"cell:{cell}")
        page.keyboard.press("Enter")
    elif game == "tri":
        focus_part(page, f"tri:{','.join(map(str, move['expand']))}")
        page.keyboard.press(" ")  # Space presses a button too
    elif game == "exactly":
        # the coin first (the focus stays on it when the board is drawn again), then the pile that receives it
        focus_part(page, f"stack:bank:{move['coin']}")
        page.keyboard.press("Enter")
        page.wait_for_function("() => document.activeElement && document.activeElement.getAttribute('aria-pressed')")
        focus_part(page, f"dest:{move['to']}")
        page.screenshot(path=str(artifacts / "board-exactly-keyboard-choice.png"))
        page.keyboard.press("Enter")
    else:
        p = move["place"]
        focus_part(page, f"hand:{p['tile']}")
        page.keyboard.press("Enter")
        focus_part(page, f"spot:{p['at'][0]},{p['at'][1]}")
        page.keyboard.press("Enter")
        page.locator("#place").wait_for()
        page.screenshot(path=str(artifacts / "board-exagon-keyboard-choice.png"))
        focus_button(page, "#place")
        page.keyboard.press("Enter")
        # the rotation shown first may differ from the finder's: any that fits makes the same marks
        move = {"place": {**p}}
    wait_seq_above(page, seq)
    # the move made is in the log as the move the page offered
    assert any(a == move or (game == "exagon" and "place" in a) for a in legal)
    page.wait_for_function("() => document.querySelectorAll('#board .last-move').length > 0")
    marked = set(page.evaluate("[...document.querySelectorAll('#board .last-move')].map((e) => e.dataset.cell)"))
    assert marked == expected_marks(game, move), marked
    assert page.locator("#board .last-move-mark").count() == len(marked)
    page.screenshot(path=str(artifacts / f"board-{game}-last-move.png"))
    assert errors == []
    ctx.close()
