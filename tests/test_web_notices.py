"""Notices: e-mail through a real SMTP server on loopback, Web Push to a local endpoint
that decrypts the payload (RFC 8291) and checks the VAPID JWT (RFC 8292), webhooks to a local HTTP
receiver; the account page's API, its refusals, and the words in the account's language."""

from __future__ import annotations

import re
import secrets
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("aiosmtpd")
pytest.importorskip("pywebpush")

from fastapi.testclient import TestClient

from ludoteca.registry import GAMES, game_class
from ludoteca.web.accounts.sessions import CSRF_COOKIE
from ludoteca.web.notices.events import Notice
from ludoteca.web.notices.outbox import BACKOFF, MAX_ATTEMPTS
from ludoteca.web.notices.service import MAIL_EVERY, NoticeService
from tests.notices_parts import Browser, Mailbox, Receiver, self_signed, text_of, vapid_claims, wait_for
from tests.test_web_api import make_app

pytestmark = pytest.mark.timeout(120)
PASSWORD = "correct horse 9"
T0 = 1_800_000_000.0  # a Friday, 08:00 UTC
GAME, OTHER = [g for g in sorted(GAMES) if game_class(g).min_players <= 2 <= game_class(g).max_players][:2]
TITLE = game_class(GAME).title


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    with Mailbox() as box:
        yield box


def app_client(tmp_path: Path, smtp: str | None = None, private: bool = True) -> TestClient:
    return TestClient(make_app(database=f"sqlite:///{tmp_path / 'notices.sqlite3'}", notices={
        "smtp": smtp, "public_url": "http://club.test", "webhook_private": private, "sender": False}))


def signup(client: TestClient, name: str | None = None) -> int:
    name = name or f"ann{secrets.token_hex(3)}"
    res = client.post("/api/signup", json={"name": name, "password": PASSWORD})
    assert res.status_code == 201, res.text
    service = notices(client)
    account = service.repo.account_by_name(name)
    assert account is not None
    return int(account.id)


