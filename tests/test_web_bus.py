"""The pub/sub bus between workers (web/bus.py): in-process, and against a real redis-server.

The Redis tests start Debian's ``redis-server`` themselves, on a free loopback port with nothing
kept on disk, so that they can kill and restart it mid-stream. Outside CI they are skipped when
redis-server is missing; under ``CI=true`` that is a failure (tests/ci_required.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("redis")

from ludoteca.web.bus import (
    MAX_MESSAGE,
    BusMessage,
    BusUnavailable,
    LocalBroker,
    LocalBus,
    RedisBus,
    decode,
    encode,
    make_bus,
)

pytestmark = pytest.mark.timeout(120)

REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists()
                                                else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A private redis-server on a loopback port (no persistence), which a test may kill and
    start again on the same port."""

    def __init__(self, folder: Path) -> None:
        assert REDIS_SERVER is not None
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(REDIS_SERVER), "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.folder),
             "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", str(self.folder / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.ping():
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start: " + (self.folder / "redis.log").read_text()[-2000:])

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: the connections drop at once, as when the machine or the service dies."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is missing (apt-get install redis-server)")
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Inbox:
    """A subscriber that records what it is given."""

    def __init__(self) -> None:
        self.messages: list[BusMessage] = []
        self.event = asyncio.Event()

    def __call__(self, message: BusMessage) -> None:
        self.messages.append(message)
        self.event.set()

    def seqs(self) -> list[int]:
        return [m.seq for m in self.messages]

    async def until(self, count: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count:
            left = deadline - time.monotonic()
            assert left > 0, f"{len(self.messages)} of {count} messages came"
            self.event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.event.wait(), left)


# --- the message format ------------------------------------------------------------------------

def test_messages_are_compact_json_with_table_seq_and_worker() -> None:
    text = encode(BusMessage("abc", 7, "w1", 42, {"type": "update", "x": [1, 2]}))
    assert json.loads(text) == {"t": "abc", "s": 7, "w": "w1", "n": 42, "b": {"type": "update", "x": [1, 2]}}
    assert " " not in text
    assert decode(text) == BusMessage("abc", 7, "w1", 42, {"type": "update", "x": [1, 2]})


@pytest.mark.parametrize("data", ["", "[1]", "nope", '{"t":"a","s":"1","w":"w","n":1,"b":{}}',
                                  '{"t":"a","s":1,"w":"w","n":1,"b":[]}', '{"t":"a","s":1,"w":"w","n":true,"b":{}}',
                                  b"\xff\xfe", "x" * (MAX_MESSAGE + 1)])
def test_malformed_messages_are_not_decoded(data: str | bytes) -> None:
    assert decode(data) is None


def test_publishing_refuses_what_is_not_json_or_too_large_or_a_bad_table() -> None:
    async def scenario() -> None:
        bus = LocalBus("w1")
        with pytest.raises(ValueError, match="JSON"):
            await bus.publish("t1", 1, {"x": object()})
        with pytest.raises(ValueError, match="at most"):
            await bus.publish("t1", 1, {"x": "y" * MAX_MESSAGE})
        for table in ("", "a b", "x" * 65, "a\nb"):
            with pytest.raises(ValueError, match="table id"):
                await bus.publish(table, 1, {})
            with pytest.raises(ValueError, match="table id"):
                await bus.subscribe(table, lambda m: None)

    asyncio.run(scenario())


def test_make_bus_picks_the_implementation() -> None:
    assert isinstance(make_bus(None, "w"), LocalBus)
    assert isinstance(make_bus("redis://127.0.0.1:1/0", "w"), RedisBus)
    with pytest.raises(ValueError, match="redis://"):
        make_bus("postgresql://x/y")
    a, b = make_bus(), make_bus()
    assert a.worker != b.worker  # a fresh id per worker when none is given


# --- in-process --------------------------------------------------------------------------------

def test_local_buses_sharing_a_broker_deliver_to_each_other_but_not_to_themselves() -> None:
    async def scenario() -> None:
        broker = LocalBroker()
        a, b, c = LocalBus("a", broker), LocalBus("b", broker), LocalBus("c")  # c: another process
        got_a, got_b, got_c = Inbox(), Inbox(), Inbox()
        await a.subscribe("t1", got_a)
        await b.subscribe("t1", got_b)
        await c.subscribe("t1", got_c)
        for seq in range(1, 4):
            await a.publish("t1", seq, {"seq": seq})
        await b.publish("t1", 9, {"from": "b"})
        await a.publish("t2", 1, {})  # nobody listens to t2
        assert got_b.seqs() == [1, 2, 3] and {m.origin for m in got_b.messages} == {"a"}
        assert got_a.seqs() == [9] and got_a.messages[0].body == {"from": "b"}
        assert got_c.messages == []
        await b.unsubscribe("t1", got_b)
        await a.publish("t1", 4, {})
        assert got_b.seqs() == [1, 2, 3]
        await b.close()
        with pytest.raises(BusUnavailable):
            await b.publish("t1", 5, {})

    asyncio.run(scenario())


