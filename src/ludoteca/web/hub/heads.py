"""A bound on request heads for a worker reached directly (no proxy in front): time and size.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive`` seconds, but a
connection that sends part of a request head and then nothing stays open for ever (and h11's
``max_incomplete_event_size`` bounds only h11, not httptools, the parser ``uvicorn[standard]``
uses). :class:`HeadTimeoutProtocol` is uvicorn's own HTTP protocol (httptools when installed, else
h11: the choice uvicorn's ``auto`` makes) with two more rules, passed to uvicorn as its ``http``
protocol class by ``ludoteca serve``:

- a request head (request line and headers) must arrive whole within ``head_timeout`` seconds of
  the connection's opening or of its first byte (a later request on a kept-alive connection),
  otherwise the connection is closed;
- a request head may not exceed :data:`MAX_HEAD` bytes: beyond, the connection is closed.

The timeout is read from uvicorn's ``Config`` (``config.head_timeout``, set by ``ludoteca serve
--head-timeout``; :data:`HEAD_TIMEOUT` by default), so it reaches every worker process.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:  # what uvicorn's "auto" picks: httptools when it is installed
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base

    _HTTPTOOLS = True
except ImportError:  # pragma: no cover - uvicorn without httptools
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]

    _HTTPTOOLS = False

HEAD_TIMEOUT = 10.0
"""Default seconds a request head has to arrive whole."""
MAX_HEAD = 64 * 1024
"""Most bytes of a request head (request line and headers)."""


class HeadTimeoutProtocol(_Base):  # type: ignore[misc,valid-type]
    """uvicorn's HTTP protocol, closing a connection whose request head is too slow or too large."""

    def __init__(self, config: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.head_timeout = float(getattr(config, "head_timeout", HEAD_TIMEOUT))
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._in_head = True  # a new connection: its first head is awaited

    # --- the timer -------------------------------------------------------------------------
    def _arm(self) -> None:
        if self._head_timer is None and self.head_timeout > 0:
            self._head_timer = asyncio.get_running_loop().call_later(self.head_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_pending(self) -> bool:
        if _HTTPTOOLS:
            return self._in_head
        import h11

        return bool(getattr(self, "conn").their_state is h11.IDLE)  # noqa: B009 (h11's attribute)

    def _head_timed_out(self) -> None:
        self._head_timer = None
        transport = self.transport
        if transport is None or transport.is_closing() or transport.get_protocol() is not self:
            return  # closed, or upgraded to a websocket (another protocol now)
        if self._head_pending():
            transport.close()

    # --- uvicorn's protocol ----------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._head_pending():
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD:
                self._disarm()
                self.transport.close()
                return
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._head_pending():
            self._arm()
        else:
            self._disarm()
            self._head_bytes = 0

    def on_message_begin(self) -> None:  # httptools: a request's first byte
        self._in_head = True
        self._head_bytes = 0
        super().on_message_begin()

    def on_headers_complete(self) -> None:  # httptools: its head is whole
        self._in_head = False
        self._disarm()
        super().on_headers_complete()
