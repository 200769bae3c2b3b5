"""Shared test fixtures and helpers.

The tests run on every game the registry finds *and* on the example game (``games/_example``, found
only when ``LUDOTECA_EXAMPLE_GAMES=1``): set here, before ludoteca is imported, so the cross-game
tests are parametrised over it too, and inherited by every server or command a test starts. What the
tests need to know of a game they read from its class (``min_players``, ``max_players``,
``clock_option``, ``OPTIONS``, ``agent_defaults``) or from the hints of its package (:func:`hint`),
never from a table of names here.
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ["LUDOTECA_EXAMPLE_GAMES"] = "1"

import ludoteca
from ludoteca.core.chance import random_action
from ludoteca.core.game import State
from tests.ci_required import pytest_make_collect_report, pytest_runtest_makereport  # noqa: F401  (CI: no skips)

_worker_database = contextlib.ExitStack()


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (``-n N``: ``PYTEST_XDIST_WORKER`` is set), each worker process gets a
    PostgreSQL database of its own on the server of ``LUDOTECA_TEST_POSTGRES_URL`` (a fresh one,
    dropped when the worker ends), set in that variable before any test module reads it: the tests
    that use the server's test database take turns in one process, but must not share it at the same
    time (a server one test restarts would resume the tables another test is playing)."""
    url = os.environ.get("LUDOTECA_TEST_POSTGRES_URL")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not url or not worker:
        return
    from ludoteca.web.launch import fresh_database

    try:
        own = _worker_database.enter_context(fresh_database(url, f"ludoteca_test_{worker}"))
    except Exception:  # (psycopg's errors) no server there: nothing to share, its tests say what is wrong
        return
    os.environ["LUDOTECA_TEST_POSTGRES_URL"] = own


def pytest_unconfigure(config: pytest.Config) -> None:
    _worker_database.close()


def player_counts(game: str) -> range:
    """Every player count ``game`` supports (its class's ``min_players`` to ``max_players``)."""
    cls = ludoteca.game_class(game)
    return range(cls.min_players, cls.max_players + 1)


GAME_CASES = [(g, n) for g in ludoteca.GAMES for n in player_counts(g)]
"""Every game with every player count it supports."""


def options_for(game: str, players: int) -> dict[str, Any]:
    """Options for random play: ``players``, and no clock for a game that has one (``clock_option``)."""
    opts: dict[str, Any] = {"players": players}
    clock = ludoteca.game_class(game).clock_option
    if clock is not None:
        opts[clock] = None
    return opts


def random_states(state: State, rng: random.Random, max_actions: int = 3000) -> Iterator[tuple[State, object]]:
    """Play ``state`` randomly, yielding ``(state_before, action)`` for each action."""
    for _ in range(max_actions):
        if state.is_terminal():
            return
        action = random_action(state, rng)
        yield state, action
        state.apply_action(action)


def hint(game: str, name: str, default: Any) -> Any:
    """A test hint of ``game`` no class attribute answers: the value ``name`` of the optional module
    ``testing`` of the game's package (``games/<g>/testing.py``, found with ``Game.part``), else
    ``default``. The hints (docs/architecture.md, "Adding a game"): ``PROPERTY_GAMES`` (random games per
    player count in the property tests; 12), ``VARIANTS`` (option sets the property tests cycle
    through; ``({},)``), ``MCTS_SMALL`` (a small MCTS for behaviour tests; ``"mcts:iterations=12:cap=8"``),
    ``SHORT_OPTIONS`` (options by player count that keep random games short; ``{}``),
    ``RANDOM_PLAY_SLOW`` (random play is slow: the adapters' API checks run fewer cycles; False),
    ``CLIENT_GAME`` (the seeded game whose log the browser client's texts are checked on),
    ``GUIDE_SHOT_STEP`` (the guide step the browser tests photograph; 1) and ``taps(action)`` (the CSS
    selectors the browser tests tap to make an action of the guide, for a game they do not know)."""
    module = ludoteca.game_class(game).part("testing")
    return getattr(module, name, default) if module is not None else default


def short_options(game: str, players: int) -> dict[str, Any]:
    """The options of :func:`options_for` and those of the game's ``SHORT_OPTIONS`` hint for ``players``."""
    return {**options_for(game, players), **hint(game, "SHORT_OPTIONS", {}).get(players, {})}


def players_near(game: str, wanted: int) -> int:
    """``wanted`` players, or the nearest count ``game`` supports."""
    cls = ludoteca.game_class(game)
    return max(cls.min_players, min(wanted, cls.max_players))


def game_dir(game: str) -> Path:
    """The folder of ``game``'s package (``games/<g>/``; the example's is ``games/_example``)."""
    from ludoteca.i18n import game_dir as folder

    return folder(game)
