"""Start the application: :func:`build_app` from ``ludoteca serve``'s settings, :func:`factory` for
each process of ``ludoteca serve --workers N`` (uvicorn imports ``ludoteca.web.launch:factory`` in
every worker; the settings come from the environment variable :data:`SETTINGS_ENV`), and
:func:`running_server` to run ``ludoteca serve`` as a real subprocess and learn its address (tests
and benchmarks), :func:`fresh_database` for a new database of their own on a PostgreSQL server."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

SETTINGS_ENV = "LUDOTECA_SERVE_SETTINGS"
"""JSON: the keyword arguments of :func:`build_app`, set by ``ludoteca serve`` for its workers."""


def build_app(settings: Mapping[str, Any]) -> Any:
    """The application for ``settings`` (``create_app``'s keyword arguments, ``limits`` as a dict,
    plus ``redis``: a Redis URL or None, ``bus_secret``: the workers' shared secret for the bus
    (bus.py), and ``drain``: seconds of draining on SIGTERM). Each call is a new worker with its
    own id (health.py)."""
    from ludoteca.web.app import create_app
    from ludoteca.web.hub import health
    from ludoteca.web.limits import ServerLimits

    options = dict(settings)
    redis_url = options.pop("redis", None)
    drain = float(options.pop("drain", health.DRAIN))
    if isinstance(options.get("limits"), Mapping):
        options["limits"] = ServerLimits(**options["limits"])
    app = create_app(**options, redis_url=redis_url, worker_id=health.new_worker_id())
    found = health.health_of(app)
    found.redis_url = redis_url
    found.drain = drain
    return app


def factory() -> Any:
    """uvicorn's application factory for one worker of ``ludoteca serve --workers N``."""
    return build_app(json.loads(os.environ[SETTINGS_ENV]))

_URL = re.compile(r"(http://[\d.]+:\d+)/")


@contextmanager
def running_server(data_dir: str, *options: str, timeout: float = 30.0) -> Iterator[str]:
    """Start ``ludoteca serve`` on a free loopback port with ``options``; yield its base URL
    (``http://127.0.0.1:PORT``), and stop it when the block ends.

    Raises RuntimeError with the server's own output when it does not start within ``timeout``.
    """
    with server_process(data_dir, *options, timeout=timeout) as (base, _proc, _output):
        yield base


@contextmanager
def server_process(data_dir: str, *options: str,
                   timeout: float = 30.0) -> Iterator[tuple[str, subprocess.Popen[str], collections.deque[str]]]:
    """:func:`running_server`, yielding (base URL, the process, its last 200 lines of output).
    The output is read all along by a thread (a server that logs much never blocks on a full pipe)."""
    cmd = [sys.executable, "-m", "ludoteca.cli", "serve", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", data_dir, *options]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    seen: collections.deque[str] = collections.deque(maxlen=200)
    base = None
    deadline = time.monotonic() + timeout
    while base is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = _URL.search(line)
        base = m.group(1) if m else None
    reader = threading.Thread(target=_keep_reading, args=(proc.stdout, seen), daemon=True)
    reader.start()
    try:
        if base is None:
            raise RuntimeError("the server did not start:\n" + "".join(list(seen)[-20:]))
        yield base, proc, seen
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _keep_reading(stream: Any, lines: collections.deque[str]) -> None:
    for line in stream:
        lines.append(line)


@contextmanager
def fresh_database(base_url: str, prefix: str = "ludo_tmp") -> Iterator[str]:
    """A new, empty database named ``PREFIX_<random>`` on the PostgreSQL server of ``base_url``
    (a SQLAlchemy URL); yields its URL and drops it (closing its connections) at the end. Tests
    and benchmarks use it so that no other run's tables are resumed."""
    import psycopg
    from sqlalchemy.engine import make_url

    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,30}", prefix):
        raise ValueError("a database prefix is up to 31 lowercase letters, digits and '_'")
    url = make_url(base_url)
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = url.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
