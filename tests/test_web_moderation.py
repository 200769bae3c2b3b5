"""Moderation (web/accounts/moderation.py, docs/web.md "Moderation"): the admin role (the first account, or
``ludoteca admin grant``), closing a table, removing a chat line, renaming and suspending an account,
the moderation log — each action refused without the role and logged with it; across two workers on
real PostgreSQL and Redis too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import select

from ludoteca.registry import GAMES
from ludoteca.web.repository.store import Repository, admin_log_t, notes_t, seats_t
from tests.test_web_api import connect, create, open_seats, server

pytestmark = pytest.mark.timeout(180)

GAME = GAMES[0]
"""Any game: moderation never looks inside one."""
PASSWORD = "correct horse battery"


def signup(client: Any, name: str) -> dict[str, str]:
    """Sign ``name`` up in ``client`` (its cookies keep the session); the CSRF header to send."""
    res = client.post("/api/signup", json={"name": name, "password": PASSWORD})
    assert res.status_code == 201, res.text
    return {"X-CSRF-Token": res.json()["csrf"]}


def fresh_client(client: Any) -> Any:
    """Another browser on the same server (its own cookies), for HTTP requests. Websockets go through
    the ``with``-entered client: a client not entered runs each connection in an event loop of its own,
    and the server's connections must share the app's one loop."""
    from starlette.testclient import TestClient

    return TestClient(client.app)


def log_actions(repo: Repository) -> list[tuple[str, str]]:
    with repo.engine.connect() as conn:
        return [(r.action, r.target) for r in conn.execute(select(admin_log_t).order_by(admin_log_t.c.id))]


def test_the_first_account_moderates_and_nobody_else_may(tmp_path: Path) -> None:
    with server(tmp_path) as admin:
        signup(admin, "Mod")
        assert admin.get("/api/admin").status_code == 200
        other = fresh_client(admin)
        other_csrf = signup(other, "Player")
        anonymous = fresh_client(admin)
        made = create(anonymous, GAME, open_seats(2))
        for path in (f"/api/admin/tables/{made['id']}/close", "/api/admin/chat/1/remove",
                     "/api/admin/accounts/Mod/rename", "/api/admin/accounts/Mod/suspend"):
            refused = other.post(path, json={"name": "Evil", "suspended": True}, headers=other_csrf)
            assert refused.status_code == 403 and refused.json()["code"] == "not_admin", path
            assert anonymous.post(path, json={}).status_code == 401, path
        assert other.get("/api/admin").status_code == 403
        it = other.get("/api/admin", headers={"Accept-Language": "it"}).json()["message"]
        assert "moderator" in it.lower()  # in Italian: "moderatori"
        assert anonymous.get(f"/api/tables/{made['id']}").json()["status"] != "over"  # nothing changed
        assert log_actions(admin.app.state.lobby.repo) == []
        assert admin.get("/admin").status_code == 200 and "admin.js" in admin.get("/admin").text


def test_a_moderator_closes_a_table_in_play_and_everyone_is_told(tmp_path: Path) -> None:
    with server(tmp_path) as admin:
        csrf = signup(admin, "Mod")
        guest = fresh_client(admin)
        made = create(guest, GAME, open_seats(2))
        bob = guest.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(admin, made["id"], made["token"]) as ann, connect(admin, made["id"], bob), \
                connect(admin, made["id"]) as spectator:
            assert ann.last is not None and ann.last["status"] == "playing"
            done = admin.post(f"/api/admin/tables/{made['id']}/close", json={}, headers=csrf)
            assert done.status_code == 200, done.text
            over = spectator.until(lambda m: m["type"] in ("snapshot", "update") and m["status"] == "over")
            assert over["result"]["reason"] == "closed" and over["result"]["winners"] == []
            again = admin.post(f"/api/admin/tables/{made['id']}/close", json={}, headers=csrf)
            assert again.status_code == 409 or again.status_code == 400
        repo = admin.app.state.lobby.repo
        assert repo.load_table(made["id"]).status == "over"
        assert ("close_table", made["id"]) in log_actions(repo)


def test_a_removed_chat_line_is_erased_everywhere(tmp_path: Path) -> None:
    with server(tmp_path) as admin:
        csrf = signup(admin, "Mod")
        guest = fresh_client(admin)
        made = create(guest, GAME, open_seats(2))
        with connect(admin, made["id"], made["token"]) as ann, connect(admin, made["id"]) as spectator:
            ann.send({"type": "chat", "text": "something rude"})
            spectator.until(lambda m: m["type"] == "note" and m.get("text") == "something rude")
            repo = admin.app.state.lobby.repo
            chat = admin.get("/api/admin", headers=csrf).json()["chat"]
            line = next(c for c in chat if c["text"] == "something rude")
            assert admin.post(f"/api/admin/chat/{line['id']}/remove", json={}, headers=csrf).status_code == 200
            told = spectator.until(lambda m: "chat_removed" in str(m))
            assert "something rude" not in str(told)
            with repo.engine.connect() as conn:
                stored = conn.execute(select(notes_t.c.data).where(notes_t.c.id == line["id"])).scalar_one()
            assert "something rude" not in stored and '"removed": true' in stored
        # a viewer arriving later never sees the text (memory erased too)
        with connect(admin, made["id"]) as late:
            assert late.last is not None and "something rude" not in str(late.messages)
        assert ("remove_chat", made["id"]) in log_actions(repo)


def test_rename_and_suspend_an_account(tmp_path: Path) -> None:
    with server(tmp_path) as admin:
        csrf = signup(admin, "Mod")
        rude_name = f"Rude{uuid.uuid4().hex[:4]}"
        player = fresh_client(admin)
        player_csrf = signup(player, rude_name)
        res = player.post("/api/tables", json={"game": GAME, "players": 2, "seats": open_seats(2), "sit": 0},
                          headers=player_csrf)
        assert res.status_code == 201, res.text
        table_id = res.json()["id"]

        renamed = admin.post(f"/api/admin/accounts/{rude_name}/rename", json={"name": "Polite"}, headers=csrf)
        assert renamed.status_code == 200 and renamed.json()["name"] == "Polite"
        repo = admin.app.state.lobby.repo
        with repo.engine.connect() as conn:
            names = [r.name for r in conn.execute(select(seats_t.c.name).where(seats_t.c.table_id == table_id,
                                                                               seats_t.c.account_id.is_not(None)))]
        assert names == ["Polite"]
        taken = admin.post("/api/admin/accounts/Polite/rename", json={"name": "mod"}, headers=csrf)
        assert taken.status_code == 409

        assert player.get("/api/me").json()["account"]["name"] == "Polite"
        done = admin.post("/api/admin/accounts/Polite/suspend", json={"suspended": True}, headers=csrf)
        assert done.status_code == 200 and done.json()["suspended"] is True
        assert player.get("/api/me").json()["account"] is None  # the session stops counting at once
        again = fresh_client(admin)
        refused = again.post("/api/login", json={"name": "Polite", "password": PASSWORD})
        assert refused.status_code == 403 and refused.json()["code"] == "suspended"
        self_suspend = admin.post("/api/admin/accounts/Mod/suspend", json={"suspended": True}, headers=csrf)
        assert self_suspend.status_code == 400

        admin.post("/api/admin/accounts/Polite/suspend", json={"suspended": False}, headers=csrf)
        assert again.post("/api/login", json={"name": "Polite", "password": PASSWORD}).status_code == 200
        actions = [a for a, _ in log_actions(repo)]
        assert actions == ["rename", "suspend", "restore"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "LANGUAGE": "en"})


def test_admin_grant_from_the_command_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'club.sqlite3'}"
    repo = Repository(url)
    repo.create_account("First", "hash")
    repo.create_account("Second", "hash")
    repo.close()
    listed = cli("admin", "list", "--database", url)
    assert listed.returncode == 0 and listed.stdout.split() == ["First"]
    granted = cli("admin", "grant", "second", "--database", url)
    assert granted.returncode == 0 and "Second is now a moderator" in granted.stdout
    assert cli("admin", "list", "--database", url).stdout.split() == ["First", "Second"]
    revoked = cli("admin", "revoke", "First", "--database", url)
    assert revoked.returncode == 0 and cli("admin", "list", "--database", url).stdout.split() == ["Second"]
    unknown = cli("admin", "grant", "Nobody", "--database", url)
    assert unknown.returncode == 1 and "no account named Nobody" in unknown.stderr
    assert cli("admin", "grant", "--database", url).returncode == 2
    repo = Repository(url)
    assert [a for a, _ in log_actions(repo)] == ["grant", "revoke"]
    repo.close()


POSTGRES = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
REDIS = os.environ.get("LUDOTECA_TEST_REDIS_URL")


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.skipif(not (POSTGRES and REDIS), reason="needs LUDOTECA_TEST_POSTGRES_URL and LUDOTECA_TEST_REDIS_URL")
def test_moderation_works_across_two_workers() -> None:
    """A moderator on one worker closes a table and removes a chat line that a spectator of the other
    worker is watching: the spectator is told, and the other worker's memory forgets the text."""
    from tests.test_web_cluster import database, wait_for, workers

    with database() as url, workers(url, str(REDIS)) as (one, two):
        csrf = signup(one, "Mod")
        made = create(two, GAME, open_seats(2))
        bob = two.post(f"/api/tables/{made['id']}/join", json={"seat": 1, "name": "Bob"}).json()["token"]
        with connect(two, made["id"], made["token"]) as ann, connect(two, made["id"], bob), \
                connect(two, made["id"]) as spectator:
            ann.send({"type": "chat", "text": "spam spam"})
            spectator.until(lambda m: "spam spam" in str(m))
            chat = one.get("/api/admin").json()["chat"]
            line = next(c for c in chat if c["text"] == "spam spam")
            assert one.post(f"/api/admin/chat/{line['id']}/remove", json={}, headers=csrf).status_code == 200
            spectator.until(lambda m: "chat_removed" in str(m))
            table = two.app.state.lobby.tables[made["id"]]
            wait_for(lambda: all(n.data.get("text") != "spam spam" for n in table.notes), 10, "memory erased")

            assert one.post(f"/api/admin/tables/{made['id']}/close", json={}, headers=csrf).status_code == 200
            over = spectator.until(lambda m: m["type"] in ("snapshot", "update") and m["status"] == "over")
            assert over["result"]["reason"] == "closed"
        overview = one.get("/api/admin").json()
        assert [e["action"] for e in overview["log"]] == ["close_table", "remove_chat"]