def csrf(client: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": client.cookies.get(CSRF_COOKIE) or ""}


def post(client: TestClient, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    res = client.post(path, json=body, headers=csrf(client))
    assert res.status_code == status, res.text
    result: dict[str, Any] = res.json()
    return result


def notices(client: TestClient) -> NoticeService:
    service = client.app.state.notices  # type: ignore[attr-defined]
    assert isinstance(service, NoticeService)
    return service


def turn(account: int, table: str, kind: str = "your_turn", due: float | None = T0 + 86400, game: str = GAME,
         watching: bool = False, player: str = "Ann") -> Notice:
    return Notice(kind=kind, table=table, game=game, seat=0, account=account, player=player, due=due,  # type: ignore[arg-type]
                  watching=watching)


def send(client: TestClient) -> int:
    return int(client.portal.call(notices(client).send_due))  # type: ignore[union-attr]


def link_in(text: str, path: str) -> str:
    found = re.search(r"https?://\S+" + re.escape(path) + r"\S*", text)
    assert found, text
    return found.group(0)


def verified_account(client: TestClient, mailbox: Mailbox, address: str, lang: str = "en") -> int:
    account = signup(client)
    post(client, "/api/notices", {"lang": lang, "timezone": "Europe/Rome"})
    view = post(client, "/api/notices/email", {"email": address})
    assert view["email"] == address and view["email_verified"] is False and view["mail_on"] is True
    mail = wait_for(lambda: [m for m in mailbox.messages if m["To"] == address])[-1]
    link = link_in(text_of(mail), "/notices/verify")
    token = parse_qs(urlsplit(link).query)["token"][0]
    assert client.get(urlsplit(link).path).status_code == 200  # the page the link opens
    assert post(client, "/api/notices/verify", {"token": token}) == {"verified": True}
    assert client.get("/api/notices").json()["email_verified"] is True
    return account


# --- e-mail ----------------------------------------------------------------------------------------------
def test_verification_then_your_turn_mail_then_a_digest_and_a_one_click_unsubscribe(tmp_path: Path,
                                                                                     mailbox: Mailbox) -> None:
    with app_client(tmp_path, smtp=mailbox.url) as client:
        account = verified_account(client, mailbox, "ann@example.org")
        service = notices(client)
        service.clock = Clock()
        service.notify([turn(account, "tab1")])
        assert send(client) == 1
        mail = wait_for(lambda: [m for m in mailbox.messages if "Your move" in str(m["Subject"])])[0]
        assert mail["Subject"] == f"Your move in {TITLE}"
        body = text_of(mail)
        assert f"Ann, it is your move in {TITLE}." in body and "http://club.test/t/tab1" in body
        assert "Saturday 16 January, 09:00" in body  # the deadline in the account's time zone (Rome, CET)
        unsubscribe = mail["List-Unsubscribe"].strip("<>")
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"  # RFC 8058

        # two more games wait within minutes: held until MAIL_EVERY after the last mail, then one digest
        clock = service.clock
        assert isinstance(clock, Clock)
        clock.now += 60
        service.notify([turn(account, "tab2")])
        clock.now += 60
        service.notify([turn(account, "tab3", game=OTHER, due=T0 + 3600)])
        assert send(client) == 0
        clock.now = T0 + MAIL_EVERY
        assert send(client) == 2
        digest = wait_for(lambda: [m for m in mailbox.messages if "games wait" in str(m["Subject"])])[0]
        assert digest["Subject"] == "2 games wait for your move"
        text = text_of(digest)
        assert "/t/tab2" in text and "/t/tab3" in text and "http://club.test/my-tables" in text
        assert text.index("/t/tab3") < text.index("/t/tab2")  # the nearest deadline first

        # the one-click unsubscribe works without a session (a mail client's POST, RFC 8058)
        other = TestClient(client.app)
        res = other.post(urlsplit(unsubscribe).path + "?" + urlsplit(unsubscribe).query,
                         content=b"List-Unsubscribe=One-Click",
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert res.status_code == 200, res.text
        assert "email" not in client.get("/api/notices").json()["channels"]
        before = len(mailbox.messages)
        service.notify([turn(account, "tab4")])
        send(client)
        assert len(mailbox.messages) == before
        # a forged link changes nothing
        res = other.post("/notices/unsubscribe?token=abc.def")
        assert res.json()["code"] == "bad_token", res.text


def test_starttls_when_offered_then_a_log_in(tmp_path: Path) -> None:
    from ludoteca.web.notices.mail import SmtpConfig, compose

    with Mailbox(tls=self_signed(tmp_path)) as box:
        config = SmtpConfig.parse(f"smtp://club:s3cret%20pw@127.0.0.1:{box.port}?from=games@club.test&verify=0")
        assert "s3cret" not in repr(config)
        config.send(compose("gil@example.org", "Hello", "en", {"paragraphs": ["hi"]}))
        assert box.logins == ["club"] and box.envelopes == [("games@club.test", ["gil@example.org"])]
        strict = SmtpConfig.parse(f"smtp://club:s3cret%20pw@127.0.0.1:{box.port}")  # an unknown certificate
        with pytest.raises(ssl.SSLError):
            strict.send(compose("gil@example.org", "Hello", "en", {"paragraphs": ["hi"]}))


def test_the_sender_loop_sends_soon_after_a_notice(tmp_path: Path, mailbox: Mailbox) -> None:
    with TestClient(make_app(database=f"sqlite:///{tmp_path / 'loop.sqlite3'}", notices={
            "smtp": mailbox.url, "public_url": "http://club.test", "poll": 30})) as client:
        account = verified_account(client, mailbox, "hal@example.org")
        client.portal.call(_notify, notices(client), [turn(account, "loop1")])  # type: ignore[union-attr]
        wait_for(lambda: [m for m in mailbox.messages if "Your move" in str(m["Subject"])])  # woken, not polled
        wait_for(lambda: [r["status"] for r in notices(client).outbox.rows()] == ["sent"])  # then marked sent


async def _notify(service: NoticeService, batch: list[Notice]) -> None:
    service.notify(batch)  # on the server's event loop, as a table's listener calls it


def test_mail_in_italian_with_italian_plurals(tmp_path: Path, mailbox: Mailbox) -> None:
    with app_client(tmp_path, smtp=mailbox.url) as client:
        account = verified_account(client, mailbox, "bea@example.org", lang="it")
        verification = next(m for m in mailbox.messages if m["To"] == "bea@example.org")
        assert verification["Subject"] == "Conferma il tuo indirizzo e-mail per ludoteca"
        assert "48 ore" in text_of(verification)
        service = notices(client)
        service.clock = Clock()
        service.notify([turn(account, "t1", player="Bea"), turn(account, "t2", player="Bea")])
        send(client)
        digest = wait_for(lambda: [m for m in mailbox.messages if m["To"] == "bea@example.org"
                                   and "partite" in str(m["Subject"])])[0]
        assert digest["Subject"] == "2 partite aspettano la tua mossa"
        assert "sabato 16 gennaio" in text_of(digest)
        service.clock.now += MAIL_EVERY  # type: ignore[attr-defined]
        service.notify([turn(account, "t3", player="Bea")])
        send(client)
        single = wait_for(lambda: [m for m in mailbox.messages if str(m["Subject"]).startswith("Tocca")])[0]
        assert single["Subject"] == f"Tocca a te nella partita di {TITLE}"
        assert f"Bea, tocca a te nella partita di {TITLE}." in text_of(single)


def test_quiet_hours_hold_the_notices_and_send_them_together_after(tmp_path: Path, mailbox: Mailbox) -> None:
    with app_client(tmp_path, smtp=mailbox.url) as client:
        account = verified_account(client, mailbox, "cy@example.org")
        post(client, "/api/notices", {"quiet": {"start": "08:30", "end": "12:00"}, "timezone": "UTC"})
        service = notices(client)
        clock = service.clock = Clock(T0 + 3600)  # 09:00 UTC: quiet
        service.notify([turn(account, "q1")])
        clock.now += 3600
        service.notify([turn(account, "q2")])
        assert send(client) == 0
        assert not [m for m in mailbox.messages if m["To"] == "cy@example.org" and "move" in str(m["Subject"])]
        clock.now = T0 + 4 * 3600 + 1  # 12:00: the quiet hours are over
        assert send(client) == 2
        mails = wait_for(lambda: [m for m in mailbox.messages if "wait for your move" in str(m["Subject"])])
        assert len(mails) == 1 and mails[0]["Subject"] == "2 games wait for your move"


def test_nothing_is_sent_about_an_open_table_nor_an_event_turned_off(tmp_path: Path, mailbox: Mailbox) -> None:
    with app_client(tmp_path, smtp=mailbox.url) as client:
        account = verified_account(client, mailbox, "dan@example.org")
        post(client, "/api/notices", {"events": ["your_turn"]})
        service = notices(client)
        service.notify([turn(account, "w1", watching=True), turn(account, "w2", kind="game_over"),
                        turn(None, "w3")])  # type: ignore[arg-type]
        assert service.outbox.rows() == []


def test_an_unverified_address_gets_nothing_and_bad_addresses_are_refused(tmp_path: Path, mailbox: Mailbox) -> None:
    with app_client(tmp_path, smtp=mailbox.url) as client:
        account = signup(client)
        for bad in ["not an address", "a@b", "x" * 300 + "@example.org", "<a@example.org>", 5]:
            res = client.post("/api/notices/email", json={"email": bad}, headers=csrf(client))
            assert res.status_code == 400 and res.json()["code"] == "bad_request"
        assert client.get("/api/notices").json()["email"] is None
        post(client, "/api/notices/email", {"email": "eve@example.org"})
        notices(client).notify([turn(account, "u1")])
        assert notices(client).outbox.rows() == []  # not verified: not a channel yet
        assert client.post("/api/notices/verify", json={"token": "forged.token"},
                           headers=csrf(client)).json()["code"] == "bad_token"
        # the address is its owner's alone
        assert "eve@example.org" not in TestClient(client.app).get("/api/notices").text


def test_without_smtp_the_address_field_says_mail_is_off(tmp_path: Path) -> None:
    with app_client(tmp_path) as client:
        signup(client)
        assert client.get("/api/notices").json()["mail_on"] is False
        res = client.post("/api/notices/email", json={"email": "fay@example.org"}, headers=csrf(client))
        assert res.status_code == 400 and "sends no e-mail" in res.json()["message"]
        assert client.get("/api/notices").json()["email"] is None


def test_the_notices_api_needs_a_log_in(tmp_path: Path) -> None:
    with app_client(tmp_path) as client:
        assert client.get("/api/notices").status_code == 401
        assert client.post("/api/notices/webhook", json={"url": "https://example.org/x"}).status_code == 401


def test_bad_choices_are_refused_and_nothing_changes(tmp_path: Path) -> None:
    with app_client(tmp_path) as client:
        signup(client)
        before = client.get("/api/notices").json()
        for body in [{"events": ["your_turn", "lunch"]}, {"channels": "email"}, {"quiet": {"start": "25:00",
                     "end": "08:00"}}, {"timezone": "Mars/Base"}, {"lang": "fr"}, {"events": [], "lang": "xx"}]:
            res = client.post("/api/notices", json=body, headers=csrf(client))
            assert res.status_code == 400, body
        assert client.get("/api/notices").json() == before


# --- webhooks --------------------------------------------------------------------------------------------
def test_webhook_retried_with_backoff_until_the_receiver_accepts(tmp_path: Path) -> None:
    with Receiver(statuses=[500, 503]) as receiver, app_client(tmp_path) as client:
        account = signup(client)
        post(client, "/api/notices", {"lang": "it"})
        view = post(client, "/api/notices/webhook", {"url": receiver.url("/hook")})
        assert view["webhook"] == receiver.url("/hook")
        service = notices(client)
        clock = service.clock = Clock()
        service.notify([turn(account, "wh1")])
        assert send(client) == 0 and len(receiver.received) == 1  # 500: tried again later
        assert send(client) == 0 and len(receiver.received) == 1  # not before its backoff
        clock.now += BACKOFF
        assert send(client) == 0 and len(receiver.received) == 2  # 503
        clock.now += 2 * BACKOFF
        assert send(client) == 1 and len(receiver.received) == 3  # accepted
        clock.now += 3600
        assert send(client) == 0 and len(receiver.received) == 3  # never twice
        import json

        body = json.loads(receiver.received[-1].body)
        assert body["content"] == body["text"]  # Discord reads content, Slack reads text
        assert body["content"] == f"Ann: tocca a te nella partita di {TITLE} — http://club.test/t/wh1"
        assert body["ludoteca"][0]["kind"] == "your_turn" and body["ludoteca"][0]["table"] == "wh1"


def test_a_webhook_that_always_fails_is_given_up_and_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with Receiver(then=500) as receiver, app_client(tmp_path) as client:
        account = signup(client)
        post(client, "/api/notices/webhook", {"url": receiver.url("/down")})
        service = notices(client)
        clock = service.clock = Clock()
        service.notify([turn(account, "down")])
        for _ in range(MAX_ATTEMPTS):
            send(client)
            clock.now += 3600
        assert len(receiver.received) == MAX_ATTEMPTS
        assert [r["status"] for r in service.outbox.rows()] == ["failed"]
        assert "webhook to account" in caplog.text


def test_webhook_urls_refused_when_not_http_or_pointing_inside(tmp_path: Path) -> None:
    with app_client(tmp_path, private=False) as client:
        signup(client)
        for url, words in [("ftp://example.org/hook", "https://"), ("javascript:alert(1)", "https://"),
                           ("http://testserver/api/tables", "this server"), ("http://localhost:8000/x", "this server"),
                           ("http://127.0.0.1:9/x", "private or local"), ("http://10.1.2.3/x", "private or local"),
                           ("http://[::1]/x", "private or local"),
                           ("http://169.254.169.254/latest", "private or local"),
                           ("http://192.168.1.10/x", "private or local")]:
            res = client.post("/api/notices/webhook", json={"url": url}, headers=csrf(client))
            assert res.status_code == 400, url
            assert words in res.json()["message"], (url, res.json())
        assert client.get("/api/notices").json()["webhook"] is None
    with app_client(tmp_path, private=True) as client:  # a club's own network: still never itself
        signup(client)
        res = client.post("/api/notices/webhook", json={"url": "http://testserver/x"}, headers=csrf(client))
        assert res.status_code == 400


# --- Web Push --------------------------------------------------------------------------------------------
def test_web_push_is_encrypted_for_the_browser_and_signed_with_vapid(tmp_path: Path) -> None:
    with Receiver(then=201) as endpoint, app_client(tmp_path) as client:
        account = signup(client)
        key = client.get("/api/notices").json()["push_key"]
        browser = Browser(endpoint.url("/push/abc"))
        view = post(client, "/api/notices/push", {"subscription": browser.subscription()})
        assert view["push_devices"] == 1
        service = notices(client)
        service.clock = Clock()
        service.notify([turn(account, "p1", kind="game_over")])
        assert send(client) == 1
        got = endpoint.received[0]
        assert got.headers["content-encoding"] == "aes128gcm" and int(got.headers["ttl"]) > 0
        payload = browser.decrypt(got.body)
        assert payload["title"] == f"The game of {TITLE} is over"
        assert payload["url"] == "http://club.test/t/p1"
        claims = vapid_claims(got.headers, key)
        assert claims["aud"] == f"http://127.0.0.1:{endpoint.port}" and claims["exp"] > time.time()
        assert claims["sub"].startswith(("mailto:", "https://"))
        # the VAPID key was made once: the same after a restart
    with app_client(tmp_path) as again:
        signup(again)
        assert again.get("/api/notices").json()["push_key"] == key


def test_a_gone_push_subscription_is_removed(tmp_path: Path) -> None:
    with Receiver(then=410) as endpoint, app_client(tmp_path) as client:
        account = signup(client)
        post(client, "/api/notices/push", {"subscription": Browser(endpoint.url("/gone")).subscription()})
        service = notices(client)
        service.notify([turn(account, "g1")])
        send(client)
        assert client.get("/api/notices").json()["push_devices"] == 0
        assert [r["status"] for r in service.outbox.rows()] == ["failed"]


def test_a_push_subscription_to_an_inside_address_is_refused(tmp_path: Path) -> None:
    with app_client(tmp_path, private=False) as client:
        signup(client)
        res = client.post("/api/notices/push", json={"subscription": Browser("http://127.0.0.1:9/x").subscription()},
                          headers=csrf(client))
        assert res.status_code == 400
        assert client.get("/api/notices").json()["push_devices"] == 0


def test_a_table_that_starts_tells_the_player_to_move_by_mail(tmp_path: Path, mailbox: Mailbox) -> None:
    """The whole path: a table's change → the notifier → the outbox → the SMTP server."""
    with app_client(tmp_path, smtp=mailbox.url) as ann:
        verified_account(ann, mailbox, "ann.table@example.org")
        bea = TestClient(ann.app)
        verified_account(bea, mailbox, "bea.table@example.org")
        res = ann.post("/api/tables", json={"game": GAME, "players": 2, "seats": [{"kind": "open"}] * 2, "sit": 0,
                                            "name": "Ann"}, headers=csrf(ann))
        assert res.status_code == 201, res.text
        table = res.json()["id"]
        res = bea.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "Bea"}, headers=csrf(bea))
        assert res.status_code == 200, res.text
        service = notices(ann)
        rows = wait_for(lambda: [r for r in service.outbox.rows() if r["table_id"] == table])
        assert [(r["kind"], r["channel"]) for r in rows] == [("your_turn", "email")]
        send(ann)
        to = {"ann.table@example.org": 0, "bea.table@example.org": 1}
        mail = wait_for(lambda: [m for m in mailbox.messages if m["To"] in to and "Your move" in str(m["Subject"])])
        assert len(mail) == 1 and to[mail[0]["To"]] == rows[0]["seat"]
        assert f"http://club.test/t/{table}" in text_of(mail[0])


def test_serve_refuses_a_bad_smtp_url_or_public_url() -> None:
    import argparse

    from ludoteca.commands import UsageError
    from ludoteca.commands.serve import _notices

    def args(**kw: Any) -> argparse.Namespace:
        return argparse.Namespace(**{"smtp": None, "public_url": None, "webhook_private": False, **kw})

    for bad in [{"smtp": "http://mail.example.org"}, {"smtp": "smtp://host:notaport"}, {"smtp": "smtp://"},
                {"public_url": "games.example.org"}]:
        with pytest.raises(UsageError):
            _notices(args(**bad))
    assert _notices(args(smtp="smtps://u:p@mail.example.org"))["smtp"] == "smtps://u:p@mail.example.org"
