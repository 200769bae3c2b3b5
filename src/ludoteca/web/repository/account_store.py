"""The accounts and login sessions in storage (web/accounts/accounts.py, sessions.py)."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Engine, Row
from sqlalchemy.exc import IntegrityError

from ludoteca.web.repository.records import AccountData, DuplicateName, SessionData
from ludoteca.web.repository.schema import accounts_t, seats_t, sessions_t


def name_key(name: str) -> str:
    """The form of an account name that must be unique: casefolded."""
    return name.casefold()


def _account(row: Row[Any]) -> AccountData:
    return AccountData(id=int(row.id), name=row.name, created_at=row.created_at, password_hash=row.password_hash,
                       role=row.role, suspended_at=row.suspended_at)


class AccountStore:
    """Accounts and sessions: the part of :class:`~ludoteca.web.repository.store.Repository` they need."""

    engine: Engine

    def create_account(self, name: str, password_hash: str) -> int:
        """A new account; returns its id. :class:`DuplicateName` if the casefolded name is taken. The
        club's first account is its first moderator (``role`` admin)."""
        try:
            with self.engine.begin() as conn:
                first = conn.execute(select(accounts_t.c.id).limit(1)).first() is None
                done = conn.execute(insert(accounts_t).values(
                    name=name, name_key=name_key(name), password_hash=password_hash, created_at=time.time(),
                    role="admin" if first else None))
                key = done.inserted_primary_key
                return int(key[0]) if key is not None else 0
        except IntegrityError as exc:
            raise DuplicateName(name) from exc

    def account_by_id(self, account_id: int) -> AccountData | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(accounts_t).where(accounts_t.c.id == account_id)).first()
        return _account(row) if row is not None else None

    def account_by_name(self, name: str) -> AccountData | None:
        """The account with that name, whatever its case."""
        with self.engine.connect() as conn:
            row = conn.execute(select(accounts_t).where(accounts_t.c.name_key == name_key(name))).first()
        return _account(row) if row is not None else None

    def set_password_hash(self, account_id: int, password_hash: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(accounts_t).where(accounts_t.c.id == account_id).values(password_hash=password_hash))

    def create_session(self, token_hash: str, account_id: int, csrf: str, expires_at: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(sessions_t).values(token_hash=token_hash, account_id=account_id, csrf=csrf,
                                                   created_at=time.time(), expires_at=expires_at))

    def session(self, token_hash: str, now: float) -> SessionData | None:
        """The session with that token hash and its account, unless it expired before ``now``."""
        q = (select(sessions_t.c.csrf, sessions_t.c.expires_at, accounts_t)
             .join(accounts_t, accounts_t.c.id == sessions_t.c.account_id)
             .where(sessions_t.c.token_hash == token_hash, sessions_t.c.expires_at > now,
                    accounts_t.c.suspended_at.is_(None)))
        with self.engine.connect() as conn:
            row = conn.execute(q).first()
        if row is None:
            return None
        return SessionData(account=_account(row), csrf=row.csrf, expires_at=row.expires_at)

    def extend_session(self, token_hash: str, expires_at: float) -> None:
        """Sliding expiry: the session lasts until ``expires_at``."""
        with self.engine.begin() as conn:
            conn.execute(update(sessions_t).where(sessions_t.c.token_hash == token_hash)
                         .values(expires_at=expires_at))

    def delete_session(self, token_hash: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(sessions_t.delete().where(sessions_t.c.token_hash == token_hash))

    def delete_expired_sessions(self, now: float) -> int:
        """Forget the sessions expired before ``now``; returns how many."""
        with self.engine.begin() as conn:
            return int(conn.execute(sessions_t.delete().where(sessions_t.c.expires_at <= now)).rowcount or 0)

    def account_seat(self, table_id: str, account_id: int) -> int | None:
        """The first seat of the table taken by that account (None: none)."""
        q = (select(seats_t.c.seat).where(seats_t.c.table_id == table_id, seats_t.c.account_id == account_id,
                                          seats_t.c.kind == "human").order_by(seats_t.c.seat).limit(1))
        with self.engine.connect() as conn:
            seat = conn.execute(q).scalar()
        return int(seat) if seat is not None else None
