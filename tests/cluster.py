"""A real cluster for the end-to-end tests of workers, PostgreSQL, Redis, nginx.

- :func:`fresh_database`: a new database on the test PostgreSQL server
  (``LUDOTECA_TEST_POSTGRES_URL``), dropped at the end, so no other test's tables are resumed.
- :func:`private_redis`: a Redis server of its own (``scripts/start-redis`` with another port and
  folder; it asks for a password, which its URL carries), so a test may stop and restart it
  without disturbing anyone else.
- :class:`Worker`: one single-process ``ludoteca serve --database … --redis …`` on a fixed
  loopback port, with its output in a log file and the cluster's bus secret in its environment
  (``LUDOTECA_BUS_SECRET``); :meth:`Worker.kill9` sends SIGKILL for real, :meth:`Worker.start`
  starts it again on the same port.
- :class:`Cluster`: the workers and a real nginx in front (``ludoteca.web.proxy``), plus what
  the tests ask the database: the lease owner of a table, its stored record.
- :class:`Player`: a human-like websocket client (a thread) that plays a seat with random
  legal moves from a seeded generator, reconnects when its worker dies, and remembers every log
  entry it was shown and every move it sent.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web import launch
from tests.test_proxy import free_port, running_nginx

ROOT = Path(__file__).resolve().parents[1]
POSTGRES_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
REDIS_SERVER = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists()
                                                 else None)
_URL = re.compile(r"(http://[\d.]+:\d+)/")


def need_services() -> None:
    """Skip (a failure under CI, tests/ci_required.py) when PostgreSQL or Redis is missing."""
    if not POSTGRES_URL:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    if REDIS_SERVER is None:
        pytest.skip("redis-server is missing (apt-get install redis-server)")
    pytest.importorskip("psycopg")
    pytest.importorskip("redis")
    pytest.importorskip("websockets")


# --- services ---------------------------------------------------------------------------------

def fresh_database(base_url: str) -> contextlib.AbstractContextManager[str]:
    """A new, empty database on ``base_url``'s server; its SQLAlchemy URL. Dropped at the end."""
    return launch.fresh_database(base_url, "ludo_cluster")


