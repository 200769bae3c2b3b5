"""The lab's luck share (lab/luck.py; docs/lab.md "Skill or luck").

Hand-checked: on TOHM for two players (solved exactly), between two ``perfect`` players no decision
loses anything, so each seat's result is its expected result at the start plus the luck the dice
gave it, exactly (the martingale of the exact values: RULES.md's returns at the end).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ludoteca.cli import main
from ludoteca.lab.luck import bootstrap, exact_first, game_luck, share
from ludoteca.lab.plan import build_spec
from ludoteca.lab.runner import play_game
from ludoteca.registry import load_game


def test_share_is_the_squared_correlation_of_result_and_luck() -> None:
    decided = [{"returns": [1.0, 0.0], "luck": [0.4, -0.4]}, {"returns": [0.0, 1.0], "luck": [-0.3, 0.3]},
               {"returns": [1.0, 0.0], "luck": [0.2, -0.2]}]
    # over the six (result, luck): mean result 1/2, mean luck 0; sum (y - 1/2) * luck = 0.9,
    # sum luck^2 = 0.58, sum (y - 1/2)^2 = 1.5: r^2 = 0.81 / (0.58 * 1.5) = 27/29
    assert share(decided) == pytest.approx(27 / 29, abs=1e-12)
    luckless = [{"returns": [1.0, 0.0], "luck": [0.1, 0.1]}, {"returns": [0.0, 1.0], "luck": [0.1, 0.1]}]
    assert share(luckless) is None  # the luck never varies: nothing to explain with
    low, high = bootstrap(decided * 4, seed=1) or (0.0, 0.0)
    assert 0.8 <= low <= high <= 1.0


def test_with_perfect_players_the_result_is_the_start_value_plus_the_luck() -> None:
    spec = build_spec("tohm", 2, ["perfect"], {}, [], seed=3)
    start = exact_first(load_game("tohm", players=2))
    assert start == pytest.approx(0.5147, abs=1e-4)  # docs/strength.md: the exact first-player advantage
    for i in range(3):
        g = game_luck(spec, 0, i)
        assert g["returns"] == play_game(spec, 0, i)["returns"]  # the run's own game i, played again
        assert g["returns"][0] == pytest.approx(start + g["luck"][0], abs=1e-9)
        assert g["returns"][1] == pytest.approx(1 - start + g["luck"][1], abs=1e-9)


def test_exact_first_only_where_the_game_is_solved() -> None:
    assert exact_first(load_game("tohm", players=3)) is None


@pytest.mark.timeout(300)
def test_the_lab_reports_the_luck_share(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["lab", "tohm", "--players", "2", "--agents", "random", "--games", "8", "--luck", "6",
                 "--out", str(out), "--no-progress"]) == 0
    luck = json.loads((out / "summary.json").read_text())["luck"]
    assert luck["games"] == 6 and luck["variants"][0]["exact_first"] == pytest.approx(0.5147, abs=1e-4)
    page = (out / "report.html").read_text()
    assert "Skill or luck: the luck share" in page and "Duersch" in page
