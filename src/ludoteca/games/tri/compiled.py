"""TRI's compiled engine (Cython, ``_compiled.pyx``), seen from Python (issue 15).

The compiled engine plays exactly the rules of the Python engine (``ludoteca.games.tri``: the
readable reference) on C arrays: the same legal actions (the same ids in the same order), the same
chance outcomes and probabilities, the same positions (``to_json``), counters and returns —
``tests/test_compiled_tri.py`` proves it over thousands of seeded games per player count, random
options and every golden playthrough. Like the Python state it holds the true position (battle
rolls and cards included); hiding them is the Python side's business (``observation``, ``worlds``).
Its use is random playouts in C, for the lab and MCTS rollouts::

    from ludoteca.games.tri import compiled
    returns = compiled.playouts(state, 1000, seed=7)   # [[r0, r1, ...], ...], one per playout

:func:`available` says whether the extension is built (see docs/compiled.md). When it is not,
:func:`playouts` logs one warning and plays the playouts with the Python engine (the same
distribution; other random numbers).

:func:`search` is the compiled MCTS (``core/_mcts.pxi``) on this engine, with ``_value`` (the mirror of
``heuristic.value``) scoring the rollouts it cuts short; it never reads a battle secret the seat to
move cannot see (it searches determinizations of ``state.worlds(seat)``), and says so to agents
(:data:`SEARCHES_HIDDEN_INFORMATION`).

Every option of TRI is supported (``size`` 2 to 12, ``ties``, ``turn_limit``, ``teleport``
"claim" and "move"); :func:`unsupported` names what the compiled engine cannot play, should a
future option appear.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, python_playouts
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.tri import BATTLE, RULEBOOK_OPTIONS, Battle, TriGame, TriState, heuristic

try:
    from ludoteca.games.tri import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SUPPORTED_OPTIONS = frozenset({"players", "size", "ties", "turn_limit", "teleport", *RULEBOOK_OPTIONS})
"""The options the compiled engine plays (all of TRI's, the rulebook's numbers and switches at any
value: start cards, income schedule and die, elimination cards, most dice, teleports)."""

_warned = False


def available() -> bool:
    """True when the compiled extension is built and importable."""
    return _compiled is not None


def unsupported(game: TriGame) -> str:
    """Why the compiled engine cannot play ``game`` ("" when it can)."""
    if _compiled is None:
        return "the compiled TRI engine is not built (see docs/compiled.md)"
    extra = sorted(set(game.options) - SUPPORTED_OPTIONS)
    if extra:
        return f"the compiled TRI engine does not support the option(s) {', '.join(extra)}"
    if game.size > _compiled.MAX_SIZE:
        return f"the compiled TRI engine plays boards of size at most {_compiled.MAX_SIZE}, not {game.size}"
    if game.num_players > _compiled.MAX_PLAYERS:
        return f"the compiled TRI engine plays at most {_compiled.MAX_PLAYERS} players"
    return ""


def _core(game: TriGame) -> Any:
    """A compiled initial position of ``game``, with every option of its rules."""
    return _compiled.CState(game.size, game.num_players, game.ties_attacker, game.turn_limit, game.teleport_move,
                            game.teleports, game.start_hand, game.income_every, game.income_card,
                            game.elimination_cards, game.most_dice)


def supports(game: TriGame) -> bool:
    """True when :func:`unsupported` has nothing to say: callers then may use the compiled engine."""
    return not unsupported(game)


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("%s; using the Python TRI engine (slower)", reason)


class CompiledState(CompiledView[TriGame]):
    """A TRI position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError), events
    are not produced (use the Python engine where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: TriState) -> CompiledState:
        game = state.game
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
        core = _core(game)
        b = state.battle
        battle = None if b is None else (b.attacker, b.defender, b.target, b.dice, b.step, b.attacker_roll,
                                         b.defender_roll, b.attacker_card, b.defender_card)
        core.load(state.owner, state.hands, state.alive, state.used, state.to_move, state.round, state.turn,
                  state.phase, battle, list(state._counters))
        return cls(game, core)

    @classmethod
    def from_json(cls, game: TriGame, data: Mapping[str, Any]) -> CompiledState:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(game.state_from_json(data))

    @classmethod
    def initial(cls, game: TriGame) -> CompiledState:
        return cls.from_state(game.new_initial_state())

    def to_state(self) -> TriState:
        """The same position as a Python state (counters included)."""
        owner, hands, alive, used, to_move, rnd, turn, phase, battle, counters = self._c.fields()
        g = self.game
        s = TriState(g, blank=True)
        s.owner = owner
        s.owned = [set() for _ in range(g.num_players)]
        for t, o in enumerate(owner):
            if o >= 0:
                s.owned[o].add(t)
        s.hands = hands
        s.alive = alive
        s.n_alive = sum(alive)
        s.empty = owner.count(-1)
        s.used = used
        s.to_move = to_move
        s.round = rnd
        s.turn = turn
        s.phase = phase
        s.battle = None if battle is None or phase != BATTLE else Battle(*battle)
        s._counters = counters
        return s

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        return self.to_state().to_json()

    def counters(self) -> dict[str, float]:
        return self.to_state().counters()

    def apply_action(self, action: int) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        if self._c.is_terminal():
            raise IllegalActionError("the game is over")
        if isinstance(action, bool) or not isinstance(action, int) or action not in self._c.legal_actions():
            raise IllegalActionError(f"{action!r} is not legal here")
        self._c.apply(action)

    def value(self) -> list[float]:
        """``ludoteca.games.tri.heuristic.value`` of this position, in C: winning chances per seat
        (the leaf evaluation of TRI's MCTS)."""
        return list(self._c.value())


