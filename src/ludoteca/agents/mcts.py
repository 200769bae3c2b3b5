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
game's cheap ranking; 0 = every legal action). Unset parameters take per-game defaults (the
tables below, tuned against the heuristics at well under a second per move). With an
iteration budget only, the agent is exactly reproducible for a given seed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from ludoteca.agents import ismcts
from ludoteca.agents.base import Agent, register
from ludoteca.core.chance import outcome_at
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.game import Action, State

DEFAULT_ITERATIONS: dict[str, int] = {"exactly": 1000, "tohm": 3000, "tri": 400, "exagon": 300}
"""Iterations per move when neither ``iterations`` nor ``seconds`` is given (< 1 s per move)."""
DEFAULT_CAP: dict[str, int] = {"exactly": 10, "tohm": 60, "tri": 10, "exagon": 10}
"""Rollout length (actions, chance included) before the evaluation function takes over."""
DEFAULT_ROLLOUT: dict[str, str] = {"tri": "heuristic", "exagon": "heuristic"}
"""Rollout policy by game when ``rollout`` is not given (else ``random``)."""
DEFAULT_PRUNE: dict[str, int] = {"exagon": 8, "tri": 8}
"""Children per decision node, best first by the game's cheap ranking (0: every legal action)."""
DEFAULT_C = 0.7
GAME_C: dict[str, float] = {"tohm": 0.4, "exactly": 0.4, "exagon": 0.3}
"""UCT constant by game when ``c`` is not given (else DEFAULT_C)."""


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
        if iterations is not None and (isinstance(iterations, bool) or not isinstance(iterations, int)
                                       or iterations < 1):
            raise ValueError(f"agent 'mcts': iterations must be a whole number >= 1, not {iterations!r}")
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or seconds <= 0):
            raise ValueError(f"agent 'mcts': seconds must be a number > 0, not {seconds!r}")
        if c is not None and (isinstance(c, bool) or not isinstance(c, (int, float)) or c < 0):
            raise ValueError(f"agent 'mcts': c must be a number >= 0, not {c!r}")
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
            raise ValueError(f"agent 'mcts': cap must be a whole number >= 0, not {cap!r}")
        if prune is not None and (isinstance(prune, bool) or not isinstance(prune, int) or prune < 0):
            raise ValueError(f"agent 'mcts': prune must be a whole number >= 0, not {prune!r}")
        if rollout not in (None, "random", "heuristic"):
            raise ValueError(f"agent 'mcts': rollout must be 'random' or 'heuristic', not {rollout!r}")
        self.iterations = iterations
        self.seconds = float(seconds) if seconds is not None else None
        self.c = float(c) if c is not None else None
        self.cap = cap
        self.rollout = rollout
        self.prune = prune
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
        if self.iterations is not None:
            parts.append(f"iterations={self.iterations}")
        if self.seconds is not None:
            parts.append(f"seconds={self.seconds:g}")
        if self.c is not None:
            parts.append(f"c={self.c:g}")
        if self.cap is not None:
            parts.append(f"cap={self.cap}")
        if self.rollout is not None:
            parts.append(f"rollout={self.rollout}")
        if self.prune is not None:
            parts.append(f"prune={self.prune}")
        return ":".join(parts)

    # --- the search -------------------------------------------------------------------
    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            self.last_iterations, self.last_seconds = 0, 0.0
            return legal[0]
        from ludoteca.agents import heuristics

        game_name = state.game.name
        iterations = self.iterations
        seconds = self.seconds
        if iterations is None and seconds is None:
            iterations = DEFAULT_ITERATIONS.get(game_name, 500)
        self._cap = self.cap if self.cap is not None else DEFAULT_CAP.get(game_name, 100)
        self._evaluate = heuristics.value_function(game_name)
        rollout = self.rollout or DEFAULT_ROLLOUT.get(game_name, "random")
        self._policy = heuristics.rollout_policy(game_name) if rollout == "heuristic" else None
        prune = self.prune if self.prune is not None else DEFAULT_PRUNE.get(game_name, 0)
        ranker = heuristics.candidates_function(game_name) if prune else None
        self._ordered = ranker is not None
        if ranker is not None:  # best candidate last: expanded first
            self._expand = lambda s: ranker(s, prune)[::-1]
        else:
            self._expand = lambda s: s._legal_actions()
        self._c = self.c if self.c is not None else GAME_C.get(game_name, DEFAULT_C)
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
            labeler = ismcts.labeler(game_name)
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
                self._simulate_mo(states[k].clone(), roots, rng, labeler)
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
        while True:
            cur = s.current_player()
            if cur == TERMINAL:
                ret = s.returns()
                break
            if cur == CHANCE:
                a = self._chance(s, rng, depth)
                depth += 1
                child = node.children.get(a)
                if child is None:
                    child = node.children[a] = Node()
                s._apply(a)
                s._legal = None
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
                s._apply(a)
                s._legal = None
                path.append((child, cur))
                ret = self._rollout(s, rng, depth)
                break
            # UCT over the children (every candidate action has one)
            logn = log(node.n) if node.n > 1 else 0.0
            best = None
            best_v = -math.inf
            for a, ch in node.children.items():
                v = ch.w / ch.n + c * sqrt(logn / ch.n)
                if v > best_v:
                    best_v, best = v, a
            child = node.children[best]
            s._apply(best)
            s._legal = None
            path.append((child, cur))
            node = child
        root.n += 1
        for nd, owner in path:
            nd.n += 1
            if owner >= 0:
                nd.w += ret[owner]

    def _simulate_mo(self, s: State, roots: list[Node], rng: random.Random,
                     labeler: Callable[[State, Action, int], Any]) -> None:
        """One simulation on one tree per seat (hidden information): each seat's tree
        follows the edges as that seat observes them."""
        nodes = list(roots)
        seats = range(len(roots))
        paths: list[list[tuple[Node, int]]] = [[] for _ in seats]
        log = math.log
        sqrt = math.sqrt
        c = self._c
        depth = 0
        expanded = False
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
                legal = s._legal_actions()
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
                label = a if q == owner else labeler(s, a, q)
                nd = nodes[q]
                child = nd.children.get(label)
                if child is None:
                    child = nd.children[label] = Node()
                nodes[q] = child
                paths[q].append((child, owner))
            s._apply(a)
            s._legal = None
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
        rand = rng.random
        future = self.future
        policy = self._policy
        cap = self._cap
        steps = 0
        while True:
            cur = s.current_player()
            if cur == TERMINAL:
                return s.returns()
            if steps >= cap:
                s._legal = None
                return self._evaluate(s)
            if cur == CHANCE:
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
            elif policy is not None:
                s._legal = None
                a = policy(s, rng)
            else:
                legal = s._legal_actions()
                a = legal[int(rand() * len(legal))]
            s._apply(a)
            s._legal = None
            steps += 1


register("mcts", MCTSAgent)
