"""The rules pages ("Learn"): every game's full rules, in English and Italian, on the web
(``/rules/{game}?lang=en|it``) and in the terminal (``ludoteca rules GAME --lang it|en``).

The texts are the games' own ``rules/<lang>.md``. The page's behaviour (language from
``Accept-Language``, the switch that sticks, escaping, 404) is checked with small fixture texts
put in place of one game's, so it does not depend on what the rulebooks say.

The drawings are ```` ```position ```` blocks: every one is read by the game's own engine
(``state_from_json``, each step applied as a legal action), the page shows a figure per block
(drawn in the browser by the game's client: tests/browser/test_browser_rules.py) with the
terminal's drawing for readers without JavaScript, and ``ludoteca rules`` draws them with the
terminal board.
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from ludoteca.commands.rules import terminal_language
from ludoteca.core.game import Game
from ludoteca.registry import GAMES, game_class
from ludoteca.web.app import create_app
from ludoteca.web.lobby.option_words import label as option_label
from ludoteca.web.lobby.option_words import with_options
from ludoteca.web.lobby.rules import (
    COOKIE,
    LANGUAGES,
    accepted_language,
    diagram_blocks,
    drawing_text,
    legend,
    parse_diagram,
    render_markdown,
)
from tests.conftest import game_dir

pytestmark = pytest.mark.timeout(120)

SRC = Path(__file__).resolve().parents[1] / "src" / "ludoteca"
LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]
FIXTURE = {
    "en": "# Fixture rules\n\nRoll **the die**. <script>alert(1)</script> [bad](javascript:alert(1))\n\n"
          "| die | card |\n| --- | ---: |\n| 1 | +2 |\n\n![a battle](battle.svg)\n",
    "it": "# Regole di prova\n\nTira **il dado**.\n",
}
ENGLISH_ONLY = {"en": FIXTURE["en"]}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=tmp_path_factory.mktemp("web"), freeze_gc=False)
    with TestClient(app) as c:
        yield c


@pytest.fixture
def fixture_game(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The first game, its rules texts replaced by :data:`FIXTURE`."""
    name = GAMES[0]
    texts = dict(FIXTURE)

    def rules_text(cls: type[Game], lang: str = "en") -> str | None:
        return texts.get(lang, texts.get("en"))

    monkeypatch.setattr(game_class(name), "rules_text", classmethod(rules_text))
    yield name
    texts.clear()


def first_heading(markdown: str) -> str:
    line = next(line for line in markdown.splitlines() if line.startswith("# "))
    return re.sub(r"[*_`]", "", line[2:]).strip()


# --- every game, both languages ---------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", GAMES)
def test_every_game_has_its_rules_page_in_both_languages(client: TestClient, name: str, lang: str) -> None:
    source = game_dir(name) / "rules" / f"{lang}.md"
    assert source.is_file(), f"{name} has no rules page in {lang}: {source.relative_to(SRC.parent)}"
    text = source.read_text(encoding="utf-8")
    assert game_class(name).rules_text(lang) == text  # its own language, not the English fallback
    response = client.get(f"/rules/{name}", params={"lang": lang})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-language"] == lang
    page = response.text
    assert f'<html lang="{lang}">' in page
    # the whole text, rendered, its option section drawn from the game's declared options
    assert render_markdown(with_options(text, game_class(name), lang), name, lang) in page
    assert f"<h1>{first_heading(text)}" in page.replace("&quot;", '"')
    assert 'class="rules-note"' not in page  # no "not yet translated" note
    # nothing the CSP would block: one module script of our own (it draws the diagrams), no inline one
    assert re.findall(r"<script[^>]*>", page) == ['<script type="module" src="/static/js/rules.js">']
    assert "style=" not in page
    # the language switch (both languages, the current one marked) and the way back to the lobby
    assert f'href="/rules/{name}?lang=en"' in page and f'href="/rules/{name}?lang=it"' in page
    assert re.search(rf'href="/rules/{name}\?lang={lang}"[^>]*aria-current="true"', page)
    assert '<a href="/" id="back">' in page


@pytest.mark.parametrize("name", GAMES)
def test_the_italian_and_english_pages_differ(name: str) -> None:
    english, italian = game_class(name).rules_text("en"), game_class(name).rules_text("it")
    assert english and italian and english != italian


# --- the page's behaviour (fixture texts) --------------------------------------------------------

