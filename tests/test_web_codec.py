"""The server's JSON codec (web/codec.py) writes the same JSON values as the standard library."""

from __future__ import annotations

import json

import pytest

from ludoteca.web import codec

VALUES = [
    {"type": "update", "seq": 3, "you": None, "legal": [{"move": [1, 2]}], "ok": True},
    {"1": "seat keys as text", 2: "an int key becomes text", "é": "non-ASCII ✓"},
    [0.1, 1e-05, 3.0, -0.0, 123456789.125, 2**63 - 1, -(2**63)],
    {"big": 2**70},
    [],
    "",
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_reads_back_as_the_standard_library_writes_it(value: object) -> None:
    text = codec.dumps(value)
    assert isinstance(text, str)
    assert json.loads(text) == json.loads(json.dumps(value))


def test_dumps_is_compact() -> None:
    assert codec.dumps({"a": [1, 2], "b": {"c": None}}) == '{"a":[1,2],"b":{"c":null}}'


def test_dumps_refuses_what_json_cannot_write() -> None:
    with pytest.raises(TypeError):
        codec.dumps({"a": object()})
