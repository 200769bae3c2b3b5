"""What the server owner allows the lab to do (``ludoteca serve --lab [--lab-ray ADDRESS] [--lab-jobs N]``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

MAX_GAMES = 20_000
"""Games of one run, every variant together (a balance search: its budget)."""
MAX_ACTIVE = 8
"""Runs queued or running on the server at once (each account: one)."""
MAX_VARIANTS = 12
"""Variants of one comparison (or settings of one search)."""


@dataclass(frozen=True)
class LabSettings:
    """The lab of one server. ``folder``: where each run's files live (``<data folder>/lab``)."""

    folder: str
    ray: str | None = None
    """A Ray cluster's address: runs play there (the lab's Ray backend) instead of local processes."""
    jobs: int = 1
    """Worker processes of the run being played (local processes, niced)."""
    max_games: int = MAX_GAMES
    max_active: int = MAX_ACTIVE
    max_variants: int = MAX_VARIANTS
    tick: float = 1.0
    """Seconds between two looks at the queue and at the progress of the run being played."""
    stale_after: float = 30.0
    """A run whose worker has said nothing for this long is queued again (the worker died)."""

    @classmethod
    def of(cls, value: LabSettings | Mapping[str, Any] | None, data_dir: str | Path | None) -> LabSettings | None:
        """The settings from ``create_app``'s ``lab`` argument (None: the lab is off)."""
        if value is None or isinstance(value, LabSettings):
            return value
        options = dict(value)
        options.setdefault("folder", str(Path(data_dir or "data") / "lab"))
        options["folder"] = str(Path(options["folder"]).resolve())  # the lab's processes run in a run's folder
        return cls(**options)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
