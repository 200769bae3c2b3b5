"""Pub/sub between server workers: what happened at a table, told to the other workers.

Several ``ludoteca serve`` workers may hold connections to the same table (issue 13): the worker
that commits an action publishes it on the table's channel, and every other worker subscribed to
that channel passes it on to its own clients. Two implementations share one small interface
(:class:`Bus`):

- :class:`LocalBus`: in-process, the one-worker default (nothing to set up). Buses attached to
  the same :class:`LocalBroker` deliver to each other (tests, several workers in one process);
  a lone one delivers to nobody, since there is no other worker.
- :class:`RedisBus`: Redis pub/sub (redis-py, asyncio), one channel per table
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

import asyncio
import collections
import contextlib
import hashlib
import hmac
import inspect
import json
import logging
import os
import random
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


class _Subscriptions:
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


class _Numbers:
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
        self.subs = _Subscriptions(self._worker)
        self._numbers = _Numbers()
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


# --- Redis ----------------------------------------------------------------------------------

class RedisBus:
    """Redis pub/sub between workers (see the module's docstring).

    ``secret`` is the workers' shared secret (at least :data:`MIN_SECRET` characters): every
    message is sent with its MAC under it, and only messages whose MAC checks are news (the
    module's docstring). ``backoff`` is (first, longest) seconds between reconnection attempts:
    the wait doubles after each failure (with some jitter) up to the longest, and starts again from
    the first once connected. ``confirm_timeout`` bounds how long :meth:`subscribe` waits for Redis
    to confirm.
    """

    def __init__(self, url: str, worker: str | None = None, *, secret: str | bytes | None,
                 prefix: str = DEFAULT_PREFIX,
                 on_reconnect: ReconnectHandler | None = None, backoff: tuple[float, float] = (0.05, 2.0),
                 confirm_timeout: float = 5.0, health_check_interval: int = 5) -> None:
        import redis.asyncio as aioredis
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff, NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        if not 0 < backoff[0] <= backoff[1]:
            raise ValueError("backoff is (first, longest) seconds, 0 < first <= longest")
        if secret is None:
            raise ValueError("the Redis bus needs the workers' shared secret (docs/web.md, 'The bus')")
        self._key = check_secret(secret)
        self._worker = worker or new_worker_id()
        self.url = url
        self.prefix = prefix
        self.on_reconnect = on_reconnect
        self.backoff = backoff
        self.confirm_timeout = confirm_timeout
        self.subs = _Subscriptions(self._worker)
        self.reconnects = 0
        """Times the subscriber connected again after losing Redis."""
        self.waits: collections.deque[float] = collections.deque(maxlen=64)
        """The last waits (seconds) between two attempts to connect the subscriber."""
        common: dict[str, Any] = {"socket_connect_timeout": 2, "socket_keepalive": True,
                                  "health_check_interval": health_check_interval}
        # Publishing retries a dropped connection twice, quickly (a retried message that did get
        # through is dropped by the subscribers' duplicate filter).
        self._pub = aioredis.from_url(url, socket_timeout=5, retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 2),
                                      retry_on_error=[RedisConnectionError, RedisTimeoutError], **common)
        # The subscriber's connection is retried by :meth:`_run` itself.
        self._sub = aioredis.from_url(url, retry=Retry(NoBackoff(), 0), **common)
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._confirmed: dict[str, asyncio.Event] = {}
        self._numbers = _Numbers()
        self._closed = False
        self._outbox: list[tuple[str, str, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.round_trips = 0
        """Pipelines sent to Redis (each carries every message published meanwhile)."""

    @property
    def worker(self) -> str:
        return self._worker

    @property
    def connected(self) -> bool:
        """True while the subscriber is connected to Redis."""
        return self._connected.is_set()

    def channel(self, table: str) -> str:
        return f"{self.prefix}:t:{table}"

    @property
    def _anchor(self) -> str:
        """The worker's own channel, always subscribed (the subscriber's connection exists even
        before the first table, and its confirmation says the connection is up)."""
        return f"{self.prefix}:w:{self._worker}"

    def _table_of(self, channel: str) -> str | None:
        head = f"{self.prefix}:t:"
        return channel[len(head):] if channel.startswith(head) else None

    async def start(self) -> None:
        if self._task is None and not self._closed:
            self._task = asyncio.create_task(self._run(), name=f"bus-{self._worker}")

    async def wait_connected(self, timeout: float) -> bool:
        """True once the subscriber is connected (False after ``timeout`` seconds)."""
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def publish(self, table: str, seq: int, body: Mapping[str, Any]) -> None:
        """Queue the message and wait until Redis has it. One task sends the queue, a pipeline
        of at most :data:`PUBLISH_BATCH` messages per round trip: many tables' messages share
        a round trip, and a publisher's messages reach Redis in the order they were published."""
        if self._closed:
            raise BusUnavailable("the bus is closed")
        text = seal(encode(BusMessage(check_table_id(table), seq, self._worker, self._numbers.take(), dict(body))),
                    self._key)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._outbox.append((self.channel(table), text, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())
        await done

    async def _flush(self) -> None:
        from redis.exceptions import RedisError

        await asyncio.sleep(0)  # the messages published in this turn of the loop go together
        while self._outbox:
            batch, self._outbox = self._outbox[:PUBLISH_BATCH], self._outbox[PUBLISH_BATCH:]
            failure: Exception | None = None
            try:
                self.round_trips += 1
                async with self._pub.pipeline(transaction=False) as pipe:
                    for channel, text, _ in batch:
                        pipe.publish(channel, text)
                    await pipe.execute()
            except (RedisError, OSError) as exc:
                failure = BusUnavailable(f"cannot publish to Redis: {exc}")
            except asyncio.CancelledError:
                failure = BusUnavailable("the bus is closed")
                raise
            finally:
                for _, _, done in batch:
                    if not done.done():
                        if failure is None:
                            done.set_result(None)
                        else:
                            done.set_exception(failure)

    async def subscribe(self, table: str, handler: Handler) -> bool:
        check_table_id(table)
        channel = self.channel(table)
        if self.subs.add(table, handler):
            self._confirmed[channel] = asyncio.Event()
            await self._send("subscribe", channel)
        event = self._confirmed.get(channel)
        if event is None:
            return False
        try:
            await asyncio.wait_for(event.wait(), self.confirm_timeout)
        except TimeoutError:
            return False
        return True

    async def unsubscribe(self, table: str, handler: Handler) -> None:
        if self.subs.remove(table, handler):
            channel = self.channel(table)
            self._confirmed.pop(channel, None)
            await self._send("unsubscribe", channel)

    async def _send(self, command: str, channel: str) -> None:
        """(Un)subscribe on the live connection; when there is none or it fails, the reconnection
        subscribes to exactly the tables that have handlers then."""
        from redis.exceptions import RedisError

        pubsub = self._pubsub
        if pubsub is None:
            return
        try:
            await getattr(pubsub, command)(channel)
        except (RedisError, OSError) as exc:
            log.info("bus %s: %s %s failed (%s); done again after reconnecting", self._worker, command, channel, exc)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._flusher
        for _, _, done in self._outbox:
            if not done.done():
                done.set_exception(BusUnavailable("the bus is closed"))
        self._outbox.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        for client in (self._pub, self._sub):
            with contextlib.suppress(Exception):
                await client.aclose()

    async def _run(self) -> None:
        from redis.exceptions import RedisError

        delay = self.backoff[0]
        ever_connected = False
        while not self._closed:
            pubsub = self._sub.pubsub()
            try:
                for event in self._confirmed.values():
                    event.clear()
                channels = {self.channel(t) for t in self.subs.handlers}
                await pubsub.subscribe(self._anchor, *channels)
                # Tables (un)subscribed while that was under way: nothing awaits between this
                # check and ``self._pubsub`` being set, after which :meth:`_send` does it.
                wanted = channels
                while (now := {self.channel(t) for t in self.subs.handlers}) != wanted:
                    if now - wanted:
                        await pubsub.subscribe(*(now - wanted))
                    if wanted - now:
                        await pubsub.unsubscribe(*(wanted - now))
                    wanted = now
                self._pubsub = pubsub
                while True:
                    raw = await pubsub.get_message(timeout=1.0)
                    if raw is None:
                        continue
                    kind = raw.get("type")
                    if kind == "message":
                        await self._received(raw)
                    elif kind == "subscribe":
                        channel = _text(raw.get("channel"))
                        if channel == self._anchor and not self._connected.is_set():
                            self._connected.set()
                            delay = self.backoff[0]
                            if ever_connected:
                                self.reconnects += 1
                                await self._reconnected()
                            ever_connected = True
                        elif channel in self._confirmed:
                            self._confirmed[channel].set()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                if self._connected.is_set():
                    log.warning("bus %s lost Redis (%s); reconnecting", self._worker, exc)
            finally:
                self._pubsub = None
                self._connected.clear()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            wait = delay * random.uniform(0.75, 1.25)
            self.waits.append(wait)
            await asyncio.sleep(wait)
            delay = min(delay * 2, self.backoff[1])

    async def _received(self, raw: Mapping[str, Any]) -> None:
        """A message on a table's channel: news when its MAC checks, a hint otherwise."""
        data = raw.get("data")
        table = self._table_of(_text(raw.get("channel")))
        text = unseal(data, self._key) if isinstance(data, (str, bytes)) else None
        message = decode(text) if text is not None else None
        if message is None or message.table != table:
            self.subs.dropped += 1
            await self.subs.hint(table)
            return
        await self.subs.deliver(message)

    async def _reconnected(self) -> None:
        callback = self.on_reconnect
        if callback is None:
            return
        try:
            result = callback(frozenset(self.subs.handlers))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("the bus's on_reconnect failed")


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def make_bus(url: str | None = None, worker: str | None = None,
             on_reconnect: ReconnectHandler | None = None, secret: str | bytes | None = None) -> Bus:
    """:class:`LocalBus` without ``url``; :class:`RedisBus` for ``redis://``, ``rediss://`` or
    ``unix://`` URLs (``secret``: the workers' shared secret, required); ValueError for anything
    else."""
    if url is None:
        return LocalBus(worker, on_reconnect=on_reconnect)
    if url.split("://", 1)[0] in ("redis", "rediss", "unix"):
        return RedisBus(url, worker, on_reconnect=on_reconnect, secret=secret)
    raise ValueError(f"the bus needs a redis:// URL, not {url!r}")
