"""``ludoteca play … --coach``: each of the human's moves judged against the best one.

The TOHM two-player position is the one of tests/test_analysis.py, checked by hand with RULES.md
section 3: seat 0 leads 5-4 with one trophy left and rolled a 2; completing its own top row wins
(1), completing the other seat's bottom row shares the win (1/2): a blunder of 50 points.
"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ludoteca.games.tohm import TohmGame
from ludoteca.i18n import use_language
from ludoteca.play.coach import Coach
from ludoteca.play.session import Session
from ludoteca.play.terminal import TerminalPlay
from tests.test_analysis import position
from tests.test_play_terminal import PROMPT, spawn

GAME = TohmGame(players=2)


def test_the_coach_calls_a_gift_of_the_win_a_blunder_and_names_the_winning_move() -> None:
    state = position([[0, 0, None], [None, 0, 1], [1, 1, None]], (5, 4), roll=2)
    gift = state.action_from_json({"move": [[1, 2], [2, 2]]})
    winning = state.action_from_json({"move": [[1, 1], [0, 2]]})
    coach = Coach(GAME)
    verdict = coach.judge(state, gift)
    assert verdict is not None
    assert (verdict.played, verdict.best, verdict.loss, verdict.label) == (0.5, 1.0, 0.5, "blunder")
    assert verdict.best_action == winning
    words = {winning: "B2 to C1", gift: "C2 to C3"}.__getitem__
    try:
        use_language("en")
        assert coach.says(verdict, words) == ("Coach: blunder, 50.0 points of win chance lost — win chance 50% "
                                             "(best move: 100%); better: B2 to C1.")
        use_language("it")
        said = coach.says(verdict, words)
        assert said.startswith("Coach: errore grave, 50.0 punti") and said.endswith("B2 to C1.")
        best = coach.judge(state, winning)
        assert best is not None and best.loss == 0
        assert "la mossa migliore" in coach.says(best, words)
    finally:
        use_language("en")


def test_a_forced_move_is_not_judged() -> None:
    state = GAME.new_initial_state()
    assert Coach(GAME).judge(state, state.chance_outcomes()[0][0]) is None  # a roll: nobody chose it


def test_the_terminal_coaches_the_human_after_each_move() -> None:
    session = Session(GAME, ["human", "random"], 3, None)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, force_terminal=False)
    stdin = io.StringIO("1\n" * 400)
    TerminalPlay(session, console=console, stdin=stdin, coach=Coach(GAME)).run()
    text = out.getvalue()
    human_choices = [e for e in session.log if e.seat == 0]
    assert human_choices and text.count("Coach: ") >= 1
    assert "win chance" in text


@pytest.mark.timeout(120)
def test_play_coach_in_italian_through_the_command() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3", "--coach", lang="it_IT.UTF-8")
    for _ in range(40):
        if child.expect([PROMPT, "Coach: "]) == 1:
            break
        child.sendline("1")
    else:
        raise AssertionError("no coach line")
    child.expect("probabilità di vittoria")
    child.terminate(force=True)
