"""The analysis of finished tables on the server: the shared queue, the API, the modes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from ludoteca.web.app import create_app
from ludoteca.web.repository import analyses
from ludoteca.web.repository.records import SeatData, TableData
from ludoteca.web.repository.store import Repository

pytestmark = pytest.mark.timeout(180)




def _table(repo: Repository, table_id: str) -> None:
    now = time.time()
    repo.create_table(TableData(id=table_id, game="tohm", options={"players": 2}, seed=1, status="over",
                                created_at=now, updated_at=now, seats=[SeatData("open"), SeatData("open")]))


@pytest.fixture
def repos(tmp_path: Path) -> Iterator[list[Repository]]:
    """SQLite, and PostgreSQL (a fresh database) when ``LUDOTECA_TEST_POSTGRES_URL`` is set."""
    with contextlib.ExitStack() as stack:
        urls = [f"sqlite:///{tmp_path / 'queue.sqlite3'}"]
        if os.environ.get("LUDOTECA_TEST_POSTGRES_URL"):
            from ludoteca.web.launch import fresh_database

            urls.append(stack.enter_context(fresh_database(os.environ["LUDOTECA_TEST_POSTGRES_URL"], "ludo_queue")))
        made = [Repository(url) for url in urls]
        yield made
        for repo in made:
            repo.close()


def test_a_table_is_queued_once_and_claimed_by_one_worker(repos: list[Repository]) -> None:
    for repo in repos:
        suffix = f"{time.time_ns() % 10**9}"
        first, second = "qa" + suffix, "qb" + suffix
        _table(repo, first)
        _table(repo, second)
        assert analyses.request(repo, first, now=100.0) is True
        assert analyses.request(repo, first, now=101.0) is False  # asked again: still one row
        analyses.request(repo, second, now=102.0)
        # two workers share the queue: the oldest row goes to the first, the next to the second
        assert analyses.claim(repo, "w1", lease=60, now=200.0) == first
        assert analyses.claim(repo, "w2", lease=60, now=200.0) == second
        assert analyses.claim(repo, "w2", lease=60, now=200.0) is None  # nothing left to claim
        assert analyses.finish(repo, first, "w1", {"steps": []}, now=210.0)
        row = analyses.get(repo, first)
        assert row is not None and row.status == analyses.READY and row.result == {"steps": []}
        assert analyses.request(repo, first, now=220.0) is False  # ready: never analysed twice


def test_a_killed_workers_claim_expires_and_its_late_result_is_dropped(repos: list[Repository]) -> None:
    for repo in repos:
        table_id = f"qk{time.time_ns() % 10**9}"
        _table(repo, table_id)
        analyses.request(repo, table_id, now=100.0)
        assert analyses.claim(repo, "dead", lease=60, now=100.0) == table_id
        assert analyses.claim(repo, "live", lease=60, now=150.0) is None  # the claim still holds
        assert analyses.claim(repo, "live", lease=60, now=161.0) == table_id  # expired: taken over
        assert not analyses.renew(repo, table_id, "dead", lease=60, now=162.0)
        assert not analyses.finish(repo, table_id, "dead", {"late": True}, now=163.0)
        assert analyses.finish(repo, table_id, "live", None, now=170.0)  # the analysis failed
        row = analyses.get(repo, table_id)
        assert row is not None and row.status == analyses.FAILED
        assert analyses.request(repo, table_id, now=180.0) is False
        assert analyses.request(repo, table_id, now=180.0, again=True) is True  # a failed one, asked again


# --- the server --------------------------------------------------------------------------------------

def _server(tmp_path: Path, **kwargs: Any) -> TestClient:
    return TestClient(create_app(data_dir=tmp_path, ai_delay=0, rate=10_000, burst=10_000, **kwargs))


def _finished_game(client: TestClient) -> str:
    """A two-player TOHM table (the solved variant: exact analysis, fast) played to the end by two AI seats."""
    res = client.post("/api/tables", json={"game": "tohm", "players": 2,
                                           "seats": [{"kind": "ai", "level": "random"}] * 2})
    assert res.status_code == 201, res.text
    table_id: str = res.json()["id"]
    deadline = time.monotonic() + 60
    while client.get(f"/api/tables/{table_id}").json()["status"] != "over":
        assert time.monotonic() < deadline, "the AI game did not end"
        time.sleep(0.05)
    return table_id


def _until_ready(client: TestClient, table_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while True:
        body: dict[str, Any] = client.get(f"/api/tables/{table_id}/analysis").json()
        if body["status"] in ("ready", "failed"):
            return body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def test_a_finished_table_is_analysed_on_request_and_shown_when_ready(tmp_path: Path) -> None:
    with _server(tmp_path, analysis="request") as client:
        res = client.post("/api/tables", json={"game": "tohm", "players": 2, "seats": [{"kind": "open"}] * 2})
        waiting = res.json()["id"]
        refused = client.post(f"/api/tables/{waiting}/analysis", json={})
        assert refused.status_code == 409 and refused.json()["code"] == "not_over"
        table_id = _finished_game(client)
        assert client.get(f"/api/tables/{table_id}/analysis").json() == {"mode": "request", "status": "none"}
        asked = client.post(f"/api/tables/{table_id}/analysis", json={}).json()
        assert asked["status"] in ("queued", "running", "ready")
        client.post(f"/api/tables/{table_id}/analysis", json={})  # asked twice: still one analysis
        body = _until_ready(client, table_id)
        assert body["status"] == "ready"
        analysis = body["analysis"]
        record = client.get(f"/api/tables/{table_id}/record").json()
        assert len(analysis["steps"]) == len(record["actions"])
        assert analysis["evaluator"] == "exact"  # two players on the 3x3 board: the solved game
        assert [row["seat"] for row in analysis["summary"]] == [0, 1]
        assert 1 <= len(analysis["decisive"]) <= 3
        labelled = [s for s in analysis["steps"] if s.get("label")]
        assert labelled, "random players make mistakes"
        assert all("best_position" in s and s["loss"] >= 0.05 for s in labelled)
        assert client.app.state.analysis.done == 1  # type: ignore[attr-defined]


def test_mode_all_analyses_every_finished_game_and_off_none(tmp_path: Path) -> None:
    with _server(tmp_path / "all", analysis="all") as client:
        table_id = _finished_game(client)
        assert _until_ready(client, table_id)["status"] == "ready"
    with _server(tmp_path / "off", analysis="off") as client:
        table_id = _finished_game(client)
        assert client.get(f"/api/tables/{table_id}/analysis").json() == {"mode": "off", "status": "none"}
        refused = client.post(f"/api/tables/{table_id}/analysis", json={})
        assert refused.status_code == 404 and refused.json()["message"]


@pytest.mark.skipif(not os.environ.get("LUDOTECA_TEST_POSTGRES_URL"), reason="needs LUDOTECA_TEST_POSTGRES_URL")
def test_two_workers_on_postgresql_share_the_queue_and_analyse_each_game_once(tmp_path: Path) -> None:
    from ludoteca.web.launch import fresh_database

    with fresh_database(os.environ["LUDOTECA_TEST_POSTGRES_URL"], "ludo_analysis") as url, \
            TestClient(create_app(database=url, ai_delay=0, analysis="request")) as one, \
            TestClient(create_app(database=url, ai_delay=0, analysis="request")) as two:
        tables = [_finished_game(one) for _ in range(3)]
        for k, table_id in enumerate(tables):  # asked on either worker, some twice
            (one if k % 2 else two).post(f"/api/tables/{table_id}/analysis", json={})
            one.post(f"/api/tables/{table_id}/analysis", json={})
        assert all(_until_ready(two, table_id)["status"] == "ready" for table_id in tables)
        done = [c.app.state.analysis.done for c in (one, two)]  # type: ignore[attr-defined]
        assert sum(done) == len(tables)  # each game analysed once, by whichever worker claimed it


def test_a_stopping_worker_gives_its_claims_back(repos: list[Repository]) -> None:
    for repo in repos:
        table_id = f"qr{time.time_ns() % 10**9}"
        _table(repo, table_id)
        analyses.request(repo, table_id, now=100.0)
        assert analyses.claim(repo, "stopping", lease=300, now=100.0) == table_id
        assert analyses.release(repo, "stopping") == 1
        assert analyses.claim(repo, "next", lease=300, now=101.0) == table_id  # at once, not in 300 s


# --- below live play: the gate pauses the analysis while live play needs the CPU ------------------------

class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Timers:
    """The gate's timer, fired by hand: ``(delay, fn)`` pairs."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Any]] = []

    def __call__(self, delay: float, fn: Any) -> Any:
        self.armed.append((delay, fn))
        return self

    def cancel(self) -> None:
        self.armed.clear()

    def fire(self) -> None:
        armed, self.armed = self.armed, []
        for _delay, fn in armed:
            fn()


