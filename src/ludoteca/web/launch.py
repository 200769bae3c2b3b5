"""Run ``ludoteca serve`` as a real subprocess and learn its address (tests and benchmarks)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

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
