"""What people at a table say (docs/web.md, "Table life"): the table's stored notices, chat lines
(players', spectators' shared or apart) and rematch offers, both stored notices limited like chat;
a rematch every player accepted starts a new table with the same seats."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ludoteca.web.accounts.moderation import apply_removals
from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection
from ludoteca.web.limits import SERVER_ONLY_OPTIONS
from ludoteca.web.master import life
from ludoteca.web.master.host import clean_name
from ludoteca.web.master.master import AI, HUMAN, OPEN, OVER, Seat
from ludoteca.web.repository.store import NOTES_LOADED, NoteData, TableData

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")


def offer_of(notes: Sequence[NoteData]) -> dict[str, Any] | None:
    """The rematch offer pending after ``notes`` (a table rebuilt from storage)."""
    offer: dict[str, Any] | None = None
    for n in notes:
        seat = n.data.get("seat")
        if n.kind == "rematch_offer" and isinstance(seat, int):
            offer = {"by": seat, "accepted": [seat]}
        elif n.kind == "rematch_accept" and offer is not None and isinstance(seat, int):
            offer["accepted"] = sorted({*offer["accepted"], seat})
        elif n.kind in ("rematch_decline", "rematch_started"):
            offer = None
    return offer


class Talk:
    """The table's notices, chat and rematch offers."""

    def __init__(self, table: Table, data: TableData) -> None:
        self.table = table
        self.notes: deque[NoteData] = deque(data.notes, maxlen=NOTES_LOADED)
        self.offer: dict[str, Any] | None = offer_of(data.notes)
        """The rematch offer pending: ``{"by": seat, "accepted": [seats]}``, or None."""

    # --- stored notices ---------------------------------------------------------------------------------
    def note(self, kind: str, data: dict[str, Any], channel: str = life.ALL) -> NoteData:
        return NoteData(kind, channel, self.table.master.seq, data, time.time())

    def told(self, notes: Sequence[NoteData]) -> None:
        """Stored notes: kept with the table and sent to whoever may read them."""
        apply_removals(self.notes, notes)
        self.notes.extend(notes)
        self.table.hub.push_notes([(n.channel, n.to_json()) for n in notes])

    def heard(self, notes: Sequence[NoteData]) -> list[NoteData]:
        """Notes another worker stored: the new ones kept and sent (the offer follows them)."""
        known = {(n.kind, n.channel, n.at_seq, round(n.created_at, 3)) for n in self.notes}
        fresh = [n for n in notes if (n.kind, n.channel, n.at_seq, round(n.created_at, 3)) not in known]
        if fresh:
            apply_removals(self.notes, fresh)
            self.notes.extend(fresh)
            self.offer = offer_of(list(self.notes))
            self.table.hub.push_notes([(n.channel, n.to_json()) for n in fresh])
        return fresh

    async def store(self, notes: list[NoteData]) -> None:
        """Notes alone (a chat line, a rematch answer): stored, then the other workers told."""
        table = self.table
        try:
            await table.host.db(table.host.repo.add_notes, table.id, notes)
        except WebError:
            raise
        except Exception as exc:
            log.exception("table %s: cannot store a note", table.id)
            raise WebError(Code.STORAGE, "your message could not be saved; try again") from exc
        table.following.announce()

    # --- rematch offers --------------------------------------------------------------------------------
    def _players(self) -> list[int]:
        """The seats of people (whose answer a rematch needs)."""
        return [i for i, s in enumerate(self.table.seats) if s.kind == HUMAN and s.token_hash is not None]

    async def answer_rematch(self, conn: Connection, answer: str) -> None:
        """``answer``: ``offer`` (or accept the offer already made), ``accept`` or ``decline``. When
        every player accepted, the rematch starts with the same seats (each player's browser keeps
        its token: the new table's seat holds the same one)."""
        table = self.table
        async with table.master.lock:
            seat = table.seating.seat_of(conn)
            if table.status != OVER:
                raise WebError(Code.NOT_OVER, "a rematch can be offered once the game is over")
            if table.rematch_id is not None:
                raise WebError(Code.NO_OFFER, "the rematch table is already made: join it")
            if table.seats[seat].kind != HUMAN:
                raise WebError(Code.NOT_SEATED, "an AI plays your seat: only players answer a rematch offer")
            name = table.name_of(seat)
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
            note = self.note(kind, {"seat": seat, "name": name})
            await self.store([note])
            self.offer = offer
            self.told([note])
            if self.offer is not None and set(self._players()) <= set(self.offer["accepted"]):
                await self._start_rematch()
            table.hub.publish(table.master.seq)

    async def _start_rematch(self) -> None:
        """Every player accepted (lock held): the new table, its seats taken by the same players."""
        table = self.table
        request = {
            "game": table.game_name, "players": table.n_players,
            "options": {k: v for k, v in table.options.items() if k != "players" and k not in SERVER_ONLY_OPTIONS},
            "seats": [{"kind": AI, "level": s.level} if s.kind == AI else {"kind": OPEN} for s in table.seats],
            "unlisted": table.unlisted, **table.settings,
        }
        made, _, _ = await table.host.create(request, rematch_of=table.id)
        taken = {i: Seat(HUMAN, None, s.name, s.token_hash, s.account_id) for i, s in enumerate(table.seats)
                 if s.kind == HUMAN and s.token_hash is not None}
        async with made.master.lock:
            await made.following.caught_up(made.master.start(taken))
        table.rematch_id = made.id
        note = self.note("rematch_started", {"table": made.id})
        await table.host.db(table.host.repo.set_rematch, table.id, made.id)
        await table.host.db(table.host.repo.add_notes, table.id, [note])
        self.offer = None
        self.told([note])
        table.following.announce()
        table.hub.push_all({"type": "rematch", "table": made.id, "together": True})

    # --- chat ------------------------------------------------------------------------------------------
    async def chat(self, conn: Connection, message: dict[str, Any]) -> None:
        """A chat line from ``conn``: a player's reaches everyone; a spectator's reaches everyone
        (chat ``shared``) or the spectators only (``separate``). Stored, then sent."""
        table = self.table
        text = life.chat_text(message.get("text"))  # refused lines cost no chat allowance
        if not conn.chat_limiter.allow():
            raise WebError(Code.RATE_LIMITED, "you are writing too fast: wait a moment before the next message")
        if conn.seat is not None:
            seat: int | None = table.seating.seat_of(conn)
            name = table.name_of(conn.seat)
            channel = life.ALL
        else:
            seat = None
            name = clean_name(message.get("name"), "Spectator")
            channel = life.ALL if table.settings["chat"] == "shared" else life.SPECTATORS
        note = self.note("chat", {"seat": seat, "name": name, "text": text}, channel)
        await self.store([note])
        self.told([note])
