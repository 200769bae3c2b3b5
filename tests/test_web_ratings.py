"""Rated tables and ratings: the update when a rated table ends (checked against openskill's
own Plackett-Luce), exactly once, who may sit, and the profile and leaderboard APIs (SQLite here,
PostgreSQL with ``LUDOTECA_TEST_POSTGRES_URL``)."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("openskill")

from openskill.models import PlackettLuce
from sqlalchemy import func, select, update

from ludoteca.core.rating import Rating
from ludoteca.registry import GAMES, game_class
from ludoteca.web.accounts import ratings
from ludoteca.web.repository.store import (
    NoteData,
    Repository,
    SeatData,
    TableData,
    accounts_t,
    actions_t,
    rating_history_t,
    ratings_t,
    tables_t,
)

pytestmark = pytest.mark.timeout(120)

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
needs_pg = pytest.mark.skipif(not PG_URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server)")
GAME = GAMES[0]
"""Any game: the ratings never look inside it (the stored result says who won)."""


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=needs_pg)])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Repository]:
    if request.param == "sqlite":
        r = Repository(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    else:
        r = Repository(str(PG_URL))  # shared with other tests: every test makes its own accounts and tables
    try:
        yield r
    finally:
        r.close()


def account(repo: Repository, name: str) -> int:
    return repo.create_account(f"{name}-{uuid.uuid4().hex[:6]}", "argon2-hash-not-checked-here")


def ended_table(repo: Repository, seats: list[SeatData], returns: list[float], *, rated: bool = True,
                reason: str | None = None, seat: int | None = None, resigned: list[int] = (),  # type: ignore[assignment]
                game: str = GAME, moves: list[int] | None = None) -> str:
    """A table stored as ended with ``returns`` (as the master stores it), rated or not, after each seat
    made ``moves[seat]`` moves of its own (default: the minimum a rated result needs), in turn."""
    table_id = uuid.uuid4().hex[:10]
    now = time.time()
    settings: dict[str, Any] = {"abandon_after": 180, "abandoned": "ai", "chat": "shared"}
    if rated:
        settings["rated"] = True
    repo.create_table(TableData(id=table_id, game=game, options={"players": len(seats)}, seed=1, status="playing",
                                created_at=now, updated_at=now, seats=seats, settings=settings))
    played = store_moves(repo, table_id, moves if moves is not None else [ratings.MIN_OWN_MOVES] * len(seats))
    result: dict[str, Any] = {"returns": returns, "winners": [i for i, r in enumerate(returns) if r > 0]}
    if reason:
        result.update(reason=reason, seat=seat)
    if resigned:
        repo.add_notes(table_id, [NoteData("resigned", "all", played, {"seat": s, "name": "x", "level": "random"})
                                  for s in resigned])
    with repo.engine.begin() as conn:
        conn.execute(update(tables_t).where(tables_t.c.id == table_id)
                     .values(status="over", result=json.dumps(result), updated_at=time.time()))
    return table_id


def store_moves(repo: Repository, table_id: str, moves: list[int], action: str = '{"move":1}') -> int:
    """Store ``moves[seat]`` actions for each seat, the seats in turn, after the table's actions; returns
    how many the table then has."""
    with repo.engine.begin() as conn:
        seq = int(conn.execute(select(func.count()).select_from(actions_t)
                               .where(actions_t.c.table_id == table_id)).scalar() or 0)
        left = list(moves)
        rows = []
        while any(left):
            for s, n in enumerate(left):
                if n:
                    rows.append({"table_id": table_id, "seq": seq, "seat": s, "action": action, "created_at": 0.0})
                    seq, left[s] = seq + 1, n - 1
        if rows:
            conn.execute(actions_t.insert(), rows)
    return seq


def human(account_id: int, name: str = "p") -> SeatData:
    return SeatData("human", None, name, "h" * 64, account_id=account_id)


def stored_rating(repo: Repository, account_id: int, players: int = 2) -> Rating | None:
    with repo.engine.connect() as conn:
        row = conn.execute(select(ratings_t).where(ratings_t.c.account_id == account_id, ratings_t.c.game == GAME,
                                                   ratings_t.c.players == players)).first()
    return Rating(row.mu, row.sigma, row.games) if row is not None else None


def set_rating(repo: Repository, account_id: int, r: Rating, players: int, game: str = GAME) -> None:
    with repo.engine.begin() as conn:
        conn.execute(ratings_t.insert().values(account_id=account_id, game=game, players=players, mu=r.mu,
                                               sigma=r.sigma, games=r.games, wins=0, updated_at=time.time()))


def openskill_expected(before: list[Rating], ranks: list[int]) -> list[tuple[float, float]]:
    model = PlackettLuce()
    teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    return [(team[0].mu, team[0].sigma) for team in model.rate(teams, ranks=ranks)]


# --- the update ------------------------------------------------------------------------------------------

def test_two_newcomers_the_winner_gets_openskills_documented_value(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    table = ended_table(repo, [human(ann), human(bob)], [1.0, -1.0])
    done = ratings.rate_table(repo, table)
    assert [(u.account_id, u.rank, u.win) for u in done] == [(ann, 0, True), (bob, 1, False)]
    a, b = stored_rating(repo, ann), stored_rating(repo, bob)
    assert a is not None and b is not None
    # openskill's Plackett-Luce, two newcomers (mu 25, sigma 25/3), one game: hand-checked value
    assert a.mu == pytest.approx(27.6354, abs=1e-4) and a.sigma == pytest.approx(8.0659, abs=1e-4)
    assert b.mu == pytest.approx(22.3646, abs=1e-4) and b.sigma == pytest.approx(8.0659, abs=1e-4)
    assert a.games == b.games == 1 and a.provisional
    with repo.engine.connect() as conn:
        wins = dict(conn.execute(select(ratings_t.c.account_id, ratings_t.c.wins)).all())
        history = list(conn.execute(select(rating_history_t).where(rating_history_t.c.table_id == table)
                                    .order_by(rating_history_t.c.rank)))
    assert wins[ann] == 1 and wins[bob] == 0
    assert [(h.account_id, h.rank, h.display) for h in history] == [(ann, 0, a.display), (bob, 1, b.display)]
    assert a.display == 1500 + round(30 * (a.mu - 25))


@pytest.mark.parametrize(("returns", "ranks"), [
    ([1.0, 0.0, -1.0], [0, 1, 2]),
    ([-1.0, 1.0, 0.0, 0.0], [2, 0, 1, 1]),
    ([1.0, 1.0, -1.0, -1.0], [0, 0, 1, 1]),  # a shared win: a tie at the top
])
def test_three_and_four_players_match_openskill_on_the_same_inputs(repo: Repository, returns: list[float],
                                                                    ranks: list[int]) -> None:
    n = len(returns)
    ids = [account(repo, f"p{i}") for i in range(n)]
    before = [Rating(25 + 3 * i, 8.0 - i, 4 + i) for i in range(n)]
    for i, r in zip(ids, before, strict=True):
        set_rating(repo, i, r, n)
    table = ended_table(repo, [human(i) for i in ids], returns)
    done = ratings.rate_table(repo, table)
    assert [u.rank for u in done] == ranks
    for i, (mu, sigma), old in zip(ids, openskill_expected(before, ranks), before, strict=True):
        got = stored_rating(repo, i, n)
        assert got is not None
        assert got.mu == pytest.approx(mu, abs=1e-9) and got.sigma == pytest.approx(sigma, abs=1e-9)
        assert got.games == old.games + 1


def test_a_shared_win_is_a_tie(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [0.0, 0.0]))
    a, b = stored_rating(repo, ann), stored_rating(repo, bob)
    assert a is not None and b is not None
    assert a.mu == pytest.approx(25.0) and b.mu == pytest.approx(25.0) and a.sigma < 25 / 3


def test_a_resignation_ranks_the_resigner_last(repo: Repository) -> None:
    # two players: the table's result already says the other one won
    ann, bob = account(repo, "ann"), account(repo, "bob")
    ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [-1.0, 1.0], reason="resigned", seat=0))
    a, b = stored_rating(repo, ann), stored_rating(repo, bob)
    assert a is not None and b is not None and a.mu < b.mu
    # three players: the resigner's seat went on with an AI that won the game; the resigner still ranks last
    ids = [account(repo, f"q{i}") for i in range(3)]
    table = ended_table(repo, [human(i) for i in ids], [1.0, 0.0, -1.0], resigned=[0])
    done = ratings.rate_table(repo, table)
    assert [u.rank for u in done] == [2, 0, 1] and not done[0].win
    expected = openskill_expected([Rating()] * 3, [2, 0, 1])
    got = stored_rating(repo, ids[0], 3)
    assert got is not None and got.mu == pytest.approx(expected[0][0])


def test_ranks_of_puts_the_first_to_resign_lowest() -> None:
    assert ratings.ranks_of({"returns": [1, 0, 0, -1]}, 4, resigned=[0, 2])[1] == [3, 0, 2, 1]
    assert ratings.ranks_of({"returns": [0, 0, 0], "reason": "abandoned", "seat": 1}, 3)[1] == [0, 1, 0]
    with pytest.raises(ValueError):
        ratings.ranks_of({"returns": [1]}, 2)


def test_an_ai_seat_plays_at_its_ladder_rating_which_does_not_change(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    ladder = Rating(31.0, 2.5, 400)
    seats = [human(ann), human(bob), SeatData("ai", "mcts", "AI 3 (mcts)")]
    table = ended_table(repo, seats, [1.0, 0.0, -1.0])
    done = ratings.rate_table(repo, table, level_rating=lambda game, level, players: ladder)
    assert [u.account_id for u in done] == [ann, bob]
    expected = openskill_expected([Rating(), Rating(), ladder], [0, 1, 2])
    got = stored_rating(repo, ann, 3)
    assert got is not None and got.mu == pytest.approx(expected[0][0]) and got.sigma == pytest.approx(expected[0][1])
    with repo.engine.connect() as conn:  # no rating row for the AI
        assert conn.execute(select(func.count()).select_from(rating_history_t)
                            .where(rating_history_t.c.table_id == table)).scalar() == 2
    # without a ladder rating an AI seat counts as a newcomer (fixed too)
    cid, did = account(repo, "cid"), account(repo, "dee")
    ratings.rate_table(repo, ended_table(repo, [human(cid), human(did), seats[2]], [1.0, 0.0, -1.0]),
                       level_rating=lambda game, level, players: None)
    got = stored_rating(repo, cid, 3)
    expected = openskill_expected([Rating()] * 3, [0, 1, 2])
    assert got is not None and got.mu == pytest.approx(expected[0][0])


def test_a_rated_result_needs_two_accounts_and_a_real_game(repo: Repository) -> None:
    """Rating farming: a second account resigning at move 0, one account against AIs, a player who
    made too few moves of their own: the table ends, nobody's rating changes."""
    need = ratings.MIN_OWN_MOVES
    assert need == 3 and ratings.min_own_moves(GAME) == need  # no game tunes it today
    ann, bob = account(repo, "ann"), account(repo, "bob")
    ai = SeatData("ai", "random", "AI")
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], reason="resigned",
                                                seat=1, moves=[0, 0])) == []
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), ai], [1.0, -1.0])) == []  # one account
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [1.0, -1.0],
                                                moves=[need, need - 1])) == []
    # timeouts are not the player's moves; neither are the AI's moves after the player resigned
    short = ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], moves=[need, need - 1])
    store_moves(repo, short, [0, 5], action='{"timeout":true}')
    assert ratings.rate_table(repo, short) == []
    ids = [account(repo, f"r{i}") for i in range(3)]
    gone = ended_table(repo, [human(i) for i in ids], [1.0, 0.0, -1.0], resigned=[2], moves=[need, need, 0])
    store_moves(repo, gone, [0, 0, need])  # the AI playing seat 3 after the resignation
    assert ratings.rate_table(repo, gone) == []
    assert stored_rating(repo, ann) is None and stored_rating(repo, bob) is None
    # the minimum of each: rated
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], moves=[need, need]))


