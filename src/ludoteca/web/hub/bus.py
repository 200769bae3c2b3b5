"""Pub/sub between server workers: what happened at a table, told to the other workers.

Several ``ludoteca serve`` workers may hold connections to the same table: the worker
that commits an action publishes it on the table's channel, and every other worker subscribed to
that channel passes it on to its own clients. Two implementations share one small interface
(:class:`Bus`):

- :class:`LocalBus`: in-process, the one-worker default (nothing to set up). Buses attached to
  the same :class:`LocalBroker` deliver to each other (tests, several workers in one process);
  a lone one delivers to nobody, since there is no other worker.
- :class:`~ludoteca.web.hub.redis_bus.RedisBus` (redis_bus.py): Redis pub/sub (redis-py, asyncio), one channel per table
  (``PREFIX:t:TABLE``). A dropped connection (Redis restarted, network cut) is retried with a
  bounded exponential backoff and every channel is subscribed again; ``on_reconnect`` is then
  called with the tables whose messages may have been missed, so their owner can catch up from
  the database (Redis pub/sub keeps nothing for a subscriber that was away).

A message is compact JSON ``{"t": table, "s": seq, "w": worker, "n": number, "b": body}``: the
table id, the table's sequence number after the event, the id of the worker that published it (a
worker ignores its own echoes) and a number that grows with every message of that publisher.
Handlers of one table run one at a time in publication order; they should be quick (hand the
message to the table's queue), since the next message waits.

**Authentication** (RedisBus). Whoever can ``PUBLISH`` on the Redis server could otherwise make
every worker show a move that was never stored. The workers share a secret (``ludoteca serve
--bus-secret-file``, ``LUDOTECA_BUS_SECRET`` or ``--bus-secret``; generated for the workers of one
``ludoteca serve --workers N``) and each message on the wire is its HMAC-SHA256 under that secret
(:data:`MAC_CHARS` hexadecimal characters) followed by the JSON. A subscriber checks the MAC before
reading anything else. What does not check (no MAC, a wrong one, not a well-formed message of that
channel's table) and what was replayed or came out of order (a number of that publisher not above
the last one it had: a retried publish, a doubled subscription, a message repeated by someone else)
is never delivered as news: the table's handlers get a **hint** instead (a :class:`BusMessage`
with ``verified`` False and an empty body), which a table takes as "read the database" (cluster.py).
So memory never runs ahead of the database, whatever arrives on the bus; a forged message costs a
read of the database at most, and hints waiting for the same table are taken as one.

Costs are bounded: a message is at most :data:`MAX_MESSAGE` bytes (larger ones are refused when
published and taken as hints when received), table ids at most :data:`MAX_TABLE_ID` characters, and the
memory kept per table is one number per publishing worker.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import inspect
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)

MAX_MESSAGE = 1024 * 1024
"""Largest message (bytes of JSON) published or accepted."""
MAX_TABLE_ID = 64
"""Longest table id a channel is made for."""
PUBLISH_BATCH = 512
"""Most messages sent to Redis in one round trip (RedisBus: the messages published while the
previous round trip was under way go together, in order)."""
MAX_ORIGINS = 256
"""Publishers remembered per table for duplicate detection (the oldest is forgotten beyond)."""
DEFAULT_PREFIX = "ludoteca"
MAC_CHARS = 64
"""Hexadecimal characters of a message's HMAC-SHA256, before its JSON on the wire."""
MIN_SECRET = 16
"""Fewest characters of the workers' shared secret."""


class BusUnavailable(RuntimeError):
    """The bus could not publish now (Redis unreachable); the database still has the truth."""


@dataclass(frozen=True)
class BusMessage:
    """One message between workers."""

    table: str
    seq: int
    origin: str
    """The id of the worker that published it."""
    number: int
    """Grows with every message of ``origin`` (duplicate detection)."""
    body: dict[str, Any] = field(default_factory=dict)
    verified: bool = True
    """False for a hint: something arrived on the table's channel that did not check (see the
    module's docstring); the body is then empty and the origin unknown (empty)."""


def hint(table: str) -> BusMessage:
    """What the handlers of ``table`` get for a message that did not check: read the database."""
    return BusMessage(table, 0, "", 0, {}, verified=False)


Handler = Callable[[BusMessage], Awaitable[None] | None]
ReconnectHandler = Callable[[frozenset[str]], Awaitable[None] | None]


