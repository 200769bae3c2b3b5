"""The AI ladder: every level's rating on the openskill scale, measured in arena games.

    nice .venv/bin/python benchmarks/ladder.py [GAME ...] [--games 20] [--procs 2] [--seed 1]
        [--pairings beginner-easy,...] [--spec LEVEL=SPEC] [--out DIR] [--json results.jsonl]

For each game (default: every game), every pairing ``A-B`` of levels (default :data:`PAIRINGS`:
each pair of neighbouring levels and three wider ones) plays ``--games`` two-player games,
rounded up to an even number: A sits in seat 0 in even games and in seat 1 in odd ones (seats
rotated). The chance outcomes of game ``i`` come from a seeded stream of uniform numbers shared
by every pairing, and every agent is seeded from ``(seed, i, seat)``: with the levels' iteration
budgets the run is reproducible whatever ``--procs``.

Rating (``ludoteca.core.rating``: openskill Plackett-Luce, one team per seat, a shared win is a
tie): every level starts at openskill's default; the games are rated one after the other in
:data:`ORDERS` seeded random orders and each level's mu and sigma are the means over the orders
(a single sequential pass depends on the order of the games). The scale is **anchored at
``medium`` = 1,200** (:data:`ANCHOR`): every mu is shifted so that the ``medium`` level (the
game's heuristic player) displays 1,200, and the other levels are measured against it. The 95%
interval of each level is a bootstrap (``--bootstrap`` resamples of the games, drawn within each
pairing, each rated in one random order and anchored; percentiles 2.5 and 97.5), so ``medium``'s
own interval is a point by construction.

Writes ``src/ludoteca/games/<game>/ladder.json`` (``--out DIR``: ``DIR/<game>/ladder.json``)::

    {"players": 2, "games": N, "measured": "2026-11-24", "command": "...",
     "anchor": {"level": "medium", "display": 1200},
     "levels": {"beginner": {"spec": ..., "mu": ..., "sigma": ..., "display": ..., "low": ...,
                             "high": ..., "games": ..., "mean_s_per_move": ..., "max_s_per_move": ...}, ...},
     "pairings": [{"a": "beginner", "b": "easy", "games": 20, "a_score": 0.1}, ...]}
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing as mp
import random
import shlex
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import ludoteca
from ludoteca.agents import make_agent
from ludoteca.agents.levels import LEVELS
from ludoteca.agents.levels import spec as level_spec
from ludoteca.core.chance import outcome_at
from ludoteca.core.rating import MU, Rating, display, rate
from ludoteca.registry import game_class
from ludoteca.registry import games as game_names

PAIRINGS: tuple[str, ...] = (
    "beginner-easy", "easy-medium", "medium-hard", "hard-expert",
    "beginner-medium", "easy-hard", "medium-expert",
)
"""Neighbouring levels, and three pairs one level apart."""
ANCHOR: tuple[str, int] = ("medium", 1200)
"""The level whose displayed rating is fixed, and its rating."""
ORDERS = 16
"""Random orders of the games averaged for the point estimate."""
GAMES_DIR = Path(__file__).resolve().parent.parent / "src" / "ludoteca" / "games"


def game_options(name: str) -> dict[str, Any]:
    """Two players, and no clock (a clock would make the games depend on the machine's speed)."""
    opts: dict[str, Any] = {"players": 2}
    clock = game_class(name).clock_option
    if clock is not None:
        opts[clock] = None
    return opts


class Stream:
    """The uniform numbers deciding the chance nodes of one game, generated on demand."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.values: list[float] = []

    def __getitem__(self, i: int) -> float:
        while len(self.values) <= i:
            self.values.append(self.rng.random())
        return self.values[i]


def play_one(task: tuple[str, str, str, str, str, int, int]) -> dict[str, Any]:
    """Game ``i`` of level ``a`` (spec ``sa``) against ``b`` (``sb``): the returns of a and b and
    their time per move."""
    name, a, b, sa, sb, i, seed = task
    game = ludoteca.load_game(name, **game_options(name))
    stream = Stream(1_000_003 * i + 7919 * seed + 17)
    seats = [(a, sa), (b, sb)] if i % 2 == 0 else [(b, sb), (a, sa)]
    agents = [make_agent(spec, seed=(seed * 1_000_003 + 7919 * i + k) % 2**63, game=name)
              for k, (_, spec) in enumerate(seats)]
    state = game.new_initial_state()
    times: list[list[float]] = [[], []]
    pos = 0
    while not state.is_terminal():
        if state.is_chance_node():
            action = outcome_at(state.chance_outcomes(), stream[pos])
            pos += 1
        else:
            p = state.current_player()
            t0 = time.process_time()
            action = agents[p].step(state)
            times[p].append(time.process_time() - t0)
        state.apply_action(action)
    ret = state.returns()
    ka = 0 if i % 2 == 0 else 1
    return {"game": name, "a": a, "b": b, "sa": sa, "sb": sb, "i": i, "seed": seed, "returns": [ret[ka], ret[1 - ka]],
            "a_moves": len(times[ka]), "a_time": sum(times[ka]), "a_max": max(times[ka], default=0.0),
            "b_moves": len(times[1 - ka]), "b_time": sum(times[1 - ka]), "b_max": max(times[1 - ka], default=0.0)}


def rate_games(levels: list[str], games: list[tuple[str, str, list[float]]], rng: random.Random) -> dict[str, Rating]:
    """Every level's rating after the games ``(a, b, returns)`` in a random order (from ``rng``)."""
    ratings = {level: Rating() for level in levels}
    order = list(range(len(games)))
    rng.shuffle(order)
    for k in order:
        a, b, returns = games[k]
        ra, rb = rate([ratings[a], ratings[b]], returns)
        ratings[a], ratings[b] = ra, rb
    return ratings


def anchored(ratings: dict[str, Rating]) -> dict[str, float]:
    """Each level's mu shifted so that the anchor level shows :data:`ANCHOR`'s rating (without the
    anchor level in the run: unshifted)."""
    level, shown = ANCHOR
    if level not in ratings:
        return {k: r.mu for k, r in ratings.items()}
    target = MU + (shown - display(MU)) / 30.0
    shift = target - ratings[level].mu
    return {k: r.mu + shift for k, r in ratings.items()}


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def ladder_of(levels: list[str], rows: list[dict[str, Any]], seed: int, bootstrap: int) -> dict[str, Any]:
    """The ratings, intervals and pairing scores of one game's rows."""
    games = [(r["a"], r["b"], list(r["returns"])) for r in sorted(rows, key=lambda r: (r["a"], r["b"], r["i"]))]
    rng = random.Random(seed)
    mus: dict[str, list[float]] = defaultdict(list)
    sigmas: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for a, b, _ in games:
        counts[a] += 1
        counts[b] += 1
    for _ in range(ORDERS):
        ratings = rate_games(levels, games, rng)
        for level, mu in anchored(ratings).items():
            mus[level].append(mu)
            sigmas[level].append(ratings[level].sigma)
    by_pairing: dict[tuple[str, str], list[tuple[str, str, list[float]]]] = defaultdict(list)
    for g in games:
        by_pairing[(g[0], g[1])].append(g)
    boot: dict[str, list[float]] = defaultdict(list)
    for _ in range(bootstrap):
        sample = [group[rng.randrange(len(group))] for group in by_pairing.values() for _ in group]
        for level, mu in anchored(rate_games(levels, sample, rng)).items():
            boot[level].append(mu)
    out: dict[str, Any] = {}
    for level in levels:
        mu = sum(mus[level]) / len(mus[level])
        sigma = sum(sigmas[level]) / len(sigmas[level])
        entry: dict[str, Any] = {"mu": round(mu, 3), "sigma": round(sigma, 3), "display": display(mu),
                                 "low": display(mu), "high": display(mu), "games": counts[level]}
        if boot[level]:
            entry["low"] = min(display(percentile(boot[level], 0.025)), entry["display"])
            entry["high"] = max(display(percentile(boot[level], 0.975)), entry["display"])
        out[level] = entry
    return out


def timing(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    moves: dict[str, int] = defaultdict(int)
    spent: dict[str, float] = defaultdict(float)
    worst: dict[str, float] = defaultdict(float)
    for r in rows:
        for side in ("a", "b"):
            level = r[side]
            moves[level] += r[f"{side}_moves"]
            spent[level] += r[f"{side}_time"]
            worst[level] = max(worst[level], r[f"{side}_max"])
    return {level: {"mean_s_per_move": round(spent[level] / moves[level], 4) if moves[level] else 0.0,
                    "max_s_per_move": round(worst[level], 3)} for level in moves}


def pairing_scores(pairings: list[tuple[str, str]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for a, b in pairings:
        mine = [r for r in rows if r["a"] == a and r["b"] == b]
        score = sum(r["returns"][0] for r in mine)
        out.append({"a": a, "b": b, "games": len(mine), "a_score": round(score / len(mine), 3) if mine else None})
    return out


def write_ladder(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def previous(name: str) -> dict[str, Any] | None:
    """The ``pace`` of the game's shipped ladder.json (ludoteca.agents.pace): the levels' caps are an
    input of the measurement, not a result, so a new ladder.json keeps them."""
    try:
        data = json.loads((GAMES_DIR / name / "ladder.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    pace = data.get("pace") if isinstance(data, dict) else None
    return pace if isinstance(pace, dict) else None


def print_table(name: str, data: dict[str, Any]) -> None:
    print(f"\n{game_class(name).title}: {data['games']} games, anchor {ANCHOR[0]} = {ANCHOR[1]}")
    print(f"{'level':<10} {'rating':>7} {'95% interval':>14} {'mu':>8} {'sigma':>6} {'games':>6} "
          f"{'s/move':>7} {'max s':>6}  spec")
    for level, e in data["levels"].items():
        print(f"{level:<10} {e['display']:>7} {e['low']:>6}–{e['high']:<7} {e['mu']:>8.2f} {e['sigma']:>6.2f} "
              f"{e['games']:>6} {e.get('mean_s_per_move', 0):>7.3f} {e.get('max_s_per_move', 0):>6.2f}  {e['spec']}")
    for p in data["pairings"]:
        print(f"  {p['a']} vs {p['b']}: {p['a']} scores {p['a_score']} in {p['games']} games")


def print_markdown(name: str, data: dict[str, Any]) -> None:
    """The game's ladder as the Markdown rows of docs/strength.md."""
    title = game_class(name).title
    for level, e in data["levels"].items():
        print(f"| {title} | {level} | `{e['spec']}` | {e['display']:,} | {e['low']:,}–{e['high']:,} | "
              f"{e['games']} | {e.get('mean_s_per_move', 0):.3f} | {e.get('max_s_per_move', 0):.2f} |")
    scores = ", ".join(f"{p['a']}–{p['b']} {p['a_score']:.2f} ({p['games']})" for p in data["pairings"]
                       if p["a_score"] is not None)
    print(f"| {title} | *pairings* | {scores} | | | | | |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="*", help="games to measure (default: every game)")
    parser.add_argument("--games", type=int, default=20, help="games per pairing (rounded up to even)")
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pairings", default=",".join(PAIRINGS))
    parser.add_argument("--spec", action="append", default=[], help="LEVEL=SPEC or GAME.LEVEL=SPEC")
    parser.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples for the intervals")
    parser.add_argument("--extra", action="append", default=[], metavar="AGENT",
                        help="a player beyond the levels, named by its agent spec (e.g. perfect, for TOHM 2p), "
                             "usable in --pairings; write such a ladder with --out, beside the game's own")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write DIR/<game>/ladder.json (default: the game's package)")
    parser.add_argument("--json", default=None,
                        help="append every game's result to this JSONL file (rerun to resume)")
    parser.add_argument("--markdown", action="store_true", help="also print the docs/strength.md rows")
    parser.add_argument("--no-play", action="store_true",
                        help="play nothing: rate the games already in --json (a partial run)")
    args = parser.parse_args(argv)
    names = args.game or game_names()
    for name in names:
        game_class(name)  # ValueError for an unknown game
    if args.games < 1 or args.procs < 1 or args.bootstrap < 0:
        parser.error("--games and --procs must be at least 1, --bootstrap at least 0")
    n = args.games + args.games % 2
    pairings = []
    for item in args.pairings.split(","):
        a, sep, b = item.strip().partition("-")
        players = (*LEVELS, *args.extra)
        if not sep or a not in players or b not in players or a == b:
            parser.error(f"pairing {item!r}: two different levels A-B among {', '.join(players)}")
        pairings.append((a, b))
    overrides: dict[str, str] = {}
    for item in args.spec:
        key, _, value = item.partition("=")
        overrides[key] = value

    def spec_for(game: str, level: str) -> str:
        if level in args.extra:
            return overrides.get(level, level)
        return overrides.get(f"{game}.{level}", overrides.get(level, level_spec(level, game)))

    levels = [lv for lv in (*LEVELS, *args.extra) if any(lv in p for p in pairings)]
    specs = {name: {lv: spec_for(name, lv) for lv in levels} for name in names}
    for name in names:
        for lv in levels:
            make_agent(specs[name][lv], seed=0, game=name)  # a bad spec fails now
    rank = {lv: k for k, lv in enumerate((*LEVELS, *args.extra))}
    tasks = [(name, a, b, specs[name][a], specs[name][b], i, args.seed)
             for name in names for a, b in pairings for i in range(n)]
    order = {name: k for k, name in enumerate(names)}
    # game 0 of every pairing of every game, then game 1 ...: a run stopped early (rated with
    # --no-play) keeps every game and pairing at about the same sample size
    tasks.sort(key=lambda t: (t[5], order[t[0]], -max(rank[t[1]], rank[t[2]])))
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if args.json and Path(args.json).exists():  # resume: reuse the games already played
        wanted = {(t[0], t[1], t[2], t[3], t[4], t[5], t[6]) for t in tasks}
        seen = set()
        for line in Path(args.json).read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                key = (row["game"], row["a"], row["b"], row["sa"], row["sb"], row["i"], row["seed"])
            except (ValueError, KeyError, TypeError):
                continue
            if key in wanted and key not in seen:
                seen.add(key)
                rows[row["game"]].append(row)
        tasks = [t for t in tasks if t not in seen]
        print(f"# resuming: {len(seen)} games already played", file=sys.stderr, flush=True)
    if args.no_play:
        tasks = []
    remaining = {name: sum(1 for t in tasks if t[0] == name) for name in names}
    command = "benchmarks/ladder.py " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    out_dir = Path(args.out) if args.out else GAMES_DIR
    sink = open(args.json, "a", encoding="utf-8") if args.json else None  # noqa: SIM115
    started = time.time()
    done = 0

    def finish(name: str) -> None:
        data: dict[str, Any] = {
            "players": 2, "games": len(rows[name]), "games_per_pairing": n,
            "measured": datetime.date.today().isoformat(), "command": command, "seed": args.seed,
            "anchor": {"level": ANCHOR[0], "display": ANCHOR[1]},
            "levels": ladder_of(levels, rows[name], args.seed, args.bootstrap),
            "pairings": pairing_scores(pairings, rows[name]),
        }
        kept = previous(name)  # the game's own tuning of its levels, kept as it is
        if kept:
            data["pace"] = kept
        times = timing(rows[name])
        for lv, entry in data["levels"].items():
            data["levels"][lv] = {"spec": specs[name][lv], **entry, **times.get(lv, {})}
        path = out_dir / name / "ladder.json"
        write_ladder(path, data)
        print_table(name, data)
        if args.markdown:
            print_markdown(name, data)
        print(f"wrote {path}", flush=True)

    def results() -> Any:
        if args.procs == 1:
            return map(play_one, tasks)
        pool = mp.get_context("spawn").Pool(args.procs)
        return pool.imap_unordered(play_one, tasks)

    for name in names:
        if remaining[name] == 0 and rows[name]:
            finish(name)
    try:
        for row in results():
            done += 1
            rows[row["game"]].append(row)
            if sink:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            if done % 20 == 0:
                print(f"# {done}/{len(tasks)} games, {time.time() - started:.0f} s", file=sys.stderr, flush=True)
            remaining[row["game"]] -= 1
            if remaining[row["game"]] == 0:
                finish(row["game"])
    finally:
        if sink:
            sink.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
