"""Moderation for the club that hosts the server (docs/web.md, "Moderation").

A moderator is an account whose ``role`` is ``admin``: the club's first account, or one named with
``ludoteca admin grant NAME``. Moderators, and nobody else (HTTP 403, in the request's language),
may from ``/admin``:

- see who is at a table now (seated players whose connection is up: the ``away`` tracking every
  worker stores, so the list covers every worker) and this worker's open connections;
- close a table that is waiting or being played: it ends with no winner (reason ``closed``), is
  never rated, and everyone at it is told;
- remove a chat line: its text is erased from storage and from every worker's memory, and every
  viewer's chat shows "removed by a moderator" in its place;
- rename an account (its seats at tables take the new name) and suspend or restore it (a suspended
  account cannot log in; its sessions stop counting at once);
- read the moderation log: every action above, who did it, to what, when. Actions are logged in
  the same transaction as the change they make, so there is no change without its line.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse
from sqlalchemy import and_, select, update
from sqlalchemy.engine import Connection

from ludoteca.web.accounts.ratings import CLOSED_BY_MODERATOR
from ludoteca.web.accounts.sessions import Account, current_account
from ludoteca.web.errors import Code, WebError
from ludoteca.web.repository.store import (
    PLAYING,
    WAITING,
    AccountData,
    DuplicateName,
    NoteData,
    Repository,
    accounts_t,
    admin_log_t,
    name_key,
    notes_t,
    seats_t,
    sessions_t,
    tables_t,
)

ADMIN = "admin"
CLOSED = CLOSED_BY_MODERATOR
"""The ``reason`` of a result when a moderator closed the table."""
CHAT = "chat"
CHAT_REMOVED = "chat_removed"
"""The notice that a chat line was removed: ``{"removed_time": the line's time}``."""
TABLE_CLOSED = "table_closed"
LOG_PAGE = 100
"""Lines of the moderation log shown at once."""
ONLINE_LIMIT = 500
CHAT_PAGE = 100

router = APIRouter()


# --- storage: each change with its log line, in one transaction -------------------------------------------------

def _log(conn: Connection, admin: AccountData | Account, action: str, target: str, detail: Any = None) -> None:
    conn.execute(admin_log_t.insert().values(
        at=time.time(), admin_id=admin.id, admin=admin.name, action=action, target=target[:128],
        detail=None if detail is None else json.dumps(detail)))


def set_role(repo: Repository, name: str, role: str | None, by: AccountData | None = None) -> AccountData:
    """Give (``admin``) or take back (None) the moderator role; logged (by the command line when ``by`` is None)."""
    with repo.engine.begin() as conn:
        row = conn.execute(select(accounts_t).where(accounts_t.c.name_key == name_key(name))).first()
        if row is None:
            raise LookupError(name)
        conn.execute(update(accounts_t).where(accounts_t.c.id == row.id).values(role=role))
        actor = by or AccountData(id=0, name="(command line)", created_at=0.0, password_hash="")
        _log(conn, actor, "grant" if role else "revoke", row.name)
    account = repo.account_by_id(int(row.id))
    assert account is not None
    return account


def moderators(repo: Repository) -> list[str]:
    with repo.engine.connect() as conn:
        return [r.name for r in conn.execute(select(accounts_t.c.name).where(accounts_t.c.role == ADMIN)
                                             .order_by(accounts_t.c.name_key))]


def suspend(repo: Repository, admin: Account, name: str, suspended: bool) -> AccountData:
    with repo.engine.begin() as conn:
        row = conn.execute(select(accounts_t).where(accounts_t.c.name_key == name_key(name))).first()
        if row is None:
            raise WebError(Code.NOT_FOUND, "there is no account named {name}", name=name)
        if row.id == admin.id:
            raise WebError(Code.BAD_REQUEST, "you cannot suspend your own account")
        conn.execute(update(accounts_t).where(accounts_t.c.id == row.id)
                     .values(suspended_at=time.time() if suspended else None))
        if suspended:
            conn.execute(sessions_t.delete().where(sessions_t.c.account_id == row.id))
        _log(conn, admin, "suspend" if suspended else "restore", row.name)
    found = repo.account_by_id(int(row.id))
    assert found is not None
    return found


def rename(repo: Repository, admin: Account, name: str, new_name: str) -> AccountData:
    """Rename the account ``name``: its seats at every table take the new name."""
    try:
        with repo.engine.begin() as conn:
            row = conn.execute(select(accounts_t).where(accounts_t.c.name_key == name_key(name))).first()
            if row is None:
                raise WebError(Code.NOT_FOUND, "there is no account named {name}", name=name)
            conn.execute(update(accounts_t).where(accounts_t.c.id == row.id)
                         .values(name=new_name, name_key=name_key(new_name)))
            conn.execute(update(seats_t).where(seats_t.c.account_id == row.id).values(name=new_name))
            _log(conn, admin, "rename", row.name, {"to": new_name})
    except DuplicateName:
        raise
    except Exception as exc:
        if "unique" in str(exc).lower() or "duplicate" in str(exc).lower():
            raise WebError(Code.NAME_TAKEN, "that name is taken; choose another") from None
        raise
    found = repo.account_by_id(int(row.id))
    assert found is not None
    return found


@dataclass(frozen=True)
class ChatLine:
    id: int
    table_id: str
    channel: str
    at_seq: int
    created_at: float
    data: dict[str, Any]


def recent_chat(repo: Repository, limit: int = CHAT_PAGE, table_id: str | None = None) -> list[dict[str, Any]]:
    """The newest chat lines of every table (or of one), newest first, for the moderators' page."""
    q = select(notes_t).where(notes_t.c.kind == CHAT)
    if table_id is not None:
        q = q.where(notes_t.c.table_id == table_id)
    with repo.engine.connect() as conn:
        rows = conn.execute(q.order_by(notes_t.c.id.desc()).limit(limit)).all()
    out = []
    for r in rows:
        data = json.loads(r.data)
        out.append({"id": r.id, "table": r.table_id, "time": round(r.created_at, 3), "name": data.get("name"),
                    "text": data.get("text", ""), "removed": bool(data.get("removed"))})
    return out


def erase_chat(repo: Repository, admin: Account, note_id: int) -> ChatLine:
    """Erase the text of the chat line ``note_id`` in storage (logged); the line as it is now."""
    with repo.engine.begin() as conn:
        row = conn.execute(select(notes_t).where(notes_t.c.id == note_id, notes_t.c.kind == CHAT)).first()
        if row is None:
            raise WebError(Code.NOT_FOUND, "there is no such chat message")
        data = json.loads(row.data)
        erased = {k: v for k, v in data.items() if k != "text"} | {"text": "", "removed": True}
        conn.execute(update(notes_t).where(notes_t.c.id == note_id).values(data=json.dumps(erased)))
        _log(conn, admin, "remove_chat", row.table_id, {"name": data.get("name"), "text": data.get("text", "")[:200]})
    return ChatLine(int(row.id), row.table_id, row.channel, row.at_seq, row.created_at, erased)


def log_closed(repo: Repository, admin: Account, table_id: str) -> None:
    with repo.engine.begin() as conn:
        _log(conn, admin, "close_table", table_id)


def read_log(repo: Repository, limit: int = LOG_PAGE) -> list[dict[str, Any]]:
    with repo.engine.connect() as conn:
        rows = conn.execute(select(admin_log_t).order_by(admin_log_t.c.id.desc()).limit(limit)).all()
    return [{"at": r.at, "admin": r.admin, "action": r.action, "target": r.target,
             "detail": json.loads(r.detail) if r.detail else None} for r in rows]


def online(repo: Repository, limit: int = ONLINE_LIMIT) -> list[dict[str, Any]]:
    """Seated people whose connection is up now, at tables waiting or in play (every worker stores
    when a seat's player goes away, so this covers them all)."""
    q = (select(seats_t.c.table_id, seats_t.c.seat, seats_t.c.name, seats_t.c.account_id, tables_t.c.game,
                tables_t.c.status)
         .join(tables_t, tables_t.c.id == seats_t.c.table_id)
         .where(and_(seats_t.c.kind == "human", seats_t.c.away_since.is_(None),
                     tables_t.c.status.in_((WAITING, PLAYING))))
         .order_by(tables_t.c.updated_at.desc()).limit(limit))
    with repo.engine.connect() as conn:
        return [{"table": r.table_id, "seat": r.seat, "name": r.name, "account": r.account_id is not None,
                 "game": r.game, "status": r.status} for r in conn.execute(q)]


def accounts_page(repo: Repository, query: str = "", limit: int = 50) -> list[dict[str, Any]]:
    q = select(accounts_t.c.name, accounts_t.c.role, accounts_t.c.suspended_at, accounts_t.c.created_at)
    if query:
        q = q.where(accounts_t.c.name_key.contains(name_key(query), autoescape=True))
    with repo.engine.connect() as conn:
        rows = conn.execute(q.order_by(accounts_t.c.name_key).limit(limit)).all()
    return [{"name": r.name, "admin": r.role == ADMIN, "suspended": r.suspended_at is not None,
             "created_at": r.created_at} for r in rows]


# --- a table's memory: removed chat lines ------------------------------------------------------------------------

def removal_note(line: ChatLine, seq: int) -> NoteData:
    return NoteData(CHAT_REMOVED, line.channel, seq, {"removed_time": round(line.created_at, 3)}, time.time())


def apply_removals(notes: Iterable[NoteData], fresh: Sequence[NoteData]) -> None:
    """Erase, in a table's notes in memory, the chat lines that the ``chat_removed`` notices among
    ``fresh`` name (a worker that learns of a removal from the database does the same)."""
    gone = {n.data.get("removed_time") for n in fresh if n.kind == CHAT_REMOVED}
    if not gone:
        return
    for n in notes:
        if n.kind == CHAT and round(n.created_at, 3) in gone and not n.data.get("removed"):
            n.data = {k: v for k, v in n.data.items() if k != "text"} | {"text": "", "removed": True}


# --- HTTP ---------------------------------------------------------------------------------------------------------

async def require_admin(request: Request) -> Account:
    """The logged-in moderator making ``request``; else 401 (not logged in) or 403."""
    account = await current_account(request)
    if account is None:
        raise WebError(Code.NOT_LOGGED_IN, "log in first")
    lobby = request.app.state.lobby
    stored = await lobby.db(lobby.repo.account_by_id, account.id)
    if stored is None or stored.role != ADMIN:
        raise WebError(Code.NOT_ADMIN, "only the club's moderators may do this")
    return account


async def is_admin(request: Request) -> bool:
    account = await current_account(request)
    if account is None:
        return False
    lobby = request.app.state.lobby
    stored = await lobby.db(lobby.repo.account_by_id, account.id)
    return stored is not None and stored.role == ADMIN


async def _body(request: Request) -> dict[str, Any]:
    from ludoteca.web.lobby.lobby import read_json

    body = await read_json(request)
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "send a JSON object")
    return body


