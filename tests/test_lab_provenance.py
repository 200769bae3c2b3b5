"""A run says what played it (lab/provenance.py): run.json and the report carry the ludoteca version and
commit and every agent as it really plays — resolved settings, compiled engine or Python fallback — and
a resume refuses a run whose agents would now play otherwise (two kinds of game under one label)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ludoteca.core.game import Game
from ludoteca.lab.provenance import describe_agent, summary
from ludoteca.registry import GAMES, game_class

COMPILED = [g for g in GAMES if game_class(g).compiled_part and game_class(g)(players=2).compiled() is not None]
GAME = COMPILED[0] if COMPILED else GAMES[0]
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", "LANGUAGE": "en"}


def lab(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", "lab", GAME, "--players", "2", "--games", "2",
                           "--agents", "strong:iterations=40,random", "--out", str(out), "--no-progress", *extra],
                          capture_output=True, text=True, timeout=300, env=ENV)


@pytest.mark.skipif(not COMPILED, reason="no compiled engine is built here")
def test_run_json_and_the_report_say_what_played(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = lab(out)
    assert done.returncode == 0, done.stderr
    made = json.loads((out / "run.json").read_text())["provenance"]
    from ludoteca import __version__

    assert made["ludoteca"] == __version__
    strong = made["agents"]["base"][0]
    assert strong["spec"] == "strong:iterations=40" and strong["engine"] == "compiled"
    defaults = game_class(GAME).agent_defaults.get("strong", {})
    assert strong["settings"]["iterations"] == 40  # its own parameter
    assert strong["settings"]["c"] == defaults.get("c", strong["settings"]["c"])  # else the game's tuning
    page = (out / "report.html").read_text()
    assert "agents as played" in page and "compiled engine" in page and __version__ in page
    summary_json = json.loads((out / "summary.json").read_text())
    assert summary_json["provenance"] == made

    # the same run resumed where the agents play the same: accepted (nothing to play)
    again = lab(out)
    assert again.returncode == 0, again.stderr
    assert "already done" in again.stdout
    # as if the first games had been played by the Python fallback: refused, nothing mixed
    manifest = json.loads((out / "run.json").read_text())
    manifest["provenance"]["agents"]["base"][0].update(engine="python mcts", reason="not built")
    (out / "run.json").write_text(json.dumps(manifest))
    refused = lab(out)
    assert refused.returncode == 2 and "played otherwise" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_fallback_is_recorded_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Game, "compiled", lambda self: None)
    described = describe_agent("strong", GAME, {"players": 2})
    assert described["engine"] == "python mcts" and "no compiled engine" in described["reason"]
    from ludoteca.agents.mcts import MCTSAgent
    from ludoteca.registry import load_game

    # the fallback plays mcts with the game's tuned settings, not strong's budget
    assert described["settings"] == MCTSAgent(game=GAME).settings(load_game(GAME, players=2))
    assert "the Python mcts instead of the compiled engine" in summary(described)


def test_agents_without_a_search_are_described_by_their_spec() -> None:
    described = describe_agent("random", GAME, {"players": 2})
    assert described == {"spec": "random", "plays": "random"}
    assert summary(described) == "random"