class _Pool:
    def __init__(self) -> None:
        self.running = True
        self.calls: list[str] = []

    def pause(self) -> None:
        self.running = False
        self.calls.append("pause")

    def resume(self) -> None:
        self.running = True
        self.calls.append("resume")


def _gate(quiet: float = 1.0) -> tuple[Any, _Clock, _Timers, _Pool]:
    from ludoteca.web.analysis.gate import Gate

    clock, timers, pool = _Clock(), _Timers(), _Pool()
    gate = Gate(quiet, clock=clock, schedule=timers)
    gate.attach(pool)
    return gate, clock, timers, pool


def test_an_ai_move_pauses_the_analysis_until_live_play_is_quiet() -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ludoteca.web.master.ai import AIRunner

    async def scenario() -> None:
        gate, clock, timers, pool = _gate(quiet=1.0)
        release = threading.Event()
        with ThreadPoolExecutor(1) as threads:
            runner = AIRunner(workers=1, executor=threads)
            runner.watchers.append(gate.searches)
            move = asyncio.ensure_future(runner.run("t1", release.wait, 5.0))
            await asyncio.sleep(0)
            assert not pool.running  # paused before the search could start
            clock.now += 60.0
            timers.fire()
            assert not pool.running  # however long the AI thinks
            release.set()
            assert await move is True
            await asyncio.sleep(0)
            assert not pool.running  # its move is being committed and broadcast: still paused
            clock.now += 0.5
            timers.fire()
            assert not pool.running and timers.armed  # 0.5 s of quiet: not yet
            clock.now += 0.5
            timers.fire()
            assert pool.running and pool.calls == ["pause", "resume"]  # paused once, resumed once
            runner.close()

    asyncio.run(scenario())


