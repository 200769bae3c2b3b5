"""EXAGON's compiled engine (Cython, ``_compiled.pyx``), seen from Python.

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

import weakref

from ludoteca.core.compiled import SEED_MASK, CompiledEngine, CompiledView
from ludoteca.core.errors import IllegalActionError
from ludoteca.games.exagon import (
    COUNTERS,
    END_REASONS,
    OVER,
    TURN,
    ExagonGame,
    ExagonState,
    _check_seconds,
)

try:
    from ludoteca.games.exagon import _compiled
except ImportError:  # not built (no compiler at install time): the Python engine only
    _compiled = None  # type: ignore[assignment]

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

_templates: weakref.WeakKeyDictionary[ExagonGame, _compiled.CState] = weakref.WeakKeyDictionary()
"""The initial compiled state of each game (its constant tables are built once, then copied)."""


def _bounds(game: ExagonGame) -> str:
    if game.n_tiles > _compiled.MAX_TILES:
        return (f"the compiled EXAGON engine plays tile sets of at most {_compiled.MAX_TILES} tiles, "
                f"not {game.n_tiles}")
    for name in ("turn_limit", "tournament_games"):
        if game.options[name] > C_INT_MAX:
            return f"the compiled EXAGON engine takes {name} up to {C_INT_MAX}, not {game.options[name]}"
    return ""


def _template(game: ExagonGame) -> _compiled.CState:
    core = _templates.get(game)
    if core is None:
        core = _compiled.CState(game.sides, game.star, game.penalty, game.nummask, game.num_players,
                                game.hourglass, game.tournament, game.turn_limit, game.radius, game.tournament_games,
                                game.lenient, game.carry_cap, game.per_seat, game.bonus_for[3:6], game.go_on,
                                game.tournament_target, game.win_points)
        _templates[game] = core
    return core


class CompiledState(CompiledView[ExagonGame, ExagonState]):
    """An EXAGON position in the compiled engine, with the protocol's reading methods.

    Build it from a Python state (:meth:`from_state`) or a position JSON (:meth:`from_json`); go
    back with :meth:`to_state`. :meth:`apply_action` checks legality (IllegalActionError) and
    takes ``elapsed`` as the Python engine does; events are not produced (use the Python engine
    where events matter)."""

    __slots__ = ()

    @classmethod
    def from_state(cls, state: ExagonState) -> CompiledState:
        game = state.game
        ENGINE.checked(game)
        core = _template(game).copy()
        result = state.result
        core.load(state.phase, state.owner, state.hands, state.aside, state.table, state.dealt, state.to_move,
                  state.turn, state.placed, state.bonus, state.passes, state.clock_left, state.carry, state.points,
                  None if result is None else result["winners"],
                  0 if result is None else END_REASONS.index(result["end"]),
                  tuple(state.counts[name] for name in COUNTER_NAMES), state.games or 0)
        return cls(game, core)

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


ENGINE: CompiledEngine[ExagonGame, ExagonState, CompiledState] = CompiledEngine(
    __name__, "EXAGON", _compiled, CompiledState, SUPPORTED_OPTIONS, _bounds)
available, unsupported, supports, compile_state, playouts = ENGINE.functions()


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
    return int(core.search(iterations, c, cap, seed & SEED_MASK, evaluate, prune, greedy))


def search_values(state: ExagonState, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
                  prune: int = SEARCH_PRUNE, greedy: bool = SEARCH_GREEDY) -> dict[int, tuple[int, float]]:
    """:func:`search`'s root statistics (the same search, settings and seed): each root action's visits
    and sum of the mover's returns (the analysis's per-action estimates, ``ludoteca.analysis``)."""
    core = CompiledState.from_state(state)._c
    return {int(a): (int(n), float(w)) for a, n, w in core.search_values(
        iterations, c, cap, seed & SEED_MASK, evaluate, prune, greedy)}

