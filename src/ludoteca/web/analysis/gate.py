"""Analysis strictly below live play: the analysis processes are paused while live play needs the CPU.

The idle scheduling class the analysis processes run in (work.py) is not enough on every kernel: a
server process or an AI process that wakes for a table's action can still wait milliseconds for the
core an idle-class process holds (docs/analysis.md "Below live play"). So the server stops its own
analysis processes (``SIGSTOP``: they keep their work, use no CPU, and are resumed with ``SIGCONT``)

* while an AI move is being searched anywhere in this server process (the AI runner tells the gate
  when its first search starts and its last one ends), and
* while the tables' actions arrive: from any committed change of a table until :data:`QUIET` seconds
  pass without another one (the end of an AI's search counts as one: its move is about to be
  committed and broadcast).

An AI search always wins. Table actions alone do not starve the analysis for ever: a pool paused by
them for :data:`PATIENCE` seconds runs for a :data:`SLICE` of seconds whatever arrives (about a tenth
of the time on a server whose tables never leave a quiet second), so a busy club's finished games are
still analysed; an AI search ends the slice at once. A claim in hand is renewed all along
(service.py). Each worker of a server pauses its own pool: its gate sees its own tables and AI moves only.

:class:`Gate` decides; a :class:`Pausable` (:class:`SignalledProcesses` for a process pool) obeys. The
gate's clock and timer are injected, so tests drive it without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

log = logging.getLogger("ludoteca.web.analysis")

QUIET = 1.0
"""Seconds without a table's change (and without an AI search) before the analysis resumes. A pause
or a resume costs a signal per analysis process (microseconds); the window decides how often an
action arrives while the analysis runs: at a table where people think a second or two between moves,
most of them find it paused (docs/analysis.md "Below live play")."""


PATIENCE = 30.0
"""Seconds the tables' actions alone may keep the analysis paused before it gets a :data:`SLICE`."""

SLICE = 3.0
"""Seconds the analysis runs, whatever the tables do (not an AI search), after :data:`PATIENCE`."""


class Pausable(Protocol):
    def pause(self) -> None: ...

    def resume(self) -> None: ...


class Timer(Protocol):
    def cancel(self) -> Any: ...


Schedule = Callable[[float, Callable[[], None]], Timer]
"""``schedule(delay, fn)``: call ``fn`` after ``delay`` seconds (``loop.call_later``)."""


def _call_later(delay: float, fn: Callable[[], None]) -> Timer:
    return asyncio.get_running_loop().call_later(delay, fn)


class Gate:
    """Pauses its pools while live play needs the CPU; resumes them when quiet. Its methods are
    called in the server's event loop (a table's listener, the AI runner's callbacks)."""

    def __init__(self, quiet: float = QUIET, clock: Callable[[], float] = time.monotonic,
                 schedule: Schedule = _call_later, patience: float = PATIENCE, slice_: float = SLICE) -> None:
        self.quiet = quiet
        self.patience = patience
        self.slice = slice_
        self._paused_since = -math.inf
        self._slice_end = -math.inf
        self.clock = clock
        self._schedule = schedule
        self._pools: list[Pausable] = []
        self._searches = 0
        self._last = -math.inf
        self._timer: Timer | None = None
        self._open = asyncio.Event()
        self._open.set()
        self.paused = False
        self.pauses = 0
        """Times the pools were paused (tests, metrics)."""

    # --- what live play tells the gate ---------------------------------------------------------------
    def action(self) -> None:
        """A table's change was committed (or arrived from another worker): pause until quiet."""
        self._last = now = self.clock()
        if now < self._slice_end:
            return  # the analysis's slice: the timer armed for its end looks again
        self._pause()
        self._arm(self.quiet)

    def searches(self, running: int) -> None:
        """The AI runner's searches running now (called when the number changes)."""
        if running > 0:
            self._searches = running
            self._slice_end = -math.inf
            self._pause()
            return
        if self._searches:
            self._searches = 0
            self._paused_since = self.clock()  # the actions' patience counts from the search's end
            self.action()

    # --- the pools --------------------------------------------------------------------------------------
    def attach(self, pool: Pausable) -> None:
        self._pools.append(pool)
        if self.paused:
            self._signal(pool, pause=True)

    def detach(self, pool: Pausable) -> None:
        """Resume ``pool`` and forget it (a pool shutting down: its processes must not stay stopped)."""
        with contextlib.suppress(ValueError):
            self._pools.remove(pool)
        self._signal(pool, pause=False)

    def refresh(self) -> None:
        """Pause again what a paused pool started since (a process spawned for a new job)."""
        if self.paused:
            for pool in self._pools:
                self._signal(pool, pause=True)

    async def wait_open(self) -> None:
        """Return when the pools may run (at once when they are not paused)."""
        await self._open.wait()

    def check(self) -> None:
        """Resume when no search runs and :attr:`quiet` seconds passed since the last change; look
        again later otherwise (the timer calls it; tests call it with their clock moved on)."""
        self._timer = None
        now = self.clock()
        if not self.paused:
            if now < self._slice_end:
                self._arm(self._slice_end - now)
            elif self._slice_end != -math.inf:  # a slice ends
                self._slice_end = -math.inf
                left = self._last + self.quiet - now
                if left > 0:  # the tables are still busy: paused again
                    self._pause()
                    self._arm(left)
            return
        if self._searches:
            return  # the search's end looks again
        left = self._last + self.quiet - now
        if left > 0:
            waited = now - self._paused_since
            if waited >= self.patience:  # the actions alone kept it paused long enough: a slice
                self._slice_end = now + self.slice
                self._resume()
                self._arm(self.slice)
                return
            self._arm(min(left, self.patience - waited))
            return
        self._resume()

    def close(self) -> None:
        """Resume every pool and stop watching (the server stops)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._resume()

    # --- inside -----------------------------------------------------------------------------------------
    def _resume(self) -> None:
        self.paused = False
        for pool in self._pools:
            self._signal(pool, pause=False)
        self._open.set()

    def _pause(self) -> None:
        if self.paused:
            return
        self.paused = True
        self._paused_since = self.clock()
        self.pauses += 1
        self._open.clear()
        for pool in self._pools:
            self._signal(pool, pause=True)

    def _arm(self, delay: float) -> None:
        if self._timer is None:  # an armed timer looks again when it fires, and re-arms if needed
            self._timer = self._schedule(delay, self.check)

    @staticmethod
    def _signal(pool: Pausable, pause: bool) -> None:
        try:
            pool.pause() if pause else pool.resume()
        except Exception:
            log.exception("the analysis pool could not be %s", "paused" if pause else "resumed")


class SignalledProcesses:
    """A pool's processes (``pids()``: their ids now), paused with ``SIGSTOP``, resumed with ``SIGCONT``."""

    def __init__(self, pids: Callable[[], Iterable[int]]) -> None:
        self.pids = pids

    def pause(self) -> None:
        self._send(signal.SIGSTOP)

    def resume(self) -> None:
        self._send(signal.SIGCONT)

    def _send(self, sig: signal.Signals) -> None:
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)


def pool_pids(executor: Any) -> list[int]:
    """The process ids of a ``ProcessPoolExecutor``'s processes (none for another executor)."""
    processes = getattr(executor, "_processes", None) or {}
    return [pid for p in list(processes.values()) if (pid := getattr(p, "pid", None))]


__all__ = ["PATIENCE", "QUIET", "SLICE", "Gate", "Pausable", "SignalledProcesses", "pool_pids"]
