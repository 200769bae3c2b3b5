"""Several workers end to end: real PostgreSQL, real Redis, real nginx, real processes.

Each test starts its own cluster (tests/cluster.py): two single-process ``ludoteca serve``
workers on one fresh PostgreSQL database and a private Redis, and nginx in front.

- **kill -9**: TOHM, TRI and EXAGON (short hourglass) tables with an AI seat and a human-like
  websocket client; 10 times, at moments drawn from a seeded generator, the worker holding a
  table's lease (asked of ``ludo_leases``) is killed with SIGKILL and started again. Every entry a
  client was shown is in the stored record, the record replays with the engine, no move of the
  client was applied twice, each table goes on (or ended).
- **race**: the same action (same seat, same seq) sent at once to both workers directly, 100
  trials: applied exactly once, the other answer is a clear refusal (or nothing).
- **Redis restarted** mid-game: moves made while it is down are seen on the other worker once it
  is back; the game goes on to its end with nothing lost.
- **A forged bus message**: someone who can ``PUBLISH`` on Redis sends the message of a
  move that was never stored; no viewer on either worker is shown it, and the seat to move plays
  at once.

Outside CI they are skipped when PostgreSQL, redis-server or nginx is missing; under ``CI=true``
that is a failure (tests/ci_required.py).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
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
KILLS = 10
TAKEOVER = 15.0
"""Seconds a table's timers may be late here when the worker running them was killed. The design's
bound is TTL + EVERY = 4 s plus a takeover round's work (docs/web.md, checked exactly with an
injected clock in tests/test_web_leases.py); real processes on a busy machine get a margin."""
GOES_ON = 30.0
"""Seconds a table may take to store its next action after a kill (a liveness check, with a margin
for a busy machine: the takeover itself comes within about 4 s)."""
SEATS = {"tohm": [OPEN, AI], "tri": [OPEN, AI], "exagon": [OPEN, AI, OPEN]}
"""Seat 0 is the client's. EXAGON's seat 2 is a second client that plays the opening (which has no
clock) and then never moves: the hourglass plays a timeout at each of its turns (on the worker
holding the lease)."""


def test_kill_9_of_the_lease_holder_loses_nothing_and_plays_nothing_twice(need_all: None, tmp_path: Path) -> None:
    rng = random.Random(13)
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
        while len(kills) < KILLS:  # (the test's own timeout bounds the whole; no wall-clock budget here)
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
            deadline = time.monotonic() + GOES_ON
            while cluster.n_actions(target.table) <= before and not target.over:
                if time.monotonic() > deadline:
                    seen = target.last or {}
                    raise AssertionError(
                        f"table {target.table} ({target.game}) did not go on within {GOES_ON} s after kill -9 of "
                        f"{holder.name}: {before} actions stored, lease owner now {cluster.lease_owner(target.table)!r}"
                        f", the client saw seq {seen.get('seq')} to_move {seen.get('to_move')} clock "
                        f"{seen.get('clock')} after {target.reconnects} reconnects; workers "
                        f"{[(w.name, w.ident, w.alive()) for w in cluster.workers]}")
                time.sleep(0.1)
        # the tables still in play keep advancing (each stores a new action, or ends)
        counts = {p.table: cluster.n_actions(p.table) for p in live if not p.over}
        deadline = time.monotonic() + GOES_ON
        for table, n in counts.items():
            while not (cluster.n_actions(table) > n or next(p for p in live if p.table == table).over):
                assert time.monotonic() < deadline, f"table {table} stopped advancing"
                time.sleep(0.1)
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
                deadline = time.monotonic() + 2
                while time.monotonic() < deadline:  # the loser's answer, if it sends one (a later one is
                    if _answers(a, b, errors_before, trials):  # still counted: see after the trials)
                        break
                    time.sleep(0.02)
                new = _answers(a, b, errors_before, trials)
                assert len(new) <= 1, f"trial {trials}: both were refused (or one twice): {new}"
                for err in new:
                    assert err.get("code") in REFUSALS and err.get("message"), \
                        f"trial {trials}: the loser got {err}, not a clear refusal"
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
            # every answer, however late it came: each trial refused at most once, clearly
            late = Counter(e.get("ref") for c in clients.values() for e in c.errors)
            assert all(n <= 1 for n in late.values()), late
            assert all(e.get("code") in REFUSALS and e.get("message") for c in clients.values() for e in c.errors)
            for seat in (0, 1):
                check_table(cluster, clients[(seat, w1.name)])
        assert sum(outcomes.values()) == TRIALS
        print("race outcomes:", outcomes)


def _answers(a: Player, b: Player, before: tuple[int, int], ref: int) -> list[dict[str, Any]]:
    """The errors ``a`` and ``b`` got for the trial ``ref`` since ``before``."""
    return [e for e in a.errors[before[0]:] + b.errors[before[1]:] if e.get("ref") == ref]


def _send_at_once(gate: threading.Barrier, client: Player, message: dict[str, Any]) -> None:
    client.sent.append((message["seq"], message["action"]))
    gate.wait(5)
    client.send(message)


# --- a forged bus message ------------------------------------------------------------------------

def _plain_game() -> str:
    """A game of the registry without a clock and without hidden information (any will do)."""
    from ludoteca.registry import GAMES, game_class

    return next(g for g in GAMES if game_class(g).clock_option is None and not game_class(g).hidden_information)


def test_a_forged_bus_message_never_becomes_a_move(need_services_only: None, tmp_path: Path) -> None:
    """The attack, with redis-py and Redis's password (an insider, or a leaked URL):
    ``PUBLISH ludoteca:t:T '{"t":T,"s":n+1,"w":"wforged-0001","n":1,"b":{"rows":{"from":n,
    "a":[[s,A]],"at":NOW}}}'`` with ``n`` the stored actions, ``s`` the seat to move and ``A`` a legal
    move. The workers do not have the bus secret's MAC on it: it is a hint to read the database, so
    no viewer (the seats, spectators on both workers, a fresh spectator) is shown the forged move,
    and the seat to move plays another move at once."""
    import redis

    with ExitStack() as stack:
        cluster = Cluster(stack, tmp_path, 2, *WORKER_OPTIONS, nginx=False)
        w1, w2 = cluster.workers
        made = cluster.create(_plain_game(), [OPEN, OPEN], base=w1.base)
        table = made["id"]
        tokens = {0: made["token"], 1: cluster.join(table, 1, "Bob", base=w2.base)}
        seats = {0: Player([w1.ws_base], table, tokens[0], 0, seed=0, play=False),
                 1: Player([w2.ws_base], table, tokens[1], 1, seed=0, play=False)}
        viewers = [*seats.values(), *(Player([w.ws_base], table, None, None, seed=0, play=False) for w in (w1, w2))]
        for v in viewers:
            v.start()
            stack.callback(v.stop)
        rng = random.Random(3)
        publisher = redis.Redis.from_url(cluster.redis.url)
        stack.callback(publisher.close)
        for _ in range(3):  # three forged moves, each at a new position
            n = cluster.n_actions(table)
            for v in viewers:
                v.wait_seq(n)
            last = viewers[0].last
            assert last is not None and last["status"] == "playing"
            mover = seats[last["to_move"]]
            assert mover.last is not None and mover.last["seq"] == n
            legal = mover.last["legal"]
            forged = rng.choice(legal)
            forged_message = {"t": table, "s": n + 1, "w": "wforged-0001", "n": 1,
                              "b": {"rows": {"from": n, "a": [[mover.seat, forged]], "at": time.time()}}}
            # each worker has the table loaded and subscribed: both get it
            assert publisher.publish(f"ludoteca:t:{table}", json.dumps(forged_message)) == 2
            # before the fix every viewer showed the forged move within milliseconds
            for v in viewers:
                with pytest.raises(AssertionError, match="not seen within"):
                    v.wait_seq(n + 1, timeout=1.0)
            assert cluster.n_actions(table) == n
            # the seat to move plays at once (another legal move when there is one)
            real = next((a for a in legal if _norm(a) != _norm(forged)), forged)
            mover.sent.append((n, real))
            mover.send({"type": "action", "action": real, "seq": n})
            for v in viewers:
                v.wait_seq(n + 1, timeout=10)
            _, stored_seats, actions, _, _ = cluster.stored(table)
            assert stored_seats[n] == mover.seat and _norm(without_elapsed(actions[n])) == _norm(real)
            assert all(s is None for s in stored_seats[n + 1:])  # only chance follows it
            assert not mover.errors, mover.errors
        fresh = Player([w2.ws_base], table, None, None, seed=0, play=False)
        fresh.start()
        stack.callback(fresh.stop)
        fresh.wait_seq(cluster.n_actions(table))
        for v in [*viewers, fresh]:  # every entry each viewer was shown is the stored one
            assert v.failure is None, repr(v.failure)
            check_table(cluster, v)


@pytest.fixture
def need_services_only() -> None:
    need_services()


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
        down_at = _settled(cluster, made["id"], [ann_p, bob_p, watcher])
        cluster.redis.stop()
        for p in (ann_p, bob_p):
            p.paused.clear()
        deadline = time.monotonic() + GOES_ON  # the seat to move plays on its own worker meanwhile
        while cluster.n_actions(made["id"]) <= down_at:
            assert time.monotonic() < deadline, "no move could be made while Redis was down"
            time.sleep(0.1)
        time.sleep(0.5)  # (more moves may come meanwhile; none is needed)
        meanwhile = cluster.n_actions(made["id"])
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


def _settled(cluster: Cluster, table: str, clients: list[Player]) -> int:
    """The number of actions stored once every client shows that many and it stays so (the moves
    sent before the clients were paused are in); waits for events, not for a fixed time."""
    deadline = time.monotonic() + GOES_ON
    while True:
        n = cluster.n_actions(table)
        shown = [c.wait_seq(n)["seq"] for c in clients]
        if all(seq == n for seq in shown) and cluster.n_actions(table) == n:
            return n
        assert time.monotonic() < deadline, f"table {table}: the clients never agreed ({shown}, {n} stored)"
