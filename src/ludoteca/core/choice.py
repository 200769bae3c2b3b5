"""Choosing among scored actions: shared by every game's heuristic."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable

from ludoteca.core.game import Action


def best_of(actions: Iterable[Action], score: Callable[[Action], float], rng: random.Random) -> Action:
    """The action of highest ``score`` (within 1e-9); ties broken uniformly with ``rng``."""
    best: list[Action] = []
    best_v = -math.inf
    for a in actions:
        v = score(a)
        if v > best_v + 1e-9:
            best_v, best = v, [a]
        elif v > best_v - 1e-9:
            best.append(a)
    return best[rng.randrange(len(best))] if len(best) > 1 else best[0]
