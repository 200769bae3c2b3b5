"""An account's notice preferences: which events, which channels, quiet hours, its language, its
e-mail address (verified or not) and webhook URL; read and checked here, stored in
``ludo_notice_prefs`` (web/repository/notices.py). Synchronous storage calls: run them through
``lobby.db``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine, Row

from ludoteca.i18n import LANGUAGES
from ludoteca.web.errors import Code, WebError
from ludoteca.web.notices.events import NOTICE_KINDS
from ludoteca.web.repository.notices import notice_prefs_t, push_subs_t
from ludoteca.web.repository.store import Repository

CHANNELS = ("email", "push", "webhook")
DAY_MINUTES = 24 * 60


@dataclass(frozen=True)
class Prefs:
    """What an account chose (the defaults: every event, every channel it set up, no quiet hours)."""

    account_id: int
    lang: str = LANGUAGES[0]
    events: tuple[str, ...] = NOTICE_KINDS
    channels: tuple[str, ...] = CHANNELS
    quiet_start: int | None = None
    """Minutes after midnight (in ``timezone``) when the quiet hours begin; None: no quiet hours."""
    quiet_end: int | None = None
    timezone: str = "UTC"
    email: str | None = None
    email_verified: bool = False
    webhook: str | None = None
    stored: bool = field(default=False, compare=False)

    def quiet_until(self, now: float) -> float | None:
        """When the quiet hours that hold ``now`` end (epoch seconds), or None outside them."""
        if self.quiet_start is None or self.quiet_end is None or self.quiet_start == self.quiet_end:
            return None
        zone = zone_of(self.timezone)
        local = datetime.fromtimestamp(now, zone)
        minute = local.hour * 60 + local.minute
        start, end = self.quiet_start, self.quiet_end
        inside = start <= minute < end if start < end else (minute >= start or minute < end)
        if not inside:
            return None
        wait = (end - minute) % DAY_MINUTES
        ends = local.replace(second=0, microsecond=0).timestamp() + wait * 60
        return max(ends, now)

    def owner_view(self, mail_on: bool, push_key: str | None, pushes: int) -> dict[str, Any]:
        """What the account page shows its owner (and only its owner)."""
        quiet = None if self.quiet_start is None else {"start": _hhmm(self.quiet_start),
                                                       "end": _hhmm(self.quiet_end or 0)}
        return {"lang": self.lang, "events": list(self.events), "channels": list(self.channels), "quiet": quiet,
                "timezone": self.timezone, "email": self.email, "email_verified": self.email_verified,
                "webhook": self.webhook, "mail_on": mail_on, "push_key": push_key, "push_devices": pushes}


@contextlib.contextmanager
def reading(engine: Engine, conn: Connection | None) -> Iterator[Connection]:
    """``conn`` (a caller's transaction) when given, else a connection of its own."""
    if conn is not None:
        yield conn
        return
    with engine.connect() as own:
        yield own


def zone_of(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name) if name else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes(value: Any) -> int:
    if isinstance(value, str) and len(value) == 5 and value[2] == ":" and value[:2].isdigit() and value[3:].isdigit():
        hours, minutes = int(value[:2]), int(value[3:])
        if hours < 24 and minutes < 60:
            return hours * 60 + minutes
    raise WebError(Code.BAD_REQUEST, "quiet hours are two times such as 22:00 and 08:00")


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
        raise WebError(Code.BAD_REQUEST, "{what} is a list of: {allowed}", what=what, allowed=", ".join(allowed))
    return tuple(v for v in allowed if v in value)


def checked_choices(prefs: Prefs, body: Any) -> Prefs:
    """``prefs`` with the choices of a request's body (``events``, ``channels``, ``quiet``, ``timezone``,
    ``lang``; each optional); a clear WebError and nothing changed when one is wrong."""
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "send your choices as a JSON object")
    changes: dict[str, Any] = {}
    if "events" in body:
        changes["events"] = _choice(body["events"], NOTICE_KINDS, "events")
    if "channels" in body:
        changes["channels"] = _choice(body["channels"], CHANNELS, "channels")
    if "quiet" in body:
        quiet = body["quiet"]
        if quiet is None:
            changes["quiet_start"] = changes["quiet_end"] = None
        elif isinstance(quiet, dict):
            changes["quiet_start"], changes["quiet_end"] = _minutes(quiet.get("start")), _minutes(quiet.get("end"))
        else:
            raise WebError(Code.BAD_REQUEST, "quiet hours are two times such as 22:00 and 08:00")
    if "timezone" in body:
        zone = body["timezone"]
        if not isinstance(zone, str) or len(zone) > 64 or zone_of(zone).key != zone:
            raise WebError(Code.BAD_REQUEST, "unknown time zone")
        changes["timezone"] = zone
    if "lang" in body:
        if body["lang"] not in LANGUAGES:
            raise WebError(Code.BAD_REQUEST, "the languages are: {languages}", languages=", ".join(LANGUAGES))
        changes["lang"] = body["lang"]
    return replace(prefs, **changes)


