"""Several workers end to end (issue 13): real PostgreSQL, real Redis, real nginx, real processes.

Each test starts its own cluster (tests/cluster.py): two single-process ``ludoteca serve``
workers on one fresh PostgreSQL database and a private Redis, and nginx in front.

- **kill -9**: TOHM, TRI and EXAGON (short hourglass) tables with an AI seat and a human-like
  websocket client; 20 times, at moments drawn from a seeded generator, the worker holding a
  table's lease (asked of ``ludo_leases``) is killed with SIGKILL and started again. Every entry a
  client was shown is in the stored record, the record replays with the engine, no move of the
  client was applied twice, each table goes on (or ended).
- **race**: the same action (same seat, same seq) sent at once to both workers directly, 100
  trials: applied exactly once, the other answer is a clear refusal (or nothing).
- **Redis restarted** mid-game: moves made while it is down are seen on the other worker once it
  is back; the game goes on to its end with nothing lost.

Outside CI they are skipped when PostgreSQL, redis-server or nginx is missing; under ``CI=true``
that is a failure (tests/ci_required.py).
"""

from __future__ import annotations

import json
import random
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.cluster import Cluster, Player, need_services, replay, without_elapsed
from tests.test_proxy import NGINX

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.nginx, pytest.mark.timeout(420)]

AI = {"kind": "ai", "level": "random"}
OPEN = {"kind": "open"}
REFUSALS = {"stale", "not_your_turn", "conflict"}
"""What the losing worker of a race may answer."""
WORKER_OPTIONS = ("--ai-delay", "0.05")


@pytest.fixture
def need_all() -> None:
    need_services()
    if NGINX is None:
        pytest.skip("nginx is missing (apt-get install nginx-light)")


