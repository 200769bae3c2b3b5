"""The notices service: stores notices as rows (:meth:`NoticeService.notify`) and sends them off the
request path, shared by every worker (:meth:`NoticeService.send_due`, run by :meth:`start`'s loop).

``notify`` keeps only notices for an account whose player does not have the table open, queues them
and returns at once; a task stores them (one row per channel the account chose and can receive on:
a verified address when the server has ``--smtp``, a browser subscription, a webhook), each due at
once or at the end of the account's quiet hours. The sender claims due rows (outbox.py: each claimed
by one worker; a killed worker's claims expire and are retried), groups them per account and channel
(several games waiting: one digest mail, one push, one webhook POST), sends in a thread and marks
them sent, or retries them with backoff; a failed channel is logged, never raised.

A turn-based table's notices come through :meth:`NoticeService.write`, on the connection of the
transaction that changes its deadline row (stored with the turn or not at all). A table's own webhook
(``ludo_table_hooks``, channel :data:`TABLE`) hears every seat's turn and the game's end.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from ludoteca.web.notices import mail, push, texts, webhook
from ludoteca.web.notices.events import Notice
from ludoteca.web.notices.keys import Keys
from ludoteca.web.notices.outbox import Outbox, Row_
from ludoteca.web.notices.prefs import Prefs, PrefsStore
from ludoteca.web.repository.notices import TABLE_ACCOUNT
from ludoteca.web.repository.store import Repository

log = logging.getLogger("ludoteca.notices")

POLL = 2.0
"""Seconds between two looks at the outbox when nothing wakes the sender (rows of other workers,
retries, the end of quiet hours)."""
PRUNE_EVERY = 3600.0
"""Seconds between two clean-ups of the rows sent or given up long ago (outbox.py ``KEEP``)."""
MAIL_EVERY = 300.0
VERIFY_FOR = 48 * 3600.0
"""Seconds a verification link works."""
WAITING = ("your_turn", "reminder")
TABLE = "table"
"""The channel of a table's own webhook (its rows' account is :data:`TABLE_ACCOUNT`)."""
TABLE_KINDS = ("your_turn", "game_over")
"""What a table's webhook hears: every seat's turn (unless its player has the table open) and the end."""


@dataclass(frozen=True)
class NoticeConfig:
    """How this server sends notices (``ludoteca serve --smtp``, ``--public-url``, ``--webhook-private``)."""

    smtp: mail.SmtpConfig | None = None
    public_url: str | None = None
    """The address players reach the server at (the links of mails and pushes); default: the address
    the account pages were last requested at."""
    webhook_private: bool = False
    """Webhooks may call addresses of private networks (a club's server on its own network)."""
    poll: float = POLL
    mail_every: float = MAIL_EVERY
    """Seconds between two notice mails to one account: what comes meanwhile waits and goes as one digest."""
    sender: bool = True
    """Run the sender loop (tests turn it off and call :meth:`NoticeService.send_due` themselves)."""


def learn_host(app_state: Any, netloc: str) -> None:
    """Remember ``netloc`` (a request's ``Host``) as this server's own, when notices are on: no
    webhook may point back to it (webhook.py)."""
    service = getattr(app_state, "notices", None)
    if isinstance(service, NoticeService):
        service.own_hosts.add(netloc)


class NoticeService:
    """One worker's notices: a :class:`~ludoteca.web.notices.events.Notifier` and the sender."""

    def __init__(self, repo: Repository, config: NoticeConfig | None = None, worker: str = "worker",
                 clock: Callable[[], float] = time.time) -> None:
        self.repo = repo
        self.config = config or NoticeConfig()
        self.worker = worker
        self.clock = clock
        self.prefs = PrefsStore(repo)
        self.outbox = Outbox(repo)
        self._keys: Keys | None = None
        self.base_url = (self.config.public_url or "").rstrip("/") or None
        self.own_hosts: set[str] = set()
        if self.base_url:
            self.own_hosts.add(urlsplit(self.base_url).netloc)
        self.verifications: dict[int, float] = {}
        """When this worker last mailed each account a confirmation link (routes.py limits them)."""
        self._queue: list[Notice] = []
        self._flushing: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._sending = asyncio.Lock()

    # --- the Notifier ---------------------------------------------------------------------------------
    def notify(self, notices: Sequence[Notice]) -> None:
        """Queue the notices to store (never sends, never waits); without a running event loop (a
        thread, a script) they are stored at once."""
        wanted = [n for n in notices if n.account is not None and not n.watching]
        if not wanted:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.store(wanted)
            return
        self._queue.extend(wanted)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.ensure_future(self.flush())

    async def flush(self) -> None:
        """Store the queued notices (in a thread) and wake the sender."""
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await asyncio.to_thread(self.store, batch)
            except Exception:
                log.exception("notices: %d notices could not be stored", len(batch))
            self._wake.set()

    def store(self, notices: Sequence[Notice], now: float | None = None) -> int:
        """One outbox row per notice and channel the account takes it on; how many rows."""
        now = self.clock() if now is None else now
        with self.repo.engine.begin() as conn:
            return self.write(conn, notices, now)

    def write(self, conn: Connection, notices: Sequence[Notice], now: float) -> int:
        """:meth:`store` on ``conn``, in the caller's transaction (a turn-based table's deadline row changes
        in it: the notices are stored with it or not at all). A failure of the database is raised (the
        transaction fails, the row is repaired later); any other is logged and stores nothing (a notice
        never stops a game)."""
        try:
            rows = self._rows(conn, notices, now)
        except SQLAlchemyError:
            raise
        except Exception:
            log.exception("notices: %d notices could not be stored", len(notices))
            return 0
        self.outbox.add(rows, conn)
        return len(rows)

    def wake(self) -> None:
        self._wake.set()

    def check_hook(self, url: str) -> str:
        """``url`` if a table's webhook may go there (webhook.py's rules, as an account's)."""
        return webhook.check_url(url, tuple(self.own_hosts), self.config.webhook_private)

    def _rows(self, conn: Connection, notices: Sequence[Notice], now: float) -> list[dict[str, Any]]:
        accounts = sorted({n.account for n in notices if n.account is not None and not n.watching})
        stored = self.prefs.many(accounts, conn) if accounts else {}
        chosen = {a: stored.get(a) or Prefs(account_id=a) for a in accounts}
        with_push = {a for a in accounts if "push" in chosen[a].channels and self.prefs.pushes(a, conn)}
        mailed = self.outbox.mail_times([a for a in accounts if "email" in self.channels(chosen[a], False)],
                                        conn=conn)
        rows = self._table_rows(conn, notices, now)
        for n in notices:
            prefs = chosen.get(n.account) if n.account is not None else None
            if prefs is None or n.watching or n.kind not in prefs.events:
                continue
            due = prefs.quiet_until(now) or now
            for channel in self.channels(prefs, n.account in with_push):
                at = due
                if channel == "email" and n.account in mailed:  # gathered with the mails due soon: a digest
                    last, pending = mailed[n.account]
                    at = max(at, last + self.config.mail_every, pending if pending is not None else 0.0)
                rows.append({"account_id": n.account, "channel": channel, "kind": n.kind, "table_id": n.table,
                             "game": n.game, "seat": n.seat, "player": n.player[:64], "due": n.due,
                             "created_at": now, "not_before": at, "seq": n.seq})
        return rows

    def _table_rows(self, conn: Connection, notices: Sequence[Notice], now: float) -> list[dict[str, Any]]:
        """The rows of the tables' own webhooks: a turn (not while its player has the table open), and
        the game's end once per table (seat -1)."""
        told = [n for n in notices if n.kind in TABLE_KINDS and (n.kind == "game_over" or not n.watching)]
        hooked = self.outbox.hooked(sorted({n.table for n in told}), conn)
        rows: list[dict[str, Any]] = []
        ended: set[str] = set()
        for n in told:
            if n.table not in hooked or n.table in ended:
                continue
            over = n.kind == "game_over"
            if over:
                ended.add(n.table)
            rows.append({"account_id": TABLE_ACCOUNT, "channel": TABLE, "kind": n.kind, "table_id": n.table,
                         "game": n.game, "seat": -1 if over else n.seat, "player": "" if over else n.player[:64],
                         "due": n.due, "created_at": now, "not_before": now, "seq": n.seq})
        return rows

    def channels(self, prefs: Prefs, has_push: bool) -> list[str]:
        """The channels an account chose and can be reached on now."""
        usable = {"email": self.config.smtp is not None and bool(prefs.email) and prefs.email_verified,
                  "push": has_push, "webhook": bool(prefs.webhook)}
        return [c for c in prefs.channels if usable.get(c)]

    # --- the sender -----------------------------------------------------------------------------------
    @property
    def keys(self) -> Keys:
        if self._keys is None:
            self._keys = Keys.load(self.repo)
        return self._keys

    async def start(self) -> None:
        await asyncio.to_thread(lambda: self.keys)
        if self.config.sender:
            self._sender = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._flushing is not None and not self._flushing.done():
            try:
                await asyncio.shield(self._flushing)  # the notices of the last moves stored
            except Exception:
                log.exception("notices: the last notices could not be stored")
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender

    async def _run(self) -> None:
        pruned = 0.0
        while True:
            try:
                await self.send_due()
                if self.clock() - pruned > PRUNE_EVERY:
                    pruned = self.clock()
                    await asyncio.to_thread(self.outbox.prune, pruned)
            except Exception:
                log.exception("notices: the sender failed; trying again")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.config.poll)

    async def send_due(self) -> int:
        """Claim the due rows and send them; how many rows were sent."""
        async with self._sending:
            now = self.clock()
            claim, rows = await asyncio.to_thread(self.outbox.claim, self.worker, now)
            if not rows:
                return 0
            groups: dict[tuple[int, str, str], list[Row_]] = defaultdict(list)
            for row in rows:  # a table's webhook: one POST per table
                groups[(row.account_id, row.channel, row.table_id if row.channel == TABLE else "")].append(row)
            chosen = await asyncio.to_thread(self.prefs.many, sorted({a for a, _c, _t in groups}))
            results = await asyncio.gather(*(self._send_group(claim, chosen.get(account) or Prefs(account_id=account),
                                                              channel, group, now)
                                             for (account, channel, _t), group in groups.items()))
            return sum(results)

    async def _send_group(self, claim: str, prefs: Prefs, channel: str, rows: list[Row_], now: float) -> int:
        ids = [r.id for r in rows]
        if channel == TABLE:
            return await self._send_table(claim, rows, now)
        if channel not in prefs.channels:
            await asyncio.to_thread(self.outbox.drop, claim, ids, now, "channel turned off")
            return 0
        held = prefs.quiet_until(now)
        if held is not None:
            await asyncio.to_thread(self.outbox.hold, claim, ids, held)
            return 0
        wanted = [r for r in rows if r.kind in prefs.events]
        if len(wanted) < len(rows):
            await asyncio.to_thread(self.outbox.drop, claim, [r.id for r in rows if r not in wanted], now,
                                    "event turned off")
        if not wanted:
            return 0
        try:
            if channel == "email":
                await self._send_mail(prefs, wanted)
            elif channel == "push":
                await self._send_push(prefs, wanted)
            elif channel == "webhook":
                await self._send_webhook(prefs, wanted)
            else:
                raise ValueError(f"unknown channel {channel}")
        except _Undeliverable as exc:
            await asyncio.to_thread(self.outbox.drop, claim, [r.id for r in wanted], now, str(exc))
            return 0
        except Exception as exc:
            log.warning("notices: %s to account %s failed (%s); tried again later", channel, prefs.account_id, exc)
            await asyncio.to_thread(self.outbox.retry, claim, wanted, now, f"{type(exc).__name__}: {exc}")
            return 0
        return int(await asyncio.to_thread(self.outbox.sent, claim, [r.id for r in wanted], self.clock()))

    # --- the words ------------------------------------------------------------------------------------
    def url(self, path: str) -> str:
        return f"{self.base_url or ''}{path}"

    def _line(self, prefs: Prefs, row: Row_) -> str:
        return texts.text(prefs.lang, texts.LINES.get(row.kind, texts.LINES["your_turn"]), player=row.player,
                          game=texts.game_title(row.game))

    def _subject(self, prefs: Prefs, rows: list[Row_]) -> str:
        waiting = {r.table_id for r in rows if r.kind in WAITING}
        if len(rows) > 1 and waiting:
            return texts.plural(prefs.lang, texts.DIGEST, len(waiting))
        first = rows[0]
        return texts.text(prefs.lang, texts.SUBJECTS.get(first.kind, texts.SUBJECTS["your_turn"]),
                          game=texts.game_title(first.game))

    def _due(self, prefs: Prefs, row: Row_) -> str | None:
        if row.due is None or row.kind not in WAITING:
            return None
        return texts.text(prefs.lang, texts.DUE, when=texts.when(prefs.lang, row.due, prefs.timezone))

    def unsubscribe_url(self, account_id: int) -> str:
        token = self.keys.sign("unsubscribe", {"a": account_id, "c": "email"})
        return self.url(f"/notices/unsubscribe?token={token}")

    async def _send_mail(self, prefs: Prefs, rows: list[Row_]) -> None:
        smtp = self.config.smtp
        if smtp is None or not prefs.email or not prefs.email_verified:
            raise _Undeliverable("no verified address, or mail is off")
        lang = prefs.lang
        unsubscribe = self.unsubscribe_url(prefs.account_id)
        footer = texts.text(lang, texts.UNSUBSCRIBE, url=unsubscribe)
        if len(rows) == 1:
            row = rows[0]
            paragraphs = [self._line(prefs, row)] + [d for d in [self._due(prefs, row)] if d]
            context: dict[str, Any] = {"paragraphs": paragraphs, "footer": footer, "link": {
                "text": texts.text(lang, texts.OPEN_BUTTON), "url": self.url(f"/t/{row.table_id}")}}
        else:
            items = []
            for row in sorted(rows, key=lambda r: (r.kind not in WAITING, r.due or 0.0, r.id)):
                words = " ".join(w for w in [self._line(prefs, row), self._due(prefs, row)] if w)
                items.append({"text": words, "url": self.url(f"/t/{row.table_id}")})
            context = {"paragraphs": [self._subject(prefs, rows)], "items": items, "footer": footer,
                       "link": {"text": texts.text(lang, texts.YOUR_GAMES), "url": self.url("/my-tables")}}
        message = mail.compose(prefs.email, self._subject(prefs, rows), lang, context, unsubscribe=unsubscribe,
                               sender_domain=urlsplit(self.base_url or "http://localhost").hostname or "localhost")
        await asyncio.to_thread(smtp.send, message)

    def contact(self) -> str:
        if self.config.smtp is not None:
            return f"mailto:{self.config.smtp.sender}"
        if self.base_url and self.base_url.startswith("https://"):
            return self.base_url
        return "mailto:ludoteca@localhost"

    async def _send_push(self, prefs: Prefs, rows: list[Row_]) -> None:
        subscriptions = await asyncio.to_thread(self.prefs.pushes, prefs.account_id)
        if not subscriptions:
            raise _Undeliverable("no browser subscribed")
        first = rows[0]
        body = self._line(prefs, first) if len(rows) == 1 else "\n".join(self._line(prefs, r) for r in rows)
        payload = {"title": self._subject(prefs, rows), "body": body, "tag": first.table_id if len(rows) == 1 else "",
                   "url": self.url(f"/t/{first.table_id}" if len(rows) == 1 else "/my-tables"), "lang": prefs.lang}
        delivered, failures = 0, []
        for subscription in subscriptions:
            try:
                await asyncio.to_thread(push.send, subscription, payload, self.keys, self.contact())
                delivered += 1
            except push.Gone:
                log.info("notices: a push subscription of account %s is gone: removed", prefs.account_id)
                await asyncio.to_thread(self.prefs.remove_push, subscription["endpoint"])
            except push.PushFailed as exc:
                failures.append(str(exc))
        if failures and not delivered:
            raise push.PushFailed("; ".join(failures))
        if not delivered:
            raise _Undeliverable("every browser subscription is gone")

    async def _send_webhook(self, prefs: Prefs, rows: list[Row_]) -> None:
        if not prefs.webhook:
            raise _Undeliverable("no webhook")
        words = {"your_turn": texts.WEBHOOK, "game_over": texts.WEBHOOK_OVER, "reminder": texts.WEBHOOK_REMINDER}
        lines, events = [], []
        for row in rows:
            url = self.url(f"/t/{row.table_id}")
            lines.append(texts.text(prefs.lang, words.get(row.kind, texts.WEBHOOK), player=row.player,
                                    game=texts.game_title(row.game), url=url))
            events.append({"kind": row.kind, "game": row.game, "table": row.table_id, "seat": row.seat,
                           "player": row.player, "due": row.due, "url": url})
        content = "\n".join(lines)
        body = {"content": content[:2000], "text": content, "ludoteca": events}
        await asyncio.to_thread(webhook.post, prefs.webhook, body, tuple(self.own_hosts), self.config.webhook_private)


    async def _send_table(self, claim: str, rows: list[Row_], now: float) -> int:
        """A table's own webhook (the rows of one table): its lines in the creator's language."""
        ids = [r.id for r in rows]
        hook = await asyncio.to_thread(self.outbox.hook, rows[0].table_id)
        if hook is None:
            await asyncio.to_thread(self.outbox.drop, claim, ids, now, "the table has no webhook any more")
            return 0
        url, lang = hook
        link = self.url(f"/t/{rows[0].table_id}")
        lines, events = [], []
        for row in sorted(rows, key=lambda r: (r.seq or 0, r.id)):
            words = texts.TABLE_OVER if row.kind == "game_over" else texts.TABLE_TURN
            lines.append(texts.text(lang, words, player=row.player, game=texts.game_title(row.game), url=link))
            events.append({"kind": row.kind, "game": row.game, "table": row.table_id,
                           "seat": None if row.seat < 0 else row.seat, "player": row.player or None,
                           "due": row.due, "url": link})
        content = "\n".join(lines)
        body = {"content": content[:2000], "text": content, "ludoteca": events}
        try:
            await asyncio.to_thread(webhook.post, url, body, tuple(self.own_hosts), self.config.webhook_private)
        except Exception as exc:
            log.warning("notices: the webhook of table %s failed (%s); tried again later", rows[0].table_id, exc)
            await asyncio.to_thread(self.outbox.retry, claim, rows, now, f"{type(exc).__name__}: {exc}")
            return 0
        return int(await asyncio.to_thread(self.outbox.sent, claim, ids, self.clock()))


class _Undeliverable(Exception):
    """Nothing to send it to any more (the rows are dropped, not retried)."""
