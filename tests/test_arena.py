"""``ludoteca arena``: seats rotate, results depend on the seed only, bad input is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ludoteca.cli import main
from ludoteca.lab.metrics import agent_table
from ludoteca.lab.plan import build_spec
from ludoteca.lab.runner import execute

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "140"}


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LUDOTECA, "arena", *args], capture_output=True, text=True, timeout=120, env=ENV)


def test_seats_rotate_so_every_agent_plays_every_seat_equally() -> None:
    spec = build_spec("tohm", 3, ["heuristic", "random"], {}, rotate=True, fill=True, seed=1, detail=0)
    assert spec.lineup == ("heuristic", "random", "heuristic")
    lines: list[str] = []
    execute(spec, spec.tasks(6), lines.extend, jobs=1)
    rows = sorted((json.loads(x) for x in lines), key=lambda r: r["game"])
    for r in rows:  # game i: seat s is played by lineup[(s + i) % 3]
        assert r["agents"] == [spec.lineup[(s + r["game"]) % 3] for s in range(3)]
    for seat in range(3):
        assert Counter(r["agents"][seat] for r in rows) == {"heuristic": 4, "random": 2}
    results = {a["agent"]: a for a in agent_table(spec, rows)}
    assert results["heuristic"]["instances"] == 2 and results["heuristic"]["fair"] == pytest.approx(2 / 3)
    assert [b["games"] for b in results["heuristic"]["by_seat"]] == [4, 4, 4]
    assert [b["games"] for b in results["random"]["by_seat"]] == [2, 2, 2]
    assert results["heuristic"]["count"] + results["random"]["count"] == pytest.approx(6)


def test_same_results_whatever_the_jobs(tmp_path: Path) -> None:
    common = ["tohm", "--players", "2", "--agents", "heuristic,random", "--games", "24", "--seed", "1",
              "--no-progress"]
    one = arena(*common, "--jobs", "1")
    two = arena(*common, "--jobs", "2", "--out", str(tmp_path / "a"))
    assert one.returncode == 0, one.stderr
    assert two.returncode == 0, two.stderr

    def table(out: str) -> list[str]:  # everything but the speed line
        return [line for line in out.splitlines() if " games in " not in line]

    assert table(one.stdout) == table(two.stdout)
    assert "heuristic" in one.stdout and "95% CI" in one.stdout and "draws (shared wins)" in one.stdout
    assert "mean game length" in one.stdout
    assert len((tmp_path / "a" / "games.jsonl").read_text().splitlines()) == 24


def test_games_round_up_to_a_multiple_of_the_players(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["arena", "tohm", "--players", "3", "--agents", "random,heuristic", "--games", "4",
                 "--jobs", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "playing 6 games" in out and "6 games" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agents", "random,random,random"], "lists 3 agents but the game has 2 players"),
        (["--agents", "random,wizard"], "unknown agent 'wizard'"),
        (["--agents", "random,"], "--agents takes agent names"),
        (["--agents", "random", "--games", "0"], "must be 1 or more"),
        (["--agents", "random", "--option", "colour=red"], "unknown option 'colour'"),
        (["--agents", "random", "--address", "x:1"], "--address is for --backend ray"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["arena", "tohm", "--players", "2", *args, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_agents_is_a_usage_error() -> None:
    out = arena("tohm", "--players", "2")
    assert out.returncode == 2 and "--agents" in out.stderr and "Traceback" not in out.stderr
