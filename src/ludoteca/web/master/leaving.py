"""A player leaves the game (docs/web.md, "Table life"): resigns, leaves the seat, or takes back the
seat the AI played while they were away. Each change is stored with its notice, then sent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ludoteca.core.i18n import N_
from ludoteca.i18n import web_text
from ludoteca.web.accounts import ratings
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection
from ludoteca.web.master.master import AI, HUMAN, OPEN, OVER, PLAYING, WAITING, Seat

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table


class Leaving:
    """Resign, leave, take back (no state of its own: the seats are the master's)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    async def resign(self, conn: Connection) -> None:
        """The player of ``conn`` resigns. Two players: the game ends and the other one wins (reason
        ``resigned``). More: the easiest AI plays the seat from now on and the person leaves it."""
        table = self.table
        async with table.master.lock:
            seat = table.seating.seat_of(conn)
            if table.status != PLAYING:
                raise WebError(Code.NOT_PLAYING, "you can resign only while the game is being played")
            name = table.name_of(seat)
            if table.n_players == 2:
                other = 1 - seat
                result = {"returns": [1.0 if i == other else -1.0 for i in range(2)], "winners": [other],
                          "reason": "resigned", "seat": seat}
                await table.change(status=OVER, result=result,
                                   notes=[table.talk.note("resigned", {"seat": seat, "name": name, "ended": True})])
                return
            level = table.easiest_level()
            kept = ratings.kept_account(table.settings, table.seats[seat])  # rated: the resigner still ranks last
            ai_name = web_text(conn.lang, N_("AI {n} ({level})"), n=seat + 1, level=web_text(conn.lang, level))
            await table.change({seat: Seat(AI, level, ai_name, None, kept)},
                               notes=[table.talk.note("resigned", {"seat": seat, "name": name, "level": level})])
            table.presence.away.pop(seat, None)
            table.hub.unseat(seat)

    async def leave(self, conn: Connection) -> None:
        """The player of ``conn`` leaves the seat: before the game it is open again; during the game
        it is abandoned at once (the table's ``abandoned`` setting), and cannot be taken back."""
        table = self.table
        async with table.master.lock:
            seat = table.seating.seat_of(conn)
            if table.status == WAITING:
                table.seating.holds.pop(seat, None)
                await table.change({seat: Seat(OPEN)},
                                   notes=[table.talk.note("left", {"seat": seat, "name": table.name_of(seat)})])
            elif table.status == PLAYING:
                await table.presence.abandon(seat, left=True)
            else:
                raise WebError(Code.NOT_PLAYING, "the game is over: there is no seat to leave")
            table.presence.away.pop(seat, None)
            table.hub.unseat(seat)

    async def take_back(self, conn: Connection) -> None:
        """The player of ``conn`` plays again the seat an AI took over while they were away."""
        table = self.table
        async with table.master.lock:
            seat = table.seating.seat_of(conn)
            current = table.seats[seat]
            if table.status != PLAYING or current.kind != AI:
                raise WebError(Code.NOT_PLAYING, "your seat is not played by an AI: there is nothing to take back")
            await table.change({seat: Seat(HUMAN, None, current.name, current.token_hash, current.account_id)},
                               notes=[table.talk.note("took_back", {"seat": seat, "name": table.name_of(seat)})])
