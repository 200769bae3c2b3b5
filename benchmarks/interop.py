"""The research adapters' cost, side by side with the native engine, in one run (one core).

    python benchmarks/interop.py [--seconds 1] [--rounds 5] [--games exactly,tri,tohm,exagon] [--players 2]
                                 [--iterations 200] [--moves 3] [--cap C] [--c 1.4] [--json]

Part 1, steps per second — uniformly random play, the same for every row: the *decisions*
(player actions) per second, chance resolved the same way everywhere:

* ``native``: ``ludoteca`` states directly (``legal_actions``/``apply_action``);
* ``openspiel``: the same loop through the ``pyspiel`` adapter (``ludoteca_<game>``), on the
  game's compiled engine where it is built and the game hides nothing (``core.compiled.compiled_copy``);
  ``os-python`` the same with ``LUDOTECA_ENGINE=python`` (the Python engine);
* ``--reference connect_four`` (the default): the same pyspiel loop on that *native* OpenSpiel
  game, side by side: for each game the reference and the adapter are measured in turn,
  ``--rounds`` times each (``--seconds`` split among the rounds), so that both see the same load;
  ``vs-ref`` is the median of the rounds' openspiel / reference ratios in decisions — the bar, at
  least 1 for TOHM — and ``actions-vs-ref`` the same counting every action the loop applies
  (``os-actions``: chance outcomes too; a native game without chance applies only decisions);
  ``openspiel`` and the reference's figure are the medians of their rounds;
* ``pettingzoo``: ``raw_env`` with ``env.last()`` (observation tensor, action mask, infos)
  before each ``step``, the action drawn from ``info["legal_actions"]``; ``pz-noinfo`` is the
  same with ``position_info=False``; ``pz-maskscan`` draws it from the action mask instead
  (``np.flatnonzero(mask.view(bool))``), what a generic masked-RL agent pays.

Part 2, MCTS simulations per second, like with like: both searches run the same number of
simulations (``--iterations``) from the same positions (the first ``--moves`` decisions of
one seeded game), with

* the same rollout policy: uniformly random actions, chance outcomes drawn with their
  probabilities (ludoteca: ``rollout=random``; OpenSpiel: a random-rollout evaluator);
* the same rollout cap: the game's default ``cap`` (``game.agent_defaults["mcts"]``),
  counted in actions, chance included, on both sides (``--cap`` overrides it);
* the same leaf evaluation: a rollout that reaches the end scores the game's returns; one
  cut at the cap scores the game's evaluation function (``ludoteca.agents.heuristics``) —
  OpenSpiel's own ``RandomRolloutEvaluator`` would score a cut rollout with the returns of an
  unfinished game, so :class:`CutRolloutEvaluator` gives it ludoteca's evaluation instead;
* no pruning (ludoteca: ``prune=0``, every legal action is a child, as in ``MCTSBot``) and
  the same UCT constant (``--c``, default 1.4, OpenSpiel's usual value).

ludoteca's ``mcts:iterations=N:cap=C:rollout=random:prune=0:c=X`` against OpenSpiel's
Python ``MCTSBot`` through the adapter; sims/s = simulations / search time. For TRI,
OpenSpiel's ``ISMCTSBot`` is measured too (the fair comparison for hidden information:
MCTSBot searches the true state, i.e. it sees the secret card, while ludoteca's ``mcts``
determinizes from the observation, like ISMCTSBot). The bar: ludoteca's MCTS at least as fast
as OpenSpiel's Python MCTS through the adapter (``ok``).

For reference only, the ``tuned`` column is ludoteca's ``mcts`` as the agents play it (the
game's default rollout policy, pruning and UCT constant, same iterations): its rollouts and
tree differ, so it is not compared with OpenSpiel's.

Times are CPU seconds of this process (``time.process_time``), not wall time, so that other
work on a shared machine skews the figures less.

ludoteca's MCTS is used when ``ludoteca.agents.make_agent("mcts")`` is available; otherwise
its rows say ``unavailable``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import warnings
from typing import Any

import ludoteca
from ludoteca.core.chance import sample_chance

GAMES = ("exactly", "tri", "tohm", "exagon")

_clock = time.process_time
"""Every figure is per CPU second of this process (``--seconds`` too): on a machine shared with
other work, wall-clock rates swing with the load (and the two sides of a comparison, measured
one after the other, would see different loads); CPU time does much less."""


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
    start = _clock()
    deadline = start + seconds
    while _clock() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sample_chance(state, rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
                decisions += 1
    return decisions / (_clock() - start)


def openspiel_steps(name: str, players: int, seconds: float, seed: int = 0,
                    engine: str | None = None) -> tuple[float, float]:
    """Decisions and actions (chance too) per CPU second through the adapter; ``engine="python"``:
    with LUDOTECA_ENGINE=python."""
    from ludoteca.interop import openspiel

    if engine is None:
        return spiel_rates(openspiel.load(name, players=players), seconds, seed)
    saved = os.environ.get("LUDOTECA_ENGINE")
    os.environ["LUDOTECA_ENGINE"] = engine
    try:  # the engine is chosen with the game's first position
        return spiel_rates(openspiel.load(name, players=players), seconds, seed)
    finally:
        if saved is None:
            del os.environ["LUDOTECA_ENGINE"]
        else:
            os.environ["LUDOTECA_ENGINE"] = saved


def reference_steps(short_name: str, seconds: float, seed: int = 0) -> float:
    """Decisions per CPU second of a native OpenSpiel game (C++) through the same pyspiel loop."""
    import pyspiel

    return spiel_steps(pyspiel.load_game(short_name), seconds, seed)


def side_by_side(name: str, players: int, reference: str, seconds: float, rounds: int,
                 seed: int = 0) -> dict[str, Any]:
    """The adapter's rates and the native ``reference`` game's, measured in turn ``rounds`` times
    (``seconds`` split among them): medians of each, and the median of the rounds' ratios (decisions
    and actions over the reference's decisions, which are its actions: it has no chance)."""
    import pyspiel

    from ludoteca.interop import openspiel

    ours, native = openspiel.load(name, players=players), pyspiel.load_game(reference)
    share = seconds / rounds
    spiel_rates(ours, min(share, 0.1), seed)  # warm-up (first positions, caches) of both sides
    spiel_rates(native, min(share, 0.1), seed)
    refs, decisions, actions = [], [], []
    for r in range(rounds):
        refs.append(spiel_steps(native, share, seed + r))
        d, a = spiel_rates(ours, share, seed + r)
        decisions.append(d)
        actions.append(a)
    return {"reference": statistics.median(refs), "openspiel": statistics.median(decisions),
            "os-actions": statistics.median(actions),
            "vs-ref": statistics.median(d / f for d, f in zip(decisions, refs, strict=True)),
            "actions-vs-ref": statistics.median(a / f for a, f in zip(actions, refs, strict=True)),
            "vs-ref-range": (min(d / f for d, f in zip(decisions, refs, strict=True)),
                             max(d / f for d, f in zip(decisions, refs, strict=True)))}


