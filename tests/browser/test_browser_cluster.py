"""Two browsers at one table, each through a different worker.

Two real ``ludoteca serve`` workers share one fresh PostgreSQL database and a Redis
(tests/cluster.py). Ann creates a TOHM table from the lobby of worker 1; Bob opens the same table
on worker 2 and sits; they play it to the end by clicking the board, and after every move both
pages show it. The record each worker serves is the same, and replays to the end with the engine.
"""

from __future__ import annotations

import json
import random
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_browser_play import click_move, create_via_lobby, new_page, state, wait_seq_above, wait_state
from tests.cluster import Cluster, need_services, replay

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.redis, pytest.mark.timeout(420)]


def test_two_browsers_on_two_workers_play_tohm_to_the_end(browser: Any, tmp_path: Path, artifacts: Path) -> None:
    need_services()
    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path, 2, "--ai-delay", "0.2", nginx=False)
        w1, w2 = cluster.workers
        ctx_a, ann, errors_a = new_page(browser)
        ctx_b, bob, errors_b = new_page(browser)
        stack.callback(ctx_a.close)
        stack.callback(ctx_b.close)
        url = create_via_lobby(ann, w1.base, "tohm", ["open", "open"], "Ann")
        table_id = url.rstrip("/").split("/")[-1]
        bob.goto(url.replace(w1.base, w2.base))  # the same table, on the other worker
        bob.fill("#my-name", "Bob")
        bob.click("button.sit")
        wait_state(bob, "s.you === 1 && s.status === 'playing'")
        wait_state(ann, "s.status === 'playing'")  # Bob's seat, taken on worker 2, reached worker 1
        players = {0: ann, 1: bob}
        rng = random.Random(17)
        moves = 0
        for _ in range(3000):
            s = state(ann)
            assert s is not None
            if s["status"] == "over":
                break
            page = players[s["to_move"]]
            wait_state(page, "s.mine || s.status !== 'playing' || s.seq !== arg", s["seq"])
            now = state(page)
            if now is None or now["seq"] != s["seq"] or not now["mine"]:
                continue
            click_move(page, "tohm", rng)
            for p in (ann, bob):  # each move is seen on both workers
                wait_seq_above(p, s["seq"])
            stored = cluster.n_actions(table_id)  # the move and the chance after it, as each page gets them
            for p in (ann, bob):
                wait_state(p, "s.seq === arg", stored)
            moves += 1
            if moves == 10:
                ann.screenshot(path=str(artifacts / "cluster-tohm-worker1.png"))
                bob.screenshot(path=str(artifacts / "cluster-tohm-worker2.png"))
        else:
            raise AssertionError("the game did not end")
        for p in (ann, bob):
            wait_state(p, "s.status === 'over'")
            assert "Game over" in p.inner_text("#banner")
        final = state(ann)
        assert final is not None and final["seq"] == state(bob)["seq"] and moves > 10
        assert ann.locator("#log li").count() == bob.locator("#log li").count() == final["seq"]
        records = []
        for w in (w1, w2):
            with urllib.request.urlopen(f"{w.base}/api/tables/{table_id}/record", timeout=10) as res:
                records.append(json.load(res))
        assert records[0] == records[1]
        game, _, actions, status, options = cluster.stored(table_id)
        end, _ = replay(game, options, actions)
        assert status == "over" and end.is_terminal() and len(actions) == final["seq"]
        assert not errors_a and not errors_b, errors_a + errors_b
