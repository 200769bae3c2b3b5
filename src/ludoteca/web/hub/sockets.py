"""The websocket of a table: ``/ws/{id}``, one JSON message at a time.

Client → server: ``{"type": "auth", "token"}``, ``{"type": "join", "seat", "name"}``,
``{"type": "action", "action": {...}, "seq": n}``, ``{"type": "ping"}``; the table's life
(web/master/leaving.py, talk.py): ``resign``, ``leave``, ``take_back``, ``rematch_offer``, ``rematch_accept``,
``rematch_decline``, ``{"type": "chat", "text", "name"?}``. Server → client: ``snapshot`` (on
connect and after auth), ``update`` (after every change), ``seats``, ``joined``, ``left`` (you
no longer hold a seat), ``note`` (a chat line or a notice), ``rematch``, ``pong``, ``error`` (to
that client only, errors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from ludoteca.i18n import Message
from ludoteca.web.accounts import ratings
from ludoteca.web.errors import Code, WebError, error_body
from ludoteca.web.hub.hub import Connection
from ludoteca.web.languages import socket_language
from ludoteca.web.limits import BadInput, parse_json, shown_id
from ludoteca.web.lobby.lobby import Lobby
from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

router = APIRouter()

MAX_MESSAGE = 16 * 1024
"""Largest websocket message the server reads (bytes of text); larger ones get an error."""
MAX_REFUSED = 400
"""A connection that keeps flooding after this many refused messages is closed."""
ADMIT_WAIT = 5.0
"""Seconds a connection to a table full of spectators has to authenticate as a player."""


@router.websocket("/ws/{table_id}")
async def table_socket(websocket: WebSocket, table_id: str) -> None:
    lobby: Lobby = websocket.app.state.lobby
    lang = socket_language(websocket)
    try:
        table = await lobby.get(table_id)
    except WebError as exc:  # e.g. a table whose start cannot be stored now
        await websocket.accept()
        await websocket.send_text(json.dumps(exc.to_json(lang=lang)))
        await websocket.close(code=1013)
        return
    await websocket.accept()
    if table is None:
        await websocket.send_text(json.dumps(error_body(Code.NOT_FOUND, "there is no table {table}", lang=lang,
                                                        table=shown_id(table_id))))
        await websocket.close(code=4404)
        return
    limits = websocket.app.state.socket_rate
    conn = Connection(*limits)
    conn.lang = lang
    writer = _Writer(websocket, conn)
    conn.wake = writer.wake
    try:
        if not await _admit(websocket, table, conn, lobby.max_spectators):
            conn.close(4429)
        while not conn.closed:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = _text_of(conn, message)
            if text is not None:
                await handle(lobby, table, conn, text)
    except (WebSocketDisconnect, RuntimeError):  # the socket closed under us
        pass
    finally:
        table.hub.detach(conn)
        conn.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await writer.finished(2)


def _text_of(conn: Connection, message: Mapping[str, Any]) -> str | None:
    text = message.get("text")
    if text is not None:
        return str(text)
    data = message.get("bytes") or b""
    if len(data) > MAX_MESSAGE:
        conn.error(Code.TOO_LARGE, "messages are limited to {limit} bytes", limit=MAX_MESSAGE)
        return None
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        conn.error(Code.BAD_MESSAGE, "messages are JSON text")
        return None


async def _admit(websocket: WebSocket, table: Table, conn: Connection, max_spectators: int) -> bool:
    """Attach ``conn`` to ``table``. When the table already has ``max_spectators`` spectators, only
    a player gets in: the first message must then be the ``auth`` of one of its seats (the
    client sends it at once); anyone else gets a ``spectators_full`` error."""
    if table.hub.spectators() < max_spectators:
        table.hub.attach(conn)
        return True
    token = None
    with contextlib.suppress(asyncio.TimeoutError, BadInput, KeyError, RuntimeError, WebSocketDisconnect):
        message = await asyncio.wait_for(websocket.receive(), ADMIT_WAIT)
        text = message.get("text") or message.get("bytes") or b""
        data = parse_json(text) if len(text) <= MAX_MESSAGE else None
        if isinstance(data, dict) and data.get("type") == "auth":
            token = data.get("token")
    if token is not None:
        table.hub.attach(conn)
        try:
            await table.seating.sign_in(conn, token)
            return True
        except WebError:
            table.hub.detach(conn)
    conn.error(Code.SPECTATORS_FULL, "this table already has {n} spectators, the most it takes; its players "
                                     "can still come in", n=max_spectators)
    return False


class _Writer:
    """Sends ``conn``'s queued messages in order and closes the socket when the queue says so, in a
    task that runs only while messages wait: a connection at rest keeps no waiting task, coroutine
    or future for the garbage collector to walk at each young collection (docs/web.md, "Speed
    against boardgame.io"), and a slow client still delays no other."""

    def __init__(self, websocket: WebSocket, conn: Connection) -> None:
        self.websocket = websocket
        self.conn = conn
        self.task: asyncio.Task[None] | None = None
        self.ended = False

    def wake(self) -> None:
        """A message joined the queue: send it (and whatever follows) unless a task already does."""
        if self.task is None and not self.ended:
            self.task = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        conn = self.conn
        try:
            while not conn.queue.empty():
                text = conn.queue.get_nowait()
                if text is None:
                    break
                await self.websocket.send_text(text)
            else:
                self.task = None  # all sent: the next message starts another task
                return
        except Exception:  # the client went away
            conn.closed = True
        self.ended = True
        try:
            with contextlib.suppress(Exception):
                await self.websocket.close(code=conn.close_code or (1008 if conn.limiter.refused > MAX_REFUSED
                                                                    else 1000))
        finally:
            self.task = None

    async def finished(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) for the messages queued to be sent and the socket closed."""
        async with asyncio.timeout(timeout):
            while (task := self.task) is not None:
                await asyncio.shield(task)
                if self.task is task:  # cancelled, or ended otherwise: nothing more will be sent
                    return


def _allowed(conn: Connection) -> bool:
    """The connection's rate limit: False (and an error now and then) when it sends too much."""
    if conn.limiter.allow():
        return True
    if conn.limiter.refused > MAX_REFUSED:
        conn.error(Code.RATE_LIMITED, "too many messages: disconnected")
        conn.close()
        return False
    now = time.monotonic()
    if now - conn.last_error_at > 0.5:
        conn.last_error_at = now
        conn.error(Code.RATE_LIMITED, "too many messages: at most {rate} per second", rate=f"{conn.limiter.rate:g}")
    return False


async def handle(lobby: Lobby, table: Table, conn: Connection, text: str) -> None:
    """One client message: every problem is answered to this client alone."""
    if len(text) > MAX_MESSAGE:
        conn.error(Code.TOO_LARGE, "messages are limited to {limit} bytes", limit=MAX_MESSAGE)
        return
    if not _allowed(conn):
        return
    try:
        message = parse_json(text)
    except BadInput as exc:
        conn.error(Code(exc.code), "the message: {reason}", reason=Message(exc.template, exc.params))
        return
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        conn.error(Code.BAD_MESSAGE, "a message is a JSON object with a 'type'")
        return
    ref = message.get("ref")
    if not (ref is None or isinstance(ref, int | str)) or (isinstance(ref, str) and len(ref) > 64):
        ref = None
    kind = message["type"]
    try:
        await _dispatch(lobby, table, conn, kind, message, ref)
    except WebError as exc:
        conn.send_json(exc.to_json(ref, conn.lang))
    except Exception:
        log.exception("table %s: error handling a %s message", table.id, kind[:40])
        conn.error(Code.SERVER_ERROR, "the server could not handle this message", ref)


async def _dispatch(lobby: Lobby, table: Table, conn: Connection, kind: str, message: dict[str, Any],
                    ref: Any) -> None:
    if kind == "action":
        start = time.perf_counter()
        await table.submit(conn, message)
        lobby.timings.append(time.perf_counter() - start)
    elif kind == "auth":
        await table.seating.sign_in(conn, message.get("token"))
    elif kind == "join":
        ratings.check_seat(table.settings, None)  # a rated table's seats are taken logged in, over HTTP
        token = await table.join(message.get("seat"), message.get("name"), key=message.get("key"))
        conn.send_json({"type": "joined", "seat": message.get("seat"), "token": token})
        table.seating.authenticate(conn, token)
    elif kind == "chat":
        await table.talk.chat(conn, message)
    elif kind == "resign":
        await table.leaving.resign(conn)
    elif kind == "leave":
        await table.leaving.leave(conn)
    elif kind == "take_back":
        await table.leaving.take_back(conn)
    elif kind in ("rematch_offer", "rematch_accept", "rematch_decline"):
        await table.talk.answer_rematch(conn, kind.removeprefix("rematch_"))
    elif kind == "ping":
        conn.send_json({"type": "pong", "ref": ref, "seq": table.master.seq})
    else:
        raise WebError(Code.BAD_MESSAGE, "unknown message type {type}", type=repr(kind[:40]))
