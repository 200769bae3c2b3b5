"""TRI's compiled engine (Cython, ``_compiled.pyx``), seen from Python.

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
move cannot see (a card choice hiding one is searched by the information-set MCTS in C over
``state.worlds(seat)``: :func:`search_hidden`, which by default plays every decision: :data:`HIDDEN`), and says
so to agents (:data:`SEARCHES_HIDDEN_INFORMATION`).

Every option of TRI is supported (``size`` 2 to 12, ``ties``, ``turn_limit``, ``teleport``
"claim" and "move"); :func:`unsupported` names what the compiled engine cannot play, should a
future option appear.
"""

from __future__ import annotations

import random
from typing import Any

from ludoteca.core.compiled import SEED_MASK, CompiledEngine, CompiledView
from ludoteca.games.tri import BATTLE, RULEBOOK_OPTIONS, Battle, TriGame, TriState, heuristic

try:
    from ludoteca.games.tri import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

SUPPORTED_OPTIONS = frozenset({"players", "size", "ties", "turn_limit", "teleport", *RULEBOOK_OPTIONS})
"""The options the compiled engine plays (all of TRI's, the rulebook's numbers and switches at any
value: start cards, income schedule and die, elimination cards, most dice, teleports)."""


def _bounds(game: TriGame) -> str:
    if game.size > _compiled.MAX_SIZE:
        return f"the compiled TRI engine plays boards of size at most {_compiled.MAX_SIZE}, not {game.size}"
    return ""


def _core(game: TriGame) -> Any:
    """A compiled initial position of ``game``, with every option of its rules."""
    return ENGINE.checked(game).CState(game.size, game.num_players, game.ties_attacker, game.turn_limit,
                                       game.teleport_move, game.teleports, game.start_hand, game.income_every,
                                       game.income_card, game.elimination_cards, game.most_dice)


