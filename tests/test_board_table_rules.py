"""The terminal boards (games/<name>/board.py) say the rules their table was created with.

A table created with other rulebook numbers (the rulebook's numbers as options) is drawn as the terminal draws it
(:func:`ludoteca.play.boards`' convention: ``draw(state, data, names)``); the expected values are the
options the test sets, and RULES.md's for a default table: exactly's target 100, cap 150 and three
euros (RULES.md 1), TOHM's 10 trophies and its die (RULES.md 3), TRI's teleports (RULES.md 2),
EXAGON's tournament to 50 points (RULES.md 4).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console

from ludoteca.core.game import State
from ludoteca.core.i18n import using
from ludoteca.core.registry import load_game
from ludoteca.games.exactly import board as exactly_board
from ludoteca.games.exagon import board as exagon_board
from ludoteca.games.tohm import board as tohm_board
from ludoteca.games.tri import board as tri_board
from ludoteca.i18n import translations

NAMES = ["Ann", "Bob"]


def text(module: Any, state: State) -> str:
    """The board of ``state`` as the terminal prints it (plain text, wide enough for one line a row)."""
    console = Console(record=True, width=160, color_system=None)
    console.print(module.draw(state, state.observation(None), NAMES))
    return console.export_text()


def italian(message: str) -> str:
    """``message`` in the terminal's Italian."""
    return ITALIAN.get(message) or message


ITALIAN = translations("it")


def table(game: str, **options: Any) -> State:
    return load_game(game, players=2, **options).new_initial_state()


def test_exactly_says_the_tables_target_cap_and_euros() -> None:
    shown = text(exactly_board, table("exactly", target=120, cap=200, euros_to_win=2))
    assert "collect exactly 120 cents" in shown
    assert "euros to win: 2; a pile above 200 cents takes no coin" in shown
    assert "0/2" in shown and "100" not in shown and "150" not in shown
    default = text(exactly_board, table("exactly"))
    assert "collect exactly 100 cents" in default
    assert "euros to win: 3; a pile above 150 cents takes no coin" in default
    assert "0/3" in default


def test_exactly_without_a_cap_says_none() -> None:
    shown = text(exactly_board, table("exactly", cap=850))
    assert "collect exactly 100 cents" in shown and "takes no coin" not in shown


def test_exactly_in_italian() -> None:
    with using(italian):
        shown = text(exactly_board, table("exactly", target=120, cap=200, euros_to_win=2))
    assert "raccogli esattamente 120 centesimi" in shown
    assert "euro per vincere: 2; un mucchio oltre 200 centesimi non riceve monete" in shown


def test_tohm_says_the_tables_trophies_and_die() -> None:
    shown = text(tohm_board, table("tohm", trophies=15, face_1=False, place_anywhere=True))
    assert "trophies left: 15 of 15" in shown
    assert "die 1: nothing, the turn passes" in shown
    assert "die 2: move a token" in shown
    assert "die 6: place a token on any empty cell" in shown
    default = text(tohm_board, table("tohm"))
    assert "trophies left: 10 of 10" in default and "die 1:" not in default  # RULES.md's die goes unsaid
    with using(italian):
        in_italian = text(tohm_board, table("tohm", trophies=15, face_1=False))
    assert "trofei rimasti: 15 su 15" in in_italian and "dado 1: niente, il turno passa" in in_italian


def test_tri_says_a_table_has_no_teleports() -> None:
    assert "no teleports at this table" in text(tri_board, table("tri", teleports=False))
    assert "teleports" not in text(tri_board, table("tri"))


def test_exagon_says_the_tournaments_target() -> None:
    state = table("exagon", tournament=True, tournament_target=80)
    while state.is_chance_node():  # the deal, for the turn's line with the points
        state.apply_action(state.legal_actions()[0])
    assert "(the tournament ends at 80)" in text(exagon_board, state)
    default = table("exagon", tournament=True)
    while default.is_chance_node():
        default.apply_action(default.legal_actions()[0])
    assert "(the tournament ends at 50)" in text(exagon_board, default)
