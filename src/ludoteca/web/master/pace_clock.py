"""A turn-based table's hourglass (EXAGON's) runs only while the player to move has the table open.

:func:`hold` is called where the table arms its timers (web/master/timers.py ``Timers.arm``: after every
change, a load, a lease gained) and when a seated connection comes or goes (presence.py): it stops the
hourglass of a turn-based table whose player to move has no connection (on any worker) and starts it
again when they come back. The server measures and charges the time (web/master/clock.py); a browser
never says how long it thought. A live table's hourglass is untouched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ludoteca.web.master import pace

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

PLAYING = "playing"


def hold(table: Table) -> None:
    """Pause or run the hourglass of ``table`` (turn-based only) as its player to move is away or there."""
    clock = table.master.clock
    if not pace.turn_based(table.settings) or clock.time_left is None or table.status != PLAYING:
        return
    to_move = table.to_move()
    if to_move is not None and to_move in table.hub.connected_seats():
        clock.unpause()
    else:
        clock.pause()
