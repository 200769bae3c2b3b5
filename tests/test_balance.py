"""``ludoteca balance`` (lab/balance.py, commands/balance.py): the race between settings finds the fairest
one with as few games as it can, within the budget, the same way every time; ``--vary`` parsing; the command
end to end on a real game (random agents, a tiny budget); ``ludoteca.lab.run`` returns rows."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ludoteca.lab as lab
from ludoteca.cli import main
from ludoteca.core import i18n as hook
from ludoteca.lab import stats
from ludoteca.lab.balance import (
    Target,
    parse_target,
    parse_vary,
    plan,
    race,
    search,
    seat_advantage,
    sweeps_for,
    z_for,
)
from ludoteca.registry import GAMES, game_class

GAME = GAMES[0]
"""Any game: the command names none."""


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    """A command run with ``--lang it`` leaves the process in Italian: back to English for the next test."""
    yield
    hook.install(None)
    from ludoteca.lab.report import set_language

    set_language("en")


def fake_player(first_wins: list[float], seed: int = 0, turns: list[float] | None = None) -> Any:
    """A two-player game where the starting player wins setting ``k``'s game with probability
    ``first_wins[k]`` and the game lasts about ``turns[k]`` turns; game ``i`` of a setting is the same
    whenever it is asked for."""
    calls: list[tuple[int, int, int]] = []

    def play(k: int, start: int, stop: int) -> tuple[list[dict[str, Any]], float]:
        calls.append((k, start, stop))
        rows = []
        for i in range(start, stop):
            rng = random.Random(f"{seed}:{k}:{i}")
            first = rng.randrange(2)
            winner = first if rng.random() < first_wins[k] else 1 - first
            length = (turns[k] if turns else 30.0) + rng.uniform(-5, 5)
            returns = [1.0 if s == winner else 0.0 for s in range(2)]
            rows.append({"game": i, "first": first, "returns": returns, "turns": length})
        return rows, 0.001 * (stop - start)

    play.calls = calls  # type: ignore[attr-defined]
    return play


KEYS = ["bonus=1", "bonus=2", "bonus=3", "bonus=4"]
SEAT = Target("seat-advantage")


def test_the_race_finds_the_fair_setting_and_stops_when_it_is_separated() -> None:
    play = fake_player([0.80, 0.51, 0.66, 0.95])
    result = race(KEYS, play, SEAT, 2, budget=40_000)
    assert result.best.key == "bonus=2"
    assert result.stop == "separated"
    assert result.spent < 40_000 / 3  # stopped long before the budget
    # the clearly unfair settings were dropped in the first rounds, and played fewer games
    assert result.candidates[3].dropped == 1
    assert result.candidates[3].games < result.candidates[2].games <= result.candidates[1].games
    assert result.best.low <= 0.01 <= result.best.high  # the true advantage |0.51 - 0.5| is in the interval
    assert result.runner_up is not None and result.runner_up.key == "bonus=3"
    # each setting's cost: its games and its CPU seconds
    assert all(c.cpu == pytest.approx(0.001 * c.games) for c in result.candidates)


def test_the_race_respects_the_budget_when_settings_are_too_close_to_separate() -> None:
    play = fake_player([0.50, 0.51, 0.52])
    result = race(KEYS[:3], play, SEAT, 2, budget=600)
    assert result.spent <= 600
    assert result.stop in ("budget", "rounds")
    assert len(result.survivors) >= 2  # no evidence to tell them apart with 600 games
    assert result.best.key in {c.key for c in result.survivors}


def test_every_round_plays_each_surviving_setting_and_never_replays_a_game() -> None:
    play = fake_player([0.80, 0.51, 0.66, 0.95])
    result = race(KEYS, play, SEAT, 2, budget=40_000)
    for k, c in enumerate(result.candidates):
        spans = [(a, b) for kk, a, b in play.calls if kk == k]
        assert spans[0][0] == 0 and all(spans[j][1] == spans[j + 1][0] for j in range(len(spans) - 1))
        assert [r["game"] for r in c.rows] == list(range(c.games))
    sizes = [r["games_each"] for r in result.rounds]
    assert sizes == [result.first * 2 ** j for j in range(len(sizes))]  # games double every round


def test_the_race_is_deterministic() -> None:
    one = race(KEYS, fake_player([0.80, 0.51, 0.66, 0.95], seed=7), SEAT, 2, budget=8000).to_json()
    two = race(KEYS, fake_player([0.80, 0.51, 0.66, 0.95], seed=7), SEAT, 2, budget=8000).to_json()
    assert one == two


def test_the_truly_fairest_setting_is_never_dropped() -> None:
    # the simultaneous intervals cover every true value together at least 95% of the time: over ten
    # independent searches of settings 3 and 6 points apart, the fair one survives every time
    for seed in range(10):
        result = race(KEYS[:3], fake_player([0.53, 0.50, 0.56], seed=seed), SEAT, 2, budget=3000)
        assert result.candidates[1].dropped is None, seed


def test_a_length_target_finds_the_setting_of_that_length() -> None:
    play = fake_player([0.5, 0.5, 0.5], turns=[30.0, 41.0, 55.0])
    result = race(KEYS[:3], play, parse_target("length=40"), 2, budget=3000)
    assert result.best.key == "bonus=2" and result.stop == "separated"
    assert result.best.estimate == pytest.approx(1.0, abs=0.5)


def test_the_plan_fits_the_budget() -> None:
    first, rounds = plan(4, 2000)
    assert first == 62 and first * 2 ** (rounds - 1) <= 2000 < first * 2 ** rounds
    assert plan(3, 6) == (2, 2)
    with pytest.raises(ValueError, match="too small"):
        plan(4, 7)


@pytest.mark.parametrize(("text", "values"), [
    ("cap=100,150,200", ["100", "150", "200"]),
    ("cap=100..103", ["100", "101", "102", "103"]),
    ("cap=100..200/50", ["100", "150", "200"]),
    ("cap=100..210/50", ["100", "150", "200"]),
    ("rule = a , b", ["a", "b"]),
])
def test_vary_reads_lists_and_ranges(text: str, values: list[str]) -> None:
    assert parse_vary(text)[1] == values


@pytest.mark.parametrize(("text", "message"), [
    ("cap", "--vary takes NAME=A,B,C"),
    ("cap=", "--vary takes NAME=A,B,C"),
    ("=1,2", "--vary takes NAME=A,B,C"),
    ("cap=1,,2", "--vary takes NAME=A,B,C"),
    ("cap=a..b", "--vary takes NAME=A,B,C"),
    ("cap=1..5/x", "--vary takes NAME=A,B,C"),
    ("cap=1,2,1", "lists a value twice"),
    ("cap=5..1", "ends below its start"),
    ("cap=1..5/0", "step must be 1 or more"),
    ("cap=0..1000000", "at most 1000"),
])
def test_vary_refuses_bad_input_clearly(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_vary(text)


def test_the_grid_of_several_varies() -> None:
    assert sweeps_for(["a=1,2", "b=5..7"]) == ["a=1,2", "b=5,6,7"]
    with pytest.raises(ValueError, match="given twice"):
        sweeps_for(["a=1,2", "a=3,4"])
    with pytest.raises(ValueError, match="single setting"):
        sweeps_for(["a=1"])
    with pytest.raises(ValueError, match="at most 200"):
        sweeps_for(["a=1..20", "b=1..20"])
    with pytest.raises(ValueError, match="at least one --vary"):
        sweeps_for([])


def test_the_seat_advantage_of_a_few_games_by_hand() -> None:
    # 10 two-player games, the starting player (seat 0 in 6 games, seat 1 in 4) wins 7 of them: the
    # starting position wins 70%, 20 points over its fair 50%; the second position 30%, 20 points under
    rows: list[dict[str, Any]] = [{"first": 0 if i < 6 else 1, "returns": [0.0, 0.0]} for i in range(10)]
    for i, row in enumerate(rows):
        winner = row["first"] if i in (0, 1, 2, 3, 6, 7, 8) else 1 - row["first"]
        row["returns"][winner] = 1.0
    estimate, low, high = seat_advantage(rows, 2, 0.05)
    lo, hi = stats.wilson(7, 10, z_for(0.05 / 2))  # each of the 2 positions at 97.5%
    assert estimate == pytest.approx(0.2)
    assert (low, high) == pytest.approx((max(0.0, lo - 0.5), hi - 0.5)) and low == 0.0  # 50% is inside


def test_targets() -> None:
    assert parse_target("seat-advantage") == Target("seat-advantage")
    assert parse_target("length=40") == Target("length", 40.0)
    for bad in ("length", "length=-3", "length=many", "fun"):
        with pytest.raises(ValueError, match="--target"):
            parse_target(bad)


def _choice_option() -> tuple[str, list[str]]:
    """The game's first option with choices, and two of its values."""
    option = next(o for o in game_class(GAME).OPTIONS if o.kind == "choice")
    return option.name, [c.value for c in option.choices[:2]]


