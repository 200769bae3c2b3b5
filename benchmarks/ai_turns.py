"""How much each AI level does in one turn, and how often it wins a game in one turn.

    nice .venv/bin/python benchmarks/ai_turns.py [GAME ...] [--games 20] [--against easy] [--seed 1]
        [--levels beginner,easy,medium,hard,expert] [--spec LEVEL=SPEC] [--json FILE]

Each level plays ``--games`` two-player games against ``--against`` (default ``easy``: about how a
newcomer plays), seats rotated, no clock, chance outcomes from a seeded stream shared by every
level (as ``benchmarks/ladder.py``). Nothing here names a game: a turn is what the game's
:meth:`~ludoteca.core.game.State.turns_played` counts, and what a turn achieved is read from the
game's declared counters (:attr:`Game.counters <ludoteca.core.game.Game.counters>`) of kind
``ratio_per_event`` per ``turns`` (EXAGON's ``placements``: tiles placed), or, for a game without
one, the decisions the player made in the turn.

For each level it prints, per turn of that level: the mean, 90th percentile and largest amount
(tiles placed per AI turn); the share of its turns over :data:`LONG` (a long turn); and the share
of the games it won **in one turn**: games whose last turn, the winning one, holds more than half of
everything the level achieved in the game (e.g. 11 of its 20 tiles placed in the turn that won).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import ludoteca
from ludoteca.agents import make_agent
from ludoteca.agents.levels import LEVELS
from ludoteca.agents.levels import spec as level_spec
from ludoteca.core.chance import outcome_at
from ludoteca.core.game import Game
from ludoteca.registry import game_class
from ludoteca.registry import games as game_names

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ladder import Stream, game_options

LONG = 6
"""A turn achieving more than this many (tiles placed, or decisions) is a long turn."""


def per_turn_counter(game: Game, state: Any) -> str | None:
    """The game's counter of what a turn achieves: of its counters of kind ``ratio_per_event`` per
    ``turns``, the one with the largest value at the end of ``state``'s game (what turns mostly do:
    EXAGON's tiles placed, not its bonuses), if turns do it at least once on average; else None
    (the decisions of a turn are counted instead)."""
    names = [c.name for c in type(game).counters if c.kind == "ratio_per_event" and c.of == "turns"]
    if not names:
        return None
    values = state.counters()
    best = max(names, key=lambda n: (float(values.get(n, 0.0)), -names.index(n)))
    return best if float(values.get(best, 0.0)) >= max(1, state.turns_played()) else None


def reference(name: str, seed: int) -> Any:
    """A finished game of ``name`` between two ``medium`` players (which counter a turn moves)."""
    if (name, seed) not in _REFERENCE:
        game = ludoteca.load_game(name, **game_options(name))
        agents = [make_agent(level_spec("medium", name), seed=seed + k, game=name) for k in range(2)]
        stream = Stream(seed)
        state = game.new_initial_state()
        pos = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(outcome_at(state.chance_outcomes(), stream[pos]))
                pos += 1
            else:
                state.apply_action(agents[state.current_player()].step(state))
        _REFERENCE[(name, seed)] = state
    return _REFERENCE[(name, seed)]


_REFERENCE: dict[tuple[str, int], Any] = {}


def play(name: str, level: str, spec: str, against: str, i: int, seed: int) -> dict[str, Any]:
    """Game ``i`` of ``level`` (spec ``spec``) against ``against``: the amount of each of the
    level's turns, whether it won, and whether its winning turn held most of its game."""
    game = ludoteca.load_game(name, **game_options(name))
    counter = per_turn_counter(game, reference(name, seed))
    mine = i % 2
    specs = [against, spec] if mine == 1 else [spec, against]
    agents = [make_agent(s, seed=(seed * 1_000_003 + 7919 * i + k) % 2**63, game=name) for k, s in enumerate(specs)]
    stream = Stream(1_000_003 * i + 7919 * seed + 17)
    state = game.new_initial_state()
    turns: list[float] = []
    current: float | None = None  # the amount of the level's turn in progress
    start_value = 0.0
    decisions = 0
    pos = 0

    def amount() -> float:
        return float(state.counters().get(counter, 0.0)) if counter else 0.0

    def close() -> None:
        nonlocal current
        if current is not None:
            turns.append((amount() - start_value) if counter else float(decisions))
            current = None

    while not state.is_terminal():
        if state.is_chance_node():
            action = outcome_at(state.chance_outcomes(), stream[pos])
            pos += 1
            state.apply_action(action)
            continue
        player = state.current_player()
        turn = state.turns_played()
        if current is not None and (player != mine or turn != current):
            close()
        if player == mine and current is None:
            current, start_value, decisions = turn, amount(), 0
        if player == mine:
            decisions += 1
        state.apply_action(agents[player].step(state))
    close()
    won = state.returns()[mine] > 0 and state.returns()[1 - mine] <= 0
    total = sum(turns)
    one_turn = won and bool(turns) and total > 0 and turns[-1] > total / 2
    return {"game": name, "level": level, "spec": spec, "against": against, "i": i, "seed": seed,
            "turns": turns, "won": won, "one_turn_win": one_turn, "unit": counter or "decisions"}


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    turns = sorted(t for r in rows for t in r["turns"])
    wins = sum(r["won"] for r in rows)
    one = sum(r["one_turn_win"] for r in rows)
    return {"games": len(rows), "turns": len(turns), "unit": rows[0]["unit"] if rows else "",
            "mean": round(statistics.fmean(turns), 2) if turns else 0.0,
            "p90": turns[int(0.9 * (len(turns) - 1))] if turns else 0.0,
            "max": turns[-1] if turns else 0.0,
            "long_share": round(sum(t > LONG for t in turns) / len(turns), 3) if turns else 0.0,
            "wins": wins, "one_turn_wins": one,
            "one_turn_share_of_games": round(one / len(rows), 3) if rows else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="*", help="games to measure (default: every game)")
    parser.add_argument("--games", type=int, default=20, help="games per level (rounded up to even)")
    parser.add_argument("--against", default="easy", help="the opponent: a level or an agent spec")
    parser.add_argument("--levels", default=",".join(LEVELS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spec", action="append", default=[], help="LEVEL=SPEC or GAME.LEVEL=SPEC")
    parser.add_argument("--json", default=None, help="append every game's result to this JSONL file")
    args = parser.parse_args(argv)
    names = args.game or game_names()
    for name in names:
        game_class(name)  # ValueError for an unknown game
    levels = [lv.strip() for lv in args.levels.split(",") if lv.strip()]
    for lv in levels:
        if lv not in LEVELS:
            parser.error(f"level {lv!r}: the levels are {', '.join(LEVELS)}")
    if args.games < 1:
        parser.error("--games must be at least 1")
    n = args.games + args.games % 2
    overrides = dict(item.partition("=")[::2] for item in args.spec)
    sink = open(args.json, "a", encoding="utf-8") if args.json else None  # noqa: SIM115
    try:
        for name in names:
            against = overrides.get(f"{name}.{args.against}", level_spec(args.against, name))
            print(f"\n{game_class(name).title}: {n} games per level against {args.against} ({against}), no clock")
            print(f"{'level':<10} {'unit':<12} {'mean':>5} {'p90':>5} {'max':>5} {'long':>6} {'wins':>5} "
                  f"{'won in one turn':>16}  spec")
            for lv in levels:
                spec = overrides.get(f"{name}.{lv}", overrides.get(lv, level_spec(lv, name)))
                started = time.process_time()
                rows = [play(name, lv, spec, against, i, args.seed) for i in range(n)]
                for row in rows:
                    if sink:
                        sink.write(json.dumps(row) + "\n")
                s = summary(rows)
                share = f"{s['one_turn_wins']:>5} of {n:<3} ({s['one_turn_share_of_games']:.0%})"
                spent = time.process_time() - started
                print(f"{lv:<10} {s['unit']:<12} {s['mean']:>5} {s['p90']:>5g} {s['max']:>5g} "
                      f"{s['long_share']:>6.1%} {s['wins']:>5} {share}  {spec}  [{spent:.0f} s]", flush=True)
    finally:
        if sink:
            sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