def _prefs(row: Row[Any]) -> Prefs:
    return Prefs(account_id=int(row.account_id), lang=row.lang,
                 events=tuple(e for e in row.events.split(",") if e),
                 channels=tuple(c for c in row.channels.split(",") if c), quiet_start=row.quiet_start,
                 quiet_end=row.quiet_end, timezone=row.timezone or "UTC", email=row.email,
                 email_verified=bool(row.email_verified), webhook=row.webhook, stored=True)


class PrefsStore:
    """Preferences and push subscriptions in ``repo``'s database."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo

    def get(self, account_id: int, lang: str = LANGUAGES[0]) -> Prefs:
        """The account's preferences (the defaults, in ``lang``, when it chose none)."""
        with self.repo.engine.connect() as conn:
            row = conn.execute(select(notice_prefs_t).where(notice_prefs_t.c.account_id == account_id)).first()
        return _prefs(row) if row is not None else Prefs(account_id=account_id, lang=lang)

    def many(self, account_ids: list[int], conn: Connection | None = None) -> dict[int, Prefs]:
        """The preferences the accounts stored (on ``conn``: in the caller's transaction)."""
        with reading(self.repo.engine, conn) as c:
            rows = c.execute(select(notice_prefs_t).where(notice_prefs_t.c.account_id.in_(account_ids)))
            return {int(r.account_id): _prefs(r) for r in rows}

    def put(self, prefs: Prefs) -> Prefs:
        values = {"lang": prefs.lang, "events": ",".join(prefs.events), "channels": ",".join(prefs.channels),
                  "quiet_start": prefs.quiet_start, "quiet_end": prefs.quiet_end, "timezone": prefs.timezone,
                  "email": prefs.email, "email_verified": prefs.email_verified, "webhook": prefs.webhook,
                  "updated_at": time.time()}
        with self.repo.engine.begin() as conn:
            done = conn.execute(update(notice_prefs_t).where(notice_prefs_t.c.account_id == prefs.account_id)
                                .values(**values))
            if done.rowcount == 0:
                conn.execute(insert(notice_prefs_t).values(account_id=prefs.account_id, **values))
        return replace(prefs, stored=True)

    def set_email_verified(self, account_id: int, email: str) -> bool:
        """Mark ``email`` verified if it is still the account's address (False: it changed since)."""
        with self.repo.engine.begin() as conn:
            done = conn.execute(update(notice_prefs_t)
                                .where(notice_prefs_t.c.account_id == account_id, notice_prefs_t.c.email == email)
                                .values(email_verified=True, updated_at=time.time()))
            return bool(done.rowcount)

    def drop_channel(self, account_id: int, channel: str) -> None:
        """Turn one channel off (a one-click unsubscribe)."""
        prefs = self.get(account_id)
        if prefs.stored:
            self.put(replace(prefs, channels=tuple(c for c in prefs.channels if c != channel)))

    # --- Web Push subscriptions ---
    def add_push(self, account_id: int, endpoint: str, p256dh: str, auth: str) -> None:
        with self.repo.engine.begin() as conn:
            conn.execute(delete(push_subs_t).where(push_subs_t.c.endpoint == endpoint))
            conn.execute(insert(push_subs_t).values(account_id=account_id, endpoint=endpoint, p256dh=p256dh,
                                                    auth=auth, created_at=time.time()))

    def pushes(self, account_id: int, conn: Connection | None = None) -> list[dict[str, Any]]:
        with reading(self.repo.engine, conn) as c:
            rows = c.execute(select(push_subs_t).where(push_subs_t.c.account_id == account_id)
                             .order_by(push_subs_t.c.id))
            return [{"endpoint": r.endpoint, "keys": {"p256dh": r.p256dh, "auth": r.auth}} for r in rows]

    def remove_push(self, endpoint: str, account_id: int | None = None) -> int:
        q = delete(push_subs_t).where(push_subs_t.c.endpoint == endpoint)
        if account_id is not None:
            q = q.where(push_subs_t.c.account_id == account_id)
        with self.repo.engine.begin() as conn:
            return int(conn.execute(q).rowcount)
