"""Accessibility checked by a real checker: axe-core (Deque's reference engine, the ``axe.min.js``
shipped by the PyPI package ``axe-playwright-python``), run in Debian's Chromium over the lobby, a
table of each game mid-game, the rules pages and each game's guided first game.

Every page must pass the rules of :data:`tests.browser.conftest.A11Y_RULES` (buttons, links, form
fields and images have names, the page has a language and a title, the header's text is readable
on its colour); a failure lists each violation with the element and axe's reason. Besides axe,
every clickable part of a board must be a button to assistive technology (``role=button``) with a
non-empty accessible name as the browser computes it. Whatever else axe's WCAG A/AA rules find is
written to ``test-artifacts/a11y-<page>.txt`` for people to read (not asserted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import (
    GAME_SEATS,
    assert_accessible,
    axe_run,
    describe_violations,
    language_context,
    table_mid_game,
    unnamed_board_parts,
    watch_errors,
)
from tests.browser.test_browser_play import wait_state

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def write_full_report(page: Any, artifacts: Path, name: str) -> None:
    """Everything axe's WCAG 2.1 A/AA rules and best practices find on the page, for people to read."""
    result = page.evaluate("(tags) => axe.run(document, {runOnly: {type: 'tag', values: tags},"
                           " resultTypes: ['violations']})", WCAG)
    text = describe_violations(result["violations"]) or "no violations"
    (artifacts / f"a11y-{name}.txt").write_text(f"{page.url}\n\n{text}\n", encoding="utf-8")


def open_page(browser: Any, lang: str, url: str, width: int = 1280, height: int = 800,
              storage: Any = None) -> tuple[Any, Any, list[str]]:
    ctx = language_context(browser, lang, width, height, storage_state=storage)
    page = ctx.new_page()
    errors = watch_errors(page)
    response = page.goto(url)
    assert response is not None and response.ok, f"{url} answers {response.status if response else None}"
    return ctx, page, errors


def test_the_checker_finds_a_real_violation(server: str, browser: Any) -> None:
    """axe really runs on our pages (CSP included): a nameless button added to the lobby is caught;
    so are board parts that are not named buttons."""
    ctx, page, _ = open_page(browser, "en", server + "/")
    page.evaluate("() => { const b = document.createElement('button'); b.id = 'nameless';"
                  " document.querySelector('main').append(b); }")
    found = axe_run(page, "html", ["button-name"])
    assert [v["id"] for v in found] == ["button-name"]
    assert any("#nameless" in node["target"] for node in found[0]["nodes"])
    # and the board check sees a clickable part that is no button, and a button without a name
    page.evaluate("""() => { document.querySelector('main').insertAdjacentHTML('beforeend',
      '<svg id="board" viewBox="0 0 100 50"><rect class="clickable" width="40" height="40"/>'
      + '<rect class="clickable" role="button" x="50" width="40" height="40"/>'
      + '<rect class="clickable" role="button" aria-label="cell 1,1" x="50" y="10" width="4" height="4"/></svg>'); }""")
    problems = unnamed_board_parts(page)
    assert len(problems) == 2, problems
    assert problems[0].startswith("no role=button") and problems[1].startswith("a button without an accessible name")
    ctx.close()


@pytest.mark.parametrize(("lang", "width", "height"), [("en", 1280, 800), ("it", 390, 844)])
def test_the_lobby_passes_axe(server: str, browser: Any, artifacts: Path, lang: str, width: int,
                              height: int) -> None:
    ctx, page, errors = open_page(browser, lang, server + "/", width, height)
    page.wait_for_selector("#seat-0")  # the form is built from /api/games
    page.wait_for_function("() => !document.querySelector('#table-list .muted')"
                           " || !/…/.test(document.querySelector('#table-list').textContent)")
    assert_accessible(page, f"the lobby ({lang}, {width}x{height})")
    write_full_report(page, artifacts, f"lobby-{lang}")
    assert errors == []
    ctx.close()


@pytest.mark.parametrize("path", ["/rules", "/rules/tri", "/rules/exagon"])
@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_rules_pages_pass_axe(server: str, browser: Any, artifacts: Path, lang: str, path: str) -> None:
    ctx, page, errors = open_page(browser, lang, server + path, 390, 844)
    page.wait_for_load_state("networkidle")  # the drawings are made by the games' clients
    assert_accessible(page, f"the rules page {path} ({lang})")
    write_full_report(page, artifacts, f"rules{path.replace('/rules', '').replace('/', '-') or '-index'}-{lang}")
    assert errors == []
    ctx.close()


@pytest.mark.parametrize("game", list(GAME_SEATS))
def test_a_table_of_each_game_mid_game_passes_axe_and_names_its_board_parts(server: str, browser: Any,
                                                                             artifacts: Path, game: str) -> None:
    url, storage = table_mid_game(browser, server, game)
    for lang, (width, height) in (("it", (390, 844)), ("en", (1280, 800))):
        ctx, page, errors = open_page(browser, lang, url, width, height, storage)
        wait_state(page, "s.mine && s.status === 'playing'")
        page.wait_for_timeout(300)
        assert page.locator("#board .clickable").count() > 0, "nothing is clickable on the board on the player's turn"
        assert_accessible(page, f"the {game} table ({lang}, {width}x{height})")
        problems = unnamed_board_parts(page)
        assert not problems, f"{game} ({lang}): clickable board parts that are not named buttons:\n" + "\n".join(
            problems[:12])
        write_full_report(page, artifacts, f"table-{game}-{lang}")
        assert errors == []
        ctx.close()


@pytest.mark.parametrize("game", list(GAME_SEATS))
def test_the_guided_first_game_passes_axe_and_names_its_board_parts(server: str, browser: Any, artifacts: Path,
                                                                   game: str) -> None:
    ctx = language_context(browser, "it", 390, 844)
    page = ctx.new_page()
    errors = watch_errors(page)
    response = page.goto(f"{server}/learn/{game}")
    assert response is not None and response.ok, f"the guided game /learn/{game} is missing ({response.status})"
    page.locator("#board .clickable").first.wait_for()
    page.wait_for_timeout(300)
    assert_accessible(page, f"the guided {game} game")
    problems = unnamed_board_parts(page)
    assert not problems, f"guide {game}: clickable board parts that are not named buttons:\n" + "\n".join(problems[:12])
    write_full_report(page, artifacts, f"learn-{game}-it")
    assert errors == []
    ctx.close()
