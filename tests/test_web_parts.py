"""Each part of the web core alone: the master (with an in-memory store and a fake hub), the hub,
the repository (SQLite and PostgreSQL), the lobby's routes and the error catalogue."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from ludoteca.core.events import Event
from ludoteca.registry import GAMES, load_game
from ludoteca.web.errors import STATUS, Code, WebError, error_body
from ludoteca.web.hub.hub import Connection, Hub, entry_view
from ludoteca.web.launch import fresh_database
from ludoteca.web.lobby import lobby
from ludoteca.web.master.listeners import Change
from ludoteca.web.master.master import HUMAN, OPEN, OVER, PLAYING, WAITING, Entry, Master, Seat
from ludoteca.web.repository.store import AppendRequest, Conflict, GroupCommit, Repository, SeatData, TableData
from tests.conftest import game_dir

pytestmark = pytest.mark.timeout(120)


# --- fakes ----------------------------------------------------------------------------------------

class MemoryStore:
    """An in-memory repository: every request it accepted, or a failure to raise."""

    def __init__(self) -> None:
        self.requests: list[AppendRequest] = []
        self.fail: Exception | None = None

    async def append(self, request: AppendRequest) -> None:
        if self.fail is not None:
            raise self.fail
        self.requests.append(request)


class FakeHub:
    """The master's publisher: records each committed change (what the viewers would be sent)."""

    def __init__(self) -> None:
        self.published: list[tuple[int, bool]] = []
        self.changes: list[Change] = []

    def committed(self, change: Change) -> None:
        self.changes.append(change)
        self.published.append((change.log_from, change.everything))


def humans(n: int) -> list[Seat]:
    return [Seat(HUMAN, None, f"P{i}", f"{i:064d}") for i in range(n)]


def master_of(game: str = "tohm", status: str = WAITING, **options: Any) -> tuple[Master, MemoryStore, FakeHub]:
    store, hub = MemoryStore(), FakeHub()
    g = load_game(game, players=2, **options)
    return Master("t1", g, 7, humans(2), status, store, hub), store, hub


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- the master -----------------------------------------------------------------------------------

def test_master_start_commits_the_opening_chance_then_publishes() -> None:
    m, store, hub = master_of()
    run(m.start())
    assert m.status == PLAYING and len(store.requests) == 1
    req = store.requests[0]
    assert req.status == PLAYING and req.expect_status == WAITING and req.first_seq == 0
    assert [seat for seat, _ in req.actions] == [None] * len(req.actions)  # chance only
    assert len(m.log) == len(req.actions) and hub.published == [(0, False)]


def test_master_plays_a_move_once_parsed_and_commits_it_before_publishing() -> None:
    m, store, hub = master_of(status=PLAYING)
    run(m.start()) if m.state.is_chance_node() else None
    seat = m.to_move()
    assert seat is not None
    legal = m.state.legal_actions()
    data = m.state.action_to_json(legal[0])
    seq = m.seq
    run(m.submit(seat, data, seq))
    req = store.requests[-1]
    assert req.first_seq == seq and req.actions[0] == (seat, data)
    assert m.log[seq].action == data and m.log[seq].events[0].kind == "move"
    assert m.log[seq].events[0].data["seat"] == seat
    assert hub.published[-1] == (seq, False)


@pytest.mark.parametrize("case", ["stale", "not_your_turn", "illegal", "bad_message"])
def test_master_refuses_bad_moves_and_changes_nothing(case: str) -> None:
    m, store, hub = master_of(status=PLAYING)
    if m.state.is_chance_node():
        run(m.start())
    seat = m.to_move()
    assert seat is not None
    before = (m.seq, m.state.to_json(), len(store.requests), len(hub.published))
    data: Any = m.state.action_to_json(m.state.legal_actions()[0])
    seq: Any = m.seq
    if case == "stale":
        seq = m.seq - 1
    elif case == "not_your_turn":
        seat = 1 - seat
    elif case == "illegal":
        data = {"place": [99, 99]}
    else:
        data = ["not", "an", "object"]
    with pytest.raises(WebError) as err:
        run(m.submit(seat, data, seq))
    assert err.value.code == Code(case)
    assert (m.seq, m.state.to_json(), len(store.requests), len(hub.published)) == before


