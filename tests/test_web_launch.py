"""The real server launched as a subprocess, as the browser tests and the load benchmark do."""

from __future__ import annotations

import json
import urllib.request

import pytest

from ludoteca.web.launch import running_server


def test_running_server_answers_then_stops(tmp_path) -> None:
    with running_server(str(tmp_path)) as base:
        assert base.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{base}/api/games", timeout=10) as res:
            names = {g["name"] for g in json.load(res)["games"]}
        assert {"exactly", "tri", "tohm", "exagon"} <= names
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/api/games", timeout=2)


def test_a_server_that_cannot_start_says_why(tmp_path) -> None:
    with pytest.raises(RuntimeError, match="did not start") as info, \
            running_server(str(tmp_path), "--database", "nonsense"):
        pass
    assert "nonsense" in str(info.value)
