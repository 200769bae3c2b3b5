"""The table's after-commit listeners (web/master/listeners.py, docs/web.md "One move, one way"): a
listener the server registers for every table is told of each committed change, after the viewers,
with what the change did; a failing listener changes nothing for the players."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ludoteca.registry import game_class, games
from ludoteca.web.hub.hub import Connection
from ludoteca.web.lobby.lobby import Lobby
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import OVER, PLAYING
from ludoteca.web.master.tables import Table
from ludoteca.web.repository.store import Repository

pytestmark = pytest.mark.timeout(120)


def _two_player_game() -> str:
    return next(name for name in games() if game_class(name).min_players <= 2 <= game_class(name).max_players)


class Recorder:
    """A listener: each change with the messages the seat-0 connection had received by then."""

    def __init__(self, conn: Connection | None = None, fail: bool = False) -> None:
        self.changes: list[Change] = []
        self.seen: list[int] = []
        self.conn = conn
        self.fail = fail

    def changed(self, table: Table, change: Change) -> None:
        self.changes.append(change)
        self.seen.append(self.conn.queue.qsize() if self.conn is not None else 0)
        if self.fail:
            raise RuntimeError("a broken listener")


def _drain(conn: Connection) -> list[dict[str, Any]]:
    out = []
    while not conn.queue.empty():
        text = conn.queue.get_nowait()
        if text is not None:
            out.append(json.loads(text))
    return out


async def _table(tmp_path: Path, *listeners: Any) -> tuple[Lobby, Table, dict[int, Connection]]:
    lobby = Lobby(Repository(f"sqlite:///{tmp_path / 'l.sqlite3'}"), ai_delay=0, waiting_ttl=0)
    lobby.table_listeners.extend(listeners)
    table, _, token = await lobby.create({"game": _two_player_game(), "players": 2, "sit": 0,
                                          "seats": [{"kind": "open"}] * 2})
    tokens = {0: token, 1: await table.join(1, "Bob")}
    conns = {}
    for seat, tok in tokens.items():
        conn = Connection(10_000, 10_000)
        table.hub.attach(conn)
        table.authenticate(conn, tok)
        conns[seat] = conn
    return lobby, table, conns


def test_a_listener_of_every_table_is_told_of_each_move_after_the_viewers(tmp_path: Path) -> None:
    recorder = Recorder()

    async def scenario() -> None:
        lobby, table, conns = await _table(tmp_path, recorder)
        try:
            assert recorder.changes and recorder.changes[-1].started  # the last seat taken began the game
            assert recorder.changes[-1].status == PLAYING and recorder.changes[-1].local
            recorder.conn = conns[0]
            recorder.changes.clear()
            recorder.seen.clear()
            seat = table.to_move()
            assert seat is not None
            _drain(conns[0])
            data = table.state.action_to_json(table.state.legal_actions()[0])
            seq = table.master.seq
            await table.submit(conns[seat], {"type": "action", "action": data, "seq": seq})
            change = recorder.changes[0]
            assert change.table == table.id and change.local and change.log_from == seq
            assert change.actions[0][0] == seat
            assert {k: v for k, v in change.actions[0][1].items() if k != "elapsed"} == data
            assert change.seq == table.master.seq and change.status == table.status
            assert recorder.seen[0] >= 1, "the viewers were sent the move before the listener was told"
        finally:
            await lobby.stop()

    asyncio.run(scenario())


def test_a_resignation_reaches_the_listeners_as_the_end_with_its_notice(tmp_path: Path) -> None:
    """docs/web.md, "Table life": at a two-player table a resignation ends the game."""
    recorder = Recorder()

    async def scenario() -> None:
        lobby, table, conns = await _table(tmp_path, recorder)
        try:
            await table.leaving.resign(conns[0])
            change = recorder.changes[-1]
            assert change.ended and change.status == OVER and change.previous == PLAYING
            assert [n.kind for n in change.notes] == ["resigned"]
            assert table.result is not None and table.result["winners"] == [1]
        finally:
            await lobby.stop()

    asyncio.run(scenario())


def test_a_failing_listener_changes_nothing_for_the_players(tmp_path: Path) -> None:
    broken, after = Recorder(fail=True), Recorder()

    async def scenario() -> None:
        lobby, table, conns = await _table(tmp_path, broken, after)
        try:
            seat = table.to_move()
            assert seat is not None
            seq = table.master.seq
            _drain(conns[1 - seat])
            data = table.state.action_to_json(table.state.legal_actions()[0])
            await table.submit(conns[seat], {"type": "action", "action": data, "seq": seq})
            assert table.master.seq > seq  # played and stored
            stored = lobby.repo.load_table(table.id)
            assert stored is not None and stored.actions[seq] == table.master.log[seq].action
            updates = [m for m in _drain(conns[1 - seat]) if m["type"] == "update"]
            assert updates and updates[-1]["seq"] == table.master.seq  # the other player saw it
            assert len(after.changes) == len(broken.changes)  # the next listener was told all the same
        finally:
            await lobby.stop()

    asyncio.run(scenario())
