"""The hub of one table: its connections and the messages each viewer is sent.

Every message is built for one viewer (a seat, or ``None`` for a spectator) from what the
engine says that viewer may see — never from the full position:

- the position is ``state.observation(viewer)`` (the full position, built once for everyone,
  when the game declares no hidden information);
- the log is the list of actions, each with its events as the viewer may see them now
  (``Event.view(viewer)``; ``everything=True`` once the game is over). An entry whose own action
  event is secret for the viewer is sent as ``{"i", "seat", "hidden": true, "events": [...]}``
  (with the redacted events only), otherwise as ``{"i", "seat", "action", "events"}``.

A secret becomes public when the game says so by a later public event (e.g. a battle's reveal), and every
entry is sent again, whole, when the game ends.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ludoteca.core.events import Event
from ludoteca.core.game import State
from ludoteca.web.codec import dumps
from ludoteca.web.errors import Code, error_body
from ludoteca.web.master.life import ALL, CHAT_BURST, CHAT_RATE

log = logging.getLogger("ludoteca.web")

Viewer = int | None
CONNECTION_QUEUE = 256
"""Messages waiting for a slow client before the server drops it."""


_dumps = dumps


class RateLimiter:
    """A token bucket: ``rate`` messages per second, bursts up to ``burst``."""

    def __init__(self, rate: float, burst: float, now: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self._now = rate, burst, now
        self.tokens = burst
        self.stamp = now()
        self.refused = 0

    def allow(self) -> bool:
        now = self._now()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        self.refused += 1
        return False


class Connection:
    """One client (a websocket): who it sits as, and its queue of outgoing messages."""

    def __init__(self, rate: float = 20.0, burst: float = 40.0) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.wake: Callable[[], None] | None = None
        """Called when a message (or the end, ``None``) joins the queue: the socket's writer sends it."""
        self.seat: int | None = None
        self.token: str | None = None
        self.closed = False
        self.limiter = RateLimiter(rate, burst)
        self.chat_limiter = RateLimiter(CHAT_RATE, CHAT_BURST)
        """Chat lines are limited apart from the other messages (life.py)."""
        self.last_error_at = 0.0
        self.close_code: int | None = None
        """The websocket close code when the server closes this connection (None: the usual one)."""
        self.lang: str | None = None
        """The language of this client's error messages (web/languages.py; None: English)."""

    def push(self, text: str) -> None:
        if self.closed:
            return
        if self.queue.qsize() >= CONNECTION_QUEUE:
            log.warning("dropping a client that does not read its messages")
            self.close()
            return
        self.queue.put_nowait(text)
        if self.wake is not None:
            self.wake()

    def send_json(self, data: dict[str, Any]) -> None:
        self.push(_dumps(data))

    def error(self, code: Code, message: str, ref: Any = None, **params: Any) -> None:
        """An error for this client alone (errors.py: the same shape as over HTTP), in its language."""
        self.send_json(error_body(code, message, ref, self.lang, **params))

    def close(self, code: int | None = None) -> None:
        if not self.closed:
            self.closed = True
            self.close_code = code
            self.queue.put_nowait(None)
            if self.wake is not None:
                self.wake()


class EntryLike(Protocol):
    seat: int | None
    elapsed: float | None
    public: bool
    events_json: str

    @property
    def events(self) -> tuple[Event, ...]: ...


class Source(Protocol):
    """What the hub reads to build a viewer's message (the table and its master)."""

    @property
    def state(self) -> State: ...

    @property
    def entries(self) -> list[Any]: ...

    def is_over(self) -> bool: ...

    def hidden_information(self) -> bool: ...

    def header(self) -> dict[str, Any]:
        """What every viewer is told alike: status, seats, whose turn, clock, result..."""
        ...

    def legal_for(self, viewer: Viewer) -> list[dict[str, Any]] | None:
        """The legal moves (canonical JSON) when ``viewer`` is to move, else None."""
        ...

    def snapshot_extra(self) -> dict[str, Any]: ...

    def public_seats(self) -> list[dict[str, Any]]: ...


