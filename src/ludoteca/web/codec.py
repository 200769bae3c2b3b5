"""The server's JSON text codec: what every websocket message and stored action is encoded with.

:func:`dumps` gives compact JSON text (no spaces), with orjson when it is installed (the ``web``
extra; several times faster than the standard library on the server's hot path: each broadcast's
header, each log entry's events, each stored action), and the standard library's ``json``
otherwise (or when the environment variable ``LUDOTECA_CODEC`` is ``json``: the benchmarks'
before/after switch). The two write the same JSON values: keys that are not strings (an ``int`` seat) become
strings, floats their shortest form; orjson writes non-ASCII characters as UTF-8 instead of
``\\u`` escapes, which is the same JSON text once read.
"""

from __future__ import annotations

import json
import os
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - the web extra installs it
    orjson = None  # type: ignore[assignment]

if os.environ.get("LUDOTECA_CODEC") == "json":  # pragma: no cover - benchmarks only
    orjson = None  # type: ignore[assignment]


def _dumps_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


if orjson is not None:
    _OPTIONS = orjson.OPT_NON_STR_KEYS

    def dumps(value: Any) -> str:
        """``value`` as compact JSON text."""
        try:
            return orjson.dumps(value, option=_OPTIONS).decode()
        except TypeError:  # e.g. an int beyond 64 bits: the standard library writes it
            return _dumps_json(value)
else:  # pragma: no cover
    dumps = _dumps_json
