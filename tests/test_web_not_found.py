"""Addresses that lead nowhere: an unknown table, game or player answers a 404 page in the
requester's language that says what was not found and links back to the lobby (web/lobby/notfound.py); the
pages that exist are unchanged."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from ludoteca.registry import GAMES
from ludoteca.web.app import create_app

ITALIAN = {"Accept-Language": "it-IT,it;q=0.9,en;q=0.5"}
MISSING = [
    ("/t/nosuchtable", "There is no table “nosuchtable” here", "Qui non c’è nessun tavolo «nosuchtable»"),
    ("/learn/nosuchgame", "There is no game called “nosuchgame”.", "Non c’è nessun gioco che si chiami «nosuchgame»."),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=tmp_path_factory.mktemp("not-found"), ai_delay=0, rate=10_000, burst=10_000)
    with TestClient(app) as c:
        yield c


@pytest.mark.parametrize(("path", "english", "italian"), MISSING)
def test_an_unknown_address_is_a_404_page_in_the_readers_language(client: TestClient, path: str, english: str,
                                                                  italian: str) -> None:
    en = client.get(path, headers={"Accept-Language": "en-US"})
    assert en.status_code == 404 and en.headers["content-type"].startswith("text/html")
    assert english in en.text and "Page not found" in en.text and 'href="/"' in en.text
    assert "Back to the lobby" in en.text and '<html lang="en">' in en.text
    it = client.get(path, headers=ITALIAN)
    assert it.status_code == 404 and it.headers["content-language"] == "it"
    assert italian in it.text and "Pagina non trovata" in it.text and "Torna alla lobby" in it.text
    assert "Page not found" not in it.text and "Back to the lobby" not in it.text
    assert client.get(path + "?lang=it").text == it.text  # ?lang= chooses too
    assert 'name="viewport"' in it.text and "<script" not in it.text  # a plain page sized for a phone


def test_a_name_on_the_page_is_text_and_bounded(client: TestClient) -> None:
    res = client.get("/learn/%3Cscript%3Ealert(1)%3C%20script%3E")
    assert res.status_code == 404 and "<script>alert" not in res.text and "&lt;script&gt;" in res.text
    long = client.get("/learn/" + "x" * 5000)
    assert long.status_code == 404 and "x" * 41 not in long.text and "x" * 40 + "…" in long.text
    odd = client.get("/t/" + "y" * 100)  # not even the form of a table id: never looked up
    assert odd.status_code == 404


def test_an_unknown_rules_page_keeps_its_own_404_page(client: TestClient) -> None:
    """/rules/nosuch had a proper 404 page already (web/lobby/rules.py: the games listed, the way back)."""
    for lang, text, back in (("en", "There is no game called “nosuch”.", "Back to the lobby"),
                             ("it", "Non esiste un gioco chiamato «nosuch».", "Torna alla lobby")):
        res = client.get("/rules/nosuch", params={"lang": lang})
        assert res.status_code == 404 and text in res.text and back in res.text and 'href="/"' in res.text


def test_an_unknown_player_keeps_the_profile_pages_404(client: TestClient) -> None:
    """/players/nosuch answered 404 already: the profile page says in the reader's language that there is
    no such player (tests/browser/test_browser_ratings.py reads it in Italian)."""
    res = client.get("/players/nosuch", headers=ITALIAN)
    assert res.status_code == 404 and "profile.js" in res.text and 'href="/"' in res.text


def test_the_pages_that_exist_are_unchanged(client: TestClient) -> None:
    for name in GAMES:
        assert client.get(f"/rules/{name}").status_code == 200
        assert client.get(f"/rules/{name.upper()}").status_code == 200
        learn = client.get(f"/learn/{name}")
        assert learn.status_code == 200 and "guide.js" in learn.text
    made = client.post("/api/tables", json={"game": GAMES[0], "players": 2}).json()
    table = client.get(made["url"])
    assert table.status_code == 200 and "table.js" in table.text


def test_any_other_unknown_page_is_the_same_404_page_for_a_browser(client: TestClient) -> None:
    page = client.get("/nowhere/at/all", headers={"Accept": "text/html,application/xhtml+xml", **ITALIAN})
    assert page.status_code == 404 and "All’indirizzo «/nowhere/at/all» non c’è niente." in page.text
    assert "Torna alla lobby" in page.text
    api = client.get("/nowhere/at/all")  # a script or an API client: the usual JSON answer
    assert api.status_code == 404 and api.json() == {"detail": "Not Found"}
    assert client.get("/static/nosuch.js", headers={"Accept": "*/*"}).status_code == 404
