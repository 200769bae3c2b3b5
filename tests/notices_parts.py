"""Real parts the notices' tests talk to: an SMTP server on loopback (aiosmtpd), an HTTP receiver
(webhooks, a Web Push endpoint that decrypts RFC 8291 payloads and checks the VAPID JWT); and the
set-up of a turn-based table's rematch that the webhook tests share (:func:`rematch_after_a_claim`)."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import http_ece
from aiosmtpd.controller import Controller
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

if TYPE_CHECKING:
    from fastapi.testclient import TestClient


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(condition: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Wait until ``condition()`` is true (a real server answers in its own time); its value."""
    deadline = time.monotonic() + timeout
    cond = threading.Condition()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("the condition never came true")
        with cond:
            cond.wait(0.02)


def self_signed(directory: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    return context


class Mailbox:
    """An SMTP server on loopback; ``messages`` holds what it received. With ``tls`` it offers STARTTLS
    and requires it, then a log-in as ``user``/``password``, before it takes a mail."""

    def __init__(self, tls: ssl.SSLContext | None = None, user: str = "club", password: str = "s3cret pw") -> None:
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.logins: list[str] = []
        self.port = free_port()
        self.user, self.password = user, password
        options: dict[str, Any] = {}
        if tls is not None:
            options = {"tls_context": tls, "require_starttls": True, "auth_require_tls": True,
                       "auth_required": True, "authenticator": self._authenticate}
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, **options)

    def _authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> Any:
        from aiosmtpd.smtp import AuthResult, LoginPassword

        ok = (isinstance(auth_data, LoginPassword) and auth_data.login.decode() == self.user
              and auth_data.password.decode() == self.password)
        if ok:
            self.logins.append(self.user)
        return AuthResult(success=ok)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        message = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(message, EmailMessage)
        self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.messages.append(message)
        return "250 OK"

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def __enter__(self) -> Mailbox:
        self.controller.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.controller.stop()


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """An HTTP server on loopback: answers each POST with the next of ``statuses`` (then 200/201)."""

    statuses: list[int] = field(default_factory=list)
    then: int = 200
    received: list[Received] = field(default_factory=list)

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status = outer.statuses.pop(0) if outer.statuses else outer.then
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """What a browser's PushManager makes: a P-256 key pair and an auth secret (RFC 8291)."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: __import__("os").urandom(16))

    def subscription(self) -> dict[str, Any]:
        public = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                    serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": self.endpoint, "keys": {"p256dh": b64(public), "auth": b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm")
        result: dict[str, Any] = json.loads(plain)
        return result


def vapid_claims(headers: dict[str, str], server_key: str) -> dict[str, Any]:
    """The claims of a push's VAPID JWT (RFC 8292), after checking its ES256 signature with the
    server's published key ``server_key`` (the ``k`` it sends must be that key)."""
    scheme, _, rest = headers["authorization"].partition(" ")
    assert scheme == "vapid"
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    assert fields["k"] == server_key
    token = fields["t"]
    signing_input, _, signature = token.rpartition(".")
    raw = unb64(signature)
    assert len(raw) == 64
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(fields["k"]))
    public.verify(der, signing_input.encode(), ec.ECDSA(hashes.SHA256()))  # raises when forged
    header = json.loads(unb64(signing_input.split(".")[0]))
    assert header["alg"] == "ES256"
    claims: dict[str, Any] = json.loads(unb64(signing_input.split(".")[1]))
    return claims


def rematch_after_a_claim(client: TestClient, lobby: Any, clock: Any, hook: str,
                          asker: int) -> tuple[str, dict[int, str], dict[str, Any]]:
    """A two-player turn-based table with the webhook ``hook`` (Ann made it, seat 0; Bob joined, seat 1:
    ``tests.test_web_turn_based_durable.new_table``), whose player to move let the deadline pass and lost
    the game to the other's claim; then seat ``asker`` asks for a rematch. The server is
    ``turn_server``'s (its deadlines' rounds run by the test, on ``clock``). Returns the table, its seats'
    tokens and the rematch's answer to ``asker`` (the new table's ``id``, ``asker``'s ``token`` there)."""
    from tests.test_web_turn_based_durable import new_table  # (that module imports this one)

    table, tokens = new_table(client, hook, on_timeout="claim")
    row = lobby.deadlines.store.get(table)
    clock.now = row.due + 1
    client.portal.call(lobby.deadlines.tick)  # type: ignore[union-attr]
    claim = client.post(f"/api/tables/{table}/claim", json={"token": tokens[1 - row.seat]})
    assert claim.status_code == 200, claim.text
    again = client.post(f"/api/tables/{table}/rematch", json={"token": tokens[asker]})
    assert again.status_code == 200, again.text
    answer: dict[str, Any] = again.json()
    return table, tokens, answer
