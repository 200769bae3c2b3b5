"""Monte-Carlo tree search for any ludoteca game, any number of players.

``mcts`` is UCT on the game tree:

* every decision node maximises the value of the player who moves there; a simulation backs
  up the whole returns vector and each edge keeps the value of the player who chose it;
* chance nodes (dice, deals, roll-offs) are never chosen: each simulation samples their
  outcome with the probabilities of ``state.chance_outcomes()`` and follows (or grows) the
  child of that outcome;
* rollouts are uniformly random (``rollout=random``) or follow the game's light heuristic
  policy (``rollout=heuristic``), for at most ``cap`` actions; a rollout cut short is scored by
  the game's evaluation function (``ludoteca.agents.heuristics.value``);
* the search stops after ``iterations`` simulations or ``seconds`` of wall time, whichever
  comes first, and plays the most visited action.

Hidden information (TRI's secret battle rolls and cards): the search never reads the real
position, only ``state.observation(seat)``. It determinizes — every simulation starts from a
position rebuilt from the observation with the hidden values sampled consistently with it —
and grows one tree per seat, whose edges carry only what that seat observes
(multiple-observer information-set MCTS): an opponent choosing a secret card in the search
cannot see the card chosen before it, and our own choice is one node whatever the hidden
values are. Games without hidden information use a single tree and the real state.

Parameters (spec ``mcts:key=value:...``): ``iterations``, ``seconds``, ``c`` (the UCT
exploration constant), ``cap`` (rollout length in actions; 0 = evaluate the leaf at once),
``rollout`` (``random`` or ``heuristic``), ``prune`` (children per node, best first by the
game's cheap ranking; 0 = every legal action). Unset parameters take the game's tuning defaults,
``game.agent_defaults["mcts"]`` (declared on each game class, tuned against the heuristics at
well under a second per move), then :data:`FALLBACKS`. With an iteration budget only, the agent
is exactly reproducible for a given seed.

The search plays positions forward with the public fast path ``state.apply_unchecked`` (no
legality check, no events) and reads only public methods of the state.
"""

from __future__ import annotations

import math
import operator
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from ludoteca.agents import ismcts
from ludoteca.agents.base import Agent, register
from ludoteca.core.chance import outcome_at
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.game import Action, Game, State

FALLBACKS: Mapping[str, Any] = {"iterations": 500, "cap": 100, "rollout": "random", "prune": 0, "c": 0.7}
"""Parameters a game's ``agent_defaults["mcts"]`` leaves unset: ``iterations`` when neither
``iterations`` nor ``seconds`` is given, the rollout ``cap`` (actions, chance included), the
``rollout`` policy, ``prune`` (children per decision node; 0: every legal action) and ``c``."""
DEFAULT_C: float = FALLBACKS["c"]
"""The UCT constant of a game that declares none."""
PARAMETERS = ("iterations", "seconds", "c", "cap", "rollout", "prune")
_LEGAL_ACTIONS = operator.methodcaller("legal_actions")
"""The agent's parameters, in spec order."""


def _check(key: str, value: Any) -> Any:
    """``value`` for the parameter ``key`` (ints kept, numbers as float), or ValueError."""
    if value is None:
        return None
    if key in ("iterations", "cap", "prune"):
        least = 1 if key == "iterations" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"agent 'mcts': {key} must be a whole number >= {least}, not {value!r}")
        return value
    if key in ("seconds", "c"):
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (
                key == "seconds" and value == 0):
            raise ValueError(f"agent 'mcts': {key} must be a number {'>' if key == 'seconds' else '>='} 0, "
                             f"not {value!r}")
        return float(value)
    if key == "rollout":
        if value not in ("random", "heuristic"):
            raise ValueError(f"agent 'mcts': rollout must be 'random' or 'heuristic', not {value!r}")
        return value
    raise ValueError(f"agent 'mcts' has no parameter {key!r}; its parameters are: {', '.join(PARAMETERS)}")


class Node:
    """One node of a search tree. ``w`` and ``n`` belong to the edge that leads here: ``w``
    sums the returns of the player who chose that edge (or of nobody, after chance)."""

    __slots__ = ("children", "n", "untried", "w")

    def __init__(self) -> None:
        self.children: dict[Any, Node] = {}
        self.n = 0
        self.w = 0.0
        self.untried: list[Action] | None = None


