"""The ``perfect`` AI on a 390 px phone, in English and Italian, in real Chromium.

TOHM for two players on its 3x3 board is solved (RULES.md section 3, docs/strength.md): the lobby
offers "AI: perfect ≈ <its ladder rating>" for it, and takes the choice away for three players (not
solved) and gives it back for two; a table made with it names the seat "AI 2 (perfect)" with the tag
"Perfect AI" ("IA 2 (perfetta)", "IA perfetta": the AI is feminine in Italian); a replay of a game the
perfect AI played names it the same way. Every page fits the phone and the Italian ones show no English.
Screenshots: ``test-artifacts/perfect-{lobby,table,replay}-<lang>-390.png``.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.agents.ladder import ladder
from ludoteca.web.launch import running_server
from tests.browser.conftest import english_on_page, language_context, layout_problems, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

WORDS = {
    "en": {"level": "perfect", "hint": "never errs", "tag": "Perfect AI", "seat": "AI {n} (perfect)"},
    "it": {"level": "perfetta", "hint": "non sbaglia mai", "tag": "IA perfetta", "seat": "IA {n} (perfetta)"},
}
GROUPING = {"en": ",", "it": r"\.?"}  # Italian groups four-digit numbers or not, by the ICU version


def post(url: str, body: Any) -> Any:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read().decode())


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(server, table id): a server whose AIs move at once, and a finished game of the perfect AI against
    the random one (for the replay)."""
    data = tmp_path_factory.mktemp("perfect-data")
    with running_server(str(data), "--ai-delay", "0") as base:
        seats = [{"kind": "ai", "level": "perfect"}, {"kind": "ai", "level": "random"}]
        made = post(base + "/api/tables", {"game": "tohm", "players": 2, "seats": seats})
        deadline = time.monotonic() + 150
        while True:
            with urllib.request.urlopen(f"{base}/api/tables/{made['id']}", timeout=30) as res:
                if json.loads(res.read().decode())["status"] == "over":
                    break
            assert time.monotonic() < deadline, "the perfect AI's game did not end"
            time.sleep(0.3)
        yield base, made["id"]


def perfect_option(page: Any) -> Any:
    return page.locator("#seat-1 option[value='ai:perfect']")


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_perfect_ai_on_a_phone(played: tuple[str, str], browser: Any, lang: str, artifacts: Path) -> None:
    base, finished = played
    words = WORDS[lang]
    rating = {level: r.display for level, r, _low, _high in ladder("tohm")}["perfect"]
    shown = f"{rating // 1000}{GROUPING[lang]}{rating % 1000:03d}"
    ctx = language_context(browser, lang, 390, 844)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(base + "/")
        page.select_option("#game", "tohm")
        page.select_option("#players", "2")
        perfect_option(page).wait_for(state="attached")
        label = perfect_option(page).inner_text()
        ai = "AI" if lang == "en" else "IA"
        assert re.fullmatch(rf"{ai}: {words['level']} ≈ {shown} — {words['hint']}.*", label), label
        # three players: not solved, not offered; two again: offered again
        page.select_option("#players", "3")
        perfect_option(page).wait_for(state="detached")
        page.select_option("#players", "2")
        perfect_option(page).wait_for(state="attached")
        page.select_option("#seat-1", "ai:perfect")
        assert layout_problems(page, phone=True) == []
        if lang == "it":
            # the list of tables shows the English test's table: its default seat names in this page's language
            assert english_on_page(page, ("TOHM", "EXAGON", "TRI", "exactly")) == []
            assert "(perfect)" not in page.inner_text("#table-list")
        page.screenshot(path=str(artifacts / f"perfect-lobby-{lang}-390.png"), full_page=True)

        page.click("#create-btn")
        page.wait_for_url(re.compile(r"/t/"))
        page.get_by_text(words["tag"], exact=True).first.wait_for(timeout=20_000)
        page.get_by_text(words["seat"].format(n=2)).first.wait_for()
        assert layout_problems(page, phone=True) == []
        page.screenshot(path=str(artifacts / f"perfect-table-{lang}-390.png"), full_page=True)

        page.goto(f"{base}/replay/{finished}")
        page.get_by_text(words["seat"].format(n=1), exact=False).first.wait_for(timeout=20_000)
        assert layout_problems(page, phone=True) == []
        if lang == "it":
            assert english_on_page(page, ("TOHM",)) == []
        page.screenshot(path=str(artifacts / f"perfect-replay-{lang}-390.png"), full_page=True)
        assert errors == []
    finally:
        ctx.close()