def _norm(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def check_table(cluster: Cluster, player: Player) -> tuple[int, str]:
    """The stored record of ``player``'s table against what the player was shown and sent;
    returns (stored actions, status)."""
    from ludoteca.registry import load_game

    game, seats, actions, status, options = cluster.stored(player.table)
    state, events = replay(game, options, actions)  # raises when the record does not replay
    assert (status == "over") == state.is_terminal(), f"table {player.table}: status {status} vs the replay"
    # every entry the client was shown (acknowledged) is stored, as shown
    for i, entry in sorted(player.seen.items()):
        assert i < len(actions), f"table {player.table}: entry {i} was shown but only {len(actions)} are stored"
        assert entry["seat"] == seats[i], f"table {player.table}: entry {i} seat {entry['seat']} vs {seats[i]}"
        views = [[v for e in events[i] if (v := e.view(player.seat, every)) is not None] for every in (False, True)]
        assert _norm(entry["events"]) in {_norm(v) for v in views}, \
            f"table {player.table}: entry {i} was shown as {entry['events']}, the record replays to {views}"
    # each stored move of the client is one move it sent, at most once (nothing played twice)
    sent = player.sent
    k = 0
    for i, (seat, action) in enumerate(zip(seats, actions, strict=True)):
        if player.seat is None or seat != player.seat or action.get("timeout"):
            continue
        while k < len(sent) and not (sent[k][0] <= i and _norm(sent[k][1]) == _norm(without_elapsed(action))):
            k += 1
        assert k < len(sent), (f"table {player.table}: stored move {i} of seat {seat} ({action}) is not one the "
                               f"client sent, or was applied twice")
        k += 1
    if player.over and player.last is not None and not load_game(game, **options).has_hidden_information():
        assert _norm(player.last["position"]) == _norm(state.to_json())
    return len(actions), status


def check_hourglass(cluster: Cluster, table: str) -> int:
    """Each timeout stored for ``table`` came when the turn's time was really out (never early),
    and at most a takeover later (the hourglass is charged from the stored times); their number."""
    from ludoteca.registry import load_game

    game, _, actions, _, options = cluster.stored(table)
    times = cluster.action_times(table)
    state = load_game(game, **options).new_initial_state()
    timeouts = 0
    for i, action in enumerate(actions):
        if action.get("timeout"):
            timeouts += 1
            limit = state.time_left()
            gap = times[i] - times[i - 1]
            assert limit is not None and limit - 0.1 <= gap <= limit + TAKEOVER, \
                f"table {table}: the timeout at {i} came {gap:.2f} s after the turn began, its time was {limit}"
        state.apply_json(action)
    return timeouts


# --- kill -9 ------------------------------------------------------------------------------------

GAMES: list[tuple[str, dict[str, Any] | None]] = [("tohm", None), ("tri", None), ("exagon", {"clock": 2.0})]
KILLS = 20
TAKEOVER = 8.0
"""Seconds a table's timers may be late when the worker running them was killed (lease ttl 3 s,
a takeover round every second, a restart)."""
SEATS = {"tohm": [OPEN, AI], "tri": [OPEN, AI], "exagon": [OPEN, AI, OPEN]}
"""Seat 0 is the client's. EXAGON's seat 2 is a second client that plays the opening (which has no
clock) and then never moves: the hourglass plays a timeout at each of its turns (on the worker
holding the lease)."""


def test_kill_9_of_the_lease_holder_loses_nothing_and_plays_nothing_twice(need_all: None, tmp_path: Path) -> None:
    rng = random.Random(13)
    started = time.monotonic()
    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path, 2, *WORKER_OPTIONS)
        urls = [cluster.ws_base, *(w.ws_base for w in cluster.workers)]
        players: list[Player] = []
        slow_ones: list[Player] = []

        def new_table(game: str, options: dict[str, Any] | None) -> Player:
            made = cluster.create(game, SEATS[game], options)
            for seat in range(2, len(SEATS[game])):
                token = cluster.join(made["id"], seat, "Slow")
                slow = Player(urls, made["id"], token, seat, seed=seat, think=(0.02, 0.2), unclocked_only=True)
                slow.start()
                stack.callback(slow.stop)
                slow_ones.append(slow)
            p = Player(urls, made["id"], made["token"], 0, seed=rng.randrange(1 << 30), think=(0.02, 0.4))
            p.game = game
            p.start()
            stack.callback(p.stop)
            players.append(p)
            return p

        live = [new_table(g, o) for g, o in GAMES]
        kills: list[tuple[str, str, int]] = []
        while len(kills) < KILLS:
            assert time.monotonic() - started < 240, f"only {len(kills)} kills within the time bound"
            time.sleep(rng.uniform(0.3, 2.5))
            for p in list(live):
                assert p.failure is None, f"client of {p.table} failed: {p.failure!r}"
                if p.over:  # a table ended: another of the same game takes its place
                    live.remove(p)
                    live.append(new_table(p.game, dict(GAMES)[p.game]))
            target = rng.choice(live)
            holder = cluster.lease_holder(target.table)
            before = cluster.n_actions(target.table)
            holder.kill9()
            kills.append((target.table, holder.name, before))
            holder.start()
            deadline = time.monotonic() + 15
            while cluster.n_actions(target.table) <= before and not target.over:
                if time.monotonic() > deadline:
                    seen = target.last or {}
                    raise AssertionError(
                        f"table {target.table} ({target.game}) did not go on within 15 s after kill -9 of "
                        f"{holder.name}: {before} actions stored, lease owner now {cluster.lease_owner(target.table)!r}"
                        f", the client saw seq {seen.get('seq')} to_move {seen.get('to_move')} clock "
                        f"{seen.get('clock')} after {target.reconnects} reconnects; workers "
                        f"{[(w.name, w.ident, w.alive()) for w in cluster.workers]}")
                time.sleep(0.1)
        # the tables still in play keep advancing
        counts = {p.table: cluster.n_actions(p.table) for p in live if not p.over}
        time.sleep(4)
        for table, n in counts.items():
            assert cluster.n_actions(table) > n or next(p for p in live if p.table == table).over, \
                f"table {table} stopped advancing"
        for p in players + slow_ones:
            p.stop()
            assert p.failure is None, f"client of {p.table} failed: {p.failure!r}"
        total = hourglass = 0
        for p in players:
            n, status = check_table(cluster, p)
            total += n
            timeouts = check_hourglass(cluster, p.table)
            hourglass += timeouts
            print(f"{p.game} {p.table}: {n} actions, {status}, {timeouts} timeouts, "
                  f"{sum(1 for t, _, _ in kills if t == p.table)} kills, {p.reconnects} reconnects")
        for p in slow_ones:
            check_table(cluster, p)
        games = {p.table: p.game for p in players}
        assert len(kills) >= KILLS and {games[t] for t, _, _ in kills} == {"tohm", "tri", "exagon"}
        assert total > 100 and hourglass > 0
        assert time.monotonic() - started < 300


# --- the race -----------------------------------------------------------------------------------

TRIALS = 100


