"""The pub/sub bus between workers (web/hub/bus.py): in-process, and against a real redis-server.

The Redis tests start Debian's ``redis-server`` themselves, on a free loopback port with nothing
kept on disk and a password (as docs/web.md's setup), so that they can kill and restart it
mid-stream. Outside CI they are skipped when redis-server is missing; under ``CI=true`` that is a
failure (tests/ci_required.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis")

from ludoteca.web.hub.bus import (
    MAC_CHARS,
    MAX_MESSAGE,
    BusMessage,
    BusUnavailable,
    LocalBroker,
    LocalBus,
    check_secret,
    decode,
    encode,
    make_bus,
    seal,
    unseal,
)
from ludoteca.web.hub.redis_bus import RedisBus

pytestmark = pytest.mark.timeout(120)

REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists()
                                                else None)
SECRET = "the workers' shared secret"
KEY = check_secret(SECRET)


def redis_bus(url: str, worker: str, **options: Any) -> RedisBus:
    """A Redis bus with the workers' shared secret."""
    return RedisBus(url, worker, secret=SECRET, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A private redis-server on a loopback port (no persistence, a password), which a test may
    kill and start again on the same port."""

    def __init__(self, folder: Path) -> None:
        assert REDIS_SERVER is not None
        self.folder = folder
        self.port = free_port()
        self.password = os.urandom(12).hex()
        self.url = f"redis://:{self.password}@127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [str(REDIS_SERVER), "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self.folder),
             "--requirepass", self.password,
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
                s.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
                answer = b""
                while b"\n" not in answer.partition(b"\n")[2]:  # two lines: +OK, +PONG
                    chunk = s.recv(64)
                    if not chunk:
                        break
                    answer += chunk
                return answer.startswith(b"+OK\r\n+PONG")
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


def test_a_sealed_message_opens_only_with_the_same_secret_and_unchanged() -> None:
    text = encode(BusMessage("abc", 7, "w1", 42, {"rows": {"from": 6, "a": [[0, {"x": 1}]], "at": 1.5}}))
    wire = seal(text, KEY)
    assert len(wire) == MAC_CHARS + len(text) and wire.endswith(text)
    assert unseal(wire, KEY) == text
    assert unseal(wire.encode(), KEY) == text
    assert unseal(wire, check_secret("another secret of 16+ chars")) is None
    assert unseal(text, KEY) is None  # no MAC (what redis-cli PUBLISH of plain JSON gives)
    assert unseal(wire.replace('"from":6', '"from":7'), KEY) is None  # changed after sealing
    assert unseal(wire[:MAC_CHARS], KEY) is None
    assert unseal("0" * MAC_CHARS + "x" * (MAX_MESSAGE + 1), KEY) is None


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
    assert isinstance(make_bus("redis://127.0.0.1:1/0", "w", secret=SECRET), RedisBus)
    with pytest.raises(ValueError, match="shared secret"):
        make_bus("redis://127.0.0.1:1/0", "w")  # a Redis bus never runs unauthenticated
    with pytest.raises(ValueError, match="at least 16 characters"):
        make_bus("redis://127.0.0.1:1/0", "w", secret="short")
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
        a, b = redis_bus(redis_server.url, "worker-a"), redis_bus(redis_server.url, "worker-b")
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
        a, b = redis_bus(redis_server.url, "worker-a"), redis_bus(redis_server.url, "worker-b")
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
def test_only_messages_sealed_with_the_secret_are_news_the_rest_are_hints(redis_server: RedisServer) -> None:
    """What does not check (no MAC, another secret's, garbage, another table's message) and what
    comes again or out of order is never news: the handlers get a hint (read the database)."""
    import redis.asyncio as aioredis

    async def scenario() -> None:
        b = redis_bus(redis_server.url, "worker-b")
        raw = aioredis.from_url(redis_server.url)
        await b.start()
        try:
            got = Inbox()
            assert await b.subscribe("t1", got)
            first = seal(encode(BusMessage("t1", 1, "worker-a", 100, {"k": 1})), KEY)
            forged_rows = encode(BusMessage("t1", 2, "worker-a", 200, {"rows": {"from": 1, "a": [[0, {}]], "at": 1}}))
            sent = [(first, ("worker-a", 1, True)),
                    (first, ("", 0, False)),  # the same again: a replay
                    (forged_rows, ("", 0, False)),  # plain JSON, no MAC (redis-cli PUBLISH)
                    (seal(forged_rows, check_secret("not the workers' secret")), ("", 0, False)),
                    ("not json", ("", 0, False)),
                    (seal(encode(BusMessage("t9", 2, "worker-a", 101, {})), KEY), ("", 0, False)),  # another table's
                    (seal(encode(BusMessage("t1", 2, "worker-a", 99, {})), KEY), ("", 0, False)),  # older number
                    (seal(encode(BusMessage("t1", 3, "worker-a", 102, {})), KEY), ("worker-a", 3, True)),
                    (seal(encode(BusMessage("t1", 1, "worker-c", 5, {})), KEY), ("worker-c", 1, True))]
            for data, _ in sent:
                await raw.publish(b.channel("t1"), data)
            await got.until(len(sent))
            assert [(m.origin, m.seq, m.verified) for m in got.messages] == [want for _, want in sent]
            assert all(m.body == {} for m in got.messages if not m.verified)
            assert b.subs.duplicates == 2 and b.subs.dropped == 4 and b.subs.hints == 6
        finally:
            await b.close()
            await raw.aclose()

    asyncio.run(scenario())


@pytest_redis
def test_a_redis_restart_mid_stream_subscribers_recover_without_duplicates(redis_server: RedisServer) -> None:
    async def scenario() -> None:
        caught_up: list[frozenset[str]] = []
        a = redis_bus(redis_server.url, "worker-a", backoff=(0.05, 0.5))
        b = redis_bus(redis_server.url, "worker-b", backoff=(0.05, 0.5), on_reconnect=caught_up.append)
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
        b = redis_bus(redis_server.url, "worker-b", backoff=(0.05, 0.3), confirm_timeout=0.3)
        await b.start()
        try:
            got = Inbox()
            assert not await b.subscribe("t1", got)  # not confirmed: there is no Redis
            assert not b.connected
            with pytest.raises(BusUnavailable):
                await b.publish("t1", 1, {})
            redis_server.start()
            assert await b.wait_connected(10)
            a = redis_bus(redis_server.url, "worker-a")
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
    """Redis away for 2 s with backoff (0.05, 0.4): the waits between attempts double up to 0.4 s
    (+25 % jitter) and no further, so the bus is back within half a second of Redis (plus a
    connection). The waits are read from the bus, not from a wall clock a busy machine stretches."""
    async def scenario() -> None:
        b = redis_bus(redis_server.url, "worker-b", backoff=(0.05, 0.4))
        await b.start()
        try:
            assert await b.wait_connected(10)
            redis_server.kill()
            await asyncio.sleep(2.0)  # attempts fail meanwhile
            redis_server.start()
            assert await b.wait_connected(10)
            waits = list(b.waits)
            assert len(waits) >= 4, waits
            assert max(waits) <= 0.4 * 1.25, waits
            assert waits[0] <= 0.05 * 1.25 and max(waits) >= 0.4 * 0.75, waits  # from the first to the longest
            assert all(w <= v * 2 * 1.25 / 0.75 for v, w in itertools.pairwise(waits)), waits  # doubled at most
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
        url = first.stdout.strip()
        assert re.fullmatch(rf"redis://:[0-9a-f]{{32,}}@127\.0\.0\.1:{port}/0", url), url
        password = url.split("://:", 1)[1].split("@", 1)[0]
        pid = (tmp_path / "redis" / "redis.pid").read_text().strip()
        again = subprocess.run([str(ROOT / "scripts/start-redis")], env=env, capture_output=True, text=True,
                               timeout=60)
        assert again.stdout == first.stdout
        assert (tmp_path / "redis" / "redis.pid").read_text().strip() == pid  # the same server
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"PUBLISH ludoteca:t:x hello\r\n")  # without the password: refused
            assert s.recv(64).startswith(b"-NOAUTH")
            s.sendall(f"AUTH {password}\r\n".encode())
            assert s.recv(16).startswith(b"+OK")
        assert not os.stat(tmp_path / "redis" / "password").st_mode & 0o077  # only its owner reads it
        assert password not in " ".join(Path(f"/proc/{pid}/cmdline").read_text().split("\0"))
    finally:
        stop = subprocess.run([str(ROOT / "scripts/stop-redis")], env=env, capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0, stop.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    again = subprocess.run([str(ROOT / "scripts/stop-redis")], env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0  # nothing running: nothing to do
    try:  # started again in the same folder: the same password, the same URL
        restarted = subprocess.run([str(ROOT / "scripts/start-redis")], env=env, capture_output=True, text=True,
                                   timeout=60)
        assert restarted.returncode == 0 and restarted.stdout == first.stdout, restarted.stderr
    finally:
        subprocess.run([str(ROOT / "scripts/stop-redis")], env=env, capture_output=True, text=True, timeout=60)


def test_two_test_runs_get_services_of_their_own(tmp_path: Path) -> None:
    """scripts/test's services: each run a free port and a private folder for PostgreSQL and Redis
    (two runs on one machine never share them); LUDOTECA_PG_PORT etc. still choose them."""
    snippet = (f". {ROOT / 'scripts/common.sh'}\nPRIVATE_DIRS=()\nprivate_postgres\nprivate_redis\n"
               'echo "$LUDOTECA_PG_PORT $LUDOTECA_PG_DIR $LUDOTECA_REDIS_PORT $LUDOTECA_REDIS_DIR $PG_PORT $PG_DIR"\n'
               'echo "${PRIVATE_DIRS[@]+${PRIVATE_DIRS[@]}}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LUDOTECA_PG_", "LUDOTECA_REDIS_"))}
    runs = [subprocess.run(["bash", "-c", snippet], env=env, capture_output=True, text=True, timeout=30)
            for _ in range(2)]
    made = [run.stdout.splitlines()[1].split() for run in runs if len(run.stdout.splitlines()) == 2]
    try:
        assert all(run.returncode == 0 for run in runs) and len(made) == 2, [run.stderr for run in runs]
        (pg_port, pg_dir, redis_port, redis_dir, port_again, dir_again), other = \
            (run.stdout.splitlines()[0].split() for run in runs)
        assert (pg_port, pg_dir) == (port_again, dir_again)  # what start-postgres and pg_stop use
        assert pg_port != redis_port and {pg_port, redis_port}.isdisjoint({other[0], other[2]})
        assert {pg_dir, redis_dir}.isdisjoint({other[1], other[3]})
        for folder in (pg_dir, redis_dir):
            assert Path(folder).is_dir() and not Path(folder).stat().st_mode & 0o077
        assert made[0] == [pg_dir, redis_dir]  # removed when the run ends
        given = {**env, "LUDOTECA_PG_PORT": "5999", "LUDOTECA_PG_DIR": str(tmp_path / "pg"),
                 "LUDOTECA_REDIS_PORT": "6999", "LUDOTECA_REDIS_DIR": str(tmp_path / "redis")}
        chosen = subprocess.run(["bash", "-c", snippet], env=given, capture_output=True, text=True, timeout=30)
        pg, redis = tmp_path / "pg", tmp_path / "redis"
        assert chosen.stdout.splitlines() == [f"5999 {pg} 6999 {redis} 5999 {pg}", ""]
    finally:
        for folder in (f for dirs in made for f in dirs):
            if folder.startswith("/tmp/ludoteca-"):
                shutil.rmtree(folder, ignore_errors=True)


def test_under_ci_a_skipped_redis_or_nginx_test_fails(tmp_path: Path) -> None:
    from tests.test_scripts import _pytest

    sample = ("import pytest\n\n@pytest.mark.redis\ndef test_needs_redis():\n"
              "    pytest.skip('redis-server is missing')\n\n"
              "@pytest.mark.nginx\ndef test_needs_nginx():\n    pytest.skip('nginx is missing')\n")
    run = _pytest(tmp_path / "ci", "true", {"test_sample.py": sample})
    assert run.returncode == 1, run.stdout
    assert "CI=true: this redis test must run, but it would be skipped: redis-server is missing" in run.stdout
    assert "CI=true: this nginx test must run, but it would be skipped: nginx is missing" in run.stdout
