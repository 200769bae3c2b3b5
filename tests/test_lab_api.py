"""The lab from Python (lab/api.py): ``ludoteca.lab.run`` gives the rows and summary the command line
gives for the same run; rows as CSV (``--csv`` too) and as a pandas DataFrame."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ludoteca.lab as lab
from ludoteca.registry import GAMES

GAME = GAMES[0]
"""Any game: the lab names none."""


def test_run_from_python_matches_the_command_line(tmp_path: Path) -> None:
    result = lab.run(GAME, players=2, agents="random", games=12, seed=3, jobs=1)
    assert len(result.rows) == 12 and result.summary["games_per_variant"] == 12
    assert result.provenance["agents"]["base"] == [{"spec": "random", "plays": "random"}]
    out = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "ludoteca.cli", "lab", GAME, "--players", "2", "--games", "12",
                           "--seed", "3", "--jobs", "1", "--out", str(out), "--no-report", "--no-progress",
                           "--csv", str(tmp_path / "rows.csv")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "LANGUAGE": "en"})
    assert done.returncode == 0, done.stderr
    cli_rows = sorted((json.loads(x) for x in (out / "games.jsonl").read_text().splitlines()),
                      key=lambda r: (r["game"], r["variant"]))
    assert cli_rows == sorted(result.rows, key=lambda r: (r["game"], r["variant"]))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["variants"][0]["first_player"] == result.summary["variants"][0]["first_player"]

    with open(tmp_path / "rows.csv", newline="") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 12 and table[0]["variant"] == "base" and "turns" in table[0]
    assert [int(r["game"]) for r in table] == sorted(int(r["game"]) for r in table)
    assert result.to_csv() == (tmp_path / "rows.csv").read_text()
    json.loads(table[0]["returns"])  # nested values are JSON


def test_a_dataframe_of_the_rows() -> None:
    pytest.importorskip("pandas")
    result = lab.run(GAME, players=2, agents="random", games=6, seed=1, jobs=1)
    df = result.dataframe()
    assert len(df) == 6 and {"variant", "game", "turns"} <= set(df.columns)


def test_bad_input_is_a_clear_value_error() -> None:
    with pytest.raises(ValueError, match="unknown agent"):
        lab.run(GAME, players=2, agents="nobody", games=2)
    with pytest.raises(ValueError, match="games must be"):
        lab.run(GAME, players=2, games=0)


def test_estimate_plays_a_pilot_only(tmp_path: Path) -> None:
    out = tmp_path / "never"
    done = subprocess.run([sys.executable, "-m", "ludoteca.cli", "lab", GAME, "--players", "2", "--games", "50000",
                           "--jobs", "1", "--out", str(out), "--estimate"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "LANGUAGE": "en", "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("About ") and "for 50,000 games" in done.stdout and "on the first 8" in done.stdout
    assert not out.exists()  # nothing stored: the run itself has not started


def test_estimates_read_well() -> None:
    from ludoteca.lab.session import duration_text, estimate_text

    assert [duration_text(s) for s in (12, 89, 600, 5340, 11400)] == ["12 s", "89 s", "10 min", "89 min",
                                                                        "3 h 10 min"]
    assert estimate_text(10_000, 16, 19.2) == (
        "About 3 h 20 min for 10,000 games (1.20 s a game on the first 16); Ctrl-C stops, the same command resumes.")
