"""The server's commit of a move on SQLite: stored before the caller goes on, all or nothing."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from ludoteca.web.repository.store import AppendRequest, Conflict, GroupCommit, Repository, SeatData, TableData

PLAYING, OPEN = "playing", "open"


def table_data() -> TableData:
    return TableData(id=uuid.uuid4().hex[:16], game="tohm", options={"players": 2}, seed=5, status=PLAYING,
                     created_at=1.0, updated_at=1.0, seats=[SeatData(OPEN), SeatData(OPEN)])


@pytest.fixture
def repo(tmp_path: Path) -> Any:
    repository = Repository(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    yield repository
    repository.close()


def stored(repo: Repository, table_id: str) -> tuple[list[dict[str, Any]], list[int | None]]:
    data = repo.load_table(table_id)
    assert data is not None
    return data.actions, data.action_seats


async def inline(fn: Any, *args: Any) -> Any:
    return fn(*args)


def test_an_inline_commit_is_stored_before_the_caller_goes_on(repo: Repository) -> None:
    table = table_data()
    repo.create_table(table)
    commit = GroupCommit(repo, inline, inline=True)
    step = commit.append(AppendRequest(table.id, 0, [(0, {"place": [1, 2], "elapsed": 1.5}), (None, {"roll": 3})]))
    with pytest.raises(StopIteration):  # done within the caller's step: no wait for another loop turn
        step.send(None)
    assert stored(repo, table.id) == ([{"place": [1, 2], "elapsed": 1.5}, {"roll": 3}], [0, None])
    assert commit.transactions == 1


def test_a_move_at_a_position_already_stored_is_refused_and_nothing_of_its_batch_is_kept(repo: Repository) -> None:
    a, b = table_data(), table_data()
    repo.create_table(a)
    repo.create_table(b)
    repo.append_batch([AppendRequest(a.id, 0, [(0, {"roll": 1})])])
    with pytest.raises(Conflict):  # a second writer's move for the same position (RULES: one move per turn)
        repo.append_batch([AppendRequest(b.id, 0, [(1, {"roll": 2})]), AppendRequest(a.id, 0, [(1, {"roll": 4})])])
    assert stored(repo, a.id) == ([{"roll": 1}], [0])
    assert stored(repo, b.id) == ([], [])  # the same transaction: b's move is not kept either
    repo.append_batch([AppendRequest(b.id, 0, [(1, {"roll": 2})])])  # the writer recovered
    assert stored(repo, b.id) == ([{"roll": 2}], [1])


def test_a_move_for_a_table_that_is_not_stored_is_refused(repo: Repository) -> None:
    table = table_data()
    repo.create_table(table)
    with pytest.raises(Conflict):
        repo.append_batch([AppendRequest("no-such-table", 0, [(0, {"roll": 1})])])
    repo.append_batch([AppendRequest(table.id, 0, [(0, {"roll": 5})])])
    assert stored(repo, table.id) == ([{"roll": 5}], [0])


def test_inline_commits_of_several_tables_each_keep_their_own_moves(repo: Repository) -> None:
    tables = [table_data() for _ in range(3)]
    for t in tables:
        repo.create_table(t)
    repo.append_batch([AppendRequest(tables[1].id, 0, [(0, {"roll": 6})])])

    async def scenario() -> list[Any]:
        commit = GroupCommit(repo, inline, inline=True)
        return list(await asyncio.gather(
            commit.append(AppendRequest(tables[0].id, 0, [(0, {"roll": 1})])),
            commit.append(AppendRequest(tables[1].id, 0, [(1, {"roll": 2})])),  # a position already played
            commit.append(AppendRequest(tables[2].id, 0, [(1, {"roll": 3})])),
            return_exceptions=True))

    first, second, third = asyncio.run(scenario())
    assert first is None and third is None
    assert isinstance(second, Conflict)
    assert stored(repo, tables[1].id) == ([{"roll": 6}], [0])
    assert stored(repo, tables[0].id) == ([{"roll": 1}], [0])
    assert stored(repo, tables[2].id) == ([{"roll": 3}], [1])