def test_unrated_and_unfinished_tables_change_nothing(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], rated=False)) == []
    # a human seat without an account: the table is not rated
    anon = SeatData("human", None, "anon", "h" * 64)
    assert ratings.rate_table(repo, ended_table(repo, [human(ann), anon], [1.0, -1.0])) == []
    assert ratings.rate_table(repo, "nosuchtable") == []
    assert stored_rating(repo, ann) is None and stored_rating(repo, bob) is None


# --- exactly once ---------------------------------------------------------------------------------------

def test_the_end_rated_twice_counts_once(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    table = ended_table(repo, [human(ann), human(bob)], [1.0, -1.0])
    assert ratings.rate_table(repo, table)
    once = stored_rating(repo, ann)
    assert ratings.rate_table(repo, table) == []
    assert stored_rating(repo, ann) == once
    assert table not in ratings.pending_tables(repo, 0)


def test_two_servers_on_one_database_rate_a_table_once(repo: Repository) -> None:
    """Two application instances (two repositories on one database) see the same end at once."""
    other = Repository(repo.url)
    try:
        ann, bob = account(repo, "ann"), account(repo, "bob")
        tables = [ended_table(repo, [human(ann), human(bob)], [1.0, -1.0]) for _ in range(3)]
        results: list[int] = []
        lock = threading.Lock()

        def run(r: Repository) -> None:
            for t in tables:
                done = ratings.rate_table(r, t)
                with lock:
                    results.append(len(done))

        threads = [threading.Thread(target=run, args=(r,)) for r in (repo, other)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sorted(results) == [0, 0, 0, 2, 2, 2]
        a = stored_rating(repo, ann)
        assert a is not None and a.games == 3
        with repo.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(rating_history_t)
                                .where(rating_history_t.c.account_id == ann)).scalar() == 3
    finally:
        other.close()


def test_tables_that_ended_unrated_are_caught_up(repo: Repository) -> None:
    ann, bob = account(repo, "ann"), account(repo, "bob")
    since = time.time() - 1
    table = ended_table(repo, [human(ann), human(bob)], [1.0, -1.0])
    unrated = ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], rated=False)
    # (the PostgreSQL database is shared with other tests: look only at these two tables)
    pending = ratings.pending_tables(repo, since)
    assert table in pending and unrated not in pending
    assert ratings.rate_table(repo, table)
    assert table not in ratings.pending_tables(repo, since)


