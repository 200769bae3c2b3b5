"""``ludoteca serve --workers N`` for real: N processes on one address, health and
readiness, refusals, graceful SIGTERM, readiness when Redis goes away.

Real PostgreSQL (``LUDOTECA_TEST_POSTGRES_URL``, a fresh database per test), real Redis
(``scripts/start-redis`` on a private port), real nginx, real processes and signals.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web import launch
from ludoteca.web.launch import SETTINGS_ENV
from tests.cluster import private_redis
from tests.test_proxy import free_port, running_nginx

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[1]
POSTGRES_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists()
                                                 else None)


def _need_postgres() -> str:
    if not POSTGRES_URL:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    return POSTGRES_URL


def _need_redis() -> None:
    if REDIS_SERVER is None:
        pytest.skip("redis-server is missing (apt-get install redis-server)")
    pytest.importorskip("redis")


def fresh_database(base_url: str) -> AbstractContextManager[str]:
    """A new empty database on the test server (no other test's tables get resumed); dropped after."""
    return launch.fresh_database(base_url, "ludo_serve")


class Server:
    """``ludoteca serve`` as a real process group (the supervisor and its workers)."""

    def __init__(self, folder: Path, *options: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"serve-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if k != SETTINGS_ENV}
        with self.log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ludoteca.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
                 "--data-dir", str(folder), *options], stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)

    def wait_ready(self, timeout: float = 40.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the server exited:\n{self.log.read_text()}"
            status, _ = get(self.base + "/readyz")
            if status == 200:
                return
            time.sleep(0.2)
        raise AssertionError(f"not ready within {timeout} s:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


@contextmanager
def serving(folder: Path, *options: str) -> Iterator[Server]:
    server = Server(folder, *options)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def get(url: str, timeout: float = 3.0) -> tuple[int, dict[str, Any]]:
    """(status, JSON body); status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except (OSError, ValueError):
        return 0, {}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", "serve", *args], capture_output=True, text=True,
                          timeout=60)


# --- refusals (no services needed) --------------------------------------------------------------

def test_several_workers_refuse_sqlite(tmp_path: Path) -> None:
    out = run_cli("--port", "0", "--data-dir", str(tmp_path), "--workers", "2", "--redis", "redis://127.0.0.1:1/0")
    assert out.returncode != 0
    assert "SQLite is for one process" in out.stderr
    out = run_cli("--port", "0", "--workers", "2", "--database", f"sqlite:///{tmp_path}/x.db",
                  "--redis", "redis://127.0.0.1:1/0")
    assert out.returncode != 0 and "SQLite is for one process" in out.stderr


def test_several_workers_refuse_without_redis(tmp_path: Path) -> None:
    out = run_cli("--port", "0", "--workers", "2", "--database", "postgresql+psycopg://u@127.0.0.1:1/x")
    assert out.returncode != 0
    assert "needs --redis" in out.stderr


def test_bad_values_are_refused(tmp_path: Path) -> None:
    for args, says in ((("--workers", "0"), "--workers must be 1 to 64"),
                       (("--redis", "http://x"), "--redis takes a URL"),
                       (("--drain", "-1"), "--drain is 0 to 60")):
        out = run_cli("--port", "0", "--data-dir", str(tmp_path), *args)
        assert out.returncode != 0 and says in out.stderr, (args, out.stderr)


def test_redis_without_the_workers_shared_secret_is_refused(tmp_path: Path) -> None:
    """Workers started one by one must share a secret for their bus messages (docs/web.md, 'The
    bus'): without one, or with one too short, or from a file that is not there, the command says so."""
    env = {k: v for k, v in os.environ.items() if k != "LUDOTECA_BUS_SECRET"}
    base = [sys.executable, "-m", "ludoteca.cli", "serve", "--port", "0", "--data-dir", str(tmp_path),
            "--database", "postgresql+psycopg://u@127.0.0.1:1/x", "--redis", "redis://127.0.0.1:1/0"]
    for extra, extra_env, says in (((), {}, "--redis needs the secret the workers share"),
                                   (("--bus-secret", "short"), {}, "at least 16 characters"),
                                   ((), {"LUDOTECA_BUS_SECRET": "short"}, "at least 16 characters"),
                                   (("--bus-secret-file", str(tmp_path / "absent")), {}, "cannot read the bus secret"),
                                   (("--bus-secret", "x" * 20, "--bus-secret-file", str(tmp_path / "absent")), {},
                                    "not both")):
        out = subprocess.run([*base, *extra], capture_output=True, text=True, timeout=60, env={**env, **extra_env})
        assert out.returncode != 0 and says in out.stderr, (extra, out.stderr)


def test_the_bus_secret_comes_from_a_file_the_environment_or_the_flag_or_is_generated_for_n_workers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from ludoteca.cli import UsageError
    from ludoteca.commands.serve import _bus_secret

    monkeypatch.delenv("LUDOTECA_BUS_SECRET", raising=False)

    def secret(workers: int = 1, redis: str | None = "redis://:pw@127.0.0.1:1/0", flag: str | None = None,
               file: str | None = None) -> str | None:
        return _bus_secret(argparse.Namespace(workers=workers, redis=redis, bus_secret=flag, bus_secret_file=file))

    generated = {secret(workers=2) for _ in range(3)}  # the workers of one command: a new random one each time
    assert len(generated) == 3 and all(s is not None and len(s) >= 32 for s in generated)
    assert secret(redis=None) is None and secret(workers=2, redis=None) is None  # no bus between processes
    with pytest.raises(UsageError, match="--redis needs the secret"):
        secret()  # a worker started alone must be given the one the others have
    (tmp_path / "secret").write_text("  from a file, long enough\n")
    assert secret(file=str(tmp_path / "secret")) == "from a file, long enough"
    assert secret(flag="from the command line") == "from the command line"
    monkeypatch.setenv("LUDOTECA_BUS_SECRET", "from the environment!")
    assert secret() == secret(workers=2) == "from the environment!"  # given: the N workers use it too
    assert secret(file=str(tmp_path / "secret")) == "from a file, long enough"  # a file or flag comes first


def test_one_worker_answers_health_and_readiness(tmp_path: Path) -> None:
    """The default (SQLite, one process) has the endpoints too; the body names no secret."""
    with serving(tmp_path) as server:
        status, body = get(server.base + "/healthz")
        assert status == 200 and body["status"] == "alive" and body["worker"].startswith("w")
        status, body = get(server.base + "/readyz")
        assert status == 200 and body == {"status": "ready", "worker": body["worker"]}


# --- several workers on PostgreSQL + Redis ------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.nginx
def test_two_workers_on_one_port_behind_nginx(tmp_path: Path) -> None:
    base_url = _need_postgres()
    _need_redis()
    with private_redis(tmp_path / "redis") as redis, fresh_database(base_url) as database, \
            serving(tmp_path, "--workers", "2", "--database", database, "--redis", redis.url) as server:
        seen: set[str] = set()
        deadline = time.monotonic() + 30
        # the kernel hands each new connection to a worker waiting in accept(): requests sent
        # together reach both
        with ThreadPoolExecutor(8) as pool:
            while len(seen) < 2 and time.monotonic() < deadline:
                for status, body in pool.map(lambda _: get(server.base + "/readyz"), range(16)):
                    assert status == 200, body
                    seen.add(body["worker"])
        assert len(seen) == 2, seen
        # the supervisor and two workers: three processes in the group
        pids = subprocess.run(["pgrep", "-g", str(server.proc.pid)], capture_output=True, text=True).stdout.split()
        assert len(pids) >= 3, pids
        # the whole thing behind nginx (the configuration of ludoteca.web.proxy)
        with running_nginx(tmp_path / "nginx", [f"127.0.0.1:{server.port}"]) as front:
            status, body = get(front + "/readyz")
            assert status == 200 and body["worker"] in seen
            with urllib.request.urlopen(front + "/api/games", timeout=5) as res:
                assert res.status == 200


def worker_pids(server: Server) -> list[int]:
    """The supervisor's worker processes (spawned by multiprocessing; not its resource tracker)."""
    out = subprocess.run(["pgrep", "-P", str(server.proc.pid)], capture_output=True, text=True).stdout.split()
    found = []
    for pid in out:
        with suppress(OSError):
            if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                found.append(int(pid))
    return found


@pytest.mark.postgres
@pytest.mark.redis
def test_a_killed_worker_is_restarted(tmp_path: Path) -> None:
    base_url = _need_postgres()
    _need_redis()
    with private_redis(tmp_path / "redis") as redis, fresh_database(base_url) as database, \
            serving(tmp_path, "--workers", "2", "--database", database, "--redis", redis.url) as server:
        workers = worker_pids(server)
        assert len(workers) == 2, workers
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            now = worker_pids(server)
            if workers[0] not in now and len(now) == 2:
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the killed worker was not replaced:\n{server.log.read_text()}")
        server.wait_ready()
        assert server.proc.poll() is None


@pytest.mark.postgres
@pytest.mark.redis
def test_sigterm_drains_then_exits_cleanly(tmp_path: Path) -> None:
    """SIGTERM to the supervisor: each worker's readiness goes 503 during the drain, an open
    websocket is closed with 1012 (the browser's cue to reconnect), and everything exits 0 in time."""
    client = pytest.importorskip("websockets.sync.client")
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    base_url = _need_postgres()
    _need_redis()
    with private_redis(tmp_path / "redis") as redis, fresh_database(base_url) as database:
        server = Server(tmp_path, "--workers", "2", "--database", database, "--redis", redis.url, "--drain", "4")
        try:
            server.wait_ready()
            req = urllib.request.Request(server.base + "/api/tables", method="POST",
                                         data=json.dumps({"game": "tohm", "players": 2, "sit": 0,
                                                          "name": "Ann"}).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=5) as res:
                table = json.loads(res.read())["id"]
            ws = client.connect(f"ws://127.0.0.1:{server.port}/ws/{table}", open_timeout=5)
            ws.__enter__()
            ws.recv(timeout=5)  # the snapshot
            started = time.monotonic()
            os.kill(server.proc.pid, signal.SIGTERM)
            # the supervisor passes the signal on within its polling period; from then on both
            # workers answer 503 for the 4 s of the drain (the window looked at below is 1.2 s: a
            # busy machine has nearly 3 s of margin)
            answers: list[tuple[float, int, dict[str, Any]]] = []
            while time.monotonic() - started < 8:
                status, body = get(server.base + "/readyz", timeout=1)
                answers.append((time.monotonic(), status, body))
                if status == 503:
                    break
                time.sleep(0.05)
            first = answers[-1][0]
            assert answers[-1][1] == 503, answers
            # a new websocket is refused at the handshake with 503 (nginx tries the next worker)
            refused = 0
            for _ in range(4):
                try:
                    with client.connect(f"ws://127.0.0.1:{server.port}/ws/{table}", open_timeout=2):
                        pass
                except InvalidStatus as exc:
                    assert exc.response.status_code == 503
                    refused += 1
            assert refused >= 2
            while time.monotonic() - first < 1.2:
                status, body = get(server.base + "/readyz", timeout=1)
                answers.append((time.monotonic(), status, body))
                time.sleep(0.05)
            late = [(status, body) for moment, status, body in answers if moment >= first + 0.3]
            assert late and all(status == 503 and body["reason"] == "shutting down" for status, body in late), late
            try:
                while True:
                    ws.recv(timeout=10)
            except ConnectionClosed as closed:
                assert closed.rcvd is not None and closed.rcvd.code == 1012, closed
            assert server.proc.wait(15) == 0, server.log.read_text()  # in time: the drain, then the handover
            # nothing of the group is left (multiprocessing's resource tracker ends right after)
            deadline = time.monotonic() + 5
            while subprocess.run(["pgrep", "-g", str(server.proc.pid)], capture_output=True).returncode != 1:
                assert time.monotonic() < deadline, "a process of the server is still running"
                time.sleep(0.1)
        finally:
            server.stop()


@pytest.mark.postgres
@pytest.mark.redis
def test_readiness_follows_redis(tmp_path: Path) -> None:
    base_url = _need_postgres()
    _need_redis()
    secret = tmp_path / "bus-secret"
    secret.write_text("a secret the workers share\n")
    with private_redis(tmp_path / "redis") as redis, fresh_database(base_url) as database, \
            serving(tmp_path, "--database", database, "--redis", redis.url, "--bus-secret-file", str(secret)) as server:
        assert get(server.base + "/readyz")[0] == 200
        redis.stop()
        # an answer (not a hang: the check gives Redis health.CHECK_TIMEOUT); no wall-clock bound here,
        # which a busy machine could stretch
        status, body = get(server.base + "/readyz", timeout=15)
        assert status == 503 and body["reason"].startswith("redis"), body
        assert "127.0.0.1" not in json.dumps(body) and "postgres" not in json.dumps(body)
        assert get(server.base + "/healthz")[0] == 200  # alive, only not ready
        redis.start()
        deadline = time.monotonic() + 10
        while get(server.base + "/readyz")[0] != 200:
            assert time.monotonic() < deadline, "still not ready with Redis back"
            time.sleep(0.2)