def entry_view(i: int, entry: EntryLike, viewer: Viewer, everything: bool) -> dict[str, Any]:
    """Log entry ``i`` as ``viewer`` may see it (``everything``: the game is over):
    ``{"i", "seat", "events"}``, with ``"hidden": true`` when the action itself is secret for the
    viewer, and ``"elapsed"`` (the seconds the player spent) when the action is shown."""
    views = [v for e in entry.events if (v := e.view(viewer, everything)) is not None]
    out: dict[str, Any] = {"i": i, "seat": entry.seat, "events": views}
    own = entry.events[0] if entry.events else None
    if own is not None and not everything and not own.visible_to(viewer):
        out["hidden"] = True
    elif entry.elapsed is not None:
        out["elapsed"] = entry.elapsed
    return out


def public_entry_text(i: int, entry: EntryLike) -> str:
    """The JSON of log entry ``i`` whose events are all public: the same for every viewer."""
    seat = "null" if entry.seat is None else str(int(entry.seat))
    elapsed = "" if entry.elapsed is None else f',"elapsed":{json.dumps(entry.elapsed)}'
    return f'{{"i":{i},"seat":{seat},"events":{entry.events_json}{elapsed}}}'


class Hub:
    """The connections of one table, and the messages sent to them."""

    def __init__(self, source: Source, on_presence: Callable[[], None] | None = None) -> None:
        self.source = source
        self.on_presence = on_presence
        """Called when a seated connection comes or goes (the table counts away players)."""
        self.conns: set[Connection] = set()
        self._seats_sent: str | None = None
        self._positions: dict[Any, str] = {}
        self._legal: tuple[Viewer, str] | None = None
        self.remote: dict[str, frozenset[int]] = {}
        """Several workers: the seats with a connection on each other worker (cluster.py)."""

    # --- messages -----------------------------------------------------------------------------
    # A message is sent as text. The parts that are the same for several viewers are encoded
    # once: the position when the game hides nothing (one for everyone, per position), and each
    # log entry whose events are all public (encoded when it was committed, master.Entry).
    def position(self, viewer: Viewer) -> str:
        """``observation(viewer)`` of the current position as JSON text, built once per viewer and
        position (once for everyone when the game has no hidden information)."""
        src = self.source
        hidden = src.hidden_information()
        key: Any = viewer if hidden else "all"
        cached = self._positions.get(key)
        if cached is None:
            state = src.state
            cached = self._positions[key] = _dumps(state.observation(viewer) if hidden else state.to_json())
        return cached

    def forget(self) -> None:
        """The position changed: build the observations and the legal moves again."""
        self._positions = {}
        self._legal = None

    def entry(self, i: int, entry: EntryLike, viewer: Viewer, everything: bool) -> str:
        """Log entry ``i`` as ``viewer`` may see it, as JSON text."""
        if entry.public:
            return public_entry_text(i, entry)
        return _dumps(entry_view(i, entry, viewer, everything))

    def header(self) -> str:
        """The part of every message that is the same for every viewer, as JSON members."""
        return _dumps(self.source.header())[1:-1]

    def legal(self, viewer: Viewer) -> str:
        """The legal moves for ``viewer`` (``null`` unless it is to move), as JSON text: only the
        seat to move has legal moves, so one text per position, kept as text alone (the moves as
        data, many small dicts and lists per table, would live until the next move for the
        collector to walk: docs/web.md, "Speed against boardgame.io")."""
        if self._legal is not None and self._legal[0] == viewer:
            return self._legal[1]
        legal = self.source.legal_for(viewer)
        if legal is None:
            return "null"
        text = dumps(legal)
        self._legal = (viewer, text)
        return text

    def text(self, viewer: Viewer, log_from: int = 0, kind: str = "update", header: str | None = None) -> str:
        """``viewer``'s message: the header (``header``: already encoded for this change), the
        viewer's seat and legal moves, the position, the log from ``log_from`` on."""
        src = self.source
        entries = src.entries
        everything = src.is_over()
        head = header if header is not None else self.header()
        if kind == "snapshot":
            head = f"{head},{_dumps(src.snapshot_extra())[1:-1]}"
            extra = getattr(src, "viewer_extra", None)  # the table's notices and chat for this viewer
            if extra is not None:
                head = f"{head},{_dumps(extra(viewer))[1:-1]}"
        log_text = ",".join(self.entry(i, entries[i], viewer, everything) for i in range(log_from, len(entries)))
        you = "null" if viewer is None else str(int(viewer))
        return (f'{{"type":"{kind}",{head},"you":{you},"legal":{self.legal(viewer)},"log_from":{log_from},'
                f'"position":{self.position(viewer)},"log":[{log_text}]}}')

    def message(self, viewer: Viewer, log_from: int = 0, kind: str = "update") -> dict[str, Any]:
        """:meth:`text` as data (tests, tools)."""
        data: dict[str, Any] = json.loads(self.text(viewer, log_from, kind))
        return data

    # --- connections --------------------------------------------------------------------------
    def attach(self, conn: Connection) -> None:
        """A new connection gets a snapshot; the others hear of it only if it sits."""
        self.conns.add(conn)
        conn.push(self.text(conn.seat, 0, "snapshot"))
        if conn.seat is not None:
            self._presence()
            self.publish_seats()

    def detach(self, conn: Connection) -> None:
        if conn in self.conns:
            self.conns.discard(conn)
            if conn.seat is not None:
                self._presence()
                self.publish_seats()

    def sit(self, conn: Connection, seat: int, token: str) -> None:
        """``conn`` proved it holds ``seat``: it gets that seat's snapshot, the others the seats."""
        conn.seat, conn.token = seat, token
        conn.push(self.text(seat, 0, "snapshot"))
        self._presence()
        self.publish_seats()

    def unseat(self, seat: int) -> None:
        """The player of ``seat`` left it (resigned, left): their connections watch from now on."""
        for conn in [c for c in self.conns if c.seat == seat]:
            conn.seat, conn.token = None, None
            conn.send_json({"type": "left", "seat": seat})
            conn.push(self.text(None, 0, "snapshot"))
        self._presence()
        self.publish_seats()

    def _presence(self) -> None:
        if self.on_presence is not None:
            self.on_presence()

    def spectators(self) -> int:
        return sum(1 for c in self.conns if c.seat is None)

    def connected_seats(self) -> set[int]:
        """The seats with a connection here or, with several workers, on another worker."""
        seats = self.local_seats()
        for more in self.remote.values():
            seats |= more
        return seats

    def local_seats(self) -> set[int]:
        """The seats with a connection to this worker."""
        return {c.seat for c in self.conns if c.seat is not None}

    # --- publishing ---------------------------------------------------------------------------
    def publish(self, log_from: int, everything: bool = False) -> None:
        """The position changed: send each viewer its message once (``everything``: the game
        ended, so every log entry is sent again, whole)."""
        self.forget()
        start = 0 if everything else log_from
        groups: dict[Viewer, list[Connection]] = {}
        for c in self.conns:
            groups.setdefault(c.seat, []).append(c)
        header = self.header()
        for viewer, conns in groups.items():
            self.push(conns, self.text(viewer, start, header=header))

    def publish_seats(self) -> None:
        """Tell everyone the seats when they changed since the last time: a spectator arriving or
        leaving changes nothing, so a crowd costs one snapshot per newcomer, not a message to all."""
        text = _dumps({"type": "seats", "seats": self.source.public_seats()})
        if text == self._seats_sent:
            return
        self._seats_sent = text
        self.push(self.conns, text)

    def push_notes(self, notes: list[tuple[str, dict[str, Any]]]) -> None:
        """Chat lines and notices, ``(channel, note)``: ``all`` to everyone, else to spectators only."""
        for channel, note in notes:
            text = _dumps({"type": "note", **note})
            self.push([c for c in self.conns if channel == ALL or c.seat is None], text)

    def push_all(self, data: dict[str, Any]) -> None:
        self.push(self.conns, _dumps(data))

    @staticmethod
    def push(conns: Iterable[Connection], text: str) -> None:
        for c in conns:
            c.push(text)

    def close(self) -> None:
        for c in list(self.conns):
            c.close()
