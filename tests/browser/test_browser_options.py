"""Options for people in the lobby, on a 390-px phone in real Chromium: each option is
drawn as the control of its declared kind (a select, a switch, a number, a "none" switch beside the
seconds, a file upload in a "for designers" fold), never as JSON text, in English and Italian; the
controls make a table with the chosen values; a bad designer's file gets a clear translated error.
The games and their options are asked of the classes: no game is named here."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ludoteca.core.options import Option
from ludoteca.i18n import web_text
from ludoteca.registry import GAMES, game_class
from tests.browser.conftest import MIN_TAP, assert_accessible, language_context, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PHONE = (390, 844)
FORM_TEXTS_JS = """() => {
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== "hidden";
  const out = [];
  for (const e of document.querySelectorAll("#options *")) {
    if (!shown(e)) continue;
    if (e.matches("input:not([type=file]), select")) out.push(String(e.value));
    if (e.matches("input")) out.push(e.getAttribute("placeholder") || "");
    for (const n of e.childNodes) if (n.nodeType === Node.TEXT_NODE) out.push(n.textContent);
  }
  return out.map((t) => t.trim()).filter(Boolean);
}"""
JSON_WORDS = re.compile(r'[{}"]|\b(null|true|false)\b')


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def open_lobby(page: Any, server: str, game: str, players: int) -> None:
    page.goto(server + "/")
    page.wait_for_selector(f"#game option[value='{game}']", state="attached")
    page.select_option("#game", game)
    page.select_option("#players", str(players))
    page.wait_for_selector("#options .form-row", state="attached")


def resolved_default(game: str, option: Option, players: int) -> Any:
    return game_class(game)(players=players).options[option.name]


@pytest.mark.parametrize("lang", ["en", "it"])
def test_each_option_is_the_control_of_its_kind_in_the_players_language_never_json(
        server: str, browser: Any, artifacts: Path, lang: str) -> None:
    ctx = language_context(browser, lang, *PHONE)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        for game in GAMES:
            cls = game_class(game)
            open_lobby(page, server, game, cls.min_players)
            designers = page.locator("#designers")
            if designers.count():
                designers.locator("summary").click()
            for option in cls.OPTIONS:
                control = page.locator(f"#opt-{option.name}")
                tag, kind = control.evaluate("(e) => [e.tagName.toLowerCase(), e.type]")
                row = control.locator("xpath=ancestor::div[contains(@class, 'form-row')][1]")
                assert capital(web_text(lang, option.shown_label)) in row.inner_text()
                if option.kind == "choice":
                    assert tag == "select"
                    shown = control.locator("option").all_inner_texts()
                    assert shown == [capital(web_text(lang, c.label)) for c in option.choices]
                elif option.kind == "bool":
                    assert (tag, kind, control.get_attribute("role")) == ("input", "checkbox", "switch")
                elif option.kind == "int":
                    assert (tag, kind) == ("input", "number") and control.get_attribute("min") == str(option.low)
                elif option.kind == "seconds_or_none":
                    assert (tag, kind) == ("input", "number")
                    none = page.locator(f"#opt-{option.name}-none")
                    assert none.get_attribute("role") == "switch"
                    assert capital(web_text(lang, option.none_label)) in \
                        page.locator(f"label[for='opt-{option.name}-none']").inner_text()
                elif option.kind == "file":
                    assert (tag, kind) == ("input", "file")
                    assert designers.locator(f"#opt-{option.name}").count() == 1, "under 'for designers'"
                    # the browser's own button would speak the browser's language: ours says it
                    pick = page.locator(f"label[for='opt-{option.name}']")
                    assert pick.inner_text() == web_text(lang, "Choose a file") and pick.is_visible()
                else:
                    raise AssertionError(f"{option.name}: kind {option.kind}")
            # a switch is a whole row a thumb can hit; every select and field is 44 px high
            for box in page.locator("#options .switch-row, #options select, #options input[type=number], "
                                    "#options summary, #options .file-pick").all():
                size = box.bounding_box()
                assert size and size["height"] >= MIN_TAP - 0.5, (box.evaluate("(e) => e.outerHTML"), size)
            found = [text for text in page.evaluate(FORM_TEXTS_JS) if JSON_WORDS.search(text)]
            assert found == [], f"{game}: JSON in the options form: {found}"
            assert page.evaluate("() => document.scrollingElement.scrollWidth <= innerWidth")
            assert_accessible(page, f"the lobby's options ({game}, {lang})")
            page.locator("#create").screenshot(path=str(artifacts / f"options-{game}-{lang}.png"))
        assert errors == []
    finally:
        ctx.close()


def choose(page: Any, game: str, players: int, tmp_path: Path) -> dict[str, Any]:
    """Set every option to a value other than its default through its control; the values chosen."""
    chosen: dict[str, Any] = {}
    seconds_done = False
    page.evaluate("() => { const d = document.getElementById('designers'); if (d) d.open = true; }")
    for option in game_class(game).OPTIONS:
        control = page.locator(f"#opt-{option.name}")
        if option.variant:
            # a rulebook variant for designers: folded with the designer's files, at the rulebook's value
            assert control.evaluate("(e) => !!e.closest('#designers')"), option.name
            continue
        default = resolved_default(game, option, players)
        if option.kind == "choice":
            index = next(i for i, c in reversed(list(enumerate(option.choices))) if c.value != default)
            control.select_option(str(index))
            chosen[option.name] = option.choices[index].value
        elif option.kind == "bool":
            control.set_checked(not default)
            chosen[option.name] = not default
        elif option.kind == "int":
            value = option.low + 5 if option.low + 5 != default else option.low + 4
            value = min(value, option.high) if option.high is not None else value
            control.fill(str(value))
            chosen[option.name] = value
        elif option.kind == "seconds_or_none":
            if not seconds_done:  # the first: a number of seconds; the others: none
                control.fill("45")
                chosen[option.name] = 45
                seconds_done = True
            else:
                page.locator(f"#opt-{option.name}-none").set_checked(True)
                chosen[option.name] = None
        elif option.kind == "file":
            path = tmp_path / f"{option.name}.json"
            path.write_text(json.dumps(default, indent=1))  # a designer's file: valid, the usual one written out
            control.set_input_files(str(path))
            page.locator(".file-status", has_text=path.name).wait_for()
            chosen[option.name] = json.loads(path.read_text())
    return chosen


def test_the_controls_make_a_table_with_the_chosen_values(
        server: str, browser: Any, artifacts: Path, tmp_path: Path) -> None:
    ctx = language_context(browser, "en", *PHONE)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        for game in GAMES:
            players = game_class(game).min_players
            open_lobby(page, server, game, players)
            page.fill("#name", "Ann")
            chosen = choose(page, game, players, tmp_path)
            with page.expect_request(lambda r: r.url.endswith("/api/tables") and r.method == "POST") as sent:
                page.click("#create-btn")
            assert sent.value.post_data_json["options"] == chosen, "the form sends values, as JSON values"
            page.wait_for_url(re.compile(r"/t/"))
            page.wait_for_function("() => window.ludoteca && window.ludoteca.msg && window.ludoteca.msg.game")
            table = page.evaluate("() => window.ludoteca.msg.game.options")
            for name, value in chosen.items():
                if name in table:  # a designer's file may stay on the server (never echoed back)
                    assert table[name] == value, (game, name, table[name], value)
            assert page.locator("#create-error").count() == 0 or not page.locator("#create-error").inner_text()
        assert errors == []
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_bad_designers_file_gets_a_clear_error_in_the_players_language(
        server: str, browser: Any, artifacts: Path, tmp_path: Path, lang: str) -> None:
    files = [(game, option) for game in GAMES for option in game_class(game).OPTIONS if option.kind == "file"]
    assert files
    refusal = web_text(lang, "the game refuses these options: {reason}").split("{")[0]
    ctx = language_context(browser, lang, *PHONE)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        for game, option in files:
            open_lobby(page, server, game, game_class(game).min_players)
            page.locator("#designers summary").click()
            status = page.locator(f"#opt-{option.name}").locator("xpath=../following-sibling::div[contains(@class, "
                                                                  "'file-status')][1]")
            # not JSON at all: said at once, in the player's language, nothing sent
            broken = tmp_path / "broken.json"
            broken.write_text("3, 4, 5 and then some words")
            page.set_input_files(f"#opt-{option.name}", str(broken))
            expected = web_text(lang, "{file} cannot be read: it is not a JSON file", file=broken.name)
            page.wait_for_function("(t) => [...document.querySelectorAll('.file-status')].some((e) => "
                                   "e.textContent === t)", arg=expected)
            assert "error" in (status.get_attribute("class") or "")
            # JSON, but no designer's set: a grid with a number out of range; the server's reason, translated
            bad = tmp_path / "bad.json"
            bad.write_text(json.dumps([[3, 4, 5], [5, 6, 3], [4, 3, 7]]))
            page.set_input_files(f"#opt-{option.name}", str(bad))
            page.locator(".file-status", has_text=bad.name).wait_for()
            page.click("#create-btn")
            error = page.locator("#create-error")
            page.wait_for_function("() => document.querySelector('#create-error').textContent.trim() !== ''")
            text = error.inner_text()
            assert text.startswith(refusal) and web_text(lang, option.shown_label) in text, text
            assert not re.search(r'[{}"]|\bnull\b', text), text
            assert page.url.endswith("/"), "no table was made"
            page.screenshot(path=str(artifacts / f"options-bad-file-{game}-{lang}.png"))
        assert errors == []
    finally:
        ctx.close()
