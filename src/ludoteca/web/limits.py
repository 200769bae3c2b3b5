"""What the web server accepts from a client, checked before anything is built or stored.

- :func:`parse_json`: JSON text with bounded nesting and numbers (no huge integers, no NaN),
  so a request can never raise anything but :class:`BadInput`;
- :func:`valid_table_id`: table ids by format, before any database access;
- :func:`check_options`: a game's options against the web's bounds (no file paths, bounded
  grids and numbers), before the game is built;
- :class:`ClientBuckets`: a token bucket per client address (table creation);
- :class:`ServerLimits`: the limits ``ludoteca serve`` can set.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of arrays and objects a client may send."""
MAX_INT_DIGITS = 18
"""Longest integer (in digits) a client may send."""
MAX_NUMBER = 1_000_000
"""Largest absolute value of a numeric game option."""
MAX_OPTIONS_BYTES = 2048
"""Largest JSON size of a table's options."""
MAX_TEXT_OPTION = 32
"""Longest text value of an option whose values are words (e.g. a tie rule)."""
MAX_LAYOUT_SIDE = 10
"""Most rows and most columns of a grid option ``layout`` set from the browser (RULES.md: at least 3; no
more than the engine's own bound)."""
MAX_FILE_OPTION_BYTES = 16 * 1024
"""Largest JSON size of a designer's file sent as an option's value (a file option: a tile set, a board)."""
SERVER_ONLY_OPTIONS = frozenset({"tiles"})
"""Options a client may never set: a ``tiles`` option may name a file on the server."""

MAX_SPECTATORS = 200
"""Default cap on the connections watching one table without a seat."""
WAITING_TTL = 1800.0
"""Default seconds after which a waiting table nobody joined expires (0: never)."""
RESUME_LIMIT = 2000
"""Default number of tables in play rebuilt at start-up (the most recently active; others on demand)."""
CREATE_PER_MINUTE = 10.0
CREATE_BURST = 20.0
"""Tables one client address may create: a token bucket of ``CREATE_BURST`` refilled at
``CREATE_PER_MINUTE`` per minute."""


@dataclass(frozen=True)
class ServerLimits:
    """The server's limits, all settable with ``ludoteca serve`` (docs/web.md)."""

    create_per_minute: float = CREATE_PER_MINUTE
    """Tables per minute and per client address (the bucket's refill)."""
    create_burst: float = CREATE_BURST
    """Tables one client address may create at once (the bucket's size)."""
    max_spectators: int = MAX_SPECTATORS
    """Connections without a seat per table."""
    waiting_ttl: float = WAITING_TTL
    """Seconds (``ludoteca serve --waiting-ttl`` takes minutes); 0: waiting tables never expire."""
    resume_limit: int = RESUME_LIMIT
    """Tables in play rebuilt at start-up."""


_TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")


class BadInput(ValueError):
    """A client's input the server refuses; ``code`` is the error code sent back, ``message`` an
    English template whose ``{name}`` fields ``params`` fill (translated when sent, errors.py)."""

    def __init__(self, code: str, message: str, **params: Any) -> None:
        text = message.format(**params) if params else message
        super().__init__(text)
        self.code = code
        self.template = message
        self.params = params
        self.message = text


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadInput("bad_json", "numbers are limited to {n} digits", n=MAX_INT_DIGITS)
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadInput("bad_json", "numbers must be finite")
    return value


def _parse_constant(text: str) -> Any:
    raise BadInput("bad_json", "{text} is not a JSON number", text=text)


