"""What happens after a table's change is committed: the :class:`Change`, and the listeners told of it.

The master (master.py) commits a change and hands its :class:`Change` to its publisher, the table's
:class:`Listeners`; they call every :class:`Listener` in the order they were added. The table adds
its own first (tables.py: the viewers told and away players counted, a rated table rated, the lease
claimed or released, the hourglass, AI seats and abandon timer armed, the other workers told), then
the ones the server registered for every table (``Host.table_listeners``). A change another worker
committed, taken in from the bus or the database (following.py), reaches the same listeners with
``local`` False: the work that must happen once across workers (ratings, telling the others, a
notice to a player) listens to local changes only.

A listener is called synchronously, with the table's lock held, after the change is stored and in
memory: it reads the table, and must neither block nor await. Work that takes time or changes the
table again goes in a task (``table.spawn(coro)``; a task that changes the table takes
``table.master.lock`` first). An exception in a listener is logged and the next listener is called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ludoteca.web.repository.store import NoteData

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

PLAYING, OVER = "playing", "over"


@dataclass(frozen=True)
class Change:
    """One committed change of a table, as its listeners receive it."""

    table: str
    """The table's id."""
    log_from: int
    """The first entry of the log the viewers are sent (the ``seq`` before the change)."""
    seq: int
    """How many actions were played after the change."""
    status: str
    """The table's status after the change (``waiting``, ``playing``, ``over``...)."""
    previous: str
    """The table's status before the change."""
    actions: tuple[tuple[int | None, dict[str, Any]], ...] = ()
    """The actions the change added, in order: (seat, or None for a chance outcome; stored JSON)."""
    seats: tuple[int, ...] = ()
    """The seats the change took or replaced (a join, a resignation, an AI taking over...)."""
    notes: tuple[NoteData, ...] = ()
    """The stored notices that tell the change (a resignation, an abandoned seat...)."""
    everything: bool = False
    """The game ended with secrets: every viewer is sent the whole log again, every event public."""
    at: float = 0.0
    """When the last action was stored (epoch seconds; the table's ``last_move_at``)."""
    local: bool = True
    """True when this worker committed the change; False when it was taken in from another worker."""

    @property
    def only_actions(self) -> bool:
        """Only actions were added (the end of the game follows from them): another worker can
        replay them from a message, without reading the database."""
        return bool(self.actions) and not self.seats and self.status in (self.previous, OVER)

    @property
    def started(self) -> bool:
        """The game began with this change."""
        return self.status == PLAYING and self.previous != PLAYING

    @property
    def ended(self) -> bool:
        """The game ended with this change (``table.result`` says how)."""
        return self.status == OVER and self.previous != OVER


class Listener(Protocol):
    """Told of every committed change of a table (see the module's docstring)."""

    def changed(self, table: Table, change: Change) -> None: ...


class Call:
    """A function ``fn(table, change)`` as a :class:`Listener`."""

    def __init__(self, fn: Callable[[Table, Change], None]) -> None:
        self.fn = fn

    def changed(self, table: Table, change: Change) -> None:
        self.fn(table, change)


class Listeners:
    """A table's listeners, in order: the publisher its master commits to."""

    def __init__(self, table: Table, listeners: Sequence[Listener] = ()) -> None:
        self.table = table
        self._listeners: list[Listener] = list(listeners)

    def add(self, listener: Listener) -> None:
        """Tell ``listener`` of every change from now on (after the ones added before)."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def remove(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def __iter__(self) -> Any:
        return iter(list(self._listeners))

    def committed(self, change: Change) -> None:
        """Tell every listener of ``change``, in order (the master's publisher)."""
        for listener in list(self._listeners):
            try:
                listener.changed(self.table, change)
            except Exception:
                log.exception("table %s: a listener failed after a change", change.table)