class CompiledState(CompiledView[TriGame, TriState]):
    """A TRI position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError), events
    are not produced (use the Python engine where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: TriState) -> CompiledState:
        game = state.game
        core = _core(game)
        b = state.battle
        battle = None if b is None else (b.attacker, b.defender, b.target, b.dice, b.step, b.attacker_roll,
                                         b.defender_roll, b.attacker_card, b.defender_card)
        core.load(state.owner, state.hands, state.alive, state.used, state.to_move, state.round, state.turn,
                  state.phase, battle, list(state._counters))
        return cls(game, core)

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


ENGINE: CompiledEngine[TriGame, TriState, CompiledState] = CompiledEngine(
    __name__, "TRI", _compiled, CompiledState, SUPPORTED_OPTIONS, _bounds)
available, unsupported, supports, compile_state, playouts = ENGINE.functions()


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

HIDDEN = "ismcts"
"""How :func:`search` plays a decision: ``"ismcts"``, the information-set MCTS in C (:func:`search_hidden`)
for every decision, the positions where the seat to move sees everything included (one world: the
position itself; below the root each seat still sees only what it observes, so no card choice in the
tree best-responds to a secret), or ``"determinized"``, the earlier search (the compiled MCTS where the
seat sees everything, a root determinization at a hidden card choice: ``worlds`` worlds, root visits
added up; measured weaker: docs/strength.md)."""

ORDERED = True
"""Whether :func:`search_hidden` expands a node's untried actions best first (the cheap ranking's order,
the card model's card first at a card choice), as ``mcts`` does, rather than uniformly at random
(with every decision in this search it scored 0.578 against ``heuristic`` in 400 games where the first
session's search scored 0.547: docs/strength.md)."""

SEARCHES_HIDDEN_INFORMATION = True
"""Declared to ``strong``: :func:`search` reads only what the seat to move may know, and at a battle's
card choice searches the seat's information set in C (:func:`search_hidden`), so ``strong`` plays every
TRI move with it (docs/strength.md: its agreement with a 4,000-iteration ``mcts`` at card choices and
its games against ``mcts``)."""


def search(state: TriState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
           worlds: int = WORLDS, prune: int = PRUNE, heuristic_rollouts: bool = HEURISTIC_ROLLOUTS,
           card_model: bool = CARD_MODEL, hidden_search: str = HIDDEN) -> int:
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
    below the root follow the card model); without it they are clairvoyant. That is
    ``hidden_search="determinized"``; the default, ``"ismcts"`` (:data:`HIDDEN`), plays every decision
    with :func:`search_hidden` instead (``worlds`` and ``card_model`` do not apply to it)."""
    seat = state.current_player()
    hidden = state.worlds(seat) if seat >= 0 else None
    if seat >= 0 and hidden_search == "ismcts":
        return search_hidden(state, iterations, c, cap, seed, evaluate, prune, heuristic_rollouts)
    core = CompiledState.from_state(state)._c if hidden is None and seat >= 0 else None  # one conversion
    only = _candidates(state, prune, core) if seat >= 0 else None
    if card_model and only is None and seat >= 0:  # the root keeps every choice of its own
        only = sorted(core.legal_actions() if core is not None else state.legal_actions())
    if hidden is None and only is None and not heuristic_rollouts:
        assert core is not None
        return int(core.search(iterations, c, cap, seed & SEED_MASK, evaluate))
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
        here = core if core is not None else CompiledState.from_state(world)._c
        root = here.search_root(share, c, cap, rng.getrandbits(64), evaluate, only, heuristic_rollouts, card_model,
                                max(0, prune))
        for action, n, w in root:
            visits[action] = visits.get(action, 0) + n
            sums[action] = sums.get(action, 0.0) + w
    if not visits:  # no simulation asked for: the first action, as the compiled search does
        return int(only[0] if only else state.legal_actions()[0])
    return min(visits, key=lambda a: (-visits[a], -(sums[a] / visits[a] if visits[a] else 0.0), a))


def search_hidden(state: TriState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
                  prune: int = PRUNE, heuristic_rollouts: bool = HEURISTIC_ROLLOUTS, card_model: bool = False,
                  ordered: bool = ORDERED) -> int:
    """The action the information-set MCTS in C (``_ismcts.pxi``) plays from ``state`` for the seat to
    move (``state`` unchanged): one tree per seat over what that seat observes, every simulation on a
    world of ``state.worlds(seat)`` drawn by its weight (the Python ``mcts``'s sampler), ``iterations``
    simulations with constant ``c``, rollouts of at most ``cap`` actions (the light policy with
    ``heuristic_rollouts``) scored by the heuristic's evaluation when cut short, ``prune`` candidates at
    every decision outside a battle below the root; ``card_model`` makes card choices below the root
    play the card model's card instead of being searched; ``ordered`` expands untried actions best first
    (:data:`ORDERED`). A position hiding nothing from the seat is its one world. Seeded: the same seed,
    the same action. It
    never reads what the seat cannot see: the compiled position is built from one of the worlds, and
    the worlds differ only in the seat's unknowns (so the answer is the same whatever they really are).
    RuntimeError when the compiled engine cannot play this game; ValueError at a chance node or at the end."""
    seat = state.current_player()
    if seat < 0:
        raise ValueError("the search needs a position where a player is to move")
    found = state.worlds(seat)
    states, weights = found if found is not None else ([state], [1.0])
    worlds = []
    for world, weight in zip(states, weights, strict=True):
        assert isinstance(world, TriState)
        b = world.battle
        worlds.append((None, None, None, weight) if b is None else
                      (b.attacker_roll, b.defender_roll, b.attacker_card, weight))
    first = states[0]
    assert isinstance(first, TriState)
    core = CompiledState.from_state(first)._c
    return int(core.ismcts(worlds, iterations, c, cap, seed & SEED_MASK, evaluate, heuristic_rollouts,
                           card_model, max(0, prune), ordered))


def _candidates(state: TriState, prune: int, core: Any = None) -> list[int] | None:
    """The root's actions under ``prune`` (the heuristic's best, in ascending order), or None
    when every legal action stays (no pruning, few actions, or a battle choice). ``core``: the
    compiled copy of ``state``, whose ``candidates`` (the same ranking in C) then answers."""
    if prune <= 0:
        return None
    if core is not None and prune <= 32:
        best = core.candidates(prune)
        if len(best) >= len(core.legal_actions()):
            return None
        return sorted(best)
    best = heuristic.candidates(state, prune)
    if len(best) >= len(state.legal_actions()):
        return None
    return sorted(best)

