"""E-mail: the SMTP server given by ``ludoteca serve --smtp``, and the mails (Jinja2 templates in
``templates/``, every word from texts.py in the recipient's language).

``smtp://user:pass@host:port`` connects in the clear and upgrades with STARTTLS whenever the server
offers it (then logs in); ``smtps://`` speaks TLS from the start. ``?from=address`` sets the sender
(default: the user name when it is an address, else ``ludoteca@host``). Sending is stdlib ``smtplib``,
run in a thread by the sender (service.py), never on a request's path.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formataddr, make_msgid
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape

TIMEOUT = 30.0
TEMPLATES = Path(__file__).parent / "templates"


class BadSmtpUrl(ValueError):
    """The ``--smtp`` URL is not one."""


@dataclass(frozen=True)
class SmtpConfig:
    host: str
    port: int
    user: str | None = None
    password: str | None = None
    implicit_tls: bool = False
    sender: str = "ludoteca@localhost"
    verify_tls: bool = True

    @classmethod
    def parse(cls, url: str) -> SmtpConfig:
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise BadSmtpUrl(f"not an SMTP URL (smtp://user:pass@host:port or smtps://…): {parts.scheme}://…")
        try:
            port = parts.port or (465 if parts.scheme == "smtps" else 587)
        except ValueError as exc:
            raise BadSmtpUrl(f"bad port in the SMTP URL: {exc}") from None
        user = unquote(parts.username) if parts.username else None
        query = parse_qs(parts.query)
        sender = (query.get("from") or [""])[0] or (user if user and "@" in user else f"ludoteca@{parts.hostname}")
        return cls(host=parts.hostname, port=port, user=user,
                   password=unquote(parts.password) if parts.password else None,
                   implicit_tls=parts.scheme == "smtps", sender=sender,
                   verify_tls=(query.get("verify") or ["1"])[0] not in ("0", "no", "false"))

    def __repr__(self) -> str:  # never the password in a log
        return f"SmtpConfig({self.host}:{self.port}, user={self.user!r}, from={self.sender!r})"

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        if not self.verify_tls:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def send(self, message: EmailMessage) -> None:
        """Send one mail (blocking: call it in a thread); raises on any failure."""
        if "From" not in message:
            message["From"] = formataddr(("ludoteca", self.sender))
        if self.implicit_tls:
            client: smtplib.SMTP = smtplib.SMTP_SSL(self.host, self.port, timeout=TIMEOUT, context=self._context())
        else:
            client = smtplib.SMTP(self.host, self.port, timeout=TIMEOUT)
        with client:
            client.ehlo()
            if not self.implicit_tls and client.has_extn("starttls"):
                client.starttls(context=self._context())
                client.ehlo()
            if self.user and self.password:
                client.login(self.user, self.password)
            client.send_message(message)


@cache
def _env() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]),
                       trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render(name: str, **context: Any) -> str:
    return _env().get_template(name).render(**context)


def compose(to: str, subject: str, lang: str, context: dict[str, Any], unsubscribe: str | None = None,
            sender_domain: str = "localhost") -> EmailMessage:
    """A mail to ``to`` with a text part and an HTML part (``templates/mail.txt`` and ``mail.html``);
    ``context``: ``paragraphs`` (list of str), ``items`` (list of {"text", "url"}), ``link`` ({"text",
    "url"} or None), ``footer`` (str or None). With ``unsubscribe`` (an https/http URL), the headers of
    RFC 2369 and RFC 8058's one-click unsubscribe."""
    message = EmailMessage()
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = make_msgid(domain=sender_domain)
    message["Content-Language"] = lang
    message["Auto-Submitted"] = "auto-generated"
    if unsubscribe:
        message["List-Unsubscribe"] = f"<{unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    full = {"paragraphs": [], "items": [], "link": None, "footer": None, "lang": lang, "subject": subject, **context}
    message.set_content(render("mail.txt", **full))
    message.add_alternative(render("mail.html", **full), subtype="html")
    return message
