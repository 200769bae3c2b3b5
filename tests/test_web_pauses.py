"""The server's record of its pauses (web/pauses.py): what a measurement of the latencies relies on."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
from pathlib import Path

import pytest

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
    assert any(r["ms"] >= 25 and began - 0.01 <= r["at"] <= ended for r in stalls)
    size = path.stat().st_size
    gc.collect(0)  # stopped: nothing more is written
    assert path.stat().st_size == size


class _Socket:
    """What the writer uses of a websocket: what it was sent, and how it was closed."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: int | None = None

    async def send_text(self, text: str) -> None:
        await asyncio.sleep(0)  # a send may let other tasks run
        self.sent.append(text)

    async def close(self, code: int = 1000) -> None:
        self.closed = code


def test_a_connection_at_rest_keeps_no_writer_task_and_its_messages_go_in_order() -> None:
    from ludoteca.web.hub.hub import Connection
    from ludoteca.web.hub.sockets import _Writer

    async def run() -> None:
        socket, conn = _Socket(), Connection()
        writer = _Writer(socket, conn)  # type: ignore[arg-type]
        conn.wake = writer.wake
        conn.push("a")
        conn.push("b")
        await asyncio.sleep(0.01)
        assert socket.sent == ["a", "b"] and writer.task is None  # nothing waits between messages
        conn.push("c")
        conn.close(4429)  # the server ends the connection: what was queued goes first
        await writer.finished(2)
        assert socket.sent == ["a", "b", "c"] and socket.closed == 4429 and writer.task is None
        conn.push("d")  # after the end nothing is sent
        await asyncio.sleep(0.01)
        assert socket.sent == ["a", "b", "c"]

    asyncio.run(asyncio.wait_for(run(), 5))


@pytest.mark.parametrize(("value", "threshold"), [(None, 50_000), ("20000", 20_000), (" 7 ", 7), ("0", 50_000),
                                                   ("lots", 50_000), ("-5", 50_000), ("1e9", 50_000),
                                                   ("99999999", 50_000)])
def test_the_young_threshold_is_read_from_the_environment_only_when_it_is_sensible(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str | None, threshold: int) -> None:
    """A measuring aid never stops the server: nonsense is said in the log and the default kept."""
    if value is None:
        monkeypatch.delenv(pauses.YOUNG_ENV, raising=False)
    else:
        monkeypatch.setenv(pauses.YOUNG_ENV, value)
    with caplog.at_level(logging.WARNING, logger="ludoteca.web"):
        assert pauses.young_threshold() == threshold
    warned = any(pauses.YOUNG_ENV in r.getMessage() for r in caplog.records)
    assert warned == (value is not None and threshold == 50_000)
