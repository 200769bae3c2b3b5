"""The replay page's analysis on a 390 px phone, in Italian and English, in real Chromium.

A server analysing every finished game (``--analysis all``) ends a two-player TOHM game between random
AIs (the solved variant: exact figures); its replay shows the win-chance graph with its table of figures,
the summary per player, the three moments that decided the game and, on each labelled move of the log,
its label, loss and the better move; tapping such a move shows the position and then the better move on
the board. The page fits the phone (no sideways scroll, targets of 44 px) and the Italian page shows no
English. Screenshots: ``test-artifacts/analysis-<lang>-390.png`` (and ``-better``).
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.launch import running_server
from tests.browser.conftest import english_on_page, language_context, layout_problems, watch_errors

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LABELS = {"en": ("inaccuracy", "mistake", "blunder"), "it": ("imprecisione", "errore", "errore grave")}
TITLES = {"en": "Skill or luck?", "it": "Abilità o fortuna?"}
MOMENTS = {"en": "Three moments that decided the game", "it": "Tre momenti che hanno deciso la partita"}
BETTER = {"en": "Show the better move on the board", "it": "Mostra sul tabellone la mossa migliore"}
INSTEAD = {"en": "Instead: ", "it": "Invece: "}


def get_json(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read().decode())


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(server, table id): a finished TOHM game of two random AIs, analysed."""
    data = tmp_path_factory.mktemp("analysis-data")
    with running_server(str(data), "--ai-delay", "0", "--analysis", "all") as base:
        made = get_json(base + "/api/tables", {"game": "tohm", "players": 2,
                                               "seats": [{"kind": "ai", "level": "random"}] * 2})
        deadline = time.monotonic() + 150
        while get_json(f"{base}/api/tables/{made['id']}/analysis")["status"] != "ready":
            assert time.monotonic() < deadline, "the game was not analysed"
            time.sleep(0.3)
        yield base, made["id"]


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_replay_shows_the_analysis_on_a_phone(analysed: tuple[str, str], browser: Any, lang: str,
                                                  artifacts: Path) -> None:
    base, table_id = analysed
    analysis = get_json(f"{base}/api/tables/{table_id}/analysis")["analysis"]
    ctx = language_context(browser, lang, 390, 844)
    try:
        page = ctx.new_page()
        errors = watch_errors(page)
        page.goto(f"{base}/replay/{table_id}")
        page.wait_for_selector("#analysis svg.winchance polyline")
        panel = page.locator("#analysis")
        assert panel.locator("h2").inner_text() == TITLES[lang]
        assert panel.locator("polyline.wc-line").count() == 2  # one line per player
        rows = panel.locator(".wc-figures tbody tr")
        assert rows.count() == len(analysis["steps"]) + 1  # every position, for screen readers
        assert panel.locator(".analysis-summary li").count() == 2
        assert panel.locator("h3").inner_text() == MOMENTS[lang]
        assert panel.locator("ol.moments button").count() == len(analysis["decisive"])
        labelled = [s for s in analysis["steps"] if s.get("label")]
        verdicts = page.locator("#log .verdict")
        assert verdicts.count() >= 1 and set(verdicts.all_inner_texts()) <= set(LABELS[lang])
        assert not layout_problems(page, phone=True)
        page.screenshot(path=str(artifacts / f"analysis-{lang}-390.png"), full_page=True)

        # a labelled move: the position after it, its figures, then the better move on the board
        first = labelled[0]
        page.locator(f"#log li[data-step='{first['step'] + 1}']").first.click()
        box = page.locator("#move-analysis")
        box.wait_for(state="visible")
        assert LABELS[lang][("inaccuracy", "mistake", "blunder").index(first["label"])] in box.inner_text()
        played = page.locator("#board").inner_html()
        page.get_by_role("button", name=BETTER[lang]).click()
        assert page.locator("#banner").inner_text().startswith(INSTEAD[lang])
        assert page.locator("#board").inner_html() != played
        assert not layout_problems(page, phone=True)
        page.screenshot(path=str(artifacts / f"analysis-{lang}-390-better.png"), full_page=True)

        # a decisive moment takes the replay to its position
        page.locator("ol.moments button").first.click()
        assert page.locator("#slider").input_value() == str(analysis["decisive"][0] + 1)
        if lang == "it":
            assert english_on_page(page, skip=("TOHM",)) == []
        assert errors == []
    finally:
        ctx.close()
