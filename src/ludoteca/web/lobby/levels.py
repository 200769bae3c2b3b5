"""Which AI levels a table may seat: the ladder's everywhere, a solved game's ``perfect`` only where
the game says it can play the table's options and player count.

- ``POST /api/levels`` ``{"game", "players", "options"}`` (as for ``POST /api/tables``): ``{"levels":
  [...], "unavailable": {level: reason}}``, the levels this table may seat, weakest first, and why each
  other offered level cannot (in the requester's language); the lobby's form asks it whenever the game,
  the player count or an option changes, and offers only those levels;
- :func:`check_levels`: creating a table with an AI seat at a level that cannot play it is refused
  with ``bad_seats`` (400) and the game's reason; nothing is stored.

The game is asked, never named (:func:`ludoteca.web.master.ai.unavailable`, through the game's
``solve`` part): a solution that would first have to be computed (a board never solved here) counts
as unavailable, so an AI move never waits for a solver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request

from ludoteca.core.game import Game
from ludoteca.i18n import web_text
from ludoteca.web.errors import Code, WebError
from ludoteca.web.languages import request_language
from ludoteca.web.lobby.option_words import in_language
from ludoteca.web.lobby.routes import lobby_of, read_json
from ludoteca.web.master.ai import SOLVED_LEVELS, unavailable
from ludoteca.web.master.master import AI, Seat

if TYPE_CHECKING:
    from ludoteca.web.lobby.lobby import Lobby

router = APIRouter(prefix="/api")


async def reasons(lobby: Lobby, game: Game, levels: list[str], lang: str | None) -> dict[str, str]:
    """``{level: why it cannot play game}`` for the levels of ``levels`` that cannot (built in the
    lobby's build thread: reading whether a solution is at hand touches files)."""
    out: dict[str, str] = {}
    for level in levels:
        if level in SOLVED_LEVELS:
            why = await lobby.build(in_language, lang, unavailable, level, game)
            if why:
                out[level] = str(why)
    return out


async def check_levels(lobby: Lobby, game: Game, seats: list[Seat], lang: str | None) -> None:
    """Refuse (``bad_seats``) an AI seat whose level cannot play ``game``, naming the seat and why."""
    for i, seat in enumerate(seats):
        if seat.kind == AI and seat.level in SOLVED_LEVELS:
            why = (await reasons(lobby, game, [seat.level], lang)).get(seat.level)
            if why:
                raise WebError(Code.BAD_SEATS, "seat {seat}: the {level} AI cannot play this table: {reason}",
                               seat=i + 1, level=web_text(lang, seat.level), reason=why)


@router.post("/levels")
async def table_levels(request: Request) -> dict[str, Any]:
    """The AI levels a table of this game, player count and options may seat (see the module)."""
    lobby, lang = lobby_of(request), request_language(request)
    _name, _players, game = await lobby.requested_game(await read_json(request), lang)
    offered = lobby.levels()
    refused = await reasons(lobby, game, offered, lang)
    return {"levels": [level for level in offered if level not in refused], "unavailable": refused}


__all__ = ["check_levels", "reasons", "router"]