# --- who may sit ------------------------------------------------------------------------------------------

def test_a_rated_table_needs_accounts() -> None:
    from ludoteca.web.errors import WebError
    with pytest.raises(WebError) as err:
        ratings.check_creation({"game": GAME, "rated": True}, None)
    assert err.value.status == 403 and err.value.code == "rated_needs_account"
    ratings.check_creation({"game": GAME, "rated": True}, object())
    ratings.check_creation({"game": GAME}, None)
    for seats in ([{"kind": "ai", "level": "random"}] * 2, [{"kind": "open"}, {"kind": "ai", "level": "random"}]):
        with pytest.raises(WebError) as err:
            ratings.check_creation({"game": GAME, "rated": True, "seats": seats}, object())
        assert err.value.status == 400 and err.value.code == "bad_seats"
        assert "at least 2 people with accounts" in err.value.message
    ratings.check_creation({"game": GAME, "rated": True, "seats": [{"kind": "open"}] * 2}, object())
    with pytest.raises(WebError) as err:
        ratings.check_seat({"rated": True}, None)
    assert "log in" in err.value.message
    assert "accedi" in err.value.to_json(lang="it")["message"].lower()
    ratings.check_seat({"rated": True}, object())
    ratings.check_seat({}, None)


# --- profile and leaderboard --------------------------------------------------------------------------------

