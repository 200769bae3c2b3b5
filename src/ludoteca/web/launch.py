"""Start the application: :func:`build_app` from ``ludoteca serve``'s settings, :func:`factory` for
each process of ``ludoteca serve --workers N`` (uvicorn imports ``ludoteca.web.launch:factory`` in
every worker; the settings come from the environment variable :data:`SETTINGS_ENV`), and
:func:`running_server` to run ``ludoteca serve`` as a real subprocess and learn its address (tests
and benchmarks)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

SETTINGS_ENV = "LUDOTECA_SERVE_SETTINGS"
"""JSON: the keyword arguments of :func:`build_app`, set by ``ludoteca serve`` for its workers."""


def build_app(settings: Mapping[str, Any]) -> Any:
    """The application for ``settings`` (``create_app``'s keyword arguments, ``limits`` as a dict,
    plus ``redis``: a Redis URL or None, and ``drain``: seconds of draining on SIGTERM). Each call
    is a new worker with its own id (health.py)."""
    from ludoteca.web import health
    from ludoteca.web.app import create_app
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
    cmd = [sys.executable, "-m", "ludoteca.cli", "serve", "--host", "127.0.0.1", "--port", "0",
           "--data-dir", data_dir, *options]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    seen: list[str] = []
    base = None
    deadline = time.monotonic() + timeout
    while base is None and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = _URL.search(line)
        base = m.group(1) if m else None
    try:
        if base is None:
            raise RuntimeError("the server did not start:\n" + "".join(seen[-20:]))
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
