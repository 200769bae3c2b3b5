"""What people at a table say (docs/web.md, "Table life"): chat lines (players', spectators' shared or
apart) and rematch offers, both stored notices limited like chat; a rematch every player accepted
starts a new table with the same seats."""

from __future__ import annotations

from typing import Any

from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import life
from ludoteca.web.master.master import AI, HUMAN, OPEN, OVER, Seat
from ludoteca.web.master.table_core import clean_name
from ludoteca.web.master.table_seating import Seating


class Talk(Seating):
    """Chat and rematch offers."""

    # --- rematch offers --------------------------------------------------------------------------------
    def _players(self) -> list[int]:
        """The seats of people (whose answer a rematch needs)."""
        return [i for i, s in enumerate(self.seats) if s.kind == HUMAN and s.token_hash is not None]

    async def answer_rematch(self, conn: Connection, answer: str) -> None:
        """``answer``: ``offer`` (or accept the offer already made), ``accept`` or ``decline``. When
        every player accepted, the rematch starts with the same seats (each player's browser keeps
        its token: the new table's seat holds the same one)."""
        async with self.master.lock:
            seat = self.seat_of(conn)
            if self.status != OVER:
                raise WebError(Code.NOT_OVER, "a rematch can be offered once the game is over")
            if self.rematch_id is not None:
                raise WebError(Code.NO_OFFER, "the rematch table is already made: join it")
            if self.seats[seat].kind != HUMAN:
                raise WebError(Code.NOT_SEATED, "an AI plays your seat: only players answer a rematch offer")
            name = self._name(seat)
            offer: dict[str, Any] | None
            if answer == "offer" and self.offer is None:
                offer, kind = {"by": seat, "accepted": [seat]}, "rematch_offer"
            elif self.offer is None:
                raise WebError(Code.NO_OFFER, "nobody offered a rematch")
            elif answer == "decline":
                offer, kind = None, "rematch_decline"
            else:
                offer = {**self.offer, "accepted": sorted({*self.offer["accepted"], seat})}
                kind = "rematch_accept"
            if not conn.chat_limiter.allow():  # offers and answers are stored notices, limited like chat
                raise WebError(Code.RATE_LIMITED, "you are writing too fast: wait a moment before the next message")
            note = self._note(kind, {"seat": seat, "name": name})
            await self._store_notes([note])
            self.offer = offer
            self._told([note])
            if self.offer is not None and set(self._players()) <= set(self.offer["accepted"]):
                await self._start_rematch()
            self.hub.publish(self.master.seq)

    async def _start_rematch(self) -> None:
        """Every player accepted (lock held): the new table, its seats taken by the same players."""
        request = {
            "game": self.game_name, "players": self.n_players,
            "options": {k: v for k, v in self.options.items() if k != "players" and k not in SERVER_ONLY_OPTIONS},
            "seats": [{"kind": AI, "level": s.level} if s.kind == AI else {"kind": OPEN} for s in self.seats],
            "unlisted": self.unlisted, **self.settings,
        }
        made, _, _ = await self.host.create(request, rematch_of=self.id)
        taken = {i: Seat(HUMAN, None, s.name, s.token_hash, s.account_id) for i, s in enumerate(self.seats)
                 if s.kind == HUMAN and s.token_hash is not None}
        async with made.master.lock:
            await made.master.start(taken)
        self.rematch_id = made.id
        note = self._note("rematch_started", {"table": made.id})
        await self.host.db(self.host.repo.set_rematch, self.id, made.id)
        await self.host.db(self.host.repo.add_notes, self.id, [note])
        self.offer = None
        self._told([note])
        self.announce()
        self.hub.push_all({"type": "rematch", "table": made.id, "together": True})

    # --- chat ------------------------------------------------------------------------------------------
    async def chat(self, conn: Connection, message: dict[str, Any]) -> None:
        """A chat line from ``conn``: a player's reaches everyone; a spectator's reaches everyone
        (chat ``shared``) or the spectators only (``separate``). Stored, then sent."""
        text = life.chat_text(message.get("text"))  # refused lines cost no chat allowance
        if not conn.chat_limiter.allow():
            raise WebError(Code.RATE_LIMITED, "you are writing too fast: wait a moment before the next message")
        if conn.seat is not None:
            seat: int | None = self.seat_of(conn)
            name = self._name(conn.seat)
            channel = life.ALL
        else:
            seat = None
            name = clean_name(message.get("name"), "Spectator")
            channel = life.ALL if self.settings["chat"] == "shared" else life.SPECTATORS
        note = self._note("chat", {"seat": seat, "name": name, "text": text}, channel)
        await self._store_notes([note])
        self._told([note])