def test_a_storage_failure_leaves_the_master_unchanged() -> None:
    m, store, hub = master_of(status=PLAYING)
    if m.state.is_chance_node():
        run(m.start())
    seat = m.to_move()
    assert seat is not None
    before = (m.seq, m.state.to_json(), len(hub.published))
    store.fail = OSError("disk full")
    with pytest.raises(WebError) as err:
        run(m.submit(seat, m.state.action_to_json(m.state.legal_actions()[0]), m.seq))
    assert err.value.code is Code.STORAGE and err.value.status == 503
    assert (m.seq, m.state.to_json(), len(hub.published)) == before
    store.fail = Conflict("seat taken")
    with pytest.raises(WebError) as err:
        run(m.submit(seat, m.state.action_to_json(m.state.legal_actions()[0]), m.seq))
    assert err.value.code is Code.CONFLICT and err.value.status == 409


def test_the_master_rebuilds_from_stored_actions_and_marks_a_bad_record_broken() -> None:
    m, store, _ = master_of(status=PLAYING)
    run(m.start())
    while m.status == PLAYING and m.seq < 12:
        seat = m.to_move()
        assert seat is not None
        run(m.submit(seat, m.state.action_to_json(m.state.legal_actions()[0]), m.seq))
    actions = [a for req in store.requests for _, a in req.actions]
    seats = [s for req in store.requests for s, _ in req.actions]
    again = Master("t1", m.game, 7, humans(2), PLAYING, MemoryStore(), FakeHub(), actions=actions, action_seats=seats)
    assert again.state.to_json() == m.state.to_json() and again.seq == m.seq
    assert [e.events[0].kind for e in again.log] == [e.events[0].kind for e in m.log]
    broken = Master("t1", m.game, 7, humans(2), PLAYING, MemoryStore(), FakeHub(),
                    actions=[*actions, {"place": [99, 99]}], action_seats=[*seats, 0])
    assert broken.status == "broken"


def test_the_master_draws_chance_per_table_and_step() -> None:
    a, _, _ = master_of()
    b, _, _ = master_of()
    run(a.start())
    run(b.start())
    assert [e.action for e in a.log] == [e.action for e in b.log]  # same seed, same steps


def test_an_ai_move_for_an_old_position_is_not_played() -> None:
    m, store, _ = master_of(status=PLAYING)
    if m.state.is_chance_node():
        run(m.start())
    seat = m.to_move()
    assert seat is not None
    n = len(store.requests)
    assert run(m.play(seat, m.state.legal_actions()[0], m.seq + 1)) is None
    assert len(store.requests) == n
    assert run(m.play(seat, m.state.legal_actions()[0], m.seq)) is not None


def test_a_game_played_to_the_end_stores_its_result() -> None:
    m, store, hub = master_of(status=PLAYING)
    run(m.start())
    for _ in range(5000):
        if m.status != PLAYING:
            break
        seat = m.to_move()
        assert seat is not None
        run(m.submit(seat, m.state.action_to_json(m.state.legal_actions()[-1]), m.seq))
    assert m.status == OVER and m.result is not None
    last = store.requests[-1]
    assert last.status == OVER and last.result == m.result
    assert m.log[-1].events[-1].kind == "end"
    assert hub.published[-1][1] is False  # TOHM has no secrets: nothing to send again


def test_a_client_cannot_play_the_timeout_itself() -> None:
    m, _, _ = master_of("exagon", status=PLAYING, clock=30)
    with pytest.raises(WebError) as err:
        m.parse({"timeout": True})
    assert err.value.code is Code.ILLEGAL


# --- the hub --------------------------------------------------------------------------------------