@router.get("/admin", include_in_schema=False)
async def admin_page() -> FileResponse:
    from ludoteca.web.app import STATIC

    return FileResponse(STATIC / "admin.html")


@router.get("/api/admin")
async def overview(request: Request) -> dict[str, Any]:
    await require_admin(request)
    lobby = request.app.state.lobby
    connections = sum(len(t.hub.conns) for t in list(lobby.tables.values()))
    return {
        "online": await lobby.db(online, lobby.repo),
        "worker": {"id": getattr(request.app.state, "worker_id", None), "connections": connections,
                   "tables_loaded": len(lobby.tables)},
        "chat": await lobby.db(recent_chat, lobby.repo),
        "log": await lobby.db(read_log, lobby.repo),
        "moderators": await lobby.db(moderators, lobby.repo),
    }


@router.get("/api/admin/accounts")
async def list_accounts(request: Request, q: str = "") -> dict[str, Any]:
    await require_admin(request)
    lobby = request.app.state.lobby
    return {"accounts": await lobby.db(accounts_page, lobby.repo, q[:64])}


@router.post("/api/admin/tables/{table_id}/close")
async def close_table(request: Request, table_id: str) -> dict[str, Any]:
    admin = await require_admin(request)
    lobby = request.app.state.lobby
    table = await lobby.get(table_id)
    if table is None:
        raise WebError(Code.NOT_FOUND, "there is no table {table}", table=table_id)
    closed = await table.close_by_moderator(admin.name)
    if not closed:
        raise WebError(Code.NOT_PLAYING, "that table is not waiting or being played: there is nothing to close")
    await lobby.db(log_closed, lobby.repo, admin, table_id)
    return {"id": table_id, "status": table.status}


