"""Running a spec with a progress bar, optionally stored in a run directory (resumable).

The one piece of machinery behind both ``ludoteca lab`` and ``ludoteca arena``."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ludoteca.core.i18n import _
from ludoteca.core.i18n import _ as translate  # a text made elsewhere (not for the extractor)
from ludoteca.lab.runner import CONNECT_TIMEOUT, Row, RunSpec, default_jobs, execute
from ludoteca.lab.store import ResultStore, row_key

ANNOUNCE_AFTER = 120.0
"""A run announces its estimated length when it would last longer than this (seconds)."""
ESTIMATE_GAMES = 8
"""Games timed before the estimate (at least two per job)."""


def estimate_text(total: int, done: int, seconds: float) -> str:
    """``About 3 h 10 min for 10,000 games (1.2 s a game on the first 16; …)`` in the current language."""
    from ludoteca.lab.report import dec, plural

    per_game = seconds / max(1, done)
    left = per_game * max(0, total - done)
    return _("About {time} for {games} ({seconds} s a game on the first {done}); Ctrl-C stops, the same "
             "command resumes.").format(time=duration_text(left), games=plural(total, "game"),
                                        seconds=dec(per_game, 2), done=done)


def duration_text(seconds: float) -> str:
    """``"45 s"``, ``"12 min"``, ``"3 h 10 min"``."""
    if seconds < 90:
        return _("{n} s").format(n=round(seconds))
    minutes = round(seconds / 60)
    if minutes < 90:
        return _("{n} min").format(n=minutes)
    return _("{h} h {m} min").format(h=minutes // 60, m=minutes % 60)


@dataclass
class Outcome:
    """What a session did: every row of the run (old and new) and how fast the new ones came."""

    rows: list[Row]
    played: int
    resumed: int
    seconds: float
    jobs: int
    backend: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.played / self.seconds if self.seconds > 0 else 0.0


def _progress(console: Any, total: int, done: int) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            from ludoteca.lab.report import dec

            if speed is None:
                return Text(_("? games/s"))
            return Text(_("{rate} games/s").format(rate=dec(speed, 1, group=True)))

    return Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        RateColumn(), TimeElapsedColumn(), TextColumn(_("left")), TimeRemainingColumn(),
        console=console, transient=False,
    )


def run_spec(
    spec: RunSpec,
    games: int,
    *,
    out: str | Path | None = None,
    jobs: int | None = None,
    backend: str = "local",
    address: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
    progress: bool = True,
    console: Any = None,
    description: str = "games",
    announce_after: float = ANNOUNCE_AFTER,
) -> Outcome:
    """Play the games of ``spec`` not yet in ``out`` (all of them without ``out``). With a progress bar,
    a run whose first games say it will last more than ``announce_after`` seconds prints its estimate
    once (:func:`estimate_text`) as soon as it can tell."""
    store = ResultStore(out) if out is not None else None
    done: dict[tuple[str, int], Row] = store.open(spec, games) if store else {}
    tasks = [(v, i) for v, i in spec.tasks(games) if (spec.variants[v].key, i) not in done]
    rows: list[Row] = list(done.values())
    total = games * len(spec.variants)
    already = total - len(tasks)
    jobs = jobs or default_jobs()
    bar = None
    task_id = None
    if progress:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        bar = _progress(console, total, already)
        task_id = bar.add_task(translate(description), total=total, completed=already)
        bar.start()

    lines: list[str] = []
    told = False
    enough = max(ESTIMATE_GAMES, 2 * jobs)

    def on_lines(new: list[str]) -> None:
        nonlocal told
        if store is not None:
            store.append(new)
        lines.extend(new)
        if bar is not None:
            bar.update(task_id, advance=len(new))
            if not told and len(lines) >= min(enough, len(tasks)):
                told = True
                elapsed = time.perf_counter() - start
                left = elapsed / len(lines) * (len(tasks) - len(lines))
                if left > announce_after:
                    bar.console.print(estimate_text(len(tasks), len(lines), elapsed))

    start = time.perf_counter()
    try:
        execute(spec, tasks, on_lines, jobs=jobs, backend=backend, address=address,
                connect_timeout=connect_timeout)
    finally:
        if bar is not None:
            bar.stop()
        if store is not None:
            store.close()
    seconds = time.perf_counter() - start
    rows.extend(json.loads(line) for line in lines)
    keep = {v.key for v in spec.variants}
    unique = {row_key(r): r for r in rows if r["variant"] in keep and r["game"] < games}
    order = {v.key: k for k, v in enumerate(spec.variants)}
    final = sorted(unique.values(), key=lambda r: (r["game"], order[r["variant"]]))
    if store is not None:
        made = store.provenance
    else:
        from ludoteca.lab.provenance import provenance

        made = provenance(spec)
    return Outcome(final, len(tasks), already, seconds, jobs, backend, {"provenance": made})