def depth(value: Any) -> int:
    """Nesting depth of arrays and objects in ``value`` (0 for a scalar), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        children: Any
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        level += 1
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level) for child in children)
    return deepest


_DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
"""Made once: ``json.loads`` with these hooks would build a decoder for every message."""


def parse_json(text: str | bytes) -> Any:
    """``text`` as JSON, or :class:`BadInput` (code ``bad_json``) with a readable reason."""
    try:
        if not isinstance(text, str):
            text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
        value = _DECODER.decode(text)
    except BadInput:
        raise
    except RecursionError:
        raise BadInput("bad_json", "JSON is limited to {n} levels of nesting", n=MAX_DEPTH) from None
    except (ValueError, UnicodeDecodeError):  # JSONDecodeError is a ValueError
        raise BadInput("bad_json", "the text is not valid JSON") from None
    if depth(value) > MAX_DEPTH:
        raise BadInput("bad_json", "JSON is limited to {n} levels of nesting", n=MAX_DEPTH)
    return value


def valid_table_id(table_id: Any) -> bool:
    """True when ``table_id`` has the form of a table id (letters, digits, ``-``, ``_``; 1-32)."""
    return isinstance(table_id, str) and _TABLE_ID.fullmatch(table_id) is not None


def shown_id(table_id: Any) -> str:
    """A table id as it may be echoed in a message (printable, short)."""
    text = "".join(ch for ch in str(table_id)[:40] if ch.isprintable())
    return repr(text)


def _check_number(name: str, value: Any) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int | float) and (not math.isfinite(value) or abs(value) > MAX_NUMBER):
        raise BadInput("bad_options", "option {name}: at most {limit} in absolute value", name=name,
                       limit=f"{MAX_NUMBER:,}")


def _check_layout(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        raise BadInput("bad_options", "option layout: give the grid as a list of rows of numbers 3-6")
    rows = len(value)
    cols = len(value[0]) if value else 0
    if not 3 <= rows <= MAX_LAYOUT_SIDE or not 3 <= cols <= MAX_LAYOUT_SIDE:
        raise BadInput("bad_options", "option layout: a grid of 3 to {most} rows and 3 to {most} columns, not "
                                      "{rows}x{cols}", most=MAX_LAYOUT_SIDE, rows=rows, cols=cols)
    for row in value:
        if len(row) != cols or not all(isinstance(x, int) and not isinstance(x, bool) for x in row):
            raise BadInput("bad_options", "option layout: every row has the same number of whole numbers 3-6")


def _check_file(name: str, value: Any) -> None:
    if value is None:  # the option's default
        return
    if not isinstance(value, list | dict):
        raise BadInput("bad_options", "option {name}: give the content of a JSON file", name=name)
    if len(json.dumps(value, separators=(",", ":"))) > MAX_FILE_OPTION_BYTES:
        raise BadInput("bad_options", "option {name}: the file is limited to {limit} bytes of JSON", name=name,
                       limit=MAX_FILE_OPTION_BYTES)
    if name == "layout":
        _check_layout(value)


def check_options(game: str, options: Any, declared: dict[str, Any], files: frozenset[str] = frozenset()) -> None:
    """Refuse ``options`` for ``game`` unless every one is declared, settable from the web and
    within the web's bounds. ``declared`` maps each option name to its default (callable when it
    depends on the player count). ``files`` names the options whose value is a designer's file: the
    browser sends its content (JSON, at most :data:`MAX_FILE_OPTION_BYTES`), never a text (a path on
    the server). Nothing is built here: this runs before the game is."""
    if not isinstance(options, dict):
        raise BadInput("bad_options", "options is a JSON object")
    for key, value in options.items():
        if key in files:
            _check_file(key, value)
            continue
        if key in SERVER_ONLY_OPTIONS or key == "players":
            raise BadInput("bad_options", "option {name} cannot be set from the browser", name=repr(key))
        if key not in declared:
            names = ", ".join(sorted(k for k in declared if k not in SERVER_ONLY_OPTIONS))
            raise BadInput("bad_options", "unknown option {name} for {game}; its options are: {names}",
                           name=repr(key[:40]), game=game, names=names)
        default = declared[key]
        if isinstance(value, str):
            if not isinstance(default, str):
                raise BadInput("bad_options", "option {name}: give a value, not text", name=key)
            if len(value) > MAX_TEXT_OPTION:
                raise BadInput("bad_options", "option {name}: at most {n} characters", name=key, n=MAX_TEXT_OPTION)
        _check_number(key, value)
        if key == "layout":
            _check_layout(value)
        elif isinstance(value, list | dict):
            raise BadInput("bad_options", "option {name}: give a single value", name=key)
    size = len(json.dumps({k: v for k, v in options.items() if k not in files}, separators=(",", ":")))
    if size > MAX_OPTIONS_BYTES:
        raise BadInput("bad_options", "the options are limited to {limit} bytes of JSON, not {size}",
                       limit=MAX_OPTIONS_BYTES, size=size)


def check_stored_options(options: Any) -> None:
    """Refuse stored options a table must not be rebuilt from (e.g. a grid stored before these
    bounds existed): oversized JSON, an oversized layout. The game's own checks follow."""
    if not isinstance(options, dict):
        raise BadInput("bad_options", "stored options are not a JSON object")
    size = len(json.dumps(options, separators=(",", ":")))
    if size > 4 * MAX_OPTIONS_BYTES + 2 * MAX_FILE_OPTION_BYTES:
        raise BadInput("bad_options", f"stored options take {size} bytes of JSON")
    if "layout" in options:
        _check_layout(options["layout"])


NEVER_REFILLED = 86_400.0
"""The wait told when a bucket is never refilled (a rate of 0): a day (a finite ``Retry-After``)."""


class TokenBucket:
    """``rate`` tokens per second, up to ``burst``; :meth:`take` spends one or says how long to wait."""

    def __init__(self, rate: float, burst: float, now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._now = rate, burst, now
        self.tokens = burst
        self.stamp = now()

    def refill(self) -> None:
        now = self._now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> float:
        """0 when a token was spent, else the seconds until one is available."""
        self.refill()
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate if self.rate > 0 else NEVER_REFILLED


class ClientBuckets:
    """One :class:`TokenBucket` per client address, forgetting full buckets when there are many."""

    def __init__(self, per_minute: float, burst: float, max_clients: int = 10_000,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = max(1.0, burst)
        self.max_clients = max_clients
        self._now = now
        self.buckets: dict[str, TokenBucket] = {}

    def take(self, client: str) -> float:
        """0 when ``client`` may go on, else the seconds it must wait."""
        bucket = self.buckets.get(client)
        if bucket is None:
            if len(self.buckets) >= self.max_clients:
                self._prune()
            bucket = self.buckets[client] = TokenBucket(self.rate, self.burst, self._now)
        return bucket.take()

    def _prune(self) -> None:
        for key, bucket in list(self.buckets.items()):
            bucket.refill()
            if bucket.tokens >= bucket.burst:
                del self.buckets[key]
        while len(self.buckets) >= self.max_clients:  # all busy: forget the oldest
            del self.buckets[next(iter(self.buckets))]