@router.post("/api/admin/chat/{note_id}/remove")
async def remove_chat(request: Request, note_id: int) -> dict[str, Any]:
    admin = await require_admin(request)
    lobby = request.app.state.lobby
    line = await lobby.db(erase_chat, lobby.repo, admin, note_id)
    table = await lobby.get(line.table_id)
    if table is not None:
        await table.tell_removed(line)
    return {"id": note_id, "removed": True}


@router.post("/api/admin/accounts/{name}/rename")
async def rename_account(request: Request, name: str) -> dict[str, Any]:
    from ludoteca.web.accounts.accounts import check_name

    admin = await require_admin(request)
    body = await _body(request)
    new_name = check_name(body.get("name"))
    lobby = request.app.state.lobby
    account = await lobby.db(rename, lobby.repo, admin, name, new_name)
    return {"name": account.name}


@router.post("/api/admin/accounts/{name}/suspend")
async def suspend_account(request: Request, name: str) -> dict[str, Any]:
    admin = await require_admin(request)
    body = await _body(request)
    suspended = body.get("suspended", True)
    if not isinstance(suspended, bool):
        raise WebError(Code.BAD_REQUEST, "suspended is true or false")
    lobby = request.app.state.lobby
    account = await lobby.db(suspend, lobby.repo, admin, name, suspended)
    return {"name": account.name, "suspended": account.suspended_at is not None}