class Bus(Protocol):
    """What a worker needs from the bus (see the module's docstring)."""

    @property
    def worker(self) -> str:
        """This worker's id (never equal to another live worker's)."""
        ...

    async def start(self) -> None:
        """Connect (RedisBus: start the subscriber; it keeps retrying while Redis is away)."""
        ...

    async def publish(self, table: str, seq: int, body: Mapping[str, Any]) -> None:
        """Tell the other workers subscribed to ``table``; :class:`BusUnavailable` if it cannot now."""
        ...

    async def subscribe(self, table: str, handler: Handler) -> bool:
        """Call ``handler`` with the other workers' messages of ``table``; True once the
        subscription is confirmed (False: it will be made as soon as the bus is back)."""
        ...

    async def unsubscribe(self, table: str, handler: Handler) -> None:
        """Stop calling ``handler`` for ``table``."""
        ...

    async def close(self) -> None:
        """Disconnect; later calls do nothing."""
        ...


def new_worker_id() -> str:
    """A worker id unique across machines and restarts: host, process and a random part."""
    host = socket.gethostname().split(".")[0][:32] or "host"
    return f"{host}-{os.getpid()}-{secrets.token_hex(4)}"


def check_table_id(table: str) -> str:
    if not isinstance(table, str) or not 0 < len(table) <= MAX_TABLE_ID or not table.isprintable() \
            or any(c.isspace() for c in table):
        raise ValueError(f"a table id is 1 to {MAX_TABLE_ID} printable characters without spaces")
    return table


def new_secret() -> str:
    """A fresh random secret for the workers of one ``ludoteca serve --workers N``."""
    return secrets.token_urlsafe(32)


def check_secret(secret: str | bytes) -> bytes:
    """The key of ``secret``; ValueError when it is shorter than :data:`MIN_SECRET` characters."""
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    if len(key) < MIN_SECRET:
        raise ValueError(f"the bus secret needs at least {MIN_SECRET} characters")
    return key


def seal(text: str, key: bytes) -> str:
    """``text`` (a message's JSON) as it goes on the wire: its MAC under ``key``, then itself."""
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest() + text


def unseal(data: str | bytes, key: bytes) -> str | None:
    """The JSON of a message from the wire when its MAC checks under ``key``; None otherwise."""
    raw = data.encode() if isinstance(data, str) else data
    if not MAC_CHARS < len(raw) <= MAC_CHARS + MAX_MESSAGE:
        return None
    mac, payload = raw[:MAC_CHARS], raw[MAC_CHARS:]
    if not hmac.compare_digest(mac, hmac.new(key, payload, hashlib.sha256).hexdigest().encode()):
        return None
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return None


def encode(message: BusMessage) -> str:
    """The compact JSON of ``message``; ValueError if it is not JSON or larger than :data:`MAX_MESSAGE`."""
    try:
        text = json.dumps({"t": message.table, "s": message.seq, "w": message.origin, "n": message.number,
                           "b": message.body}, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"a bus message must be JSON: {exc}") from None
    if len(text.encode()) > MAX_MESSAGE:
        raise ValueError(f"a bus message is at most {MAX_MESSAGE} bytes")
    return text


def decode(data: str | bytes) -> BusMessage | None:
    """The message of ``data``, or None when it is not a well-formed bus message."""
    if len(data) > MAX_MESSAGE:
        return None
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    table, seq, origin, number, body = (raw.get(k) for k in ("t", "s", "w", "n", "b"))
    if not (isinstance(table, str) and isinstance(origin, str) and isinstance(body, dict)
            and type(seq) is int and type(number) is int):
        return None
    return BusMessage(table, seq, origin, number, body)


