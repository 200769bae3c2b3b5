"""The server's record of its pauses (web/pauses.py): what a measurement of the latencies relies on."""

from __future__ import annotations

import asyncio
import gc
import json
import time
from pathlib import Path

from ludoteca.web import pauses


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_nothing_is_recorded_unless_asked(monkeypatch) -> None:
    monkeypatch.delenv(pauses.RECORD_ENV, raising=False)
    assert pauses.recorder_from_env() is None


def test_a_collection_and_a_stall_of_the_loop_are_recorded_with_their_time(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "pauses.jsonl"
    monkeypatch.setenv(pauses.RECORD_ENV, str(path))
    monkeypatch.setenv(pauses.CENSUS_ENV, "1")

    async def run() -> tuple[float, float]:
        recorder = pauses.recorder_from_env()
        assert recorder is not None
        recorder.start()
        await asyncio.sleep(0.01)  # the probe is asleep
        began = time.time()
        gc.collect(0)
        time.sleep(0.03)  # a callback holding the loop: every table waits
        await asyncio.sleep(0.02)  # the probe wakes late and says so
        ended = time.time()
        await recorder.stop()
        return began, ended

    began, ended = asyncio.run(run())
    records = _records(path)
    collections = [r for r in records if r["kind"] == "gc"]
    assert any(r["gen"] == 0 and began <= r["at"] <= ended and r["ms"] >= 0 for r in collections)
    assert all(isinstance(r["young"], int) and r["types"] for r in collections)  # the census was asked
    stalls = [r for r in records if r["kind"] == "stall"]
    assert any(25 <= r["ms"] and began - 0.01 <= r["at"] <= ended for r in stalls)
    size = path.stat().st_size
    gc.collect(0)  # stopped: nothing more is written
    assert path.stat().st_size == size
