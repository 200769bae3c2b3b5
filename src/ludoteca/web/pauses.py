"""The server's pauses: the garbage collector's settings, and a record of every pause for measuring.

Every table shares one event loop, so anything that holds the loop delays every move: the
collector's passes first of all (docs/web.md, "Speed against boardgame.io"). :func:`settle`
sets the collector up once the server has loaded (the modules, the tables resumed: they live
as long as the server, so they are frozen out of every pass).

**Measuring** (off unless :data:`RECORD_ENV` names a file): :class:`Recorder` appends one JSON
line per collection (``{"kind": "gc", "at", "ms", "cpu_ms", "gen", "collected"}``: ``at`` the
wall-clock time it began, ``ms`` its wall time, ``cpu_ms`` the thread's CPU) and one per stall of
the event loop (``{"kind": "stall", "at", "ms"}``: a probe asleep for :data:`PROBE` seconds woke
more than :data:`STALL` late), ``"young"`` the objects the collection walks (counted before it,
about a millisecond per 100,000). With :data:`CENSUS_ENV` set, each collection also counts them by
type (``"types"``): that takes time of its own, so the latencies of such a run are not the server's.
``benchmarks/server_load.py --pauses`` reads the file and tells which slow moves fell in or right
after a pause; :data:`YOUNG_ENV` sets another threshold for such a measurement.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import time
from collections import Counter
from typing import IO, Any

log = logging.getLogger("ludoteca.web")

YOUNG = 50_000
"""Objects made (less those freed) between two young collections."""
YOUNG_ENV = "LUDOTECA_GC_YOUNG"
"""Another :data:`YOUNG` (measuring: e.g. more young collections in a short run)."""
RECORD_ENV = "LUDOTECA_PAUSES"
"""A file to append the server's pauses to (measuring only: unset, nothing is recorded)."""
CENSUS_ENV = "LUDOTECA_PAUSES_CENSUS"
"""Set (to anything): each collection recorded also counts its young objects by type (slow)."""
PROBE = 0.002
"""Seconds the stall probe sleeps between two looks at the clock."""
STALL = 0.004
"""Seconds late beyond which the probe's wake-up is recorded as a stall of the event loop."""
TYPES = 12
"""Types named in a census (the most numerous)."""


def settle() -> None:
    """Collect once, freeze what is alive (it lives as long as the server: no pass walks it again),
    and make young collections rarer than Python's default: each walks the objects made since the
    last one that are still alive, which with 1,000 tables open are many (each connection's waiting
    coroutines and futures), so each costs about as much at 5,000 as at 50,000 (docs/web.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(young_threshold(), 20, 100)


def young_threshold() -> int:
    """:data:`YOUNG`, or the whole number of :data:`YOUNG_ENV` (1 to 10,000,000); anything else there is
    logged and ignored (a measuring aid must not stop the server)."""
    raw = os.environ.get(YOUNG_ENV, "").strip()
    if not raw:
        return YOUNG
    if raw.isdigit() and 1 <= int(raw) <= 10_000_000:
        return int(raw)
    log.warning("%s=%r is not a whole number from 1 to 10,000,000: the collector keeps %d", YOUNG_ENV, raw, YOUNG)
    return YOUNG


class Recorder:
    """Appends the collector's passes and the event loop's stalls to a file (see the module)."""

    def __init__(self, path: str, census: bool = False) -> None:
        self.census = census
        self._out: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by stop())
        self._began = (0.0, 0.0, 0.0)
        self._extra: dict[str, Any] = {}
        self._probe: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Record from now on (on the running event loop)."""
        gc.callbacks.append(self.on_collection)
        self._probe = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self.on_collection)
        if self._probe is not None:
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._probe
        self._out.close()

    def on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            generation = info["generation"]
            self._extra = self._count(generation) if self.census else {
                "young": sum(len(gc.get_objects(g)) for g in range(generation + 1))}
            self._began = (time.time(), time.perf_counter(), time.thread_time())
            return
        at, wall, cpu = self._began
        self._write({"kind": "gc", "at": at, "ms": 1000 * (time.perf_counter() - wall),
                     "cpu_ms": 1000 * (time.thread_time() - cpu), "gen": info["generation"],
                     "collected": info["collected"], **self._extra})

    @staticmethod
    def _count(generation: int) -> dict[str, Any]:
        objects = [o for g in range(generation + 1) for o in gc.get_objects(g)]
        types = Counter(type(o).__qualname__ for o in objects)
        return {"young": len(objects), "types": types.most_common(TYPES)}

    async def _watch(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(PROBE)
            late = time.perf_counter() - before - PROBE
            if late > STALL:
                self._write({"kind": "stall", "at": time.time() - late, "ms": 1000 * late})

    def _write(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()


def recorder_from_env() -> Recorder | None:
    """The :class:`Recorder` asked for by :data:`RECORD_ENV` (None when unset)."""
    path = os.environ.get(RECORD_ENV)
    if not path:
        return None
    return Recorder(path, census=bool(os.environ.get(CENSUS_ENV)))
