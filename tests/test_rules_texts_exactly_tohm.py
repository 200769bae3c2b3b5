"""The rules pages of exactly and TOHM: complete, in English and Italian, in step,
and faithful to the engine (the numbers, the options, the board and the worked examples)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import ludoteca
import ludoteca.games.exactly as exactly
import ludoteca.games.tohm as tohm
from ludoteca.games.exactly import ExactlyGame
from ludoteca.games.tohm import AREA_BY_PLAYERS, TohmGame, default_layout
from ludoteca.web.lobby.rules import Diagram, diagram_blocks, parse_diagram

LANGS = ("en", "it")
GAMES: dict[str, tuple[Any, Any]] = {"exactly": (exactly, ExactlyGame), "tohm": (tohm, TohmGame)}
OPTIONS_HEADING = {"en": "Options", "it": "Opzioni"}
SILENT_HEADING = {"en": "Where the rulebook is silent", "it": "Dove il regolamento tace"}


def page(game: str, lang: str) -> str:
    module_file = GAMES[game][0].__file__
    assert module_file is not None
    return (Path(module_file).parent / "rules" / f"{lang}.md").read_text(encoding="utf-8")


def headings(text: str) -> list[str]:
    return [line[3:].strip() for line in text.splitlines() if line.startswith("## ")]


def section(text: str, title: str) -> str:
    """The body of the ``## title`` section, up to the next ``##`` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"no section {title!r}"
    return match.group(1)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("lang", LANGS)
def test_page_exists_and_is_complete(game: str, lang: str) -> None:
    text = page(game, lang)
    assert text.lower().startswith(f"# {game}")
    assert 80 <= len(text.splitlines()) <= 260
    assert len(headings(text)) >= 9
    assert text.count("```") % 2 == 0, "an unclosed code block"
    for marker in ("TODO", "TBD", "FIXME", "XXX"):
        assert marker not in text
    for title in (OPTIONS_HEADING[lang], SILENT_HEADING[lang]):
        assert section(text, title).strip()


@pytest.mark.parametrize("game", GAMES)
def test_both_languages_have_the_same_sections(game: str) -> None:
    en, it = headings(page(game, "en")), headings(page(game, "it"))
    assert len(en) == len(it)
    assert not set(en) & set(it), "the Italian section titles must be Italian"
    assert en.index("Options") == it.index("Opzioni")
    assert en.index("Where the rulebook is silent") == it.index("Dove il regolamento tace")


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("lang", LANGS)
def test_every_option_is_explained(game: str, lang: str) -> None:
    options = section(page(game, lang), OPTIONS_HEADING[lang])
    names = [option.name for option in GAMES[game][1].OPTIONS]
    assert names
    for name in names:
        assert f"`{name}`" in options, f"option {name} not explained in {game}/{lang}"


@pytest.mark.parametrize("lang", LANGS)
def test_exactly_numbers(lang: str) -> None:
    text = page("exactly", lang)
    for number in ("100", "150", "5", "10", "20", "50", "15", "1000"):
        assert re.search(rf"\b{number}\b", text), number
    assert ("three euros" if lang == "en" else "tre euro") in text
    assert "? > 50 > 20 > 10 > 5 > 0" in text
    # the three values of start_coin, and their aliases
    options = section(text, OPTIONS_HEADING[lang])
    for word in ("`round`", "`game`", "`never`", "`true`", "`false`"):
        assert word in options


@pytest.mark.parametrize("lang", LANGS)
def test_tohm_numbers_and_board(lang: str) -> None:
    text = page("tohm", lang)
    assert ("10 trophies" if lang == "en" else "10 mostrocoppe") in text
    assert "3×3" in text and "4×4" in text and "5×5" in text and "10×10" in text
    rows_word = "rows" if lang == "en" else "righe"
    for players, (rows, cols) in AREA_BY_PLAYERS.items():
        area = f"{rows}×{cols}" if rows == cols else f"{rows} {rows_word} × {cols}"
        assert re.search(rf"^\| {players} \| [^|]*{re.escape(area)}", text, re.MULTILINE), players
    # The whole board drawn on the page (a diagram of an empty five-player game) is the engine's.
    boards = [d.boards[0].state.to_json() for d in diagrams("tohm", lang)]
    assert any(b["players"] == 5 and b["layout"] == default_layout(5) for b in boards)


def diagrams(game: str, lang: str) -> list[Diagram]:
    text = page(game, lang)
    return [parse_diagram(game, source, lang) for _line, source in diagram_blocks(text)]


def exactly_state(piles: list[dict[str, int]], bank: dict[str, int], roll: Any) -> Any:
    n = len(piles)
    game = ludoteca.load_game("exactly", players=n)
    return game.state_from_json({
        "game": "exactly", "players": n, "bank": bank, "piles": piles, "euros": [0] * n,
        "to_move": 0, "phase": "move", "roll": roll, "turn": 0,
    })


