"""The browser in Italian and English, in Chromium.

A browser set to Italian (locale it-IT) gets every page in Italian without choosing anything; the
language switch of the header changes it and the choice sticks (the same cookie as the rules
pages); no page — the lobby, a table, the replay of a finished game, the rules — shows a text that
is still English: neither an English message of the browser catalogs whose Italian differs, nor
one of a few English words that never belong to an Italian page (game and player names aside).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

STOP_WORDS = ("the", "and", "you", "your", "player", "seat", "table", "wins", "move")
"""English words that are never part of an Italian page, as whole words."""
ALWAYS_NAMES = ("ludoteca", "English", "Italiano")
"""Names shown in every language: the product and the languages' own names in the switch."""

VISIBLE_TEXTS = """() => {
  const shown = (el) => {
    if (!el || !el.getClientRects().length) return false;
    const style = getComputedStyle(el);
    return style.visibility !== "hidden" && style.display !== "none" && style.opacity !== "0";
  };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.replace(/\\s+/g, " ").trim();
    const el = n.parentElement;
    if (!text || !el || el.closest("script, style, noscript")) continue;
    if (el.closest("option")) continue;  // the options of a select: below
    if (el.closest("svg title") ? shown(el.closest("svg")) : shown(el)) out.push(text);
  }
  for (const select of document.querySelectorAll("select")) {
    if (shown(select)) for (const o of select.options) out.push(o.textContent.replace(/\\s+/g, " ").trim());
  }
  for (const el of document.querySelectorAll("[placeholder], [title], [aria-label]")) {
    if (!shown(el)) continue;
    for (const a of ["placeholder", "title", "aria-label"]) {
      const v = el.getAttribute(a);
      if (v && v.trim()) out.push(v.replace(/\\s+/g, " ").trim());
    }
  }
  out.push(document.title);
  return out.filter(Boolean);
}"""


def get_json(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read().decode())


def context(browser: Any, locale: str, width: int = 1280, height: int = 800) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": width, "height": height}, locale=locale)
    ctx.set_default_timeout(20_000)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return ctx, page, errors


class EnglishFinder:
    """Finds English left on an Italian page: a message of the served catalog shown in English (its
    Italian differs), a template of one (``Seat {n}`` shown as "Seat 2"), or a stop word."""

    def __init__(self, server: str, names: list[str]) -> None:
        messages = get_json(server + "/i18n/it.json")["messages"]
        self.exact = {msgid for msgid, text in messages.items() if text != msgid and "{" not in msgid}
        self.templates = []
        for msgid, text in messages.items():
            if text == msgid or "{" not in msgid:
                continue
            literal = re.sub(r"\{\w+\}", "", msgid)
            if len(re.findall(r"[A-Za-z]", literal)) >= 4:
                pattern = re.escape(msgid)
                pattern = re.sub(r"\\\{\w+\\\}", ".+?", pattern)
                self.templates.append((msgid, re.compile(pattern)))
        self.names = sorted({n for n in [*names, *ALWAYS_NAMES] if n}, key=len, reverse=True)
        self.words = re.compile(r"\b(" + "|".join(STOP_WORDS) + r")\b", re.IGNORECASE)

    def problems(self, texts: list[str]) -> list[str]:
        found = []
        for text in texts:
            if text in self.exact:
                found.append(f"{text!r} is an English message")
                continue
            template = next((msgid for msgid, rx in self.templates if rx.fullmatch(text)), None)
            if template is not None:
                found.append(f"{text!r} is the English message {template!r}")
                continue
            rest = text
            for name in self.names:
                rest = rest.replace(name, " ")
            word = self.words.search(rest)
            if word:
                found.append(f"{text!r} holds the English word {word.group(0)!r}")
        return sorted(set(found))


def game_titles(server: str) -> list[str]:
    return [g["title"] for g in get_json(server + "/api/games")["games"]]


def finished_table(server: str, name: str | None = None) -> dict[str, Any]:
    """A short game (``name``, else the first with a turn limit) between random AIs, played to the end
    (a turn limit of 2)."""
    games = get_json(server + "/api/games")["games"]
    game = next(g for g in games if any(o["name"] == "turn_limit" for o in g["options"])
                and (name is None or g["name"] == name))
    made = get_json(server + "/api/tables", {"game": game["name"], "players": game["min_players"],
                                             "options": {"turn_limit": 2},
                                             "seats": [{"kind": "ai", "level": "random"}] * game["min_players"]})
    deadline = time.time() + 90
    while time.time() < deadline:
        table = get_json(f"{server}/api/tables/{made['id']}")
        if table["status"] == "over":
            return dict(table)
        time.sleep(0.3)
    raise AssertionError("the AIs' game did not end")


