"""EXAGON's compiled engine (Cython, ``_compiled.pyx``), seen from Python (issue 15).

The compiled engine plays exactly the rules of the Python engine (``ludoteca.games.exagon``: the
readable reference) on C arrays: the same legal actions (the same ids in the same order), the same
chance outcomes and probabilities, the same positions (``to_json``) and returns —
``tests/test_compiled_exagon.py`` proves it over thousands of seeded games per player count and
every golden playthrough. Its uses are random playouts in C, and the compiled MCTS of the
``strong`` agent (``core/_mcts.pxi``, found through ``ExagonGame.compiled()``), whose rollouts cut
short are scored by ``heuristic.value`` in C::

    from ludoteca.games.exagon import compiled
    returns = compiled.playouts(state, 1000, seed=7)   # [[r0, r1, ...], ...], one per playout
    action = compiled.search(state, 3000, 0.3, 0, seed=7)   # a player to move in ``state``

:func:`available` says whether the extension is built (see docs/compiled.md). When it is not, or
when the game is beyond it, :func:`playouts` logs one warning and plays the playouts with the
Python engine (the same distribution; other random numbers).

Every option of EXAGON is supported — ``clock`` (the hourglass: ``time_left`` and ``carry`` are
mirrored, and the timeout; ``elapsed`` through :meth:`CompiledState.apply_action`), ``carry_cap``,
``matching`` (lenient: the open cells keep what fits *any* neighbour, and the connections are
counted per tile and rotation), ``tournament``, ``tournament_games``, ``turn_limit``, ``tiles`` —
except tile sets of more than 40 tiles (the default set and the seed's have 40) and bounds beyond a
C int: :func:`unsupported` names them, and the Python engine plays those. The search plays with
every one of them: the hourglass is the host's (``elapsed``, the timeout), never a
choice of the player, so the search reads the position's moves and ignores the time, as the
Python ``mcts`` does.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, python_playouts
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.exagon import (
    COUNTERS,
    END_REASONS,
    OVER,
    PHASES,
    TURN,
    ExagonGame,
    ExagonState,
    _check_seconds,
    _option_keys,
)

try:
    from ludoteca.games.exagon import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SUPPORTED_OPTIONS = frozenset({"players", "clock", "tiles", "tournament", "turn_limit", "tournament_games", "matching",
                               "carry_cap", "hand", "bonus_3", "bonus_4", "bonus_5", "go_on", "tournament_target",
                               "win_points", "jolly_penalty"})
"""The options the compiled engine plays (all of EXAGON's; ``tiles`` up to 40 tiles)."""

COUNTER_NAMES = tuple(c.name for c in COUNTERS)
C_INT_MAX = 2**31 - 1
"""The largest turn_limit and tournament_games the compiled engine holds (a C int)."""
SEARCH_PRUNE = 8
"""Actions per node of the compiled search: the heuristic's best 8 (``mcts``'s ``prune`` for EXAGON)."""
SEARCH_GREEDY = True
"""Rollouts of the compiled search follow the heuristic's greedy choice (``rollout=heuristic``)."""

_warned = False
_templates: weakref.WeakKeyDictionary[ExagonGame, _compiled.CState] = weakref.WeakKeyDictionary()
"""The initial compiled state of each game (its constant tables are built once, then copied)."""


def available() -> bool:
    """True when the compiled extension is built and importable."""
    return _compiled is not None


def unsupported(game: ExagonGame) -> str:
    """Why the compiled engine cannot play ``game`` ("" when it can)."""
    if _compiled is None:
        return "the compiled EXAGON engine is not built (see docs/compiled.md)"
    extra = sorted(set(game.options) - SUPPORTED_OPTIONS)
    if extra:
        return f"the compiled EXAGON engine does not support the option(s) {', '.join(extra)}"
    if game.n_tiles > _compiled.MAX_TILES:
        return (f"the compiled EXAGON engine plays tile sets of at most {_compiled.MAX_TILES} tiles, "
                f"not {game.n_tiles}")
    if game.num_players > _compiled.MAX_PLAYERS:
        return f"the compiled EXAGON engine plays at most {_compiled.MAX_PLAYERS} players"
    for name in ("turn_limit", "tournament_games"):
        if game.options[name] > C_INT_MAX:
            return f"the compiled EXAGON engine takes {name} up to {C_INT_MAX}, not {game.options[name]}"
    return ""


def supports(game: ExagonGame) -> bool:
    """True when :func:`unsupported` has nothing to say: callers then may use the compiled engine."""
    return not unsupported(game)


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        log.warning("%s; using the Python EXAGON engine (slower)", reason)


def _template(game: ExagonGame) -> _compiled.CState:
    core = _templates.get(game)
    if core is None:
        core = _compiled.CState(game.sides, game.star, game.penalty, game.nummask, game.num_players,
                                game.hourglass, game.tournament, game.turn_limit, game.radius, game.tournament_games,
                                game.lenient, game.carry_cap, game.per_seat, game.bonus_for[3:6], game.go_on,
                                game.tournament_target, game.win_points)
        _templates[game] = core
    return core


class CompiledState(CompiledView[ExagonGame]):
    """An EXAGON position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError) and
    takes ``elapsed`` as the Python engine does; events are not produced (use the Python engine
    where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: ExagonState) -> CompiledState:
        game = state.game
        reason = unsupported(game)
        if reason:
            raise RuntimeError(reason)
        core = _template(game).copy()
        result = state.result
        core.load(state.phase, state.owner, state.hands, state.aside, state.table, state.dealt, state.to_move,
                  state.turn, state.placed, state.bonus, state.passes, state.clock_left, state.carry, state.points,
                  None if result is None else result["winners"],
                  0 if result is None else END_REASONS.index(result["end"]),
                  tuple(state.counts[name] for name in COUNTER_NAMES), state.games or 0)
        return cls(game, core)

    @classmethod
    def from_json(cls, game: ExagonGame, data: Mapping[str, Any]) -> CompiledState:
        """A position JSON, read (and checked) by the Python engine, then compiled."""
        return cls.from_state(game.state_from_json(data))

    @classmethod
    def initial(cls, game: ExagonGame) -> CompiledState:
        return cls.from_state(game.new_initial_state())

    def to_state(self) -> ExagonState:
        """The same position as a Python state (counters included)."""
        (phase, owner, hands, aside, table, dealt, to_move, turn, placed, bonus, passes, time_left, carry, points,
         winners, end, counts, games) = self._c.fields()
        g = self.game
        s = ExagonState(g)
        s.phase = phase
        s.owner = owner
        s.hands = hands
        s.aside = aside
        s.table = table
        s.board = {c: (t, k) for t, c, k in table}
        s.cand = {}
        for c in s.board:
            for _side, nc in g.nbrs[c]:
                if nc not in s.board and nc not in s.cand:
                    s._open(nc)
        s.dealt = dealt
        s.to_move, s.turn, s.placed, s.bonus, s.passes = to_move, turn, placed, bonus, passes
        s.clock_left, s.carry = time_left, carry
        s.points = points
        s.games = games
        s.result = None if winners is None else {"winners": winners, "end": END_REASONS[end]}
        s.counts = dict(zip(COUNTER_NAMES, counts, strict=True))
        return s

    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON, the Python engine's ``to_json`` field for field."""
        g = self.game
        (phase, _owner, hands, aside, table, _dealt, to_move, turn, placed, bonus, passes, time_left, carry, points,
         winners, end, _counts, games) = self._c.fields()
        ids = g.ids
        coords = g.coords
        return {
            "game": "exagon",
            "players": g.num_players,
            "tiles": [{"id": t["id"], "sides": list(t["sides"]), "star": t["star"], "star_points": t["star_points"]}
                      for t in g.tiles],
            "table": [{"tile": ids[t], "at": list(coords[c]), "rot": k} for t, c, k in table],
            "hands": [[ids[t] for t in h] for h in hands],
            "aside": [ids[t] for t in aside],
            "to_move": to_move,
            "phase": PHASES[phase],
            "turn": turn,
            "placed_this_turn": placed,
            "bonus": bonus,
            "time_left": time_left,
            "carry": carry,
            "scores": points,
            "clock": g.hourglass,
            "passes": passes,
            "result": None if winners is None else {"winners": winners, "end": END_REASONS[end]},
            **({} if games is None else {"games_played": games}),
            **_option_keys(g),
        }

    def counters(self) -> dict[str, float]:
        return dict(zip(COUNTER_NAMES, self._c.fields()[16], strict=True))

    def time_left(self) -> float | None:
        """Seconds left in the turn in phase ``turn`` with a clock, else None."""
        if self._c.phase() != TURN or self.game.hourglass is None:
            return None
        left = self._c.time_left()
        return None if left is None else float(left)

    def _accepts_timeout(self, action: int) -> bool:
        return action == self.game.timeout_action and self._c.phase() == TURN and self.game.hourglass is not None

    def apply_action(self, action: int, *, elapsed: float | None = None) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing.
        ``elapsed`` is charged to the hourglass as by the Python engine (checked first: more than
        ``time_left`` in a clocked turn is refused)."""
        if isinstance(action, bool) or not isinstance(action, int):
            raise IllegalActionError(f"{action!r} is not an action")
        if action not in self._c.legal_actions() and not self._accepts_timeout(action):
            raise IllegalActionError(f"{action!r} is not legal here")
        if elapsed is not None:
            _check_seconds(elapsed)
            left = self._c.time_left()
            if self._c.phase() == TURN and left is not None and action != self.game.timeout_action:
                if elapsed > left:
                    raise IllegalActionError(
                        f"the hourglass ran out: {float(elapsed)} s elapsed but only {left} s were left")
                self._c.spend(elapsed)
        self._c.apply(action)

    def value(self) -> list[float]:
        """``ludoteca.games.exagon.heuristic.value`` of this position, computed in C."""
        return list(self._c.value())

    def greedy_action(self) -> int:
        """``ludoteca.games.exagon.heuristic.greedy_action`` for the player to move, in C."""
        return int(self._c.greedy_action())

    def end_reason(self) -> str:
        """As :meth:`ExagonState.end_reason`."""
        if self._c.phase() != OVER:
            return ""
        fields = self._c.fields()
        if fields[14] is None:
            return ""
        return "tournament" if self.game.tournament else END_REASONS[fields[15]]


def compile_state(state: ExagonState) -> CompiledState | None:
    """The compiled copy of ``state``, or None (with one warning per process) when the compiled
    engine is not built or cannot play this game: the caller then uses the Python engine."""
    reason = unsupported(state.game)
    if reason:
        _warn_once(reason)
        return None
    return CompiledState.from_state(state)


def search(state: ExagonState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
           prune: int = SEARCH_PRUNE, greedy: bool = SEARCH_GREEDY) -> int:
    """The action the compiled MCTS (``core/_mcts.pxi``) plays from ``state`` (a player to move;
    left unchanged): ``iterations`` UCT simulations with constant ``c``, rollouts of at most ``cap``
    actions scored by the heuristic's evaluation when cut short (``evaluate=False``: even shares),
    seeded by ``seed`` (the same seed, the same action). As ``mcts`` plays EXAGON, each node offers
    only the heuristic's best ``prune`` actions (``heuristic.candidates``; 0: every legal action)
    and the rollouts follow the heuristic's greedy choice (``greedy=False``: uniformly random).
    RuntimeError when the compiled engine cannot play this game (:func:`unsupported`); ValueError
    at a deal or at the end. The game's hook for agents: ``game.compiled()`` is this module
    (``strong`` uses it)."""
    core = CompiledState.from_state(state)._c
    return int(core.search(iterations, c, cap, seed & 0xFFFFFFFFFFFFFFFF, evaluate, prune, greedy))


def playouts(state: ExagonState, n: int, seed: int) -> list[list[float]]:
    """The returns of ``n`` uniformly random playouts from ``state`` (left unchanged), seeded.

    In C with the compiled engine (its own generator, SplitMix64: see docs/compiled.md); else, with
    one warning, with the Python engine and ``random.Random(seed)`` — the same distribution of
    games, other random numbers, so other results for the same seed."""
    c = compile_state(state)
    if c is not None:
        return c.playouts(n, seed)
    return python_playouts(state, n, seed)
