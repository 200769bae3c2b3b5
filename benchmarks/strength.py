"""Playing strength of the agents: win rates with 95% Wilson intervals, and MCTS speed.

    nice python benchmarks/strength.py [--games exactly,tohm,tri,exagon] [--n 200] [--procs 2]
        [--pairings heuristic-random,mcts-random,mcts-heuristic] [--spec mcts=mcts:iterations=300]
        [--clairvoyant] [--duplicate] [--sims-seconds 2] [--json results.jsonl] [--seed 0]
    nice python benchmarks/strength.py --games tohm --pairings strong-mcts --n 400 --sims-seconds 0
        --json tohm.jsonl --resume     # a run cut short goes on where it stopped
    nice python benchmarks/strength.py --games exagon --pairings strong-mcts --option matching=lenient
        --n 200 --procs 1 --sims-seconds 0 --json lenient.jsonl --resume   # a game option for every game

Every pairing ``A-B`` plays ``--n`` two-player games per game; A sits in seat 0 in even games
and seat 1 in odd ones (seats rotated). A win scores 1, a shared win 1/2. Chance outcomes
come from a seeded stream of uniform numbers (one per chance node), so game ``i`` of every
pairing sees the same stream.

``clairvoyant`` is an MCTS that is handed that stream: it knows every future die roll, deal
and roll-off in advance (its search resolves chance nodes with the real future outcomes). Its
win rate against an opponent bounds what foresight could achieve where luck caps a rate.

Agent specs accept ``NAME=SPEC`` overrides (``--spec mcts=mcts:iterations=300``); per-game
overrides are ``GAME.NAME=SPEC`` (``--spec exagon.mcts=mcts:iterations=150``). Game options
likewise: ``--option NAME=VALUE`` for every game played, ``--option GAME.NAME=VALUE`` for one
(``--option exagon.matching=lenient``); values are read as on the command line (numbers,
true/false, null). Each game's record in ``--json`` keeps its options, and ``--resume`` keeps only
games played with the same ones.

``strong-mcts`` (issue 15) is the compiled agent against today's ``mcts``, each with its game's
defaults: the strong agent has "mcts strength" when the 95% interval of its score contains 0.5 or
lies above it (its upper end reaches 0.5: not significantly weaker), printed as the bar ``~0.50``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import random
import time
from typing import Any

import ludoteca
from ludoteca.agents import make_agent
from ludoteca.agents.mcts import MCTSAgent
from ludoteca.agents.strong import StrongAgent
from ludoteca.core.chance import outcome_at, random_action, sample_chance
from ludoteca.core.options import parse_option_text

GAMES = ("exactly", "tohm", "tri", "exagon")
PAIRINGS = ("heuristic-random", "mcts-random", "mcts-heuristic")
BAR = {"heuristic-random": 0.65, "mcts-random": 0.80, "mcts-heuristic": 0.55}
NOT_WEAKER = {"strong-mcts"}
"""Pairings whose bar is "not significantly weaker": the interval's upper end reaches 0.5."""


EXTRA_OPTIONS: dict[str, dict[str, Any]] = {}
"""``--option`` values per game (set in :func:`main`, inherited by the worker processes through the
tasks)."""


