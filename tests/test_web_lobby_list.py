"""The lobby lists live tables only; ``GET /api/tables?ids=`` finds a browser's own tables in any state."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from sqlalchemy import update

from ludoteca.web.lobby.lobby import LIST_STALLED
from ludoteca.web.repository.store import tables_t
from tests.test_web_api import create, open_seats, server


def listed(client: Any) -> set[str]:
    res = client.get("/api/tables")
    assert res.status_code == 200, res.text
    return {t["id"] for t in res.json()["tables"]}


def touch(client: Any, table_id: str, **values: Any) -> None:
    """Change a stored table row (its status, or when it last changed)."""
    repo = client.app.state.lobby.repo
    with repo.engine.begin() as conn:
        conn.execute(update(tables_t).where(tables_t.c.id == table_id).values(**values))


def test_public_list_shows_only_live_tables(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        waiting = create(client, "tohm", open_seats(2))["id"]
        playing = create(client, "tohm", open_seats(2))["id"]
        stalled = create(client, "tohm", open_seats(2))["id"]
        over = create(client, "tohm", open_seats(2))["id"]
        expired = create(client, "tohm", open_seats(2))["id"]
        broken = create(client, "tohm", open_seats(2))["id"]
        touch(client, playing, status="playing", updated_at=time.time() - 60)
        touch(client, stalled, status="playing", updated_at=time.time() - LIST_STALLED - 60)
        touch(client, over, status="over")
        touch(client, expired, status="expired")
        touch(client, broken, status="broken")
        ids = listed(client)
        assert {waiting, playing} <= ids
        assert not ids & {stalled, over, expired, broken}
        # still reachable by its link
        assert client.get(f"/api/tables/{stalled}").status_code == 200


def test_ids_query_returns_your_tables_in_any_state(tmp_path: Path) -> None:
    with server(tmp_path) as client:
        mine = create(client, "tohm", open_seats(2))["id"]
        finished = create(client, "tohm", open_seats(2), unlisted=True)["id"]
        other = create(client, "tohm", open_seats(2))["id"]
        touch(client, finished, status="over")
        res = client.get(f"/api/tables?ids={mine},{finished},nosuchtable")
        assert res.status_code == 200, res.text
        got = {t["id"]: t for t in res.json()["tables"]}
        assert set(got) == {mine, finished}
        assert other not in got
        assert got[mine]["status"] == "waiting"
        assert client.get("/api/tables?ids=").json() == {"tables": []}


@pytest.mark.parametrize("ids", ["a b", "../x", "x" * 40, ",".join(f"t{i}" for i in range(51))])
def test_bad_ids_are_refused(tmp_path: Path, ids: str) -> None:
    with server(tmp_path) as client:
        res = client.get("/api/tables", params={"ids": ids})
        assert res.status_code == 400, res.text