def spiel_steps(game: Any, seconds: float, seed: int = 0) -> float:
    """Uniformly random play through the pyspiel API (chance by its probabilities): decisions per
    CPU second."""
    return spiel_rates(game, seconds, seed)[0]


def spiel_rates(game: Any, seconds: float, seed: int = 0) -> tuple[float, float]:
    """:func:`spiel_steps` and the actions (chance outcomes too) per CPU second of the same loop."""
    rng = random.Random(seed)
    decisions = actions = 0
    start = _clock()
    deadline = start + seconds
    while _clock() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            actions += 1
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
    spent = _clock() - start
    return decisions / spent, actions / spent


def pettingzoo_steps(name: str, players: int, seconds: float, seed: int = 0, position_info: bool = True,
                     scan_mask: bool = False) -> float:
    import numpy as np

    from ludoteca.interop import pettingzoo

    env = pettingzoo.raw_env(name, players=players, position_info=position_info)
    rng = random.Random(seed)
    decisions = 0
    start = _clock()
    deadline = start + seconds
    episode = 0
    while _clock() < deadline:
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
    return decisions / (_clock() - start)


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


def _warm_up(new_state: Any, histories: list[list[int]], step: Any) -> None:
    """One untimed search of the first position, so that neither side's figure includes the
    one-time costs of a first call (imports, caches)."""
    if histories:
        state = new_state()
        for a in histories[0]:
            state.apply_action(a)
        step(state)


def like_for_like_spec(iterations: int, cap: int, c: float) -> str:
    """ludoteca's MCTS configured as OpenSpiel's MCTSBot with a random-rollout evaluator."""
    return f"mcts:iterations={iterations}:cap={cap}:rollout=random:prune=0:c={c:g}"


def ludoteca_mcts(name: str, players: int, spec: str, histories: list[list[int]], seed: int) -> dict:
    from ludoteca.agents import make_agent

    agent = make_agent(spec, seed=seed, game=name)
    game = ludoteca.load_game(name, **_options(name, players))
    _warm_up(game.new_initial_state, histories, agent.step)
    sims = 0
    spent = 0.0
    for history in histories:
        state = game.new_initial_state()
        for a in history:
            state.apply_action(a)
        start = _clock()
        agent.step(state)
        spent += _clock() - start
        sims += agent.last_iterations
    return {"sims": sims, "seconds": spent}