@pytest.mark.parametrize(("lang", "expected"), [("en", "--vary takes NAME=A,B,C"), ("it", "--vary vuole")])
def test_the_command_refuses_a_bad_vary_in_one_translated_line(capsys: pytest.CaptureFixture[str], lang: str,
                                                              expected: str) -> None:
    code = main(["balance", GAME, "--players", "2", "--vary", "cap=5..", "--lang", lang])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and err.count("\n") == 1, err


def test_the_command_on_a_real_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name, values = _choice_option()
    out = tmp_path / "search"
    argv = ["balance", GAME, "--players", "2", "--vary", f"{name}={','.join(values)}", "--agents", "random",
            "--budget", "48", "--seed", "2", "--jobs", "1", "--out", str(out), "--no-progress", "--lang", "en"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Best setting:" in printed and "CPU s" in printed
    data = json.loads((out / "balance.json").read_text())
    keys = [f"{name}={v}" for v in values]
    assert data["best"] in keys and data["target"] == "seat-advantage"
    assert data["games"] <= 48 and sum(c["games"] for c in data["candidates"]) == data["games"]
    assert data["provenance"]["agents"][keys[0]][0]["spec"] == "random"
    assert all(c["cpu_seconds"] >= 0 for c in data["candidates"])
    stored = [json.loads(x) for x in (out / "setting-001" / "games.jsonl").read_text().splitlines()]
    assert len(stored) == data["candidates"][0]["games"]
    # the same command again reuses the stored games and gives the same answer
    assert main(argv) == 0
    again = json.loads((out / "balance.json").read_text())
    assert [(c["setting"], c["games"], c["estimate"]) for c in again["candidates"]] == \
        [(c["setting"], c["games"], c["estimate"]) for c in data["candidates"]]
    assert len((out / "setting-001" / "games.jsonl").read_text().splitlines()) == len(stored)


def test_the_search_from_python(tmp_path: Path) -> None:
    name, values = _choice_option()
    seen: list[tuple[int, int]] = []
    result = search(GAME, [f"{name}={','.join(values)}"], players=2, budget=40, seed=1, jobs=1,
                    out=tmp_path, on_games=lambda new, reused: seen.append((new, reused)))
    assert result.best.key in {f"{name}={v}" for v in values} and result.spent <= 40
    assert sum(new for new, _reused in seen) == result.spent
    assert result.provenance["agents"] and json.loads((tmp_path / "balance.json").read_text())["best"] == \
        result.best.key
    again = search(GAME, [f"{name}={','.join(values)}"], players=2, budget=40, seed=1, jobs=1, out=tmp_path,
                   on_games=lambda new, reused: seen.append((new, reused)))
    assert again.to_json()["candidates"][0]["estimate"] == result.to_json()["candidates"][0]["estimate"]
    assert sum(reused for _new, reused in seen) == result.spent  # every game came from the disk
    for bad, message in ((dict(target="fun"), "--target"), (dict(budget=0), "--budget"),
                         (dict(budget=3), "too small"), (dict(agents="nobody"), "unknown agent")):
        with pytest.raises(ValueError, match=message):
            search(GAME, [f"{name}={','.join(values)}"], players=2, **bad)  # type: ignore[arg-type]


def test_lab_run_returns_rows() -> None:
    result = lab.run(GAME, players=2, agents="random", games=4, seed=1, jobs=1)
    assert [r["game"] for r in result.rows] == [0, 1, 2, 3]  # type: ignore[attr-defined]
    assert all(len(r["returns"]) == 2 for r in result.rows)  # type: ignore[attr-defined]


def test_a_long_search_tells_its_estimate_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import ludoteca.lab.session as session

    monkeypatch.setattr(session, "ANNOUNCE_AFTER", -1.0)  # every search counts as long
    name, values = _choice_option()
    argv = ["balance", GAME, "--players", "2", "--vary", f"{name}={','.join(values)}", "--budget", "24",
            "--jobs", "1", "--no-progress", "--lang", "en"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    err = " ".join(capsys.readouterr().err.split())  # as one line, however the terminal wrapped it
    assert err.startswith("About ") and "the same command resumes" in err
    assert main(argv) == 0  # nothing stored: no promise of a resume
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("At most about ") and "Give --out DIR" in err
