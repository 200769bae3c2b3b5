"""The lab from Python (a notebook, a script): ``ludoteca.lab.run(...)`` plays a run as ``ludoteca lab``
does — the same spec, seeds, rows and summary — and returns them as Python values::

    from ludoteca import lab
    result = lab.run(GAME, players=2, agents="strong", games=2000, sweep=["layout=default,my.json"])
    result.summary["variants"][0]["first_player"]     # the figures of summary.json
    df = result.dataframe()                           # one row per game (pandas, if installed)
    result.to_csv("games.csv")

With ``out=DIR`` the run is stored and resumable just like the command's (``run.json``,
``games.jsonl``): the command line and a notebook can continue each other's runs.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ludoteca.lab.runner import Row, RunSpec

ROW_FIELDS_FIRST = ("variant", "game", "seed", "players", "turns", "rounds", "end", "winners", "returns", "scores")
"""The columns a CSV starts with (when the rows have them); the others follow in sorted order."""


@dataclass
class LabResult:
    """A run's rows (one dict per game), its summary (summary.json's dict) and its spec."""

    spec: RunSpec
    rows: list[Row]
    summary: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)

    def dataframe(self) -> Any:
        """The rows as a pandas DataFrame (lists and dicts of a row kept as Python objects)."""
        import importlib

        try:
            pd = importlib.import_module("pandas")
        except ImportError:
            raise ImportError("LabResult.dataframe() needs pandas: pip install pandas") from None
        return pd.DataFrame.from_records([dict(r) for r in self.rows])

    def to_csv(self, path: str | Path | None = None) -> str:
        """The rows as CSV (nested values as JSON); written to ``path`` when given. Returns the text."""
        return rows_to_csv(self.rows, path)


def csv_columns(rows: Sequence[Row]) -> list[str]:
    keys: set[str] = set()
    for r in rows:
        keys.update(r)
    first = [k for k in ROW_FIELDS_FIRST if k in keys]
    return first + sorted(keys - set(first))


def rows_to_csv(rows: Sequence[Row], path: str | Path | None = None) -> str:
    """CSV of lab rows: a header of every field, one line per game; lists and dicts as JSON."""
    columns = csv_columns(rows)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in rows:
        writer.writerow([_cell(r.get(c)) for c in columns])
    text = buf.getvalue()
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | dict | tuple):
        return json.dumps(value, separators=(",", ":"))
    return value


def run(game: str, *, players: int | None = None, agents: str | Sequence[str] = "random", games: int = 1000,
        options: dict[str, Any] | None = None, sweep: Sequence[str] = (), seed: int = 0, rotate: bool = False,
        detail: int = 8, jobs: int | None = None, backend: str = "local", address: str | None = None,
        out: str | Path | None = None, progress: bool = False) -> LabResult:
    """Play a lab run and summarise it (the arguments of ``ludoteca lab``; ``agents`` as a list or the
    comma-separated text). ValueError (one line) on bad input, as the command says it."""
    from ludoteca.lab.metrics import summarise
    from ludoteca.lab.plan import build_spec
    from ludoteca.lab.session import run_spec

    if isinstance(agents, str):
        agents = agents.split(",")
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ValueError(f"games must be a whole number of 1 or more, not {games!r}")
    spec = build_spec(game, players, list(agents), dict(options or {}), list(sweep), seed, rotate=rotate,
                      detail=detail)
    if rotate and games % spec.rotation_period:
        games += spec.rotation_period - games % spec.rotation_period
    outcome = run_spec(spec, games, out=out, jobs=jobs, backend=backend, address=address, progress=progress)
    summary = summarise(spec, outcome.rows, games)
    made = outcome.extra.get("provenance") or {}
    summary["provenance"] = made
    return LabResult(spec, outcome.rows, summary, made)