def _names(repo: Repository, ids: list[int]) -> list[str]:
    with repo.engine.connect() as conn:
        rows = dict(conn.execute(select(accounts_t.c.id, accounts_t.c.name).where(accounts_t.c.id.in_(ids))).all())
    return [rows[i] for i in ids]


def test_profile_and_leaderboard_read_the_ratings(repo: Repository) -> None:
    from ludoteca.web.accounts import profiles
    game = f"g{uuid.uuid4().hex[:8]}"  # a leaderboard of its own (the PostgreSQL database is shared)
    ann, bob, cid = account(repo, "ann"), account(repo, "bob"), account(repo, "cid")
    for _ in range(3):
        ratings.rate_table(repo, ended_table(repo, [human(ann), human(bob)], [1.0, -1.0], game=game))
    # an established player (many games, small sigma) ranks above provisional ones
    set_rating(repo, cid, Rating(24.0, 2.0, 40), 2, game)
    unrated = ended_table(repo, [human(ann), human(bob)], [-1.0, 1.0], rated=False, game=game)
    ann_name, bob_name, cid_name = _names(repo, [ann, bob, cid])
    data = profiles.profile(repo, ann_name)
    assert data is not None and data["name"] == ann_name
    (entry,) = data["ratings"]
    assert entry["game"] == game and entry["players"] == 2 and entry["games"] == 3 and entry["wins"] == 3
    assert entry["rating"]["provisional"] is True and entry["rating"]["low"] < entry["rating"]["display"]
    assert [p["display"] for p in entry["history"]] == sorted(p["display"] for p in entry["history"])
    assert len(entry["history"]) == 3
    assert len(data["tables"]) == 4 and data["tables"][0]["id"] == unrated
    assert data["tables"][0]["rated"] is False and data["tables"][0]["won"] is False
    assert data["tables"][1]["rated"] is True and data["tables"][1]["rating_after"] == entry["rating"]["display"]
    assert all(t["replay"] == f"/replay/{t['id']}" for t in data["tables"])
    assert profiles.profile(repo, "nobody-" + uuid.uuid4().hex) is None
    rows = profiles.leaderboard(repo, game, 2, 10)
    assert [r["name"] for r in rows] == [cid_name, ann_name, bob_name]
    assert [r["rating"]["provisional"] for r in rows] == [False, True, True]
    assert [r["place"] for r in rows] == [1, 2, 3]
    # ordered by mu - 3 sigma, which an established player with a lower mu still tops
    assert rows[0]["rating"]["display"] < rows[1]["rating"]["display"]
    assert profiles.leaderboard(repo, game, 2, 1)[0]["name"] == cid_name
    assert profiles.leaderboard(repo, game, 3, 10) == []


