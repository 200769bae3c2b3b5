"""The ``ludoteca`` command, end to end through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ludoteca

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
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
