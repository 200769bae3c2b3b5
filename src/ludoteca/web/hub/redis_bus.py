"""The bus between workers over Redis pub/sub (redis-py, asyncio): one channel per table.

The interface, the wire format, the authentication of messages and the duplicate filter are the
bus's (bus.py); this module carries them over Redis. A dropped connection (Redis restarted, network
cut) is retried with a bounded exponential backoff and every channel is subscribed again;
``on_reconnect`` is then called with the tables whose messages may have been missed, so their owner
can catch up from the database (Redis pub/sub keeps nothing for a subscriber that was away).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import logging
import random
from collections.abc import Mapping
from typing import Any

from ludoteca.web.hub.bus import (
    DEFAULT_PREFIX,
    PUBLISH_BATCH,
    BusMessage,
    BusUnavailable,
    Handler,
    Numbers,
    ReconnectHandler,
    Subscriptions,
    check_secret,
    check_table_id,
    decode,
    encode,
    new_worker_id,
    seal,
    unseal,
)

log = logging.getLogger("ludoteca.web.hub.bus")


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
        self.subs = Subscriptions(self._worker)
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
        self._numbers = Numbers()
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
