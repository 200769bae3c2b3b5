""""Your games" (``/my-tables``) and a win claimed over a late opponent (turn-based tables).

``POST /api/my-tables`` with ``{"seats": [{"table": id, "token": token}, ...]}`` (the seat tokens this
browser keeps, at most :data:`MAX_TOKENS`; sent in the body, never in an address) answers every table
where the person holds a seat — an account's seats on every device, a name-only player's in this
browser — in three groups: those **waiting for their move** (the soonest deadline first, with the
seconds left), then the **others** in play or waiting for players, then the **finished** ones of the
last :data:`FINISHED_DAYS` days (at most :data:`FINISHED_SHOWN`). ``waiting`` is how many wait for a
move (the page's title shows it: "(2) ludoteca").

``POST /api/tables/<id>/claim`` with ``{"token": ...}`` (or the seat of the logged-in account): in a
two-player turn-based table whose creator chose ``on_timeout: "claim"``, the opponent of a player
whose time ran out claims the win (web/master/deadlines.py).
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from ludoteca.web.accounts.sessions import current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.limits import valid_table_id
from ludoteca.web.lobby.routes import lobby_of, read_json, table_or_404
from ludoteca.web.master.master import AI, HUMAN, OVER, PLAYING, WAITING
from ludoteca.web.master.tables import hash_token
from ludoteca.web.repository.my_seats import account_seats, token_seats

STATIC = Path(__file__).resolve().parent.parent / "static"
MAX_TOKENS = 50
"""Most seat tokens one request sends (the browser keeps the most recent)."""
FINISHED_DAYS = 14
FINISHED_SHOWN = 20

router = APIRouter()


@router.get("/my-tables", include_in_schema=False)
async def my_tables_page() -> FileResponse:
    return FileResponse(STATIC / "my-tables.html")


def _pairs(body: Any) -> list[tuple[str, str]]:
    seats = body.get("seats", []) if isinstance(body, dict) else None
    if not isinstance(seats, list) or len(seats) > MAX_TOKENS:
        raise WebError(Code.BAD_REQUEST, "send {{\"seats\": [{{\"table\": id, \"token\": token}}, ...]}} with at most "
                                         "{n} seats", n=MAX_TOKENS)
    pairs = []
    for s in seats:
        table = s.get("table") if isinstance(s, dict) else None
        token = s.get("token") if isinstance(s, dict) else None
        if (not isinstance(table, str) or not valid_table_id(table) or not isinstance(token, str)
                or not 0 < len(token) <= 200):
            raise WebError(Code.BAD_REQUEST, "each seat is {{\"table\": a table id, \"token\": its seat token}}")
        pairs.append((table, token))
    return pairs


@router.post("/api/my-tables")
async def my_tables(request: Request) -> dict[str, Any]:
    pairs = _pairs(await read_json(request))
    account = await current_account(request)
    lobby = lobby_of(request)
    now = time.time()
    engine = lobby.repo.engine
    mine: dict[str, int] = {}
    if account is not None:
        for table_id, seat in await lobby.db(account_seats, engine, account.id, now - FINISHED_DAYS * 86400):
            mine.setdefault(table_id, seat)
    for table_id, seat in await lobby.db(token_seats, engine, pairs):
        mine.setdefault(table_id, seat)
    summaries = await lobby.tables_by_id(list(mine)) if mine else []
    rows = await lobby.db(lobby.deadlines.store.of_tables, list(mine))
    waiting, others, finished = [], [], []
    for summary in summaries:
        seat = mine[summary["id"]]
        entry = {**summary, "my_seat": seat, "your_turn": False, "due": None, "time_left": None}
        live = lobby.tables.get(summary["id"])
        row = rows.get(summary["id"])
        if summary["status"] == PLAYING:
            if live is not None:
                kind = live.seats[seat].kind
                entry["your_turn"] = live.to_move() == seat and kind == HUMAN
                entry["to_move"] = live.to_move()
            elif row is not None and row.seat is not None and not row.ai:
                entry["your_turn"] = row.seat == seat and summary["seats"][seat]["kind"] != AI
                entry["to_move"] = row.seat
            if row is not None and row.due is not None and row.seat == entry.get("to_move") and not row.ai:
                entry["due"] = row.due
                entry["time_left"] = round(max(0.0, row.due - now))
        if entry["your_turn"]:
            waiting.append(entry)
        elif summary["status"] in (PLAYING, WAITING):
            others.append(entry)
        elif summary["status"] == OVER and float(summary.get("updated_at") or 0) >= now - FINISHED_DAYS * 86400:
            finished.append(entry)
    waiting.sort(key=lambda e: (e["due"] is None, e["due"] or 0.0))
    others.sort(key=lambda e: -float(e.get("updated_at") or e.get("created_at") or 0))
    finished.sort(key=lambda e: -float(e.get("updated_at") or 0))
    return {"waiting": len(waiting), "now": now,
            "tables": [*waiting, *others, *finished[:FINISHED_SHOWN]]}


@router.post("/api/tables/{table_id}/claim")
async def claim(request: Request, table_id: str) -> dict[str, Any]:
    """The opponent of a player whose time ran out claims the win (turn-based, ``on_timeout: claim``)."""
    table = await table_or_404(request, table_id)
    body = await read_json(request)
    token = body.get("token") if isinstance(body, dict) else None
    seat = None
    if isinstance(token, str) and 0 < len(token) <= 200:
        digest = hash_token(token)
        seat = next((i for i, s in enumerate(table.seats)
                     if s.token_hash is not None and secrets.compare_digest(s.token_hash, digest)), None)
    if seat is None:
        account = await current_account(request)
        if account is not None:
            seat = next((i for i, s in enumerate(table.seats) if s.account_id == account.id and s.kind == HUMAN), None)
    if seat is None:
        raise WebError(Code.BAD_TOKEN, "only a player of this table can claim the win")
    await lobby_of(request).deadlines.claim_win(table, seat)
    return {"id": table.id, "result": table.result}


@router.get("/api/tables/{table_id}/pace")
async def table_pace(request: Request, table_id: str) -> dict[str, Any]:
    """A table's pace and, turn-based, the seat to move, its deadline, the seconds left and each seat's
    reserve (the table page shows each seat's time); ``claimable`` when the opponent may claim the win."""
    table = await table_or_404(request, table_id)
    settings = table.settings
    if settings.get("pace") != "turn-based":
        return {"pace": "live"}
    lobby = lobby_of(request)
    row = await lobby.db(lobby.deadlines.store.get, table.id)
    now = time.time()
    out: dict[str, Any] = {key: settings.get(key) for key in ("pace", "move_time", "reserve", "on_timeout")}
    out.update(seat=None, due=None, time_left=None, claimable=False, reserves=[], misses=[])
    if row is not None:
        current = table.status == PLAYING and row.seq == table.master.seq and not row.ai and row.due is not None
        out.update(reserves=[round(r) for r in row.reserves], misses=row.misses)
        if current:
            out.update(seat=row.seat, due=row.due, time_left=round(max(0.0, row.due - now)),
                       claimable=row.fired and settings.get("on_timeout") == "claim")
    return out