class Subscriptions:
    """Handlers per table, and the duplicate filter: the last number seen per (table, publisher)."""

    def __init__(self, worker: str) -> None:
        self.worker = worker
        self.handlers: dict[str, list[Handler]] = {}
        self.last: dict[str, dict[str, int]] = {}
        self.delivered = 0
        self.duplicates = 0
        """Messages replayed or out of order (taken as hints)."""
        self.dropped = 0
        """Messages that did not check (no MAC, a wrong one, malformed; taken as hints)."""
        self.hints = 0
        """Hints given to handlers (each: read the database)."""

    def add(self, table: str, handler: Handler) -> bool:
        """Add ``handler``; True when ``table`` had none (a new channel)."""
        handlers = self.handlers.setdefault(table, [])
        if handler not in handlers:
            handlers.append(handler)
        return len(handlers) == 1

    def remove(self, table: str, handler: Handler) -> bool:
        """Remove ``handler``; True when ``table`` has none left (the channel can go)."""
        handlers = self.handlers.get(table)
        if handlers is None:
            return False
        with contextlib.suppress(ValueError):
            handlers.remove(handler)
        if handlers:
            return False
        del self.handlers[table]
        self.last.pop(table, None)
        return True

    async def deliver(self, message: BusMessage) -> None:
        if message.origin == self.worker:
            return  # our own echo
        handlers = self.handlers.get(message.table)
        if not handlers:
            return
        seen = self.last.setdefault(message.table, {})
        previous = seen.get(message.origin)
        if previous is not None and message.number <= previous:
            self.duplicates += 1  # replayed or out of order: never news
            await self.hint(message.table)
            return
        seen.pop(message.origin, None)  # re-inserted last: the dict is kept in order of use
        seen[message.origin] = message.number
        if len(seen) > MAX_ORIGINS:
            del seen[next(iter(seen))]
        self.delivered += 1
        await self._call(handlers, message)

    async def hint(self, table: str | None) -> None:
        """Something that did not check arrived for ``table``: its handlers read the database."""
        handlers = self.handlers.get(table) if table is not None else None
        if table is not None and handlers:
            self.hints += 1
            await self._call(handlers, hint(table))

    @staticmethod
    async def _call(handlers: list[Handler], message: BusMessage) -> None:
        for handler in list(handlers):
            try:
                result = handler(message)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("a bus handler of table %s failed", message.table)


class Numbers:
    """The numbers of one publisher's messages: growing, also across restarts of a worker that
    keeps its id (they start from the clock in microseconds)."""

    def __init__(self) -> None:
        self._next = time.time_ns() // 1000

    def take(self) -> int:
        self._next += 1
        return self._next


# --- in-process -----------------------------------------------------------------------------

class LocalBroker:
    """Connects the :class:`LocalBus` instances of one process."""

    def __init__(self) -> None:
        self.buses: list[LocalBus] = []


class LocalBus:
    """The bus of a single worker (default): in-process, nothing to set up. Buses sharing a
    ``broker`` deliver to each other, like workers sharing a Redis server."""

    def __init__(self, worker: str | None = None, broker: LocalBroker | None = None,
                 on_reconnect: ReconnectHandler | None = None) -> None:
        self._worker = worker or new_worker_id()
        self.broker = broker or LocalBroker()
        self.subs = Subscriptions(self._worker)
        self._numbers = Numbers()
        self._closed = False
        self.broker.buses.append(self)

    @property
    def worker(self) -> str:
        return self._worker

    async def start(self) -> None:
        return None

    async def publish(self, table: str, seq: int, body: Mapping[str, Any]) -> None:
        if self._closed:
            raise BusUnavailable("the bus is closed")
        text = encode(BusMessage(check_table_id(table), seq, self._worker, self._numbers.take(), dict(body)))
        message = decode(text)  # what a Redis subscriber would get: plain JSON values
        assert message is not None
        for bus in list(self.broker.buses):
            if bus is not self and not bus._closed:
                await bus.subs.deliver(message)

    async def subscribe(self, table: str, handler: Handler) -> bool:
        self.subs.add(check_table_id(table), handler)
        return True

    async def unsubscribe(self, table: str, handler: Handler) -> None:
        self.subs.remove(table, handler)

    async def close(self) -> None:
        self._closed = True
        with contextlib.suppress(ValueError):
            self.broker.buses.remove(self)


def make_bus(url: str | None = None, worker: str | None = None,
             on_reconnect: ReconnectHandler | None = None, secret: str | bytes | None = None) -> Bus:
    """:class:`LocalBus` without ``url``; :class:`RedisBus` for ``redis://``, ``rediss://`` or
    ``unix://`` URLs (``secret``: the workers' shared secret, required); ValueError for anything
    else."""
    if url is None:
        return LocalBus(worker, on_reconnect=on_reconnect)
    if url.split("://", 1)[0] in ("redis", "rediss", "unix"):
        from ludoteca.web.hub.redis_bus import RedisBus

        return RedisBus(url, worker, on_reconnect=on_reconnect, secret=secret)
    raise ValueError(f"the bus needs a redis:// URL, not {url!r}")