def game_options(name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    opts: dict[str, Any] = {"players": 2}
    if name == "exagon":
        opts["clock"] = None
    opts.update(EXTRA_OPTIONS.get(name, {}) if extra is None else extra)
    return opts


def parse_game_options(items: list[str], games: list[str]) -> dict[str, dict[str, Any]]:
    """``NAME=VALUE`` (every game) and ``GAME.NAME=VALUE`` (one game) -> the options of each game."""
    out: dict[str, dict[str, Any]] = {g: {} for g in games}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option {item!r}: write NAME=VALUE or GAME.NAME=VALUE")
        game, dot, name = key.partition(".")
        targets = [game] if dot else games
        for g in targets:
            out.setdefault(g, {})[name if dot else key] = parse_option_text(value)
    for g, opts in out.items():
        ludoteca.load_game(g, **game_options(g, opts))  # a bad option stops here, with the game's message
    return out


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (shared wins count half)."""
    if n == 0:
        return 0.0, 1.0
    p = score / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


class Stream:
    """The uniform numbers deciding the chance nodes of one game, generated on demand."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.values: list[float] = []

    def __getitem__(self, i: int) -> float:
        while len(self.values) <= i:
            self.values.append(self.rng.random())
        return self.values[i]


def build_agent(spec: str, seed: int, game: str, stream: Stream, pos: list[int]) -> Any:
    if spec.startswith("clairvoyant"):
        rest = spec[len("clairvoyant"):]
        agent = make_agent("mcts" + rest, seed=seed, game=game)
        assert isinstance(agent, MCTSAgent)
        agent.future = lambda k: stream[pos[0] + k]
        return agent
    return make_agent(spec, seed=seed, game=game)


def play_one(task: tuple[str, str, str, int, bool, dict[str, Any], int]) -> dict[str, Any]:
    """Game ``i`` of ``a`` against ``b``; returns a's score and the time per move of each.
    With ``duplicate``, games ``2k`` and ``2k + 1`` share their chance stream (same deal,
    same dice) with the seats swapped. ``extra``: the ``--option`` values of the game; ``seed``: the
    run's master seed (``--seed``: 0 plays the same games as before it existed)."""
    name, a, b, i, duplicate, extra, seed = task
    game = ludoteca.load_game(name, **game_options(name, extra))
    stream = Stream(1_000_003 * (i // 2 if duplicate else i) + 17 + 999_999_937 * seed)
    pos = [0]
    seats = [a, b] if i % 2 == 0 else [b, a]
    agents = [build_agent(seats[k], 7919 * i + k + 104_729 * seed, name, stream, pos) for k in range(2)]
    state = game.new_initial_state()
    times: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    while not state.is_terminal():
        if state.is_chance_node():
            action = outcome_at(state.chance_outcomes(), stream[pos[0]])
            pos[0] += 1
        else:
            p = state.current_player()
            t0 = time.perf_counter()
            c0 = time.process_time()
            action = agents[p].step(state)
            times[p].append(time.perf_counter() - t0)
            cpu[p].append(time.process_time() - c0)
        state.apply_action(action)
    ret = state.returns()
    sa = 0 if i % 2 == 0 else 1
    return {
        "game": name, "a": a, "b": b, "i": i, "seed": seed, "score": ret[sa],
        "a_moves": len(times[sa]), "a_time": sum(times[sa]), "a_max": max(times[sa], default=0.0),
        "a_cpu_max": max(cpu[sa], default=0.0), "a_cpu": sum(cpu[sa]), "b_cpu": sum(cpu[1 - sa]),
        "b_moves": len(times[1 - sa]), "b_time": sum(times[1 - sa]), "b_max": max(times[1 - sa], default=0.0),
        "turns": state.to_json().get("turn"), **({"options": extra} if extra else {}),
    }


def sims_per_second(name: str, spec: str, seconds: float, seed: int = 0) -> dict[str, Any]:
    """Simulations per second of ``spec`` on decision positions from random games."""
    game = ludoteca.load_game(name, **game_options(name))
    rng = random.Random(seed)
    agent = make_agent(spec, seed=seed, game=name)
    assert isinstance(agent, MCTSAgent)
    iters = 0
    spent = 0.0
    positions = 0
    while spent < seconds:
        state = game.new_initial_state()
        depth = rng.randrange(5, 60)
        while not state.is_terminal() and depth > 0:
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                depth -= 1
        while not state.is_terminal() and (state.is_chance_node() or len(state.legal_actions()) < 2):
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                state.apply_action(state.legal_actions()[0])
        if state.is_terminal():
            continue
        agent.step(state)
        iters += agent.last_iterations
        spent += agent.last_seconds
        positions += 1
    return {"game": name, "spec": spec, "positions": positions, "simulations": iters,
            "seconds": round(spent, 2), "sims_per_s": round(iters / spent) if spent else 0}


def cpu_per_move(name: str, specs: list[str], positions: int = 12, seed: int = 5) -> dict[str, float]:
    """CPU seconds per move of each spec on the same ``positions`` decision positions of random
    games (side by side in one process: ratios hold on a loaded machine)."""
    game = ludoteca.load_game(name, **game_options(name))
    rng = random.Random(seed)
    found: list[Any] = []
    while len(found) < positions:
        state = game.new_initial_state()
        for _ in range(rng.randrange(10, 80)):
            if state.is_terminal():
                break
            state.apply_action(sample_chance(state, rng) if state.is_chance_node()
                               else rng.choice(state.legal_actions()))
        while not state.is_terminal() and (state.is_chance_node() or len(state.legal_actions()) < 2):
            state.apply_action(sample_chance(state, rng) if state.is_chance_node() else state.legal_actions()[0])
        if not state.is_terminal():
            found.append(state)
    out = {}
    for spec in specs:
        agent = make_agent(spec, seed=1, game=name)
        start = time.process_time()
        for state in found:
            agent.step(state)
        out[spec] = (time.process_time() - start) / positions
    return out


def resolved_mcts(name: str, spec: str) -> str:
    """The spec with the per-game defaults written out (for the report)."""
    agent = make_agent(spec.replace("clairvoyant", "mcts"), seed=0, game=name)
    if isinstance(agent, StrongAgent):
        game = ludoteca.load_game(name, **game_options(name))
        settings = agent.settings(game)
        where = "compiled" if agent.compiled_search(game) is not None else "Python mcts fallback"
        return f"strong:iterations={settings['iterations']}:c={settings['c']:g}:cap={settings['cap']} ({where})"
    if not isinstance(agent, MCTSAgent):
        return spec
    settings = agent.settings(ludoteca.load_game(name, **game_options(name)))
    parts = [spec.split(":")[0]]
    if settings["iterations"] is not None:
        parts.append(f"iterations={settings['iterations']}")
    if settings["seconds"] is not None:
        parts.append(f"seconds={settings['seconds']:g}")
    parts.append(f"c={settings['c']:g}")
    parts.append(f"cap={settings['cap']}")
    parts.append(f"rollout={settings['rollout']}")
    parts.append(f"prune={settings['prune']}")
    return ":".join(parts)


def hidden_choices(name: str, n: int, seed: int = 2024) -> list[Any]:
    """The first ``n`` decisions of seeded heuristic games (two players) where the seat to move cannot
    see everything (``state.worlds(seat)`` is not None: TRI's card choices) and has a choice."""
    game = ludoteca.load_game(name, **game_options(name))
    rng = random.Random(seed)
    agents = [make_agent("heuristic", seed=11 + k) for k in range(2)]
    out: list[Any] = []
    games = 0
    while len(out) < n and games < 10 * n + 10:
        games += 1
        state = game.new_initial_state()
        while not state.is_terminal() and len(out) < n:
            if state.is_chance_node():
                state.apply_action(random_action(state, rng))
                continue
            p = state.current_player()
            if state.worlds(p) is not None and len(state.legal_actions()) > 1:
                out.append(state.clone())
            state.apply_action(agents[p].step(state))
    return out


def agreement(name: str, n: int, reference: int, specs: list[str], seeds: int, cache: str | None) -> None:
    """How often each spec's choice at ``n`` hidden choices agrees with a ``reference``-iteration
    ``mcts`` (the game's tuned settings otherwise), each spec with ``seeds`` seeds; the reference's
    choices are kept in ``cache`` (JSON) when given."""
    positions = hidden_choices(name, n)
    if not positions:
        print(json.dumps({"game": name, "agreement": "no position hides anything from the seat to move"}))
        return
    key = {"game": name, "n": len(positions), "iterations": reference, "options": EXTRA_OPTIONS.get(name, {})}
    ref: list[Any] | None = None
    if cache and os.path.exists(cache):
        with open(cache) as f:
            stored = json.load(f)
        if {k: stored.get(k) for k in key} == key:
            ref = stored["actions"]
    if ref is None:
        start = time.process_time()
        ref = [make_agent(f"mcts:iterations={reference}", seed=1000 + i, game=name).step(s)
               for i, s in enumerate(positions)]
        print(f"# reference: {time.process_time() - start:.0f} CPU-s", flush=True)
        if cache:
            with open(cache, "w") as f:
                json.dump({**key, "actions": ref}, f)
    for spec in specs:
        start = time.process_time()
        agree = 0
        for k in range(seeds):
            for i, s in enumerate(positions):
                agree += make_agent(spec, seed=7919 * (k + 1) + i, game=name).step(s) == ref[i]
        cpu = (time.process_time() - start) / (len(positions) * seeds)
        print(json.dumps({"game": name, "spec": spec, "positions": len(positions), "seeds": seeds,
                          "agree_mean": round(agree / seeds, 1), "cpu_ms_per_choice": round(1000 * cpu, 2)}),
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="comma-separated games to play (default: every game: %(default)s)")
    parser.add_argument("--n", type=int, default=200, help="games per pairing and game (default %(default)s)")
    parser.add_argument("--procs", type=int, default=2, help="processes playing games at once (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0,
                        help="master seed of the chance streams and the agents (default 0); another seed plays "
                             "other games, to check a result")
    parser.add_argument("--pairings", default=",".join(PAIRINGS),
                        help="comma-separated A-B pairings, A and B agent names or --spec names "
                             "(default %(default)s)")
    parser.add_argument("--spec", action="append", default=[], help="NAME=SPEC or GAME.NAME=SPEC")
    parser.add_argument("--option", action="append", default=[],
                        help="a game option, NAME=VALUE (every game) or GAME.NAME=VALUE (one game)")
    parser.add_argument("--clairvoyant", action="store_true",
                        help="also play clairvoyant-random and clairvoyant-heuristic")
    parser.add_argument("--sims-seconds", type=float, default=2.0, help="0 to skip the speed test")
    parser.add_argument("--duplicate", action="store_true",
                        help="games 2k and 2k+1 share their chance stream, seats swapped")
    parser.add_argument("--json", default=None, help="append every game's result to this JSONL file")
    parser.add_argument("--resume", action="store_true",
                        help="keep the games already in --json (same game, specs and index) and play only the others")
    parser.add_argument("--agreement", type=int, default=0, metavar="N",
                        help="instead of games: at the first N choices of heuristic games where the seat to move "
                             "cannot see everything, how often each --agree spec agrees with a --reference mcts")
    parser.add_argument("--agree", default="heuristic,mcts,strong",
                        help="comma-separated agent specs for --agreement (default %(default)s)")
    parser.add_argument("--reference", type=int, default=4000,
                        help="the reference mcts's iterations for --agreement (default %(default)s)")
    parser.add_argument("--agree-seeds", type=int, default=2,
                        help="seeds per spec for --agreement (default %(default)s)")
    parser.add_argument("--reference-cache", default=None, help="JSON file keeping the reference's choices")
    args = parser.parse_args()
    if args.agreement:
        games = [g for g in args.games.split(",") if g]
        EXTRA_OPTIONS.update(parse_game_options(args.option, games))
        for g in games:
            agreement(g, args.agreement, args.reference, [x for x in args.agree.split(",") if x], args.agree_seeds,
                      args.reference_cache)
        return
    if args.resume and not args.json:
        parser.error("--resume needs --json FILE")
    games = [g for g in args.games.split(",") if g]
    EXTRA_OPTIONS.update(parse_game_options(args.option, games))
    if any(EXTRA_OPTIONS.values()):
        print(f"# options: {json.dumps({g: o for g, o in EXTRA_OPTIONS.items() if o}, sort_keys=True)}", flush=True)
    pairings = [p for p in args.pairings.split(",") if p]
    if args.clairvoyant:
        pairings += ["clairvoyant-random", "clairvoyant-heuristic"]
    overrides: dict[str, str] = {}
    for item in args.spec:
        key, _, value = item.partition("=")
        overrides[key] = value

    def spec_for(game: str, name: str) -> str:
        return overrides.get(f"{game}.{name}", overrides.get(name, name))

    print(f"# seed {args.seed}; specs: " + "; ".join(f"{g}: {spec_for(g, 'mcts')}, {spec_for(g, 'strong')}"
                                                    for g in games), flush=True)
    if any(p.startswith("strong-") for p in pairings):
        for g in games:
            cpu = cpu_per_move(g, [spec_for(g, "mcts"), spec_for(g, "strong")])
            print(json.dumps({"game": g, "cpu_s_per_move": {k: round(v, 5) for k, v in cpu.items()}}), flush=True)
    if args.sims_seconds > 0:
        for g in games:
            print(json.dumps(sims_per_second(g, spec_for(g, "mcts"), args.sims_seconds)), flush=True)
    results: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    kept: set[tuple[str, str, str, int]] = set()
    if args.resume and os.path.exists(args.json):
        with open(args.json) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    key4 = (r["game"], r["a"], r["b"], r["i"])
                    same_options = r.get("options", {}) == EXTRA_OPTIONS.get(r["game"], {})
                    same_seed = r.get("seed", 0) == args.seed
                    if r["i"] < args.n and key4 not in kept and same_options and same_seed:
                        kept.add(key4)
                        results.setdefault((r["game"], r["a"], r["b"]), []).append(r)
        print(f"# resumed: {len(kept)} games already in {args.json}", flush=True)
    tasks = []
    for g in games:
        for pairing in pairings:
            a, b = pairing.split("-")
            for i in range(args.n):
                if (g, spec_for(g, a), spec_for(g, b), i) not in kept:
                    tasks.append((g, spec_for(g, a), spec_for(g, b), i, args.duplicate, EXTRA_OPTIONS.get(g, {}),
                                  args.seed))
    _load()  # remember the load average at the start
    out = open(args.json, "a") if args.json else None  # noqa: SIM115
    start = time.perf_counter()
    with mp.Pool(args.procs) as pool:
        for r in pool.imap_unordered(play_one, tasks, chunksize=1):
            results.setdefault((r["game"], r["a"], r["b"]), []).append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
            done = len(results[(r["game"], r["a"], r["b"])])
            if done == args.n:
                print(json.dumps(summary(r["game"], r["a"], r["b"], results[(r["game"], r["a"], r["b"])])),
                      flush=True)
    if out:
        out.close()
    print(f"# total {time.perf_counter() - start:.0f} s; load average {_load()} at the start, "
          f"{_load(now=True)} at the end ({os.cpu_count()} CPUs)", flush=True)
    print()
    print("| game | A | B | games | A's score | 95% CI | bar | A moves timed | A s/move (mean, max wall, max CPU) |")
    print("| --- | --- | --- | ---: | ---: | --- | --- | ---: | --- |")
    for g in games:
        for pairing in pairings:
            a, b = pairing.split("-")
            key = (g, spec_for(g, a), spec_for(g, b))
            if key not in results:
                continue
            s = summary(*key, results[key])
            bar = BAR.get(pairing)
            shown_bar = "" if bar is None else f">= {bar:.2f}"
            if pairing in NOT_WEAKER:
                shown_bar = f"~0.50 ({'met' if s['hi'] >= 0.5 else 'NOT met'})"
            shown_a = resolved_mcts(g, key[1]) if 'mcts' in a or a in ('clairvoyant', 'strong') else key[1]
            shown_b = resolved_mcts(g, key[2]) if b == 'mcts' else key[2]
            print(f"| {g} | {shown_a} | {shown_b} | {s['n']} | {s['rate']:.3f} | [{s['lo']:.3f}, {s['hi']:.3f}] "
                  f"| {shown_bar} | {s['a_moves']} | {s['a_mean']:.4f}, {s['a_max']:.3f}, "
                  f"{s['a_cpu_max']:.3f} |")


_START_LOAD: list[str] = []


def _load(now: bool = False) -> str:
    """The 1-minute load average (the first call's value unless ``now``): CPU times per move are
    only comparable between runs on machines loaded alike."""
    current = f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "?"
    if not _START_LOAD:
        _START_LOAD.append(current)
    return current if now else _START_LOAD[0]


def summary(game: str, a: str, b: str, rs: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rs)
    score = sum(r["score"] for r in rs)
    lo, hi = wilson(score, n)
    moves = sum(r["a_moves"] for r in rs)
    return {
        "game": game, "a": a, "b": b, "n": n, "score": score, "rate": round(score / n, 4),
        "lo": round(lo, 4), "hi": round(hi, 4),
        "a_mean": sum(r["a_time"] for r in rs) / max(1, moves), "a_max": max(r["a_max"] for r in rs),
        "a_cpu_max": max(r.get("a_cpu_max", 0.0) for r in rs), "a_moves": moves,
    }


if __name__ == "__main__":
    main()
