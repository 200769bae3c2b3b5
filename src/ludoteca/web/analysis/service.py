"""The server's analysis service: the queue in the database, a bounded pool of processes.

* :data:`MODES`: ``all`` (a table is queued when its game ends), ``request`` (when a visitor asks on
  the replay page; the default) or ``off``.
* The queue is the ``ludo_analyses`` table (repository/analyses.py): one row per table, so a table is
  queued once whoever asks how often; every worker of the server claims rows from it, a row once, and
  a killed worker's claim expires after :data:`LEASE` seconds (a live one renews it).
* :class:`AnalysisService` runs at most ``processes`` analyses at once in a process pool whose
  processes run at the lowest CPU priority (work.py) and are stopped outright while live play needs
  the CPU (gate.py: an AI search running, or a table's change in the last :data:`gate.QUIET` seconds);
  the event loop only awaits them, so an action or an AI move never waits for an analysis. A paused
  analysis keeps its claim (the event loop renews it), and a runner claims a new table only when the
  pool may run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from ludoteca.web.analysis.gate import Gate, SignalledProcesses, pool_pids
from ludoteca.web.analysis.work import analyse_record, lower_priority
from ludoteca.web.repository import analyses
from ludoteca.web.repository.store import Repository

log = logging.getLogger("ludoteca.web.analysis")

ALL = "all"
REQUEST = "request"
OFF = "off"
MODES = (ALL, REQUEST, OFF)
DEFAULT_MODE = REQUEST
"""An analysis costs seconds to a minute of one core (docs/analysis.md "Speed"): a server analyses
the tables its visitors ask for unless its owner has the cores to analyse every one."""
LEASE = 300.0
"""Seconds a worker's claim on a table lasts unless renewed (every third of it while it runs)."""
POLL = 5.0
"""Seconds between looks at the queue when nothing was queued here (another worker's requests)."""


class AnalysisService:
    """Claims queued tables and analyses them in a pool of ``processes`` low-priority processes.

    ``records(table_id)`` gives a finished table's record as JSON (None: no such finished table); it
    runs off the event loop (the lobby's build thread). ``db(fn, *args)`` runs a storage call. ``gate``
    pauses the pool while live play needs the CPU (made here unless given; setup.py connects it)."""

    def __init__(self, repo: Repository, worker: str, mode: str = DEFAULT_MODE, processes: int = 1,
                 records: Callable[[str], Any] | None = None, db: Callable[..., Any] | None = None,
                 lease: float = LEASE, poll: float = POLL, executor: Executor | None = None,
                 iterations: int | None = None, gate: Gate | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"analysis mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.repo = repo
        self.worker = worker
        self.mode = mode
        self.processes = max(1, processes)
        self.records = records
        self._db = db
        self.lease = lease
        self.poll = poll
        self.iterations = iterations
        self._executor = executor
        self.gate = gate if gate is not None else Gate()
        self._processes: SignalledProcesses | None = None
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Future[None]] = []
        self._queueing: set[asyncio.Future[None]] = set()
        self._closing = False
        self.done = 0
        """Analyses this worker stored (tests, metrics)."""

    @property
    def enabled(self) -> bool:
        return self.mode != OFF

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any:
        if self._db is not None:
            return await self._db(fn, *args)
        return await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args))

    # --- life ----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the runners (one per process of the pool); nothing when the mode is ``off``."""
        if not self.enabled or self._tasks:
            return
        analyses.ensure(self.repo)
        if self._executor is None:
            # the processes are spawned by the thread that submits work, the event loop's: they die
            # with it (work.die_with), paused or not
            self._executor = ProcessPoolExecutor(max_workers=self.processes, initializer=lower_priority,
                                                 initargs=(os.getpid(),),
                                                 mp_context=multiprocessing.get_context("spawn"))
        if hasattr(signal, "SIGSTOP"):
            executor = self._executor
            self._processes = SignalledProcesses(lambda: pool_pids(executor))
            self.gate.attach(self._processes)
        self._tasks = [asyncio.ensure_future(self._run()) for _ in range(self.processes)]

    async def stop(self) -> None:
        self._closing = True
        self._wake.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        if self._processes is not None:  # a stopped process would not even hear its end
            self.gate.detach(self._processes)
            self._processes = None
        self.gate.close()
        if self._executor is not None:
            # an analysis can run for a minute: its process is ended, not awaited, and the table it
            # was analysing goes back to the queue (the next worker or start takes it)
            for process in list(getattr(self._executor, "_processes", {}).values()):
                with contextlib.suppress(Exception):
                    process.terminate()
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
            with contextlib.suppress(Exception):
                analyses.release(self.repo, self.worker)

    # --- requests --------------------------------------------------------------------------------------
    async def request(self, table_id: str) -> bool:
        """Queue a finished table (once; a failed one again). True when this call queued it."""
        queued = bool(await self.db(analyses.request, self.repo, table_id, None, True))
        if queued:
            self._wake.set()
        return queued

    def changed(self, table: Any, change: Any) -> None:
        """A table committed a change (a listener of every table: master/listeners.py): live play
        needs the CPU (the gate pauses the pool); in mode ``all``, a game that just ended on this
        worker is queued."""
        self.gate.action()
        if self.mode != ALL or not change.ended or not change.local or self._closing:
            return
        task = asyncio.ensure_future(self._queue_quietly(table.id))
        self._queueing.add(task)
        task.add_done_callback(self._queueing.discard)

    async def _queue_quietly(self, table_id: str) -> None:
        try:
            await self.request(table_id)
        except Exception:
            log.exception("table %s: its analysis could not be queued", table_id)

    async def status(self, table_id: str) -> analyses.AnalysisRow | None:
        return await self.db(analyses.get, self.repo, table_id)  # type: ignore[no-any-return]

    # --- the runners ------------------------------------------------------------------------------------
    async def _run(self) -> None:
        while not self._closing:
            await self.gate.wait_open()  # a new analysis starts only when live play leaves the CPU
            try:
                table_id = await self.db(analyses.claim, self.repo, self.worker, self.lease)
            except Exception:
                log.exception("the analysis queue could not be read")
                table_id = None
            if table_id is None:
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), self.poll)
                continue
            await self._analyse(table_id)

    async def _analyse(self, table_id: str) -> None:
        renewing = asyncio.ensure_future(self._renew(table_id))
        result: dict[str, Any] | None = None
        try:
            data = await self._record(table_id)
            if data is not None:
                assert self._executor is not None
                started = time.perf_counter()
                running = asyncio.get_running_loop().run_in_executor(
                    self._executor, analyse_record, data, self.iterations)
                self.gate.refresh()  # a process the pool spawned for it, while paused, is paused too
                result = await running
                log.info("table %s analysed in %.1f s", table_id, time.perf_counter() - started)
        except asyncio.CancelledError:
            raise  # stopping: the claim expires and another worker (or the next start) takes it
        except Exception:
            log.exception("table %s: the analysis failed", table_id)
        finally:
            renewing.cancel()
        if await self.db(analyses.finish, self.repo, table_id, self.worker, result) and result is not None:
            self.done += 1

    async def _record(self, table_id: str) -> dict[str, Any] | None:
        if self.records is None:
            return None
        data = self.records(table_id)
        if asyncio.iscoroutine(data):
            data = await data
        return data if isinstance(data, dict) else None

    async def _renew(self, table_id: str) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            with contextlib.suppress(Exception):
                await self.db(analyses.renew, self.repo, table_id, self.worker, self.lease)


__all__ = ["ALL", "DEFAULT_MODE", "LEASE", "MODES", "OFF", "REQUEST", "AnalysisService"]