def test_entry_view_hides_a_secret_action_and_shows_it_at_the_end() -> None:
    secret = Event("move", {"seat": 0, "action": {"card": 3}}, frozenset({0}), {"seat": 0})
    public = Event("battle", {"attacker": 0, "defender": 1})
    entry = Entry(0, {"card": 3}, (secret, public))
    own = entry_view(5, entry, 0, everything=False)
    other = entry_view(5, entry, 1, everything=False)
    spectator = entry_view(5, entry, None, everything=False)
    at_end = entry_view(5, entry, None, everything=True)
    assert own == {"i": 5, "seat": 0,
                   "events": [{"kind": "move", "seat": 0, "action": {"card": 3}},
                              {"kind": "battle", "attacker": 0, "defender": 1}]}
    for view in (other, spectator):
        assert view["hidden"] is True
        assert view["events"] == [{"kind": "move", "seat": 0, "secret": True},
                                  {"kind": "battle", "attacker": 0, "defender": 1}]
        assert "card" not in str(view)
    assert at_end["events"][0]["action"] == {"card": 3} and "hidden" not in at_end
    move = Event("move", {"seat": 1, "action": {"place": 2}})
    timed = entry_view(6, Entry(1, {"place": 2, "elapsed": 1.25}, (move,)), None, everything=False)
    assert timed["elapsed"] == 1.25  # the seconds spent, kept with the stored action


class FakeSource:
    def __init__(self) -> None:
        g = load_game("tri", players=2, size=3)
        self.state = g.new_initial_state()
        self.entries: list[Entry] = [Entry(0, {"card": 3}, (
            Event("move", {"seat": 0, "action": {"card": 3}}, frozenset({0}), {"seat": 0}),))]
        self.over = False

    def is_over(self) -> bool:
        return self.over

    def hidden_information(self) -> bool:
        return True

    def header(self) -> dict[str, Any]:
        return {"status": "playing"}

    def legal_for(self, viewer: int | None) -> list[dict[str, Any]] | None:
        return [{"card": 3}] if viewer == 0 else None

    def snapshot_extra(self) -> dict[str, Any]:
        return {"game": "tri"}

    def public_seats(self) -> list[dict[str, Any]]:
        return [{"seat": 0}, {"seat": 1}]


def drain(conn: Connection) -> list[str]:
    out = []
    while not conn.queue.empty():
        text = conn.queue.get_nowait()
        if text is not None:
            out.append(text)
    return out


def test_the_hub_sends_each_viewer_its_own_message() -> None:
    async def scenario() -> None:
        src = FakeSource()
        hub = Hub(src)  # type: ignore[arg-type]
        seated, spectator = Connection(), Connection()
        seated.seat, seated.token = 0, "x"
        hub.attach(seated)
        hub.attach(spectator)
        first = [m for m in drain(seated) if '"snapshot"' in m]
        assert first and '"card":3' in first[0]
        assert all('"card"' not in m for m in drain(spectator))
        hub.publish(0)
        assert '"card":3' in drain(seated)[0]
        assert '"card"' not in drain(spectator)[0]
        src.over = True
        hub.publish(1, everything=True)  # the end: the whole log again, every event public
        assert '"card":3' in drain(spectator)[0]
        hub.publish_seats()  # the seats did not change since the seated player's arrival: not sent again
        assert drain(spectator) == []
    run(scenario())


def test_a_connection_that_does_not_read_is_dropped() -> None:
    async def scenario() -> None:
        conn = Connection()
        for _ in range(300):
            conn.push("x")
        assert conn.closed
    run(scenario())


# --- the repository (SQLite, and PostgreSQL when LUDOTECA_TEST_POSTGRES_URL is set) ------------------

DATABASES = ["sqlite", pytest.param("postgresql", marks=pytest.mark.skipif(
    not os.environ.get("LUDOTECA_TEST_POSTGRES_URL"), reason="LUDOTECA_TEST_POSTGRES_URL is not set"))]


def repository(kind: str, tmp_path: Path) -> Repository:
    if kind == "sqlite":
        return Repository(f"sqlite:///{tmp_path / 'r.sqlite3'}")
    return Repository(os.environ["LUDOTECA_TEST_POSTGRES_URL"])


