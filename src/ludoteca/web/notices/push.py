"""Web Push (RFC 8030): a payload encrypted for one browser subscription (RFC 8291, ``aes128gcm``) and
signed with the server's VAPID key (RFC 8292), through ``pywebpush``. Blocking: the sender runs it
in a thread. A push service answering 404 or 410 says the subscription is gone (:class:`Gone`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from py_vapid import VapidException
from pywebpush import WebPushException, webpush

from ludoteca.web.notices.keys import Keys

TIMEOUT = 15.0
TTL = 24 * 3600


class Gone(Exception):
    """The push service no longer knows this subscription (HTTP 404 or 410): forget it."""


class PushFailed(Exception):
    """Any other failure (tried again later)."""


def send(subscription: dict[str, Any], payload: dict[str, Any], keys: Keys, contact: str) -> None:
    """Push ``payload`` (JSON) to one subscription; ``contact``: the VAPID ``sub`` claim (a ``mailto:``
    or ``https:`` address of the server's operator)."""
    endpoint = str(subscription.get("endpoint", ""))
    parts = urlsplit(endpoint)
    claims = {"sub": contact, "aud": f"{parts.scheme}://{parts.netloc}"}
    try:
        webpush(subscription, json.dumps(payload, ensure_ascii=False), vapid_private_key=keys.vapid(),
                vapid_claims=claims, timeout=TIMEOUT, ttl=TTL)
    except WebPushException as exc:
        status = getattr(exc.response, "status_code", None)
        if status in (404, 410):
            raise Gone(endpoint) from None
        raise PushFailed(f"push service: {status or exc}") from None
    except (OSError, ValueError, VapidException) as exc:
        raise PushFailed(f"push: {exc}") from None
