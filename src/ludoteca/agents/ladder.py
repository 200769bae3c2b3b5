"""The measured ratings of the AI levels, read from each game's ``ladder.json``.

``benchmarks/ladder.py`` plays the levels of :mod:`ludoteca.agents.levels` against each other
and writes ``src/ludoteca/games/<game>/ladder.json``; this module reads it. Ratings are on the
scale of :mod:`ludoteca.core.rating` (openskill), the one players are rated on, so an AI seat of
a rated table has a rating (:func:`level_rating`).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from importlib import resources
from typing import Any

from ludoteca.agents.levels import LEVELS, SOLVED_LEVELS, canonical
from ludoteca.core.rating import Rating
from ludoteca.registry import game_class

Rung = tuple[str, Rating, int, int]
"""A level, its rating, and the low and high ends of its displayed 95% interval."""


@lru_cache(maxsize=64)
def _read(game: str) -> dict[str, Any] | None:
    """The game's ``ladder.json`` (next to its engine), or None when it has none or an unreadable one."""
    cls = game_class(game)  # ValueError for an unknown game
    package = sys.modules[cls.__module__].__package__ or cls.__module__
    try:
        text = resources.files(package).joinpath("ladder.json").read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("levels"), dict) else None


def pace(game: str) -> dict[str, Any]:
    """The game's ``pace`` (:mod:`ludoteca.agents.pace`): ``{"counted": key, "turn": {level: cap}}``,
    or {} when its ladder.json has none."""
    data = _read(game)
    value = data.get("pace") if data is not None else None
    return value if isinstance(value, dict) else {}


def turn_cap(game: str, level: str) -> int | None:
    """The most moves ``level`` makes in one turn of ``game`` (its ladder.json's ``pace``), or None."""
    caps = pace(game).get("turn")
    cap = caps.get(level) if isinstance(caps, dict) else None
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else None


def _rung(level: str, entry: Any) -> Rung | None:
    if not isinstance(entry, dict):
        return None
    try:
        rating = Rating(float(entry["mu"]), float(entry["sigma"]), int(entry.get("games", 0)))
        return level, rating, int(entry["low"]), int(entry["high"])
    except (KeyError, TypeError, ValueError):
        return None


def ladder(game: str, players: int = 2) -> list[Rung]:
    """The measured levels of ``game``, weakest first: ``(level, rating, low, high)`` (empty when
    the game has no ladder for ``players`` players)."""
    data = _read(game)
    if data is None or data.get("players", 2) != players:
        return []
    out = []
    for level in (*LEVELS, *SOLVED_LEVELS):  # a solved game's perfect player on the same scale
        rung = _rung(level, data["levels"].get(level))
        if rung is not None:
            out.append(rung)
    return out


def level_rating(game: str, level: str, players: int = 2) -> Rating | None:
    """The measured rating of the AI ``level`` (or an older name: ``heuristic``, ``mcts``) in
    ``game`` with ``players`` players; None when it was not measured (``random``, another player
    count, a game without a ladder)."""
    name = canonical(level)
    for rung in ladder(game, players):
        if rung[0] == name:
            return rung[1]
    return None


def level_summary(game: str, players: int = 2) -> dict[str, dict[str, int]]:
    """``{level: {"rating": display, "low": ..., "high": ...}}`` of ``game``'s measured levels."""
    return {level: {"rating": rating.display, "low": low, "high": high}
            for level, rating, low, high in ladder(game, players)}