def compile_state(state: TriState) -> CompiledState | None:
    """The compiled copy of ``state``, or None (with one warning per process) when the compiled
    engine is not built or cannot play this game: the caller then uses the Python engine."""
    reason = unsupported(state.game)
    if reason:
        _warn_once(reason)
        return None
    return CompiledState.from_state(state)


PRUNE = 8
"""How many of the heuristic's best candidates every decision node of :func:`search` considers by
default (``mcts``'s ``prune`` for TRI), battle choices apart."""

HEURISTIC_ROLLOUTS = True
"""Whether :func:`search` rolls out with the light policy (``heuristic.rollout``, in C) by default,
as ``mcts`` does for TRI (``rollout=heuristic``), rather than with uniformly random actions."""

WORLDS = 8
"""How many determinizations a search of a hidden position samples (by weight, with replacement):
the iterations are split evenly among them."""

CARD_MODEL = True
"""Whether every card choice below the root of :func:`search` plays the card model's card
(``heuristic.card_choice``: from the chooser's own roll and the public hands) instead of branching:
on a determinized world a branching choice would see the other side's secret card or roll and
best-respond to it (a clairvoyant opponent makes every attack look worse than it is)."""

SEARCHES_HIDDEN_INFORMATION = False
"""Not declared to ``strong``: :func:`search` reads only what the seat to move may know (at a battle's
card choice it determinizes over ``state.worlds(seat)``), but that determinized search was measured
weaker than the Python information-set ``mcts`` at card choices (77 card choices of heuristic games
against a 4,000-iteration ``mcts``: 33-55 agreements for its variants, 67 for ``mcts``; docs/strength.md),
so ``strong`` plays those moves with the Python ``mcts`` and every other move with :func:`search`."""


def search(state: TriState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
           worlds: int = WORLDS, prune: int = PRUNE, heuristic_rollouts: bool = HEURISTIC_ROLLOUTS,
           card_model: bool = CARD_MODEL) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged): ``iterations`` UCT simulations with constant ``c``, rollouts of at most ``cap``
    actions scored by the heuristic's evaluation (``heuristic.value``, in C) when cut short
    (``evaluate=False``: even shares), seeded by ``seed`` (the same seed, the same action).
    ``prune`` > 0 limits every decision node to the heuristic's ``prune`` best candidates
    (``heuristic.candidates``, as ``mcts``'s ``prune``; battle choices keep every card; the root's
    are computed in Python, the others in C);
    ``heuristic_rollouts`` plays the rollouts with the light policy (``heuristic.rollout`` in C:
    a random action a quarter of the time, else the cheap ranking's best, the card model's card);
    ``card_model`` makes every card choice below the root play the card model's card (:data:`CARD_MODEL`).
    RuntimeError when the compiled engine cannot play this game (:func:`unsupported`); ValueError
    at a chance node or at the end.

    It never reads what the seat to move cannot see. When ``state.worlds(seat)`` is None (no
    battle secret hidden from the seat) it searches ``state`` itself; otherwise it determinizes
    (perfect-information Monte Carlo at the root): ``worlds`` worlds drawn by weight (seeded), the
    iterations split among them, one compiled search per world, the root visits and returns added
    up per action; the most visited action is played (ties: the better mean, then the smaller id).
    With ``card_model`` no choice inside a world's tree reads that world's secrets (the card choices
    below the root follow the card model); without it they are clairvoyant."""
    seat = state.current_player()
    hidden = state.worlds(seat) if seat >= 0 else None
    only = _candidates(state, prune) if seat >= 0 else None
    if card_model and only is None and seat >= 0:  # the root keeps every choice of its own
        only = sorted(state.legal_actions())
    if hidden is None and only is None and not heuristic_rollouts:
        return int(CompiledState.from_state(state)._c.search(iterations, c, cap, seed & 0xFFFFFFFFFFFFFFFF,
                                                             evaluate))
    states, weights = hidden if hidden is not None else ([state], [1.0])
    rng = random.Random(seed)
    count = max(1, min(worlds, iterations)) if hidden is not None else 1
    picks = rng.choices(range(len(states)), weights=weights, k=count)
    visits: dict[int, int] = {}
    sums: dict[int, float] = {}
    for j, k in enumerate(picks):
        share = iterations // count + (1 if j < iterations % count else 0)
        world = states[k]
        assert isinstance(world, TriState)
        root = CompiledState.from_state(world)._c.search_root(share, c, cap, rng.getrandbits(64), evaluate, only,
                                                              heuristic_rollouts, card_model, max(0, prune))
        for action, n, w in root:
            visits[action] = visits.get(action, 0) + n
            sums[action] = sums.get(action, 0.0) + w
    if not visits:  # no simulation asked for: the first action, as the compiled search does
        return int(only[0] if only else state.legal_actions()[0])
    return min(visits, key=lambda a: (-visits[a], -(sums[a] / visits[a] if visits[a] else 0.0), a))


def _candidates(state: TriState, prune: int) -> list[int] | None:
    """The root's actions under ``prune`` (the heuristic's best, in ascending order), or None
    when every legal action stays (no pruning, few actions, or a battle choice)."""
    if prune <= 0:
        return None
    best = heuristic.candidates(state, prune)
    if len(best) >= len(state.legal_actions()):
        return None
    return sorted(best)


def playouts(state: TriState, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

    In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
    one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
    games, other random numbers, so other results for the same seed."""
    c = compile_state(state)
    if c is not None:
        return c.playouts(n, seed)
    return python_playouts(state, n, seed)