def cut_rollout_evaluator(name: str, cap: int, random_state: Any) -> Any:
    """OpenSpiel's random-rollout evaluator, with ludoteca's leaf evaluation at the cap."""
    from open_spiel.python.algorithms import mcts

    from ludoteca.agents import heuristics

    class CutRolloutEvaluator(mcts.RandomRolloutEvaluator):
        """Uniformly random rollouts of at most ``max_length`` actions (chance included), as
        ``RandomRolloutEvaluator``; a rollout cut at the cap is scored by ``value`` (ludoteca's
        evaluation function) instead of the returns of an unfinished game."""

        def __init__(self, value: Any, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.value = value

        def evaluate(self, state: Any) -> Any:
            import numpy as np

            rs = self._random_state
            result = None
            for _ in range(self.n_rollouts):
                working_state = state.clone()
                length = 0
                while not working_state.is_terminal() and (self.max_length is None or length < self.max_length):
                    if working_state.is_chance_node():
                        actions, probs = zip(*working_state.chance_outcomes(), strict=True)
                        action = rs.choice(actions, p=probs)
                    else:
                        action = rs.choice(working_state.legal_actions())
                    working_state.apply_action(action)
                    length += 1
                if working_state.is_terminal():
                    returns = np.array(working_state.returns())
                else:
                    returns = np.array(self.value(working_state.ludoteca_state))
                result = returns if result is None else result + returns
            return result / self.n_rollouts

    return CutRolloutEvaluator(heuristics.value_function(name), n_rollouts=1, random_state=random_state,
                               max_length=cap)


def openspiel_mcts(name: str, players: int, iterations: int, histories: list[list[int]], seed: int,
                   cap: int, c: float, ismcts: bool = False) -> dict:
    import numpy as np
    from open_spiel.python.algorithms import mcts

    from ludoteca.interop import openspiel

    game = openspiel.load(name, players=players)
    rs = np.random.RandomState(seed)
    evaluator = cut_rollout_evaluator(name, cap, rs)
    if ismcts:
        from open_spiel.python.algorithms import ismcts as os_ismcts

        bot = os_ismcts.ISMCTSBot(game, evaluator, uct_c=c, max_simulations=iterations, random_state=rs)
    else:
        bot = mcts.MCTSBot(game, uct_c=c, max_simulations=iterations, evaluator=evaluator,
                           solve=False, random_state=rs)
    _warm_up(game.new_initial_state, histories, bot.step)
    sims = 0
    spent = 0.0
    for history in histories:
        state = game.new_initial_state()
        for a in history:
            state.apply_action(a)
        start = _clock()
        bot.step(state)
        spent += _clock() - start
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

def _rate(result: dict) -> int:
    return round(result["sims"] / result["seconds"]) if result["seconds"] > 0 else 0


def mcts_row(name: str, args: argparse.Namespace, missing: str | None) -> dict:
    """Part 2 for one game: the like-for-like searches side by side (and ludoteca's tuned one)."""
    from ludoteca.agents.mcts import MCTSAgent

    histories = _positions(name, args.players, args.moves, args.seed)
    game = ludoteca.load_game(name, **_options(name, args.players))
    cap = args.cap if args.cap is not None else MCTSAgent().settings(game)["cap"]
    spec = like_for_like_spec(args.iterations, cap, args.c)
    row: dict[str, Any] = {"part": "mcts", "game": name, "players": args.players, "iterations": args.iterations,
                           "positions": len(histories), "rollout_cap": cap, "c": args.c, "ludoteca_spec": spec}
    if missing is None:
        row["ludoteca_mcts_sims_per_s"] = _rate(ludoteca_mcts(name, args.players, spec, histories, args.seed))
        tuned = f"mcts:iterations={args.iterations}"
        row["ludoteca_tuned_sims_per_s"] = _rate(ludoteca_mcts(name, args.players, tuned, histories, args.seed))
    else:
        row["ludoteca_mcts_sims_per_s"] = f"unavailable: {missing}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = openspiel_mcts(name, args.players, args.iterations, histories, args.seed, cap, args.c)
            row["openspiel_mcts_sims_per_s"] = _rate(theirs)
            if name == "tri":
                is_ = openspiel_mcts(name, args.players, args.iterations, histories, args.seed, cap, args.c,
                                     ismcts=True)
                row["openspiel_ismcts_sims_per_s"] = _rate(is_)
    except ImportError as exc:
        row["openspiel_mcts_sims_per_s"] = f"unavailable: {exc}"
    mine_rate, theirs_rate = row["ludoteca_mcts_sims_per_s"], row["openspiel_mcts_sims_per_s"]
    if isinstance(mine_rate, int) and isinstance(theirs_rate, int) and theirs_rate > 0:
        row["speedup"] = round(mine_rate / theirs_rate, 2)
        row["ok"] = mine_rate >= theirs_rate
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per steps-per-second measure")
    parser.add_argument("--rounds", type=int, default=5,
                        help="turns of the reference and the adapter, side by side (--seconds split among them)")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=200, help="MCTS simulations per move")
    parser.add_argument("--moves", type=int, default=3, help="searched positions per game")
    parser.add_argument("--cap", type=int, default=None, help="rollout cap (default: the game's agent_defaults cap)")
    parser.add_argument("--c", type=float, default=1.4, help="UCT constant of both searches")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object per line instead of a table")
    parser.add_argument("--reference", default="connect_four",
                        help="a native OpenSpiel game measured through the same pyspiel loop ('' for none)")
    args = parser.parse_args(argv)
    games = [g for g in args.games.split(",") if g]
    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)

    if args.rounds < 1:
        parser.error("--rounds must be 1 or more")
    for name in games:
        native = native_steps(name, args.players, args.seconds, args.seed)
        row: dict[str, Any] = {"part": "steps", "game": name, "players": args.players, "native": round(native)}
        try:
            if args.reference:
                both = side_by_side(name, args.players, args.reference, args.seconds, args.rounds, args.seed)
                row["reference"] = args.reference
                row["reference_decisions"] = round(both["reference"])
                row["openspiel"] = round(both["openspiel"])
                row["os-actions"] = round(both["os-actions"])
                row["vs-ref"] = round(both["vs-ref"], 2)
                row["vs-ref-range"] = [round(x, 2) for x in both["vs-ref-range"]]
                row["actions-vs-ref"] = round(both["actions-vs-ref"], 2)
            else:
                spiel, spiel_actions = openspiel_steps(name, args.players, args.seconds, args.seed)
                row["openspiel"] = round(spiel)
                row["os-actions"] = round(spiel_actions)
            row["os-python"] = round(openspiel_steps(name, args.players, args.seconds, args.seed, engine="python")[0])
        except ImportError as exc:
            row["openspiel"] = row["os-python"] = f"unavailable: {exc}"
        for key, kwargs in (("pettingzoo", {}), ("pz-noinfo", {"position_info": False}),
                            ("pz-maskscan", {"scan_mask": True})):
            try:
                row[key] = round(pettingzoo_steps(name, args.players, args.seconds, args.seed, **kwargs))
            except ImportError as exc:
                row[key] = f"unavailable: {exc}"
        emit(row)

    missing = _mcts_available()
    for name in games:
        emit(mcts_row(name, args, missing))

    if not args.json:
        print(f"Decisions per CPU second, random play, {args.players} players (one core)"
              + (f"; `ref`: native OpenSpiel {args.reference} through the same pyspiel loop, measured in turn "
                 f"with `openspiel` ({args.rounds} rounds each; medians)" if args.reference else "") + ":")
        print(f"{'game':<9}{'native':>10}{'openspiel':>11}{'ref':>9}{'vs-ref':>8}{'(range)':>12}{'act-vs-ref':>11}"
              f"{'os-python':>11}{'pettingzoo':>12}{'pz-noinfo':>11}{'pz-maskscan':>13}")
        for r in rows:
            if r["part"] == "steps":
                span = r.get("vs-ref-range")
                span_text = f"{span[0]}-{span[1]}" if span else "-"
                print(f"{r['game']:<9}{r['native']:>10}{r['openspiel']!s:>11}{r.get('reference_decisions', '-')!s:>9}"
                      f"{r.get('vs-ref', '-')!s:>8}{span_text:>12}{r.get('actions-vs-ref', '-')!s:>11}"
                      f"{r['os-python']!s:>11}{r['pettingzoo']!s:>12}{r['pz-noinfo']!s:>11}{r['pz-maskscan']!s:>13}")
        print(f"\nMCTS simulations per CPU second, {args.iterations} simulations per move, like with like "
              f"(uniformly random rollouts cut at `cap` actions, leaf scored by ludoteca's evaluation, "
              f"no pruning, c={args.c:g}; `tuned`: ludoteca's mcts as the agents play it, not comparable):")
        print(f"{'game':<9}{'cap':>5}{'ludoteca':>10}{'openspiel':>11}{'os-ismcts':>11}{'speedup':>9}"
              f"{'tuned':>9}  ok")
        for r in rows:
            if r["part"] == "mcts":
                print(f"{r['game']:<9}{r['rollout_cap']:>5}{r['ludoteca_mcts_sims_per_s']!s:>10}"
                      f"{r['openspiel_mcts_sims_per_s']!s:>11}{r.get('openspiel_ismcts_sims_per_s', '-')!s:>11}"
                      f"{r.get('speedup', '-')!s:>9}{r.get('ludoteca_tuned_sims_per_s', '-')!s:>9}  "
                      f"{r.get('ok', '-')}")
    bad = [r for r in rows if r.get("ok") is False]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
