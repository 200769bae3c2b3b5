"""The deterministic game runner shared by ``ludoteca lab`` and ``ludoteca arena``.

A run is a :class:`RunSpec` (game, players, agents, options of each variant, master seed)
and a list of tasks ``(variant, i)``. Game ``i`` of any variant always gets the same
derived seed (:func:`game_seed`), which seeds both the chance events and every agent, so a
row is a pure function of the spec, the variant and ``i``: the same whatever ``--jobs``,
the backend, the batching or the order in which games finish. Variants of a sweep share the
seeds of their games (common random numbers), which makes their comparison sharper.

Work goes out in batches ("chunks") sized so that a batch lasts about
:data:`TARGET_SECONDS`; that keeps the per-game overhead (inter-process traffic, writing
results) small while results still stream back several times a second. Backends:

* ``local`` — in this process for one job, else a ``multiprocessing`` pool of ``jobs`` workers;
* ``ray`` — Ray tasks, on a local Ray instance or the cluster at ``address``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import queue
import random
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ludoteca.agents.base import make_agent
from ludoteca.core.chance import sample_outcome
from ludoteca.core.compiled import compiled_copy
from ludoteca.core.constants import TERMINAL
from ludoteca.core.game import Game, State
from ludoteca.core.i18n import _
from ludoteca.lab import CONNECT_TIMEOUT
from ludoteca.lab.probes import Probe

TARGET_SECONDS = 0.25
"""How long a batch of games should take on one worker."""
MAX_CHUNK = 2000
DEFAULT_DETAIL = 8
"""Every 8th game is detailed (per-decision measurements); see :func:`play_game`."""

Row = dict[str, Any]
Task = tuple[int, int]
"""``(variant index, game index)``."""


@dataclass(frozen=True)
class Variant:
    """One combination of option values of a run (a sweep has several)."""

    key: str
    """A readable label, e.g. ``"ties=attacker size=5"``; ``"base"`` without a sweep."""
    overrides: dict[str, Any]
    """The swept option values as the user gave them (``default`` ones left out)."""
    options: dict[str, Any]
    """The game's ``record_options()``: JSON-able, self-contained (designer files inlined)."""

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "overrides": self.overrides, "options": self.options}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variant:
        return cls(data["key"], dict(data["overrides"]), dict(data["options"]))


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's results (the number of games aside)."""

    game: str
    players: int
    """The number of players; with ``--sweep players=…`` the largest of the variants' (each
    variant's own is :meth:`players_of`)."""
    lineup: tuple[str, ...]
    """Agent specs, one per seat for game 0 (see :meth:`seating`); a variant with fewer players
    than :attr:`players` seats the first ones."""
    seed: int
    variants: tuple[Variant, ...]
    rotate: bool = False
    """Rotate the lineup: in game ``i`` seat ``s`` is played by ``lineup[(s + i) % n]``."""
    detail: int = DEFAULT_DETAIL
    """Games ``i`` with ``i % detail == 0`` are detailed (see :func:`play_game`); 0: none."""
    _fingerprint: str = field(default="", compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "players": self.players, "lineup": list(self.lineup),
            "rotate": self.rotate, "detail": self.detail, "seed": self.seed,
            "variants": [v.to_json() for v in self.variants],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunSpec:
        return cls(
            data["game"], int(data["players"]), tuple(data["lineup"]), int(data["seed"]),
            tuple(Variant.from_json(v) for v in data["variants"]), bool(data.get("rotate", False)),
            int(data.get("detail", DEFAULT_DETAIL)),
        )

    @property
    def fingerprint(self) -> str:
        if not self._fingerprint:
            object.__setattr__(self, "_fingerprint", json.dumps(self.to_json(), sort_keys=True))
        return self._fingerprint

    def players_of(self, v: int) -> int:
        """The number of players of variant ``v`` (a sweep may change it: ``--sweep players=2,3,4``)."""
        return int(self.variants[v].options.get("players", self.players))

    @property
    def player_counts(self) -> list[int]:
        """The different numbers of players of the variants, in increasing order (one without a
        sweep of ``players``)."""
        return sorted({self.players_of(v) for v in range(len(self.variants))})

    @property
    def rotation_period(self) -> int:
        """Games in one full rotation of the seats over every variant: the least common multiple
        of the player counts (``--rotate`` rounds the number of games up to a multiple of it)."""
        return math.lcm(*self.player_counts)

    def for_variant(self, v: int) -> RunSpec:
        """The spec of variant ``v`` alone, with its own number of players and the lineup of its
        seats: what a per-variant summary (seats, positions, agents) reads."""
        n = self.players_of(v)
        return RunSpec(self.game, n, self.lineup[:n], self.seed, (self.variants[v],), self.rotate, self.detail)

    def for_comparison(self, v: int, w: int) -> RunSpec:
        """The spec two variants' rows are compared under: the smaller of their numbers of players
        (the seats both variants have)."""
        return self.for_variant(v if self.players_of(v) <= self.players_of(w) else w)

    def seating(self, i: int, players: int | None = None) -> list[int]:
        """Lineup index playing each seat in game ``i`` (of a variant of ``players`` players;
        default :attr:`players`)."""
        n = self.players if players is None else players
        if not self.rotate:
            return list(range(n))
        return [(s + i) % n for s in range(n)]

    def tasks(self, games: int) -> list[Task]:
        """Every ``(variant, i)`` for ``i < games``, variants interleaved (a partial run stays
        balanced across variants)."""
        return [(v, i) for i in range(games) for v in range(len(self.variants))]


def game_seed(seed: int, i: int) -> int:
    """The seed of game ``i`` of a run seeded ``seed``: a 63-bit int, the same on every
    machine and Python version (BLAKE2b of ``"ludoteca-lab:{seed}:{i}"``)."""
    digest = hashlib.blake2b(f"ludoteca-lab:{seed}:{i}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


# --- one game ------------------------------------------------------------------------------

_GAMES: dict[tuple[str, int], tuple[Game, Probe]] = {}


def _game_and_probe(spec: RunSpec, v: int) -> tuple[Game, Probe]:
    key = (spec.fingerprint, v)
    hit = _GAMES.get(key)
    if hit is None:
        from ludoteca.registry import load_game

        game = load_game(spec.game, **spec.variants[v].options)
        hit = (game, Probe(game))
        if len(_GAMES) > 64:
            _GAMES.clear()
        _GAMES[key] = hit
    return hit


def setup_game(spec: RunSpec, i: int, players: int | None = None) -> tuple[int, random.Random, list[str], list[Any]]:
    """Game ``i``'s seed, its random generator (it seeds the agents, then draws every chance
    outcome), the agent spec of each seat and the agents (``players`` seats: a variant's own
    number, default the spec's)."""
    gseed = game_seed(spec.seed, i)
    rng = random.Random(gseed)
    specs = [spec.lineup[k] for k in spec.seating(i, players)]
    bits = rng.getrandbits
    agents = [_agent_maker(a, spec.game)(seed=bits(63)) for a in specs]
    return gseed, rng, specs, agents


_MAKERS: dict[tuple[str, str], Callable[..., Any]] = {}


def _agent_maker(text: str, game: str) -> Callable[..., Any]:
    """``maker(seed=s)`` does what ``make_agent(text, seed=s, game=game)`` does, without
    parsing the spec again for every game."""
    maker = _MAKERS.get((text, game))
    if maker is None:
        from ludoteca.agents import base

        make_agent(text, seed=0, game=game)  # validates the spec, loads the built-in agents
        factory = getattr(base, "_REGISTRY", {}).get(base.parse_spec(text)[0])
        if factory is None:  # the registry works otherwise: take the public way
            maker = functools.partial(make_agent, text, game=game)
        else:
            params = base.parse_spec(text)[1]
            if getattr(factory, "wants_game", False):
                params["game"] = game
            maker = functools.partial(factory, **params)
        _MAKERS[(text, game)] = maker
    return maker


def play_game(spec: RunSpec, v: int, i: int) -> Row:
    """Play game ``i`` of variant ``v`` and describe it in one JSON-able row.

    Every game records its result, length, chance nodes, first player, end reason and the
    game's counters (see :mod:`ludoteca.lab.probes`). A *detailed* game (``i`` a multiple of
    ``spec.detail``) also records, at each decision, the number of legal actions and any
    change of the seats' scores: the material of the branching factor, decision factor, drama
    and lead changes. Other games run a loop as lean as a bare playout. Actions go through
    the fast path (:meth:`~ludoteca.core.game.State.apply_unchecked`): the agents and the
    chance nodes only ever give legal actions."""
    game, probe = _game_and_probe(spec, v)
    variant = spec.variants[v]
    n = spec.players_of(v)
    gseed, rng, specs, agents = setup_game(spec, i, n)
    steps = [a.step for a in agents]
    state = game.new_initial_state()
    chance = 0
    first = -1
    # Up to the first decision: whose turn it is then gives the first player (turns go
    # clockwise, seat + 1, so turn t is played by (first + t) mod n until someone is out; a turn
    # can pass without a decision, e.g. on a roll that allows no move).
    while True:
        player = state.current_player()
        if player >= 0:
            first = (player - state.turns_played()) % n
            break
        if player == TERMINAL:
            break
        state.apply_unchecked(sample_outcome(state.chance_outcomes(), rng))
        chance += 1
    detail = spec.detail > 0 and i % spec.detail == 0
    if detail:
        more, ks, hist_turns, hist_scores = _play_detailed(state, steps, rng, probe)
    else:
        fast = compiled_copy(state) if all(a.plays_compiled for a in agents) else None
        if fast is None:
            more = _play_lean(state, steps, rng)
        else:  # the same game on the compiled engine (same actions, outcomes and draws), read back after
            more = _play_lean(cast(State, fast._c), steps, rng)  # its CState: the same method names
            state = fast.to_state()
    chance += more

    returns = [float(r) for r in state.returns()]
    turns = state.turns_played()
    counters = dict(state.counters())
    reason = state.end_reason()
    row: Row = {
        "variant": variant.key,
        "game": i,
        "seed": gseed,
        "options": variant.overrides,
        "agents": specs,
        "first": first,
        "winners": [s for s in range(n) if returns[s] > 0],
        "returns": returns,
        "turns": turns,
        "rounds": probe.rounds(state, turns, counters),
        "chance": chance,
        "end": reason,
        "limit": probe.stopped_by_limit(reason, turns),
        "scores": probe.scores(state),
        "counters": counters,
        "detail": detail,
    }
    if detail:
        row.update(_detail_fields(row, ks, chance, hist_turns, hist_scores, probe.has_scores))
    return row


def _detail_fields(row: Row, ks: list[int], chance: int, hist_turns: list[int],
                   hist_scores: list[list[float]], has_scores: bool) -> Row:
    """The detailed game's own fields: decisions, legal actions, mid-game scores (the scores
    as they stood when turn floor(T/2) of a T-turn game was played), lead changes."""
    decisions = len(ks)
    out: Row = {"actions": decisions + chance, "decisions": decisions, "multi": decisions - ks.count(1),
                "legal": sum(ks), "mid_scores": None, "lead_changes": 0}
    if not has_scores:
        return out
    turns = row["turns"]
    final = row["scores"]
    if not hist_scores or hist_scores[-1] != final:
        hist_turns.append(turns)
        hist_scores.append(final)
    mid = turns // 2
    mid_scores = hist_scores[0]
    for t, sc in zip(hist_turns, hist_scores, strict=True):
        if t > mid:
            break
        mid_scores = sc
    out["mid_scores"] = list(mid_scores)
    out["lead_changes"] = _lead_changes(hist_scores)
    return out


def _play_lean(state: State, steps: list[Any], rng: random.Random) -> int:
    """Play to the end; return the number of chance nodes."""
    chance = 0
    sample = sample_outcome
    apply = state.apply_unchecked
    whose = state.current_player
    while True:
        player = whose()
        if player < 0:
            if player == TERMINAL:
                return chance
            apply(sample(state.chance_outcomes(), rng))
            chance += 1
        else:
            apply(steps[player](state))


def _play_detailed(
    state: State, steps: list[Any], rng: random.Random, probe: Probe,
) -> tuple[int, list[int], list[int], list[list[float]]]:
    """Play to the end, noting at each decision its number of legal actions and, when the
    scores differ from the last ones noted, the turn and the scores. Returns the number of
    chance nodes, the legal counts, and the score history (turns, scores)."""
    chance = 0
    ks: list[int] = []
    count = ks.append
    turns: list[int] = []
    scores: list[list[float]] = []
    read: Callable[[], list[float] | None] = state.scores if probe.has_scores else _no_scores
    last: list[float] | None = None
    sample = sample_outcome
    apply = state.apply_unchecked
    legal = state.legal_actions_view
    whose = state.current_player
    while True:
        player = whose()
        if player < 0:
            if player == TERMINAL:
                break
            apply(sample(state.chance_outcomes(), rng))
            chance += 1
            continue
        sc = read()
        if sc != last:
            last = list(sc)  # type: ignore[arg-type]  # a copy: the engine may reuse its list
            turns.append(state.turns_played())
            scores.append(last)
        count(len(legal()))  # no copy; the agent's own call then finds them cached
        apply(steps[player](state))
    return chance, ks, turns, scores


def _no_scores() -> None:
    """The scores of a game without ``scores()``: never a change."""
    return None


def _lead_changes(history: Sequence[Sequence[float]]) -> int:
    """How many times the sole leader became someone else (ties do not count as a change)."""
    changes = 0
    leader = -1
    for sc in history:
        best = max(sc)
        if sc.count(best) == 1:
            top = sc.index(best)
            if top != leader:
                if leader >= 0:
                    changes += 1
                leader = top
    return changes


def _row_encoder() -> Callable[[Any], str]:
    """``json.dumps(row, separators=(",", ":"))``, with the C encoder built once rather than at
    every call (``JSONEncoder.encode`` builds one each time: a microsecond a row)."""
    plain = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - Python without the C accelerator
        return plain.encode
    try:
        iterencode = make(None, plain.default, json.encoder.encode_basestring_ascii, None, ":", ",",
                          False, False, True)
    except TypeError:  # pragma: no cover - another signature
        return plain.encode
    join = "".join

    def encode(row: Any) -> str:
        return join(iterencode(row, 0))

    return encode


_ENCODE = _row_encoder()


class GameError(RuntimeError):
    """A game could not be played to the end (an agent or engine failed); names the game."""


def play_chunk(spec: RunSpec, tasks: Sequence[Task]) -> tuple[list[str], float]:
    """Play a batch of games; return their rows as JSON lines (encoded here, in the worker,
    so that the parent only writes them) and the seconds spent."""
    start = time.perf_counter()
    lines = []
    for v, i in tasks:
        try:
            lines.append(_ENCODE(play_game(spec, v, i)))
        except Exception as exc:
            raise GameError(f"game {i} of {spec.variants[v].key} (seed {game_seed(spec.seed, i)}) failed: "
                            f"{type(exc).__name__}: {exc}") from None
    return lines, time.perf_counter() - start


# --- batching ------------------------------------------------------------------------------

class _Chunker:
    """Hands out batches of tasks sized to last about TARGET_SECONDS on a worker."""

    def __init__(self, tasks: Iterable[Task], slots: int, target: float = TARGET_SECONDS) -> None:
        self.pending: deque[Task] = deque(tasks)
        self.slots = max(1, slots)
        self.target = target
        self.per_game: float | None = None

    def observe(self, games: int, seconds: float) -> None:
        if games <= 0:
            return
        x = seconds / games
        self.per_game = x if self.per_game is None else 0.7 * self.per_game + 0.3 * x

    def next(self) -> list[Task]:
        if not self.pending:
            return []
        if self.per_game is None:
            size = 1
        else:
            size = int(self.target / max(self.per_game, 1e-6))
            if self.slots > 1:  # near the end, smaller batches keep every worker busy to the last game
                size = min(size, -(-len(self.pending) // (2 * self.slots)))
            size = max(1, min(size, MAX_CHUNK))
        return [self.pending.popleft() for _ in range(min(size, len(self.pending)))]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def execute(
    spec: RunSpec,
    tasks: Sequence[Task],
    on_lines: Callable[[list[str]], None],
    *,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> None:
    """Play every task, calling ``on_lines`` in this process with each finished batch (one
    JSON line per game, in the order the batch's games were given). With Ray at ``address``,
    give up (ValueError) if the cluster does not answer within ``connect_timeout`` seconds."""
    if not tasks:
        return
    if backend == "ray":
        _execute_ray(spec, tasks, on_lines, jobs, address, connect_timeout)
        return
    if backend != "local":
        raise ValueError(_("unknown backend {backend}; the backends are: local, ray").format(backend=repr(backend)))
    jobs = jobs or default_jobs()
    jobs = min(jobs, len(tasks))
    if jobs <= 1:
        chunker = _Chunker(tasks, 1)
        while chunk := chunker.next():
            lines, seconds = play_chunk(spec, chunk)
            chunker.observe(len(lines), seconds)
            on_lines(lines)
        return
    _execute_pool(spec, tasks, on_lines, jobs)


# --- local processes -----------------------------------------------------------------------

_WORKER_SPEC: RunSpec | None = None


def _init_worker(spec: RunSpec) -> None:
    global _WORKER_SPEC
    _WORKER_SPEC = spec
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C


def _worker_chunk(tasks: list[Task]) -> tuple[list[str], float]:
    assert _WORKER_SPEC is not None
    return play_chunk(_WORKER_SPEC, tasks)


def _execute_pool(spec: RunSpec, tasks: Sequence[Task], on_lines: Callable[[list[str]], None], jobs: int) -> None:
    import multiprocessing as mp

    ctx: Any
    try:
        ctx = mp.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        ctx = mp.get_context()
    chunker = _Chunker(tasks, jobs)
    results: queue.Queue[Any] = queue.Queue()
    if ctx.get_start_method() == "fork":  # forked workers inherit the games and probes ready
        for v in sorted({v for v, _ in tasks}):
            _game_and_probe(spec, v)
    with ctx.Pool(jobs, initializer=_init_worker, initargs=(spec,)) as pool:
        inflight = 0

        def submit() -> None:
            nonlocal inflight
            chunk = chunker.next()
            if chunk:
                pool.apply_async(_worker_chunk, (chunk,), callback=results.put, error_callback=results.put)
                inflight += 1

        for _ in range(2 * jobs):
            submit()
        while inflight:
            try:
                res = results.get(timeout=0.5)
            except queue.Empty:
                continue
            inflight -= 1
            if isinstance(res, BaseException):
                raise res
            lines, seconds = res
            chunker.observe(len(lines), seconds)
            submit()
            on_lines(lines)


# --- Ray ------------------------------------------------------------------------------------

def _ray_chunk(spec: RunSpec, tasks: list[Task]) -> tuple[list[str], float]:
    return play_chunk(spec, tasks)


def _split_address(address: str) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port`` too) of a plain cluster address; None for ``auto``,
    ``ray://`` client addresses and anything else Ray reads itself."""
    if address == "auto" or "://" in address:
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def _check_reachable(address: str, timeout: float) -> None:
    """Fail fast, with a clear message, when nothing listens at a ``host:port`` address."""
    parts = _split_address(address)
    if parts is None:
        return
    try:
        with socket.create_connection(parts, timeout=timeout):
            pass
    except TimeoutError:
        raise ValueError(_("cannot reach Ray at {address}: no answer within {seconds} s (--connect-timeout)").format(
            address=address, seconds=f"{timeout:g}")) from None
    except OSError as exc:
        raise ValueError(_("cannot reach Ray at {address}: {error} (is a Ray cluster running there?)").format(
            address=address, error=exc.strerror or exc)) from None


def _ray_connect(ray: Any, address: str, timeout: float, kwargs: dict[str, Any]) -> None:
    """``ray.init(address=...)``, given up after ``timeout`` seconds: Ray itself retries
    forever when the address does not answer as a Ray cluster would. The attempt runs in a
    daemon thread, which is left behind (blocked in Ray) when it times out."""
    if timeout <= 0:
        raise ValueError(_("--connect-timeout takes a number of seconds above 0, not {seconds}").format(
            seconds=f"{timeout:g}"))
    _check_reachable(address, timeout)
    outcome: dict[str, BaseException | None] = {}

    def connect() -> None:
        try:
            ray.init(address=address, **kwargs)
            outcome["error"] = None
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=connect, name="ludoteca-ray-connect", daemon=True)
    thread.start()
    thread.join(timeout)
    if "error" not in outcome:
        raise ValueError(_("cannot reach Ray at {address}: no Ray cluster answered within {seconds} s (check the "
                           "address; --connect-timeout sets the wait)").format(address=address, seconds=f"{timeout:g}"))
    if outcome["error"] is not None:
        raise outcome["error"]


def _execute_ray(
    spec: RunSpec, tasks: Sequence[Task], on_lines: Callable[[list[str]], None],
    jobs: int | None, address: str | None, connect_timeout: float = CONNECT_TIMEOUT,
) -> None:
    try:
        import ray
    except ImportError:
        raise ValueError(_("the ray backend needs Ray: pip install 'ludoteca[ray]'")) from None
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
        try:
            if address:
                _ray_connect(ray, address, connect_timeout, kwargs)
            else:
                ray.init(num_cpus=jobs or default_jobs(), include_dashboard=False, **kwargs)
        except ValueError:
            raise
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ...
            if address:
                raise ValueError(_("cannot start Ray at {address}: {error}").format(
                    address=address, error=exc)) from None
            raise ValueError(_("cannot start Ray locally: {error}").format(error=exc)) from None
        started = True
    inflight: dict[Any, int] = {}
    try:
        slots = jobs or max(1, int(ray.cluster_resources().get("CPU", 1)))
        remote = ray.remote(num_cpus=1, max_retries=3)(_ray_chunk)
        spec_ref = ray.put(spec)
        chunker = _Chunker(tasks, slots)

        def submit() -> None:
            chunk = chunker.next()
            if chunk:
                inflight[remote.remote(spec_ref, chunk)] = len(chunk)

        for _slot in range(2 * slots):
            submit()
        while inflight:
            done, _waiting = ray.wait(list(inflight), num_returns=1)
            ref = done[0]
            del inflight[ref]
            try:
                lines, seconds = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                raise GameError(str(cause) if isinstance(cause, GameError) else str(exc)) from None
            chunker.observe(len(lines), seconds)
            submit()
            on_lines(lines)
    finally:
        for ref in inflight:  # stopped early (an error, Ctrl-C): drop the work still out
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
