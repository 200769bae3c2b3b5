"""What happens when a turn-based seat's time runs out (the creator's ``on_timeout``, pace.py), told in
the table's log: the easiest AI plays the move, or the seat goes to the AI at its second miss, or the
opponent may claim the win. web/master/deadlines.py fires the deadline and calls :func:`timed_out`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ludoteca.web.errors import Code, WebError
from ludoteca.web.master import pace
from ludoteca.web.master.ai import agent_seed
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, Conflicted, Seat

if TYPE_CHECKING:
    from ludoteca.web.lobby.lobby import Lobby
    from ludoteca.web.master.tables import Table

log = logging.getLogger("ludoteca.web")

TIMED_OUT = "timed_out"
"""The notice of a seat whose time ran out: ``{"seat", "name", "then": ai_move | ai_seat | claim}``."""
CLAIMED = "claimed"
"""The notice of a win claimed over a late opponent: ``{"seat", "name", "late", "late_name"}``."""


async def timed_out(lobby: Lobby, table: Table, seat: int, seq: int, misses: int, due: float) -> None:
    """``seat``'s time ran out at ``seq`` (its ``misses``-th miss): what the creator chose, told in the log."""
    then = table.settings.get("on_timeout", pace.AI_MOVE)
    if then == pace.AI_SEAT and misses >= pace.MISSES_FOR_SEAT:
        await seat_to_ai(table, seat)
        return
    async with table.master.lock:
        if table.master.seq != seq or table.to_move() != seat:
            return
        told = any(n.kind == TIMED_OUT and n.at_seq == seq and n.data.get("seat") == seat for n in table.notes)
        if not told:  # (said once, when a firing is tried again)
            note = table.talk.note(TIMED_OUT, {"seat": seat, "name": table.name_of(seat), "then": then,
                                               "misses": misses, "due": due})
            await table.talk.store([note])
            table.talk.told([note])
    if then == pace.CLAIM:
        return  # the opponent was told with the deadline's claim (deadlines.py)
    await play_for(lobby, table, seat, seq)


async def play_for(lobby: Lobby, table: Table, seat: int, seq: int) -> None:
    """The easiest AI plays ``seat``'s move at ``seq`` (the seat stays its player's)."""
    level = table.easiest_level()
    state = table.state.clone()
    action = await lobby.ai.choose(table.id, table.game_name, table.options, state, table.master.actions,
                                   level, agent_seed(table.master.seed, seq, seat), interactive=False)
    runs, fence = table.lease()
    try:
        played = runs and await table.master.play(seat, action, seq, fence=fence) is not None
    except Conflicted:
        await table.following.refresh()
        played = False
    if not played:
        log.info("table %s: the move played for seat %d was not needed", table.id, seat)


async def seat_to_ai(table: Table, seat: int) -> None:
    """``seat`` goes to the AI for the rest of the game (``ai_took_over``, ``why: "time"``)."""
    async with table.master.lock:
        if table.status != PLAYING or table.seats[seat].kind != HUMAN:
            return
        level = table.easiest_level()
        name = table.name_of(seat)
        account = table.seats[seat].account_id
        runs, fence = table.lease()
        if not runs:
            return
        await table.change({seat: Seat(AI, level, name, None, account)}, fence=fence,
                           notes=[table.talk.note("ai_took_over", {"seat": seat, "name": name, "level": level,
                                                                   "why": "time"})])


async def claim_win(table: Table, seat: int, row: Any) -> None:
    """``seat`` claims the win: its opponent's time ran out (``on_timeout`` ``claim``, two players); ``row``:
    the table's deadline row (web/repository/deadlines.py), fired for the opponent at the table's ``seq``."""
    if table.settings.get("on_timeout") != pace.CLAIM or table.n_players != 2:
        raise WebError(Code.BAD_REQUEST, "this table does not let a player claim the win over a late opponent")
    late = 1 - seat
    async with table.master.lock:
        if table.status != PLAYING:
            raise WebError(Code.NOT_PLAYING, "the game is over")
        if (row is None or not row.fired or row.seat != late or row.seq != table.master.seq
                or table.to_move() != late):
            raise WebError(Code.NOT_YOUR_TURN, "you can claim the win only when your opponent's time has run out")
        result = {"returns": [1.0 if i == seat else -1.0 for i in range(2)], "winners": [seat],
                  "reason": "time", "seat": late}
        await table.change(status=OVER, result=result, notes=[table.talk.note(CLAIMED, {
            "seat": seat, "name": table.name_of(seat), "late": late, "late_name": table.name_of(late)})])


__all__ = ["CLAIMED", "TIMED_OUT", "claim_win", "play_for", "seat_to_ai", "timed_out"]
