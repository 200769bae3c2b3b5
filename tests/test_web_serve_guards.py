"""What a lone ``ludoteca serve`` exposed to friends must withstand, against the real server process:
forwarded headers trusted only from the proxies named (``--forwarded-allow-ips``), request heads
that never finish closed within a bound (``--head-timeout``), and JSON logs (``--log-format json``)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from ludoteca.web.launch import running_server, server_process  # noqa: E402

pytestmark = pytest.mark.timeout(120)

TABLE = {"game": "tohm", "players": 2, "sit": 0, "name": "Ann"}


def _signup(http: Any, name: str, password: str) -> None:
    res = http.post("/api/signup", json={"name": name, "password": password})
    assert res.status_code == 201, res.text
    http.cookies.clear()


def test_a_local_client_cannot_pick_its_address_with_x_forwarded_for(tmp_path: Path) -> None:
    """Without --forwarded-allow-ips a client on loopback (where uvicorn would trust the header by
    default) names a new address in each request: the limits still count its own address."""
    with running_server(str(tmp_path), "--create-burst", "2", "--create-rate", "0") as base, \
            httpx.Client(base_url=base, timeout=10) as http:
        made = [http.post("/api/tables", json=TABLE, headers={"X-Forwarded-For": f"203.0.113.{k}"}).status_code
                for k in range(4)]
        assert made == [201, 201, 429, 429]
        _signup(http, "Ann", "correct horse 9")
        tries = [http.post("/api/login", json={"name": "Ann", "password": "guess guess"},
                           headers={"X-Forwarded-For": f"198.51.100.{k}"}).status_code for k in range(8)]
        assert tries == [401] * 5 + [429] * 3  # five failures for Ann from this one address, then refused


def test_a_named_proxy_is_trusted_for_the_clients_address(tmp_path: Path) -> None:
    """With --forwarded-allow-ips 127.0.0.1 (nginx on this machine) each forwarded client has its own
    bucket, as behind the generated proxy setup."""
    with running_server(str(tmp_path), "--create-burst", "1", "--create-rate", "0",
                        "--forwarded-allow-ips", "127.0.0.1") as base, httpx.Client(base_url=base, timeout=10) as http:
        made = [http.post("/api/tables", json=TABLE, headers={"X-Forwarded-For": f"203.0.113.{k}"}).status_code
                for k in range(3)]
        assert made == [201, 201, 201]
        again = http.post("/api/tables", json=TABLE, headers={"X-Forwarded-For": "203.0.113.0"})
        assert again.status_code == 429


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """True when the server closes ``sock`` (end of stream, or a reset) within ``seconds``."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_half_sent_request_heads_are_closed_within_the_bound(tmp_path: Path) -> None:
    """50 connections each send part of a request head and then nothing: all are closed within
    --head-timeout (1 s here) plus a margin, while complete requests are answered meanwhile. An
    endless head is cut at its size limit too."""
    with running_server(str(tmp_path), "--head-timeout", "1") as base, httpx.Client(base_url=base, timeout=10) as http:
        host, port = base.removeprefix("http://").split(":")
        slow = []
        for k in range(50):
            sock = socket.create_connection((host, int(port)), timeout=5)
            sock.sendall(b"GET /api/games HTTP/1.1\r\nHost: x\r\nX-Slow: " + str(k).encode())
            slow.append(sock)
        silent = socket.create_connection((host, int(port)), timeout=5)  # sends nothing at all
        started = time.monotonic()
        assert http.get("/api/games").status_code == 200
        assert all(_closed_within(s, 6.0) for s in [*slow, silent])
        assert time.monotonic() - started < 8.0
        for sock in [*slow, silent]:
            sock.close()
        with socket.create_connection((host, int(port)), timeout=5) as huge:
            huge.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            try:
                for _ in range(40):
                    huge.sendall(b"X-Pad: " + b"a" * 4000 + b"\r\n")
            except OSError:
                pass  # closed by the server while sending: what is expected
            assert _closed_within(huge, 3.0)
        assert http.get("/api/games").status_code == 200


def test_json_logs_give_one_line_per_request(tmp_path: Path) -> None:
    with server_process(str(tmp_path), "--log-format", "json") as (base, _proc, output), \
            httpx.Client(base_url=base, timeout=10) as http:
        assert http.get("/api/games").status_code == 200
        assert http.get("/nowhere").status_code == 404
        deadline = time.monotonic() + 10
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline and len(found) < 2:
            found = []
            for line in list(output):
                if line.startswith("{"):
                    record = json.loads(line)
                    if record.get("logger") == "uvicorn.access":
                        found.append(record)
            time.sleep(0.05)
        assert [(r["method"], r["path"], r["status"]) for r in found[:2]] == [("GET", "/api/games", 200),
                                                                              ("GET", "/nowhere", 404)]
        assert all(r["level"] == "info" and r["time"].endswith("+00:00") and r["client"].startswith("127.0.0.1")
                   for r in found)


def test_bad_guard_values_are_refused(tmp_path: Path) -> None:
    import subprocess
    import sys

    for args, says in ((("--forwarded-allow-ips", "nginx.local"), "--forwarded-allow-ips takes addresses"),
                       (("--head-timeout", "0"), "--head-timeout and --keep-alive"),
                       (("--keep-alive", "0"), "--head-timeout and --keep-alive"),
                       (("--log-format", "xml"), "invalid choice")):
        out = subprocess.run([sys.executable, "-m", "ludoteca.cli", "serve", "--port", "0", "--data-dir",
                              str(tmp_path), *args], capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and says in out.stderr, (args, out.stderr)
