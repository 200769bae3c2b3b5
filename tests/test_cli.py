"""The ``ludoteca`` command, end to end through a real subprocess."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import ludoteca

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]


def english() -> dict[str, str]:
    """The environment, its locale English whatever the tester's is (the texts below are English)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    return {**env, "LANG": "C.UTF-8"}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**english(), "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    return subprocess.run([*LUDOTECA, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_rules_lists_options(name: str) -> None:
    out = run("rules", name)
    assert out.returncode == 0, out.stderr
    assert "turn_limit" in out.stdout and "Players:" in out.stdout


@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_random_game_saves_a_record_that_replays(name: str, tmp_path: Path) -> None:
    rec = tmp_path / "game.json"
    extra = ["--option", "clock=null"] if name == "exagon" else []
    out = run("random", name, "--players", "2", "--seed", "4", "--record", str(rec), *extra)
    assert out.returncode == 0, out.stderr
    assert "Game over" in out.stdout and "Winner" in out.stdout
    data = json.loads(rec.read_text())
    assert data["format"] == "ludoteca-record" and data["meta"]["seed"] == 4
    again = run("random", name, "--players", "2", "--seed", "4", "--quiet", *extra)
    assert out.stdout.splitlines()[-3:-1] == again.stdout.splitlines()[-2:]  # same seed, same game
    replay = run("replay", str(rec))
    assert replay.returncode == 0, replay.stderr
    assert "Game over" in replay.stdout
    assert replay.stdout.count("--- step") == len(data["actions"]) + 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rules", "chess"], "unknown game 'chess'"),
        (["random", "exactly", "--players", "7"], "not 7"),
        (["random", "tri", "--option", "colour=red"], "unknown option 'colour'"),
        (["random", "tri", "--option", "size"], "NAME=VALUE"),
        (["random", "tohm", "--players", "two"], "invalid int value"),
        (["replay", "/no/such/file.json"], "cannot read"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(args: list[str], message: str) -> None:
    out = run(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_replay_of_a_broken_record_names_the_step(tmp_path: Path) -> None:
    rec = tmp_path / "bad.json"
    rec.write_text(json.dumps({"format": "ludoteca-record", "version": 1, "game": "tohm",
                               "options": {"players": 2}, "actions": [{"roll": 3}, {"pass": 1}, {"roll": 9}]}))
    out = run("replay", str(rec))
    assert out.returncode == 2
    assert "step" in out.stderr and "Traceback" not in out.stderr


# --- the rules of every game ---------------------------------------------------------------

@pytest.mark.parametrize("name", ludoteca.GAMES)
def test_rules_prints_the_summary_every_option_and_where_the_full_rules_are(name: str) -> None:
    from ludoteca.registry import game_class

    cls = game_class(name)
    out = run("rules", name)
    assert out.returncode == 0 and out.stderr == ""
    summary = (cls.__doc__ or "").strip().splitlines()[0]
    assert out.stdout.startswith(summary)
    for option in cls.OPTIONS:  # every option the game declares (RULES.md's names)
        assert f"--option {option.name}=" in out.stdout  # each option by its words, then what to type
    if cls.rules_notes is None:  # a game whose rules pages are all there is (the example)
        assert "in ludoteca's source" not in out.stdout
    else:
        assert cls.rules_notes in out.stdout
        assert (Path(__file__).resolve().parents[1] / cls.rules_notes).is_file()


# --- a reader that goes away: ``ludoteca ... | head`` ----------------------------------------

def run_into_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """Run with stdout a pipe whose reader has already gone: every write fails with EPIPE."""
    env = {**english(), "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([*LUDOTECA, *args], stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120, env=env)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        *(["rules", name] for name in ludoteca.GAMES),
        ["random", "tri", "--players", "2", "--seed", "1"],
        ["--help"],
        ["rules", "--help"],
        ["play", "exactly", "--seats", "random,random", "--seed", "1"],
        ["arena", "tohm", "--agents", "random,random", "--games", "2", "--jobs", "1", "--no-progress"],
        ["replay", "RECORD"],
    ],
    ids=lambda args: " ".join(args),
)
def test_a_closed_pipe_stops_the_command_quietly(args: list[str], tmp_path: Path) -> None:
    if "RECORD" in args:
        record = tmp_path / "game.json"
        assert run("random", "tohm", "--seed", "2", "--quiet", "--record", str(record)).returncode == 0
        args = [str(record) if a == "RECORD" else a for a in args]
    out = run_into_closed_pipe(*args)
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr and "Exception" not in out.stderr
    assert out.stderr == ""
    # 1 as Python's documentation on SIGPIPE recommends (argparse itself ignores the error: 0 for --help)
    assert out.returncode == (0 if "--help" in args else 1)


def test_rules_piped_into_head_prints_the_first_lines_and_no_traceback() -> None:
    full = run("rules", "exactly").stdout.splitlines()
    command = " ".join(shlex.quote(x) for x in [*LUDOTECA, "rules", "exactly"]) + " | head -4"
    env = {**english(), "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0
    assert out.stdout.splitlines() == full[:4]
    assert out.stderr == ""


# --- replays show what happened (the events), not only the positions --------------------------

def test_replay_tells_each_actions_events_in_words(tmp_path: Path) -> None:
    # exactly ends when a player holds three euros (RULES.md), so a finished random game's
    # replay tells of euros and of the new rounds that follow them.
    rec = tmp_path / "game.json"
    assert run("random", "exactly", "--players", "2", "--seed", "4", "--quiet", "--record", str(rec)).returncode == 0
    out = run("replay", str(rec))
    assert out.returncode == 0, out.stderr
    assert "exactly 100 cents, one euro more" in out.stdout and "a new round" in out.stdout
    assert out.stdout.count("exactly 100 cents, one euro more") >= 3
    final = run("replay", str(rec), "--final")
    assert "--- step" not in final.stdout and "one euro" not in final.stdout


def test_clock_is_refused_for_a_game_without_one_by_the_games_own_fact() -> None:
    from ludoteca.commands.common import UsageError
    from ludoteca.commands.play import clock_options
    from ludoteca.registry import GAMES, game_class

    for name in GAMES:
        option = game_class(name).clock_option
        if option is None:
            with pytest.raises(UsageError, match=r"--clock is for .* only"):
                clock_options(name, 30)
            assert clock_options(name, None) == []
        else:  # the rules' own clock unless --clock is given; --clock none plays without
            assert clock_options(name, None) == []
            assert clock_options(name, "none") == [f"{option}=null"]
            assert clock_options(name, 30) == [f"{option}=30"]