def test_an_italian_browser_gets_the_lobby_in_italian_and_english_one_in_english(
        server: str, browser: Any, artifacts: Path) -> None:
    for locale, lang in (("it-IT", "it"), ("en-US", "en")):
        for width, height in ((1280, 800), (390, 844)):
            ctx, page, errors = context(browser, locale, width, height)
            try:
                page.goto(server + "/")
                page.wait_for_selector("#seat-1 option[value='ai:random']", state="attached")
                assert page.evaluate("document.documentElement.lang") == lang
                expected = {"it": ("Crea il tavolo", "Nuovo tavolo", "Il tuo nome"),
                            "en": ("Create table", "New table", "Your name")}[lang]
                assert page.locator("#create-btn").inner_text() == expected[0]
                assert page.locator("#create h2").inner_text() == expected[1]
                assert page.locator("label[for=name]").inner_text() == expected[2]
                switch = page.locator("header .lang-switch")
                assert switch.locator("a.current").inner_text() == {"it": "Italiano", "en": "English"}[lang]
                assert not page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
                page.screenshot(path=str(artifacts / f"language-lobby-{lang}-{width}x{height}.png"), full_page=True)
                assert errors == []
            finally:
                ctx.close()


def test_the_language_switch_sticks_across_pages_and_reloads(server: str, browser: Any) -> None:
    ctx, page, errors = context(browser, "en-US")
    try:
        page.goto(server + "/")
        page.wait_for_selector("header .lang-switch a.current[lang=en]")
        assert page.locator("#create-btn").inner_text() == "Create table"
        with page.expect_navigation():
            page.locator("header .lang-switch a[lang=it]").click()
        page.wait_for_selector("header .lang-switch a.current[lang=it]")
        assert page.locator("#create-btn").inner_text() == "Crea il tavolo"
        assert {c["name"]: c["value"] for c in ctx.cookies()}["ludoteca_lang"] == "it"
        page.reload()
        page.wait_for_selector("header .lang-switch a.current[lang=it]")
        assert page.locator("#create-btn").inner_text() == "Crea il tavolo"
        page.goto(server + "/rules")  # the rules pages read the same cookie
        assert page.evaluate("document.documentElement.lang") == "it"
        page.locator("header .lang-switch a[lang=en]").click()  # and set it too
        page.wait_for_load_state()
        page.goto(server + "/")
        page.wait_for_selector("header .lang-switch a.current[lang=en]")
        assert page.locator("#create-btn").inner_text() == "Create table"
        page.goto(server + "/?lang=it")  # an address may ask for a language: it sticks too
        page.wait_for_selector("header .lang-switch a.current[lang=it]")
        page.goto(server + "/")
        page.wait_for_selector("header .lang-switch a.current[lang=it]")
        assert page.locator("#create-btn").inner_text() == "Crea il tavolo"
        assert errors == []
    finally:
        ctx.close()


def test_a_refusal_of_the_server_is_shown_in_italian(server: str, browser: Any) -> None:
    ctx, page, errors = context(browser, "it-IT")
    try:
        page.goto(server + "/")
        page.wait_for_selector("#seat-1 option[value='ai:random']", state="attached")
        page.evaluate("document.getElementById('name').removeAttribute('maxlength')")
        page.fill("#name", "Anna" * 10)  # longer than a name may be
        page.click("#create-btn")
        error = page.locator("#create-error")
        error.wait_for(state="visible")
        page.wait_for_function("document.getElementById('create-error').textContent.length > 0")
        assert error.inner_text() == "un nome ha al massimo 24 caratteri"
        assert errors == []
    finally:
        ctx.close()


