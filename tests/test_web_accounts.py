"""Optional accounts: sign up, log in and out, sessions in the database, CSRF, log-in
limits, and seats that follow the account to another browser. On SQLite, and on PostgreSQL when
``LUDOTECA_TEST_POSTGRES_URL`` is set."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("argon2")

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, select, text

from ludoteca.web.accounts import accounts
from ludoteca.web.accounts.attempts import KEEP, Attempts, Count
from ludoteca.web.accounts.sessions import CSRF_COOKIE, SESSION_COOKIE, SESSION_TTL, hash_session
from ludoteca.web.repository.store import Repository, attempts_t, sessions_t
from tests.test_web_api import connect, make_app, open_seats

POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
PASSWORD = "correct horse 9"

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database URL: a SQLite file, or the PostgreSQL test server (shared: names are unique per test)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'accounts.sqlite3'}"
    if not POSTGRES:
        pytest.skip("LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server to test)")
    pytest.importorskip("psycopg")
    return POSTGRES


@pytest.fixture
def client(database: str) -> Iterator[TestClient]:
    with TestClient(make_app(database=database)) as c:
        yield c


def unique(prefix: str = "ann") -> str:
    """An account name no other test (or earlier run on the shared PostgreSQL) used."""
    return f"{prefix}{secrets.token_hex(4)}"


def signup(client: TestClient, name: str, password: str = PASSWORD) -> dict[str, Any]:
    res = client.post("/api/signup", json={"name": name, "password": password})
    assert res.status_code == 201, res.text
    return res.json()


def csrf(client: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": client.cookies.get(CSRF_COOKIE) or ""}


def cookie_header(res: Any, name: str) -> str:
    found = [h for h in res.headers.get_list("set-cookie") if h.startswith(f"{name}=")]
    assert len(found) == 1, res.headers.get_list("set-cookie")
    return found[0]


def second_browser(client: TestClient) -> TestClient:
    """Another browser (its own cookies) on the same server."""
    return TestClient(client.app)


# --- sign up, log in, log out --------------------------------------------------------------------------------
def test_sign_up_logs_in_with_safe_cookies_and_me_tells_who(client: TestClient) -> None:
    name = unique("Ann ")
    res = client.post("/api/signup", json={"name": f"  {name} ", "password": PASSWORD})
    assert res.status_code == 201, res.text
    body = res.json()
    assert body["account"]["name"] == name  # surrounding spaces trimmed
    session = cookie_header(res, SESSION_COOKIE).lower()
    assert "httponly" in session and "samesite=lax" in session and "path=/" in session and "secure" not in session
    assert f"max-age={int(SESSION_TTL)}" in session
    readable = cookie_header(res, CSRF_COOKIE).lower()
    assert "httponly" not in readable and "samesite=lax" in readable
    assert client.cookies.get(CSRF_COOKIE) == body["csrf"]
    me = client.get("/api/me").json()
    assert me == {"account": {"name": name, "created_at": body["account"]["created_at"]}, "csrf": body["csrf"]}
    assert second_browser(client).get("/api/me").json() == {"account": None, "csrf": None}


def test_cookies_are_secure_behind_an_https_proxy(client: TestClient) -> None:
    res = client.post("/api/signup", json={"name": unique(), "password": PASSWORD},
                      headers={"X-Forwarded-Proto": "https"})
    assert res.status_code == 201
    assert "secure" in cookie_header(res, SESSION_COOKIE).lower()
    assert "secure" in cookie_header(res, CSRF_COOKIE).lower()


def test_a_name_is_unique_whatever_its_case(client: TestClient) -> None:
    name = unique("Bea")
    signup(client, name)
    other = second_browser(client)
    for taken in (name, name.upper(), name.lower()):
        res = other.post("/api/signup", json={"name": taken, "password": PASSWORD})
        assert res.status_code == 409 and res.json()["code"] == "name_taken"
        assert res.json()["message"] == f"the name {taken} is taken: choose another one"
    assert other.get("/api/me").json()["account"] is None


@pytest.mark.parametrize(("body", "code", "message"), [
    ({"name": "ab", "password": PASSWORD}, "bad_name", "an account name has 3 to 32 characters"),
    ({"name": "a" * 33, "password": PASSWORD}, "bad_name", "an account name has 3 to 32 characters"),
    ({"name": "ann!", "password": PASSWORD}, "bad_name",
     "an account name has letters, digits, '_', '-', '.' and single spaces only"),
    ({"name": "ann  bee", "password": PASSWORD}, "bad_name",
     "an account name has letters, digits, '_', '-', '.' and single spaces only"),
    ({"name": 42, "password": PASSWORD}, "bad_name", "an account name is text"),
    ({"name": "annbee", "password": "short7"}, "bad_password", "a password has 8 to 128 characters"),
    ({"name": "annbee", "password": "x" * 129}, "bad_password", "a password has 8 to 128 characters"),
    ({"name": "annbee", "password": None}, "bad_password", "a password is text"),
    ([1, 2], "bad_request", 'send {"name": "...", "password": "..."}'),
])
def test_bad_names_and_passwords_get_a_clear_message(client: TestClient, body: Any, code: str, message: str) -> None:
    res = client.post("/api/signup", json=body)
    assert res.status_code == 400
    assert res.json()["code"] == code and res.json()["message"] == message
    assert client.get("/api/me").json()["account"] is None
    assert client.cookies.get(SESSION_COOKIE) is None


def test_errors_are_in_italian_for_an_italian_browser(client: TestClient) -> None:
    res = client.post("/api/signup", json={"name": "ab", "password": PASSWORD}, headers={"Accept-Language": "it"})
    assert res.json()["message"] == "un nome di account ha da 3 a 32 caratteri"
    res = client.post("/api/login", json={"name": unique(), "password": PASSWORD}, headers={"Accept-Language": "it"})
    assert res.status_code == 401 and res.json()["message"] == "nome dell’account o password sbagliati"


def test_log_in_and_out(client: TestClient) -> None:
    name = unique("Cy")
    signup(client, name)
    laptop = second_browser(client)
    res = laptop.post("/api/login", json={"name": name.upper(), "password": PASSWORD})
    assert res.status_code == 200 and res.json()["account"]["name"] == name
    assert laptop.get("/api/me").json()["account"]["name"] == name
    stolen = laptop.cookies.get(SESSION_COOKIE)
    assert laptop.post("/api/logout").status_code == 403  # a state-changing request: the CSRF token is needed
    res = laptop.post("/api/logout", headers=csrf(laptop))
    assert res.status_code == 200 and laptop.get("/api/me").json() == {"account": None, "csrf": None}
    assert laptop.cookies.get(SESSION_COOKIE) is None
    replayed = second_browser(client)
    replayed.cookies.set(SESSION_COOKIE, stolen)
    assert replayed.get("/api/me").json()["account"] is None  # the session is gone from the database
    assert client.get("/api/me").json()["account"]["name"] == name  # the other session still holds


def test_a_wrong_password_or_an_unknown_name_is_refused_alike(client: TestClient) -> None:
    name = unique()
    signup(second_browser(client), name)
    wrong = client.post("/api/login", json={"name": name, "password": "not the password"})
    nobody = client.post("/api/login", json={"name": unique("nobody"), "password": PASSWORD})
    for res in (wrong, nobody):
        assert res.status_code == 401
        assert res.json()["code"] == "bad_login" and res.json()["message"] == "wrong account name or password"
    assert client.cookies.get(SESSION_COOKIE) is None
    res = client.post("/api/login", json={"name": name})
    assert res.status_code == 400 and res.json()["message"] == "give your account name and your password"


def from_address(client: TestClient, address: str) -> TestClient:
    """A browser at ``address`` (the connection's address, as the server sees it) on the same server."""
    return TestClient(client.app, client=(address, 50000))


def addresses(n: int) -> list[str]:
    """``n`` addresses no other test (or earlier run on the shared PostgreSQL) used."""
    net = f"10.{secrets.randbelow(250)}.{secrets.randbelow(250)}"
    salt = secrets.token_hex(2)
    return [f"{net}.{k}-{salt}" for k in range(n)]


def login(browser: TestClient, name: str, password: str, **headers: str) -> Any:
    return browser.post("/api/login", json={"name": name, "password": password}, headers=headers)


def test_guesses_from_many_addresses_never_lock_the_owner_out(client: TestClient) -> None:
    """Twenty wrong passwords for Ann's name from twenty addresses (twice the per-name count), then Ann
    from her own device, which never failed: logged in. The name's count only slows the guessers:
    an address that already failed for that name is refused, a new one is checked as usual."""
    name = unique()
    signup(second_browser(client), name)
    guessers = [from_address(client, a) for a in addresses(20)]
    for guesser in guessers:
        assert login(guesser, name, "guess guess").status_code == 401
    owner = from_address(client, addresses(1)[0])
    res = login(owner, name, PASSWORD)
    assert res.status_code == 200, res.text
    assert res.json()["account"]["name"] == name
    assert login(guessers[0], name, PASSWORD).status_code == 429  # a guesser: slowed to one try per window
    assert login(from_address(client, addresses(1)[0]), name, "guess again").status_code == 401  # checked


def test_guessing_from_one_address_is_limited_then_allowed_again(client: TestClient) -> None:
    name = unique()
    signup(second_browser(client), name)
    now = [time.time()]
    client.app.state.attempts = Attempts(client.app.state.lobby.repo, clock=lambda: now[0])
    here, elsewhere = (from_address(client, a) for a in addresses(2))
    assert accounts.PAIR_FAILURES == 5 and accounts.LOGIN_WINDOW == 600
    for _ in range(5):
        now[0] += 1
        assert login(here, name, "guess guess").status_code == 401
    res = login(here, name, PASSWORD)  # even the right password, from the address that guessed
    assert res.status_code == 429 and res.json()["code"] == "rate_limited"
    assert res.json()["message"] == "too many failed log-ins: try again in 10 min"
    assert 590 <= int(res.headers["retry-after"]) <= 600
    it = login(here, name, PASSWORD, **{"Accept-Language": "it"})
    assert it.json()["message"] == "troppi accessi falliti: riprova tra 10 min"
    assert login(elsewhere, name, PASSWORD).status_code == 200  # the owner elsewhere is not locked out
    now[0] += 590
    res = login(here, name, PASSWORD)
    assert res.status_code == 429 and res.json()["message"] == "too many failed log-ins: try again in 1 min"
    now[0] += 6  # the oldest failures left the window
    assert login(here, name, PASSWORD).status_code == 200


def test_one_address_guessing_many_names_is_limited(client: TestClient) -> None:
    """An address trying names one after another (a few guesses each) is stopped by the address's own
    count, whatever the names; another address is not."""
    here, elsewhere = (from_address(client, a) for a in addresses(2))
    name = unique()
    signup(second_browser(client), name)
    tried = 0
    while tried < accounts.ADDRESS_FAILURES:
        assert login(here, unique("nobody"), "guess guess").status_code == 401
        tried += 1
    assert login(here, unique("nobody"), "guess guess").status_code == 429
    assert login(here, name, PASSWORD).status_code == 429
    assert login(elsewhere, name, PASSWORD).status_code == 200


def test_a_successful_log_in_forgets_that_addresss_failures(client: TestClient) -> None:
    name = unique()
    signup(second_browser(client), name)
    address = addresses(1)[0]
    here = from_address(client, address)
    for _ in range(accounts.PAIR_FAILURES - 1):
        assert login(here, name, "typo typo").status_code == 401
    assert login(here, name, PASSWORD).status_code == 200
    here = from_address(client, address)  # logged out again (another browser there)
    for _ in range(accounts.PAIR_FAILURES - 1):  # a typo later counts from zero again
        assert login(here, name, "typo typo").status_code == 401
    assert login(here, name, PASSWORD).status_code == 200


def test_two_workers_share_the_counts(database: str) -> None:
    """Failures through one worker count on the other (the counts are in the database): two workers
    are not twice as loose."""
    with TestClient(make_app(database=database)) as one, TestClient(make_app(database=database)) as two:
        name = unique()
        signup(one, name)
        address = addresses(1)[0]
        a, b = from_address(one, address), from_address(two, address)
        for k in range(accounts.PAIR_FAILURES):
            assert login(a if k % 2 else b, name, "guess guess").status_code == 401
        assert login(a, name, PASSWORD).status_code == 429
        assert login(b, name, PASSWORD).status_code == 429


def test_sign_ups_from_one_address_are_limited(client: TestClient) -> None:
    here, elsewhere = (from_address(client, a) for a in addresses(2))
    for _ in range(accounts.SIGNUPS):
        assert here.post("/api/signup", json={"name": unique(), "password": PASSWORD}).status_code == 201
        here.cookies.clear()
    res = here.post("/api/signup", json={"name": unique(), "password": PASSWORD})
    assert res.status_code == 429 and res.json()["code"] == "rate_limited"
    assert "too many accounts created from your address" in res.json()["message"]
    assert int(res.headers["retry-after"]) > 0
    assert elsewhere.post("/api/signup", json={"name": unique(), "password": PASSWORD}).status_code == 201


def test_attempts_are_counted_in_a_window_and_old_ones_are_deleted(tmp_path: Path) -> None:
    repo = Repository(f"sqlite:///{tmp_path / 'attempts.sqlite3'}")
    now = [1000.0]
    counted = Attempts(repo, clock=lambda: now[0])
    for _ in range(3):
        counted.add(["address:1.2.3.4", "name:ann"])
        now[0] += 10
    found = counted.counts(["address:1.2.3.4", "name:bob"], 600)
    assert found["address:1.2.3.4"] == Count(3, 1000.0, 1020.0) and found["name:bob"] == Count()
    now[0] = 1000.0 + 605  # the first one left the window
    assert counted.counts(["name:ann"], 600)["name:ann"].n == 2
    now[0] = 1000.0 + KEEP + 100
    counted.add(["x" * 500])  # pruning: rows older than KEEP are deleted; a long key is cut
    with repo.engine.connect() as conn:
        keys = [r.key for r in conn.execute(select(attempts_t))]
    assert keys == ["x" * 200]
    repo.close()


# --- CSRF ------------------------------------------------------------------------------------------------------
TABLE = {"game": "tohm", "players": 2, "seats": open_seats(2), "sit": 0, "name": "typed"}


def test_a_logged_in_state_change_needs_the_sessions_csrf_token(client: TestClient) -> None:
    signup(client, unique())
    for headers in ({}, {"X-CSRF-Token": "not-the-token"}, {"X-CSRF-Token": ""}):
        res = client.post("/api/tables", json=TABLE, headers=headers)
        assert res.status_code == 403 and res.json()["code"] == "bad_csrf", headers
        assert "security token" in res.json()["message"]
    it = client.post("/api/tables", json=TABLE, headers={"Accept-Language": "it"})
    assert it.json()["message"].startswith("a questa richiesta manca il codice di sicurezza")
    assert client.post("/api/tables", json=TABLE, headers=csrf(client)).status_code == 201


def test_casual_play_without_an_account_needs_no_token(client: TestClient) -> None:
    res = client.post("/api/tables", json=TABLE)
    assert res.status_code == 201
    seat = res.json()["table"]["seats"][0]
    assert seat["name"] == "typed" and "account" not in seat
    stale = second_browser(client)
    stale.cookies.set(SESSION_COOKIE, "no-such-session")  # a session that ended: nothing to protect
    assert stale.post("/api/tables", json=TABLE).status_code == 201


# --- storage ---------------------------------------------------------------------------------------------------
def test_only_an_argon2_hash_and_the_sessions_hash_are_stored(client: TestClient) -> None:
    name = unique()
    signup(client, name)
    repo: Repository = client.app.state.lobby.repo
    stored = repo.account_by_name(name.upper())
    assert stored is not None and stored.name == name
    assert stored.password_hash.startswith("$argon2id$") and PASSWORD not in stored.password_hash
    assert accounts.hasher.verify(stored.password_hash, PASSWORD)
    token = client.cookies.get(SESSION_COOKIE)
    with repo.engine.connect() as conn:
        rows = list(conn.execute(select(sessions_t).where(sessions_t.c.account_id == stored.id)))
    assert [r.token_hash for r in rows] == [hash_session(token)] and token not in rows[0].token_hash
    assert rows[0].csrf == client.cookies.get(CSRF_COOKIE)
    assert abs(rows[0].expires_at - (time.time() + SESSION_TTL)) < 60
    assert repo.account_by_id(stored.id) == stored
    assert client.get(f"/api/accounts/{name.lower()}").json() == {"name": name, "created_at": stored.created_at}
    assert client.get(f"/api/accounts/{unique('nobody')}").status_code == 404


def test_a_session_is_renewed_when_used_and_refused_once_expired(client: TestClient) -> None:
    signup(client, unique())
    repo: Repository = client.app.state.lobby.repo
    digest = hash_session(client.cookies.get(SESSION_COOKIE))
    repo.extend_session(digest, time.time() + 3 * 24 * 3600)  # a session last used 27 days ago
    res = client.get("/api/me")
    assert res.json()["account"] is not None
    assert f"max-age={int(SESSION_TTL)}" in cookie_header(res, SESSION_COOKIE).lower()
    renewed = repo.session(digest, time.time())
    assert renewed is not None and renewed.expires_at > time.time() + SESSION_TTL - 60
    repo.extend_session(digest, time.time() - 1)  # expired
    assert client.get("/api/me").json() == {"account": None, "csrf": None}


def test_a_session_is_valid_on_another_worker_of_the_same_database(database: str) -> None:
    with TestClient(make_app(database=database)) as one, TestClient(make_app(database=database)) as two:
        name = unique()
        signup(one, name)
        two.cookies.update(one.cookies)
        assert two.get("/api/me").json()["account"]["name"] == name
        made = two.post("/api/tables", json=TABLE, headers=csrf(two))
        assert made.status_code == 201 and made.json()["table"]["seats"][0]["name"] == name
        assert two.post("/api/logout", headers=csrf(two)).status_code == 200
        one.cookies.set(SESSION_COOKIE, two.cookies.get(SESSION_COOKIE) or "")
        assert one.get("/api/me").json()["account"] is None


def test_an_older_database_gets_the_account_column_of_its_seats(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE ludo_seats (table_id VARCHAR(32) NOT NULL, seat INTEGER NOT NULL, "
                          "kind VARCHAR(8) NOT NULL, level VARCHAR(64), name VARCHAR(64), token_hash VARCHAR(64), "
                          "away_since FLOAT, PRIMARY KEY (table_id, seat))"))
    engine.dispose()
    repo = Repository(url)
    try:
        with repo.engine.connect() as conn:
            columns = {row[1] for row in conn.execute(text("PRAGMA table_info(ludo_seats)"))}
        assert "account_id" in columns
        assert repo.create_account("Old Timer", "$argon2id$x") > 0
    finally:
        repo.close()


# --- the seat follows the account -----------------------------------------------------------------------------
def test_a_seat_taken_while_logged_in_is_resumed_in_another_browser(client: TestClient) -> None:
    name = unique("Dee")
    signup(client, name)
    made = client.post("/api/tables", json=TABLE, headers=csrf(client)).json()
    table, old_token = made["id"], made["token"]
    assert made["table"]["seats"][0] == {**made["table"]["seats"][0], "name": name, "account": True}
    repo: Repository = client.app.state.lobby.repo
    account = repo.account_by_name(name)
    assert account is not None and repo.seats_of(table)[0].account_id == account.id
    assert repo.account_seat(table, account.id) == 0

    phone = second_browser(client)
    assert phone.post(f"/api/tables/{table}/my-seat").json()["code"] == "not_logged_in"
    phone.post("/api/login", json={"name": name, "password": PASSWORD})
    with connect(client, table, old_token) as laptop:
        res = phone.post(f"/api/tables/{table}/my-seat", headers=csrf(phone))
        assert res.status_code == 200 and res.json()["seat"] == 0
        laptop.until(lambda m: m["type"] == "left" and m["seat"] == 0)  # the laptop watches from now on
    with connect(phone, table, res.json()["token"]) as ws:
        assert ws.last["you"] == 0
        ws.send({"type": "auth", "token": old_token})
        assert ws.until(lambda m: m["type"] == "error")["code"] == "bad_token"

    # someone else logged in holds no seat there; a casual join of the other seat carries no account
    other = second_browser(client)
    signup(other, unique("Eve"))
    assert other.post(f"/api/tables/{table}/my-seat", headers=csrf(other)).json() == {"seat": None, "token": None}
    joined = other.post(f"/api/tables/{table}/join", json={"seat": 1, "name": "whatever"}, headers=csrf(other))
    assert joined.status_code == 200
    seats = client.get(f"/api/tables/{table}").json()["seats"]
    assert seats[1]["name"] != "whatever" and seats[1]["account"] is True