def table_data(seats: list[SeatData] | None = None) -> TableData:
    return TableData(id=uuid.uuid4().hex[:16], game="tohm", options={"players": 2}, seed=5, status=WAITING,
                     created_at=1.0, updated_at=1.0, seats=seats or [SeatData(OPEN), SeatData(OPEN)])


@pytest.mark.parametrize("kind", DATABASES)
def test_repository_round_trip_and_conditional_writes(kind: str, tmp_path: Path) -> None:
    repo = repository(kind, tmp_path)
    try:
        data = table_data()
        repo.create_table(data)
        seat = SeatData(HUMAN, None, "Ann", "a" * 64)
        repo.append_batch([AppendRequest(data.id, 0, [(None, {"roll": 3}), (0, {"place": [0, 0], "elapsed": 1.5})],
                                         PLAYING, seats=[(0, seat)], expect_status=WAITING)])
        stored = repo.load_table(data.id)
        assert stored is not None and stored.status == PLAYING
        assert stored.actions == [{"roll": 3}, {"place": [0, 0], "elapsed": 1.5}]
        assert stored.action_seats == [None, 0] and stored.seats[0] == seat
        # the seat is no longer open: a second taker stores nothing, not even its actions
        with pytest.raises(Conflict):
            repo.append_batch([AppendRequest(data.id, 2, [(1, {"place": [1, 1]})], seats=[(0, seat)])])
        with pytest.raises(Conflict):  # a status that changed: nothing stored
            repo.append_batch([AppendRequest(data.id, 2, [(1, {"place": [1, 1]})], expect_status=WAITING)])
        assert len(repo.load_table(data.id).actions) == 2  # type: ignore[union-attr]
        assert repo.seats_of(data.id)[0] == seat and repo.seats_of("nope") == []
        assert data.id in repo.table_ids((PLAYING,))
        assert repo.load_table("nope") is None
    finally:
        repo.close()


@pytest.mark.parametrize("kind", DATABASES)
def test_repository_lists_expires_and_finds_full_waiting_tables(kind: str, tmp_path: Path) -> None:
    if kind == "sqlite":
        check_lists_expires_and_full_waiting(Repository(f"sqlite:///{tmp_path / 'r.sqlite3'}"))
        return
    # a database of its own: listing is newest first, and these tables are dated 1970
    with fresh_database(os.environ["LUDOTECA_TEST_POSTGRES_URL"], "ludo_parts") as url:
        check_lists_expires_and_full_waiting(Repository(url))


def check_lists_expires_and_full_waiting(repo: Repository) -> None:
    try:
        old, full, hidden = table_data(), table_data([SeatData(HUMAN, None, "A"), SeatData(HUMAN, None, "B")]), \
            table_data()
        hidden.unlisted = True
        for d in (old, full, hidden):
            repo.create_table(d)
        assert full.id in repo.full_waiting_ids() and old.id not in repo.full_waiting_ids()
        listed = {row["id"] for row in repo.list_tables(500)}
        assert old.id in listed and hidden.id not in listed
        expired = repo.expire_waiting(before=2.0)
        assert {old.id, full.id, hidden.id} <= set(expired)
        assert repo.load_table(old.id).status == "expired"  # type: ignore[union-attr]
        repo.set_rematch(old.id, full.id)
        assert repo.load_table(old.id).rematch_id == full.id  # type: ignore[union-attr]
    finally:
        repo.close()


@pytest.mark.parametrize("kind", DATABASES)
def test_group_commit_batches_and_retries_each_request_alone(kind: str, tmp_path: Path) -> None:
    repo = repository(kind, tmp_path)
    try:
        a, b = table_data(), table_data()
        repo.create_table(a)
        repo.create_table(b)

        async def inline(fn: Any, *args: Any) -> Any:
            return fn(*args)

        async def scenario() -> list[Any]:
            commit = GroupCommit(repo, inline)
            good = commit.append(AppendRequest(a.id, 0, [(None, {"roll": 1})]))
            bad = commit.append(AppendRequest(b.id, 0, [(None, {"roll": 2})], expect_status=PLAYING))
            out = await asyncio.gather(good, bad, return_exceptions=True)
            assert commit.transactions == 3  # the batch failed; each request was retried alone
            return out

        good, bad = asyncio.run(scenario())
        assert good is None and isinstance(bad, Conflict)
        assert repo.load_table(a.id).actions == [{"roll": 1}]  # type: ignore[union-attr]
        assert repo.load_table(b.id).actions == []  # type: ignore[union-attr]
    finally:
        repo.close()