class MCTSAgent(Agent):
    """UCT with chance sampling, n-player value vectors and determinized hidden information."""

    name = "mcts"
    wants_game = True

    def __init__(
        self,
        seed: int | None = None,
        iterations: int | None = None,
        seconds: float | None = None,
        c: float | None = None,
        cap: int | None = None,
        rollout: str | None = None,
        prune: int | None = None,
        game: str | None = None,
        **params: Any,
    ) -> None:
        super().__init__(seed, **params)
        self.iterations: int | None = _check("iterations", iterations)
        self.seconds: float | None = _check("seconds", seconds)
        self.c: float | None = _check("c", c)
        self.cap: int | None = _check("cap", cap)
        self.rollout: str | None = _check("rollout", rollout)
        self.prune: int | None = _check("prune", prune)
        self.game_name = game
        self.future: Callable[[int], float] | None = None
        """Clairvoyance for benchmarks: the uniform number deciding the k-th chance node
        ahead of the position being searched (see ``benchmarks/strength.py``)."""
        # statistics of the last search
        self.last_iterations = 0
        self.last_seconds = 0.0
        self.total_iterations = 0
        self.total_seconds = 0.0

    @property
    def spec(self) -> str:
        parts = [self.name]
        for key in PARAMETERS:
            value = getattr(self, key)
            if value is not None:
                parts.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
        return ":".join(parts)

    def settings(self, game: Game) -> dict[str, Any]:
        """Every parameter as this agent plays ``game``: its own, else the game's
        ``agent_defaults["mcts"]``, else :data:`FALLBACKS` (``iterations`` is None when only
        ``seconds`` bounds the search; ``seconds`` is None without a time budget)."""
        defaults = game.agent_defaults.get("mcts", {})
        unknown = sorted(set(defaults) - set(PARAMETERS))
        if unknown:
            raise ValueError(f"{game.title}'s agent_defaults['mcts'] has no parameter {unknown[0]!r}")
        out: dict[str, Any] = {}
        for key in PARAMETERS:
            value = getattr(self, key)
            if value is None and key != "seconds":
                value = _check(key, defaults.get(key))
                if value is None:
                    value = FALLBACKS[key]
            out[key] = value
        if self.iterations is None and self.seconds is not None:
            out["iterations"] = None
        return out

    # --- the search -------------------------------------------------------------------
    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            self.last_iterations, self.last_seconds = 0, 0.0
            return legal[0]
        from ludoteca.agents import heuristics

        game = state.game
        settings = self.settings(game)
        iterations = settings["iterations"]
        seconds = settings["seconds"]
        self._cap = settings["cap"]
        self._evaluate = heuristics.value_function(game)
        self._policy = heuristics.rollout_policy(game) if settings["rollout"] == "heuristic" else None
        prune = settings["prune"]
        ranker = heuristics.candidates_function(game) if prune else None
        self._ordered = ranker is not None
        if ranker is not None:  # best candidate last: expanded first
            self._expand = lambda s: ranker(s, prune)[::-1]
        else:
            self._expand = _LEGAL_ACTIONS  # a list of its own: the search pops from it
        self._c = settings["c"]
        seat = state.current_player()
        worlds = None if self.future is not None else ismcts.worlds(state, seat)
        start = time.perf_counter()
        deadline = start + seconds if seconds is not None else math.inf
        limit = iterations if iterations is not None else 1 << 62
        rng = self.rng
        done = 0
        if worlds is None:
            root = Node()
            while done < limit:
                self._simulate(state.clone(), root, rng)
                done += 1
                if time.perf_counter() >= deadline:
                    break
            tree = root
        else:
            roots = [Node() for _ in range(state.num_players)]
            states, weights = worlds
            cum = []
            acc = 0.0
            for w in weights:
                acc += w
                cum.append(acc)
            while done < limit:
                x = rng.random() * acc
                k = 0
                while k < len(cum) - 1 and x >= cum[k]:
                    k += 1
                self._simulate_mo(states[k].clone(), roots, rng)
                done += 1
                if time.perf_counter() >= deadline:
                    break
            tree = roots[seat]
        elapsed = time.perf_counter() - start
        self.last_iterations, self.last_seconds = done, elapsed
        self.total_iterations += done
        self.total_seconds += elapsed
        return self._best(tree, legal)

    @staticmethod
    def _best(root: Node, legal: list[Action]) -> Action:
        best, best_key = legal[0], (-1, -math.inf)
        for a in legal:  # ascending order: ties go to the smallest action
            child = root.children.get(a)
            if child is None:
                continue
            key = (child.n, child.w / child.n if child.n else 0.0)
            if key > best_key:
                best, best_key = a, key
        return best

    def _chance(self, s: State, rng: random.Random, depth: int) -> Action:
        outcomes = s.chance_outcomes()
        x = self.future(depth) if self.future is not None else rng.random()
        return outcome_at(outcomes, x)

    def _simulate(self, s: State, root: Node, rng: random.Random) -> None:
        """One simulation on a single tree (no hidden information)."""
        node = root
        path: list[tuple[Node, int]] = []
        log = math.log
        sqrt = math.sqrt
        c = self._c
        depth = 0  # chance nodes passed (clairvoyance index)
        current_player = s.current_player
        apply = s.apply_unchecked
        future = self.future
        while True:
            cur = current_player()
            if cur == TERMINAL:
                ret = s.returns()
                break
            if cur == CHANCE:
                a = outcome_at(s.chance_outcomes(), future(depth) if future is not None else rng.random())
                depth += 1
                child = node.children.get(a)
                if child is None:
                    child = node.children[a] = Node()
                apply(a)
                path.append((child, -1))
                node = child
                continue
            untried = node.untried
            if untried is None:
                untried = self._expand(s)
                if not self._ordered:
                    rng.shuffle(untried)
                node.untried = untried
            if untried:
                a = untried.pop()
                child = node.children[a] = Node()
                apply(a)
                path.append((child, cur))
                ret = self._rollout(s, rng, depth)
                break
            # UCT over the children (every candidate action has one)
            logn = log(node.n) if node.n > 1 else 0.0
            best: Any = None
            best_v = -math.inf
            for a, ch in node.children.items():
                v = ch.w / ch.n + c * sqrt(logn / ch.n)
                if v > best_v:
                    best_v, best = v, a
            child = node.children[best]
            apply(best)
            path.append((child, cur))
            node = child
        root.n += 1
        for nd, owner in path:
            nd.n += 1
            if owner >= 0:
                nd.w += ret[owner]

    def _simulate_mo(self, s: State, roots: list[Node], rng: random.Random) -> None:
        """One simulation on one tree per seat (hidden information): each seat's tree
        follows the edges as that seat observes them (``state.action_label``)."""
        nodes = list(roots)
        seats = range(len(roots))
        paths: list[list[tuple[Node, int]]] = [[] for _ in seats]
        log = math.log
        sqrt = math.sqrt
        c = self._c
        depth = 0
        expanded = False
        a: Any
        while True:
            cur = s.current_player()
            if cur == TERMINAL:
                ret = s.returns()
                break
            if cur == CHANCE:
                a = self._chance(s, rng, depth)
                depth += 1
                owner = -1
            else:
                node = nodes[cur]
                legal = s.legal_actions_view()
                if node.untried is None:
                    untried = self._expand(s)
                    if not self._ordered:
                        rng.shuffle(untried)
                    node.untried = untried
                untried = node.untried
                a = None
                while untried:
                    x = untried.pop()
                    if x in legal:
                        a = x
                        expanded = True
                        break
                if a is None:
                    logn = log(node.n) if node.n > 1 else 0.0
                    best_v = -math.inf
                    for x, ch in node.children.items():
                        if not ch.n or x not in legal:
                            continue
                        v = ch.w / ch.n + c * sqrt(logn / ch.n)
                        if v > best_v:
                            best_v, a = v, x
                    if a is None:  # nothing known is legal in this world: take a new action
                        a = legal[int(rng.random() * len(legal))]
                        expanded = True
                owner = cur
            for q in seats:
                label = a if q == owner else s.action_label(a, q)
                nd = nodes[q]
                child = nd.children.get(label)
                if child is None:
                    child = nd.children[label] = Node()
                nodes[q] = child
                paths[q].append((child, owner))
            s.apply_unchecked(a)
            if expanded:
                ret = self._rollout(s, rng, depth)
                break
        for q in seats:
            roots[q].n += 1
            for nd, owner in paths[q]:
                nd.n += 1
                if owner >= 0:
                    nd.w += ret[owner]

    def _rollout(self, s: State, rng: random.Random, depth: int) -> list[float]:
        """Play on from ``s`` for at most ``cap`` actions (chance included) with the rollout
        policy (uniformly random without one); the returns at the end, else the evaluation."""
        rand = rng.random
        future = self.future
        policy = self._policy
        cap = self._cap
        steps = 0
        # bound once: the loop below is the hottest code of the search
        current_player = s.current_player
        apply = s.apply_unchecked
        legal_view = s.legal_actions_view
        while True:
            cur = current_player()
            if cur == TERMINAL:
                return s.returns()
            if steps >= cap:
                return self._evaluate(s)
            if cur != CHANCE:
                if policy is None:
                    legal = legal_view()
                    apply(legal[int(rand() * len(legal))])
                else:
                    apply(policy(s, rng))
            else:
                x = future(depth) if future is not None else rand()
                depth += 1
                acc = 0.0
                outcomes = s.chance_outcomes()
                a = outcomes[-1][0]
                for o, p in outcomes:
                    acc += p
                    if x < acc:
                        a = o
                        break
                apply(a)
            steps += 1


register("mcts", MCTSAgent)
