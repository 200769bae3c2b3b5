"""Terminal play, end to end through a pseudo-terminal (pexpect drives the real command)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pexpect
import pytest

PROMPT = r"player (\d)[^\n>]*> "


def spawn(*args: str, color: bool = False) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "120", "LINES": "50", "PYTHONIOENCODING": "utf-8"}
    if color:
        env.pop("NO_COLOR", None)
        env["TERM"] = "xterm-256color"
    else:
        env["NO_COLOR"] = "1"
        env["TERM"] = "dumb"
    return pexpect.spawn(sys.executable, ["-m", "ludoteca.cli", "play", *args], env=env,
                         encoding="utf-8", timeout=60, dimensions=(50, 120))


def play_to_the_end(child: pexpect.spawn, move: str = "1", limit: int = 3000) -> None:
    for _ in range(limit):
        i = child.expect([PROMPT, "Game over"])
        if i == 1:
            return
        child.sendline(move)
    raise AssertionError("the game did not end")


def test_human_plays_tohm_against_the_ai_to_the_end() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3", color=True)
    child.expect("TOHM")
    child.expect(PROMPT)
    # The board is drawn in colour: Rich emits ANSI escape sequences in a real terminal.
    assert "\x1b[" in child.before
    assert "Legal moves" in child.before
    child.sendline("1")
    play_to_the_end(child)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_wrong_input_gets_a_message_and_the_prompt_again() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3")
    child.expect(PROMPT)
    for bad, answer in [("nonsense", "I don't understand"), ("99", "Choose a number from 1 to"),
                        ('{"place": [9, 9]}', "not legal|I don't understand"), ("save", "save needs a file name")]:
        child.sendline(bad)
        child.expect(answer)
        child.expect(PROMPT)
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_undo_takes_back_to_the_last_choice_without_rerolling(tmp_path: Path) -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "5")
    # Make two human moves, remembering the position before the second.
    child.expect(PROMPT)
    child.sendline("1")
    child.expect(PROMPT)
    before_second = child.before.split("Legal moves")[-1]
    child.sendline("1")
    child.expect(PROMPT)
    child.sendline("undo")
    child.expect("Taken back to your last choice")
    child.expect(PROMPT)
    # Same die, same legal moves as before the undone choice (the dice are not re-rolled).
    assert child.before.split("Legal moves")[-1] == before_second
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_save_then_load_continues_the_same_game(tmp_path: Path) -> None:
    path = tmp_path / "saved.json"
    child = spawn("tohm", "--seats", "human,random", "--seed", "8")
    for _ in range(3):
        child.expect(PROMPT)
        child.sendline("1")
    child.expect(PROMPT)
    position = child.before
    child.sendline(f"save {path}")
    child.expect("Game record saved")
    child.expect(PROMPT)
    child.sendline("quit")
    child.expect(pexpect.EOF)
    record = json.loads(path.read_text())
    assert record["format"] == "ludoteca-record" and record["meta"]["seats"] == ["human", "random"]

    again = spawn("--load", str(path))
    again.expect(PROMPT)
    # The same position and legal moves are shown again.
    assert again.before.split("Legal moves")[-1] == position.split("Legal moves")[-1]
    again.sendline("1")
    play_to_the_end(again)


def test_hint_names_a_legal_move() -> None:
    child = spawn("exactly", "--seats", "human,random", "--seed", "2", "--hint-agent", "random")
    child.expect(PROMPT)
    child.sendline("hint")
    child.expect(r"hint \(random\): .*\(#\d+\)")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_hot_seat_two_humans_take_turns() -> None:
    child = spawn("exactly", "--seats", "human,human", "--seed", "4")
    seen = set()
    for _ in range(40):
        child.expect(PROMPT)
        seen.add(child.match.group(1))
        child.sendline("1")
    assert seen == {"0", "1"}
    child.sendline("quit")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tohm", "--seats", "human,wizard"], "unknown agent 'wizard'"),
        (["tohm", "--players", "3", "--seats", "human,random"], "2 seats given for 3 players"),
        (["chess"], "unknown game 'chess'"),
        (["tohm", "--clock", "30"], "EXAGON only"),
        (["--load", "/no/such/file.json"], "cannot read"),
    ],
)
def test_bad_arguments(args: list[str], message: str) -> None:
    child = spawn(*args)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert message in child.before
    assert "Traceback" not in child.before


def test_exagon_hourglass_ends_the_turn_when_it_runs_out() -> None:
    child = spawn("exagon", "--seats", "human,random", "--seed", "1", "--clock", "2")
    # Opening steps have no clock: play until a prompt shows the hourglass, then wait it out.
    for _ in range(50):
        child.expect(PROMPT)
        if "⏳" in child.after:
            break
        child.sendline("1")
    else:
        pytest.fail("no clocked turn for the human")
    child.expect("The hourglass ran out", timeout=15)
    child.sendline("quit")
