"""Chance helpers: sampling outcomes with an explicit random generator."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ludoteca.core.game import Action, State


def sample_outcome(outcomes: Sequence[tuple[Action, float]], rng: random.Random) -> Action:
    """Pick one outcome of ``[(outcome, probability)]`` with ``rng``."""
    return outcome_at(outcomes, rng.random())


def outcome_at(outcomes: Sequence[tuple[Action, float]], x: float) -> Action:
    """The outcome of ``[(outcome, probability)]`` at cumulative probability ``x`` in [0, 1)."""
    acc = 0.0
    for action, p in outcomes:
        acc += p
        if x < acc:
            return action
    return outcomes[-1][0]


def sample_chance(state: State, rng: random.Random) -> Action:
    """Sample the outcome of the chance node ``state`` with ``rng``."""
    return sample_outcome(state.chance_outcomes(), rng)


def random_action(state: State, rng: random.Random) -> Action:
    """A chance outcome sampled by its probability, or a uniformly random legal action."""
    if state.is_chance_node():
        return sample_chance(state, rng)
    legal = state.legal_actions()
    return legal[rng.randrange(len(legal))]


def random_playout(state: State, rng: random.Random, max_actions: int | None = None) -> int:
    """Play ``state`` to the end with uniformly random moves; return the number of actions."""
    n = 0
    while not state.is_terminal():
        if max_actions is not None and n >= max_actions:
            break
        state.apply_action(random_action(state, rng))
        n += 1
    return n
