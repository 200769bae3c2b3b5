"""A player leaves the game (docs/web.md, "Table life"): resigns, leaves the seat, or takes back the
seat the AI played while they were away. Each change is stored with its notice, then sent."""

from __future__ import annotations

from ludoteca.web.accounts import ratings
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection
from ludoteca.web.master.master import AI, HUMAN, OPEN, OVER, PLAYING, WAITING, Seat
from ludoteca.web.master.table_seating import Seating


class Leaving(Seating):
    """Resign, leave, take back."""

    async def resign(self, conn: Connection) -> None:
        """The player of ``conn`` resigns. Two players: the game ends and the other one wins (reason
        ``resigned``). More: the easiest AI plays the seat from now on and the person leaves it."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status != PLAYING:
                raise WebError(Code.NOT_PLAYING, "you can resign only while the game is being played")
            name = self._name(seat)
            if self.n_players == 2:
                other = 1 - seat
                result = {"returns": [1.0 if i == other else -1.0 for i in range(2)], "winners": [other],
                          "reason": "resigned", "seat": seat}
                await self._change(status=OVER, result=result,
                                   notes=[self._note("resigned", {"seat": seat, "name": name, "ended": True})])
                return
            level = self.easiest_level()
            kept = ratings.kept_account(self.settings, self.seats[seat])  # rated: the resigner still ranks last
            await self._change({seat: Seat(AI, level, f"AI {seat + 1} ({level})", None, kept)},
                               notes=[self._note("resigned", {"seat": seat, "name": name, "level": level})])
            self.away.pop(seat, None)
            self.hub.unseat(seat)

    async def leave(self, conn: Connection) -> None:
        """The player of ``conn`` leaves the seat: before the game it is open again; during the game
        it is abandoned at once (the table's ``abandoned`` setting), and cannot be taken back."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status == WAITING:
                self.holds.pop(seat, None)
                await self._change({seat: Seat(OPEN)},
                                   notes=[self._note("left", {"seat": seat, "name": self._name(seat)})])
            elif self.status == PLAYING:
                await self._abandon(seat, left=True)
            else:
                raise WebError(Code.NOT_PLAYING, "the game is over: there is no seat to leave")
            self.away.pop(seat, None)
            self.hub.unseat(seat)

    async def take_back(self, conn: Connection) -> None:
        """The player of ``conn`` plays again the seat an AI took over while they were away."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            current = self.seats[seat]
            if self.status != PLAYING or current.kind != AI:
                raise WebError(Code.NOT_PLAYING, "your seat is not played by an AI: there is nothing to take back")
            await self._change({seat: Seat(HUMAN, None, current.name, current.token_hash, current.account_id)},
                               notes=[self._note("took_back", {"seat": seat, "name": self._name(seat)})])