def test_profile_and_leaderboard_over_http(tmp_path: Path) -> None:
    from tests.test_web_api import server
    with server(tmp_path) as client:
        repo: Repository = client.app.state.lobby.repo  # type: ignore[attr-defined]
        ann, bob = account(repo, "ann"), account(repo, "bob")
        table = ended_table(repo, [human(ann, "Ann"), human(bob, "Bob")], [1.0, -1.0])
        ratings.rate_table(repo, table)
        ann_name = _names(repo, [ann])[0]
        got = client.get(f"/api/players/{ann_name}")
        assert got.status_code == 200 and got.json()["ratings"][0]["rating"]["display"] > 1500
        assert got.json()["tables"][0]["replay"] == f"/replay/{table}"
        page = client.get(f"/players/{ann_name}")
        assert page.status_code == 200 and "profile.js" in page.text
        missing = client.get("/players/nobody-here")
        assert missing.status_code == 404 and "profile.js" in missing.text
        err = client.get("/api/players/nobody-here", headers={"Accept-Language": "it"})
        assert err.status_code == 404 and err.json()["code"] == "not_found"
        assert "nessun" in err.json()["message"].lower()
        board = client.get(f"/api/leaderboard?game={GAME}&players=2&limit=5").json()
        assert board["entries"][0]["name"] == ann_name and board["limit"] == 5
        assert {g["name"] for g in board["games"]} == set(GAMES)
        assert client.get("/api/leaderboard").json()["game"] == GAME
        cls = game_class(GAME)
        for bad in ("limit=0", "limit=101", "limit=x", f"players={cls.max_players + 1}", "players=-1",
                    "game=nosuchgame", "limit=" + "9" * 50):
            r = client.get(f"/api/leaderboard?game={GAME}&{bad}" if "game=" not in bad else f"/api/leaderboard?{bad}")
            assert r.status_code == 400, bad
            assert r.json()["message"]
        assert client.get("/leaderboard").status_code == 200