@pytest.mark.parametrize(
    ("accept", "lang"),
    [
        ("it-IT,it;q=0.9,en-US;q=0.8,en;q=0.7", "it"),
        ("it", "it"),
        ("en-US,en;q=0.9", "en"),
        ("fr-FR,fr;q=0.9,it;q=0.5", "it"),  # the preferred one of ours
        ("fr-FR,en;q=0.6,it;q=0.5", "en"),
        ("en;q=0.3, it;q=0.8", "it"),
        ("it;q=0, en", "en"),
        ("de", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_the_language_defaults_from_accept_language(client: TestClient, fixture_game: str, accept: str | None,
                                                    lang: str) -> None:
    client.cookies.clear()
    headers = {} if accept is None else {"Accept-Language": accept}
    response = client.get(f"/rules/{fixture_game}", headers=headers)
    assert response.status_code == 200
    assert f'<html lang="{lang}">' in response.text
    assert ("Regole di prova" if lang == "it" else "Fixture rules") in response.text
    assert "set-cookie" not in response.headers  # only a choice made with the switch sticks
    assert "Accept-Language" in response.headers["vary"]


def test_accepted_language_reads_q_values() -> None:
    assert accepted_language("it-CH") == "it"
    assert accepted_language("en-GB, it;q=0.9") == "en"
    assert accepted_language("*") is None and accepted_language("pt-BR") is None
    for garbage in ("it;q=1.2.3", ";;;", ",", "it;q=", "q=0.5", "-" * 5000):
        assert accepted_language(garbage) in (None, "it")


def test_the_language_switch_sticks(client: TestClient, fixture_game: str) -> None:
    client.cookies.clear()
    chosen = client.get(f"/rules/{fixture_game}", params={"lang": "it"}, headers={"Accept-Language": "en"})
    assert '<html lang="it">' in chosen.text and "Tira <strong>il dado</strong>" in chosen.text
    assert f"{COOKIE}=it" in chosen.headers["set-cookie"]
    # later visits without ?lang=, even from an English browser, stay Italian
    again = client.get(f"/rules/{fixture_game}", headers={"Accept-Language": "en"})
    assert '<html lang="it">' in again.text
    back = client.get(f"/rules/{fixture_game}", params={"lang": "en"}, headers={"Accept-Language": "it"})
    assert '<html lang="en">' in back.text and f"{COOKIE}=en" in back.headers["set-cookie"]
    assert '<html lang="en">' in client.get(f"/rules/{fixture_game}", headers={"Accept-Language": "it"}).text
    client.cookies.clear()


@pytest.mark.parametrize("lang", ["fr", "xx", "", "../../etc/passwd", "EN"])
def test_an_unknown_language_gives_english(client: TestClient, fixture_game: str, lang: str) -> None:
    client.cookies.clear()
    response = client.get(f"/rules/{fixture_game}", params={"lang": lang})
    assert response.status_code == 200
    assert '<html lang="en">' in response.text and "Fixture rules" in response.text
    if lang != "EN":
        assert "set-cookie" not in response.headers


def test_the_italian_page_falls_back_to_english_with_a_note(client: TestClient, fixture_game: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def english_only(cls: type[Game], lang: str = "en") -> str | None:
        return ENGLISH_ONLY["en"]

    monkeypatch.setattr(game_class(fixture_game), "rules_text", classmethod(english_only))
    page = client.get(f"/rules/{fixture_game}", params={"lang": "it"}).text
    assert '<html lang="it">' in page and "Fixture rules" in page
    assert "non è ancora tradotta" in page


def test_html_in_the_markdown_is_not_run(client: TestClient, fixture_game: str) -> None:
    page = client.get(f"/rules/{fixture_game}", params={"lang": "en"}).text
    assert "<script" not in page and "&lt;script&gt;" in page
    assert 'href="javascript:' not in page
    assert '<table class="rules-table">' in page  # tables of the rulebooks are drawn as tables
    assert '<td class="align-right">+2</td>' in page and "style=" not in page  # alignment without inline styles
    assert f'<img src="/rules/{fixture_game}/battle.svg" alt="a battle"' in page  # pictures beside the text


def test_an_unknown_game_is_a_clear_404_page(client: TestClient) -> None:
    response = client.get("/rules/chess", headers={"Accept-Language": "en"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert "There is no game called “chess”." in response.text
    for name in GAMES:
        assert f'href="/rules/{name}"' in response.text
    italian = client.get("/rules/%3Cb%3Echess", params={"lang": "it"})
    assert italian.status_code == 404 and "Non esiste un gioco chiamato «&lt;b&gt;chess»." in italian.text
    assert client.get(f"/rules/{GAMES[0]}/missing.svg").status_code == 404
    assert client.get(f"/rules/{GAMES[0]}/en.md").status_code == 404  # only pictures, not the sources


def test_game_names_are_not_case_sensitive(client: TestClient) -> None:
    assert client.get(f"/rules/{GAMES[0].upper()}", params={"lang": "en"}).status_code == 200


def test_the_rules_pages_carry_the_security_headers(client: TestClient, fixture_game: str) -> None:
    for path in (f"/rules/{fixture_game}?lang=it", "/rules/chess", "/rules"):
        response = client.get(path)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        # nothing inline for the CSP to block: no script at all, no style attribute or element
        assert "<script" not in response.text and "style=" not in response.text and "<style" not in response.text


def test_the_rules_index_lists_every_game(client: TestClient) -> None:
    page = client.get("/rules", params={"lang": "en"}).text
    assert all(f'href="/rules/{name}"' in page for name in GAMES)


def test_the_lobby_and_table_scripts_link_to_the_rules() -> None:
    for script in ("lobby.js", "table.js"):
        text = (SRC / "web" / "static" / "js" / script).read_text(encoding="utf-8")
        assert "/rules/${encodeURIComponent(" in text, script


# --- Game.rules_text: the game's package, English fallback -------------------------------------

def test_rules_text_reads_the_games_package_and_falls_back_to_english(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "rules_fixture_pkg"
    (package / "rules").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "rules" / "en.md").write_text("# English\n", encoding="utf-8")
    (package / "rules" / "it.md").write_text("# Italiano\n", encoding="utf-8")
    bare = tmp_path / "rules_fixture_bare"
    bare.mkdir()
    (bare / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))

    with_rules = type("WithRules", (Game,), {"__module__": "rules_fixture_pkg"})
    without = type("WithoutRules", (Game,), {"__module__": "rules_fixture_bare"})
    assert with_rules.rules_text("it") == "# Italiano\n"
    assert with_rules.rules_text("IT") == "# Italiano\n"
    assert with_rules.rules_text("en") == with_rules.rules_text() == "# English\n"
    for other in ("de", "../it", "it/../en", "", "rules"):
        assert with_rules.rules_text(other) == "# English\n", other
    assert without.rules_text("it") is None and without.rules_text("en") is None


# --- the terminal ----------------------------------------------------------------------------

def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([*LUDOTECA, *args], capture_output=True, text=True, timeout=120,
                          env={**base, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", **env})


@pytest.mark.parametrize(
    ("environ", "lang"),
    [
        ({}, "en"),
        ({"LANG": "it_IT.UTF-8"}, "it"),
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "it_IT.UTF-8"}, "it"),
        ({"LANG": "it_IT.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),
        ({"LANGUAGE": "it:en", "LC_ALL": "en_GB.UTF-8"}, "it"),
        ({"LANGUAGE": "", "LANG": "it_CH"}, "it"),
        ({"LANG": "C"}, "en"),
    ],
)
def test_the_terminal_language_follows_the_locale_variables(environ: dict[str, str], lang: str) -> None:
    assert terminal_language(environ) == lang


@pytest.mark.parametrize("name", GAMES)
def test_cli_rules_lang_it_prints_the_italian_page_then_the_options(name: str) -> None:
    italian, english = game_class(name).rules_text("it") or "", game_class(name).rules_text("en") or ""
    out = run("rules", name, "--lang", "it", LANG="en_US.UTF-8")
    assert out.returncode == 0 and out.stderr == ""
    assert first_heading(italian) in out.stdout
    if first_heading(english) != first_heading(italian):
        assert first_heading(english) not in out.stdout
    assert "Giocatori:" in out.stdout and "Opzioni:" in out.stdout
    for option in game_class(name).OPTIONS:  # the options follow the page, by their Italian labels
        shown = f"\n  {option_label(option, 'it')}: "
        assert shown in out.stdout and f"--option {option.name}=" in out.stdout
        assert out.stdout.index(shown) > out.stdout.index(first_heading(italian))
    assert "Traceback" not in out.stdout


@pytest.mark.parametrize("name", GAMES)
def test_cli_rules_prints_the_whole_english_page_by_default(name: str) -> None:
    english = game_class(name).rules_text("en") or ""
    out = run("rules", name)
    assert out.returncode == 0 and out.stderr == ""
    assert first_heading(english) in out.stdout and "Players:" in out.stdout
    # every section of the page is printed (Rich draws headings as plain text)
    for line in english.splitlines():
        if line.startswith("## "):
            assert re.sub(r"[*_`]", "", line[3:]).strip() in out.stdout, line
    assert not any(line != line.rstrip() for line in out.stdout.splitlines())  # no padding to the width


def test_cli_rules_language_from_the_locale_and_lang_overrides_it() -> None:
    name = GAMES[0]
    italian = first_heading(game_class(name).rules_text("it") or "")
    english = first_heading(game_class(name).rules_text("en") or "")
    assert italian in run("rules", name, LANG="it_IT.UTF-8").stdout
    assert italian in run("rules", name, LANGUAGE="it", LANG="C.UTF-8").stdout
    assert english in run("rules", name, "--lang", "en", LANG="it_IT.UTF-8").stdout
    bad = run("rules", name, "--lang", "fr")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_rules_in_italian_piped_into_head_has_no_traceback() -> None:
    name = GAMES[0]
    command = " ".join(shlex.quote(x) for x in [*LUDOTECA, "rules", name, "--lang", "it"]) + " | head -4"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and out.stderr == ""
    assert len(out.stdout.splitlines()) == 4


# --- diagrams: ```position blocks drawn by the games' own renderers ----------------------------

def blocks(name: str, lang: str) -> list[str]:
    return [source for _line, source in diagram_blocks(game_class(name).rules_text(lang) or "")]


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", GAMES)
def test_every_diagram_block_is_a_position_the_engine_reads_and_its_steps_are_legal(name: str, lang: str) -> None:
    sources = blocks(name, lang)
    assert len(sources) >= 2, f"{name}/{lang}: the page has its drawings"
    for source in sources:
        diagram = parse_diagram(name, source, lang)  # ValueError for a position or step the engine refuses
        for board in diagram.boards:
            state = board.state
            # a position the engine writes back as it reads it
            again = state.game.state_from_json(state.to_json())
            assert again.to_json() == state.to_json()
            legal = [] if state.is_chance_node() or state.is_terminal() else \
                [state.action_to_json(a) for a in state.legal_actions()]
            assert all(a in legal for a in board.highlight)  # only legal moves are highlighted
        assert diagram.caption.strip() and all(diagram.names)


@pytest.mark.parametrize("name", GAMES)
def test_both_languages_draw_the_same_positions(name: str) -> None:
    english = [parse_diagram(name, s, "en") for s in blocks(name, "en")]
    italian = [parse_diagram(name, s, "it") for s in blocks(name, "it")]
    assert len(english) == len(italian)
    for en, it in zip(english, italian, strict=True):
        assert [b.state.to_json() for b in en.boards] == [b.state.to_json() for b in it.boards]
        assert [b.highlight for b in en.boards] == [b.highlight for b in it.boards]
        assert en.caption != it.caption  # the caption is in the page's language


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("name", GAMES)
def test_the_page_shows_a_figure_per_diagram_block_with_a_text_drawing(client: TestClient, name: str,
                                                                         lang: str) -> None:
    page = client.get(f"/rules/{name}", params={"lang": lang}).text
    sources = blocks(name, lang)
    figures = re.findall(r'<figure class="rules-figure" id="figure-(\d+)" data-figure="\d+" data-boards="(\d+)">', page)
    assert [int(n) for n, _boards in figures] == list(range(1, len(sources) + 1))
    assert "```" not in page and '"position"' not in page.split("<figure")[0]  # no raw JSON shown as text
    for (_n, count), source in zip(figures, sources, strict=True):
        diagram = parse_diagram(name, source, lang)
        assert int(count) == len(diagram.boards)
    assert page.count('<svg class="rules-board"') == sum(int(count) for _n, count in figures)
    assert page.count("<noscript><pre class=\"rules-drawing\">") == len(sources)
    assert page.count("<figcaption>") == len(sources)
    if lang == "it":
        assert "Prima" in page or "Dopo" in page or "Passo" in page or "Giocatore" in page or "Anna" in page


def test_a_board_carries_what_the_client_draws(client: TestClient) -> None:
    """Each <svg> holds the position and its highlights as JSON (escaped), for the game's render(ctx)."""
    name = GAMES[0]
    page = client.get(f"/rules/{name}", params={"lang": "en"}).text
    first = re.search(r'<svg class="rules-board"[^>]*data-board="([^"]*)"', page)
    assert first is not None
    data = json.loads(html.unescape(first.group(1)))
    assert set(data) == {"pos", "legal", "ui", "events", "names", "you"}
    diagram = parse_diagram(name, blocks(name, "en")[0], "en")
    assert data["pos"] == diagram.boards[0].state.to_json() and data["names"] == diagram.names


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ("not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"position": {}}', "caption"),
        ('{"caption": "x"}', "position"),
        ('{"caption": "x", "position": {"players": 2}, "colour": 1}', "unknown keys"),
        ('{"caption": "x", "position": {"players": 2, "nonsense": true}}', ""),
    ],
)
def test_a_broken_diagram_block_is_a_clear_error_in_the_page(client: TestClient, fixture_game: str, block: str,
                                                             error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"# Fixture rules\n\n```position\n{block}\n```\n\nAfter.\n"

    def rules_text(cls: type[Game], lang: str = "en") -> str | None:
        return text

    monkeypatch.setattr(game_class(fixture_game), "rules_text", classmethod(rules_text))
    response = client.get(f"/rules/{fixture_game}", params={"lang": "en"})
    assert response.status_code == 200
    assert "This drawing cannot be shown:" in response.text and error in response.text
    assert "<p>After.</p>" in response.text and "<figure" not in response.text
    with pytest.raises(ValueError):
        parse_diagram(fixture_game, block)


def test_a_step_that_is_not_legal_is_refused() -> None:
    name = GAMES[0]
    data = json.loads(blocks(name, "en")[0])
    data["then"] = [{"pass": True, "no": "such move"}]
    with pytest.raises(ValueError, match="step 1"):
        parse_diagram(name, json.dumps(data))


@pytest.mark.parametrize("name", GAMES)
def test_cli_rules_draws_the_diagrams_with_the_terminal_board(name: str) -> None:
    out = run("rules", name, "--lang", "it", LANG="en_US.UTF-8")
    assert out.returncode == 0 and out.stderr == ""
    diagrams = [parse_diagram(name, s, "it") for s in blocks(name, "it")]
    assert '"position"' not in out.stdout and '"caption"' not in out.stdout  # drawn, not the raw JSON
    at = 0
    for diagram in diagrams:  # every drawing, in order: its boards, the seats' names, the caption
        for board in diagram.boards:
            if board.label:
                found = out.stdout.find(board.label, at)
                assert found >= 0, board.label
                at = found
        legend = " · ".join(f"{'ABCDEF'[i]} {n}" for i, n in enumerate(diagram.names))
        assert out.stdout.find(legend, at) >= 0, legend
        at = out.stdout.find(legend, at)


def test_cli_rules_tri_in_italian_draws_the_battle_in_italian() -> None:
    out = run("rules", "tri", "--lang", "it", LANG="en_US.UTF-8")
    assert out.returncode == 0 and out.stderr == ""
    # the terminal board of TRI (games/tri/board.py) in Italian, with the battle as the viewer sees it
    board_title = "TRI — "
    assert out.stdout.count(board_title) >= len(blocks("tri", "it"))
    assert "Bruno sceglie la sua carta" in out.stdout and "Dopo la rivelazione" in out.stdout
    assert "evidenziate:" in out.stdout
    assert "A Anna · B Bruno" in out.stdout


@pytest.mark.parametrize("name", GAMES)
def test_without_javascript_each_figure_shows_the_terminal_drawing_in_the_pages_language(client: TestClient,
                                                                                          name: str) -> None:
    drawn = {}
    for lang in LANGUAGES:
        page = client.get(f"/rules/{name}", params={"lang": lang}).text
        texts = [html.unescape(t) for t in re.findall(r'<noscript><pre class="rules-drawing">(.*?)</pre></noscript>',
                                                        page, re.S)]
        diagrams = [parse_diagram(name, s, lang) for s in blocks(name, lang)]
        assert texts == [drawing_text(d, lang) for d in diagrams]
        for text, diagram in zip(texts, diagrams, strict=True):
            assert text.endswith(legend(diagram))
            assert "evidenziate:" in text or "highlighted:" in text or not any(b.highlight for b in diagram.boards)
        drawn[lang] = texts
    assert drawn["en"] != drawn["it"]  # the boards' own words follow the page (board.py's translations)
