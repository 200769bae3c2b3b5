"""Webhooks: a JSON POST to a URL an account gave (a club's Discord or Slack channel, its own bot).

The body carries ``content`` (what Discord reads) and ``text`` (what Slack reads), the same words,
and ``ludoteca`` (the event as data: kind, game, table, url, due). A URL must be ``http`` or ``https``
and must not point to this server or to a loopback, private, link-local or otherwise reserved
address (:func:`check_url`: checked when it is given and again before each POST, after resolving its
name, so a name that later resolves inside the network is refused too); redirects are not followed.
Blocking: the sender runs it in a thread.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from ludoteca.web.errors import Code, WebError

TIMEOUT = 10.0
URL_MAX = 2000


class WebhookFailed(Exception):
    """A POST that did not succeed (tried again later)."""


def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(str(info[4][0]).split("%")[0])
                for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]
    except (OSError, UnicodeError, ValueError):
        return []


def _internal(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (address.is_loopback or address.is_private or address.is_link_local or address.is_multicast
            or address.is_reserved or address.is_unspecified or not address.is_global)


def check_url(url: Any, own_hosts: Iterable[str] = (), allow_private: bool = False) -> str:
    """``url`` if a webhook may be sent to it; else a WebError saying why. ``own_hosts``: the names
    and ``host:port`` this server answers to; ``allow_private``: a club's server on its own network
    may call receivers there (``serve --webhook-private``), never itself."""
    if not isinstance(url, str) or not url.strip():
        raise WebError(Code.BAD_REQUEST, "a webhook is an address starting with https://")
    url = url.strip()
    parts = urlsplit(url)
    if len(url) > URL_MAX or parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebError(Code.BAD_REQUEST, "a webhook is an address starting with https://")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebError(Code.BAD_REQUEST, "a webhook is an address starting with https://") from None
    host = parts.hostname.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        raise WebError(Code.BAD_REQUEST, "a webhook cannot point to this server")
    own = [(name.strip("[]"), own_port) for name, own_port in
           (h.lower().rpartition(":")[::2] if h.count(":") == 1 else (h.lower(), "") for h in own_hosts)]
    if any(name == host and own_port in ("", str(port)) for name, own_port in own):  # "name:port" or "name"
        raise WebError(Code.BAD_REQUEST, "a webhook cannot point to this server")
    addresses = _addresses(host, port)
    if not addresses:
        raise WebError(Code.BAD_REQUEST, "the webhook's address {host} cannot be found", host=host[:100])
    for name, own_port in own:
        if own_port in ("", str(port)) and set(_addresses(name, port)) & set(addresses):
            raise WebError(Code.BAD_REQUEST, "a webhook cannot point to this server")
    if not allow_private and any(_internal(a) for a in addresses):
        raise WebError(Code.BAD_REQUEST, "a webhook cannot point to a private or local network address")
    return url


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def post(url: str, body: dict[str, Any], own_hosts: Iterable[str] = (), allow_private: bool = False) -> None:
    """POST ``body`` as JSON to ``url`` (checked again first); raises :class:`WebhookFailed`."""
    try:
        check_url(url, own_hosts, allow_private)
    except WebError as exc:
        raise WebhookFailed(f"refused address: {exc}") from None
    request = urllib.request.Request(url, data=json.dumps(body, ensure_ascii=False).encode("utf-8"), method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": "ludoteca"})
    try:
        with _opener.open(request, timeout=TIMEOUT) as response:
            if not 200 <= response.status < 300:
                raise WebhookFailed(f"HTTP {response.status}")
    except urllib.error.HTTPError as exc:
        raise WebhookFailed(f"HTTP {exc.code}") from None
    except (OSError, ValueError) as exc:
        raise WebhookFailed(str(exc)) from None