def test_the_same_action_sent_to_both_workers_at_once_is_applied_once(need_all: None, tmp_path: Path) -> None:
    rng = random.Random(5)
    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path, 2, *WORKER_OPTIONS, nginx=False)
        w1, w2 = cluster.workers
        trials = 0
        outcomes = {"refused": 0, "no-op": 0}
        while trials < TRIALS:
            made = cluster.create("tohm", [OPEN, OPEN], base=w1.base)
            tokens = {0: made["token"], 1: cluster.join(made["id"], 1, "Bob", base=w2.base)}
            clients = {(s, w.name): Player([w.ws_base], made["id"], tokens[s], s, seed=0, play=False)
                       for s in (0, 1) for w in (w1, w2)}
            for c in clients.values():
                c.start()
                stack.callback(c.stop)
            while trials < TRIALS:
                seq = cluster.n_actions(made["id"])
                for c in clients.values():
                    c.wait_seq(seq)
                    assert c.seq == seq, f"a client is ahead of the record: {c.seq} > {seq}"
                first = clients[(0, w1.name)].last
                assert first is not None
                if first["status"] != "playing":
                    break
                mover = first["to_move"]
                a, b = clients[(mover, w1.name)], clients[(mover, w2.name)]
                legal = a.last["legal"] if a.last else None
                assert legal, f"seat {mover} on {w1.name} is not sent its legal moves at seq {seq}"
                action = rng.choice(legal)
                trials += 1
                errors_before = (len(a.errors), len(b.errors))
                gate = threading.Barrier(2)
                message = {"type": "action", "action": action, "seq": seq, "ref": trials}
                threads = [threading.Thread(target=_send_at_once, args=(gate, c, message)) for c in (a, b)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join(10)
                for c in clients.values():  # the winner's move reaches everyone, on both workers
                    c.wait_seq(seq + 1, timeout=10)
                time.sleep(0.05)
                deadline = time.monotonic() + 2
                while time.monotonic() < deadline:  # the loser's answer, if it sends one
                    new = a.errors[errors_before[0]:] + b.errors[errors_before[1]:]
                    if new:
                        break
                    time.sleep(0.02)
                new = a.errors[errors_before[0]:] + b.errors[errors_before[1]:]
                assert len(new) <= 1, f"trial {trials}: both were refused (or one twice): {new}"
                for err in new:
                    assert err.get("code") in REFUSALS and err.get("message"), \
                        f"trial {trials}: the loser got {err}, not a clear refusal"
                    assert err.get("ref") == trials
                outcomes["refused" if new else "no-op"] += 1
                _, seats, actions, _, _ = cluster.stored(made["id"])
                assert seats[seq] == mover and _norm(without_elapsed(actions[seq])) == _norm(action)
                assert all(s is None for s in seats[seq + 1:]), \
                    f"trial {trials}: after the move at {seq}, {seats[seq + 1:]} were stored (applied twice?)"
                for c in clients.values():
                    c.wait_seq(len(actions))
                    assert c.seq == len(actions)
            for c in clients.values():
                c.stop()
                assert c.failure is None, repr(c.failure)
            for seat in (0, 1):
                check_table(cluster, clients[(seat, w1.name)])
        assert sum(outcomes.values()) == TRIALS
        print("race outcomes:", outcomes)


def _send_at_once(gate: threading.Barrier, client: Player, message: dict[str, Any]) -> None:
    client.sent.append((message["seq"], message["action"]))
    gate.wait(5)
    client.send(message)


# --- Redis restarted ----------------------------------------------------------------------------

def test_a_redis_restart_mid_game_loses_nothing(need_all: None, tmp_path: Path) -> None:
    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path, 2, *WORKER_OPTIONS, nginx=False)
        w1, w2 = cluster.workers
        made = cluster.create("tohm", [OPEN, OPEN], base=w1.base)
        bob = cluster.join(made["id"], 1, "Bob", base=w2.base)
        ann_p = Player([w1.ws_base], made["id"], made["token"], 0, seed=1, think=(0.01, 0.05))
        bob_p = Player([w2.ws_base], made["id"], bob, 1, seed=2, think=(0.01, 0.05))
        watcher = Player([w2.ws_base], made["id"], None, None, seed=3, play=False)
        for p in (ann_p, bob_p, watcher):
            p.start()
            stack.callback(p.stop)
        for p in (ann_p, bob_p, watcher):
            p.wait_seq(12, timeout=30)
        for p in (ann_p, bob_p):  # everyone in step before Redis goes away
            p.paused.set()
        time.sleep(0.3)
        down_at = cluster.n_actions(made["id"])
        for p in (ann_p, bob_p, watcher):
            assert p.wait_seq(down_at)["seq"] == down_at
        cluster.redis.stop()
        for p in (ann_p, bob_p):
            p.paused.clear()
        time.sleep(3)  # the seat to move plays on its own worker meanwhile
        meanwhile = cluster.n_actions(made["id"])
        assert meanwhile > down_at, "no move could be made while Redis was down"
        cluster.redis.start()
        for p in (ann_p, bob_p, watcher):  # every client, on both workers, sees the moves made meanwhile
            p.wait_seq(meanwhile, timeout=15)
        for p in (ann_p, bob_p, watcher):  # and the game goes on to its end
            p.wait_seq(10**6, timeout=150)
            assert p.over and p.failure is None, repr(p.failure)
        n, status = check_table(cluster, ann_p)
        assert status == "over" and n == ann_p.seq == bob_p.seq == watcher.seq
        check_table(cluster, bob_p)
        check_table(cluster, watcher)
        assert set(watcher.seen) == set(range(n))  # the spectator was shown every entry
