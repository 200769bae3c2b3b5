"""The browser in Italian and English: the catalogs, their extraction, the served JSON,
the server's messages and the lobby's option texts in the requester's language."""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from ludoteca import i18n
from ludoteca.registry import GAMES
from ludoteca.web.app import create_app
from ludoteca.web.errors import Code, WebError, error_body

STATIC = Path(i18n.__file__).parent / "web" / "static"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=tmp_path_factory.mktemp("web"), ai_delay=0, freeze_gc=False)
    with TestClient(app) as c:
        yield c


def italian(path: Path) -> dict[str, str]:
    """msgid -> msgstr (singular and plural alike) of an Italian .po file, fuzzy ones left out."""
    if not path.exists():
        return {}
    return i18n.catalog_messages(i18n.read_catalog(path, "it"))


def fields(text: str) -> set[str]:
    return {name for _text, name, _spec, _conv in string.Formatter().parse(text) if name is not None}


# --- the catalogs ---------------------------------------------------------------------------------------


CATALOGS = [i18n.WEB_DOMAIN, *(label for name in GAMES for label in (name, f"{name}:options"))]


def test_there_is_a_browser_catalog_for_the_shell_and_for_every_game() -> None:
    """Each game's catalogs live in its package: its client's texts, its options' texts."""
    labels = [label for label, _po, _make in i18n.browser_catalogs()]
    assert labels == CATALOGS
    for label, po, _make in i18n.browser_catalogs()[1:]:
        name = label.split(":")[0]
        assert po == i18n.game_dir(name) / "locale" / ("options.it.po" if label.endswith(":options") else "it.po")


@pytest.mark.parametrize("label", CATALOGS)
def test_every_message_of_every_browser_catalog_has_an_italian_translation(label: str) -> None:
    """Extracted from the sources now (scripts, pages, server messages, game clients, options'
    help): a new text without Italian fails here. Fix: scripts/i18n.py, then translate the .po."""
    _label, po, make = next(c for c in i18n.browser_catalogs() if c[0] == label)
    catalog = italian(po)
    missing = []
    for message in make():
        ids = message.id if isinstance(message.id, list | tuple) else (message.id,)
        missing += [msgid for msgid in ids if msgid and not catalog.get(msgid, "").strip()]
    assert not missing, f"run scripts/i18n.py and translate in {po}:\n" + "\n".join(missing)


@pytest.mark.parametrize("label", CATALOGS)
def test_translations_keep_the_placeholders_of_their_message(label: str) -> None:
    po = next(c[1] for c in i18n.browser_catalogs() if c[0] == label)
    wrong = {msgid: text for msgid, text in italian(po).items() if fields(msgid) != fields(text)}
    assert not wrong, wrong


def test_the_extractors_find_scripts_pages_plurals_and_server_messages() -> None:
    catalog = i18n.extract_web()
    ids = {m.id if isinstance(m.id, str) else tuple(m.id) for m in catalog if m.id}
    assert "Seat {n}" in ids  # common.js: t("Seat {n}", {n})
    assert ("Replay · {game} · {n} player · table {table}",
            "Replay · {game} · {n} players · table {table}") in ids  # replay.js: tn(singular, plural, n)
    assert "Create table" in ids and "no sign-up needed" in ids  # index.html: data-i18n, data-i18n-placeholder
    assert "forward (→)" in ids  # replay.html: data-i18n-title
    assert "seat {seat} is already taken" in ids  # WebError(Code.SEAT_TAKEN, "…", seat=…)
    assert "the game has not started" in ids and "the game is over" in ids  # both branches of a conditional
    assert "plays any legal move" in ids  # N_() in web/master/ai.py
    places = {loc[0].split("/")[-1] for m in catalog for loc in m.locations}
    assert {"common.js", "lobby.js", "replay.js", "index.html", "replay.html", "lobby.py"} <= places


def test_a_message_nested_in_the_parameters_of_another_is_extracted(tmp_path: Path) -> None:
    # Babel's JavaScript extractor reports only the outer call of t("{name} · {dice}", {dice: t("1 die")});
    # the inner message must reach the catalog too, or the Italian page shows "1 die".
    from babel.messages.catalog import Catalog

    script = tmp_path / "board.js"
    script.write_text('const a = t("{name} · {dice}", {name, dice: n === 1 ? t("1 die") : t(\'{n} dice\', {n})});\n'
                      '// not a call: format(t)\n', encoding="utf-8")
    catalog = Catalog()
    i18n.extract_scripts(catalog, [script])
    assert {m.id for m in catalog if m.id} == {"{name} · {dice}", "1 die", "{n} dice"}


