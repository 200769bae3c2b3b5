"""The notices' outbox shared by several workers: each row claimed by one worker, a killed
worker's claims expire and are sent by another, never twice; quiet hours and backoff. On SQLite, and on
PostgreSQL when ``LUDOTECA_TEST_POSTGRES_URL`` is set."""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import delete

from ludoteca.web.notices.outbox import CLAIM_FOR, MAX_ATTEMPTS, Outbox, backoff
from ludoteca.web.notices.prefs import Prefs
from ludoteca.web.repository.notices import outbox_t
from ludoteca.web.repository.store import Repository

POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
T0 = 1_800_000_000.0  # Friday 15 January 2027, 08:00 UTC

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Repository]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'outbox.sqlite3'}"
    else:
        if not POSTGRES:
            pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
        url = POSTGRES
    repository = Repository(url)
    yield repository
    repository.close()


def rows(n: int, account: int) -> list[dict[str, object]]:
    table = secrets.token_hex(4)
    return [{"account_id": account, "channel": "webhook", "kind": "your_turn", "table_id": f"{table}{i}",
             "game": "a-game", "seat": 0, "player": "Ann", "due": None, "created_at": T0, "not_before": T0}
            for i in range(n)]


def mine(outbox: Outbox, account: int) -> list[dict[str, object]]:
    return outbox.rows(account)


def test_each_row_is_claimed_by_one_worker_at_a_time(repo: Repository) -> None:
    outbox, account = Outbox(repo), secrets.randbelow(10**9) + 10**6
    outbox.add(rows(120, account))
    claimed: list[list[int]] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while True:
            _claim, got = outbox.claim(name, T0 + 1, limit=7)
            got = [r for r in got if r.account_id == account]
            if not got:
                return
            with lock:
                claimed.append([r.id for r in got])

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ids = [i for batch in claimed for i in batch]
    assert len(ids) == len(set(ids)) == 120  # every row, none twice


def test_a_killed_workers_claims_expire_and_another_worker_sends_them_once(repo: Repository) -> None:
    outbox, account = Outbox(repo), secrets.randbelow(10**9) + 10**6
    outbox.add(rows(3, account))
    dead_claim, dead_rows = outbox.claim("dead-worker", T0)
    assert len([r for r in dead_rows if r.account_id == account]) == 3  # then the worker is killed
    _c, none = outbox.claim("live-worker", T0 + CLAIM_FOR - 1)
    assert [r for r in none if r.account_id == account] == []  # still claimed
    claim, again = outbox.claim("live-worker", T0 + CLAIM_FOR + 1)
    again = [r for r in again if r.account_id == account]
    assert len(again) == 3
    assert outbox.sent(claim, [r.id for r in again], T0 + CLAIM_FOR + 2) == 3
    assert outbox.sent(dead_claim, [r.id for r in dead_rows], T0 + CLAIM_FOR + 3) == 0  # its claim was lost
    assert {r["status"] for r in mine(outbox, account)} == {"sent"}
    _c, later = outbox.claim("live-worker", T0 + 10 * CLAIM_FOR)
    assert [r for r in later if r.account_id == account] == []  # never sent twice


def test_failed_rows_back_off_then_give_up(repo: Repository) -> None:
    outbox, account = Outbox(repo), secrets.randbelow(10**9) + 10**6
    outbox.add(rows(1, account))
    now = T0
    for attempt in range(1, MAX_ATTEMPTS + 1):
        claim, got = outbox.claim("w", now)
        got = [r for r in got if r.account_id == account]
        assert len(got) == 1 and got[0].attempts == attempt - 1
        outbox.retry(claim, got, now, "HTTP 500")
        _c, early = outbox.claim("w", now + backoff(attempt) - 1)
        assert [r for r in early if r.account_id == account] == []
        now += backoff(attempt)
    (row,) = mine(outbox, account)
    assert row["status"] == "failed" and row["attempts"] == MAX_ATTEMPTS and row["error"] == "HTTP 500"
    with repo.engine.begin() as conn:
        conn.execute(delete(outbox_t).where(outbox_t.c.account_id == account))


@pytest.mark.parametrize(("start", "end", "local", "until"), [
    ("22:00", "07:00", "23:30", "07:00"),  # across midnight
    ("22:00", "07:00", "06:59", "07:00"),
    ("22:00", "07:00", "07:00", None),
    ("13:00", "14:00", "13:15", "14:00"),
    ("13:00", "14:00", "12:59", None),
])
def test_quiet_hours_in_the_accounts_time_zone(start: str, end: str, local: str, until: str | None) -> None:
    def minutes(hhmm: str) -> int:
        return int(hhmm[:2]) * 60 + int(hhmm[3:])

    prefs = Prefs(account_id=1, quiet_start=minutes(start), quiet_end=minutes(end), timezone="Europe/Rome")
    midnight_rome = T0 - 9 * 3600  # T0 is 09:00 in Rome (CET, UTC+1)
    now = midnight_rome + minutes(local) * 60
    held = prefs.quiet_until(now)
    if until is None:
        assert held is None
    else:
        assert held is not None
        assert (held - midnight_rome) % 86400 == minutes(until) * 60
        assert 0 < held - now <= 86400


def test_two_workers_senders_send_every_notice_once(repo: Repository) -> None:
    import asyncio
    import json

    from ludoteca.web.notices.events import Notice
    from ludoteca.web.notices.service import NoticeConfig, NoticeService
    from tests.notices_parts import Receiver

    account = secrets.randbelow(10**9) + 10**6
    with Receiver() as receiver:
        config = NoticeConfig(webhook_private=True, public_url="http://club.test", sender=False)
        a = NoticeService(repo, config, worker="worker-a", clock=lambda: T0)
        b = NoticeService(repo, config, worker="worker-b", clock=lambda: T0)
        a.prefs.put(Prefs(account_id=account, webhook=receiver.url("/hook")))
        tables = [f"{secrets.token_hex(3)}{i}" for i in range(30)]
        a.store([Notice(kind="your_turn", table=t, game="a-game", seat=0, account=account, player="Ann", due=None,
                        watching=False) for t in tables[:15]])
        b.store([Notice(kind="your_turn", table=t, game="a-game", seat=0, account=account, player="Ann", due=None,
                        watching=False) for t in tables[15:]])

        async def both() -> list[int]:
            return list(await asyncio.gather(a.send_due(), b.send_due(), a.send_due(), b.send_due()))

        sent = asyncio.run(both())
        assert sum(sent) == 30
        told = [e["table"] for r in receiver.received for e in json.loads(r.body)["ludoteca"]]
        assert sorted(told) == sorted(tables)  # each once, whichever worker sent it
    with repo.engine.begin() as conn:
        conn.execute(delete(outbox_t).where(outbox_t.c.account_id == account))


def test_a_notice_stored_again_for_the_same_turn_is_stored_once(repo: Repository) -> None:
    """A turn told again (a repair after a worker stopped) adds nothing: one row per table, action count, seat,
    event, account and channel."""
    outbox, account = Outbox(repo), secrets.randbelow(10**9) + 10**6
    turn = [dict(r, seq=7) for r in rows(1, account)]
    outbox.add(turn)
    with repo.engine.begin() as conn:  # in another transaction, as a repair's
        outbox.add([dict(turn[0], created_at=T0 + 60), dict(turn[0], seq=8)], conn)
    assert sorted(r["seq"] for r in mine(outbox, account)) == [7, 8]
    assert [r["created_at"] for r in mine(outbox, account) if r["seq"] == 7] == [T0]