# --- end to end: logged-in players, a rated table, the ratings after it ----------------------------------------

def _signup(client: Any, name: str) -> dict[str, str]:
    """A new account (logged in): its cookies, to send as that player."""
    client.cookies.clear()
    res = client.post("/api/signup", json={"name": name, "password": "a long password"})
    assert res.status_code == 201, res.text
    jar = dict(client.cookies)
    client.cookies.clear()
    return jar


def _as(client: Any, jar: dict[str, str] | None) -> dict[str, str]:
    """Act as the player of ``jar`` (None: nobody logged in); the headers a page sends (its CSRF token)."""
    client.cookies.clear()
    for k, v in (jar or {}).items():
        client.cookies.set(k, v)
    return {"X-CSRF-Token": jar["ludoteca_csrf"]} if jar else {}


def _rated_game(client: Any, ann: dict[str, str], bob: dict[str, str], game: str = "tohm") -> tuple[str, str, str]:
    made = client.post("/api/tables", json={"game": game, "players": 2, "seats": [{"kind": "open"}] * 2, "sit": 0,
                                            "rated": True}, headers=_as(client, ann))
    assert made.status_code == 201, made.text
    assert made.json()["table"]["rated"] is True
    table = made.json()["id"]
    joined = client.post(f"/api/tables/{table}/join", json={"seat": 1}, headers=_as(client, bob))
    assert joined.status_code == 200, joined.text
    _as(client, None)
    return table, made.json()["token"], joined.json()["token"]


def _wait_rated(client: Any, name: str, games: int) -> dict[str, Any]:
    for _ in range(200):
        data = client.get(f"/api/players/{name}").json()
        if data["ratings"] and data["ratings"][0]["games"] >= games:
            return dict(data)
        time.sleep(0.05)
    raise AssertionError(f"{name}'s rating was not updated")