def test_a_page_text_is_its_element_text_or_its_marked_attribute() -> None:
    found = i18n.page_texts('<p data-i18n>Hello\n   world</p><input placeholder="type here" data-i18n-placeholder>'
                            '<button title="x" data-i18n-title="go on" aria-label="next" data-i18n-aria-label>'
                            '<b data-i18n="Given id">shown</b></button>')
    assert [text for text, _line in found] == ["Hello world", "type here", "go on", "next", "Given id"]


def test_each_game_has_a_catalog_of_its_options_labels_and_help() -> None:
    from ludoteca.registry import game_class

    for name in GAMES:
        ids = {m.id for m in i18n.extract_game_options(name) if m.id}
        assert ids == {text for option in game_class(name).OPTIONS for text in option.texts()}


# --- the served catalog ---------------------------------------------------------------------------------


def test_the_italian_catalog_merges_the_shell_and_every_game(client: TestClient) -> None:
    res = client.get("/i18n/it.json")
    assert res.status_code == 200 and res.headers["content-type"].startswith("application/json")
    data = res.json()
    assert data["lang"] == "it"
    messages = data["messages"]
    assert messages["Create table"] == "Crea il tavolo"
    one, many = "Replay · {game} · {n} player · table {table}", "Replay · {game} · {n} players · table {table}"
    assert messages[one] == "Rivedi · {game} · {n} giocatore · tavolo {table}"  # a plural: both forms
    assert messages[many] == "Rivedi · {game} · {n} giocatori · tavolo {table}"
    shell = italian(i18n.web_catalog_path("it"))
    for name in GAMES:
        for path in (i18n.game_catalog_path(name, "it"), i18n.game_options_catalog_path(name, "it")):
            for msgid, text in italian(path).items():
                assert messages[msgid] in (shell.get(msgid, text), text)
    assert "" not in messages and all(messages.values())