# --- the lobby and the error catalogue --------------------------------------------------------------

def test_the_lobby_routes_are_an_api_router() -> None:
    paths = {r.path for r in lobby.router.routes}  # type: ignore[attr-defined]
    assert {"/api/games", "/api/tables", "/api/tables/{table_id}", "/api/tables/{table_id}/join",
            "/api/tables/{table_id}/rematch", "/api/tables/{table_id}/record",
            "/api/tables/{table_id}/replay"} <= paths


def test_the_game_catalogue_lists_every_game_without_server_only_options() -> None:
    catalog = {g["name"]: g for g in lobby.game_catalog()}
    assert list(catalog) == list(GAMES)  # every game the registry finds, in catalogue order
    assert all(o["name"] != "tiles" or o["kind"] == "file" for g in catalog.values() for o in g["options"])


def test_errors_have_one_shape_and_a_status_per_code() -> None:
    err = WebError(Code.SEAT_TAKEN, "seat 2 is already taken")
    assert err.status == 409
    assert err.to_json() == error_body(Code.SEAT_TAKEN, "seat 2 is already taken") == {
        "type": "error", "code": "seat_taken", "error": "seat_taken", "message": "seat 2 is already taken"}
    assert err.to_json(ref=4)["ref"] == 4
    assert WebError(Code.ILLEGAL, "x").status == 400
    assert all(Code(c.value) is c for c in Code) and set(STATUS) <= set(Code)
    with pytest.raises(ValueError):
        WebError("no_such_code", "x")  # type: ignore[arg-type]


def test_no_web_module_names_a_game() -> None:
    web = Path(__file__).parent.parent / "src" / "ludoteca" / "web"
    names = "|".join(("exactly", "tri", "tohm", "exagon"))
    naming = re.compile(rf"[\"']({names})[\"']|games[./]({names})\b|\b({names})\.py\b|\b(TRI|TOHM|EXAGON)\b")
    for path in web.glob("*.py"):
        found = naming.search(path.read_text())
        assert found is None, f"{path.name} names a game: {found.group(0) if found else ''}"


# --- every game, every player count: no viewer is sent an event it may not see ----------------------

def _every_game_and_count() -> list[tuple[str, int]]:
    from ludoteca.registry import GAMES, game_class

    return [(name, n) for name in GAMES
            for n in range(game_class(name).min_players, game_class(name).max_players + 1)]


def check_entry(seen: dict[str, Any], events: tuple[Event, ...], viewer: int | None, over: bool) -> None:
    """The log entry ``seen`` by ``viewer`` shows each event of the action as ``Event.view`` allows:
    whole when visible to it (or at the end), redacted or absent otherwise."""
    expected = [v for e in events if (v := e.view(viewer, over)) is not None]
    assert seen["events"] == expected, (viewer, seen, expected)
    for e in events:
        if not over and not e.visible_to(viewer):
            whole = {"kind": e.kind, **e.data}
            assert whole not in seen["events"] or e.public == e.data, (viewer, whole)
    assert seen.get("hidden", False) == (not over and bool(events) and not events[0].visible_to(viewer))