def test_a_failing_handler_does_not_stop_the_others() -> None:
    async def scenario() -> None:
        broker = LocalBroker()
        a, b = LocalBus("a", broker), LocalBus("b", broker)
        got = Inbox()

        def broken(message: BusMessage) -> None:
            raise RuntimeError("boom")

        await b.subscribe("t1", broken)
        await b.subscribe("t1", got)
        await a.publish("t1", 1, {})
        await a.publish("t1", 2, {})
        assert got.seqs() == [1, 2]

    asyncio.run(scenario())


# --- Redis -------------------------------------------------------------------------------------

pytest_redis = pytest.mark.redis


@pytest_redis
def test_two_redis_buses_deliver_to_each_other(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        a, b = RedisBus(redis_server.url, "worker-a"), RedisBus(redis_server.url, "worker-b")
        await a.start()
        await b.start()
        try:
            assert await a.wait_connected(10) and await b.wait_connected(10)
            got_a, got_b, other_table = Inbox(), Inbox(), Inbox()
            assert await a.subscribe("t1", got_a)
            assert await b.subscribe("t1", got_b)
            assert await b.subscribe("t2", other_table)
            for seq in range(1, 51):
                await a.publish("t1", seq, {"type": "update", "seq": seq})
            await b.publish("t1", 51, {"type": "update", "seq": 51})
            await got_b.until(50)
            await got_a.until(1)
            assert got_b.seqs() == list(range(1, 51))  # in order, none twice, none of its own
            assert all(m.origin == "worker-a" and m.body["seq"] == m.seq for m in got_b.messages)
            assert got_a.seqs() == [51] and got_a.messages[0].origin == "worker-b"
            assert other_table.messages == []
            await b.unsubscribe("t1", got_b)
            await a.publish("t1", 52, {})
            await b.publish("t1", 53, {})  # a round trip: had 52 come to b, it would be here by now
            await got_a.until(2)
            assert got_b.seqs() == list(range(1, 51))
        finally:
            await a.close()
            await b.close()

    asyncio.run(scenario())


@pytest_redis
def test_messages_published_at_once_share_round_trips_and_arrive_in_order(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        a, b = RedisBus(redis_server.url, "worker-a"), RedisBus(redis_server.url, "worker-b")
        await a.start()
        await b.start()
        try:
            assert await a.wait_connected(10) and await b.wait_connected(10)
            inboxes = {f"t{k}": Inbox() for k in range(20)}
            for table, inbox in inboxes.items():
                assert await b.subscribe(table, inbox)
            # 20 tables x 30 messages published concurrently (as many tables' moves committed at once)
            await asyncio.gather(*(a.publish(table, seq, {"seq": seq}) for seq in range(1, 31) for table in inboxes))
            for inbox in inboxes.values():
                await inbox.until(30)
                assert inbox.seqs() == list(range(1, 31))  # each table's messages in order, once
            assert a.round_trips < 600 / 4, f"{a.round_trips} round trips for 600 messages"
        finally:
            await a.close()
            await b.close()

    asyncio.run(scenario())


@pytest_redis
def test_a_message_published_twice_is_delivered_once_and_garbage_is_dropped(redis_server: RedisServer) -> None:
    import redis.asyncio as aioredis

    async def scenario() -> None:
        b = RedisBus(redis_server.url, "worker-b")
        raw = aioredis.from_url(redis_server.url)
        await b.start()
        try:
            got = Inbox()
            assert await b.subscribe("t1", got)
            first = encode(BusMessage("t1", 1, "worker-a", 100, {"k": 1}))
            for data in (first, first, "not json", encode(BusMessage("t9", 2, "worker-a", 101, {})),
                         encode(BusMessage("t1", 2, "worker-a", 99, {})),  # older number: a duplicate
                         encode(BusMessage("t1", 3, "worker-a", 102, {})),
                         encode(BusMessage("t1", 1, "worker-c", 5, {}))):  # another worker's own numbers
                await raw.publish(b.channel("t1"), data)
            await got.until(3)
            await asyncio.sleep(0.2)
            assert [(m.origin, m.seq) for m in got.messages] == [("worker-a", 1), ("worker-a", 3), ("worker-c", 1)]
            assert b.subs.duplicates == 2 and b.subs.dropped == 2
        finally:
            await b.close()
            await raw.aclose()

    asyncio.run(scenario())


@pytest_redis
def test_a_redis_restart_mid_stream_subscribers_recover_without_duplicates(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        caught_up: list[frozenset[str]] = []
        a = RedisBus(redis_server.url, "worker-a", backoff=(0.05, 0.5))
        b = RedisBus(redis_server.url, "worker-b", backoff=(0.05, 0.5), on_reconnect=caught_up.append)
        await a.start()
        await b.start()
        try:
            got, got_t2 = Inbox(), Inbox()
            assert await b.subscribe("t1", got) and await b.subscribe("t2", got_t2)
            published: list[int] = []
            refused = 0
            seq = 0

            async def send(count: int) -> None:
                nonlocal seq, refused
                for _ in range(count):
                    seq += 1
                    try:
                        await a.publish("t1", seq, {"seq": seq})
                        published.append(seq)
                    except BusUnavailable:
                        refused += 1
                    await asyncio.sleep(0.005)

            await send(30)
            await got.until(30)
            redis_server.kill()
            await send(20)  # Redis is down: these are refused
            assert refused >= 1
            await asyncio.sleep(0.3)
            redis_server.start()  # same port, empty: every subscription is gone with the old server
            assert await b.wait_connected(10) and await a.wait_connected(10)
            assert b.reconnects == 1 and caught_up == [frozenset({"t1", "t2"})]
            after = seq
            await send(30)
            await a.publish("t2", 1, {})
            await got_t2.until(1)
            await got.until(len([s for s in published if s <= 30 or s > after]))
            seqs = got.seqs()
            assert len(seqs) == len(set(seqs)), "a message was delivered twice"
            assert seqs == sorted(seqs)
            assert [s for s in seqs if s > after] == list(range(after + 1, after + 31))  # all later ones came
            assert b.subs.duplicates == 0
        finally:
            await a.close()
            await b.close()

    asyncio.run(scenario())


@pytest_redis
def test_subscribing_while_redis_is_down_takes_effect_when_it_is_back(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        redis_server.stop()
        b = RedisBus(redis_server.url, "worker-b", backoff=(0.05, 0.3), confirm_timeout=0.3)
        await b.start()
        try:
            got = Inbox()
            assert not await b.subscribe("t1", got)  # not confirmed: there is no Redis
            assert not b.connected
            with pytest.raises(BusUnavailable):
                await b.publish("t1", 1, {})
            redis_server.start()
            assert await b.wait_connected(10)
            a = RedisBus(redis_server.url, "worker-a")
            try:
                await a.publish("t1", 2, {"after": True})
                await got.until(1)
                assert got.messages[0].body == {"after": True}
            finally:
                await a.close()
        finally:
            await b.close()

    asyncio.run(scenario())


@pytest_redis
def test_the_reconnection_backoff_is_bounded(redis_server: RedisServer) -> None:
    """Redis away for 2 s with backoff (0.05, 0.4): attempts go on at most 0.4 s (+25 %) apart,
    so the bus is back within half a second of Redis."""
    async def scenario() -> None:
        b = RedisBus(redis_server.url, "worker-b", backoff=(0.05, 0.4))
        await b.start()
        try:
            assert await b.wait_connected(10)
            redis_server.kill()
            await asyncio.sleep(2.0)
            redis_server.start()
            back = time.monotonic()
            assert await b.wait_connected(10)
            assert time.monotonic() - back < 0.5 + 0.5  # the longest wait, its jitter, a connection
        finally:
            await b.close()

    asyncio.run(scenario())



# --- scripts/start-redis, scripts/stop-redis and the CI rule ----------------------------------

ROOT = Path(__file__).resolve().parents[1]


@pytest_redis
def test_start_redis_prints_its_url_reuses_a_running_server_and_stop_redis_stops_it(tmp_path: Path) -> None:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is missing (apt-get install redis-server)")
    port = free_port()
    env = {**os.environ, "LUDOTECA_REDIS_DIR": str(tmp_path / "redis"), "LUDOTECA_REDIS_PORT": str(port)}
    try:
        first = subprocess.run([str(ROOT / "scripts/start-redis")], env=env, capture_output=True, text=True,
                               timeout=60)
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == f"redis://127.0.0.1:{port}/0"
        pid = (tmp_path / "redis" / "redis.pid").read_text().strip()
        again = subprocess.run([str(ROOT / "scripts/start-redis")], env=env, capture_output=True, text=True,
                               timeout=60)
        assert again.stdout == first.stdout
        assert (tmp_path / "redis" / "redis.pid").read_text().strip() == pid  # the same server
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            assert s.recv(16).startswith(b"+PONG")
    finally:
        stop = subprocess.run([str(ROOT / "scripts/stop-redis")], env=env, capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0, stop.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    again = subprocess.run([str(ROOT / "scripts/stop-redis")], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0  # nothing running: nothing to do


def test_under_ci_a_skipped_redis_or_nginx_test_fails(tmp_path: Path) -> None:
    from tests.test_scripts import _pytest

    sample = ("import pytest\n\n@pytest.mark.redis\ndef test_needs_redis():\n"
              "    pytest.skip('redis-server is missing')\n\n"
              "@pytest.mark.nginx\ndef test_needs_nginx():\n    pytest.skip('nginx is missing')\n")
    run = _pytest(tmp_path / "ci", "true", {"test_sample.py": sample})
    assert run.returncode == 1, run.stdout
    assert "CI=true: this redis test must run, but it would be skipped: redis-server is missing" in run.stdout
    assert "CI=true: this nginx test must run, but it would be skipped: nginx is missing" in run.stdout
