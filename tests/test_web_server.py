"""The server's answers to bad input and abuse, against a real ``ludoteca serve`` subprocess on loopback."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.launch import running_server

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
ws_client = pytest.importorskip("websockets.sync.client")

pytestmark = pytest.mark.timeout(180)


def grid(rows: int, cols: int) -> list[list[int]]:
    return [[3 + (r + c) % 4 for c in range(cols)] for r in range(rows)]


def recv_until(ws: Any, kind: str, limit: int = 200) -> dict[str, Any]:
    for _ in range(limit):
        message = json.loads(ws.recv(timeout=10))
        if message["type"] == kind:
            return message
    raise AssertionError(f"no {kind} message came")


def test_a_huge_layout_is_refused_at_once_and_the_server_stays_responsive(tmp_path: Path) -> None:
    with running_server(str(tmp_path)) as base, httpx.Client(base_url=base, timeout=10) as http:
        made = http.post("/api/tables", json={"game": "tohm", "players": 2, "sit": 0, "name": "Ann"}).json()
        with ws_client.connect(base.replace("http", "ws") + f"/ws/{made['id']}") as ws:
            recv_until(ws, "snapshot")
            pings: list[float] = []
            stop = threading.Event()

            def ping_all_along() -> None:  # another table's client, all the while
                while not stop.is_set():
                    started = time.perf_counter()
                    ws.send(json.dumps({"type": "ping"}))
                    recv_until(ws, "pong")
                    pings.append(time.perf_counter() - started)
                    time.sleep(0.05)

            pinger = threading.Thread(target=ping_all_along)
            pinger.start()
            try:
                for side in (80, 120):  # 2 GB and a 5.5 s freeze; 38 s for 120x120 (the issue)
                    started = time.perf_counter()
                    res = http.post("/api/tables", json={"game": "tohm", "players": 2,
                                                          "options": {"layout": grid(side, side)}})
                    took = time.perf_counter() - started
                    assert res.status_code == 400 and res.json()["error"] == "bad_options", res.text
                    assert "layout" in res.json()["message"]
                    assert took < 3.0, f"{side}x{side} took {took:.2f} s to refuse"  # was 5.5 s and 38 s
                time.sleep(0.3)
            finally:
                stop.set()
                pinger.join()
            # (a margin for a busy machine: the freeze this guards against lasted 5.5 s and more)
            assert pings and max(pings) < 3.0, f"the other table waited {max(pings):.2f} s"
        assert http.get("/api/games").status_code == 200


def test_bad_json_gets_an_error_and_the_websocket_stays_open(tmp_path: Path) -> None:
    with running_server(str(tmp_path)) as base, httpx.Client(base_url=base, timeout=10) as http:
        for body in ("[" * 5000 + "]" * 5000, "1" * 4301):
            res = http.post("/api/tables", content=body, headers={"Content-Type": "application/json"})
            assert res.status_code == 400 and res.json()["error"] == "bad_json"
        made = http.post("/api/tables", json={"game": "tohm", "players": 2, "sit": 0, "name": "Ann"}).json()
        for route in ("", "/record", "/replay"):
            assert http.get(f"/api/tables/ab%00cd{route}").status_code == 404
        with ws_client.connect(base.replace("http", "ws") + f"/ws/{made['id']}") as ws:
            recv_until(ws, "snapshot")
            for text in ("[" * 5000 + "]" * 5000, '{"type": "action", "action": {"place": [' + "7" * 4301 + "]}}"):
                ws.send(text)
                assert recv_until(ws, "error")["code"] == "bad_json"
            ws.send(json.dumps({"type": "ping", "ref": "still here"}))
            assert recv_until(ws, "pong")["ref"] == "still here"


def test_limits_set_on_the_command_line(tmp_path: Path) -> None:
    options = ("--create-burst", "2", "--create-rate", "1", "--max-spectators", "1")
    with running_server(str(tmp_path), *options) as base, httpx.Client(base_url=base, timeout=10) as http:
        codes = [http.post("/api/tables", json={"game": "tohm", "players": 2}).status_code for _ in range(3)]
        assert codes == [201, 201, 429]
        table = http.get("/api/tables").json()["tables"][0]["id"]
        url = base.replace("http", "ws") + f"/ws/{table}"
        with ws_client.connect(url) as first:
            recv_until(first, "snapshot")
            with ws_client.connect(url) as second:
                second.send(json.dumps({"type": "ping"}))
                assert recv_until(second, "error")["code"] == "spectators_full"


def test_serve_refuses_bad_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ludoteca.cli import main

    for flag, value in [("--max-spectators", "-1"), ("--create-rate", "nan"), ("--create-burst", "0"),
                        ("--waiting-ttl", "-5"), ("--resume-limit", "-1")]:
        assert main(["serve", flag, value, "--data-dir", str(tmp_path)]) == 2
        assert flag in capsys.readouterr().err
