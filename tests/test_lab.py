"""The balance lab: statistics, determinism, resume after a kill, sweeps, metrics, the CLI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ludoteca.cli import main
from ludoteca.lab import stats
from ludoteca.lab.metrics import summarise, summarise_variant
from ludoteca.lab.plan import build_spec, parse_sweep
from ludoteca.lab.runner import RunSpec, execute, game_seed, play_game
from ludoteca.lab.store import read_rows

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "120"}


def collect(spec: RunSpec, games: int, **kwargs: Any) -> list[dict]:
    lines: list[str] = []
    execute(spec, spec.tasks(games), lines.extend, **kwargs)
    return sorted((json.loads(x) for x in lines), key=lambda r: (r["variant"], r["game"]))


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LUDOTECA, *args], capture_output=True, text=True, timeout=timeout, env=ENV)


# --- statistics, against values computed by hand ----------------------------------------------

def test_wilson_interval_matches_hand_computation() -> None:
    # p = 0.6, n = 100, z^2 = 3.8415: centre 0.61921 / 1.03841 = 0.59630,
    # half 1.95996 * sqrt(0.0024 + 0.000096036) / 1.03841 = 0.09430
    lo, hi = stats.wilson(60, 100)
    assert lo == pytest.approx(0.50200, abs=1e-5)
    assert hi == pytest.approx(0.69060, abs=1e-5)
    lo, hi = stats.wilson(0, 10)  # never below 0: centre 0.13877, half 0.13877
    assert lo == 0.0 and hi == pytest.approx(0.27753, abs=1e-5)
    assert stats.wilson(0, 0) == (0.0, 1.0)


def test_two_proportion_z_test_matches_hand_computation() -> None:
    # 60/100 vs 45/100: pooled 0.525, se sqrt(0.525 * 0.475 * 0.02) = 0.070622, z = 0.15 / se
    z, p = stats.two_proportion_z(60, 100, 45, 100)
    assert z == pytest.approx(2.12398, abs=1e-4)
    assert p == pytest.approx(0.03367, abs=1e-4)
    z, p = stats.two_proportion_z(45, 100, 60, 100)
    assert z == pytest.approx(-2.12398, abs=1e-4) and p == pytest.approx(0.03367, abs=1e-4)
    assert stats.two_proportion_z(5, 10, 5, 10) == (0.0, 1.0)


def test_binomial_and_chi_square_tests() -> None:
    # 7 of 10 at 1/2: P(X <= 3) + P(X >= 7) = 2 * (1 + 10 + 45 + 120) / 1024
    assert stats.binom_test(7, 10, 0.5) == pytest.approx(352 / 1024)
    assert stats.binom_test(5, 10, 0.5) == pytest.approx(1.0)
    assert stats.binom_test(60, 100, 0.5) == pytest.approx(0.056887, abs=1e-5)
    # 60 vs 40 against 50/50: (10^2 + 10^2) / 50 = 4, P(chi2_1 >= 4) = P(|Z| >= 2) = 0.0455
    chi, p = stats.chi_square_uniform([60, 40])
    assert chi == pytest.approx(4.0) and p == pytest.approx(0.0455003, abs=1e-6)
    assert stats.chi2_sf(5.991465, 2) == pytest.approx(0.05, abs=1e-6)  # exp(-x/2) for df 2
    assert stats.chi2_sf(18.307038, 10) == pytest.approx(0.05, abs=1e-6)
    assert stats.chi2_sf(0.5, 3) == pytest.approx(0.918891, abs=1e-6)


def test_median_and_percentiles() -> None:
    xs = list(range(1, 11))
    assert stats.median(xs) == 5.5
    assert stats.percentile(xs, 90) == pytest.approx(9.1)  # rank 0.9 * 9 = 8.1: 9 + 0.1 * (10 - 9)
    assert stats.median([3, 1, 2]) == 2
    assert stats.percentile([10, 1, 3, 2], 90) == pytest.approx(7.9)  # rank 2.7 in [1, 2, 3, 10]
    assert stats.mean([1, 2, 3, 4]) == 2.5
    assert stats.stdev([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(math.sqrt(32 / 7))


# --- determinism ---------------------------------------------------------------------------------

def test_game_seeds_are_fixed_forever() -> None:
    # Derived with BLAKE2b: the same on every machine and Python version (resumed runs rely on it).
    assert game_seed(0, 0) == game_seed(0, 0)
    assert game_seed(1, 2) != game_seed(2, 1)
    assert game_seed(1, 0) == 5786210872556076841
    assert 0 <= game_seed(123, 456) < 2**63


def test_same_seed_same_rows_whatever_the_jobs() -> None:
    spec = build_spec("tohm", 2, ["random"], {}, [], seed=7, detail=2)
    one = collect(spec, 30, jobs=1)
    two = collect(spec, 30, jobs=2)
    assert len(one) == 30 and one == two
    assert [r["game"] for r in one] == list(range(30))
    assert one[5] == play_game(spec, 0, 5)  # a game does not depend on its batch
    assert collect(build_spec("tohm", 2, ["random"], {}, [], seed=8), 30, jobs=1) != one


@pytest.mark.timeout(90)
def test_ray_backend_gives_the_same_rows() -> None:
    ray = pytest.importorskip("ray")
    spec = build_spec("tohm", 2, ["random"], {}, ["layout=default"], seed=3, detail=2)
    local = collect(spec, 12, jobs=1)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        assert collect(spec, 12, backend="ray") == local
    finally:
        ray.shutdown()


# --- resume after a kill -----------------------------------------------------------------------

def test_a_killed_run_resumes_to_the_same_rows(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["lab", "tohm", "--players", "2", "--games", "1500", "--seed", "5", "--jobs", "2",
            "--out", str(out), "--no-report", "--no-progress"]
    proc = subprocess.Popen([*LUDOTECA, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=ENV, start_new_session=True)
    results = out / "games.jsonl"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if results.exists() and results.stat().st_size > 40_000:  # about 100 rows
                break
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its workers, mid-run
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    partial, _ = read_rows(results)
    assert 0 < len(partial) < 1500
    with results.open("a") as fh:  # as if the kill had cut a row in half
        fh.write('{"variant":"base","game":99999,"se')
    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    assert f"{len(partial)} were already done" in again.stdout
    rows, end = read_rows(results)
    assert end == results.stat().st_size  # the torn row was cut off
    assert len(rows) == 1500 == len({r["game"] for r in rows})
    spec = build_spec("tohm", 2, ["random"], {}, [], seed=5)
    assert sorted(rows, key=lambda r: r["game"]) == collect(spec, 1500, jobs=2)


# --- sweeps and designers' files ----------------------------------------------------------------

def test_sweep_compares_a_designer_layout_with_the_default(tmp_path: Path) -> None:
    layout = [[3, 3, 3, 4], [4, 5, 6, 6], [5, 6, 4, 3]]
    board = tmp_path / "board.json"
    board.write_text(json.dumps(layout))
    spec = build_spec("tohm", 2, ["random"], {}, [f"layout=default,{board}"], seed=2)
    assert [v.key for v in spec.variants] == ["layout=default", f"layout={board}"]
    assert spec.variants[0].overrides == {} and spec.variants[1].overrides == {"layout": str(board)}
    assert spec.variants[1].options["layout"] == layout  # recorded: the grid, not the path
    assert spec.variants[0].options["layout"] == [[3, 4, 5], [5, 6, 3], [4, 3, 6]]
    rows = collect(spec, 40, jobs=2)
    by = {(r["variant"], r["game"]): r for r in rows}
    assert len(by) == 80
    assert all(by[("layout=default", i)]["seed"] == by[(f"layout={board}", i)]["seed"] for i in range(40))
    summary = summarise(spec, rows, 40)
    assert [v["games"] for v in summary["variants"]] == [40, 40]
    (comp,) = summary["comparisons"]
    assert comp["baseline"] == "layout=default" and comp["variant"] == f"layout={board}"
    first = next(r for r in comp["rows"] if r["measure"] == "first player win rate")
    seat0 = {key: [by[(key, i)]["returns"][0] for i in range(40)] for key in ("layout=default", f"layout={board}")}
    _, z, p = stats.compare_rates(seat0[f"layout={board}"], seat0["layout=default"])
    assert first["z"] == pytest.approx(z) and first["p_value"] == pytest.approx(p)
    shared = next(r for r in comp["rows"] if r["measure"] == "shared wins")
    counts = [sum(len(by[(key, i)]["winners"]) > 1 for i in range(40)) for key in seat0]
    assert shared["test"] == "two-proportion z"
    assert shared["z"] == pytest.approx(stats.two_proportion_z(counts[1], 40, counts[0], 40)[0])


def test_sweep_of_every_combination() -> None:
    spec = build_spec("tri", 2, ["random"], {}, ["ties=defender,attacker", "size=default,5"], seed=1)
    assert [v.key for v in spec.variants] == [
        "ties=defender size=default", "ties=defender size=5", "ties=attacker size=default", "ties=attacker size=5"]
    assert spec.variants[3].options["size"] == 5 and spec.variants[0].options["size"] == 4
    assert parse_sweep("layout=default,./default") == ("layout", ["default", "./default"])


# --- metrics --------------------------------------------------------------------------------------

def _row(game: int, first: int, returns: list[float], turns: int, mid: list[int] | None = None,
         limit: bool = False) -> dict:
    return {"variant": "base", "game": game, "first": first, "returns": returns, "turns": turns,
            "rounds": turns // 2, "winners": [s for s, r in enumerate(returns) if r > 0],
            "chance": turns, "limit": limit, "counters": {}, "detail": mid is not None,
            "decisions": turns, "multi": turns // 2, "legal": 3 * turns, "mid_scores": mid,
            "lead_changes": 1}


def test_metrics_on_hand_made_games() -> None:
    spec = build_spec("exactly", 2, ["random"], {}, [], seed=0)
    rows = [
        _row(0, 0, [1.0, 0.0], 10, [1, 0]),      # first player (seat 0) wins, was ahead
        _row(1, 1, [1.0, 0.0], 20, [0, 1]),      # seat 1 started; seat 0 wins from behind
        _row(2, 1, [0.5, 0.5], 30, [1, 1]),      # shared
        _row(3, 0, [0.0, 1.0], 40, None, limit=True),
    ]
    v = summarise_variant(spec, rows)
    assert [s["count"] for s in v["seats"]] == [2.5, 1.5]
    # play order: game 0 first wins; game 1 the second wins; game 2 shared; game 3 the second
    assert [p["count"] for p in v["positions"]] == [1.5, 2.5]
    assert v["first_player"]["rate"] == 0.375 and not v["first_player"]["first_is_seat0"]
    m = v["metrics"]
    assert m["balance"]["value"] == pytest.approx(1 - (0.625 - 0.375))
    assert m["completion"]["value"] == 0.75 and m["drawishness"]["value"] == 0.25
    assert m["duration"]["value"] == 25
    assert m["duration_spread"]["value"] == pytest.approx(stats.stdev([10, 20, 30, 40]))
    assert m["drama"]["count"] == 1 and m["drama"]["games"] == 2  # detailed games with one winner
    assert m["branching_factor"]["value"] == 3.0 and m["decision_factor"]["value"] == 0.5
    assert v["length"]["turns"]["median"] == 25 and v["length"]["turns"]["p90"] == pytest.approx(37)
    assert v["shared_wins"]["count"] == 1 and v["turn_limit"]["count"] == 1


@pytest.mark.parametrize(("game", "players"), [("exactly", 3), ("tri", 2), ("tohm", 3), ("exagon", 3)])
def test_every_game_gives_its_figures(game: str, players: int) -> None:
    spec = build_spec(game, players, ["random"], {}, [], seed=4, detail=1)
    rows = collect(spec, 3, jobs=1)
    v = summarise(spec, rows, 3)["variants"][0]
    assert v["games"] == 3 and v["detailed_games"] == 3
    assert v["figures"], "game-specific figures"
    assert v["metrics"]["branching_factor"]["value"] >= 1
    assert all(r["first"] in range(players) and len(r["mid_scores"]) == players for r in rows)


# --- the command line ------------------------------------------------------------------------------

def test_lab_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "lab"
    args = ["lab", "tohm", "--players", "2", "--games", "40", "--seed", "3", "--jobs", "2", "--out", str(out)]
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    assert "First player" in done.stdout and "Wilson" in done.stdout
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 3 and "Balance" in html and "Drama" in html
    summary = json.loads((out / "summary.json").read_text())
    (v,) = summary["variants"]
    assert v["games"] == 40 and summary["complete"] and set(v["metrics"]) >= {"advantage", "drama"}
    assert len((out / "games.jsonl").read_text().splitlines()) == 40
    again = run_cli(*args, "--no-progress")
    assert again.returncode == 0 and "already done" in again.stdout
    assert json.loads((out / "summary.json").read_text()) == summary


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agents", "wizard"], "unknown agent 'wizard'"),
        (["--agents", "random,random,random"], "lists 3 agents but the game has 2 players"),
        (["--sweep", "layout"], "--sweep takes NAME=VALUE1,VALUE2"),
        (["--sweep", "layout=a,,b"], "--sweep takes NAME=VALUE1,VALUE2"),
        (["--sweep", "ties=a,a"], "lists a value twice"),
        (["--option", "colour=red"], "unknown option 'colour'"),
        (["--sweep", "colour=red,blue"], "unknown option 'colour'"),
        (["--option", "layout=/no/such/board.json"], "not found"),
        (["--option", "turn_limit=5", "--sweep", "turn_limit=5,6"], "both as --option"),
        (["--address", "10.0.0.1:6379"], "--address is for --backend ray"),
        (["--games", "0"], "must be 1 or more"),
        (["--players", "9"], "not 9"),
        (["--detail", "-1"], "--detail takes 0"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lab", "tohm", "--players", "2", *args, "--out", str(tmp_path / "x"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_another_run_in_the_same_directory_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_cli("lab", "tohm", "--players", "2", "--games", "4", "--out", str(out), "--no-report")
    assert first.returncode == 0, first.stderr
    other = run_cli("lab", "tohm", "--players", "2", "--games", "4", "--seed", "9", "--out", str(out))
    assert other.returncode == 2
    assert "holds another run (seed 0, not 9)" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1 and "Traceback" not in other.stderr


def test_win_rates_with_shared_wins_use_the_observed_variance() -> None:
    # 6 wins, 2 shared (1/2), 2 losses: mean 0.7, E[x^2] = 0.65, variance 0.16,
    # z = 0.2 / sqrt(0.016) = 1.58114 against 1/2; n_eff = 10 * 0.21 / 0.16 = 13.125
    values = [1.0] * 6 + [0.5] * 2 + [0.0] * 2
    test, p = stats.rate_test(values, 0.5)
    assert test.startswith("z") and p == pytest.approx(stats.normal_two_sided(1.58114), abs=1e-5)
    assert p == pytest.approx(0.113846, abs=1e-5)
    assert stats.effective_n(values) == pytest.approx(13.125)
    assert stats.rate_interval(values) == pytest.approx(stats.wilson(0.7 * 13.125, 13.125))
    # without shared wins: the exact binomial test and the plain Wilson interval
    assert stats.rate_test([1.0] * 7 + [0.0] * 3, 0.5) == ("exact binomial", pytest.approx(352 / 1024))
    assert stats.rate_interval([1.0] * 60 + [0.0] * 40) == pytest.approx(stats.wilson(60, 100))
    # Rao-Scott: totals 2.5 vs 1.5 give 0.25; both design effects 0.171875 / 0.234375
    chi, df, p = stats.chi_square_equal_rates([[1, 0.5, 0, 1], [0, 0.5, 1, 0]])
    assert df == 1 and chi == pytest.approx(0.25 / (0.171875 / 0.234375))
    assert p == pytest.approx(stats.normal_two_sided(math.sqrt(chi)))
    # two samples: binary -> pooled two-proportion z; shared -> unpooled with observed variances
    assert stats.compare_rates([1] * 60 + [0] * 40, [1] * 45 + [0] * 55)[1] == pytest.approx(2.12398, abs=1e-4)
    name, z, _ = stats.compare_rates(values, [0.5] * 10)
    assert name.startswith("z") and z == pytest.approx(0.2 / math.sqrt(0.016))


def test_a_failing_game_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from ludoteca.agents import base
    from ludoteca.lab import runner

    class Crash(base.Agent):
        name = "crash"

        def step(self, state: Any) -> Any:
            raise RuntimeError("boom")

    monkeypatch.setitem(base._REGISTRY, "crash", Crash)
    monkeypatch.setattr(runner, "_MAKERS", {})
    spec = build_spec("tohm", 2, ["crash", "random"], {}, [], seed=1)
    with pytest.raises(runner.GameError, match=r"game 0 of base \(seed \d+\) failed: RuntimeError: boom"):
        collect(spec, 2, jobs=1)
