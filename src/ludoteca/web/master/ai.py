"""AI seats: choosing moves off the event loop.

The levels are the AI ladder's (:mod:`ludoteca.agents.levels`: ``beginner`` ... ``expert``, each
with a measured rating, :mod:`ludoteca.agents.ladder`); the older names ``random``, ``heuristic``
and ``mcts`` still play. ``random`` is instantaneous and runs inline; the other levels run in a
small process pool, so a long search never blocks the server's event loop (nor, through the
GIL, its other tables). The runner bounds the searches running at once to the pool's size
and lets the tables take turns (:class:`AIRunner`). A worker rebuilds the position from the
table's action list and keeps the last position of each table it has seen, so a move usually
costs only the new actions.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import random
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from ludoteca.agents import agent_names, make_agent
from ludoteca.agents import levels as ladder_levels
from ludoteca.agents.ladder import level_summary
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import N_
from ludoteca.registry import load_game

log = logging.getLogger("ludoteca.web")

LEVELS: tuple[str, ...] = ("random", *ladder_levels.LEVELS)
"""The levels every game offers, weakest first: ``random`` (any legal move, instantaneous:
the seat an AI takes over when a player leaves) and the ladder's (:mod:`ludoteca.agents.levels`)."""

SOLVED_LEVELS: tuple[str, ...] = ladder_levels.SOLVED_LEVELS
"""The levels offered only for a table whose game says they can play it (``perfect``: a game solved for
the table's options and player count, :func:`ludoteca.agents.levels.unavailable`)."""

LEVEL_INFO: dict[str, str] = {
    "beginner": N_("a sensible move half of the time, a random one otherwise: a newcomer can beat it"),
    "easy": N_("a good move four times in five, a random one otherwise"),
    "medium": N_("plays sound moves by rules of thumb"),
    "hard": N_("searches ahead (Monte-Carlo), a fraction of a second a move"),
    "expert": N_("strongest: searches many times longer than hard"),
    "perfect": N_("never errs: plays the best move of the game's exact solution"),
    "random": N_("plays any legal move"),
    "heuristic": N_("plays sound moves by rules of thumb"),
    "mcts": N_("strongest: searches many times longer than hard"),
}
"""A short hint of each level's strength (the older names included), for the lobby."""

DEFAULT_SPECS: dict[str, str] = {}
"""Agent specs overriding a level's (``ludoteca.agents.levels.spec`` plays the others)."""


def available_levels() -> list[str]:
    """The AI levels whose agents exist in this installation, weakest first."""
    names = set(agent_names())
    return [level for level in LEVELS if ladder_levels.SPECS.get(level, level).split(":")[0] in names]


def offered_levels() -> list[str]:
    """The levels the lobby offers, weakest first: :func:`available_levels` and the levels of a solved
    game whose agent exists (offered for a table only where :func:`unavailable` says "")."""
    names = set(agent_names())
    return [*available_levels(), *(level for level in SOLVED_LEVELS if level in names)]


def unavailable(level: str, game: Game) -> str:
    """Why the AI ``level`` cannot play ``game`` (a table's, built with its options), in the current
    language; "" when it can (every level but those of :data:`SOLVED_LEVELS` plays every game)."""
    return ladder_levels.unavailable(level, game)


def is_level(level: str) -> bool:
    """True for a level a seat may ask for: a ladder level or an older name (``random``,
    ``heuristic``, ``mcts``: tables made before the ladder keep playing)."""
    return ladder_levels.is_level(level)


def level_descriptions(levels: list[str]) -> dict[str, str]:
    """The strength hint of each of ``levels`` (empty for a level without one)."""
    return {level: LEVEL_INFO.get(level, "") for level in levels}


def level_ratings(game: str, players: int) -> dict[str, dict[str, int]]:
    """``{level: {"rating", "low", "high"}}``: the measured rating of each level in ``game`` with
    ``players`` players (levels not measured for that count are left out)."""
    return level_summary(game, players)


_CACHE: OrderedDict[str, tuple[int, Any]] = OrderedDict()
_CACHE_SIZE = 64


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
        self.watchers: list[Callable[[int], None]] = []
        """Told the number of searches running whenever it changes, before a search starts (the
        analysis pauses while live play searches: web/analysis/gate.py)."""
        self._told = 0

    def spec(self, level: str, game: str | None = None) -> str:
        """The agent spec playing ``level`` in ``game``: an override given to the runner, else the
        level's (:func:`ludoteca.agents.levels.spec`)."""
        if level in self.specs:
            return self.specs[level]
        if ladder_levels.canonical(level) in self.specs:
            return self.specs[ladder_levels.canonical(level)]
        return ladder_levels.spec(level, game)

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
        spec = self.spec(level, game)
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
            self._tell()
            try:
                done = asyncio.wrap_future(self._executor().submit(job.fn, *job.args))
            except Exception as exc:  # the pool is shut down
                self._running -= 1
                self._tell()
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
        self._tell()

    def _tell(self) -> None:
        if self._running == self._told:
            return
        self._told = self._running
        for watcher in self.watchers:
            try:
                watcher(self._running)
            except Exception:
                log.exception("an AI runner's watcher failed")

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