def test_a_tables_actions_keep_the_analysis_paused_until_a_quiet_second() -> None:
    from ludoteca.web.analysis.service import AnalysisService

    async def scenario(repo: Repository) -> None:
        gate, clock, timers, pool = _gate(quiet=1.0)
        service = AnalysisService(repo, "w", gate=gate)
        change = type("Change", (), {"ended": False, "local": True})()
        for _ in range(5):  # an action every 0.6 s: never a quiet second
            service.changed(None, change)
            clock.now += 0.6
            timers.fire()
            assert not pool.running
        clock.now += 0.4
        timers.fire()
        assert pool.running and pool.calls == ["pause", "resume"]
        await gate.wait_open()

    repo = Repository("sqlite://")
    asyncio.run(scenario(repo))
    repo.close()


def test_a_paused_analysis_keeps_its_claim_and_finishes_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ludoteca.web.analysis import service as service_module

    repo = Repository(f"sqlite:///{tmp_path / 'claim.sqlite3'}")
    _table(repo, "paused")
    started, release = threading.Event(), threading.Event()

    def slow_analysis(data: dict[str, Any], iterations: int | None = None) -> dict[str, Any]:
        started.set()
        release.wait(30)
        return {"steps": [], "data": data}

    monkeypatch.setattr(service_module, "analyse_record", slow_analysis)
    lease = 0.3

    async def scenario() -> None:
        gate, _clock, _timers, pool = _gate(quiet=1.0)
        renewed = asyncio.Event()
        renewals: list[float] = []

        async def db(fn: Any, *args: Any) -> Any:
            out = await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args))
            if fn is analyses.renew:
                renewals.append(time.time())
                renewed.set()
            return out

        with ThreadPoolExecutor(1) as threads:
            service = service_module.AnalysisService(repo, "me", records=lambda _id: {"record": 1}, db=db,
                                                     lease=lease, executor=threads, gate=gate)
            service.start()
            await service.request("paused")
            await asyncio.get_running_loop().run_in_executor(None, started.wait, 30)
            claimed_at = time.time()
            gate.action()  # live play: paused (the pool's processes would be stopped)
            assert not pool.running
            while not renewals or renewals[-1] < claimed_at + lease:  # the first lease ran out: renewed
                renewed.clear()
                await asyncio.wait_for(renewed.wait(), 30)
            assert analyses.claim(repo, "thief", lease=lease) is None  # nobody takes the game over
            release.set()
            while service.done == 0:
                await asyncio.sleep(0.01)
            await service.stop()
        row = analyses.get(repo, "paused")
        assert row is not None and row.status == analyses.READY and row.result == {"steps": [], "data": {"record": 1}}

    asyncio.run(scenario())
    repo.close()


