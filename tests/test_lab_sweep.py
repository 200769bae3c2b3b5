"""Sweeps of options of every type: words (TRI's teleport, exactly's start_coin), numbers,
files whose names look like numbers. Sweep parsing knows no game by name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ludoteca.cli import main
from ludoteca.lab.metrics import summarise
from ludoteca.lab.plan import build_spec
from ludoteca.lab.runner import RunSpec, execute
from ludoteca.registry import game_class, load_game


def collect(spec: RunSpec, games: int) -> list[dict]:
    lines: list[str] = []
    execute(spec, spec.tasks(games), lines.extend, jobs=1)
    return [json.loads(x) for x in lines]


def has_option(game: str, name: str) -> bool:
    return any(o.name == name for o in game_class(game).OPTIONS)


def sweep_words(game: str, option: str, values: list[str], players: int = 2) -> None:
    """``--sweep option=v1,v2,...`` builds one variant per word, each recorded with its value,
    plays, and is compared with the first."""
    spec = build_spec(game, players, ["random"], {}, [f"{option}={','.join(values)}"], seed=4, detail=2)
    assert [v.key for v in spec.variants] == [f"{option}={w}" for w in values]
    assert [v.overrides for v in spec.variants] == [{option: w} for w in values]
    # each variant's recorded options (a default may be left out) rebuild the game with its value
    assert [load_game(game, **v.options).options[option] for v in spec.variants] == values
    rows = collect(spec, 4)
    summary = summarise(spec, rows, 4)
    assert [v["games"] for v in summary["variants"]] == [4] * len(values)
    assert len(summary["comparisons"]) == len(values) - 1


@pytest.mark.skipif(not has_option("exactly", "start_coin") or game_class("exactly")(start_coin="game")
                    .options["start_coin"] != "game", reason="exactly's start_coin words are not in yet")
def test_sweep_of_exactly_start_coin_words() -> None:
    sweep_words("exactly", "start_coin", ["round", "game", "never"])


@pytest.mark.skipif(not has_option("tri", "teleport"), reason="TRI's teleport option is not in yet")
def test_sweep_of_tri_teleport_words(tmp_path: Path) -> None:
    sweep_words("tri", "teleport", ["claim", "move"])
    out = tmp_path / "teleport"
    code = main(["lab", "tri", "--players", "2", "--games", "4", "--jobs", "1", "--sweep", "teleport=claim,move",
                 "--out", str(out), "--no-progress"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert [v["key"] for v in summary["variants"]] == ["teleport=claim", "teleport=move"]


def test_sweep_of_an_existing_word_option() -> None:
    sweep_words("tri", "ties", ["defender", "attacker"])


def test_a_swept_value_that_looks_like_a_number_is_tried_as_text(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # a designer's layout file named "5": read as the number 5 the game refuses it, as text it is a file
    layout = [[3, 3, 3, 4], [4, 5, 6, 6], [5, 6, 4, 3]]
    (tmp_path / "5").write_text(json.dumps(layout))
    monkeypatch.chdir(tmp_path)
    spec = build_spec("tohm", 2, ["random"], {}, ["layout=default,5"], seed=1)
    assert [v.key for v in spec.variants] == ["layout=default", "layout=5"]
    assert spec.variants[1].overrides == {"layout": "5"}
    assert spec.variants[1].options["layout"] == layout
    # numbers stay numbers where the game takes them
    spec = build_spec("tri", 2, ["random"], {}, ["size=4,5"], seed=1)
    assert [v.overrides for v in spec.variants] == [{"size": 4}, {"size": 5}]
    # a value refused either way reports the game's own error, naming the variant
    os.remove(tmp_path / "5")
    with pytest.raises(ValueError, match=r"^layout=5: option layout: "):
        build_spec("tohm", 2, ["random"], {}, ["layout=default,5"], seed=1)


def test_lab_code_does_not_name_games_when_parsing_sweeps() -> None:
    import inspect

    from ludoteca.lab import plan

    source = inspect.getsource(plan.parse_sweep) + inspect.getsource(plan._load_variant)
    for game in ("exactly", "tri", "tohm", "exagon", "teleport", "start_coin"):
        assert f'"{game}"' not in source and f"'{game}'" not in source


def test_the_number_of_players_is_a_sweepable_dimension(tmp_path: Path) -> None:
    # --sweep players=2,3,4: one variant per count, each played with its own number of seats and the
    # game's defaults for that count; the per-variant summary has as many seats as the variant
    spec = build_spec("tohm", None, ["random"], {}, ["players=2,3,4"], seed=5, detail=2)
    assert [v.key for v in spec.variants] == ["players=2", "players=3", "players=4"]
    assert [spec.players_of(v) for v in range(3)] == [2, 3, 4]
    assert spec.player_counts == [2, 3, 4] and spec.rotation_period == 12
    rows = collect(spec, 4)
    assert sorted({(r["variant"], len(r["returns"]), len(r["agents"])) for r in rows}) == [
        ("players=2", 2, 2), ("players=3", 3, 3), ("players=4", 4, 4)]
    summary = summarise(spec, rows, 4)
    assert [(v["players"], len(v["seats"]), len(v["positions"])) for v in summary["variants"]] == [
        (2, 2, 2), (3, 3, 3), (4, 4, 4)]
    # a comparison reads the seats both variants have
    seat_rows = [r["measure"] for r in summary["comparisons"][1]["rows"] if r["measure"].startswith("seat ")]
    assert seat_rows == ["seat 0 win rate", "seat 1 win rate"]
    # the command line: rotation rounds the games up to a multiple of every count, the report is written
    out = tmp_path / "players"
    code = main(["lab", "tohm", "--games", "5", "--jobs", "1", "--sweep", "players=2,3", "--rotate",
                 "--out", str(out), "--no-progress"])
    assert code == 0
    written = json.loads((out / "summary.json").read_text())
    assert [(v["key"], v["players"], v["games"]) for v in written["variants"]] == [("players=2", 2, 6),
                                                                                   ("players=3", 3, 6)]


def test_a_players_sweep_takes_one_agent_for_all_seats_or_one_per_seat_of_the_largest_game() -> None:
    spec = build_spec("tohm", None, ["heuristic", "random", "random"], {}, ["players=2,3"], seed=1)
    assert spec.lineup == ("heuristic", "random", "random")
    assert spec.for_variant(0).lineup == ("heuristic", "random")
    with pytest.raises(ValueError, match="largest game"):
        build_spec("tohm", None, ["heuristic", "random"], {}, ["players=2,3"], seed=1)
    with pytest.raises(ValueError, match="both as --option/--players and as --sweep"):
        build_spec("tohm", 2, ["random"], {}, ["players=2,3"], seed=1)
    with pytest.raises(ValueError, match="players=6"):
        build_spec("tohm", None, ["random"], {}, ["players=2,6"], seed=1)
