"""The server's own notice secrets, made once and kept in ``ludo_notice_settings`` (so every worker
of a cluster shares them): the key that signs the links of the mails (verification, unsubscribe)
and the VAPID key pair of Web Push (RFC 8292). Signed links: :func:`sign` / :func:`unsign`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid02
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from ludoteca.web.repository.notices import notice_settings_t
from ludoteca.web.repository.store import Repository


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def setting(repo: Repository, name: str, make: Any) -> str:
    """The stored value ``name``; made with ``make()`` and stored the first time (the first writer wins
    when several workers start together)."""
    q = select(notice_settings_t.c.value).where(notice_settings_t.c.name == name)
    with repo.engine.connect() as conn:
        found = conn.execute(q).scalar()
    if found is not None:
        return str(found)
    try:
        with repo.engine.begin() as conn:
            conn.execute(insert(notice_settings_t).values(name=name, value=make()))
    except IntegrityError:
        pass  # another worker stored it first: use theirs
    with repo.engine.connect() as conn:
        return str(conn.execute(q).scalar())


@dataclass(frozen=True)
class Keys:
    """The signing secret and the VAPID keys."""

    secret: bytes
    vapid_pem: str
    vapid_public: str
    """The application server key as browsers want it (base64url of the uncompressed P-256 point)."""

    @classmethod
    def load(cls, repo: Repository) -> Keys:
        secret = setting(repo, "link_secret", lambda: secrets.token_urlsafe(32))
        pem = setting(repo, "vapid_private_pem", _new_vapid_pem)
        vapid = Vapid02.from_pem(pem.encode("ascii"))
        public = vapid.public_key.public_bytes(serialization.Encoding.X962,
                                               serialization.PublicFormat.UncompressedPoint)
        return cls(secret.encode("utf-8"), pem, _b64(public))

    def vapid(self) -> Vapid02:
        return Vapid02.from_pem(self.vapid_pem.encode("ascii"))

    def sign(self, purpose: str, data: dict[str, Any], ttl: float | None = None, now: float | None = None) -> str:
        """A token holding ``data`` for ``purpose``, valid ``ttl`` seconds (None: always)."""
        body = dict(data, p=purpose)
        if ttl is not None:
            body["x"] = int((now if now is not None else time.time()) + ttl)
        payload = _b64(json.dumps(body, separators=(",", ":"), sort_keys=True).encode("utf-8"))
        mac = hmac.new(self.secret, payload.encode("ascii"), hashlib.sha256).digest()[:18]
        return f"{payload}.{_b64(mac)}"

    def unsign(self, purpose: str, token: Any, now: float | None = None) -> dict[str, Any] | None:
        """The data of a token made by :meth:`sign` for ``purpose``; None if forged, expired or another's."""
        if not isinstance(token, str) or len(token) > 1000 or token.count(".") != 1:
            return None
        payload, mac = token.split(".")
        good = hmac.new(self.secret, payload.encode("ascii", "replace"), hashlib.sha256).digest()[:18]
        try:
            if not hmac.compare_digest(_unb64(mac), good):
                return None
            body = json.loads(_unb64(payload))
        except (ValueError, TypeError):
            return None
        if not isinstance(body, dict) or body.pop("p", None) != purpose:
            return None
        expiry = body.pop("x", None)
        if expiry is not None and (now if now is not None else time.time()) > expiry:
            return None
        return body


def _new_vapid_pem() -> str:
    vapid = Vapid02()
    vapid.generate_keys()
    return vapid.private_pem().decode("ascii")
