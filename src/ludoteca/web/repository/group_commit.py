"""The asynchronous front of the repository's appends: the server's group commit."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ludoteca.web.repository.records import AppendRequest

if TYPE_CHECKING:
    from ludoteca.web.repository.store import Repository


class GroupCommit:
    """The asynchronous front of :meth:`Repository.append_batch` (the server's hot path).

    ``run(fn, *args)`` runs a storage call (inline for SQLite, in a storage thread otherwise).
    :meth:`append` stores one table's request: requests that arrive while a commit is running
    are committed together in the next transaction; if that transaction fails, each request is
    retried alone, so that one table's failure never loses another's move.

    ``inline``: ``run`` returns without ever suspending (SQLite on the event loop). No commit can
    then be running when a request arrives, so each request is committed at once in its caller's
    task, in a transaction of its own: no wait for a loop turn, no task and no future per commit
    (a transaction of one action through the DB-API costs less than SQLAlchemy's batch did per
    action, docs/web.md)."""

    def __init__(self, repo: Repository, run: Callable[..., Awaitable[Any]], inline: bool = False) -> None:
        self.repo = repo
        self.run = run
        self.inline = inline
        self._pending: list[tuple[AppendRequest, asyncio.Future[None]]] = []
        self._draining = False
        self._drainer: asyncio.Future[None] | None = None
        self.transactions = 0
        """Transactions committed or tried (tests)."""

    async def append(self, request: AppendRequest) -> None:
        if self.inline and not self._draining:
            self.transactions += 1
            await self.run(self.repo.append_batch, [request])
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((request, fut))
        if not self._draining:
            self._draining = True
            self._drainer = asyncio.ensure_future(self._drain())
        await fut

    async def _drain(self) -> None:
        try:
            await asyncio.sleep(0)  # let the actions that arrived in this loop turn join the batch
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    self.transactions += 1
                    await self.run(self.repo.append_batch, [req for req, _ in batch])
                    for _, fut in batch:
                        _resolve(fut, None)
                except Exception:
                    await self._one_by_one(batch)
        finally:
            self._draining = False

    async def _one_by_one(self, batch: list[tuple[AppendRequest, asyncio.Future[None]]]) -> None:
        for req, fut in batch:
            try:
                self.transactions += 1
                await self.run(self.repo.append_batch, [req])
                _resolve(fut, None)
            except Exception as exc:
                if not fut.done():
                    fut.set_exception(exc)


def _resolve(fut: asyncio.Future[None], value: None) -> None:
    if not fut.done():
        fut.set_result(value)
