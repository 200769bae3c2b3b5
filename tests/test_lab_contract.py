"""The lab reads games only through the engine contract: scores(), turns_played(), end_reason(),
counters() and the Game.counters declarations. No module of the lab names a game or calls an
engine's private hooks, and a new game gets its figures by declaring them."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ludoteca import registry
from ludoteca.cli import main
from ludoteca.core import registry as core_registry
from ludoteca.core.chance import random_action
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.game import Counter, Game, State
from ludoteca.core.options import Option
from ludoteca.lab.metrics import KINDS, check_declaration, summarise, summarise_variant
from ludoteca.lab.plan import build_spec
from ludoteca.lab.runner import RunSpec, execute

SRC = Path(__file__).resolve().parents[1] / "src" / "ludoteca"
LAB_FILES = [*sorted((SRC / "lab").glob("*.py")), SRC / "commands" / "lab.py", SRC / "commands" / "arena.py"]


def collect(spec: RunSpec, games: int) -> list[dict[str, Any]]:
    lines: list[str] = []
    execute(spec, spec.tasks(games), lines.extend, jobs=1)
    return [json.loads(x) for x in lines]


# --- no game names, no private hooks ------------------------------------------------------------------

@pytest.mark.parametrize("path", LAB_FILES, ids=lambda p: p.name)
def test_the_lab_names_no_game(path: Path) -> None:
    # "no module outside games/ names a game"; the lab reads what each game declares
    text = path.read_text(encoding="utf-8")
    for name in registry.GAMES:
        hits = [m.group(0) for m in re.finditer(rf"\b{re.escape(name)}\b", text, re.IGNORECASE)]
        assert not hits, f"{path.name} names the game {name!r}"


@pytest.mark.parametrize("path", LAB_FILES, ids=lambda p: p.name)
def test_the_lab_calls_no_private_engine_hook(path: Path) -> None:
    # no caller outside core/ and games/ touches _apply, _legal or _legal_actions
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\._(apply|legal|legal_actions)\b", text), path.name


# --- every game declares figures the lab can read -------------------------------------------------------

@pytest.mark.parametrize("game", registry.GAMES)
def test_every_game_declares_counters_the_lab_reads(game: str) -> None:
    cls = registry.game_class(game)
    assert cls.counters, f"{game} declares no counters: the lab reports no figures of its own"
    names = {d.name for d in cls.counters}
    assert len(names) == len(cls.counters), "a counter is declared twice"
    for d in cls.counters:
        assert d.kind in KINDS and check_declaration(d, names) is None, d
        assert d.doc.strip(), f"{d.name} has no doc"
    spec = build_spec(game, 2, ["random"], {}, [], seed=3, detail=1)
    (row,) = collect(spec, 1)
    assert names <= set(row["counters"]), "counters() at the end lacks a declared counter"
    assert len(row["scores"]) == 2 and len(row["mid_scores"]) == 2, "scores() gives one score per seat"
    assert row["end"], "end_reason() says why the game ended"
    figures = summarise(spec, [row], 1)["variants"][0]["figures"]
    assert {f["counter"] for f in figures if "counter" in f} == names


# --- a game the lab has never heard of ----------------------------------------------------------------------

class CoinState(State):
    """Players take turns: a coin is flipped (chance), then the player to move guesses it; a
    right guess earns a token. The first to ``target`` tokens wins; at ``turn_limit`` the
    leaders share."""

    def __init__(self, game: Game) -> None:
        super().__init__(game)
        n = game.num_players
        self.tokens = [0] * n
        self.to_move = 0
        self.turn = 0
        self.coin: int | None = None
        self.flips = 0
        self.hits = 0
        self.over = False

    def current_player(self) -> int:
        if self.over:
            return TERMINAL
        return CHANCE if self.coin is None else self.to_move

    def _legal_actions(self) -> list[int]:
        return [] if self.over else [0, 1]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(0, 0.5), (1, 0.5)] if self.coin is None and not self.over else []

    def _apply(self, action: int) -> None:
        if self.coin is None:
            self.coin = action
            self.flips += 1
            return
        if action == self.coin:
            self.tokens[self.to_move] += 1
            self.hits += 1
        self.coin = None
        self.turn += 1
        self.to_move = (self.to_move + 1) % self.num_players
        g = self.game.options
        self.over = max(self.tokens) >= g["target"] or self.turn >= g["turn_limit"]

    def _copy(self) -> CoinState:
        c = CoinState(self.game)
        c.tokens, c.to_move, c.turn, c.coin = self.tokens[:], self.to_move, self.turn, self.coin
        c.flips, c.hits, c.over = self.flips, self.hits, self.over
        return c

    def returns(self) -> list[float]:
        if not self.over:
            return [0.0] * self.num_players
        best = max(self.tokens)
        winners = [s for s, t in enumerate(self.tokens) if t == best]
        return [1 / len(winners) if s in winners else 0.0 for s in range(self.num_players)]

    def action_to_json(self, action: int) -> dict[str, Any]:
        return {"coin": action} if self.coin is None else {"guess": action}

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        return int(next(iter(data.values())))

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "to_move": self.to_move, "turn": self.turn, "coin": self.coin}

    def render(self) -> str:
        return json.dumps(self.to_json())


class BareCoinGame(Game):
    """Coin guessing with nothing but the required hooks: no scores, no counters, no end reason."""

    name = "barecoin"
    title = "Coin"
    min_players = 2
    max_players = 3
    OPTIONS = (Option("target", "tokens to win", 3), Option("turn_limit", "player turns before a shared end", 40))

    def num_distinct_actions(self) -> int:
        return 2

    def max_chance_outcomes(self) -> int:
        return 2

    def new_initial_state(self) -> State:
        return CoinState(self)

    def state_from_json(self, data: Mapping[str, Any]) -> State:
        raise ValueError("not needed")


class CountingCoinState(CoinState):
    def scores(self) -> list[float]:
        return [float(t) for t in self.tokens]

    def end_reason(self) -> str:
        return "" if not self.over else "target" if max(self.tokens) >= self.game.options["target"] else "turn_limit"

    def counters(self) -> dict[str, float]:
        return {"hits": self.hits, "flips": self.flips, "shutout": int(min(self.tokens) == 0),
                "tokens_per_hit": 2 * self.hits}

    def _copy(self) -> CountingCoinState:
        c = CountingCoinState(self.game)
        c.tokens, c.to_move, c.turn, c.coin = self.tokens[:], self.to_move, self.turn, self.coin
        c.flips, c.hits, c.over = self.flips, self.hits, self.over
        return c


class CoinGame(BareCoinGame):
    """Coin guessing implementing the whole contract the lab reads."""

    name = "coin"
    score_name = "tokens"
    counters = (
        Counter("hits", "share_per_event", "right guesses", of="turns"),
        Counter("flips", "mean_per_game", "coins flipped"),
        Counter("shutout", "share_per_game", "games in which a player ended without a token"),
        Counter("tokens_per_hit", "ratio_per_event", "twice the right guesses, per right guess", of="hits"),
        Counter("nonsense", "share_per_event", "a declaration the lab cannot read", of="nothing"),
    )

    def new_initial_state(self) -> State:
        return CountingCoinState(self)


@pytest.fixture
def coin_games(monkeypatch: pytest.MonkeyPatch) -> None:
    classes = core_registry._classes()  # the games found, by name (a new game: a new entry)
    monkeypatch.setitem(classes, "coin", CoinGame)
    monkeypatch.setitem(classes, "barecoin", BareCoinGame)


def test_a_new_game_gets_its_declared_figures(coin_games: None, tmp_path: Path) -> None:
    spec = build_spec("coin", 2, ["random"], {}, [], seed=1, detail=2)
    rows = collect(spec, 40)
    for r in rows:
        assert r["scores"] == [float(t) for t in r["scores"]] and sum(r["scores"]) == r["counters"]["hits"]
        assert r["first"] == 0 and r["end"] in ("target", "turn_limit")
        assert r["chance"] == r["counters"]["flips"] == r["turns"]  # one flip per turn, read at the end
        assert r["limit"] == (r["end"] == "turn_limit")
    summary = summarise(spec, rows, 40)
    v = summary["variants"][0]
    figs = {f["name"]: f for f in v["figures"]}
    hits = [r["counters"]["hits"] for r in rows]
    turns = [r["turns"] for r in rows]
    assert figs["hits"]["kind"] == "proportion" and figs["hits"]["value"] == pytest.approx(sum(hits) / sum(turns))
    assert figs["flips"]["kind"] == "mean" and figs["flips"]["value"] == pytest.approx(sum(turns) / 40)
    shutouts = sum(1 for r in rows if min(r["scores"]) == 0)
    assert figs["shutout"]["kind"] == "proportion" and figs["shutout"]["value"] == pytest.approx(shutouts / 40)
    assert figs["tokens per hit"]["kind"] == "ratio" and figs["tokens per hit"]["value"] == pytest.approx(2.0)
    ended = sum(1 for r in rows if r["end"] == "target")
    assert figs["games ended by target"]["value"] == pytest.approx(ended / 40)
    assert "nonsense" not in figs
    assert summary["counters_unread"] == [{"name": "nonsense", "reason": "'of' names 'nothing', which is neither "
                                                                     "a counter of the game nor 'turns'"}]
    assert summary["score_name"] == "tokens" and v["metrics"]["drama"]["games"] > 0
    assert main(["lab", "coin", "--players", "2", "--games", "12", "--jobs", "1", "--out", str(tmp_path / "c"),
                 "--no-progress"]) == 0
    html = (tmp_path / "c" / "report.html").read_text()
    assert "Coin figures" in html and "tokens per hit" in html and "is not reported" in html


def test_a_game_without_scores_or_counters_still_runs(coin_games: None, tmp_path: Path) -> None:
    spec = build_spec("barecoin", 3, ["random"], {}, [], seed=2, detail=1)
    rows = collect(spec, 12)
    assert all(r["mid_scores"] is None and r["lead_changes"] == 0 and r["counters"] == {} for r in rows)
    # no end reason: turn_limit is read from the turns
    assert all(r["end"] == "over" and r["limit"] == (r["turns"] >= 40) for r in rows)
    v = summarise_variant(spec, rows)
    assert v["figures"] == [] and v["metrics"]["drama"]["games"] == 0
    out = tmp_path / "bare"
    assert main(["lab", "barecoin", "--players", "3", "--games", "6", "--jobs", "1", "--out", str(out),
                 "--no-progress"]) == 0
    assert "declares no counters" in (out / "report.html").read_text()


# --- figures by kind, by hand ------------------------------------------------------------------------------

def _row(i: int, turns: int, counters: dict[str, float], end: str) -> dict[str, Any]:
    return {"variant": "base", "game": i, "first": 0, "returns": [1.0, 0.0], "winners": [0], "turns": turns,
            "rounds": turns, "chance": turns, "end": end, "limit": end == "turn_limit", "detail": False,
            "agents": ["random", "random"], "counters": counters}


def test_figures_by_kind_by_hand(coin_games: None) -> None:
    spec = build_spec("coin", 2, ["random"], {}, [], seed=0)
    rows = [_row(0, 10, {"hits": 4, "flips": 10, "shutout": 1, "tokens_per_hit": 8}, "target"),
            _row(1, 30, {"hits": 9, "flips": 30, "shutout": 0, "tokens_per_hit": 18}, "target"),
            _row(2, 40, {"hits": 20, "flips": 40, "shutout": 0, "tokens_per_hit": 40}, "turn_limit"),
            _row(3, 20, {"hits": 7, "flips": 20, "shutout": 2, "tokens_per_hit": 14}, "target")]
    figs = {f["name"]: f for f in summarise_variant(spec, rows)["figures"]}
    # hits per turn pooled over games: 40 / 100, the games as clusters
    assert figs["hits"]["value"] == pytest.approx(0.4) and figs["hits"]["of"] == 100
    # residuals x - 0.4 n: 0, -3, 4, -1 -> variance 26 / 100^2; effective events 0.24 / 0.0026
    assert figs["hits"]["effective_n"] == pytest.approx(0.24 / 0.0026)
    # share of games with a non-zero count: 2 of 4 (Wilson interval of 2/4)
    lo = (0.5 + 1.959964**2 / 8 - 1.959964 * (0.0625 + 1.959964**2 / 64) ** 0.5) / (1 + 1.959964**2 / 4)
    assert figs["shutout"]["value"] == 0.5 and figs["shutout"]["ci"][0] == pytest.approx(lo, abs=1e-5)
    # mean per game 25, t interval with 3 degrees of freedom: sd 12.9099, t 3.182446
    half = 3.182446 * 12.909944 / 2
    assert figs["flips"]["value"] == 25 and figs["flips"]["ci"] == pytest.approx([25 - half, 25 + half], abs=1e-4)
    # a ratio per event above 1: the estimate ± 1.96 cluster-robust se (all residuals 0 here)
    assert figs["tokens per hit"]["value"] == 2 and figs["tokens per hit"]["ci"] == [2, 2]
    assert figs["games ended by turn_limit"]["value"] == 0.25 and figs["games ended by target"]["value"] == 0.75


def test_rows_of_an_older_engine_without_a_counter_give_no_figure(coin_games: None) -> None:
    spec = build_spec("coin", 2, ["random"], {}, [], seed=0)
    rows = [_row(i, 10, {"flips": 10}, "target") for i in range(3)]
    names = [f["name"] for f in summarise_variant(spec, rows)["figures"]]
    assert names == ["games ended by target", "flips"]


# --- the same answers as before the contract ------------------------------------------------------------------

def test_the_lab_gives_the_answers_of_issue_10() -> None:
    # Expected values computed with the lab of commit c4b12b4, which guessed the engines'
    # attributes: reading them through the contract must not change a single result.
    spec = build_spec("tohm", 2, ["random"], {}, [], seed=1)
    rows = sorted(collect(spec, 400), key=lambda r: r["game"])
    assert sum(r["returns"][0] for r in rows) == 193.5 and sum(r["turns"] for r in rows) == 68052
    assert sum(r["lead_changes"] for r in rows if r["detail"]) == 45
    assert [r["mid_scores"] for r in rows if r["detail"]][:5] == [[3, 4], [4, 1], [1, 2], [2, 2], [3, 3]]
    # exactly: the first player is the roll-off winner even when their first roll (a 0) asks nothing
    spec = build_spec("exactly", 3, ["random"], {}, [], seed=7)
    rows = sorted(collect(spec, 30), key=lambda r: r["game"])
    assert [r["first"] for r in rows] == [1, 0, 2, 0, 0, 0, 2, 2, 1, 2, 1, 1, 2, 0, 1, 2, 2, 1, 0, 2, 1, 1, 2, 0, 1,
                                          0, 1, 0, 1, 0]
    assert sum(r["rounds"] for r in rows) == 138
    # TRI: rounds are the position's round
    spec = build_spec("tri", 3, ["random"], {}, [], seed=7, detail=4)
    rows = sorted(collect(spec, 20), key=lambda r: r["game"])
    assert [r["rounds"] for r in rows] == [151, 134, 133, 119, 134, 136, 135, 156, 222, 161, 261, 135, 175, 127, 164,
                                           135, 110, 118, 105, 215]
    assert sum(r["lead_changes"] for r in rows if r["detail"]) == 56


GAME_COUNTS = st.lists(st.tuples(st.integers(1, 300), st.integers(0, 300), st.integers(0, 5)), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(games=GAME_COUNTS)
def test_every_declared_figure_holds_its_estimate(games: list[tuple[int, int, int]]) -> None:
    # any counts: a share stays in [0, 1] with an interval around it, a ratio or a mean has its
    # interval around it, and the values are the pooled (or mean) counts
    decls = (Counter("hits", "share_per_event", "right guesses", of="turns"),
             Counter("flips", "mean_per_game", "coins flipped"),
             Counter("shutout", "share_per_game", "games with a shutout"),
             Counter("tokens_per_hit", "ratio_per_event", "tokens per hit", of="hits"))
    spec = build_spec("tohm", 2, ["random"], {}, [], seed=0)
    rows = [_row(i, turns, {"hits": min(hits, turns), "flips": turns, "shutout": extra,
                            "tokens_per_hit": extra * min(hits, turns)}, "target")
            for i, (turns, hits, extra) in enumerate(games)]
    figs = {f["name"]: f for f in summarise_variant(spec, rows, decls)["figures"]}
    hits = sum(min(h, t) for t, h, _ in games)
    assert figs["hits"]["value"] == pytest.approx(hits / sum(t for t, _, _ in games))
    assert figs["shutout"]["value"] == pytest.approx(sum(1 for *_, e in games if e) / len(games))
    for f in figs.values():
        if f["ci"] is not None:
            assert f["ci"][0] <= f["value"] + 1e-12 and f["value"] <= f["ci"][1] + 1e-12, f
        if f["kind"] == "proportion":
            assert 0.0 <= f["ci"][0] <= f["ci"][1] <= 1.0


@pytest.mark.parametrize("game", registry.GAMES)
def test_turns_played_is_the_positions_turn(game: str) -> None:
    # RULES.md: `turn` counts the player turns completed; an engine's fast read must agree
    rng = random.Random(5)
    cls = registry.game_class(game)
    for players in sorted({cls.min_players, min(3, cls.max_players)}):
        state = registry.load_game(game, players=players).new_initial_state()
        while True:
            assert state.turns_played() == state.to_json()["turn"]
            if state.is_terminal():
                break
            state.apply_unchecked(random_action(state, rng))