def _play_rated(tmp_path: Path | None, database: str | None) -> None:
    import random

    from tests.test_web_api import connect, play_random, server
    with server(tmp_path, database) as client:
        tag = uuid.uuid4().hex[:6]
        ann_name, bob_name = f"Ann{tag}", f"Bob{tag}"
        ann, bob = _signup(client, ann_name), _signup(client, bob_name)
        # nobody logged in: no rated table, no seat at one (HTTP or websocket), in the requester's language
        body = {"game": "tohm", "players": 2, "seats": [{"kind": "open"}] * 2, "rated": True}
        refused = client.post("/api/tables", json=body, headers={"Accept-Language": "it"})
        assert refused.status_code == 403 and refused.json()["code"] == "rated_needs_account"
        assert refused.json()["message"] == "accedi per creare un tavolo classificato"
        bad = client.post("/api/tables", json={**body, "rated": "yes"}, headers=_as(client, ann))
        assert bad.status_code == 400 and bad.json()["code"] == "bad_options"
        table, ann_token, bob_token = _rated_game(client, ann, bob)
        before = client.get(f"/api/tables/{table}").json()
        assert before["status"] == "playing" and [s["name"] for s in before["seats"]] == [ann_name, bob_name]
        # a third table: a casual player may not sit at a rated one
        other = client.post("/api/tables", json=body, headers=_as(client, ann)).json()["id"]
        _as(client, None)
        no = client.post(f"/api/tables/{other}/join", json={"seat": 0, "name": "Eve"})
        assert no.status_code == 403 and no.json()["code"] == "rated_needs_account"
        with connect(client, other) as eve:
            eve.send({"type": "join", "seat": 0, "name": "Eve"})
            assert eve.error()["code"] == "rated_needs_account"
        assert [s["kind"] for s in client.get(f"/api/tables/{other}").json()["seats"]] == ["open", "open"]
        # one seat per account at a rated table
        assert client.post(f"/api/tables/{other}/join", json={"seat": 0}, headers=_as(client, ann)).status_code == 200
        twice = client.post(f"/api/tables/{other}/join", json={"seat": 1}, headers=_as(client, ann))
        assert twice.status_code == 409 and "already have a seat" in twice.json()["message"]
        _as(client, None)
        assert {t["id"]: t["rated"] for t in client.get("/api/tables").json()["tables"]}[other] is True
        with connect(client, table, ann_token) as a, connect(client, table, bob_token) as b:
            final = play_random({0: a, 1: b}, [], random.Random(7))
        assert final["status"] == "over"
        returns = final["result"]["returns"]
        ann_data, bob_data = _wait_rated(client, ann_name, 1), _wait_rated(client, bob_name, 1)
        (ra,), (rb,) = ann_data["ratings"], bob_data["ratings"]
        expected = openskill_expected([Rating(), Rating()], ratings.ranks_of({"returns": returns}, 2)[1])
        assert (ra["rating"]["mu"], rb["rating"]["mu"]) == pytest.approx((expected[0][0], expected[1][0]))
        winners = final["result"]["winners"]  # a shared win counts as a win for each winner
        assert (ra["wins"], rb["wins"]) == (int(0 in winners), int(1 in winners)) and ra["games"] == rb["games"] == 1
        assert ann_data["tables"][0]["id"] == table and ann_data["tables"][0]["rated"] is True
        # the end seen again (a restart, another worker) changes nothing
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        assert ratings.rate_table(lobby.repo, table) == []
        board = client.get("/api/leaderboard?game=tohm&players=2&limit=100").json()
        assert {ann_name, bob_name} <= {e["name"] for e in board["entries"]}


def test_two_logged_in_players_play_a_rated_table_sqlite(tmp_path: Path) -> None:
    _play_rated(tmp_path, None)


@needs_pg
def test_two_logged_in_players_play_a_rated_table_postgresql() -> None:
    _play_rated(None, PG_URL)