def test_exactly_example_1_twelve_moves() -> None:
    pile = {"5": 1, "10": 0, "20": 1, "50": 0}
    state = exactly_state([pile] * 3, {"5": 7, "10": 10, "20": 7, "50": 10}, 20)
    assert len(state.legal_actions()) == 12


def test_exactly_example_2_two_euros_on_one_move() -> None:
    anna = {"5": 0, "10": 1, "20": 0, "50": 2}
    bruno = {"5": 0, "10": 0, "20": 2, "50": 1}
    state = exactly_state([anna, bruno], {"5": 10, "10": 9, "20": 8, "50": 7}, 10)
    state.apply_action(state.action_from_json({"coin": 10, "from": 0, "to": 1}))
    position = state.to_json()
    assert position["euros"] == [1, 1]
    assert position["to_move"] == 1  # the player to Anna's left starts the new round
    # Had Anna rolled 5, no move would score.
    five = exactly_state([anna, bruno], {"5": 10, "10": 9, "20": 8, "50": 7}, 5)
    for action in five.legal_actions():
        trial = five.clone()
        trial.apply_action(action)
        assert trial.to_json()["euros"] == [0, 0]


def tohm_state(board: list[list[int | None]], roll: int) -> Any:
    game = ludoteca.load_game("tohm", players=2)
    on_board = [sum(row.count(seat) for row in board) for seat in (0, 1)]
    return game.state_from_json({
        "game": "tohm", "players": 2, "rows": 3, "cols": 3, "layout": default_layout(2), "board": board,
        "supply": [5 - k for k in on_board], "trophies": [0, 0], "trophies_left": 10,
        "to_move": 0, "phase": "act", "roll": roll, "turn": 0,
    })


def test_tohm_examples_are_drawn_on_the_two_player_area() -> None:
    for lang in LANGS:
        two = [d for d in diagrams("tohm", lang) if d.boards[0].state.to_json()["players"] == 2]
        assert len(two) >= 5  # the three kinds of roll, a tris and two tris at once
        for d in two:
            assert d.boards[0].state.to_json()["layout"] == default_layout(2)


def test_tohm_example_1_a_tris() -> None:
    state = tohm_state([[0, 0, None], [None, 1, None], [1, None, None]], 5)
    places = sorted(tuple(state.action_to_json(a)["place"]) for a in state.legal_actions())
    assert places == [(0, 2), (1, 0)]
    state.apply_action(state.action_from_json({"place": [0, 2]}))
    position = state.to_json()
    assert position["trophies"] == [1, 0] and position["trophies_left"] == 9
    assert position["supply"][0] == 5 and position["board"][0] == [None, None, None]


def test_tohm_example_2_two_tris_at_once() -> None:
    state = tohm_state([[0, 0, None], [None, 1, 0], [1, None, 0]], 5)
    state.apply_action(state.action_from_json({"place": [0, 2]}))
    position = state.to_json()
    assert position["trophies"] == [2, 0] and position["supply"][0] == 5


def test_tohm_layout_example_is_accepted() -> None:
    text = page("tohm", "en")
    match = re.search(r"--option 'layout=(\[\[[^']*\]\])'", text)
    assert match is not None
    game = ludoteca.load_game("tohm", players=2, layout=match.group(1))
    assert game.new_initial_state().to_json()["layout"] == [[3, 4, 5], [5, 6, 3], [4, 3, 6]]


@pytest.mark.parametrize("lang", LANGS)
def test_tohm_dice_faces_and_tris_are_drawn(lang: str) -> None:
    """The drawings show what 1, 2 and 3-6 do, a tris and two tris at once, played by the engine."""
    rolls, trophies = set(), []
    for d in diagrams("tohm", lang):
        first, last = d.boards[0].state.to_json(), d.boards[-1].state.to_json()
        if len(d.boards) > 1:
            rolls.add(first["roll"])
            trophies.append(last["trophies"][0] - first["trophies"][0])
    assert {1, 2} <= rolls and rolls & {3, 4, 5, 6}
    assert 1 in trophies and 2 in trophies


@pytest.mark.parametrize("lang", LANGS)
def test_exactly_four_kinds_of_move_are_drawn_before_and_after(lang: str) -> None:
    kinds = set()
    for d in diagrams("exactly", lang):
        if len(d.boards) != 2 or d.boards[0].state.to_json()["players"] != 3:
            continue
        (move,) = d.boards[0].highlight
        mover = d.boards[0].state.to_json()["to_move"]
        ends = {move["from"], move["to"]}
        kinds.add("a" if ends == {"bank", mover} else "b" if mover in ends else "c" if "bank" in ends else "d")
    assert kinds == {"a", "b", "c", "d"}


@pytest.mark.parametrize("lang", LANGS)
def test_exactly_draws_the_150_cent_limit(lang: str) -> None:
    found = False
    for d in diagrams("exactly", lang):
        position = d.boards[0].state.to_json()
        full = [i for i, pile in enumerate(position["piles"]) if sum(int(c) * n for c, n in pile.items()) > 150]
        if full and d.boards[0].highlight:
            assert all(move["to"] not in full for move in d.boards[0].highlight)
            found = True
    assert found
