"""The lab's reports: every game's report.html is written, intervals of in-game events take
the game as the unit, sweeps warn about multiple comparisons, text reads well."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ludoteca.cli import main
from ludoteca.core.game import Counter
from ludoteca.lab import stats
from ludoteca.lab.metrics import summarise, summarise_variant
from ludoteca.lab.plan import build_spec
from ludoteca.lab.report import every_kth_game, ordinal, plural, print_tables
from ludoteca.lab.report_html import render_html
from ludoteca.lab.runner import RunSpec, execute

pytest.importorskip("matplotlib")


def collect(spec: RunSpec, games: int) -> list[dict]:
    lines: list[str] = []
    execute(spec, spec.tasks(games), lines.extend, jobs=1)
    return [json.loads(x) for x in lines]


def error_bars_ok(summary: dict[str, Any]) -> None:
    """Every interval holds its estimate: no negative error bar in any plot."""
    for v in summary["variants"]:
        for e in v["seats"] + v["positions"]:
            assert 0.0 <= e["ci"][0] <= e["rate"] <= e["ci"][1] <= 1.0
        for f in v["figures"]:
            if f.get("ci") is not None:
                assert f["ci"][0] <= f["value"] <= f["ci"][1]


# --- the report of every game ----------------------------------------------------------

def test_exagon_report_of_issue_10(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # crashed with "'xerr' must not contain negative values": every game was won by the last
    # tile (100%) and none was blocked (0%)
    out = tmp_path / "exagon"
    code = main(["lab", "exagon", "--players", "2", "--agents", "random", "--games", "150", "--seed", "1",
                 "--out", str(out), "--jobs", "1", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 4
    summary = json.loads((out / "summary.json").read_text())
    error_bars_ok(summary)
    figs = {f["name"]: f for f in summary["variants"][0]["figures"]}
    assert {f["value"] for f in figs.values() if f["kind"] == "proportion"} & {0.0, 1.0}
    for f in figs.values():
        if f["kind"] == "proportion" and f["value"] == 0.0:
            assert f["ci"][0] == 0.0
        if f["kind"] == "proportion" and f["value"] == 1.0:
            assert f["ci"][1] == 1.0


@pytest.mark.parametrize(("game", "players", "games"), [("exactly", 2, 12), ("tri", 2, 8), ("tohm", 3, 12),
                                                        ("exagon", 3, 12), ("exagon", 2, 20)])
def test_every_game_writes_its_report(game: str, players: int, games: int, tmp_path: Path) -> None:
    out = tmp_path / game
    code = main(["lab", game, "--players", str(players), "--games", str(games), "--seed", "2", "--jobs", "1",
                 "--detail", "2", "--out", str(out), "--no-progress"])
    assert code == 0
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 3
    assert "sampling unit" in html
    error_bars_ok(json.loads((out / "summary.json").read_text()))


def test_every_game_writes_a_sweep_report(tmp_path: Path) -> None:
    sweeps = {"exactly": "turn_limit=default,60", "tri": "ties=defender,attacker", "tohm": "turn_limit=default,80",
              "exagon": "turn_limit=default,10"}
    for game, sweep in sweeps.items():
        out = tmp_path / game
        code = main(["lab", game, "--players", "2", "--games", "6", "--seed", "3", "--jobs", "1", "--sweep", sweep,
                     "--out", str(out), "--no-progress"])
        assert code == 0, game
        html = (out / "report.html").read_text()
        assert "Multiple comparisons" in html and "p (Holm)" in html, game


# --- intervals and tests of in-game events: the game is the unit ------------------------------------

CAPS = (Counter("rounds", "mean_per_game", "rounds completed"),
        Counter("cap_blocks", "share_per_event", "turns in which the cap forbade a move", of="turns"))


def _cap_row(i: int, variant: str, turns: int, caps: int, rounds: int = 4) -> dict:
    return {"variant": variant, "game": i, "first": 0, "returns": [1.0, 0.0], "winners": [0], "turns": turns,
            "rounds": rounds, "chance": turns, "limit": False, "detail": False, "agents": ["random", "random"],
            "counters": {"rounds": rounds, "cap_blocks": caps}}


def test_cap_share_uses_games_as_the_unit() -> None:
    spec = build_spec("exactly", 2, ["random"], {}, ["turn_limit=default,500"], seed=0)
    base, other = spec.variants[0].key, spec.variants[1].key
    # baseline: 20 games of 100 turns, 10 of them with 40 capped turns, 10 with 5 (share 22.5%)
    rows = [_cap_row(i, base, 100, 40 if i % 2 else 5) for i in range(20)]
    # variant: the same turns, 30 and 5 (share 17.5%)
    rows += [_cap_row(i, other, 100, 30 if i % 2 else 5) for i in range(20)]
    summary = summarise(spec, rows, 20, counters=CAPS)
    fig = next(f for f in summary["variants"][0]["figures"] if f["name"] == "cap blocks")
    # R = 450 / 2000 = 0.225; residuals +17.5 and -17.5: variance 20 * 306.25 / 2000^2 = 0.00153125;
    # effective events 0.225 * 0.775 / 0.00153125 = 113.88 (not 2000)
    assert fig["kind"] == "proportion" and fig["value"] == pytest.approx(0.225)
    assert fig["effective_n"] == pytest.approx(0.225 * 0.775 / 0.00153125)
    centre = (0.225 + 1.959964**2 / (2 * 113.877551)) / (1 + 1.959964**2 / 113.877551)
    assert sum(fig["ci"]) / 2 == pytest.approx(centre, abs=1e-5)
    assert fig["ci"][1] - fig["ci"][0] > 0.14  # events as independent draws: 0.037 wide
    # the sweep's test: z = (0.175 - 0.225) / sqrt(0.00153125 + 20 * 156.25 / 2000^2)
    (comp,) = summary["comparisons"]
    row = next(r for r in comp["rows"] if r["measure"] == "cap blocks")
    z = -0.05 / (0.00153125 + 20 * 156.25 / 2000**2) ** 0.5
    assert row["z"] == pytest.approx(z)
    assert row["p_value"] == pytest.approx(stats.normal_two_sided(z))
    assert row["p_value"] > 0.05  # pooled as 4000 independent turns: z = 3.95, p = 8e-5
    assert "p_holm" in row and row["p_holm"] >= row["p_value"]


def test_per_game_means_get_an_interval_and_a_test() -> None:
    spec = build_spec("tri", 2, ["random"], {}, ["ties=defender,attacker"], seed=0)
    keys = [v.key for v in spec.variants]
    rows = []
    for k, key in enumerate(keys):
        for i in range(5):
            battles = [1, 2, 3, 4, 5][i] * (k + 1)  # 1..5, then 2..10
            rows.append({"variant": key, "game": i, "first": 0, "returns": [1.0, 0.0], "winners": [0],
                         "turns": 20, "rounds": 10, "chance": 20, "limit": False, "detail": False,
                         "agents": ["random", "random"], "counters": {"battles": battles}})
    summary = summarise(spec, rows, 5, counters=(Counter("battles", "mean_per_game", "attacks played"),))
    fig = next(f for f in summary["variants"][0]["figures"] if f["name"] == "battles")
    # mean 3, se sqrt(0.5), t(0.975, 4) = 2.776445
    assert fig["ci"] == pytest.approx([3 - 1.963243, 3 + 1.963243], abs=1e-5)
    row = next(r for r in summary["comparisons"][0]["rows"] if r["measure"] == "battles")
    assert row["test"] == "Welch t" and row["z"] == pytest.approx(1.897367, abs=1e-6)
    assert row["p_value"] == pytest.approx(0.107531, abs=1e-5)
    duration = summary["variants"][0]["metrics"]["duration"]
    assert duration["value"] == 20 and duration["ci"] == [20, 20]


def test_sweep_warns_about_multiple_comparisons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = build_spec("tohm", 2, ["random"], {}, ["turn_limit=default,90,200"], seed=5, detail=2)
    rows = collect(spec, 10)
    summary = summarise(spec, rows, 10)
    mc = summary["multiple_comparisons"]
    # the family: every tested row but the repeats of another row's test and the constant ones
    tested = [r for c in summary["comparisons"] for r in c["rows"] if r["p_value"] is not None
              and "same_as" not in r]
    assert mc["method"] == "Holm" and mc["tests"] == len(tested)
    assert [r["p_holm"] for r in tested] == pytest.approx(stats.holm([r["p_value"] for r in tested]))
    for comp in summary["comparisons"]:
        rows_by = {r["measure"]: r for r in comp["rows"]}
        # two players, no rotation: the first player is seat 0, and seat 1 wins what seat 0 does not
        assert rows_by["seat 0 win rate"]["same_as"] == "first player win rate"
        assert rows_by["seat 1 win rate"]["same_as"] == "first player win rate"
        assert rows_by["seat 1 win rate"]["p_holm"] == rows_by["first player win rate"]["p_holm"]
        for r in comp["rows"]:
            if r["constant"]:
                assert r["p_value"] is None and "p_holm" not in r
        assert comp["conclusion"]["measure"] == "first player win rate"
    html = render_html(summary, rows)
    assert "Multiple comparisons" in html and "Holm" in html and "by chance" in html
    from rich.console import Console

    console = Console(width=200, record=True)
    print_tables(summary, console)
    text = console.export_text()
    assert f"this sweep ran {len(tested)} tests" in text and "Holm" in text


def test_a_difference_gets_its_interval_and_a_sentence_a_designer_can_act_on() -> None:
    """Hand-computed: 60/100 against 45/100 games: a difference of +15 points, standard error
    sqrt(0.6 * 0.4 / 100 + 0.45 * 0.55 / 100) = 0.069821, interval +15 ± 1.96 × 6.9821 points =
    [+1.32, +28.68]; the minimum detectable effect at 80% power: 2.8016 × 6.9821 = 19.56 points."""
    from ludoteca.lab.metrics import _proportion_row, adjust_for_multiple_comparisons
    from ludoteca.lab.report import conclusion_sentence

    row = _proportion_row("first player win rate", 60, 100, 45, 100)
    assert row["diff"] == pytest.approx(0.15)
    assert row["ci"] == pytest.approx([0.15 - 1.959964 * 0.0698212, 0.15 + 1.959964 * 0.0698212], abs=1e-5)
    comp = {"variant": "layout=mine", "baseline": "default", "rows": [row]}
    adjust_for_multiple_comparisons([comp])
    assert comp["conclusion"]["verdict"] == "changes"  # p = 0.034, alone in its family
    assert comp["conclusion"]["mde"] == pytest.approx(2.801585 * 0.0698212, abs=1e-5)
    assert conclusion_sentence(comp) == (
        "layout=mine changes the first player's win rate by +15.0 points [+1.3, +28.7] against default "
        "(significant after Holm's adjustment). With these games this comparison detects a change of about 19.6 "
        "points (80% power at 5%).")
    same = _proportion_row("first player win rate", 52, 100, 53, 100)
    comp = {"variant": "layout=mine", "baseline": "default", "rows": [same]}
    adjust_for_multiple_comparisons([comp])
    assert conclusion_sentence(comp).startswith(
        "No evidence that layout=mine changes the first player's win rate against default: -1.0 points [-14.8, +12.8].")


# --- readable text ------------------------------------------------------------------------------------

def test_plurals_and_ordinals() -> None:
    assert plural(1, "tile") == "1 tile" and plural(2, "tile") == "2 tiles" and plural(0, "tile") == "0 tiles"
    assert plural(1500, "game") == "1,500 games" and plural(1.0, "game") == "1 game"
    assert [ordinal(k) for k in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert every_kth_game(1) == "every game" and every_kth_game(2) == "every 2nd game"


def test_report_text_reads_well(tmp_path: Path) -> None:
    spec = build_spec("exagon", 2, ["random"], {}, [], seed=1, detail=1)
    rows = collect(spec, 1)
    summary = summarise(spec, rows, 1)
    summary["variants"][0]["options"]["tiles"] = [[1, 2, 3, 4, 5, 6]]  # a designer's set of one tile
    html = render_html(summary, rows)
    text = re.sub(r"<[^>]+>", " ", html)
    assert "1 tile" in text and "1 tiles" not in text
    assert "every game (1 game per variant)" in text and "1th" not in text and "1 games" not in text
    # definitions: left-aligned text in their own cells, not right-aligned
    assert re.search(r"td\.def\{[^}]*text-align:left", html)
    assert html.count("<td class='def'>") == len(summary["definitions"]) + len(summary["variants"][0]["figures"])
    assert "<span class='def'>" not in html


def test_terminal_counts_read_well(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "one"
    args = ["lab", "tohm", "--players", "2", "--games", "1", "--jobs", "1", "--out", str(out), "--no-report",
            "--no-progress"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "1 game in" in text and "1 job," in text
    assert not re.search(r"(?<![\d.])1 games\b", text)  # "450.1 games/s" is a rate, not a count
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "The only game was already done" in text


def test_summary_of_one_game_has_no_interval_of_a_mean() -> None:
    spec = build_spec("tri", 2, ["random"], {}, [], seed=1, detail=1)
    v = summarise_variant(spec, collect(spec, 1))
    assert v["metrics"]["duration"]["ci"] is None
    mean_fig = next(f for f in v["figures"] if f["kind"] == "mean")
    assert mean_fig["ci"] is None