@pytest.mark.parametrize(("game", "players"), _every_game_and_count())
def test_no_viewer_receives_an_event_it_may_not_see(game: str, players: int, tmp_path: Path) -> None:
    """Plays up to 150 random actions at a real table (lobby, master, hub, SQLite) with one
    connection per seat and a spectator; before the end no viewer ever receives the whole of an
    event that is secret for it, and every event it receives is one the game emitted."""
    import json as _json
    import random as _random

    from ludoteca.web.lobby.lobby import Lobby

    async def scenario() -> None:
        lobby = Lobby(Repository(f"sqlite:///{tmp_path / 'p.sqlite3'}"), ai_delay=0, waiting_ttl=0)
        try:
            table, _, token = await lobby.create({"game": game, "players": players, "sit": 0,
                                                  "seats": [{"kind": "open"}] * players})
            tokens = {0: token}
            for s in range(1, players):
                tokens[s] = await table.join(s, f"P{s}")
            conns: dict[int | None, Connection] = {}
            for s in [*range(players), None]:
                c = Connection(10_000, 10_000)
                table.hub.attach(c)
                if s is not None:
                    table.authenticate(c, tokens[s])
                conns[s] = c
            rng = _random.Random(f"{game}:{players}")
            for _ in range(150):
                if table.status != PLAYING:
                    break
                seat = table.to_move()
                assert seat is not None
                state = table.state
                action = rng.choice(state.legal_actions())
                await table.master.submit(seat, state.action_to_json(action), table.master.seq)
                over = table.status == OVER
                log = table.master.log
                for viewer, conn in conns.items():
                    for text in drain(conn):
                        message = _json.loads(text)
                        if message.get("type") in ("update", "snapshot"):
                            for seen in message["log"]:
                                check_entry(seen, log[seen["i"]].events, viewer, over)
        finally:
            await lobby.stop()

    asyncio.run(scenario())


# --- the browser's texts of events (node, when installed) ---------------------------------------------

_NODE_SCRIPT = """
import * as common from "./common.js";
import * as client from "./client.js";
import {readFileSync} from "node:fs";
const entries = JSON.parse(readFileSync(0, "utf8"));
const names = ["Ann", "Bob", "Cy", "Di", "Ed", "Flo"];
const out = entries.map((entry) => ({
  line: common.entryText(client, entry, names),
  own: entry.events.map((e) => e.kind in (client.EVENTS || {})),
}));
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("game", ["exactly", "tri", "tohm", "exagon"])
def test_every_event_of_a_game_has_a_readable_text(game: str, tmp_path: Path) -> None:
    """Each game's client.js, with the shared texts of common.js, turns every event of a random
    game into words: names instead of seat numbers, no 'undefined', no raw JSON of a known kind."""
    import json as _json
    import random as _random
    import subprocess

    from ludoteca.core.chance import sample_chance

    static = Path(__file__).parent.parent / "src" / "ludoteca" / "web" / "static" / "js"
    package = game_dir(game)
    (tmp_path / "common.js").write_text((static / "common.js").read_text())
    (tmp_path / "i18n.js").write_text((static / "i18n.js").read_text())  # English outside a page
    (tmp_path / "client.js").write_text((package / "client.js").read_text().replace("/static/js/common.js",
                                        "./common.js").replace("/static/js/i18n.js", "./i18n.js"))
    (tmp_path / "run.mjs").write_text(_NODE_SCRIPT)
    state = load_game(game, players=3 if game != "tohm" else 2).new_initial_state()
    rng = _random.Random(3)
    entries = []
    for _ in range(400):
        if state.is_terminal():
            break
        seat = state.current_player()
        action = sample_chance(state, rng) if state.is_chance_node() else rng.choice(state.legal_actions())
        events = state.apply_action(action)
        entries.append({"seat": seat if seat >= 0 else None, "events": [e.view(None, True) for e in events]})
    done = subprocess.run(["node", str(tmp_path / "run.mjs")], input=_json.dumps(entries), capture_output=True,
                          text=True, timeout=60, check=True)
    lines = _json.loads(done.stdout)
    assert len(lines) == len(entries)
    for entry, shown in zip(entries, lines, strict=True):
        text = shown["line"]
        assert text and "undefined" not in text and "[object Object]" not in text, (entry, text)
        assert "player " not in text, (entry, text)  # seats are named
        first = entry["events"][0]["kind"]
        assert not text.startswith(f"{first.replace('_', ' ')} ("), (entry, text)  # the shared kinds have words
