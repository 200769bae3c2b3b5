"""Attempts counted for every worker at once (failed log-ins, sign-ups), in the database.

Each attempt is one row of ``ludo_attempts`` (a key such as ``address:1.2.3.4``, a time), so every
worker of a cluster reads the same counts: N workers are not N times looser. :meth:`Attempts.counts`
answers, for a few keys at once, how many attempts fell within a window and the oldest and newest
of them (one indexed query); :meth:`Attempts.add` stores one attempt under several keys and, at most
once every :data:`PRUNE_EVERY` seconds, deletes the rows older than :data:`KEEP` (the table stays as
small as the last hour's attempts). Synchronous storage calls: run them through ``lobby.db``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, select

from ludoteca.web.repository.store import Repository, attempts_t

KEY_MAX = 200
"""Longest key stored (longer ones are cut)."""
KEEP = 3600.0
"""Seconds an attempt is kept: the longest window any limit counts over."""
PRUNE_EVERY = 60.0


@dataclass(frozen=True)
class Count:
    """The attempts under one key within a window: how many, the oldest and the newest time."""

    n: int = 0
    oldest: float = 0.0
    newest: float = 0.0


class Attempts:
    """Counted attempts in ``repo``'s database; ``clock`` gives the time (tests move it)."""

    def __init__(self, repo: Repository, clock: Callable[[], float] = time.time) -> None:
        self.repo = repo
        self.clock = clock
        self._pruned = 0.0

    def counts(self, keys: Iterable[str], window: float) -> dict[str, Count]:
        """For each key, its attempts in the last ``window`` seconds (a missing key: none)."""
        wanted = list(dict.fromkeys(k[:KEY_MAX] for k in keys))
        since = self.clock() - window
        q = (select(attempts_t.c.key, func.count(), func.min(attempts_t.c.at), func.max(attempts_t.c.at))
             .where(attempts_t.c.key.in_(wanted), attempts_t.c.at > since).group_by(attempts_t.c.key))
        with self.repo.engine.connect() as conn:
            found = {row[0]: Count(int(row[1]), float(row[2]), float(row[3])) for row in conn.execute(q)}
        return {k: found.get(k[:KEY_MAX], Count()) for k in keys}

    def add(self, keys: Iterable[str]) -> None:
        """One attempt now under each of ``keys``."""
        now = self.clock()
        rows = [{"key": k[:KEY_MAX], "at": now} for k in dict.fromkeys(keys)]
        with self.repo.engine.begin() as conn:
            if rows:
                conn.execute(insert(attempts_t), rows)
            if now - self._pruned >= PRUNE_EVERY or now < self._pruned:
                self._pruned = now
                conn.execute(delete(attempts_t).where(attempts_t.c.at <= now - KEEP))

    def clear(self, key: str) -> None:
        """Forget the attempts under ``key`` (e.g. a pair's failures after a successful log-in)."""
        with self.repo.engine.begin() as conn:
            conn.execute(delete(attempts_t).where(attempts_t.c.key == key[:KEY_MAX]))
