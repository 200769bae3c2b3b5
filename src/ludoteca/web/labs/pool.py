"""The lab's pool, apart from live play: one run at a time per worker, played by the lab's own command
(``ludoteca lab`` / ``ludoteca balance``) in a process of its own at the lowest priority — ``nice 19`` and
Linux's idle scheduling class, its disk writes in the idle I/O class, its worker processes too; in the
server's session, so that the kernel's autogroup scheduling does not make it the server's equal — or on
the Ray cluster of ``--lab-ray``.

The server's event loop only looks, once a :attr:`~LabSettings.tick`: it takes the oldest queued run
(every worker of a server shares the queue in the database, web/repository/lab_runs.py), counts the
games the run has written (the lab appends one line a game), records them with a heartbeat, and stops
the process when the run's owner cancelled it. A run whose worker died is queued again and resumes
where it stopped (the lab's runs are resumable). Nothing of a run is computed in the server's process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ludoteca.web.labs.orders import Order, command
from ludoteca.web.labs.settings import LabSettings
from ludoteca.web.repository import lab_runs

log = logging.getLogger("ludoteca.web.lab")

LOG_FILE = "lab.log"
NICENESS = 19
KILL_AFTER = 5.0
"""Seconds a cancelled run's process has to stop after SIGTERM before SIGKILL."""


def run_folder(settings: LabSettings, run_id: str) -> Path:
    return Path(settings.folder) / run_id


def out_folder(settings: LabSettings, run_id: str) -> Path:
    """Where the lab writes the run (``games.jsonl``, ``report.html``, ``summary.json``, ``balance.json``)."""
    return run_folder(settings, run_id) / "out"


class LineCounter:
    """Games written so far: the complete lines of the run's ``games.jsonl`` files, read incrementally."""

    def __init__(self, out: Path, kind: str) -> None:
        self.out = out
        self.kind = kind
        self.seen: dict[Path, tuple[int, int]] = {}

    def files(self) -> list[Path]:
        if self.kind == "run":
            return [self.out / "games.jsonl"]
        return sorted(self.out.glob("setting-*/games.jsonl"))

    def count(self) -> int:
        total = 0
        for path in self.files():
            offset, lines = self.seen.get(path, (0, 0))
            try:
                with path.open("rb") as fh:
                    fh.seek(offset)
                    chunk = fh.read()
            except OSError:
                chunk = b""
            end = chunk.rfind(b"\n") + 1
            lines += chunk[:end].count(b"\n")
            self.seen[path] = (offset + end, lines)
            total += lines
        return total


@dataclass
class Playing:
    """The run this worker plays now."""

    id: str
    order: Order
    process: subprocess.Popen[bytes]
    counter: LineCounter
    stopping: bool = False
    stopping_since: float = 0.0
    done: int = 0
    began: float = field(default_factory=time.monotonic)


def _lower_priority(pid: int, nice: bool) -> None:
    """The run's process at the lowest priority: nice 19 (when ``nice`` did not start it so) and Linux's
    idle scheduling class, which runs it only when nothing else wants the CPU (a move to broadcast
    preempts it at once). Its worker processes inherit both."""
    if not nice:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, NICENESS)
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(pid, idle, os.sched_param(0))


class LabPool:
    """Plays the queued runs, one at a time on this worker."""

    def __init__(self, settings: LabSettings, engine: Any, db: Callable[..., Awaitable[Any]], worker: str) -> None:
        self.settings = settings
        self.engine = engine
        self.db = db
        self.worker = worker
        self.playing: Playing | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    async def start(self) -> None:
        Path(self.settings.folder).mkdir(parents=True, exist_ok=True)
        self._task = asyncio.create_task(self._loop(), name="ludoteca-lab-pool")

    async def stop(self) -> None:
        """Stop looking; the run being played is stopped and queued again (it resumes on the next start)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        playing, self.playing = self.playing, None
        if playing is not None:
            self._kill(playing, wait=True)
            with contextlib.suppress(Exception):
                await self.db(lab_runs.release, self.engine, playing.id, time.time())

    def nudge(self) -> None:
        """A run was queued or cancelled: look now rather than at the next tick."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # the pool never stops the server; the next tick tries again
                log.exception("lab pool")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.settings.tick)

    async def tick(self) -> None:
        now = time.time()
        if self.playing is None:
            await self.db(lab_runs.requeue_stale, self.engine, now - self.settings.stale_after)
            row = await self.db(lab_runs.claim_next, self.engine, self.worker, now)
            if row is not None:
                self._launch(row)
        if self.playing is not None:
            await self._watch(self.playing)

    def _launch(self, row: dict[str, Any]) -> None:
        order = Order.from_json(row["request"])
        folder = run_folder(self.settings, row["id"])
        folder.mkdir(parents=True, exist_ok=True)
        argv = command(order, folder, self.settings, row["lang"])
        ionice = shutil.which("ionice")  # its disk writes (a line a game, fsynced) after everybody else's too
        if ionice:
            argv = [ionice, "-c", "3", *argv]
        nice = shutil.which("nice")
        if nice:
            argv = [nice, "-n", str(NICENESS), *argv]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with (folder / LOG_FILE).open("ab") as out:
            # its own process group (cancel stops the lab's workers too) but the server's session: under
            # the kernel's autogroup scheduling a new session would compete with live play as an equal,
            # whatever its nice value
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                       process_group=0, env=env, cwd=folder)
        _lower_priority(process.pid, bool(nice))
        self.playing = Playing(row["id"], order, process, LineCounter(out_folder(self.settings, row["id"]), order.kind))

    async def _watch(self, playing: Playing) -> None:
        playing.done = min(playing.counter.count(), playing.order.total)
        code = playing.process.poll()
        now = time.time()
        if code is None:
            status = await self.db(lab_runs.beat, self.engine, playing.id, playing.done, now)
            if status in (lab_runs.CANCELLING, lab_runs.CANCELLED, None) or playing.stopping:
                playing.stopping = True
                self._kill(playing)
            return
        self.playing = None
        if playing.stopping:
            await self.db(lab_runs.finish, self.engine, playing.id, lab_runs.CANCELLED, playing.done, now)
        elif code == 0:
            await self.db(lab_runs.finish, self.engine, playing.id, lab_runs.DONE, playing.done, now)
        else:
            await self.db(lab_runs.finish, self.engine, playing.id, lab_runs.FAILED, playing.done, now,
                          self._last_words(playing.id))
        self._wake.set()  # the next queued run starts at once

    def _kill(self, playing: Playing, wait: bool = False) -> None:
        """Stop the run's process and its workers (its own process group): SIGTERM now, SIGKILL when it is
        still there :data:`KILL_AFTER` seconds later (the next ticks look; ``wait``: here, blocking)."""
        sig = signal.SIGKILL if playing.stopping_since and time.monotonic() - playing.stopping_since > KILL_AFTER \
            else signal.SIGTERM
        playing.stopping_since = playing.stopping_since or time.monotonic()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(playing.process.pid, sig)
        if wait:
            try:
                playing.process.wait(timeout=KILL_AFTER)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(playing.process.pid, signal.SIGKILL)
                playing.process.wait()

    def _last_words(self, run_id: str) -> str:
        """The lab's last line of output (why it stopped), for the run's owner."""
        try:
            lines = (run_folder(self.settings, run_id) / LOG_FILE).read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1][:500] if lines else ""
