"""The tables of the players' notices (web/notices/): preferences, push subscriptions, the outbox.

- ``ludo_notice_prefs``: one row per account that chose something: its language, which events and
  channels, its quiet hours, its e-mail address (verified or waiting for verification; never shown
  to anyone but its owner) and webhook URL;
- ``ludo_push_subs``: the browsers where an account allowed Web Push (endpoint and keys);
- ``ludo_notice_outbox``: one row per notice and channel waiting to be sent (or sent: kept a while),
  claimed by one worker at a time (``claimed_by`` / ``claimed_until``), retried with backoff
  (``attempts``, ``not_before``);
- ``ludo_notice_settings``: the server's own values made once (the VAPID keys, the signing secret);
- ``ludo_table_hooks``: the webhook a turn-based table's creator gave (a club's channel hears every
  seat's turn and the game's end), in the creator's language; never shown to anyone.
"""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Float, ForeignKey, Index, Integer, String, Table, Text

from ludoteca.web.repository.schema import metadata

TABLE_ACCOUNT = 0
"""The ``account_id`` of the outbox rows of a table's own webhook (no account: accounts count from 1)."""

notice_prefs_t = Table(
    "ludo_notice_prefs", metadata,
    Column("account_id", Integer, primary_key=True),
    Column("lang", String(8), nullable=False),
    Column("events", String(64), nullable=False),
    Column("channels", String(64), nullable=False),
    Column("quiet_start", Integer, nullable=True),
    Column("quiet_end", Integer, nullable=True),
    Column("timezone", String(64), nullable=True),
    Column("email", String(254), nullable=True),
    Column("email_verified", Boolean, nullable=False, default=False),
    Column("webhook", String(2000), nullable=True),
    Column("updated_at", Float, nullable=False),
)
"""An account's notice preferences; ``quiet_start``/``quiet_end`` are minutes after midnight in
``timezone`` (an IANA name)."""

push_subs_t = Table(
    "ludo_push_subs", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("account_id", Integer, nullable=False, index=True),
    Column("endpoint", String(2000), nullable=False, unique=True),
    Column("p256dh", String(200), nullable=False),
    Column("auth", String(100), nullable=False),
    Column("created_at", Float, nullable=False),
)

outbox_t = Table(
    "ludo_notice_outbox", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("account_id", Integer, nullable=False),
    Column("channel", String(16), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("table_id", String(32), nullable=False),
    Column("game", String(32), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("player", String(64), nullable=False),
    Column("due", Float, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("status", String(8), nullable=False),
    Column("not_before", Float, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("claimed_by", String(64), nullable=True),
    Column("claimed_until", Float, nullable=True),
    Column("done_at", Float, nullable=True),
    Column("error", Text, nullable=True),
    Column("seq", Integer, nullable=True),
    Index("ludo_notice_outbox_due", "status", "not_before"),
    Index("ludo_notice_outbox_account", "account_id", "channel", "status"),
    Index("ludo_notice_outbox_once", "table_id", "seq", "seat", "kind", "account_id", "channel", unique=True),
)
"""Notices to send: ``status`` is ``pending``, ``sent``, ``failed`` (given up) or ``dropped``. ``seq`` is the
table's action count the notice was made at: a notice is stored once per table, ``seq``, seat, event,
account and channel (``ludo_notice_outbox_once``; a row stored again is ignored), so a repair that tells
a turn again adds nothing. ``account_id`` :data:`TABLE_ACCOUNT` is a table's own webhook (channel
``table``; ``seat`` -1 for the game's end, told once for the table)."""

table_hooks_t = Table(
    "ludo_table_hooks", metadata,
    Column("table_id", String(32), ForeignKey("ludo_tables.id", ondelete="CASCADE"), primary_key=True),
    Column("url", String(2000), nullable=False),
    Column("lang", String(8), nullable=False),
    Column("created_at", Float, nullable=False),
)
"""A turn-based table's webhook (``POST /api/tables`` ``"webhook"``), checked like an account's, in the
creator's language; copied to the table's rematch."""

notice_settings_t = Table(
    "ludo_notice_settings", metadata,
    Column("name", String(32), primary_key=True),
    Column("value", Text, nullable=False),
)
