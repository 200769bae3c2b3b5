"""AI seats: choosing moves off the event loop.

``random`` is instantaneous and runs inline; the other levels (``heuristic``, ``mcts``) run in a
small process pool, so a long search never blocks the server's event loop (nor, through the
GIL, its other tables). A worker rebuilds the position from the table's action list and keeps
the last position of each table it has seen, so a move usually costs only the new actions.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from collections import OrderedDict
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

LEVELS: tuple[str, ...] = ("random", "heuristic", "mcts")
"""The levels offered in the lobby (those whose agent is registered)."""

DEFAULT_SPECS: dict[str, str] = {
    "random": "random",
    "heuristic": "heuristic",
    "mcts": "mcts:seconds=1.0",
}
"""Agent spec used for each level (``ludoteca.agents.make_agent``)."""

_CACHE: OrderedDict[str, tuple[int, Any]] = OrderedDict()
_CACHE_SIZE = 64


def available_levels() -> list[str]:
    """The AI levels whose agent exists in this installation."""
    from ludoteca.agents import agent_names

    names = set(agent_names())
    return [level for level in LEVELS if level in names]


def agent_seed(table_seed: int, seq: int, seat: int) -> int:
    return (table_seed * 1_000_003 + seq * 101 + seat) % (2**63)


def choose(
    key: str,
    game: str,
    options: dict[str, Any],
    actions: list[dict[str, Any]],
    spec: str,
    seed: int,
) -> dict[str, Any]:
    """The canonical JSON of the move ``spec`` plays after ``actions`` (runs in a worker)."""
    from ludoteca.agents import make_agent
    from ludoteca.registry import load_game

    cached = _CACHE.pop(key, None)
    if cached is not None and cached[0] <= len(actions):
        n, state = cached
    else:
        n, state = 0, load_game(game, **options).new_initial_state()
    for data in actions[n:]:
        state.apply_action(state.action_from_json(data))
    _CACHE[key] = (len(actions), state)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    agent = make_agent(spec, seed=seed, game=game)
    action = agent.step(state.clone())
    data = state.action_to_json(action)
    data.pop("elapsed", None)
    return data


class AIRunner:
    """Runs agents for AI seats: inline for ``random``, in a process pool otherwise."""

    def __init__(self, workers: int = 1, specs: dict[str, str] | None = None) -> None:
        self.workers = max(1, workers)
        self.specs = dict(DEFAULT_SPECS)
        if specs:
            self.specs.update(specs)
        self._pool: Executor | None = None

    def spec(self, level: str) -> str:
        return self.specs.get(level, level)

    def _executor(self) -> Executor:
        if self._pool is None:
            ctx = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._pool

    async def choose(self, key: str, game: str, options: dict[str, Any], state: Any,
                     actions: list[dict[str, Any]], level: str, seed: int) -> dict[str, Any]:
        spec = self.spec(level)
        if spec == "random":
            legal = state.legal_actions()
            action = legal[random.Random(seed).randrange(len(legal))]
            data = state.action_to_json(action)
            data.pop("elapsed", None)
            return data
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor(), choose, key, game, options, list(actions), spec, seed)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
