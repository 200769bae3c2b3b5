"""The compiled search's ``_search`` (core/_mcts.pxi) is pinned: seeded searches on fixed TOHM and
exactly positions return the actions and statistics (simulations, nodes grown, rollout actions)
recorded before the root statistics for hidden-information games (TRI's determinized search) were
added to the include file. Any change of ``_search``'s behaviour — its random numbers, expansion
order, UCT, backup or final choice — moves at least one of these numbers."""

from __future__ import annotations

import random
from typing import Any

import pytest

import ludoteca
from ludoteca.core.chance import random_action
from ludoteca.core.game import State
from ludoteca.games.exactly import compiled as exactly_compiled
from ludoteca.games.tohm import compiled as tohm_compiled

MODULES: dict[str, Any] = {"tohm": tohm_compiled, "exactly": exactly_compiled}

needs_compiled = pytest.mark.skipif(not (tohm_compiled.available() and exactly_compiled.available()),
                                    reason="compiled engines not built (pip install -e .)")
pytestmark = pytest.mark.compiled

Stats = tuple[int, int, int]
# per (game, players): for each position, (action, stats) with evaluation, iterations 300, c 0.4,
# cap 10, seed 1000 + i; then (action, stats) without evaluation, c 0.7, cap 20, seed 2000 + i
PINNED: dict[tuple[str, int], list[tuple[int, Stats, int, Stats]]] = {
    ("tohm", 2): [(8, (300, 514, 3000), 8, (300, 496, 6000)), (7, (300, 497, 3000), 7, (300, 506, 6000)),
                  (15, (300, 490, 3000), 11, (300, 491, 6000)), (97, (300, 511, 3000), 70, (300, 495, 6000))],
    ("tohm", 3): [(8, (300, 491, 3000), 8, (300, 497, 6000)), (21, (300, 485, 3000), 21, (300, 477, 6000)),
                  (117, (300, 489, 3000), 67, (300, 487, 6000)), (53, (300, 510, 3000), 45, (300, 509, 6000))],
    ("exactly", 2): [(18, (300, 500, 3000), 17, (300, 524, 6000)), (21, (300, 467, 3000), 17, (300, 495, 6000)),
                     (19, (300, 504, 3000), 17, (300, 471, 6000)), (36, (300, 492, 3000), 35, (300, 513, 6000))],
    ("exactly", 3): [(20, (300, 476, 3000), 8, (300, 468, 6000)), (64, (300, 492, 3000), 62, (300, 455, 6000)),
                     (67, (300, 426, 3000), 57, (300, 397, 6000)), (26, (300, 483, 3000), 24, (300, 456, 6000))],
}


def _positions(name: str, players: int) -> list[State]:
    """Four decision positions of one seeded random game: every 7th position with a choice."""
    game = ludoteca.load_game(name, players=players)
    rng = random.Random(11 + players)
    s = game.new_initial_state()
    out: list[State] = []
    k = 0
    while not s.is_terminal() and len(out) < 4:
        if not s.is_chance_node() and len(s.legal_actions()) > 1:
            k += 1
            if k % 7 == 1:
                out.append(s.clone())
        s.apply_action(random_action(s, rng))
    return out


@needs_compiled
@pytest.mark.parametrize(("name", "players"), sorted(PINNED))
def test_seeded_searches_return_the_recorded_actions(name: str, players: int) -> None:
    module = MODULES[name]
    found = []
    for i, s in enumerate(_positions(name, players)):
        core = module.CompiledState.from_state(s)._c
        a = core.search(300, 0.4, 10, 1000 + i, True)
        first = core.last_stats
        b = core.search(300, 0.7, 20, 2000 + i, False)
        found.append((a, first, b, core.last_stats))
        assert module.search(s, 300, 0.4, 10, 1000 + i) == a  # the module's face is the same search
    assert found == PINNED[name, players]