class Redis:
    """A private Redis server, started and stopped with the project's scripts. ``url`` carries its
    password (``redis://:PASSWORD@127.0.0.1:PORT/0``), the same after a stop and a start."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.env = {**os.environ, "LUDOTECA_REDIS_PORT": str(self.port), "LUDOTECA_REDIS_DIR": str(folder)}
        self.url = ""

    def start(self) -> None:
        out = subprocess.run([str(ROOT / "scripts/start-redis")], env=self.env, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 0, out.stderr
        url = out.stdout.strip()
        assert re.fullmatch(rf"redis://:[0-9a-f]{{32,}}@127\.0\.0\.1:{self.port}/0", url), url
        assert self.url in ("", url), "the password changed across a restart"
        self.url = url

    @property
    def password(self) -> str:
        return self.url.split("://:", 1)[1].split("@", 1)[0]

    def stop(self) -> None:
        subprocess.run([str(ROOT / "scripts/stop-redis")], env=self.env, check=True, timeout=30)


@contextmanager
def private_redis(folder: Path) -> Iterator[Redis]:
    redis = Redis(folder)
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()


# --- workers ----------------------------------------------------------------------------------

class Worker:
    """One ``ludoteca serve`` process (a single worker) on a fixed port; ``secret``: the bus secret
    it shares with the other workers (given through ``LUDOTECA_BUS_SECRET``)."""

    def __init__(self, name: str, folder: Path, database: str, redis: str, *options: str, secret: str) -> None:
        self.name = name
        self.folder = folder
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.base = f"http://{self.address}"
        self.ws_base = f"ws://{self.address}"
        self.cmd = [sys.executable, "-m", "ludoteca.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port),
                    "--data-dir", str(folder), "--database", database, "--redis", redis, *options]
        self.env = {**os.environ, "LUDOTECA_BUS_SECRET": secret}
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.ident: str | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def log(self) -> Path:
        return self.folder / f"{self.name}.log"

    def start(self, timeout: float = 30.0) -> None:
        """Start the process and wait until it serves (its address printed, then /api/games answers)."""
        assert self.proc is None or self.proc.poll() is not None
        self.starts += 1
        with self.log.open("a") as out:
            out.write(f"\n--- start {self.starts} ---\n")
            out.flush()
            self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT, cwd=str(ROOT), env=self.env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self._ready():
                self.ident = self._ident()
                return
            time.sleep(0.05)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"worker {self.name} did not start (a cluster part missing?):\n{tail}")

    def _ready(self) -> bool:
        """``/readyz`` answers 200 (database and Redis reachable); ``/api/games`` where there is no
        ``/readyz``."""
        for path in ("/readyz", "/api/games"):
            try:
                with urllib.request.urlopen(f"{self.base}{path}", timeout=2) as res:
                    return bool(res.status == 200)
            except urllib.error.HTTPError as exc:
                if exc.code != 404:
                    return False
            except OSError:
                return False
        return False

    def _ident(self) -> str | None:
        """The worker id it says it has (``/healthz``'s ``worker``), if it says one."""
        try:
            with urllib.request.urlopen(f"{self.base}/healthz", timeout=2) as res:
                data = json.load(res)
            return str(data.get("worker")) if isinstance(data, dict) and data.get("worker") else None
        except (OSError, ValueError, urllib.error.URLError):
            return None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        """SIGKILL, for real: no shutdown, no lease released."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def owns(self, owner: str) -> bool:
        """Whether the lease owner id ``owner`` is this worker (its own id, else its port or pid in it)."""
        if self.ident is not None and owner == self.ident:
            return True
        words = set(re.split(r"[^0-9A-Za-z]+", owner))
        return str(self.port) in words or (self.pid is not None and str(self.pid) in words)


class Cluster:
    """``n`` workers on one PostgreSQL database and one Redis, and nginx in front."""

    def __init__(self, stack: ExitStack, folder: Path, n: int = 2, *options: str, nginx: bool = True) -> None:
        assert POSTGRES_URL is not None
        self.folder = folder
        self.database = stack.enter_context(fresh_database(POSTGRES_URL))
        self.redis = stack.enter_context(private_redis(folder / "redis"))
        self.bus_secret = secrets.token_urlsafe(24)
        self.workers = [Worker(f"w{i + 1}", folder / f"w{i + 1}", self.database, self.redis.url, *options,
                               secret=self.bus_secret) for i in range(n)]
        for w in self.workers:
            stack.callback(w.stop)
            w.start()
        self.base = stack.enter_context(running_nginx(folder / "nginx", [w.address for w in self.workers])) \
            if nginx else self.workers[0].base
        from sqlalchemy import create_engine

        self.engine = create_engine(self.database, pool_pre_ping=True)
        stack.callback(self.engine.dispose)

    @property
    def ws_base(self) -> str:
        return self.base.replace("http://", "ws://")

    # --- HTTP -------------------------------------------------------------------------------
    def post(self, path: str, body: dict[str, Any], base: str | None = None) -> dict[str, Any]:
        req = urllib.request.Request((base or self.base) + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=20) as res:
            data: dict[str, Any] = json.load(res)
            return data

    def create(self, game: str, seats: list[dict[str, Any]], options: dict[str, Any] | None = None,
               base: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"game": game, "players": len(seats), "seats": seats, "sit": 0, "name": "Ann"}
        if options:
            body["options"] = options
        return self.post("/api/tables", body, base)

    def join(self, table: str, seat: int, name: str, base: str | None = None) -> str:
        return str(self.post(f"/api/tables/{table}/join", {"seat": seat, "name": name}, base)["token"])

    # --- the database -----------------------------------------------------------------------
    def lease_owner(self, table: str) -> str | None:
        """The worker id holding ``table``'s lease now (None: nobody, or no lease table yet)."""
        from sqlalchemy import text
        from sqlalchemy.exc import ProgrammingError

        try:
            with self.engine.connect() as conn:
                row = conn.execute(text("SELECT owner, expires_at FROM ludo_leases WHERE table_id = :t"),
                                   {"t": table}).first()
        except ProgrammingError:
            return None
        if row is None or row.owner is None or row.expires_at < time.time():
            return None
        return str(row.owner)

    def lease_holder(self, table: str, wait: float = 8.0) -> Worker:
        """The worker holding ``table``'s lease (waits up to ``wait`` seconds for one)."""
        deadline = time.monotonic() + wait
        owner = None
        while time.monotonic() < deadline:
            owner = self.lease_owner(table)
            if owner is not None:
                for w in self.workers:
                    if w.alive() and w.owns(owner):
                        return w
            time.sleep(0.1)
        raise AssertionError(f"table {table}: no live worker holds its lease (owner in ludo_leases: {owner!r}; "
                             f"workers: {[(w.name, w.ident, w.port, w.pid) for w in self.workers]})")

    def stored(self, table: str) -> tuple[str, list[int | None], list[dict[str, Any]], str, dict[str, Any]]:
        """``(game, seats of the actions, actions, status, options)`` as stored."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            row = conn.execute(text("SELECT game, status, options FROM ludo_tables WHERE id = :t"),
                               {"t": table}).one()
            rows = list(conn.execute(text("SELECT seq, seat, action FROM ludo_actions WHERE table_id = :t "
                                          "ORDER BY seq"), {"t": table}))
        assert [r.seq for r in rows] == list(range(len(rows))), f"table {table}: the stored seqs have a gap"
        return (row.game, [r.seat for r in rows], [json.loads(r.action) for r in rows], row.status,
                json.loads(row.options))

    def action_times(self, table: str) -> list[float]:
        """When each stored action of ``table`` was stored (the database's ``created_at``)."""
        from sqlalchemy import text

        with self.engine.connect() as conn:
            return [float(r.created_at) for r in conn.execute(
                text("SELECT created_at FROM ludo_actions WHERE table_id = :t ORDER BY seq"), {"t": table})]

    def n_actions(self, table: str) -> int:
        from sqlalchemy import text

        with self.engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM ludo_actions WHERE table_id = :t"),
                                    {"t": table}).scalar_one())