def test_the_catalog_answers_304_to_a_browser_that_has_it(client: TestClient) -> None:
    first = client.get("/i18n/it.json")
    etag = first.headers["etag"]
    again = client.get("/i18n/it.json", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert "no-cache" in first.headers["cache-control"]


def test_english_has_no_messages_and_another_language_is_not_found(client: TestClient) -> None:
    assert client.get("/i18n/en.json").json() == {"lang": "en", "messages": {}, "plural": "(n != 1)", "plurals": {}}
    res = client.get("/i18n/fr.json")
    assert res.status_code == 404
    assert res.json()["code"] == "not_found" and "fr" in res.json()["message"]
    assert client.get("/i18n/" + "x" * 300 + ".json").status_code == 404


# --- the server's messages in the requester's language ----------------------------------------------------


def test_an_error_is_english_by_default_and_italian_for_an_italian_browser(client: TestClient) -> None:
    english = client.get("/api/tables/nosuchtable").json()
    assert english["message"] == "there is no table 'nosuchtable'"
    italian_body = client.get("/api/tables/nosuchtable", headers={"Accept-Language": "it-IT,it;q=0.9,en;q=0.5"}).json()
    assert italian_body["message"] == "non esiste il tavolo 'nosuchtable'"
    assert italian_body["code"] == english["code"] == "not_found" == italian_body["error"]


def test_the_language_cookie_wins_over_the_browser_preference(client: TestClient) -> None:
    body = {"game": "nosuchgame"}
    client.cookies.set("ludoteca_lang", "it")
    res = client.post("/api/tables", json=body, headers={"Accept-Language": "en"})
    assert res.status_code == 400 and res.json()["code"] == "bad_game"
    assert res.json()["message"].startswith("gioco sconosciuto 'nosuchgame'; i giochi sono: ")
    client.cookies.set("ludoteca_lang", "en")
    res = client.post("/api/tables", json=body, headers={"Accept-Language": "it"})
    assert res.json()["message"].startswith("unknown game 'nosuchgame'")
    client.cookies.clear()


def test_websocket_errors_follow_the_lang_parameter_or_the_handshake(client: TestClient) -> None:
    with client.websocket_connect("/ws/nosuchtable?lang=it") as ws:
        assert ws.receive_json()["message"] == "non esiste il tavolo 'nosuchtable'"
    with client.websocket_connect("/ws/nosuchtable", headers={"Accept-Language": "it"}) as ws:
        assert ws.receive_json()["message"] == "non esiste il tavolo 'nosuchtable'"
    made = client.post("/api/tables", json={"game": GAMES[0], "seats": [{"kind": "open"}] * 2}).json()
    client.cookies.set("ludoteca_lang", "it")
    with client.websocket_connect(f"/ws/{made['id']}") as ws:
        ws.receive_json()  # the snapshot
        ws.send_text(json.dumps({"type": "join", "seat": 9, "name": "Anna"}))
        error = ws.receive_json()
        assert error["code"] == "bad_seat" and error["message"] == "i posti sono numerati da 0 a 1"
        ws.send_text(json.dumps({"type": "dance"}))
        error = ws.receive_json()
        assert error["code"] == "bad_message" and error["message"] == "tipo di messaggio sconosciuto 'dance'"
    client.cookies.clear()


def test_a_web_error_keeps_its_english_text_and_fills_a_translation() -> None:
    exc = WebError(Code.SEAT_TAKEN, "seat {seat} is already taken", seat=3)
    assert exc.message == str(exc) == "seat 3 is already taken" and exc.status == 409
    assert exc.to_json()["message"] == "seat 3 is already taken"
    assert exc.to_json(7, "it") == {"type": "error", "code": "seat_taken", "error": "seat_taken",
                                    "message": "il posto 3 è già occupato", "ref": 7}
    assert error_body(Code.BAD_NAME, "a name is text", lang="it")["message"] == "un nome è un testo"
    # a message the catalog lacks stays English; a template without params is sent as it is
    assert error_body(Code.BAD_REQUEST, "not in any catalog {x}", lang="it", x=1)["message"] == "not in any catalog 1"
    assert error_body(Code.BAD_REQUEST, 'send {"seat": n}', lang="it")["message"] == 'send {"seat": n}'


def test_the_lobby_gets_option_texts_and_ai_hints_in_its_language(client: TestClient) -> None:
    english = client.get("/api/games").json()
    italian_data = client.get("/api/games", headers={"Accept-Language": "it"}).json()
    catalog = i18n.web_translations("it")
    for game_en, game_it in zip(english["games"], italian_data["games"], strict=True):
        for opt_en, opt_it in zip(game_en["options"], game_it["options"], strict=True):
            assert opt_en["name"] == opt_it["name"]
            assert opt_it["doc"] == catalog[opt_en["doc"]] != opt_en["doc"]
            assert opt_it["label"] == catalog[opt_en["label"]]
    assert english["level_info"]["random"] == "plays any legal move"
    assert italian_data["level_info"]["random"] == "gioca una mossa valida qualsiasi"


def test_the_pages_mark_their_texts_and_load_the_language_helpers() -> None:
    for page in ("index.html", "replay.html"):
        source = (STATIC / page).read_text(encoding="utf-8")
        assert len(i18n.page_texts(source)) >= 8, page
    for script in ("lobby.js", "replay.js"):
        source = (STATIC / "js" / script).read_text(encoding="utf-8")
        assert "translatePage()" in source and "languageSwitch()" in source, script


def test_updating_a_catalog_keeps_translations_adds_new_messages_and_drops_gone_ones(tmp_path: Path) -> None:
    """scripts/i18n.py's merge (Babel's update): what other people translated stays."""
    import importlib.util

    from babel.messages.catalog import Catalog

    spec = importlib.util.spec_from_file_location("i18n_script", Path(__file__).parents[1] / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    po = tmp_path / "it.po"
    po.write_text('msgid ""\nmsgstr ""\n"Language: it\\n"\n\nmsgid "Kept"\nmsgstr "Tenuto"\n\n'
                  'msgid "Gone"\nmsgstr "Sparito"\n', encoding="utf-8")
    template = Catalog(domain=i18n.WEB_DOMAIN)
    template.add("Kept")
    template.add("New {n}")
    template.add(("one {n}", "many {n}"))
    merged = script.merged(po, i18n.WEB_DOMAIN, template)
    assert merged["Kept"].string == "Tenuto"
    assert "Gone" not in [m.id for m in merged] and "Gone" in merged.obsolete  # obsolete: not written
    assert script.untranslated(merged) == ["New {n}", "one {n}"]


def test_a_message_appended_twice_keeps_its_translation(tmp_path: Path) -> None:
    """Several people append to the same catalog: an entry left empty by an update and the same
    msgid translated further down make one translated message (Babel alone keeps the first)."""
    po = tmp_path / "it.po"
    po.write_text('msgid ""\nmsgstr ""\n"Language: it\\n"\n\nmsgid "Sit here"\nmsgstr ""\n\n'
                  'msgid "Sit here"\nmsgstr "Siediti qui"\n\nmsgid "Kept"\nmsgstr "Tenuto"\n\n'
                  'msgid "Kept"\nmsgstr "Altro"\n', encoding="utf-8")
    assert i18n.catalog_messages(i18n.read_catalog(po, "it")) == {"Sit here": "Siediti qui", "Kept": "Tenuto"}
