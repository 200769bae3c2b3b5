"""The lab in the browser on a phone, in English and in Italian: it asks a person to log in,
then a run is set up with the form (a compared option), played to its results and its report, and a
long run is cancelled; every screen fits 390 px with 44 px targets and speaks the page's language."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ludoteca.registry import GAMES, game_class
from ludoteca.web.launch import running_server
from tests.browser.conftest import language_context, open_menu, watch_errors
from tests.browser.test_browser_fit import page_problems, screens

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("lab-data")
    with running_server(str(data), "--lab", "--ai-delay", "0") as base:
        yield base


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_lab_on_a_phone_runs_compares_and_cancels(lab_server: str, browser: Any, lang: str) -> None:
    server = lab_server
    ctx = language_context(browser, lang, 390, 844, phone=True)
    page = ctx.new_page()
    errors = watch_errors(page)
    folder = screens()
    titles = tuple(game_class(g).title for g in GAMES)
    name = f"lab{uuid.uuid4().hex[:6]}"
    problems: list[str] = []
    try:
        page.goto(server + "/")  # the lobby links to the lab when the server's owner started it
        page.locator("#lab-link").wait_for(state="attached")
        open_menu(page)
        page.locator("#lab-link").tap()
        page.wait_for_url(re.compile(r"/lab$"))
        page.locator("#lab-login").wait_for()  # logged out: the page says how to get in
        problems += page_problems(page, f"/lab logged out {lang}", lang, server, titles)
        res = ctx.request.post(server + "/api/signup", data={"name": name, "password": "a long password"},
                               headers={"Origin": server})
        assert res.status == 201, res.text()

        page.goto(server + "/lab")
        page.locator("#new-run").wait_for()
        page.locator("#games").fill("8")
        page.locator("#compare-add").tap()  # the first option offered, every one of its values compared
        page.locator(".compared").wait_for()
        problems += page_problems(page, f"/lab form {lang}", lang, server, (*titles, name))
        page.screenshot(path=str(folder / f"lab-form-{lang}-390x844.png"), full_page=True)
        page.locator("#lab-start").tap()
        page.locator("#report-link").wait_for(timeout=120_000)  # the run opened, played and done
        assert page.locator("#run-view .variant-card").count() >= 2  # one card per variant
        assert page.locator("#run-view .verdict").count() >= 1
        problems += page_problems(page, f"/lab results {lang}", lang, server, (*titles, name))
        page.screenshot(path=str(folder / f"lab-results-{lang}-390x844.png"), full_page=True)

        assert page.locator("#csv-link").get_attribute("href").endswith("/games.csv")
        page.locator("#report-link").tap()
        page.wait_for_url(re.compile(r"/report$"))
        assert page.locator("img").count() >= 1  # the report's plots, embedded
        page.go_back()

        page.locator("#new-run").wait_for()  # a second run (another seed), then the two side by side
        page.locator("#games").fill("8")
        if not page.locator(".compared").count():
            page.locator("#compare-add").tap()
        page.locator("#more-box summary").tap()
        page.locator("#seed").fill("7")
        page.locator("#lab-start").tap()
        page.locator("#runs input[id^=pick-]").nth(1).wait_for(timeout=120_000)
        for k in range(2):
            page.locator("#runs label.pick").nth(k).tap()
        page.locator("#compare-runs").tap()
        page.locator("#side-by-side .verdict").wait_for()
        problems += page_problems(page, f"/lab side by side {lang}", lang, server, (*titles, name))
        page.screenshot(path=str(folder / f"lab-side-{lang}-390x844.png"), full_page=True)

        page.locator("#new-run").wait_for()
        if page.locator(".compared button").count():  # compare nothing: one long run
            page.locator(".compared button").first.tap()
        page.locator("#games").fill("20000")
        page.locator("#lab-start").tap()
        cancel = page.locator("#runs button.danger")
        cancel.wait_for()
        cancel.tap()
        page.wait_for_function("() => !document.querySelector('#runs button.danger, #run-view progress')",
                               timeout=60_000)  # stopped: no cancel button, no progress bar
        assert errors == [], errors
    finally:
        ctx.close()
    assert not problems, "\n".join(problems)
