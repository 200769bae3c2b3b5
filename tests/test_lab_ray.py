"""``--backend ray --address ADDR``: an address where no Ray cluster answers gives a clear
error within ``--connect-timeout`` seconds instead of hanging forever."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray")

LUDOTECA = [sys.executable, "-m", "ludoteca.cli"]
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1", "COLUMNS": "200", "RAY_USAGE_STATS_ENABLED": "0"}


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def lab(address: str, timeout: str, out: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = subprocess.run([*LUDOTECA, "lab", "tohm", "--players", "2", "--games", "4", "--backend", "ray",
                           "--address", address, "--connect-timeout", timeout, "--out", str(out), "--no-progress",
                           "--no-report"], capture_output=True, text=True, timeout=90, env=ENV)
    return done, time.monotonic() - start


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A loopback port that accepts connections and never answers (no Ray there). 127.0.0.2,
    not 127.0.0.1: Ray replaces 127.0.0.1 by the machine's own address."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.2", 0))
    server.listen(16)
    server.settimeout(0.2)
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        deadline = time.monotonic() + 120  # stops by itself whatever happens
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.2:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for c in held:
            c.close()
        server.close()


@pytest.mark.timeout(120)
def test_dead_loopback_address_fails_fast(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port('127.0.0.1')}"
    done, seconds = lab(address, "3", tmp_path / "dead")
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip().splitlines()
    assert err[-1].startswith(f"ludoteca: error: cannot reach Ray at {address}")
    assert "Traceback" not in done.stderr and seconds < 30


@pytest.mark.timeout(120)
def test_an_address_that_never_answers_times_out(tmp_path: Path, silent_listener: str) -> None:
    done, seconds = lab(silent_listener, "3", tmp_path / "silent")
    assert done.returncode == 2, done.stderr
    assert (f"cannot reach Ray at {silent_listener}: no Ray cluster answered within 3 s"
            in done.stderr), done.stderr
    assert "--connect-timeout" in done.stderr and "Traceback" not in done.stderr
    assert 3 <= seconds < 40


@pytest.mark.parametrize(("args", "message"), [
    (["--connect-timeout", "0", "--backend", "ray", "--address", "127.0.0.1:1"], "must be a number of seconds"),
    (["--connect-timeout", "abc"], "invalid number of seconds"),
    (["--connect-timeout", "5"], "--connect-timeout is for --backend ray --address"),
])
def test_bad_connect_timeout(args: list[str], message: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    from ludoteca.cli import main

    code = main(["lab", "tohm", "--players", "2", *args, "--out", str(tmp_path / "x"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