def test_no_page_shows_english_to_an_italian_browser(server: str, browser: Any, artifacts: Path) -> None:
    titles = game_titles(server)
    over = finished_table(server)
    games = get_json(server + "/api/games")["games"]
    game = games[0]
    seats = [{"kind": "open"}] + [{"kind": "ai", "level": "random"}] * (game["min_players"] - 1)
    live = get_json(server + "/api/tables", {"game": game["name"], "players": game["min_players"], "seats": seats,
                                             "sit": 0, "name": "Anna"})
    names = ["Anna", *[s["name"] for s in over["seats"]],
             *[s.get("name") or "" for s in get_json(f"{server}/api/tables/{live['id']}")["seats"]], *titles]
    finder = EnglishFinder(server, names)
    ctx, page, errors = context(browser, "it-IT", 1280, 800)
    seen: dict[str, list[str]] = {}
    try:
        page.add_init_script(f"localStorage.setItem('ludoteca.seat.{live['id']}', "
                             f"JSON.stringify({{seat: 0, token: {json.dumps(live['token'])}}}));")
        page.goto(server + "/")
        page.wait_for_selector("#seat-1 option[value='ai:random']", state="attached")
        page.wait_for_selector("#my-table-list a")
        seen["lobby"] = page.evaluate(VISIBLE_TEXTS)
        page.screenshot(path=str(artifacts / "language-it-lobby.png"), full_page=True)

        page.goto(f"{server}/t/{live['id']}")
        page.wait_for_selector("#board *", state="attached")
        page.wait_for_timeout(1500)  # the AI's first moves and their announcements
        seen["table"] = page.evaluate(VISIBLE_TEXTS)
        page.screenshot(path=str(artifacts / "language-it-table.png"), full_page=True)

        page.goto(f"{server}/replay/{over['id']}")
        page.wait_for_selector("#log li")
        page.locator("#log li").last.click()
        seen["replay (end)"] = page.evaluate(VISIBLE_TEXTS)
        page.click("#first")
        page.click("#next")
        seen["replay (step 1)"] = page.evaluate(VISIBLE_TEXTS)
        page.screenshot(path=str(artifacts / "language-it-replay.png"), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        assert not page.evaluate("document.documentElement.scrollWidth > window.innerWidth")
        page.screenshot(path=str(artifacts / "language-it-replay-390x844.png"), full_page=True)
        page.set_viewport_size({"width": 1280, "height": 800})

        page.goto(server + "/rules")
        page.wait_for_selector("main")
        seen["rules"] = page.evaluate(VISIBLE_TEXTS)
        page.screenshot(path=str(artifacts / "language-it-rules.png"), full_page=True)
        assert errors == []
    finally:
        ctx.close()
    assert all(seen.values())
    problems = {where: finder.problems(texts) for where, texts in seen.items()}
    problems = {where: found for where, found in problems.items() if found}
    assert not problems, "English on Italian pages:\n" + "\n".join(
        f"{where}: {line}" for where, found in problems.items() for line in found)


GROUPING_GAMES = """async (names) => {
  const out = [];
  for (const name of names) {
    const client = await import(`/games/${name}/client.js`);
    if (client.LOG_GROUPS && Object.keys(client.LOG_GROUPS).length) out.push(name);
  }
  return out;
}"""


def test_the_replay_groups_a_deal_and_announces_the_end(server: str, browser: Any, artifacts: Path) -> None:
    """The replay's log uses the table's lines: a run of chance the game's client groups (a deal) is
    one line, whose details list its steps; the position after a move shows its announcements."""
    ctx, page, errors = context(browser, "it-IT")
    try:
        page.goto(server + "/")
        page.wait_for_selector("#create-btn")
        grouping = page.evaluate(GROUPING_GAMES, [g["name"] for g in get_json(server + "/api/games")["games"]])
        assert grouping, "no game's client groups its log"
        over = finished_table(server, grouping[0])
        page.goto(f"{server}/replay/{over['id']}")
        page.wait_for_selector("#log li")
        assert page.locator("#step").inner_text().startswith("posizione 0 / ")
        assert page.locator("#banner").inner_text() == "Inizio della partita"
        page.keyboard.press("End")
        assert page.locator("#banner").inner_text().startswith("Fine: ")
        assert page.locator("#log li.current").count() == 1
        assert page.locator("#announce").is_visible()  # the last move ends the game: "partita finita: …"
        assert page.locator("#announce").inner_text().startswith("partita finita")
        group = page.locator("#log li.group").first
        assert not group.locator(".group-item").first.is_visible()
        group.locator("summary").click()
        group.locator(".group-item").first.wait_for(state="visible")
        assert group.locator(".group-item").count() > 1
        page.screenshot(path=str(artifacts / "language-it-replay-group.png"), full_page=True)
        assert errors == []
    finally:
        ctx.close()