def replay(game: str, options: dict[str, Any], actions: list[dict[str, Any]]) -> tuple[Any, list[list[Any]]]:
    """The stored record replayed with the engine: the final state and each action's events."""
    from ludoteca.registry import load_game

    state = load_game(game, **options).new_initial_state()
    events = [list(state.apply_json(a)) for a in actions]
    return state, events


def without_elapsed(action: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if k != "elapsed"}


# --- a human-like client ----------------------------------------------------------------------

class Player(threading.Thread):
    """Plays ``seat`` of ``table`` over a websocket with random legal moves (seeded), reconnecting
    (to ``urls`` in turn) when the connection drops. ``think``: seconds before each move."""

    def __init__(self, urls: list[str], table: str, token: str | None, seat: int | None, seed: int,
                 think: tuple[float, float] = (0.05, 0.3), play: bool = True,
                 stall: tuple[float, float] = (0.0, 0.0), unclocked_only: bool = False) -> None:
        super().__init__(daemon=True, name=f"player-{table}-{seat}")
        self.urls, self.table, self.token, self.seat, self.play = urls, table, token, seat, play
        self.rng = random.Random(seed)
        self.think = think
        self.stall = stall
        self.unclocked_only = unclocked_only
        """Moves only while no hourglass runs (EXAGON's opening), then lets the hourglass play."""
        """(chance, seconds): now and then the client thinks that long instead (lets an hourglass run out)."""
        self.seen: dict[int, dict[str, Any]] = {}
        """Every log entry shown to this client, by index (the acknowledged actions)."""
        self.sent: list[tuple[int, dict[str, Any]]] = []
        self.errors: list[dict[str, Any]] = []
        self.last: dict[str, Any] | None = None
        self.reconnects = 0
        self.halt = threading.Event()
        self.paused = threading.Event()
        """While set, the client sends no move (it still reads everything)."""
        self.changed = threading.Condition()
        self.failure: BaseException | None = None
        self.ws: Any = None
        self.game = ""

    @property
    def seq(self) -> int:
        return int(self.last["seq"]) if self.last else -1

    @property
    def over(self) -> bool:
        return self.last is not None and self.last.get("status") not in ("playing", "waiting")

    def run(self) -> None:
        from websockets.exceptions import WebSocketException

        try:
            k = 0
            while not self.halt.is_set() and not self.over:
                url = self.urls[k % len(self.urls)]
                k += 1
                with contextlib.suppress(OSError, TimeoutError, WebSocketException):  # the worker died
                    self._session(url)
                if not self.halt.is_set() and not self.over:
                    self.reconnects += 1
                    time.sleep(0.2)
        except BaseException as exc:
            self.failure = exc

    def _session(self, url: str) -> None:
        from websockets.sync.client import connect

        with connect(f"{url}/ws/{self.table}", open_timeout=5, close_timeout=1,
                     additional_headers={"Origin": url.replace("ws://", "http://")}) as ws:
            self.ws = ws
            if self.token is not None:
                ws.send(json.dumps({"type": "auth", "token": self.token}))
            sent_at = -1
            while not self.halt.is_set():
                try:
                    text = ws.recv(timeout=0.5)
                except TimeoutError:
                    text = None
                if text is not None:
                    self._take(json.loads(text))
                    if self.over:
                        return
                last = self.last
                if (self.play and not self.paused.is_set() and last is not None and self.seat is not None
                        and last.get("you") == self.seat and last.get("to_move") == self.seat
                        and last.get("legal") and sent_at != last["seq"]
                        and not (self.unclocked_only and last.get("clock") is not None)):
                    sent_at = last["seq"]
                    chance, seconds = self.stall
                    time.sleep(seconds if self.rng.random() < chance else self.rng.uniform(*self.think))
                    action = self.rng.choice(last["legal"])
                    self.sent.append((sent_at, action))
                    ws.send(json.dumps({"type": "action", "action": action, "seq": sent_at}))

    def _take(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "error":
            self.errors.append(msg)
            return
        if kind not in ("snapshot", "update"):
            return
        if kind == "snapshot" and self.token is not None and msg.get("you") != self.seat:
            return  # the spectator's snapshot before the auth
        for entry in msg.get("log", []):
            i = int(entry["i"])
            before = self.seen.get(i)
            if before is not None and before.get("seat") != entry.get("seat"):
                raise AssertionError(f"table {self.table}: entry {i} was shown as {before} and later as {entry}")
            self.seen[i] = entry
        with self.changed:
            if self.last is None or msg["seq"] >= self.last["seq"] or kind == "snapshot":
                self.last = msg
            self.changed.notify_all()

    def wait_seq(self, seq: int, timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while self.seq < seq and not self.over:
                left = deadline - time.monotonic()
                if left <= 0 or self.failure is not None:
                    raise AssertionError(f"table {self.table}, seat {self.seat} on {self.urls[0]}: seq {seq} not "
                                         f"seen within {timeout:g} s (seen {self.seq}; failure {self.failure!r})")
                self.changed.wait(min(left, 0.2))
        assert self.last is not None
        return self.last

    def send(self, message: dict[str, Any]) -> None:
        """Send ``message`` on the current connection (the race test's own moves)."""
        self.ws.send(json.dumps(message))

    def stop(self) -> None:
        self.halt.set()
        self.join(10)
