"""Cross-site protection of the web server: Origin checks and security headers.

:class:`SecurityMiddleware` is a plain ASGI middleware (it sees websocket handshakes too):

- **Websocket handshakes** with an ``Origin`` header are accepted only from the server's own
  origin (the ``Host`` the request was sent to) or from an origin listed with
  ``ludoteca serve --allowed-origin URL``; any other origin (``null`` included) is refused
  before the socket is accepted (the browser sees HTTP 403). Browsers always send ``Origin``
  on a websocket handshake, so one without it comes from a program (tests, benchmarks), not
  from a page, and is accepted.
- **State-changing requests** (every method but GET, HEAD and OPTIONS) follow the same rule
  on ``Origin``. Without ``Origin``, a ``Sec-Fetch-Site`` header other than ``same-origin`` or
  ``none`` is refused too; a request with neither header comes from a program such as curl,
  which no web page can make a browser send, and is accepted. Refusals are HTTP 403
  the ``cross_origin`` error of errors.py.
- **Every HTTP response** carries a Content-Security-Policy (``default-src 'self'``, no inline
  scripts or styles, ``frame-ancestors 'none'``), ``X-Frame-Options: DENY``,
  ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import cookie_parser

from ludoteca.web.errors import Code, error_body
from ludoteca.web.languages import language_of
from ludoteca.web.lobby.rules import COOKIE

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
"""The Content-Security-Policy of every response (the pages use no inline script or style)."""
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SAME_SITE_FETCH = frozenset({"same-origin", "none"})
"""``Sec-Fetch-Site`` values of a request made by the server's own pages or typed by the user."""
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
WS_REFUSED = 4403
"""Close code of a websocket handshake refused for its origin (the browser sees HTTP 403)."""


def normalize_origin(text: str) -> str:
    """``scheme://host[:port]`` in lower case without a default port; ValueError if ``text`` is not
    an origin (a path, query, user name or a scheme other than http/https is refused)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("an origin is a URL such as https://games.example.org")
    parts = urlsplit(text.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{text!r} is not an origin: give scheme and host, e.g. https://games.example.org")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{text!r} is not an origin: give only scheme, host and port, e.g. "
                         "https://games.example.org:8443")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"{text!r} has a bad port") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _host_key(scheme: str, host: str) -> str | None:
    """``host[:port]`` of a Host header or an origin, without the scheme's default port."""
    try:
        parts = urlsplit(f"//{host.strip()}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    name = parts.hostname.lower()
    if ":" in name:
        name = f"[{name}]"
    if port is None or port == DEFAULT_PORTS.get(scheme):
        return name
    return f"{name}:{port}"


class OriginPolicy:
    """Which origins may use the server: its own (from the Host header) and ``allowed``."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self.allowed = frozenset(normalize_origin(o) for o in allowed)

    def is_allowed(self, origin: str, scheme: str, host: str | None) -> bool:
        """True when ``origin`` (an Origin header) is the server's own or a listed one."""
        try:
            normal = normalize_origin(origin)
        except ValueError:
            return False  # "null" (sandboxed frames, file: pages) or garbage
        if normal in self.allowed:
            return True
        if not host:
            return False
        own_scheme = "https" if scheme in ("https", "wss") else "http"
        origin_scheme = normal.split("://", 1)[0]
        # Behind a TLS-terminating proxy the server sees http while the page is https: the host
        # and port decide, each side without its own scheme's default port.
        return _host_key(origin_scheme, normal.split("://", 1)[1]) in (
            _host_key(own_scheme, host), _host_key(origin_scheme, host))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


class SecurityMiddleware:
    """Refuse cross-site websockets and state-changing requests; add the security headers."""

    def __init__(self, app: ASGIApp, allowed_origins: Iterable[str] = ()) -> None:
        self.app = app
        self.policy = OriginPolicy(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "websocket":
            origin = _header(scope, b"origin")
            if origin is not None and not self._allowed(scope, origin):
                await self._refuse_websocket(receive, send)
                return
            await self.app(scope, receive, send)
            return
        if kind != "http":
            await self.app(scope, receive, send)
            return
        reason = self._refusal(scope)
        if reason is not None:
            await self._refuse_http(send, reason)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((k, v) for k, v in SECURITY_HEADERS if k not in names)]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _allowed(self, scope: Scope, origin: str) -> bool:
        return self.policy.is_allowed(origin, scope.get("scheme", "http"), _header(scope, b"host"))

    def _refusal(self, scope: Scope) -> dict[str, Any] | None:
        """Why this HTTP request is refused as cross-site (the error body, in the request's
        language), or None."""
        if scope.get("method", "GET").upper() in SAFE_METHODS:
            return None
        lang = _language(scope)
        origin = _header(scope, b"origin")
        if origin is not None:
            if self._allowed(scope, origin):
                return None
            return error_body(Code.CROSS_ORIGIN, "requests from pages of {origin} are not accepted by this server; "
                              "open the game from its own address (or start the server with --allowed-origin)",
                              lang=lang, origin=origin[:100])
        site = _header(scope, b"sec-fetch-site")
        if site is not None and site.lower() not in SAME_SITE_FETCH:
            return error_body(Code.CROSS_ORIGIN, "requests from pages of other sites are not accepted by this server",
                              lang=lang)
        return None

    @staticmethod
    async def _refuse_http(send: Send, refusal: dict[str, Any]) -> None:
        body = json.dumps(refusal).encode()
        await send({"type": "http.response.start", "status": 403, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            *SECURITY_HEADERS]})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _refuse_websocket(receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] == "websocket.connect":
            await send({"type": "websocket.close", "code": WS_REFUSED,
                        "reason": "this page's origin may not use this server"})


def _language(scope: Scope) -> str:
    """The language of a request, from its raw headers: the language cookie, else ``Accept-Language``."""
    cookies = cookie_parser(_header(scope, b"cookie") or "")
    return language_of(None, cookies.get(COOKIE), _header(scope, b"accept-language"))


def stats_allowed(authorization: str | None, token: str | None) -> bool:
    """``/api/stats`` is served only when the server has a stats token and the request bears it
    (``Authorization: Bearer TOKEN``)."""
    if not token or not authorization:
        return False
    scheme, _, given = authorization.partition(" ")
    return scheme.lower() == "bearer" and secrets.compare_digest(given.strip().encode(), token.encode())
