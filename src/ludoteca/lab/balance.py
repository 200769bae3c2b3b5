"""Finding the fairest setting of a game (``ludoteca balance``): a race between the candidate settings.

The candidates are every combination of the values given with ``--vary``. A *target* turns a
candidate's games into one figure to minimise, with an interval:

* ``seat-advantage`` — the largest gap ``|win rate − 1/n|`` over the play-order positions (the
  player who starts, the second, ...): 0 for a perfectly fair game;
* ``length=T`` — ``|mean number of turns − T|``: the setting whose games last T turns on average.

**The race** (successive halving with confidence intervals, after Maron and Moore's Hoeffding
races): round 1 plays ``first`` games of every candidate; each later round doubles the games of
every surviving candidate (the last round takes what the budget leaves). After every round each
surviving candidate's figure gets an interval; a candidate whose interval lies entirely above the
smallest upper end among the survivors is dropped (it is worse than some other candidate). The race
stops when one candidate is left (*separated*), when the next round does not fit in the budget, or
after ``max_rounds`` rounds, fixed before the start.

**The guarantee.** Every interval is computed at the level ``1 − alpha / (K · R · m)`` for ``K``
candidates, at most ``R = max_rounds`` looks and ``m`` play-order positions (``m = 1`` for
``length``): by Bonferroni's inequality all the intervals of all the rounds cover their true
values together with probability at least ``1 − alpha`` (95%). On that event the truly best
candidate is never dropped, so: when the race stops *separated*, the setting it names is the best
with probability at least 95%; when the budget ends it first, the best is among the survivors with
that probability, and the setting named is the one with the smallest estimate (the runner-up may
be as good). The intervals reported are these simultaneous ones (wider than a single 95% interval);
each candidate's single 95% interval is given too. The guarantee is about the target's figure for
these agents and options, with the games' own randomness: a candidate's games are independent (the
game is the sampling unit); every candidate plays the same seeds (common random numbers).

The race is pure: it calls a ``play(candidate, start, stop)`` function that returns the rows of
games ``start`` to ``stop - 1`` of a candidate and the CPU seconds they cost (the tests give a fake
game). :class:`GamePlayer` plays real games with :func:`ludoteca.lab.runner.execute`, and
:func:`search` is the whole search from Python (``ludoteca balance`` without the terminal).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from ludoteca.core.i18n import _
from ludoteca.lab import stats
from ludoteca.lab.runner import Row, RunSpec

ALPHA = 0.05
"""The error allowed for the whole race (all intervals of all rounds together)."""
MAX_CANDIDATES = 200
"""The largest grid a search takes (bounded cost: each candidate plays at least one round)."""
MAX_VALUES = 1000
"""The largest number of values one ``--vary`` may list or span."""
MIN_FIRST = 10
"""Games of every candidate in the first round (at least; fewer only when the budget forces it)."""
MAX_FIRST = 200
"""Games of every candidate in the first round (at most)."""
TARGETS = ("seat-advantage", "length")
"""The targets (see the module's documentation)."""

Play = Callable[[int, int, int], tuple[list[Row], float]]
"""``play(candidate, start, stop)`` -> (rows of games ``start .. stop-1``, CPU seconds)."""


# --- parsing ------------------------------------------------------------------------------------

def parse_vary(text: str) -> tuple[str, list[str]]:
    """``"cap=100,150,200"`` -> ``("cap", ["100", "150", "200"])``; ``"target=90..110/10"`` ->
    ``("target", ["90", "100", "110"])`` (whole numbers from lo to hi, both included, step 1 unless
    given). ValueError with a one-line message on bad input."""
    name, sep, values = text.partition("=")
    name = name.strip()
    values = values.strip()
    usage = _("--vary takes NAME=A,B,C or NAME=LO..HI or NAME=LO..HI/STEP (e.g. cap=100..200/50), not {text}")
    if not sep or not name or not values:
        raise ValueError(usage.format(text=repr(text)))
    if ".." in values:
        parts = _parse_range(values, text, usage)
    else:
        parts = [v.strip() for v in values.split(",")]
        if any(not v for v in parts):
            raise ValueError(usage.format(text=repr(text)))
        if len(set(parts)) != len(parts):
            raise ValueError(_("--vary {text} lists a value twice").format(text=repr(text)))
        if len(parts) > MAX_VALUES:
            raise ValueError(_("--vary {name} has {count} values; at most {most}").format(
                name=name, count=len(parts), most=MAX_VALUES))
    return name, parts


def _parse_range(values: str, text: str, usage: str) -> list[str]:
    span, slash, step_text = values.partition("/")
    lo_text, _dots, hi_text = span.partition("..")
    try:
        lo, hi = int(lo_text.strip()), int(hi_text.strip())
        step = int(step_text.strip()) if slash else 1
    except ValueError:
        raise ValueError(usage.format(text=repr(text))) from None
    if step < 1:
        raise ValueError(_("--vary {text}: the step must be 1 or more").format(text=repr(text)))
    if hi < lo:
        raise ValueError(_("--vary {text}: the range ends below its start").format(text=repr(text)))
    count = (hi - lo) // step + 1
    if count > MAX_VALUES:
        raise ValueError(_("--vary {text} spans {count} values; at most {most}").format(
            text=repr(text), count=count, most=MAX_VALUES))
    return [str(v) for v in range(lo, hi + 1, step)]


def sweeps_for(varies: Sequence[str]) -> list[str]:
    """The ``--vary`` texts as the lab's sweeps (``NAME=V1,V2``), checked: no option twice, at most
    :data:`MAX_CANDIDATES` combinations."""
    parsed = [parse_vary(v) for v in varies]
    if not parsed:
        raise ValueError(_("give at least one --vary NAME=A,B,C (the settings to compare)"))
    names = [n for n, _values in parsed]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(_("--vary {option} is given twice; list all its values in one --vary").format(
                option=name))
    count = math.prod(len(values) for _name, values in parsed)
    if count < 2:
        raise ValueError(_("--vary gives a single setting; list at least two values to compare"))
    if count > MAX_CANDIDATES:
        raise ValueError(_("--vary makes {count} settings; at most {most} (narrow the ranges or take a "
                           "larger step)").format(count=count, most=MAX_CANDIDATES))
    return [f"{name}={','.join(values)}" for name, values in parsed]


@dataclass(frozen=True)
class Target:
    """What the race minimises (see the module's documentation)."""

    kind: str
    goal: float | None = None

    @property
    def label(self) -> str:
        return self.kind if self.goal is None else f"{self.kind}={self.goal:g}"

    def positions(self, players: int) -> int:
        """How many intervals make one figure (for the Bonferroni divisor)."""
        return players if self.kind == "seat-advantage" else 1

    def measure(self, rows: Sequence[Row], players: int, alpha: float) -> tuple[float, float, float]:
        """The figure of a candidate's games and its interval at level ``1 - alpha``: ``(estimate, lo, hi)``."""
        if self.kind == "seat-advantage":
            return seat_advantage(rows, players, alpha)
        return _folded_mean([float(r["turns"]) for r in rows], float(self.goal or 0.0), alpha)


def parse_target(text: str) -> Target:
    """``"seat-advantage"`` or ``"length=40"``. ValueError (one line) otherwise."""
    kind, sep, goal = text.strip().partition("=")
    kind = kind.strip().lower()
    if kind == "seat-advantage" and not sep:
        return Target(kind)
    if kind == "length" and sep:
        try:
            value = float(goal)
        except ValueError:
            value = -1.0
        if math.isfinite(value) and value > 0:
            return Target(kind, value)
        raise ValueError(_("--target length=T takes a number of turns above 0, e.g. length=40, not {text}").format(
            text=repr(text)))
    raise ValueError(_("--target takes seat-advantage or length=T (a mean number of turns), not {text}").format(
        text=repr(text)))


# --- figures -------------------------------------------------------------------------------------

def z_for(alpha: float) -> float:
    """The two-sided normal quantile for an error ``alpha``."""
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _fold(estimate: float, lo: float, hi: float, goal: float) -> tuple[float, float, float]:
    """``|x − goal|`` for ``x`` estimated by ``estimate`` in ``[lo, hi]``: its estimate and interval."""
    point = abs(estimate - goal)
    far = max(abs(lo - goal), abs(hi - goal))
    near = 0.0 if lo <= goal <= hi else min(abs(lo - goal), abs(hi - goal))
    return point, near, far


def seat_advantage(rows: Sequence[Row], players: int, alpha: float) -> tuple[float, float, float]:
    """The largest ``|win rate − 1/n|`` over the play-order positions, with an interval made of the
    positions' Wilson intervals each at level ``1 − alpha / n`` (all together at ``1 − alpha``); ``n`` is
    the number of players of the rows (``players`` without rows)."""
    if rows:
        players = len(rows[0]["returns"])  # a setting's own number of players (players may be varied)
    fair = 1.0 / players
    z = z_for(alpha / players)
    by_position: list[list[float]] = [[] for _ in range(players)]
    for r in rows:
        first = r["first"] if r["first"] >= 0 else 0
        for seat, value in enumerate(r["returns"]):
            by_position[(seat - first) % players].append(float(value))
    best = (0.0, 0.0, 0.0)
    for values in by_position:
        n = len(values)
        rate = sum(values) / n if n else fair
        lo, hi = stats.rate_interval(values, z)
        point, near, far = _fold(rate, lo, hi, fair)
        best = (max(best[0], point), max(best[1], near), max(best[2], far))
    return best


def _folded_mean(xs: Sequence[float], goal: float, alpha: float) -> tuple[float, float, float]:
    if not xs:
        return (math.inf, 0.0, math.inf)
    m = stats.mean(xs)
    ci = stats.mean_interval(xs, 1.0 - alpha)
    lo, hi = ci if ci is not None else (-math.inf, math.inf)
    return _fold(m, lo, hi, goal)


# --- the race ---------------------------------------------------------------------------------------

@dataclass
class Candidate:
    """One setting of the race and what it cost."""

    key: str
    rows: list[Row] = field(default_factory=list)
    cpu: float = 0.0
    estimate: float = math.inf
    low: float = 0.0
    high: float = math.inf
    single: tuple[float, float] = (0.0, math.inf)
    """The single (not simultaneous) 95% interval."""
    dropped: int | None = None
    """The round after which it was dropped (None: still in the race)."""

    @property
    def games(self) -> int:
        return len(self.rows)

    def to_json(self) -> dict[str, Any]:
        return {"setting": self.key, "games": self.games, "cpu_seconds": round(self.cpu, 3),
                "estimate": _finite(self.estimate), "interval": [_finite(self.low), _finite(self.high)],
                "interval_95_single": [_finite(self.single[0]), _finite(self.single[1])],
                "dropped_after_round": self.dropped}


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass
class RaceResult:
    """The outcome: every candidate (in the grid's order), the rounds, why it stopped."""

    target: Target
    candidates: list[Candidate]
    rounds: list[dict[str, Any]]
    stop: str
    """``"separated"``, ``"budget"`` or ``"rounds"``."""
    budget: int
    first: int
    max_rounds: int
    alpha: float
    level: float
    """The level of every interval (``1 − alpha / (K · R · m)``)."""
    spec: RunSpec | None = None
    """The run of real games (:func:`search`; None on a fake game)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """What played the games (:func:`ludoteca.lab.provenance.provenance`), set by :func:`search`."""

    @property
    def spent(self) -> int:
        return sum(c.games for c in self.candidates)

    @property
    def survivors(self) -> list[Candidate]:
        return [c for c in self.candidates if c.dropped is None]

    @property
    def best(self) -> Candidate:
        return min(self.survivors, key=lambda c: c.estimate)

    @property
    def runner_up(self) -> Candidate | None:
        """The survivor with the next smallest estimate; with one survivor, the candidate dropped last
        (the smallest estimate among those dropped in that round)."""
        others = [c for c in self.survivors if c is not self.best]
        if others:
            return min(others, key=lambda c: c.estimate)
        dropped = [c for c in self.candidates if c.dropped is not None]
        if not dropped:
            return None
        return min(dropped, key=lambda c: (-(c.dropped or 0), c.estimate))

    def to_json(self) -> dict[str, Any]:
        runner = self.runner_up
        return {
            "target": self.target.label, "stop": self.stop, "best": self.best.key,
            "runner_up": runner.key if runner else None, "budget": self.budget, "games": self.spent,
            "cpu_seconds": round(sum(c.cpu for c in self.candidates), 3),
            "method": {"first_round_games": self.first, "max_rounds": self.max_rounds, "alpha": self.alpha,
                       "interval_level": self.level,
                       "multiple_looks": "Bonferroni over candidates x rounds x play-order positions"},
            "candidates": [c.to_json() for c in self.candidates], "rounds": self.rounds,
            "provenance": self.provenance,
        }


def plan(candidates: int, budget: int, first: int | None = None) -> tuple[int, int]:
    """Games of every candidate in round 1 and the most rounds the budget allows.

    Round 1 takes about an eighth of the budget (between :data:`MIN_FIRST` and :data:`MAX_FIRST`
    games a candidate, fewer only when the budget is too small); each round then doubles the games,
    so a candidate never plays more than the budget after ``1 + log2(budget / first)`` rounds."""
    if candidates < 1:
        raise ValueError(_("nothing to compare"))
    if budget < 2 * candidates:
        raise ValueError(_("--budget {budget} is too small for {count} settings: at least {least} games (2 a "
                           "setting)").format(budget=budget, count=candidates, least=2 * candidates))
    if first is None:
        first = min(MAX_FIRST, max(MIN_FIRST, budget // (8 * candidates)))
    first = max(2, min(first, budget // candidates))
    max_rounds = (budget // first).bit_length()  # 1 + floor(log2(budget / first))
    return first, max_rounds


def race(keys: Sequence[str], play: Play, target: Target, players: int, budget: int, *,
         alpha: float = ALPHA, first: int | None = None,
         on_round: Callable[[RaceResult], None] | None = None) -> RaceResult:
    """Race the candidates ``keys`` (see the module's documentation); deterministic given ``play``."""
    first, max_rounds = plan(len(keys), budget, first)
    level_alpha = alpha / (len(keys) * max_rounds * target.positions(players))
    # the target spreads its share over the positions itself: measure() takes alpha for one candidate-look
    look_alpha = alpha / (len(keys) * max_rounds)
    result = RaceResult(target, [Candidate(k) for k in keys], [], "rounds", budget, first, max_rounds, alpha,
                        1.0 - level_alpha)
    games = 0
    for round_no in range(1, max_rounds + 1):
        alive = [k for k, c in enumerate(result.candidates) if c.dropped is None]
        remaining = budget - result.spent
        goal = first if round_no == 1 else min(2 * games, games + remaining // len(alive))
        if goal <= games:
            result.stop = "budget"
            break
        for k in alive:
            cand = result.candidates[k]
            rows, cpu = play(k, games, goal)
            cand.rows.extend(rows)
            cand.cpu += cpu
        games = goal
        for k in alive:
            cand = result.candidates[k]
            cand.estimate, cand.low, cand.high = target.measure(cand.rows, players, look_alpha)
            _est, lo95, hi95 = target.measure(cand.rows, players, ALPHA)
            cand.single = (lo95, hi95)
        cutoff = min(result.candidates[k].high for k in alive)
        dropped = [k for k in alive if result.candidates[k].low > cutoff]
        for k in dropped:
            result.candidates[k].dropped = round_no
        result.rounds.append({"round": round_no, "games_each": games, "alive": len(alive),
                              "dropped": [result.candidates[k].key for k in dropped]})
        if on_round is not None:
            on_round(result)
        if len(alive) - len(dropped) == 1:
            result.stop = "separated"
            break
    else:
        result.stop = "rounds"
    return result


# --- the real games: the player of the race, and the search from Python ------------------------------------------

RESULT_FILE = "balance.json"
COST_FILE = "cost.json"
FORMAT = "ludoteca-balance"


def setting_spec(spec: RunSpec, k: int) -> RunSpec:
    """The run of setting ``k`` alone (the same seeds: every setting plays the same games' chances)."""
    from ludoteca.lab.runner import RunSpec

    variant = spec.variants[k]
    n = int(variant.options.get("players", spec.players))  # its own number when players is varied
    return RunSpec(spec.game, n, spec.lineup[:n], spec.seed, (variant,), spec.rotate, spec.detail)


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished child processes (the workers)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class GamePlayer:
    """The race's ``play`` on real games, with :func:`ludoteca.lab.runner.execute` (local processes or
    Ray). With ``out``, setting ``k``'s games are a lab run in ``out/setting-00k`` (``run.json``,
    ``games.jsonl``; ``cost.json`` its CPU seconds): games already there are reused, so a search
    stopped at any moment resumes. ``on_games(new, reused)`` is told of every batch of games."""

    def __init__(self, spec: RunSpec, *, jobs: int | None = None, backend: str = "local",
                 address: str | None = None, out: str | Path | None = None,
                 on_games: Callable[[int, int], None] | None = None) -> None:
        from ludoteca.lab.runner import default_jobs

        self.spec = spec
        self.jobs = jobs or default_jobs()
        self.backend = backend
        self.address = address
        self.out = Path(out) if out is not None else None
        self.on_games = on_games

    def directory(self, k: int) -> Path:
        assert self.out is not None
        return self.out / f"setting-{k + 1:03d}"

    def __call__(self, k: int, start: int, stop: int) -> tuple[list[Row], float]:
        from ludoteca.lab.runner import execute
        from ludoteca.lab.store import ResultStore

        sub = setting_spec(self.spec, k)
        store = ResultStore(self.directory(k)) if self.out is not None else None
        old = store.open(sub, stop) if store is not None else {}
        key = sub.variants[0].key
        reused = [old[(key, i)] for i in range(start, stop) if (key, i) in old]
        tasks = [(0, i) for i in range(start, stop) if (key, i) not in old]
        lines: list[str] = []
        if reused and self.on_games is not None:
            self.on_games(0, len(reused))

        def on_lines(new: list[str]) -> None:
            if store is not None:
                store.append(new)
            lines.extend(new)
            if self.on_games is not None:
                self.on_games(len(new), 0)

        before = cpu_seconds()
        try:
            execute(sub, tasks, on_lines, jobs=self.jobs, backend=self.backend, address=self.address)
        finally:
            if store is not None:
                store.close()
        cpu = cpu_seconds() - before
        rows = reused + [json.loads(line) for line in lines]
        rows.sort(key=lambda r: int(r["game"]))
        return rows, cpu + self._cost(k, len(tasks), cpu, len(reused))

    def _cost(self, k: int, played: int, cpu: float, reused: int) -> float:
        """Record the CPU cost of setting ``k``'s new games (with ``out``); return the share of the
        recorded cost of the ``reused`` games found on disk."""
        if self.out is None:
            return 0.0
        path = self.directory(k) / COST_FILE
        try:
            cost = json.loads(path.read_text(encoding="utf-8"))
            games, seconds = int(cost["games"]), float(cost["cpu_seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            games, seconds = 0, 0.0
        if played:
            path.write_text(json.dumps({"games": games + played, "cpu_seconds": seconds + cpu}) + "\n",
                            encoding="utf-8")
        return seconds / games * reused if games else 0.0


def build(game: str, vary: Sequence[str], *, players: int | None = None, agents: str | Sequence[str] = "random",
          options: dict[str, Any] | None = None, seed: int = 0) -> RunSpec:
    """The spec of a search: one variant per setting of the ``vary`` grid; different agents rotate
    round the seats. ValueError (one line) on bad input."""
    from ludoteca.lab.plan import build_spec

    specs = agents.split(",") if isinstance(agents, str) else list(agents)
    rotate = len({a.strip() for a in specs}) > 1
    return build_spec(game, players, specs, dict(options or {}), sweeps_for(vary), seed, rotate=rotate, detail=0)


def search(game: str, vary: Sequence[str], *, players: int | None = None, agents: str | Sequence[str] = "random",
           target: str = "seat-advantage", budget: int = 2000, options: dict[str, Any] | None = None,
           seed: int = 0, jobs: int | None = None, backend: str = "local", address: str | None = None,
           out: str | Path | None = None, on_games: Callable[[int, int], None] | None = None,
           on_round: Callable[[RaceResult], None] | None = None) -> RaceResult:
    """``ludoteca balance`` from Python (a notebook, the web lab): the race on real games. With
    ``out``, the games are kept (and reused by the same search later) and ``out/balance.json``
    written. ValueError (one line) on bad input::

        from ludoteca.lab.balance import search
        result = search(GAME, ["OPTION=A,B"], players=2, agents="strong", budget=2000)
        result.best.key, result.best.estimate, (result.best.low, result.best.high)
    """
    chosen = parse_target(target)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(_("--budget takes a whole number of games of 1 or more, not {budget}").format(
            budget=repr(budget)))
    spec = build(game, vary, players=players, agents=agents, options=options, seed=seed)
    keys = [v.key for v in spec.variants]
    plan(len(keys), budget)
    player = GamePlayer(spec, jobs=jobs, backend=backend, address=address, out=out, on_games=on_games)
    result = race(keys, player, chosen, spec.players, budget, on_round=on_round)
    from ludoteca.lab.provenance import provenance

    result.spec = spec
    result.provenance = provenance(spec)
    if out is not None:
        write_result(result, Path(out))
    return result


def write_result(result: RaceResult, out: Path) -> Path:
    """``out/balance.json``: the search's spec, method, provenance, every setting's figures and cost."""
    from ludoteca import __version__

    data: dict[str, Any] = {"format": FORMAT, "version": 1, "ludoteca": __version__,
                            "spec": result.spec.to_json() if result.spec is not None else None}
    data.update(result.to_json())
    for k, entry in enumerate(data["candidates"]):
        entry["directory"] = f"setting-{k + 1:03d}"
    out.mkdir(parents=True, exist_ok=True)
    path = out / RESULT_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