def _state(pid: int) -> str:
    """A process's state letter from /proc (T: stopped; gone: '')."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text[text.rindex(")") + 2]


def _until_state(pid: int, states: str) -> None:
    """Wait until the process's state is one of ``states`` (a signal is delivered a moment later)."""
    deadline = time.monotonic() + 20
    while _state(pid) not in states or not _state(pid):
        assert time.monotonic() < deadline, f"process {pid} stayed {_state(pid)!r}, not one of {states!r}"
        time.sleep(0.01)


def _until_ended(pid: int) -> None:
    """Wait until the process has ended: gone, or a zombie not yet reaped (reaped by the executor's own
    thread or by nobody yet: either way it runs no more). The pool runs at idle priority, so on a busy
    machine its exit may wait for a moment of CPU: a minute at most."""
    deadline = time.monotonic() + 60
    while _state(pid) not in ("", "Z", "X"):
        assert time.monotonic() < deadline, f"process {pid} still {_state(pid)!r} after the server stopped"
        time.sleep(0.02)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_the_pool_is_stopped_while_paused_and_shutdown_resumes_and_ends_it(tmp_path: Path) -> None:
    from ludoteca.web.analysis.service import AnalysisService

    repo = Repository(f"sqlite:///{tmp_path / 'stop.sqlite3'}")

    async def scenario() -> None:
        gate, clock, timers, _pool = _gate(quiet=1.0)
        service = AnalysisService(repo, "w", gate=gate)
        service.start()
        executor = service._executor
        assert executor is not None
        child = await asyncio.get_running_loop().run_in_executor(executor, os.getpid)  # the pool's process
        _until_state(child, "RSD")  # running, waiting or in a disk read: not stopped
        gate.action()
        _until_state(child, "T")  # stopped: no CPU at all
        clock.now += 1.0
        timers.fire()
        _until_state(child, "RS")
        gate.action()
        _until_state(child, "T")
        pids = [process.pid for process in getattr(executor, "_processes", {}).values()]
        assert child in pids
        await service.stop()  # resumed, then ended: a stopped process would not hear SIGTERM
        for pid in pids:
            _until_ended(pid)

    asyncio.run(scenario())
    repo.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent's death signal is Linux's")
def test_a_paused_analysis_process_dies_with_a_crashed_server(tmp_path: Path) -> None:
    import subprocess

    server = (
        "import os, signal, sys, time\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "import multiprocessing\n"
        "from ludoteca.web.analysis.work import lower_priority\n"
        "if __name__ == '__main__':\n"
        "    pool = ProcessPoolExecutor(1, initializer=lower_priority, initargs=(os.getpid(),),\n"
        "                               mp_context=multiprocessing.get_context('spawn'))\n"
        "    child = pool.submit(os.getpid).result(60)\n"
        "    os.kill(child, signal.SIGSTOP)\n"
        "    print(child, flush=True)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"  # a crash: no clean-up at all
    )
    script = tmp_path / "server.py"
    script.write_text(server)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=90)
    child = int(out.stdout.split()[0])
    deadline = time.monotonic() + 20
    while _state(child) not in ("", "Z"):  # gone (or a zombie waiting to be reaped): not stopped forever
        assert time.monotonic() < deadline, f"the stopped analysis process {child} outlived its server"
        time.sleep(0.05)


def test_actions_alone_never_starve_the_analysis_but_an_ai_search_ends_its_slice() -> None:
    gate, clock, timers, pool = _gate(quiet=1.0)
    gate.patience, gate.slice = 30.0, 3.0
    for _ in range(60):  # an action every 0.5 s for 30 s: never a quiet second
        gate.action()
        clock.now += 0.5
        timers.fire()
    assert pool.running and pool.calls == ["pause", "resume"]  # after 30 s paused, a slice
    for _ in range(5):  # actions inside the slice leave it running
        gate.action()
        assert pool.running
        clock.now += 0.5
        timers.fire()
    gate.action()
    clock.now += 0.5
    timers.fire()
    assert not pool.running  # the slice is over and the tables are still busy
    for _ in range(10):
        gate.action()
        clock.now += 0.5
        timers.fire()
    assert not pool.running  # patience counts again from the new pause
    clock.now += 30.0
    timers.fire()
    assert pool.running  # quiet: resumed
    gate.patience = 1.0
    gate.action()
    clock.now += 0.6
    gate.action()
    clock.now += 0.6
    timers.fire()
    assert pool.running  # a slice again (patience of 1 s)
    gate.searches(1)
    assert not pool.running  # an AI search ends the slice at once
    clock.now += 10.0
    timers.fire()
    assert not pool.running
