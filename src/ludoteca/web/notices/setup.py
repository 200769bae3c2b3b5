"""The notices in the application: :func:`start` makes this worker's :class:`NoticeService` (the
lobby's and the app's notifier) from ``create_app(notices=…)`` (``serve --smtp``, ``--public-url``,
``--webhook-private``) and starts its sender; :func:`stop` stops it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI

from ludoteca.web.notices.mail import SmtpConfig
from ludoteca.web.notices.service import POLL, NoticeConfig, NoticeService


def config_of(settings: Mapping[str, Any] | NoticeConfig | None) -> NoticeConfig:
    """The notices' configuration from ``serve``'s settings (``smtp``: an SMTP URL, ``public_url``,
    ``webhook_private``, ``poll``); ValueError for a bad SMTP URL."""
    if isinstance(settings, NoticeConfig):
        return settings
    settings = settings or {}
    smtp = settings.get("smtp")
    return NoticeConfig(smtp=SmtpConfig.parse(smtp) if smtp else None,
                        public_url=settings.get("public_url") or None,
                        webhook_private=bool(settings.get("webhook_private")),
                        poll=float(settings.get("poll") or POLL), sender=bool(settings.get("sender", True)))


async def start(app: FastAPI, lobby: Any, settings: Mapping[str, Any] | NoticeConfig | None) -> NoticeService:
    service = NoticeService(lobby.repo, config_of(settings), worker=str(app.state.worker_id))
    app.state.notices = app.state.notifier = service
    lobby.notifier = service  # what the tables tell goes here (web/notices/events.py; web/master/deadlines.py)
    await service.start()
    return service


async def stop(app: FastAPI) -> None:
    service = getattr(app.state, "notices", None)
    if isinstance(service, NoticeService):
        await service.stop()
