"""AI seats: choosing moves off the event loop.

``random`` is instantaneous and runs inline; the other levels (``heuristic``, ``mcts``) run in a
small process pool, so a long search never blocks the server's event loop (nor, through the
GIL, its other tables). The runner bounds the searches running at once to the pool's size
and lets the tables take turns (:class:`AIRunner`). A worker rebuilds the position from the
table's action list and keeps the last position of each table it has seen, so a move usually
costs only the new actions.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import random
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from ludoteca.agents import agent_names, make_agent
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_
from ludoteca.registry import load_game

LEVELS: tuple[str, ...] = ("random", "heuristic", "mcts")
"""The levels offered in the lobby (those whose agent is registered)."""

LEVEL_INFO: dict[str, str] = {
    "random": N_("plays any legal move"),
    "heuristic": N_("beats random 9 games in 10"),
    "mcts": N_("strongest: beats heuristic about 6 in 10"),
}
"""A short hint of each level's strength, from the measured figures in docs/strength.md (heuristic beats
random in 92.7-100% of games; mcts beats random in 92.2-100% and heuristic in 60.5-66.0%)."""

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
    names = set(agent_names())
    return [level for level in LEVELS if level in names]


def level_descriptions(levels: list[str]) -> dict[str, str]:
    """The strength hint of each of ``levels`` (empty for a level without one)."""
    return {level: LEVEL_INFO.get(level, "") for level in levels}


def agent_seed(table_seed: int, seq: int, seat: int) -> int:
    return (table_seed * 1_000_003 + seq * 101 + seat) % (2**63)


def choose(
    key: str,
    game: str,
    options: dict[str, Any],
    actions: list[dict[str, Any]],
    spec: str,
    seed: int,
) -> Action:
    """The action ``spec`` plays after ``actions`` (stored JSON), as the engine's int (runs in a
    worker; the same game and actions give the same position, so the int means the same move)."""
    cached = _CACHE.pop(key, None)
    if cached is not None and cached[0] <= len(actions):
        n, state = cached
    else:
        n, state = 0, load_game(game, **options).new_initial_state()
    for data in actions[n:]:
        state.apply_json(data)
    _CACHE[key] = (len(actions), state)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    agent = make_agent(spec, seed=seed, game=game)
    return int(agent.step(state.clone()))


@dataclass
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: asyncio.Future


class AIRunner:
    """Runs agents for AI seats: inline for ``random``, in a process pool otherwise.

    At most ``workers`` searches run at once (one per worker process); the others wait in a
    queue per table, and the tables take turns (round robin: the next search is the first of the
    table served least recently), so a busy table never holds the others back. Tables with a
    human seat go first; tables of AIs alone get at least one turn in every ``BACKGROUND_SHARE``
    (they are never starved, but never slow people down either).
    """

    BACKGROUND_SHARE = 3
    MEMORY = 10_000
    """Tables whose last turn is remembered."""

    def __init__(self, workers: int = 1, specs: dict[str, str] | None = None,
                 executor: Executor | None = None) -> None:
        self.workers = max(1, workers)
        self.specs = dict(DEFAULT_SPECS)
        if specs:
            self.specs.update(specs)
        self._pool: Executor | None = executor
        self._queues: dict[str, deque[_Job]] = {}
        self._rings: dict[bool, dict[str, None]] = {True: {}, False: {}}
        self._served: OrderedDict[str, int] = OrderedDict()
        self._turn = 0
        self._running = 0
        self._since_background = 0
        self.peak = 0
        """Most searches that ever ran at once (tests)."""

    def spec(self, level: str) -> str:
        return self.specs.get(level, level)

    def _executor(self) -> Executor:
        if self._pool is None:
            ctx = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx)
        return self._pool

    async def choose(self, key: str, game: str, options: dict[str, Any], state: State,
                     actions: Callable[[], list[dict[str, Any]]], level: str, seed: int,
                     interactive: bool = True) -> Action:
        """The move of the AI ``level`` in ``state`` (reached by the stored actions ``actions()``,
        read only when a worker needs them), as an int."""
        spec = self.spec(level)
        if spec == "random":
            legal = state.legal_actions()
            return legal[random.Random(seed).randrange(len(legal))]
        return await self.run(key, choose, key, game, options, actions(), spec, seed, interactive=interactive)

    async def run(self, key: str, fn: Callable[..., Any], *args: Any, interactive: bool = True) -> Any:
        """``fn(*args)`` in a worker, queued behind table ``key``'s earlier jobs, the tables taking turns."""
        job = _Job(fn, args, asyncio.get_running_loop().create_future())
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
            self._rings[interactive][key] = None
        queue.append(job)
        self._dispatch()
        return await job.future

    def waiting(self) -> int:
        """Jobs queued, not yet running."""
        return sum(len(q) for q in self._queues.values())

    def _next(self) -> _Job | None:
        """The next job: the first of the next table in turn (cancelled jobs are dropped)."""
        while True:
            people, alone = self._rings[True], self._rings[False]
            if not people and not alone:
                return None
            use_alone = not people or (alone and self._since_background >= self.BACKGROUND_SHARE - 1)
            ring = alone if use_alone else people
            self._since_background = 0 if use_alone else self._since_background + 1
            key = min(ring, key=lambda k: self._served.get(k, -1))
            queue = self._queues[key]
            job = queue.popleft()
            if not queue:
                del self._queues[key]
                del ring[key]
            if not job.future.done():
                self._turn += 1
                self._served[key] = self._turn
                self._served.move_to_end(key)
                while len(self._served) > self.MEMORY:
                    self._served.popitem(last=False)
                return job

    def _dispatch(self) -> None:
        while self._running < self.workers:
            job = self._next()
            if job is None:
                return
            self._running += 1
            self.peak = max(self.peak, self._running)
            try:
                done = asyncio.wrap_future(self._executor().submit(job.fn, *job.args))
            except Exception as exc:  # the pool is shut down
                self._running -= 1
                job.future.set_exception(exc)
                continue
            done.add_done_callback(functools.partial(self._finished, job))

    def _finished(self, job: _Job, done: asyncio.Future) -> None:
        self._running -= 1
        if not job.future.done():
            if done.cancelled():
                job.future.cancel()
            elif (error := done.exception()) is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(done.result())
        self._dispatch()

    def close(self) -> None:
        for queue in self._queues.values():
            for job in queue:
                job.future.cancel()
        self._queues.clear()
        for ring in self._rings.values():
            ring.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
