"""The rules pages of TRI and EXAGON: complete, in English and Italian, in step."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ludoteca.games.exagon as exagon
import ludoteca.games.tri as tri
from ludoteca.games.exagon import ExagonGame
from ludoteca.games.tri import TriGame
from ludoteca.web.lobby.rules import Diagram, diagram_blocks, parse_diagram

LANGS = ("en", "it")
GAMES = {"tri": (tri, TriGame), "exagon": (exagon, ExagonGame)}


def page(game: str, lang: str) -> str:
    module_file = GAMES[game][0].__file__
    assert module_file is not None
    path = Path(module_file).parent / "rules" / f"{lang}.md"
    return path.read_text(encoding="utf-8")


def headings(text: str) -> list[str]:
    return [line[3:].strip() for line in text.splitlines() if line.startswith("## ")]


def table_row(text: str, *cells: str) -> bool:
    """True when a Markdown table row starts with these cells (the last may be followed by more text)."""
    pattern = r"^\|" + r"\s*\|".join(rf"\s*{re.escape(c)}" for c in cells)
    return re.search(pattern, text, re.MULTILINE) is not None


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("lang", LANGS)
def test_page_exists_and_is_a_complete_page(game: str, lang: str) -> None:
    text = page(game, lang)
    assert text.startswith(f"# {game.upper()}")
    assert 100 <= len(text.splitlines()) <= 300
    assert len(headings(text)) >= 10
    assert text.count("```") % 2 == 0, "an unclosed code block"
    for marker in ("TODO", "TBD", "FIXME", "XXX"):
        assert marker not in text


@pytest.mark.parametrize("game", GAMES)
def test_both_languages_have_the_same_sections(game: str) -> None:
    en, it = headings(page(game, "en")), headings(page(game, "it"))
    assert len(en) == len(it)
    # The Italian page is a translation, not a copy: its section titles are Italian.
    assert not set(en) & set(it)
    for required in ("Options", "Where the rulebook is silent"):
        assert required in en
    for required in ("Opzioni", "Dove il regolamento tace"):
        assert required in it
    assert en.index("Options") == it.index("Opzioni")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("lang", LANGS)
def test_every_option_is_explained(game: str, lang: str) -> None:
    text = page(game, lang)
    names = [option.name for option in GAMES[game][1].OPTIONS]
    assert names, "the game declares its options"
    title = "Options" if lang == "en" else "Opzioni"
    options_section = text.split("\n## ")[headings(text).index(title) + 1]
    for name in names:
        assert f"`{name}`" in options_section, f"{game}/{lang}: option {name} not explained"


@pytest.mark.parametrize("lang", LANGS)
def test_tri_key_numbers(lang: str) -> None:
    text = page("tri", lang)
    for card in ("+0", "+2", "+3", "+4"):
        assert card in text
    # Card income: die 1–3 → +2, 4–5 → +3, 6 → +4.
    assert table_row(text, "1–3", "+2")
    assert table_row(text, "4–5", "+3")
    assert table_row(text, "6", "+4")
    for side in ("N", "E", "S", "W"):
        assert f"**{side}**" in text
    # The worked battle: three dice, 5 + 2 = 7 against 6 + 0 = 6.
    assert "5 + 2 = 7" in text and "6 + 0 = 6" in text
    for value in ("claim", "move", "defender", "attacker"):
        assert f"`{value}`" in text


@pytest.mark.parametrize("lang", LANGS)
def test_exagon_key_numbers(lang: str) -> None:
    text = page("exagon", lang)
    assert "39" in text and "40" in text
    # 3, 4, 5 connections earn 1, 2, 3 bonuses; 6 is the perfect fit.
    for connections, bonus in (("3", "1"), ("4", "2"), ("5", "3")):
        rows = re.findall(rf"^\|\s*{connections}\s*\|([^\n]*)$", text, re.MULTILINE)
        assert any(f"**{bonus}**" in row for row in rows), f"{connections} connections: {bonus} bonus"
    # The deal: 20, 13 + 1 on the table, 10, 8.
    for players, tiles in (("2", "20"), ("3", "13"), ("4", "10"), ("5", "8")):
        assert table_row(text, players, tiles)
    seconds, points = ("60 seconds", "50 points") if lang == "en" else ("60 secondi", "50 punti")
    assert seconds in text and points in text
    assert ("20 points" if lang == "en" else "20 punti") in text
    assert "60 + 25 = 85" in text


def flat(text: str) -> str:
    """The text with line breaks and runs of spaces as single spaces (a quotation may wrap)."""
    return re.sub(r"\s+", " ", text)


def test_seed_wording_is_quoted() -> None:
    assert "there's just one teleport per square" in flat(page("tri", "en"))
    assert "the first one to finish all the tiles" in flat(page("exagon", "en"))
    assert "finire per primi le tessere" in flat(page("exagon", "it"))
    assert "stella con il numero 39" in flat(page("exagon", "it"))
    assert "andrà a vantaggio del giocatore alla sua sinistra" in flat(page("exagon", "it"))


def drawn(game: str, lang: str) -> list[Diagram]:
    return [parse_diagram(game, source, lang) for _line, source in diagram_blocks(page(game, lang))]


@pytest.mark.parametrize("lang", LANGS)
def test_tri_draws_a_battle_with_both_dice_and_both_cards(lang: str) -> None:
    battles = [b.state.to_json()["battle"] for d in drawn("tri", lang) for b in d.boards
               if b.state.to_json()["battle"]]
    assert any(all(x["attacker_roll"] is not None for x in [battle]) and battle["defender_roll"] is not None
               and battle["attacker_card"] is not None and battle["defender_card"] is not None for battle in battles)
    # the worked example: 5 + 2 against 6 + 0 (Anna takes the triangle), and the same battle lost to +3
    outcomes = []
    for d in drawn("tri", lang):
        first = d.boards[0].state.to_json()
        if first["battle"] and len(d.boards) > 1:
            outcomes.append((first["battle"]["target"], d.boards[-1].state.to_json()["owner"].get("1,2,W")))
    assert ("1,2,W", 0) in outcomes and ("1,2,W", 1) in outcomes
    # the board: a triangle's three neighbours across the torus's edge
    assert any(sorted(map(str, d.boards[0].highlight)) == sorted(map(str, [{"expand": [0, 1, "E"]},
               {"expand": [0, 1, "W"]}, {"expand": [3, 1, "S"]}])) for d in drawn("tri", lang))


@pytest.mark.parametrize("lang", LANGS)
def test_exagon_draws_a_bonus_chain_and_a_perfect_fit(lang: str) -> None:
    chain = fit = False
    for d in drawn("exagon", lang):
        seen = [(b.state.to_json()["placed_this_turn"], b.state.to_json()["bonus"]) for b in d.boards]
        if (2, 1) in seen and seen[-1] == (3, 0):  # a bonus earned with 3 connections, then spent on 1
            chain = True
        kinds = {e["kind"] for b in d.boards for e in b.events}
        if "perfect_fit" in kinds:
            assert d.boards[-1].state.is_terminal() and d.boards[-1].state.returns()[0] == 1
            fit = True
    assert chain and fit
