"""The research adapters' cost, side by side with the native engine, in one run (one core).

    python benchmarks/interop.py [--seconds 1] [--games exactly,tri,tohm,exagon] [--players 2]
                                 [--iterations 200] [--moves 3] [--json]

Part 1, steps per second — uniformly random play, the same for every row: the *decisions*
(player actions) per second, chance resolved the same way everywhere:

* ``native``: ``ludoteca`` states directly (``legal_actions``/``apply_action``);
* ``openspiel``: the same loop through the ``pyspiel`` adapter (``ludoteca_<game>``);
* ``pettingzoo``: ``raw_env`` with ``env.last()`` (observation tensor, action mask, infos)
  before each ``step``, the action drawn from ``info["legal_actions"]``; ``pz-noinfo`` is the
  same with ``position_info=False``; ``pz-maskscan`` draws it from the action mask instead
  (``np.flatnonzero(mask.view(bool))``), what a generic masked-RL agent pays.

Part 2, MCTS simulations per second on the same positions and the same budget: ludoteca's
``mcts:iterations=N`` (random rollouts cut at the game's default ``cap``, leaf evaluated by
its heuristic) against OpenSpiel's Python ``MCTSBot`` through the adapter with a
``RandomRolloutEvaluator`` cut at the same length (``max_length=cap``). Both play ``--moves``
decisions of one seeded game; sims/s = simulations / search time. For TRI, OpenSpiel's
``ISMCTSBot`` is measured too (the fair comparison for hidden information: MCTSBot searches
the true state, i.e. it sees the secret card). The bar: ludoteca's MCTS at least as fast as
OpenSpiel's Python MCTS through the adapter (``ok``).

ludoteca's MCTS is used when ``ludoteca.agents.make_agent("mcts")`` is available; otherwise
its rows say ``unavailable``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from typing import Any

import ludoteca
from ludoteca.core.chance import sample_chance

GAMES = ("exactly", "tri", "tohm", "exagon")


def _options(name: str, players: int) -> dict[str, Any]:
    opts: dict[str, Any] = {"players": players}
    if name == "exagon":
        opts["clock"] = None
    return opts


# --- part 1: steps per second -------------------------------------------------------------

def native_steps(name: str, players: int, seconds: float, seed: int = 0) -> float:
    game = ludoteca.load_game(name, **_options(name, players))
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
    return decisions / (time.perf_counter() - start)


def openspiel_steps(name: str, players: int, seconds: float, seed: int = 0) -> float:
    from ludoteca.interop import openspiel

    game = openspiel.load(name, players=players)
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                x, acc, action = rng.random(), 0.0, outcomes[-1][0]
                for a, p in outcomes:
                    acc += p
                    if x < acc:
                        action = a
                        break
                state.apply_action(action)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
    return decisions / (time.perf_counter() - start)


def pettingzoo_steps(name: str, players: int, seconds: float, seed: int = 0, position_info: bool = True,
                     scan_mask: bool = False) -> float:
    import numpy as np

    from ludoteca.interop import pettingzoo

    env = pettingzoo.raw_env(name, players=players, position_info=position_info)
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    episode = 0
    while time.perf_counter() < deadline:
        env.reset(seed=seed + episode)
        episode += 1
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"].view(bool)) if scan_mask else info["legal_actions"]
            env.step(int(legal[rng.randrange(len(legal))]))
            decisions += 1
    return decisions / (time.perf_counter() - start)


# --- part 2: MCTS simulations per second ----------------------------------------------------

def _positions(name: str, players: int, moves: int, seed: int) -> list[list[int]]:
    """Action histories of the first ``moves`` decision positions of a seeded random game."""
    game = ludoteca.load_game(name, **_options(name, players))
    rng = random.Random(seed)
    state = game.new_initial_state()
    history: list[int] = []
    out: list[list[int]] = []
    while not state.is_terminal() and len(out) < moves:
        if state.is_chance_node():
            a = sample_chance(state, rng)
        else:
            legal = state.legal_actions()
            if len(legal) > 1:
                out.append(list(history))
            a = legal[rng.randrange(len(legal))]
        state.apply_action(a)
        history.append(a)
    return out


def ludoteca_mcts(name: str, players: int, iterations: int, histories: list[list[int]], seed: int) -> dict:
    from ludoteca.agents import make_agent
    from ludoteca.agents.mcts import DEFAULT_CAP

    cap = DEFAULT_CAP.get(name, 100)
    agent = make_agent(f"mcts:iterations={iterations}:cap={cap}", seed=seed, game=name)
    game = ludoteca.load_game(name, **_options(name, players))
    sims = 0
    spent = 0.0
    for history in histories:
        state = game.new_initial_state()
        for a in history:
            state.apply_action(a)
        start = time.perf_counter()
        agent.step(state)
        spent += time.perf_counter() - start
        sims += getattr(agent, "last_iterations", iterations)
    return {"sims": sims, "seconds": spent, "cap": cap}


def openspiel_mcts(name: str, players: int, iterations: int, histories: list[list[int]], seed: int,
                   cap: int, ismcts: bool = False) -> dict:
    import numpy as np
    from open_spiel.python.algorithms import mcts

    from ludoteca.interop import openspiel

    game = openspiel.load(name, players=players)
    rs = np.random.RandomState(seed)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs, max_length=cap)
    if ismcts:
        from open_spiel.python.algorithms import ismcts as os_ismcts

        bot = os_ismcts.ISMCTSBot(game, evaluator, uct_c=1.4, max_simulations=iterations, random_state=rs)
    else:
        bot = mcts.MCTSBot(game, uct_c=1.4, max_simulations=iterations, evaluator=evaluator,
                           solve=False, random_state=rs)
    sims = 0
    spent = 0.0
    for history in histories:
        state = game.new_initial_state()
        for a in history:
            state.apply_action(a)
        start = time.perf_counter()
        bot.step(state)
        spent += time.perf_counter() - start
        sims += iterations
    return {"sims": sims, "seconds": spent}


def _mcts_available() -> str | None:
    try:
        from ludoteca.agents import make_agent

        make_agent("mcts:iterations=1", seed=0)
    except (ImportError, ValueError) as exc:
        return str(exc)
    return None


# --- the run --------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per steps-per-second measure")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=200, help="MCTS simulations per move")
    parser.add_argument("--moves", type=int, default=3, help="searched positions per game")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)

    for name in games:
        native = native_steps(name, args.players, args.seconds, args.seed)
        row = {"part": "steps", "game": name, "players": args.players, "native": round(native)}
        try:
            row["openspiel"] = round(openspiel_steps(name, args.players, args.seconds, args.seed))
        except ImportError as exc:
            row["openspiel"] = f"unavailable: {exc}"
        for key, kwargs in (("pettingzoo", {}), ("pz-noinfo", {"position_info": False}),
                            ("pz-maskscan", {"scan_mask": True})):
            try:
                row[key] = round(pettingzoo_steps(name, args.players, args.seconds, args.seed, **kwargs))
            except ImportError as exc:
                row[key] = f"unavailable: {exc}"
        emit(row)

    missing = _mcts_available()
    for name in games:
        histories = _positions(name, args.players, args.moves, args.seed)
        row = {"part": "mcts", "game": name, "players": args.players, "iterations": args.iterations,
               "positions": len(histories)}
        cap = 60
        row["ludoteca_mcts_sims_per_s"] = f"unavailable: {missing}"
        if missing is None:
            try:
                mine = ludoteca_mcts(name, args.players, args.iterations, histories, args.seed)
            except ImportError as exc:  # e.g. a game's heuristics not written yet
                row["ludoteca_mcts_sims_per_s"] = f"unavailable: {exc}"
            else:
                cap = mine["cap"]
                row["ludoteca_mcts_sims_per_s"] = round(mine["sims"] / mine["seconds"], 1)
        row["rollout_cap"] = cap
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = openspiel_mcts(name, args.players, args.iterations, histories, args.seed, cap)
                row["openspiel_mcts_sims_per_s"] = round(theirs["sims"] / theirs["seconds"], 1)
                if name == "tri":
                    is_ = openspiel_mcts(name, args.players, args.iterations, histories, args.seed, cap,
                                         ismcts=True)
                    row["openspiel_ismcts_sims_per_s"] = round(is_["sims"] / is_["seconds"], 1)
        except ImportError as exc:
            row["openspiel_mcts_sims_per_s"] = f"unavailable: {exc}"
        mine_rate, theirs_rate = row["ludoteca_mcts_sims_per_s"], row["openspiel_mcts_sims_per_s"]
        if isinstance(mine_rate, float) and isinstance(theirs_rate, float):
            row["speedup"] = round(mine_rate / theirs_rate, 2)
            row["ok"] = mine_rate >= theirs_rate
        emit(row)

    if not args.json:
        print(f"Decisions per second, random play, {args.players} players (one core):")
        print(f"{'game':<9}{'native':>10}{'openspiel':>11}{'pettingzoo':>12}{'pz-noinfo':>11}{'pz-maskscan':>13}")
        for r in rows:
            if r["part"] == "steps":
                print(f"{r['game']:<9}{r['native']:>10}{r['openspiel']!s:>11}{r['pettingzoo']!s:>12}"
                      f"{r['pz-noinfo']!s:>11}{r['pz-maskscan']!s:>13}")
        print(f"\nMCTS simulations per second, {args.iterations} simulations per move:")
        print(f"{'game':<9}{'cap':>5}{'ludoteca':>10}{'openspiel':>11}{'os-ismcts':>11}{'speedup':>9}  ok")
        for r in rows:
            if r["part"] == "mcts":
                print(f"{r['game']:<9}{r['rollout_cap']:>5}{r['ludoteca_mcts_sims_per_s']!s:>10}"
                      f"{r['openspiel_mcts_sims_per_s']!s:>11}{r.get('openspiel_ismcts_sims_per_s', '-')!s:>11}"
                      f"{r.get('speedup', '-')!s:>9}  {r.get('ok', '-')}")
    bad = [r for r in rows if r.get("ok") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
