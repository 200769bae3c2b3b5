"""A table's seats: the secret tokens that let a connection act for a seat, joining an open seat (the
last one starts the game), a seat following its account to another device, and rematch seats kept
for the previous game's players."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ludoteca.web.errors import Code, WebError
from ludoteca.web.hub.hub import Connection
from ludoteca.web.master.host import clean_name, hash_token
from ludoteca.web.master.master import EXPIRED, HUMAN, OPEN, PLAYING, WAITING, Seat
from ludoteca.web.repository.store import SeatData

if TYPE_CHECKING:
    from ludoteca.web.master.tables import Table

_JOIN_KEY = re.compile(r"[A-Za-z0-9_-]{22,128}")


def valid_join_key(key: Any) -> bool:
    return isinstance(key, str) and _JOIN_KEY.fullmatch(key) is not None


class Seating:
    """Seats, their tokens and the seats kept for a rematch."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.holds: dict[int, tuple[str, str | None, float]] = {}
        """Rematch seats kept for the previous game's players: seat -> (token hash, name, until)."""

    # --- rematch seats kept ----------------------------------------------------------------------------
    def active_holds(self) -> dict[int, tuple[str, str | None, float]]:
        """Open seats still kept for a previous player: seat -> (token hash, name, seconds left)."""
        now = time.time()
        seats = self.table.seats
        return {seat: (digest, name, until - now) for seat, (digest, name, until) in self.holds.items()
                if until > now and seats[seat].kind == OPEN}

    def hold_seats(self, previous: Sequence[Seat | SeatData], until: float) -> None:
        """Keep each open seat whose previous player held a token for that player until ``until``."""
        seats = self.table.seats
        for i, old in enumerate(previous[:self.table.n_players]):
            if old.kind == HUMAN and old.token_hash and seats[i].kind == OPEN:
                self.holds[i] = (old.token_hash, old.name, until)

    def _check_hold(self, seat: int, claim: str | None) -> None:
        """Refuse ``seat`` while it is kept for someone else (``claim``: the hash of an old token)."""
        held = self.active_holds().get(seat)
        if held is None:
            return
        digest, name, left = held
        if claim is not None and secrets.compare_digest(digest, claim):
            return
        raise WebError(Code.SEAT_HELD, "seat {seat} is kept for {name}, who played it in the previous game, for "
                                       "{seconds} more seconds; take another seat or try again then",
                       seat=seat + 1, name=name or f"Player {seat + 1}", seconds=max(1, round(left)))

    # --- connections --------------------------------------------------------------------------------
    def authenticate(self, conn: Connection, token: Any) -> int:
        """Sit ``conn`` at the seat whose secret ``token`` it holds; WebError if none."""
        if isinstance(token, str) and token and len(token) <= 200:
            digest = hash_token(token)
            for i, seat in enumerate(self.table.seats):
                if seat.token_hash is not None and secrets.compare_digest(seat.token_hash, digest):
                    self.table.hub.sit(conn, i, token)
                    return i
        raise WebError(Code.BAD_TOKEN, "this token does not belong to any seat of this table")

    async def sign_in(self, conn: Connection, token: Any) -> int:
        """:meth:`authenticate`; with several workers, a token unknown here is checked again after
        reading the seats stored by the other workers (a seat just taken through another one)."""
        try:
            return self.authenticate(conn, token)
        except WebError:
            if self.table.host.cluster is None:
                raise
        await self.table.following.refresh()
        return self.authenticate(conn, token)

    def seat_of(self, conn: Connection) -> int:
        """The seat ``conn`` may act for, checking its token again (every action)."""
        if conn.seat is None or conn.token is None:
            raise WebError(Code.NOT_SEATED, "you are watching: join a seat to play")
        seat = self.table.seats[conn.seat]
        if seat.token_hash is None or not secrets.compare_digest(seat.token_hash, hash_token(conn.token)):
            raise WebError(Code.BAD_TOKEN, "your seat token is not valid for this seat")
        return conn.seat

    # --- seats ----------------------------------------------------------------------------------------
    async def join(self, seat: Any, name: Any, claim: str | None = None, key: Any = None,
                   account_id: int | None = None) -> str:
        """Take the open ``seat`` under ``name``; returns the seat's secret token.

        ``account_id``: the account of a logged-in player (the seat follows it: :meth:`account_seat`).

        ``claim``: the hash of the token of the previous game's player a rematch seat is kept for.
        ``key``: a secret the client chose (22-128 letters, digits, ``-``, ``_``), which becomes
        the seat's token; sending the same join again with it answers the same token, so a join
        whose answer was lost can simply be retried."""
        table = self.table
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < table.n_players:
            raise WebError(Code.BAD_SEAT, "seats are numbered 0 to {last}", last=table.n_players - 1)
        if key is not None and not valid_join_key(key):
            raise WebError(Code.BAD_KEY, "a join key is 22 to 128 letters, digits, '-' or '_', chosen at random")
        name = clean_name(name, f"Player {seat + 1}")
        master = table.master
        async with master.lock:
            seats = master.seats
            held = seats[seat].token_hash
            if key is not None and held is not None and secrets.compare_digest(held, hash_token(key)):
                return key  # this very join again: same seat, same token
            if master.status == EXPIRED:
                raise WebError(Code.EXPIRED, "this table expired: nobody joined it in time")
            if seats[seat].kind != OPEN:
                raise WebError(Code.SEAT_TAKEN, "seat {seat} is already taken", seat=seat + 1)
            self._check_hold(seat, claim)
            token = key if key is not None else secrets.token_urlsafe(24)
            taken = {seat: Seat(HUMAN, None, name, hash_token(token), account_id)}
            if master.status == WAITING and all(s.kind != OPEN for i, s in enumerate(seats) if i != seat):
                # the last seat and the game's start: one transaction
                await table.following.caught_up(master.start(taken))
            else:
                await table.following.caught_up(master.take_seats(taken))
            return token

    async def account_seat(self, account_id: int) -> tuple[int, str] | None:
        """The seat the account holds here (before or during the game), with a new secret token: the
        seat follows the account to another browser or device; the connections of the old token
        watch from now on (they are told ``left``). None when the account holds no seat here."""
        table = self.table
        if table.host.cluster is not None:
            await table.following.refresh()  # a seat taken through another worker
        async with table.master.lock:
            if table.status not in (WAITING, PLAYING):
                return None
            for i, s in enumerate(table.seats):
                if s.account_id == account_id and s.token_hash is not None:
                    token = secrets.token_urlsafe(24)
                    await table.change({i: Seat(s.kind, s.level, s.name, hash_token(token), s.account_id)})
                    table.hub.unseat(i)
                    return i, token
        return None

    async def start(self) -> None:
        """Every seat is taken but the start was never stored (or the opening chance is pending)."""
        table = self.table
        async with table.master.lock:
            if table.status == WAITING or (table.status == PLAYING and table.state.is_chance_node()):
                await table.following.caught_up(table.master.start())

    def expire(self, status: str = EXPIRED) -> None:
        """The lobby expired this waiting table (already stored)."""
        master = self.table.master
        if master.status == WAITING:
            master.status = status
            self.table.hub.publish(master.seq)
