"""``ludoteca backup`` and ``ludoteca restore`` (docs/web.md, "Backups"): a backup taken from a
running server mid-game restores into a fresh database with every acknowledged action, account
and rating; bad requests are refused with a clear message and change nothing.

Real SQLite files, a real PostgreSQL server (``LUDOTECA_TEST_POSTGRES_URL``, a fresh database per
test) and the real command line in its own process.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("starlette")

from sqlalchemy import create_engine, select

from ludoteca.core.rating import Rating
from ludoteca.registry import GAMES
from ludoteca.web import launch
from ludoteca.web.repository.store import (
    Repository,
    accounts_t,
    actions_t,
    rating_history_t,
    ratings_t,
    seats_t,
    tables_t,
)
from tests.test_web_api import WS, connect, create, open_seats, server
from tests.test_web_ratings import set_rating

pytestmark = pytest.mark.timeout(180)

PG_URL = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
needs_pg = pytest.mark.skipif(not PG_URL, reason="LUDOTECA_TEST_POSTGRES_URL is not set (no PostgreSQL server)")
GAME = GAMES[0]
"""Any game: a backup never looks inside one."""
PASSWORD = "correct horse battery"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LANGUAGE": "en"}
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@contextmanager
def database(kind: str, folder: Path, name: str) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{folder / (name + '.sqlite3')}"
    else:
        with launch.fresh_database(str(PG_URL), "ludo_backup") as url:
            yield url


def rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the tables a backup must keep, sorted."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return {t.name: sorted(tuple(r) for r in conn.execute(select(t)))
                    for t in (tables_t, seats_t, actions_t, accounts_t, ratings_t, rating_history_t)}
    finally:
        engine.dispose()


def play_some(ann: WS, bob: WS, moves: int, rng: random.Random) -> int:
    """Both human seats play ``moves`` random legal moves; returns the acknowledged action count."""
    assert ann.last is not None and bob.last is not None
    seats = {ann.last["you"]: ann, bob.last["you"]: bob}
    state = ann.last
    for _ in range(moves):
        mover = seats.get(state["to_move"])
        if state["status"] != "playing" or mover is None or mover.last is None:
            break
        mover.send({"type": "action", "action": rng.choice(mover.last["legal"]), "seq": state["seq"]})
        state = ann.state_at_least(state["seq"] + 1)
        bob.state_at_least(state["seq"])
    return int(state["seq"])


def signup(client: Any, name: str) -> None:
    res = client.post("/api/signup", json={"name": name, "password": PASSWORD})
    assert res.status_code in (200, 201), res.text
    client.cookies.clear()  # the next request is another browser's


@pytest.mark.parametrize(("source", "target"), [
    ("sqlite", "sqlite"),
    pytest.param("postgresql", "postgresql", marks=[needs_pg, pytest.mark.postgres]),
    pytest.param("sqlite", "postgresql", marks=[needs_pg, pytest.mark.postgres]),
])
def test_a_backup_taken_mid_game_restores_everything_acknowledged(tmp_path: Path, source: str, target: str) -> None:
    rng = random.Random(5)
    with database(source, tmp_path, "live") as live_url:
        with server(None, live_url) as client:
            for name in ("Ann", "Bob"):
                signup(client, f"{name}-{source}")
            made = create(client, GAME, open_seats(2))
            bob = client.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
            with connect(client, made["id"], made["token"]) as ann, connect(client, made["id"], bob) as bobws:
                play_some(ann, bobws, 12, rng)
                # ratings and their history, as the server stores them when a rated table ends
                repo = client.app.state.lobby.repo
                ids = [repo.account_by_name(f"{n}-{source}").id for n in ("Ann", "Bob")]
                for place, account_id in enumerate(ids):
                    set_rating(repo, account_id, Rating(30.0 - place, 7.5, 1), 2)
                    with repo.engine.begin() as conn:
                        conn.execute(rating_history_t.insert().values(
                            account_id=account_id, table_id=made["id"], game=GAME, players=2, mu=30.0 - place,
                            sigma=7.5, display=1200 - place, rank=place, at=time.time()))
                before = rows(live_url)
                assert before["ludo_actions"] and before["ludo_accounts"] and before["ludo_ratings"]

                out = tmp_path / "club.backup"
                done = cli("backup", "--database", live_url, str(out))  # the server is running, mid-game
                assert done.returncode == 0, done.stderr
                assert "backed up" in done.stdout

                play_some(ann, bobws, 4, rng)  # play goes on after the backup

        with database(target, tmp_path, "restored") as new_url:
            done = cli("restore", "--database", new_url, str(out))
            assert done.returncode == 0, done.stderr
            restored = rows(new_url)
            for name, expected in before.items():
                assert restored[name] == expected, name
            # the restored database serves: the table is there with every acknowledged action
            repo = Repository(new_url)
            try:
                data = repo.load_table(made["id"])
                assert data is not None and len(data.actions) == len(before["ludo_actions"])
                assert repo.create_account("Carla-after-restore", "hash") > max(ids)  # ids go on past the copy
            finally:
                repo.close()


def test_bad_backups_and_restores_are_refused_clearly(tmp_path: Path) -> None:
    live = f"sqlite:///{tmp_path / 'live.sqlite3'}"
    Repository(live).close()
    out = tmp_path / "b.sqlite3"
    assert cli("backup", "--database", live, str(out)).returncode == 0
    again = cli("backup", "--database", live, str(out))
    assert again.returncode == 1 and "never overwrites" in again.stderr

    missing = cli("backup", "--database", f"sqlite:///{tmp_path / 'nothing.sqlite3'}", str(tmp_path / "x"))
    assert missing.returncode == 1 and "there is no database" in missing.stderr

    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"not a backup at all")
    refused = cli("restore", "--database", f"sqlite:///{tmp_path / 'new.sqlite3'}", str(junk))
    assert refused.returncode == 1 and "is not a ludoteca backup" in refused.stderr

    # a database that holds accounts is never overwritten by a restore
    repo = Repository(live)
    repo.create_account("Dora", "hash")
    repo.close()
    before = rows(live)
    busy = cli("restore", "--database", live, str(out))
    assert busy.returncode == 1 and "restore into a new database" in busy.stderr
    assert rows(live) == before


def test_the_commands_speak_italian(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"nope")
    env = {**os.environ, "LANGUAGE": "it"}
    done = subprocess.run([sys.executable, "-m", "ludoteca.cli", "restore", "--database",
                           f"sqlite:///{tmp_path / 'n.sqlite3'}", str(junk)], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 1 and "non è un backup" in done.stderr
    helped = subprocess.run([sys.executable, "-m", "ludoteca.cli", "backup", "--help"], capture_output=True,
                            text=True, timeout=60, env=env)
    assert "copia di sicurezza" in helped.stdout
