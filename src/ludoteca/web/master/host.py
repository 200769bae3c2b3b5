"""What a table needs from the server around it (the lobby, the cluster), and the small rules on
seat tokens and names that several parts of a table share."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ludoteca.web.errors import Code, WebError
from ludoteca.web.master.ai import AIRunner
from ludoteca.web.master.listeners import Listener
from ludoteca.web.master.master import Fence, Store
from ludoteca.web.repository.store import Repository

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

MAX_NAME = 24
STALL_AFTER = 300.0
"""Seconds without a move, with a human to move who is away, before the lobby shows 'stalled'."""


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def clean_name(name: Any, default: str) -> str:
    if name is None:
        return default
    if not isinstance(name, str):
        raise WebError(Code.BAD_NAME, "a name is text")
    text = " ".join("".join(ch for ch in name if ch.isprintable()).split())
    if len(text) > MAX_NAME:
        raise WebError(Code.BAD_NAME, "a name has at most {n} characters", n=MAX_NAME)
    return text or default


class Shared(Protocol):
    """The worker's part in a cluster of workers (cluster.py), as a table sees it."""

    worker: str
    """This worker's id."""

    def holds(self, table_id: str) -> bool: ...

    def fence(self, table_id: str) -> Fence | None: ...

    def announce(self, table_id: str, seq: int, body: dict[str, Any]) -> None: ...

    def claim(self, table: Table) -> None: ...

    def release(self, table_id: str) -> None: ...


class Host(Protocol):
    """What a table needs from the server around it (the lobby)."""

    cluster: Shared | None
    closing: bool
    ai_delay: float
    ai: AIRunner
    stall_after: float
    committer: Store
    repo: Repository
    table_listeners: list[Listener]
    """Told of every committed change of every table (listeners.py)."""

    async def db(self, fn: Callable[..., Any], *args: Any) -> Any: ...

    def levels(self) -> list[str]: ...

    async def create(self, request: Any, rematch_of: str | None = None) -> tuple[Table, int | None, str | None]: ...
