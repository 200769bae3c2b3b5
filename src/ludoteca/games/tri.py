"""TRI: a conquest game of triangles on a toroidal board (2 to 4 players).

Rules: ``/work/shared/RULES.md`` section 2 and ``docs/rules/tri.md`` (every gap decided there).

Encoding (``T = 4 * size * size`` triangles, ``S = size * size`` squares; triangle index
``t = (row * size + col) * 4 + d`` with ``d`` 0..3 for N, E, S, W):

* player actions, from ``16`` up (above every chance outcome): ``place t`` = ``16 + t``;
  ``expand t`` = ``16 + T + t``; ``attack t`` = ``16 + 2T + t``; ``void t`` = ``16 + 3T + t``;
  ``teleport (square s, from side f, to t)`` = ``16 + 4T + (f*S + s)*T + t`` with ``f`` 0..3 for
  N, E, S, W under option ``teleport="move"`` and ``f = 0`` under ``"claim"`` (no ``from``);
  then ``card v`` = ``CARD + i`` with ``i`` the index of ``v`` in ``(0, 2, 3, 4)``; ``pass`` last.
  So ``"claim"`` keeps the action space it always had, and ``"move"`` adds ``3*S*T`` teleports.
* chance outcomes: ``roll v`` = ``v - 1`` (0..5); ``income f`` = ``5 + f`` (6..11);
  ``out seat`` = ``12 + seat``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.game import Game, State
from ludoteca.core.jsonutil import need_choice
from ludoteca.core.options import Option, as_int, one_of

DIRS = ("N", "E", "S", "W")
DIR_INDEX = {"N": 0, "E": 1, "S": 2, "W": 3}
CARD_VALUES = (0, 2, 3, 4)
CARD_INDEX = {0: 0, 2: 1, 3: 2, 4: 3}
START_HAND = (1, 1, 1, 1)  # one card of each value (seed)

MIN_SIZE = 2
MAX_SIZE = 12
DEFAULT_SIZE = {2: 4, 3: 5, 4: 6}

# phases
PLACE, ACT, BATTLE, INCOME, TIEBREAK, OVER = range(6)
PHASE_NAMES = ("place", "act", "battle", "income_roll", "tiebreak", "over")
# battle steps
A_ROLL, D_ROLL, A_CARD, D_CARD, VOID = range(5)
STEP_NAMES = ("attacker_roll", "defender_roll", "attacker_card", "defender_card", "void")

# chance outcome bases
ROLL0 = 0      # roll v -> v - 1
INCOME0 = 5    # income f -> 5 + f
OUT0 = 12      # out seat -> 12 + seat
PLAYER0 = 16   # player actions start above every chance outcome (OUT0 + 4 seats), so an
               # integer means the same action in every position

# counters (order of the internal list)
COUNTER_NAMES = (
    "battles", "battles_k1", "battles_k2", "battles_k3",
    "attacker_wins_k1", "attacker_wins_k2", "attacker_wins_k3",
    "squares_closed", "teleports", "eliminations", "expands", "passes",
)
C_BATTLES, C_K1, C_W1, C_CLOSED, C_TELEPORTS, C_ELIM, C_EXPANDS, C_PASSES = 0, 1, 4, 7, 8, 9, 10, 11

# card gained from the income die face (seed): 1-3 -> +2, 4-5 -> +3, 6 -> +4 (as CARD_INDEX)
INCOME_CARD = (None, 1, 1, 1, 2, 2, 3)
# cards every remaining player gains after the k-th elimination (seed), as CARD_INDEX counts
ELIMINATION_INCOME = {1: (0, 1, 1, 0), 2: (0, 2, 0, 1)}


def _dice_table() -> dict[int, list[tuple[int, float]]]:
    """Outcome ints and probabilities of the highest of ``k`` dice, k = 1..3."""
    table = {}
    for k in (1, 2, 3):
        den = 6 ** k
        table[k] = [(ROLL0 + v - 1, (v ** k - (v - 1) ** k) / den) for v in range(1, 7)]
    return table


DICE = _dice_table()
DEFENDER_DICE = DICE[1]
INCOME_OUTCOMES = [(INCOME0 + f, 1 / 6) for f in range(1, 7)]


def _size_default(resolved: Mapping[str, Any]) -> int:
    return DEFAULT_SIZE[resolved["players"]]


class TriGame(Game):
    """TRI: conquer triangles on a toroidal board; dice plus secret cards decide battles."""

    name = "tri"
    title = "TRI"
    min_players = 2
    max_players = 4
    OPTIONS = (
        Option("size", "board side in squares (each square holds four triangles); 2 to 12",
               _size_default, as_int(MIN_SIZE, MAX_SIZE)),
        Option("ties", "who wins a battle whose totals are equal: 'defender' or 'attacker'",
               "defender", one_of("defender", "attacker")),
        Option("turn_limit", "the game ends after this many player turns; leaders by units share",
               1000, as_int(1)),
        Option("teleport", "what a closed square's teleport does: 'claim' an empty triangle (the square "
               "stays closed) or 'move' one of the square's four units there (the square opens)",
               "claim", one_of("claim", "move")),
    )

    def _setup(self) -> None:
        n = self.size = self.options["size"]
        self.ties_attacker = self.options["ties"] == "attacker"
        self.turn_limit = self.options["turn_limit"]
        self.teleport_move = self.options["teleport"] == "move"
        self.T = T = 4 * n * n
        self.S = S = n * n
        self.PLACE = P0 = PLAYER0
        self.EXPAND = P0 + T
        self.ATTACK = P0 + 2 * T
        self.VOID = P0 + 3 * T
        self.TELEPORT = P0 + 4 * T
        # one block of S*T teleports per side a unit can leave from ("move"), else one ("claim")
        self.CARD = self.TELEPORT + (4 if self.teleport_move else 1) * S * T
        self.PASS = self.CARD + 4
        self.n_actions = self.PASS + 1
        nb: list[tuple[int, int, int]] = []
        for r in range(n):
            for c in range(n):
                base = (r * n + c) * 4
                up = (((r - 1) % n) * n + c) * 4
                down = (((r + 1) % n) * n + c) * 4
                right = (r * n + (c + 1) % n) * 4
                left = (r * n + (c - 1) % n) * 4
                nb.append((base + 1, base + 3, up + 2))      # N: E, W, S(r-1, c)
                nb.append((base, base + 2, right + 3))       # E: N, S, W(r, c+1)
                nb.append((base + 1, base + 3, down))        # S: E, W, N(r+1, c)
                nb.append((base, base + 2, left + 1))        # W: N, S, E(r, c-1)
        self.NB = nb
        self.tri_key = [f"{t // 4 // n},{t // 4 % n},{DIRS[t % 4]}" for t in range(T)]
        self.tri_index = {k: i for i, k in enumerate(self.tri_key)}
        self.sq_key = [f"{s // n},{s % n}" for s in range(S)]
        self.sq_index = {k: i for i, k in enumerate(self.sq_key)}

    def num_distinct_actions(self) -> int:
        return self.n_actions

    def record_options(self) -> dict[str, Any]:
        """The options, without ``teleport`` when it is the default ``"claim"``: records, lab
        results and golden playthroughs written before the option existed stay as they were
        (and read back as ``"claim"``)."""
        options = dict(self.options)
        if options["teleport"] == "claim":
            del options["teleport"]
        return options

    def teleport_action(self, square: int, side: int, target: int) -> int:
        """The int of a teleport from ``square`` to triangle ``target``; ``side`` (0..3 for N, E,
        S, W) is the triangle that leaves under ``teleport="move"``, and must be 0 under "claim"."""
        return self.TELEPORT + (side * self.S + square) * self.T + target

    def teleport_parts(self, action: int) -> tuple[int, int, int]:
        """``(square, side, target)`` of a teleport int (side 0 under ``teleport="claim"``)."""
        rest, target = divmod(action - self.TELEPORT, self.T)
        side, square = divmod(rest, self.S)
        return square, side, target

    def max_chance_outcomes(self) -> int:
        return OUT0 + self.num_players

    def new_initial_state(self) -> TriState:
        return TriState(self)

    def state_from_json(self, data: Mapping[str, Any]) -> TriState:
        return _state_from_json(self, data)

    # helpers shared by states ---------------------------------------------------------
    def tri_to_json(self, t: int) -> list[Any]:
        n = self.size
        return [t // 4 // n, t // 4 % n, DIRS[t % 4]]

    def tri_from_json(self, value: Any, what: str) -> int:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            raise IllegalActionError(f"{what} must be a triangle [row, col, \"N\"|\"E\"|\"S\"|\"W\"], "
                                     f"not {json.dumps(value, default=str)}")
        r, c, d = value
        n = self.size
        for name, x in (("row", r), ("col", c)):
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n:
                raise IllegalActionError(f"{what}: {name} must be a whole number 0 to {n - 1}, not {x!r}")
        if not isinstance(d, str) or d not in DIR_INDEX:
            raise IllegalActionError(f"{what}: the side must be \"N\", \"E\", \"S\" or \"W\", not {d!r}")
        return (r * n + c) * 4 + DIR_INDEX[d]

    def square_from_json(self, value: Any, what: str) -> int:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise IllegalActionError(f"{what} must be a square [row, col], not {json.dumps(value, default=str)}")
        n = self.size
        for name, x in zip(("row", "col"), value, strict=True):
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n:
                raise IllegalActionError(f"{what}: {name} must be a whole number 0 to {n - 1}, not {x!r}")
        return value[0] * n + value[1]


class TriState(State):
    """A TRI position. Triangles are ints; ``owner[t]`` is a seat or -1 (empty)."""

    __slots__ = (
        "_counters",
        "alive",
        "b_acard",
        "b_aroll",
        "b_att",
        "b_dcard",
        "b_def",
        "b_dice",
        "b_droll",
        "b_step",
        "b_target",
        "empty",
        "hands",
        "n_alive",
        "owned",
        "owner",
        "phase",
        "round",
        "to_move",
        "turn",
        "used",
    )

    def __init__(self, game: TriGame, *, blank: bool = False) -> None:
        super().__init__(game)
        if blank:
            return
        n = game.num_players
        self.owner = [-1] * game.T
        self.owned = [set() for _ in range(n)]
        self.hands = [list(START_HAND) for _ in range(n)]
        self.alive = [True] * n
        self.n_alive = n
        self.empty = game.T
        self.used = [False] * game.S
        self.to_move = 0
        self.round = 1
        self.turn = 0
        self.phase = PLACE
        self._clear_battle()
        self._counters = [0] * len(COUNTER_NAMES)

    def _clear_battle(self) -> None:
        self.b_att = self.b_def = self.b_target = self.b_dice = self.b_step = None
        self.b_aroll = self.b_droll = self.b_acard = self.b_dcard = None

    # --- protocol ------------------------------------------------------------------------
    def current_player(self) -> int:
        ph = self.phase
        if ph <= ACT:
            return self.to_move
        if ph == BATTLE:
            step = self.b_step
            if step <= D_ROLL:
                return CHANCE
            return self.b_att if step == A_CARD else self.b_def
        if ph == OVER:
            return TERMINAL
        return CHANCE

    def _legal_actions(self) -> list[int]:
        ph = self.phase
        g: TriGame = self.game
        if ph == ACT:
            p = self.to_move
            owner = self.owner
            nb = g.NB
            exp: set[int] = set()
            atk: set[int] = set()
            corners = []
            for t in self.owned[p]:
                for u in nb[t]:
                    o = owner[u]
                    if o < 0:
                        exp.add(u)
                    elif o != p:
                        atk.add(u)
                if not t & 3:
                    corners.append(t)
            base = g.EXPAND
            res = [base + u for u in sorted(exp)]
            if atk:
                base = g.ATTACK
                for u in sorted(atk):
                    b = u & ~3
                    o = owner[b]
                    if not (o == owner[b + 1] == owner[b + 2] == owner[b + 3]):
                        res.append(base + u)
            if corners and self.empty:
                used = self.used
                squares = [t >> 2 for t in corners
                           if not used[t >> 2] and owner[t + 1] == p and owner[t + 2] == p
                           and owner[t + 3] == p]
                if squares:
                    empties = [u for u, o in enumerate(owner) if o < 0]
                    squares.sort()
                    for side in range(4 if g.teleport_move else 1):  # ascending ints
                        for s in squares:
                            base = g.teleport_action(s, side, 0)
                            res.extend([base + u for u in empties])
            if not res:
                res.append(g.PASS)
            return res
        if ph == BATTLE:
            step = self.b_step
            if step <= D_ROLL:
                return [a for a, _ in self.chance_outcomes()]
            if step == VOID:
                att = self.b_att
                owner = self.owner
                base = g.VOID
                return sorted(base + u for u in g.NB[self.b_target] if owner[u] == att)
            hand = self.hands[self.b_att if step == A_CARD else self.b_def]
            base = g.CARD
            res = [base + i for i in range(4) if hand[i]]
            return res if res else [base]
        if ph == PLACE:
            owner = self.owner
            nb = g.NB
            base = g.PLACE
            return [base + t for t in range(g.T)
                    if owner[t] < 0 and all(owner[u] < 0 for u in nb[t])]
        if ph == OVER:
            return []
        return [a for a, _ in self.chance_outcomes()]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        ph = self.phase
        if ph == BATTLE:
            if self.b_step == A_ROLL:
                return list(DICE[self.b_dice])
            if self.b_step == D_ROLL:
                return list(DEFENDER_DICE)
            return []
        if ph == INCOME:
            return list(INCOME_OUTCOMES)
        if ph == TIEBREAK:
            tied = self._weakest()
            p = 1 / len(tied)
            return [(OUT0 + s, p) for s in tied]
        return []

    def _apply(self, a: int) -> None:
        g: TriGame = self.game
        ph = self.phase
        if ph == ACT:
            p = self.to_move
            if a < g.ATTACK:
                self._claim(a - g.EXPAND, p)
                self._counters[C_EXPANDS] += 1
                self._end_turn()
            elif a < g.VOID:
                t = a - g.ATTACK
                k = 0
                owner = self.owner
                for u in g.NB[t]:
                    if owner[u] == p:
                        k += 1
                self.phase = BATTLE
                self.b_att = p
                self.b_def = owner[t]
                self.b_target = t
                self.b_dice = k
                self.b_step = A_ROLL
                c = self._counters
                c[C_BATTLES] += 1
                c[C_K1 + k - 1] += 1
            elif a == g.PASS:
                self._counters[C_PASSES] += 1
                self._end_turn()
            else:
                s, side, t = g.teleport_parts(a)
                self.used[s] = True
                if g.teleport_move:  # the unit on that side leaves: the square opens
                    u = 4 * s + side
                    self.owner[u] = -1
                    self.owned[p].discard(u)
                    self.empty += 1
                self._claim(t, p)
                self._counters[C_TELEPORTS] += 1
                self._end_turn()
        elif ph == BATTLE:
            step = self.b_step
            if step == A_ROLL:
                self.b_aroll = a - ROLL0 + 1
                self.b_step = D_ROLL
            elif step == D_ROLL:
                self.b_droll = a - ROLL0 + 1
                self.b_step = A_CARD
            elif step == A_CARD:
                self.b_acard = CARD_VALUES[a - g.CARD]
                self.b_step = D_CARD
            elif step == D_CARD:
                self.b_dcard = CARD_VALUES[a - g.CARD]
                self._reveal()
            else:  # VOID
                t = a - g.VOID
                self.owner[t] = -1
                self.owned[self.b_att].discard(t)
                self.empty += 1
                self._clear_battle()
                self._end_turn()
        elif ph == PLACE:
            self._claim(a - g.PLACE, self.to_move)
            self._end_turn()
        elif ph == INCOME:
            card = INCOME_CARD[a - INCOME0]
            hands = self.hands
            for s, alive in enumerate(self.alive):
                if alive:
                    hands[s][card] += 1
            self.round += 1
            self.phase = ACT
        elif ph == TIEBREAK:
            self._eliminate(a - OUT0)
            self._continue()
        else:  # pragma: no cover - apply_action refuses every action once over
            raise IllegalActionError("the game is over")

    def _claim(self, t: int, p: int) -> None:
        owner = self.owner
        owner[t] = p
        self.owned[p].add(t)
        self.empty -= 1
        b = t & ~3
        if owner[b] == owner[b + 1] == owner[b + 2] == owner[b + 3]:
            self._counters[C_CLOSED] += 1

    def _reveal(self) -> None:
        att, dfn = self.b_att, self.b_def
        acard, dcard = self.b_acard, self.b_dcard
        # both cards are discarded at the reveal (a {"card": 0} from an empty hand discards nothing)
        ha, hd = self.hands[att], self.hands[dfn]
        i = CARD_INDEX[acard]
        if ha[i]:
            ha[i] -= 1
        i = CARD_INDEX[dcard]
        if hd[i]:
            hd[i] -= 1
        a_tot = self.b_aroll + acard
        d_tot = self.b_droll + dcard
        if a_tot > d_tot or (a_tot == d_tot and self.game.ties_attacker):
            t = self.b_target
            self._counters[C_W1 + self.b_dice - 1] += 1
            self.owned[dfn].discard(t)
            self.owner[t] = -1
            self.empty += 1
            self._claim(t, att)
            self._clear_battle()
            self._end_turn()
        else:
            self.b_step = VOID

    def _end_turn(self) -> None:
        """A player's turn is complete: count it, then eliminations, end, next player."""
        self.turn += 1
        if self.round >= 2:
            alive = self.alive
            owned = self.owned
            for s in range(len(alive)):
                if alive[s] and not owned[s]:
                    self._eliminate(s)
        if self.empty == 0 and self.n_alive > 2:
            tied = self._weakest()
            if len(tied) > 1:
                self.phase = TIEBREAK
                return
            self._eliminate(tied[0])
        self._continue()

    def _continue(self) -> None:
        if self.n_alive <= 1 or (self.empty == 0 and self.n_alive == 2):
            self.phase = OVER
            return
        if self.turn >= self.game.turn_limit:
            self.phase = OVER
            return
        alive = self.alive
        n = len(alive)
        p = self.to_move
        for s in range(p + 1, n):
            if alive[s]:
                self.to_move = s
                self.phase = PLACE if self.round == 1 else ACT
                return
        # the highest seat still in the game has played: the round ends
        self.to_move = alive.index(True)
        if self.round % 3 == 0:
            self.phase = INCOME  # ``round`` moves on once the income die is rolled
        else:
            self.round += 1
            self.phase = ACT

    def _weakest(self) -> list[int]:
        """Alive seats with the fewest units, then the lowest card total in hand."""
        alive = self.alive
        owned = self.owned
        best = None
        tied: list[int] = []
        for s in range(len(alive)):
            if not alive[s]:
                continue
            h = self.hands[s]
            key = (len(owned[s]), 2 * h[1] + 3 * h[2] + 4 * h[3])
            if best is None or key < best:
                best = key
                tied = [s]
            elif key == best:
                tied.append(s)
        return tied

    def _eliminate(self, s: int) -> None:
        self.alive[s] = False
        self.n_alive -= 1
        owner = self.owner
        for t in self.owned[s]:
            owner[t] = -1
        self.empty += len(self.owned[s])
        self.owned[s] = set()
        self._counters[C_ELIM] += 1
        gain = ELIMINATION_INCOME.get(self.num_players - self.n_alive)
        if gain:
            for p, alive in enumerate(self.alive):
                if alive:
                    h = self.hands[p]
                    for i in range(4):
                        h[i] += gain[i]

    def _copy(self) -> TriState:
        c = TriState.__new__(TriState)
        c.game = self.game
        c._legal = None
        c.owner = self.owner[:]
        c.owned = [set(x) for x in self.owned]
        c.hands = [h[:] for h in self.hands]
        c.alive = self.alive[:]
        c.n_alive = self.n_alive
        c.empty = self.empty
        c.used = self.used[:]
        c.to_move = self.to_move
        c.round = self.round
        c.turn = self.turn
        c.phase = self.phase
        c.b_att = self.b_att
        c.b_def = self.b_def
        c.b_target = self.b_target
        c.b_dice = self.b_dice
        c.b_step = self.b_step
        c.b_aroll = self.b_aroll
        c.b_droll = self.b_droll
        c.b_acard = self.b_acard
        c.b_dcard = self.b_dcard
        c._counters = self._counters[:]
        return c

    def returns(self) -> list[float]:
        n = self.num_players
        if self.phase != OVER:
            return [0.0] * n
        units = [len(self.owned[s]) if self.alive[s] else -1 for s in range(n)]
        best = max(units)
        winners = [s for s in range(n) if units[s] == best]
        share = 1.0 / len(winners)
        return [share if s in winners else 0.0 for s in range(n)]

    # --- extras -------------------------------------------------------------------------
    def counters(self) -> dict[str, int]:
        """Event counts since the initial state (a state read from JSON starts at 0)."""
        return dict(zip(COUNTER_NAMES, self._counters, strict=True))

    def units(self) -> list[int]:
        """Triangles owned by each seat."""
        return [len(x) for x in self.owned]

    def is_closed(self, square: int) -> bool:
        b = square * 4
        o = self.owner
        return o[b] >= 0 and o[b] == o[b + 1] == o[b + 2] == o[b + 3]

    # --- JSON ---------------------------------------------------------------------------
    def action_to_json(self, action: Any) -> dict[str, Any]:
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"{action!r} is not a TRI action")
        g: TriGame = self.game
        if action < PLAYER0:
            if ROLL0 <= action < ROLL0 + 6:
                return {"roll": action - ROLL0 + 1}
            if INCOME0 < action <= INCOME0 + 6:
                return {"income": action - INCOME0}
            if OUT0 <= action < OUT0 + self.num_players:
                return {"out": action - OUT0}
            raise ValueError(f"{action} is not a chance outcome of TRI")
        if not g.PLACE <= action < g.n_actions:
            raise ValueError(f"{action} is not a TRI action (0 to {g.n_actions - 1})")
        if action < g.EXPAND:
            return {"place": g.tri_to_json(action - g.PLACE)}
        if action < g.ATTACK:
            return {"expand": g.tri_to_json(action - g.EXPAND)}
        if action < g.VOID:
            return {"attack": g.tri_to_json(action - g.ATTACK)}
        if action < g.TELEPORT:
            return {"void": g.tri_to_json(action - g.VOID)}
        if action < g.CARD:
            s, side, t = g.teleport_parts(action)
            tp: dict[str, Any] = {"square": [s // g.size, s % g.size], "to": g.tri_to_json(t)}
            if g.teleport_move:
                tp["from"] = DIRS[side]
            return {"teleport": tp}
        if action < g.PASS:
            return {"card": CARD_VALUES[action - g.CARD]}
        return {"pass": True}

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        g: TriGame = self.game
        if not isinstance(data, Mapping):
            raise IllegalActionError(f"a TRI action is a JSON object, not {data!r}")
        if len(data) != 1:
            raise IllegalActionError(
                f"a TRI action has exactly one key (place, expand, attack, teleport, card, void, pass, "
                f"roll, income, out), not {sorted(map(str, data))}")
        ((key, value),) = data.items()
        if key in ("roll", "income", "out"):
            if isinstance(value, bool) or not isinstance(value, int):
                raise IllegalActionError(f"{key} must be a whole number, not {value!r}")
            if key == "out":
                if not 0 <= value < self.num_players:
                    raise IllegalActionError(f"out must be a seat 0 to {self.num_players - 1}, not {value}")
                return OUT0 + value
            if not 1 <= value <= 6:
                raise IllegalActionError(f"{key} must be a die face 1 to 6, not {value}")
            return ROLL0 + value - 1 if key == "roll" else INCOME0 + value
        if key not in ("place", "expand", "attack", "void", "teleport", "card", "pass"):
            raise IllegalActionError(f"unknown TRI action {key!r}")
        if key == "pass":
            if value is not True:
                raise IllegalActionError(f"pass is written {{\"pass\": true}}, not {json.dumps(dict(data))}")
            return g.PASS
        if key == "card":
            if not _is_card(value):
                raise IllegalActionError(f"card must be 0, 2, 3 or 4, not {value!r}")
            return g.CARD + CARD_INDEX[value]
        if key == "teleport":
            return _teleport_from_json(g, value)
        t = g.tri_from_json(value, key)
        base = {"place": g.PLACE, "expand": g.EXPAND, "attack": g.ATTACK, "void": g.VOID}[key]
        return base + t

    def _battle_json(self) -> dict[str, Any] | None:
        if self.phase != BATTLE:
            return None
        return {
            "attacker": self.b_att, "defender": self.b_def,
            "target": self.game.tri_key[self.b_target], "dice": self.b_dice,
            "step": STEP_NAMES[self.b_step],
            "attacker_roll": self.b_aroll, "defender_roll": self.b_droll,
            "attacker_card": self.b_acard, "defender_card": self.b_dcard,
        }

    def to_json(self) -> dict[str, Any]:
        g: TriGame = self.game
        key = g.tri_key
        return {
            "game": "tri", "players": self.num_players, "size": g.size,
            "owner": {key[t]: o for t, o in enumerate(self.owner) if o >= 0},
            "hands": [[v for i, v in enumerate(CARD_VALUES) for _ in range(h[i])] for h in self.hands],
            "alive": list(self.alive),
            "teleports_used": [g.sq_key[s] for s, u in enumerate(self.used) if u],
            "to_move": self.to_move, "round": self.round, "turn": self.turn,
            "phase": PHASE_NAMES[self.phase], "battle": self._battle_json(),
        }

    def observation(self, seat: int | None) -> dict[str, Any]:
        """The position without the secrets ``seat`` may not know: during a battle, before the
        reveal, each side's roll and card are known to that side only (null to the others;
        ``battle["hidden"]`` lists the keys nulled). Hands are public."""
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                                 or not 0 <= seat < self.num_players):
            raise ValueError(f"seat must be 0 to {self.num_players - 1} or None, not {seat!r}")
        data = self.to_json()
        battle = data["battle"]
        if battle is not None and self.b_step != VOID:
            hidden = []
            if seat != self.b_att:
                hidden += ["attacker_roll", "attacker_card"]
            if seat != self.b_def:
                hidden += ["defender_roll", "defender_card"]
            for k in hidden:
                battle[k] = None
            battle["hidden"] = hidden
        return data

    # --- text ---------------------------------------------------------------------------
    def render(self) -> str:
        g: TriGame = self.game
        n = g.size
        owner = self.owner

        def ch(t: int) -> str:
            o = owner[t]
            return "." if o < 0 else str(o)

        lines = [
            f"TRI  {self.num_players} players  size {n}  round {self.round}  turn {self.turn}  "
            f"phase {PHASE_NAMES[self.phase]}  to move: {self.to_move}"
        ]
        sep = "   +" + "-----+" * n
        lines.append("    " + "".join(f"  {c:<2}  " for c in range(n)).rstrip())
        lines.append(sep)
        for r in range(n):
            top, mid, bot = [], [], []
            for c in range(n):
                b = (r * n + c) * 4
                centre = "#" if self.is_closed(b >> 2) else (
                    "*" if self.phase == BATTLE and b <= self.b_target < b + 4 else " ")
                top.append(f"  {ch(b)}  ")
                mid.append(f"{ch(b + 3)} {centre} {ch(b + 1)}")
                bot.append(f"  {ch(b + 2)}  ")
            lines.append("   |" + "|".join(top) + "|")
            lines.append(f"{r:>2} |" + "|".join(mid) + "|")
            lines.append("   |" + "|".join(bot) + "|")
            lines.append(sep)
        lines.append("(# closed square, * battle target, . empty)")
        data = self.to_json()
        for s in range(self.num_players):
            mark = "*" if s == self.to_move and self.phase != OVER else " "
            state = "in" if self.alive[s] else "out"
            hand = " ".join(map(str, data["hands"][s])) or "-"
            lines.append(f"{mark}P{s} {state:<3} units {len(self.owned[s]):>3}  cards [{hand}]")
        if data["teleports_used"]:
            lines.append("teleports used: " + " ".join(data["teleports_used"]))
        if self.phase == BATTLE:
            def v(x: Any) -> str:
                return "-" if x is None else str(x)
            lines.append(
                f"battle: P{self.b_att} attacks {g.tri_key[self.b_target]} of P{self.b_def} with "
                f"{self.b_dice} dice; step {STEP_NAMES[self.b_step]}; rolls {v(self.b_aroll)}/"
                f"{v(self.b_droll)}; cards {v(self.b_acard)}/{v(self.b_dcard)}")
        if self.phase == OVER:
            lines.append("game over; returns " + json.dumps(self.returns()))
        return "\n".join(lines)

    def action_to_string(self, action: Any) -> str:
        data = self.action_to_json(action)
        ((key, value),) = data.items()
        if key in ("place", "expand", "attack", "void"):
            short = {"place": "place", "expand": "exp", "attack": "atk", "void": "void"}[key]
            return f"{short} {value[0]},{value[1]},{value[2]}"
        if key == "teleport":
            sq, to = value["square"], value["to"]
            side = f",{value['from']}" if "from" in value else ""  # teleport="move": the unit that leaves
            return f"tp {sq[0]},{sq[1]}{side}>{to[0]},{to[1]},{to[2]}"
        if key == "pass":
            return "pass"
        return f"{key} {value}"

    def action_from_string(self, text: str) -> int:
        if not isinstance(text, str):
            raise IllegalActionError(f"an action text is a string, not {text!r}")
        s = text.strip()
        if s.startswith("{"):
            return super().action_from_string(s)
        parts = s.split(None, 1)
        if not parts:
            raise IllegalActionError("an empty text is not an action")
        word = parts[0].lower()
        rest = parts[1].replace(" ", "") if len(parts) > 1 else ""
        names = {"place": "place", "exp": "expand", "expand": "expand", "atk": "attack",
                 "attack": "attack", "void": "void", "tp": "teleport", "teleport": "teleport",
                 "card": "card", "pass": "pass", "roll": "roll", "income": "income", "out": "out"}
        key = names.get(word)
        if key is None:
            tp = "tp 2,2,N>3,1,W" if self.game.teleport_move else "tp 2,2>3,1,W"
            raise IllegalActionError(
                f"cannot read {text!r} as a TRI action (place 1,2,N | exp 1,2,E | atk 0,0,S | "
                f"{tp} | card 3 | void 1,1,N | pass | roll 5 | income 4 | out 1)")
        if key == "pass":
            if rest:
                raise IllegalActionError(f"cannot read {text!r}: pass takes nothing after it")
            return self.action_from_json({"pass": True})
        if key in ("card", "roll", "income", "out"):
            try:
                value = int(rest)
            except ValueError:
                raise IllegalActionError(f"cannot read {text!r}: {key} needs a whole number") from None
            return self.action_from_json({key: value})
        if key == "teleport":
            return self._teleport_from_string(rest, text)
        return self.action_from_json({key: _parse_coords(rest, 3, text)})

    def _teleport_from_string(self, rest: str, text: str) -> int:
        """``r,c>r,c,D`` (claim) or ``r,c,F>r,c,D`` (teleport="move": F is the side that leaves)."""
        move = self.game.teleport_move
        form = "tp r,c,F>r,c,D (F: the side of the square whose unit leaves)" if move else "tp r,c>r,c,D"
        if rest.count(">") != 1:
            raise IllegalActionError(f"cannot read {text!r}: a teleport is written {form}")
        sq, to = rest.split(">")
        n_sq = sq.count(",") + 1
        if n_sq != (3 if move else 2):
            raise IllegalActionError(f"cannot read {text!r}: a teleport is written {form}")
        square = _parse_coords(sq, n_sq, text)
        value: dict[str, Any] = {"square": square[:2], "to": _parse_coords(to, 3, text)}
        if move:
            value["from"] = square[2]
        return self.action_from_json({"teleport": value})


def _teleport_from_json(g: TriGame, value: Any) -> int:
    keys = {"square", "to", "from"} if g.teleport_move else {"square", "to"}
    if not isinstance(value, Mapping) or set(value) != keys:
        if g.teleport_move:
            form = '{"teleport": {"square": [r, c], "to": [r, c, "N"], "from": "N"|"E"|"S"|"W"}}'
            why = ' (with the option teleport="move", "from" names the side of the square that leaves)'
        else:
            form = '{"teleport": {"square": [r, c], "to": [r, c, "N"]}}'
            why = ' ("from" is only used with the option teleport="move")'
        raise IllegalActionError(f"teleport is written {form}, not "
                                 f"{json.dumps({'teleport': value}, default=str)}{why}")
    s = g.square_from_json(value["square"], "teleport square")
    t = g.tri_from_json(value["to"], "teleport to")
    side = 0
    if g.teleport_move:
        side = DIR_INDEX.get(value["from"]) if isinstance(value["from"], str) else None
        if side is None:
            raise IllegalActionError(f'teleport from: the side must be "N", "E", "S" or "W", '
                                     f"not {json.dumps(value['from'], default=str)}")
    return g.teleport_action(s, side, t)


def _is_card(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in CARD_INDEX


def _parse_coords(text: str, count: int, whole: str) -> list[Any]:
    parts = text.split(",")
    if len(parts) != count:
        raise IllegalActionError(f"cannot read {whole!r}: expected {'r,c,D' if count == 3 else 'r,c'}")
    out: list[Any] = []
    for i, p in enumerate(parts):
        if i == 2:
            out.append(p.upper())
        else:
            try:
                out.append(int(p))
            except ValueError:
                raise IllegalActionError(f"cannot read {whole!r}: {p!r} is not a whole number") from None
    return out


# --- reading positions ---------------------------------------------------------------------
REQUIRED_KEYS = ("game", "players", "size", "owner", "hands", "alive", "teleports_used",
                 "to_move", "round", "turn", "phase", "battle")
BATTLE_KEYS = ("attacker", "defender", "target", "dice", "step", "attacker_roll", "defender_roll",
               "attacker_card", "defender_card")


def _int(value: Any, what: str, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be a whole number, not {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{what} must be at least {low}, not {value}")
    if high is not None and value > high:
        raise ValueError(f"{what} must be at most {high}, not {value}")
    return value


def _check_over(g: TriGame, st: TriState, used: list[Any]) -> None:
    """Refuse ``phase: "over"`` unless the game has ended (RULES.md TRI "Eliminations and end",
    and Conventions: reaching ``turn_limit`` ends the game)."""
    units = [len(x) for x in st.owned]
    if st.round == 1:
        if not all(st.alive) or used or max(units) > 1:
            raise ValueError("a game over in the placement round (round 1) ended by the turn limit: nobody "
                             "is out, no teleport was used and each seat owns at most one triangle")
    else:
        for s, alive in enumerate(st.alive):
            if alive and not units[s]:
                raise ValueError(f"seat {s} has no unit left after the first round and must be out")
    if st.n_alive == 1 or (st.empty == 0 and st.n_alive == 2) or st.turn >= g.turn_limit:
        return
    why = f"{st.n_alive} players are in the game" + (
        f" and {st.empty} triangle(s) are empty" if st.empty else " on a full board")
    raise ValueError(
        f"phase is 'over' but the game has not ended: {why}, turn {st.turn} is below the turn limit "
        f"{g.turn_limit}. TRI ends when one player remains, when no triangle is empty with two players "
        "left, or when turn reaches turn_limit")


def _state_from_json(g: TriGame, data: Mapping[str, Any]) -> TriState:
    if not isinstance(data, Mapping):
        raise ValueError(f"a TRI position must be a JSON object, not {type(data).__name__}")
    for k in REQUIRED_KEYS:
        if k not in data:
            raise ValueError(f"the position is missing the key {k!r}")
    if data["game"] != "tri":
        raise ValueError(f"position['game'] must be 'tri', not {data['game']!r}")
    n = g.num_players
    if _int(data["players"], "players") != n:
        raise ValueError(f"players is {data['players']} but this game has {n} players")
    if _int(data["size"], "size") != g.size:
        raise ValueError(f"size is {data['size']} but this game's board has size {g.size}")

    st = TriState(g, blank=True)
    st._clear_battle()
    st._counters = [0] * len(COUNTER_NAMES)

    # alive
    alive = data["alive"]
    if not isinstance(alive, list) or len(alive) != n or not all(isinstance(a, bool) for a in alive):
        raise ValueError(f"alive must be a list of {n} true/false values, not {alive!r}")
    if not any(alive):
        raise ValueError("alive: at least one player must still be in the game")
    st.alive = list(alive)
    st.n_alive = sum(alive)

    # owner
    owners = data["owner"]
    if not isinstance(owners, Mapping):
        raise ValueError("owner must be an object mapping \"row,col,D\" to a seat")
    st.owner = owner = [-1] * g.T
    st.owned = [set() for _ in range(n)]
    for key, seat in owners.items():
        t = g.tri_index.get(key) if isinstance(key, str) else None
        if t is None:
            raise ValueError(f"owner: {key!r} is not a triangle of a size-{g.size} board "
                             f"(\"row,col,D\" with row and col 0 to {g.size - 1}, D one of N E S W)")
        _int(seat, f"owner[{key!r}]", 0, n - 1)
        if not alive[seat]:
            raise ValueError(f"owner[{key!r}] is seat {seat}, who is out of the game")
        owner[t] = seat
        st.owned[seat].add(t)
    st.empty = owner.count(-1)

    # hands
    hands = data["hands"]
    if not isinstance(hands, list) or len(hands) != n:
        raise ValueError(f"hands must be a list of {n} lists of cards")
    st.hands = []
    for s, hand in enumerate(hands):
        if not isinstance(hand, list):
            raise ValueError(f"hands[{s}] must be a list of cards, not {hand!r}")
        counts = [0, 0, 0, 0]
        for v in hand:
            if not _is_card(v):
                raise ValueError(f"hands[{s}]: a card is 0, 2, 3 or 4, not {v!r}")
            counts[CARD_INDEX[v]] += 1
        st.hands.append(counts)

    # teleports
    used = data["teleports_used"]
    if not isinstance(used, list):
        raise ValueError("teleports_used must be a list of \"row,col\" squares")
    st.used = [False] * g.S
    for key in used:
        s = g.sq_index.get(key) if isinstance(key, str) else None
        if s is None:
            raise ValueError(f"teleports_used: {key!r} is not a square \"row,col\" of a size-{g.size} board")
        if st.used[s]:
            raise ValueError(f"teleports_used lists {key!r} twice")
        st.used[s] = True

    # counters and phase
    st.to_move = to_move = _int(data["to_move"], "to_move", 0, n - 1)
    st.round = rnd = _int(data["round"], "round", 1)
    st.turn = turn = _int(data["turn"], "turn", 0)
    phase_name = data["phase"]
    st.phase = phase = need_choice(phase_name, "phase", PHASE_NAMES)
    battle = data["battle"]
    if phase != BATTLE and battle is not None:
        raise ValueError(f"battle must be null outside the battle phase (phase is {phase_name!r})")
    units = [len(x) for x in st.owned]

    if turn > g.turn_limit:
        raise ValueError(f"turn {turn} is beyond the turn limit {g.turn_limit}: the game ended at turn "
                         f"{g.turn_limit}")
    if phase == OVER:
        _check_over(g, st, used)
        return st
    if phase != TIEBREAK and turn >= g.turn_limit:
        raise ValueError(f"turn {turn} has reached the turn limit {g.turn_limit}: the phase must be 'over'")
    # RULES.md Conventions: to_move at a chance node (income_roll, tiebreak) and at over is not
    # fixed by the rules; any seat is read (see the phases below). During a battle it is the attacker.
    if phase not in (INCOME, TIEBREAK) and not alive[to_move]:
        raise ValueError(f"to_move is seat {to_move}, who is out of the game")

    if phase == PLACE:
        if rnd != 1:
            raise ValueError(f"the placement phase is round 1, not round {rnd}")
        if not all(alive):
            raise ValueError("nobody can be out of the game during the placement round")
        if used:
            raise ValueError("no teleport can have been used during the placement round")
        if turn != to_move:
            raise ValueError(f"in the placement round turn equals to_move (seats 0..{to_move - 1} have "
                             f"placed), not turn {turn} with to_move {to_move}")
        for s in range(n):
            want = 1 if s < to_move else 0
            if units[s] != want:
                raise ValueError(f"in the placement round before seat {to_move} places, seat {s} "
                                 f"owns {want} triangle(s), not {units[s]}")
        for t, o in enumerate(owner):
            if o >= 0 and any(owner[u] >= 0 for u in g.NB[t]):
                raise ValueError(f"placed units may not be adjacent: {g.tri_key[t]} touches another unit")
        return st

    if rnd < 2:
        raise ValueError(f"phase {phase_name!r} comes after the placement round: round must be 2 or more")
    if st.n_alive < 2:
        raise ValueError("with one player left the game is over: phase must be 'over'")
    for s in range(n):
        if alive[s] and not units[s]:
            raise ValueError(f"seat {s} has no unit left after the first round and must be out")

    if phase == TIEBREAK:
        # to_move is read as the seat whose turn filled the board: play goes on with the next seat
        # still in the game after it (a seat out of the game included), and it is written back as read
        if st.empty or st.n_alive <= 2:
            raise ValueError("a tiebreak needs a full board and more than two players")
        if len(st._weakest()) < 2:
            raise ValueError("a tiebreak needs two or more tied weakest players (units, then cards)")
        return st
    if st.empty == 0:
        raise ValueError(f"the board is full with {st.n_alive} players left: "
                         + ("the phase must be 'tiebreak' or someone out" if st.n_alive > 2
                            else "the game must be over"))
    if phase == INCOME:
        if rnd % 3:
            raise ValueError(f"the income die is rolled after rounds 3, 6, 9, ..., not after round {rnd}")
        # the starting player rolls and then opens the next round: ours is the first seat still in
        st.to_move = alive.index(True)
        return st
    if phase == ACT:
        return st

    # battle
    if not isinstance(battle, Mapping):
        raise ValueError("during the battle phase battle must be an object")
    for k in BATTLE_KEYS:
        if k not in battle:
            raise ValueError(f"battle is missing the key {k!r}")
    att = _int(battle["attacker"], "battle['attacker']", 0, n - 1)
    dfn = _int(battle["defender"], "battle['defender']", 0, n - 1)
    if att != to_move:
        raise ValueError(f"battle['attacker'] must be the player to move ({to_move}), not {att}")
    if dfn == att or not alive[dfn]:
        raise ValueError(f"battle['defender'] must be another player still in the game, not {dfn}")
    tkey = battle["target"]
    t = g.tri_index.get(tkey) if isinstance(tkey, str) else None
    if t is None:
        raise ValueError(f"battle['target'] {tkey!r} is not a triangle \"row,col,D\" of this board")
    if owner[t] != dfn:
        raise ValueError(f"battle['target'] {tkey} must belong to the defender {dfn}")
    if st.is_closed(t >> 2):
        raise ValueError(f"battle['target'] {tkey} is in a closed square, which cannot be attacked")
    k = sum(1 for u in g.NB[t] if owner[u] == att)
    if k == 0:
        raise ValueError(f"battle['target'] {tkey} is not adjacent to any unit of the attacker")
    if _int(battle["dice"], "battle['dice']", 1, 3) != k:
        raise ValueError(f"battle['dice'] must be {k}, the attacker's units adjacent to the target")
    step = need_choice(battle["step"], "battle['step']", STEP_NAMES)
    filled = {"attacker_roll": step > A_ROLL, "defender_roll": step > D_ROLL,
              "attacker_card": step > A_CARD, "defender_card": step > D_CARD}
    values: dict[str, Any] = {}
    for k2, want in filled.items():
        v = battle[k2]
        if not want:
            if v is not None:
                raise ValueError(f"battle[{k2!r}] must be null at step {STEP_NAMES[step]!r}")
            continue
        if k2.endswith("roll"):
            values[k2] = _int(v, f"battle[{k2!r}]", 1, 6)
        else:
            if not _is_card(v):
                raise ValueError(f"battle[{k2!r}] must be a card 0, 2, 3 or 4, not {v!r}")
            values[k2] = v
    if step == D_CARD:
        hand = st.hands[att]
        v = values["attacker_card"]
        if not (hand[CARD_INDEX[v]] or (v == 0 and not any(hand))):
            raise ValueError(f"battle['attacker_card'] {v} is not in the attacker's hand "
                             "(the chosen card stays in hand until the reveal)")
    if step == VOID:
        a_tot = values["attacker_roll"] + values["attacker_card"]
        d_tot = values["defender_roll"] + values["defender_card"]
        if a_tot > d_tot or (a_tot == d_tot and g.ties_attacker):
            raise ValueError(f"at step 'void' the attack must have failed, but {a_tot} beats {d_tot}")
    st.b_att, st.b_def, st.b_target, st.b_dice, st.b_step = att, dfn, t, k, step
    st.b_aroll = values.get("attacker_roll")
    st.b_droll = values.get("defender_roll")
    st.b_acard = values.get("attacker_card")
    st.b_dcard = values.get("defender_card")
    return st