def test_a_player_who_resigns_a_rated_three_player_table_ranks_last(tmp_path: Path) -> None:
    import random

    from tests.test_web_api import connect, play_random, server
    with server(tmp_path) as client:
        tag = uuid.uuid4().hex[:6]
        names = [f"P{k}{tag}" for k in range(3)]
        jars = [_signup(client, n) for n in names]
        made = client.post("/api/tables", json={"game": "tohm", "players": 3, "seats": [{"kind": "open"}] * 3,
                                                "sit": 0, "rated": True, "options": {"turn_limit": 30}},
                           headers=_as(client, jars[0]))
        assert made.status_code == 201, made.text
        table, tokens = made.json()["id"], [made.json()["token"]]
        for k in (1, 2):
            joined = client.post(f"/api/tables/{table}/join", json={"seat": k}, headers=_as(client, jars[k]))
            tokens.append(joined.json()["token"])
        _as(client, None)
        with connect(client, table, tokens[0]) as p0, connect(client, table, tokens[1]) as p1, \
                connect(client, table, tokens[2]) as p2:
            repo = client.app.state.lobby.repo  # type: ignore[attr-defined]

            def everyone_moved(_state: dict[str, Any]) -> bool:  # the moves a rated result needs, then P1 resigns
                with repo.engine.connect() as conn:
                    made = ratings._own_moves(conn, table)
                return all(made.get(k, 0) >= ratings.MIN_OWN_MOVES for k in range(3))

            play_random({0: p0, 1: p1, 2: p2}, [], random.Random(3), stop=everyone_moved)
            p1.send({"type": "resign"})
            p0.until(lambda m: m["type"] == "note" and m["kind"] == "resigned")
            final = play_random({0: p0, 2: p2}, [p1], random.Random(3))
        assert final["status"] == "over"
        seats = client.app.state.lobby.repo.seats_of(table)  # type: ignore[attr-defined]
        assert seats[1].kind == "ai" and seats[1].token_hash is None and seats[1].account_id is not None
        data = _wait_rated(client, names[1], 1)
        with client.app.state.lobby.repo.engine.connect() as conn:  # type: ignore[attr-defined]
            ranks = dict(conn.execute(select(rating_history_t.c.account_id, rating_history_t.c.rank)
                                      .where(rating_history_t.c.table_id == table)).all())
        resigner = data["ratings"][0]["history"][0]["rank"]
        assert len(ranks) == 3 and resigner == max(ranks.values())  # last, whatever the AI did with the seat
        assert sorted(ranks.values()).count(resigner) == 1
        assert data["ratings"][0]["wins"] == 0 and data["ratings"][0]["players"] == 3
        # the account cannot take the seat back (no token): the seat stays the AI's
        back = client.post(f"/api/tables/{table}/my-seat", json={}, headers=_as(client, jars[1]))
        assert back.status_code == 200 and back.json()["seat"] is None


def test_a_rated_table_of_ais_or_of_one_person_against_ais_cannot_be_created(tmp_path: Path) -> None:
    from tests.test_web_api import server
    with server(tmp_path) as client:
        jar = _signup(client, f"Solo{uuid.uuid4().hex[:6]}")
        ai = {"kind": "ai", "level": "random"}
        for seats, sit in (([ai, ai], None), ([{"kind": "open"}, ai], 0)):
            made = client.post("/api/tables", json={"game": "tohm", "players": 2, "sit": sit, "rated": True,
                                                    "seats": seats}, headers=_as(client, jar))
            assert made.status_code == 400 and made.json()["code"] == "bad_seats"
            assert made.json()["message"] == ("a rated table is played by at least 2 people with accounts: "
                                              "leave at least 2 seats open")
        it = client.post("/api/tables", json={"game": "tohm", "players": 2, "rated": True, "seats": [ai, ai]},
                         headers={**_as(client, jar), "Accept-Language": "it"})
        assert it.status_code == 400 and "almeno 2" in it.json()["message"]
        _as(client, None)
        assert client.get("/api/tables").json()["tables"] == []  # nothing was created


def test_a_second_account_resigning_at_once_changes_no_rating(tmp_path: Path) -> None:
    """Rating farming: Bob joins Ann's rated table and resigns before any move. The table
    ends (Ann wins it), but neither rating moves: Ann gets no +79 in one click."""
    from tests.test_web_api import connect, server
    with server(tmp_path) as client:
        tag = uuid.uuid4().hex[:6]
        ann, bob = _signup(client, f"Ann{tag}"), _signup(client, f"Bob{tag}")
        table, ann_token, bob_token = _rated_game(client, ann, bob)
        with connect(client, table, ann_token) as a, connect(client, table, bob_token) as b:
            b.send({"type": "resign"})
            final = a.until(lambda m: m.get("status") == "over")
        assert final["result"]["reason"] == "resigned" and final["result"]["winners"] == [0]
        lobby = client.app.state.lobby  # type: ignore[attr-defined]
        assert ratings.rate_table(lobby.repo, table) == []  # (whatever the worker did meanwhile)
        for name in (f"Ann{tag}", f"Bob{tag}"):
            data = client.get(f"/api/players/{name}").json()
            assert data["ratings"] == [] and data["tables"][0]["id"] == table
