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

A battle in progress is a :class:`Battle` (``TriState.battle``; ``None`` outside a battle).

Events (:mod:`ludoteca.core.events`; triangles as ``[row, col, "N"|"E"|"S"|"W"]``, squares as
``[row, col]``, seats as ints). Public unless said otherwise:

* ``move`` ``{"seat", "action"}``: a player's action. The attacker's card choice is seen by the
  attacker only (``to={attacker}``; the others see ``{"seat"}``, "player N chose a card"). The
  defender's card is public: it completes the battle, which is revealed by the same action.
* ``chance`` ``{"outcome"}``: a chance outcome. A battle roll is seen by the seat that rolled
  only (``{"outcome", "seat"}``, ``to={seat}``; the others see ``{"seat"}``, "player N rolled").
* ``place`` / ``expand`` ``{"seat", "triangle"}``: a unit placed (round 1) or an expansion.
* ``attack`` ``{"attacker", "defender", "target", "dice"}``: a battle starts; ``dice`` is the
  number the attacker rolls (its units adjacent to the target).
* ``battle`` ``{"attacker", "defender", "target", "dice", "attacker_roll", "defender_roll",
  "attacker_card", "defender_card", "attacker_total", "defender_total", "winner",
  "attacker_won", "tie", "tie_rule"}``: the reveal. ``winner`` is a seat; ``tie`` is true when
  the totals are equal, and then ``tie_rule`` names who wins ties (option ``ties``:
  ``"defender"`` or ``"attacker"``), else it is ``None``.
* ``taken`` ``{"seat", "from", "triangle"}``: the attacker (``seat``) won the target from ``from``.
* ``void`` ``{"seat", "owner", "triangle"}``: after a lost attack the defender (``seat``)
  emptied the attacker's (``owner``) unit on ``triangle``.
* ``teleport`` ``{"seat", "square", "from", "to"}``: ``from`` is the triangle of the square
  that left (option ``teleport="move"``: the square opens), ``None`` under ``"claim"``.
* ``square_closed`` ``{"seat", "square"}``: a square became closed (all four triangles one
  player's).
* ``tiebreak`` ``{"seats"}``: the board is full with more than two players left and these seats
  are tied weakest (units, then cards in hand); a chance node picks who is out.
* ``eliminated`` ``{"seat", "why", "units"}``: a player is out and its ``units`` triangles become
  empty; ``why`` is ``"no_unit"`` (no unit left after round 1), ``"fewest_units"`` (full board),
  ``"fewest_cards"`` (full board, tied on units, lowest card total) or ``"tiebreak"`` (still
  tied: drawn by the chance node).
* ``elimination_income`` ``{"eliminations", "cards", "seats"}``: after the ``eliminations``-th
  player is out, every seat in ``seats`` gains ``cards`` (card values).
* ``income`` ``{"face", "cards", "seats"}``: the income die showed ``face``; every seat in
  ``seats`` gains ``cards``.
* ``end`` ``{"reason", "returns", "winners"}`` with ``reason`` from :meth:`TriState.end_reason`:
  ``"last_player"``, ``"board_full"`` or ``"turn_limit"``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from ludoteca.core import events as ev
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Counter, Game, State, Worlds
from ludoteca.core.i18n import N_, _
from ludoteca.core.options import Choice, Option, as_int
from ludoteca.core.shape import Between, read

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
COUNTERS = (
    Counter("battles", "mean_per_game", N_("attacks played (battles started), per game")),
    Counter("battles_k1", "mean_per_game", N_("battles in which the attacker rolled 1 die, per game")),
    Counter("battles_k2", "mean_per_game", N_("battles in which the attacker rolled 2 dice, per game")),
    Counter("battles_k3", "mean_per_game", N_("battles in which the attacker rolled 3 dice, per game")),
    Counter("attacker_wins_k1", "share_per_event", N_("battles won by an attacker rolling 1 die"), "battles_k1"),
    Counter("attacker_wins_k2", "share_per_event", N_("battles won by an attacker rolling 2 dice"), "battles_k2"),
    Counter("attacker_wins_k3", "share_per_event", N_("battles won by an attacker rolling 3 dice"), "battles_k3"),
    Counter("squares_closed", "mean_per_game",
            N_("times a square became closed (all four triangles one player's), per game")),
    Counter("teleports", "mean_per_game", N_("teleports played, per game")),
    Counter("eliminations", "mean_per_game", N_("players eliminated, per game")),
    Counter("expands", "mean_per_game", N_("expansions played, per game")),
    Counter("passes", "mean_per_game", N_("turns passed (no expansion, attack or teleport possible), per game")),
)

LAB_NAMES = (N_("battles"), N_("battles k1"), N_("battles k2"), N_("battles k3"), N_("attacker wins k1"),
             N_("attacker wins k2"), N_("attacker wins k3"), N_("squares closed"), N_("teleports"),
             N_("eliminations"), N_("expands"), N_("passes"), N_("last player"), N_("board full"), N_("turn limit"),
             N_("units"))
"""The names of the counters, the end reasons and the score as the lab report shows them (translated
there with ``_``; the names themselves stay the identifiers of ``counters()`` and ``end_reason()``)."""
COUNTER_NAMES = tuple(c.name for c in COUNTERS)
C_BATTLES, C_K1, C_W1, C_CLOSED, C_TELEPORTS, C_ELIM, C_EXPANDS, C_PASSES = 0, 1, 4, 7, 8, 9, 10, 11

# card gained from the income die face (seed): 1-3 -> +2, 4-5 -> +3, 6 -> +4 (as CARD_INDEX)
INCOME_CARD = (None, 1, 1, 1, 2, 2, 3)
# cards every remaining player gains after the k-th elimination (seed), as CARD_INDEX counts
ELIMINATION_INCOME = {1: (0, 1, 1, 0), 2: (0, 2, 0, 1)}


@dataclass(slots=True)
class Battle:
    """A battle in progress (``TriState.battle``; ``None`` outside a battle).

    ``step`` is one of ``A_ROLL``, ``D_ROLL``, ``A_CARD``, ``D_CARD``, ``VOID`` (named in
    ``STEP_NAMES``); rolls and cards are ``None`` until decided. The engine updates it in place
    (fast path); :meth:`copy` gives an independent one.
    """

    attacker: int
    defender: int
    target: int
    """The attacked triangle (index)."""
    dice: int
    """Dice the attacker rolls: its units adjacent to the target (1 to 3)."""
    step: int = 0
    attacker_roll: int | None = None
    defender_roll: int | None = None
    attacker_card: int | None = None
    defender_card: int | None = None

    def copy(self) -> Battle:
        return Battle(self.attacker, self.defender, self.target, self.dice, self.step,
                      self.attacker_roll, self.defender_roll, self.attacker_card, self.defender_card)

    def totals(self) -> tuple[int, int]:
        """``(attacker total, defender total)``: roll plus card, once both cards are chosen."""
        if (self.attacker_roll is None or self.defender_roll is None or self.attacker_card is None
                or self.defender_card is None):
            raise ValueError("the battle's totals are known once both cards are chosen")
        return self.attacker_roll + self.attacker_card, self.defender_roll + self.defender_card


def roll_probs(dice: int) -> list[tuple[int, float]]:
    """Die faces and probabilities of the highest of ``dice`` dice: ``(v^k - (v-1)^k) / 6^k``."""
    k = max(1, dice)
    return [(v, (v**k - (v - 1) ** k) / 6**k) for v in range(1, 7)]


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


INCOME_EVERY = 3
"""Rounds between two income rolls (seed: "every third round"; option ``income_every``)."""
INCOME_FACES = (None, 2, 2, 2, 3, 3, 4)
"""The card value each income die face gives (seed: 1-3 +2, 4-5 +3, 6 +4; options ``income_1`` ..)."""
RULEBOOK_OPTIONS = frozenset({"start_0", "start_2", "start_3", "start_4", "income_every", "elimination_cards",
                              "most_dice", "teleports", *(f"income_{f}" for f in range(1, 7))})
"""The rulebook's numbers and switches as options: left out of records at RULES.md's values."""


def _resolve_card_value(value: Any, resolved: Mapping[str, Any]) -> int:
    """An income face's card: one of the card values 0, 2, 3, 4."""
    card: int = as_int(0, 4)(value, resolved)
    if card not in CARD_INDEX:
        raise ValueError(_("expected a card value, 0, 2, 3 or 4, got {value}").format(value=card))
    return card


def _start_option(value: int) -> Option:
    return Option(f"start_{value}", f"+{value} cards each player starts with (RULES.md: 1)", 1, kind="int", low=0,
                  high=9, label=f"+{value} cards at the start", help=f"how many +{value} cards each player starts with",
                  variant=True)


def _income_option(face: int) -> Option:
    return Option(f"income_{face}", f"the card value (0, 2, 3 or 4) every player gains on an income roll of {face} "
                  f"(RULES.md: {INCOME_FACES[face]})", INCOME_FACES[face], _resolve_card_value, kind="int", low=0,
                  high=4, label=f"income on a {face}",
                  help=f"the card every player gains when the income die shows {face}: 0, 2, 3 or 4", variant=True)


class TriGame(Game):
    """TRI: conquer triangles on a toroidal board; dice plus secret cards decide battles."""

    name = "tri"
    title = "TRI"
    min_players = 2
    max_players = 4
    hidden_information = True
    score_name = "units"
    counters = COUNTERS
    agent_defaults = {"mcts": {"iterations": 400, "cap": 10, "rollout": "heuristic", "prune": 8},
                      "strong": {"iterations": 350, "c": 0.7, "cap": 10}}
    compiled_part = "compiled"
    rules_notes = "docs/rules/tri.md"
    catalogue_order = 2
    OPTIONS = (
        Option("size", "board side in squares (each square holds four triangles); 2 to 12",
               _size_default, kind="int", low=MIN_SIZE, high=MAX_SIZE, label="board size",
               help="the side of the board in squares; each square holds four triangles"),
        Option("ties", "who wins a battle whose totals are equal: 'defender' or 'attacker'",
               "defender", kind="choice", label="equal totals in a battle",
               help="who wins a battle when both totals are equal",
               choices=(Choice("defender", "the defender wins", "the attacker must roll strictly more"),
                        Choice("attacker", "the attacker wins", "the attacker needs at least as much"))),
        Option("turn_limit", "the game ends after this many player turns; leaders by units share",
               1000, kind="int", low=1, label="turn limit",
               help="the game stops after this many player turns; the players with the most units share the win"),
        Option("teleport", "what a closed square's teleport does: 'claim' an empty triangle (the square "
               "stays closed) or 'move' one of the square's four units there (the square opens)",
               "claim", kind="choice", label="teleport of a closed square",
               help="what the teleport of a closed square does",
               choices=(Choice("claim", "take an empty triangle",
                               "you take an empty triangle anywhere; the square stays closed"),
                        Choice("move", "move one of its units",
                               "one of the square's four units moves to an empty triangle; the square opens"))),
        Option("teleports", "whether a closed square gives a teleport at all (RULES.md: true)", True, kind="bool",
               label="teleports", help="whether each closed square gives its owner one teleport", variant=True),
        *(_start_option(v) for v in CARD_VALUES),
        Option("income_every", "rounds between income rolls; 0: never (RULES.md: 3)", INCOME_EVERY, kind="int",
               low=0, high=50, label="income every",
               help="every how many rounds the income die is rolled; 0 means never", variant=True),
        *(_income_option(f) for f in range(1, 7)),
        Option("elimination_cards", "whether the remaining players gain cards at each elimination (RULES.md: "
               "+2 and +3 after the first, two +2 and a +4 after the second)", True, kind="bool",
               label="cards at each elimination",
               help="whether the remaining players gain cards when a player is out", variant=True),
        Option("most_dice", "the most dice an attacker rolls: one per own unit next to the target, at most this "
               "many (RULES.md: 3, every unit)", 3, kind="int", low=1, high=3, label="most attack dice",
               help="an attacker rolls one die per own unit next to the target, at most this many", variant=True),
    )

    size: int
    ties_attacker: bool
    turn_limit: int
    teleport_move: bool
    T: int
    """Triangles on the board (``4 * size * size``)."""
    S: int
    """Squares on the board (``size * size``)."""
    PLACE: int
    EXPAND: int
    ATTACK: int
    VOID: int
    TELEPORT: int
    CARD: int
    PASS: int
    n_actions: int
    NB: list[tuple[int, int, int]]
    """The three edge-neighbours of each triangle."""
    tri_key: list[str]
    tri_index: dict[str, int]
    sq_key: list[str]
    sq_index: dict[str, int]

    def _setup(self) -> None:
        n = self.size = self.options["size"]
        self.ties_attacker = self.options["ties"] == "attacker"
        self.turn_limit = self.options["turn_limit"]
        self.teleport_move = self.options["teleport"] == "move"
        self.teleports: bool = self.options["teleports"]
        self.start_hand: tuple[int, ...] = tuple(self.options[f"start_{v}"] for v in CARD_VALUES)
        """Cards each player starts with, as counts per CARD_VALUES."""
        self.income_every: int = self.options["income_every"]
        self.income_card: tuple[int, ...] = (0, *(CARD_INDEX[self.options[f"income_{f}"]] for f in range(1, 7)))
        """The card (index into CARD_VALUES) each income die face gives (index 1 to 6)."""
        self.elimination_cards: bool = self.options["elimination_cards"]
        self.most_dice: int = self.options["most_dice"]
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
        for opt in self.OPTIONS:
            if opt.name in RULEBOOK_OPTIONS and options[opt.name] == opt.default:
                del options[opt.name]
        return options

    def rulebook_changes(self) -> list[str]:
        """The rulebook's options set to other values than RULES.md's (empty: the rulebook's game)."""
        return [o.name for o in self.OPTIONS if o.name in RULEBOOK_OPTIONS and self.options[o.name] != o.default]

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
        return int((r * n + c) * 4 + DIR_INDEX[d])

    def square_from_json(self, value: Any, what: str) -> int:
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise IllegalActionError(f"{what} must be a square [row, col], not {json.dumps(value, default=str)}")
        n = self.size
        for name, x in zip(("row", "col"), value, strict=True):
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n:
                raise IllegalActionError(f"{what}: {name} must be a whole number 0 to {n - 1}, not {x!r}")
        return int(value[0] * n + value[1])


class TriState(State):
    """A TRI position. Triangles are ints; ``owner[t]`` is a seat or -1 (empty)."""

    __slots__ = (
        "_counters",
        "alive",
        "battle",
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

    game: TriGame
    battle: Battle | None
    """The battle in progress; ``None`` outside the battle phase."""

    def __init__(self, game: TriGame, *, blank: bool = False) -> None:
        super().__init__(game)
        self.battle = None
        self._counters = [0] * len(COUNTER_NAMES)
        if blank:
            return
        n = game.num_players
        self.owner: list[int] = [-1] * game.T
        self.owned: list[set[int]] = [set() for _ in range(n)]
        self.hands: list[list[int]] = [list(game.start_hand) for _ in range(n)]
        self.alive: list[bool] = [True] * n
        self.n_alive: int = n
        self.empty: int = game.T
        self.used: list[bool] = [False] * game.S
        self.to_move: int = 0
        self.round: int = 1
        self.turn: int = 0
        self.phase: int = PLACE

    # --- protocol ------------------------------------------------------------------------
    def current_player(self) -> int:
        ph = self.phase
        if ph <= ACT:
            return self.to_move
        if ph == BATTLE:
            b = self.battle
            assert b is not None
            step = b.step
            if step <= D_ROLL:
                return CHANCE
            return b.attacker if step == A_CARD else b.defender
        if ph == OVER:
            return TERMINAL
        return CHANCE

    def _legal_actions(self) -> list[int]:
        ph = self.phase
        g = self.game
        if ph == ACT:
            return self._act_actions(g, self.to_move)
        if ph == BATTLE:
            b = self.battle
            assert b is not None
            step = b.step
            if step <= D_ROLL:
                return [a for a, _ in self.chance_outcomes()]
            if step == VOID:
                att = b.attacker
                owner = self.owner
                base = g.VOID
                return sorted(base + u for u in g.NB[b.target] if owner[u] == att)
            hand = self.hands[b.attacker if step == A_CARD else b.defender]
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

    def _act_actions(self, g: TriGame, p: int) -> list[int]:
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
        if corners and self.empty and g.teleports:
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

    def chance_outcomes(self) -> list[tuple[int, float]]:
        ph = self.phase
        if ph == BATTLE:
            b = self.battle
            assert b is not None
            if b.step == A_ROLL:
                return list(DICE[b.dice])
            if b.step == D_ROLL:
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
        ph = self.phase
        if ph == ACT:
            self._apply_act(a)
        elif ph == BATTLE:
            self._apply_battle(a)
        elif ph == PLACE:
            t = a - self.game.PLACE
            if self._events is not None:
                self._say("place", {"seat": self.to_move, "triangle": self.game.tri_to_json(t)})
            self._claim(t, self.to_move)
            self._end_turn()
        elif ph == INCOME:
            face = a - INCOME0
            card = self.game.income_card[face]
            hands = self.hands
            for s, alive in enumerate(self.alive):
                if alive:
                    hands[s][card] += 1
            if self._events is not None:
                self._say("income", {"face": face, "cards": [CARD_VALUES[card]],
                                     "seats": [s for s, alive in enumerate(self.alive) if alive]})
            self.round += 1
            self.phase = ACT
        elif ph == TIEBREAK:
            self._eliminate(a - OUT0, "tiebreak")
            self._continue()
        else:  # pragma: no cover - apply_action refuses every action once over
            raise IllegalActionError("the game is over")

    def _apply_act(self, a: int) -> None:
        g = self.game
        p = self.to_move
        if a < g.ATTACK:
            t = a - g.EXPAND
            if self._events is not None:
                self._say("expand", {"seat": p, "triangle": g.tri_to_json(t)})
            self._claim(t, p)
            self._counters[C_EXPANDS] += 1
            self._end_turn()
        elif a < g.VOID:
            t = a - g.ATTACK
            k = 0
            owner = self.owner
            for u in g.NB[t]:
                if owner[u] == p:
                    k += 1
            if k > g.most_dice:
                k = g.most_dice
            self.phase = BATTLE
            self.battle = Battle(p, owner[t], t, k)
            c = self._counters
            c[C_BATTLES] += 1
            c[C_K1 + k - 1] += 1
            if self._events is not None:
                self._say("attack", {"attacker": p, "defender": owner[t], "target": g.tri_to_json(t), "dice": k})
        elif a == g.PASS:
            self._counters[C_PASSES] += 1
            self._end_turn()
        else:
            s, side, t = g.teleport_parts(a)
            self.used[s] = True
            left = None
            if g.teleport_move:  # the unit on that side leaves: the square opens
                left = u = 4 * s + side
                self.owner[u] = -1
                self.owned[p].discard(u)
                self.empty += 1
            if self._events is not None:
                self._say("teleport", {"seat": p, "square": [s // g.size, s % g.size],
                                       "from": None if left is None else g.tri_to_json(left),
                                       "to": g.tri_to_json(t)})
            self._claim(t, p)
            self._counters[C_TELEPORTS] += 1
            self._end_turn()

    def _apply_battle(self, a: int) -> None:
        b = self.battle
        assert b is not None
        step = b.step
        if step == A_ROLL:
            b.attacker_roll = a - ROLL0 + 1
            b.step = D_ROLL
        elif step == D_ROLL:
            b.defender_roll = a - ROLL0 + 1
            b.step = A_CARD
        elif step == A_CARD:
            b.attacker_card = CARD_VALUES[a - self.game.CARD]
            b.step = D_CARD
        elif step == D_CARD:
            b.defender_card = CARD_VALUES[a - self.game.CARD]
            self._reveal(b)
        else:  # VOID
            t = a - self.game.VOID
            if self._events is not None:
                self._say("void", {"seat": b.defender, "owner": b.attacker, "triangle": self.game.tri_to_json(t)})
            self.owner[t] = -1
            self.owned[b.attacker].discard(t)
            self.empty += 1
            self.battle = None
            self._end_turn()

    def _claim(self, t: int, p: int) -> None:
        owner = self.owner
        owner[t] = p
        self.owned[p].add(t)
        self.empty -= 1
        b = t & ~3
        if owner[b] == owner[b + 1] == owner[b + 2] == owner[b + 3]:
            self._counters[C_CLOSED] += 1
            if self._events is not None:
                n = self.game.size
                self._say("square_closed", {"seat": p, "square": [(t >> 2) // n, (t >> 2) % n]})

    def _reveal(self, b: Battle) -> None:
        att, dfn = b.attacker, b.defender
        acard, dcard = b.attacker_card, b.defender_card
        aroll, droll = b.attacker_roll, b.defender_roll
        assert acard is not None and dcard is not None and aroll is not None and droll is not None
        # both cards are discarded at the reveal (a {"card": 0} from an empty hand discards nothing)
        ha, hd = self.hands[att], self.hands[dfn]
        i = CARD_INDEX[acard]
        if ha[i]:
            ha[i] -= 1
        i = CARD_INDEX[dcard]
        if hd[i]:
            hd[i] -= 1
        a_tot = aroll + acard
        d_tot = droll + dcard
        won = a_tot > d_tot or (a_tot == d_tot and self.game.ties_attacker)
        if self._events is not None:
            self._emit_reveal(b, a_tot, d_tot, won)
        if won:
            t = b.target
            c = self._counters
            c[C_W1 + b.dice - 1] += 1
            self.owned[dfn].discard(t)
            self.owner[t] = -1
            self.empty += 1
            if self._events is not None:
                self._say("taken", {"seat": att, "from": dfn, "triangle": self.game.tri_to_json(t)})
            self._claim(t, att)
            self.battle = None
            self._end_turn()
        else:
            b.step = VOID

    def _say(self, kind: str, data: dict[str, Any]) -> None:
        """Announce a public event (a no-op on the fast path; callers test ``self._events`` first
        so that the fast path builds no fields)."""
        events = self._events
        if events is not None:
            events.append(Event(kind, data))

    def _emit_reveal(self, b: Battle, a_tot: int, d_tot: int, won: bool) -> None:
        tie = a_tot == d_tot
        self._say("battle", {
            "attacker": b.attacker, "defender": b.defender, "target": self.game.tri_to_json(b.target),
            "dice": b.dice, "attacker_roll": b.attacker_roll, "defender_roll": b.defender_roll,
            "attacker_card": b.attacker_card, "defender_card": b.defender_card,
            "attacker_total": a_tot, "defender_total": d_tot, "winner": b.attacker if won else b.defender,
            "attacker_won": won, "tie": tie, "tie_rule": self.game.options["ties"] if tie else None})

    def _end_turn(self) -> None:
        """A player's turn is complete: count it, then eliminations, end, next player."""
        self.turn += 1
        if self.round >= 2:
            alive = self.alive
            owned = self.owned
            for s in range(len(alive)):
                if alive[s] and not owned[s]:
                    self._eliminate(s, "no_unit")
        if self.empty == 0 and self.n_alive > 2:
            tied = self._weakest()
            if len(tied) > 1:
                self.phase = TIEBREAK
                if self._events is not None:
                    self._say("tiebreak", {"seats": tied})
                return
            self._eliminate(tied[0], "fewest_units" if self._events is None else self._why_weakest(tied[0]))
        self._continue()

    def _why_weakest(self, s: int) -> str:
        """``"fewest_units"``, or ``"fewest_cards"`` when another seat has as many units."""
        units = len(self.owned[s])
        others = [len(self.owned[p]) for p in range(len(self.alive)) if self.alive[p] and p != s]
        return "fewest_cards" if units in others else "fewest_units"

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
        every = self.game.income_every
        if every and self.round % every == 0:
            self.phase = INCOME  # ``round`` moves on once the income die is rolled
        else:
            self.round += 1
            self.phase = ACT

    def _weakest(self) -> list[int]:
        """Alive seats with the fewest units, then the lowest card total in hand."""
        alive = self.alive
        owned = self.owned
        best: tuple[int, int] | None = None
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

    def _eliminate(self, s: int, why: str) -> None:
        self.alive[s] = False
        self.n_alive -= 1
        owner = self.owner
        for t in self.owned[s]:
            owner[t] = -1
        units = len(self.owned[s])
        self.empty += units
        self.owned[s] = set()
        self._counters[C_ELIM] += 1
        if self._events is not None:
            self._say("eliminated", {"seat": s, "why": why, "units": units})
        k = self.num_players - self.n_alive
        gain = ELIMINATION_INCOME.get(k) if self.game.elimination_cards else None
        if gain:
            for p, alive in enumerate(self.alive):
                if alive:
                    h = self.hands[p]
                    for i in range(4):
                        h[i] += gain[i]
            if self._events is not None:
                self._say("elimination_income", {
                    "eliminations": k, "cards": [v for i, v in enumerate(CARD_VALUES) for _ in range(gain[i])],
                    "seats": [p for p, alive in enumerate(self.alive) if alive]})

    def _copy(self) -> TriState:
        c = TriState.__new__(TriState)
        c.game = self.game
        c._legal = None
        c._events = None
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
        b = self.battle
        c.battle = None if b is None else b.copy()
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

    # --- the contract's hooks ------------------------------------------------------------
    def turns_played(self) -> int:
        """Player turns completed (the position's ``turn``), read directly (the lab calls it often)."""
        return self.turn

    def scores(self) -> list[float]:
        """Units owned by each seat (the measure of ``turn_limit``; 0 for a seat that is out)."""
        return [float(len(x)) for x in self.owned]

    def end_reason(self) -> str:
        """``"last_player"`` (one player left), ``"board_full"`` (no empty triangle, two players
        left) or ``"turn_limit"``; ``""`` while the game goes on."""
        if self.phase != OVER:
            return ""
        if self.n_alive <= 1:
            return "last_player"
        if self.empty == 0 and self.n_alive == 2:
            return "board_full"
        return "turn_limit"

    def counters(self) -> dict[str, float]:
        """Event counts since the initial state (a state read from JSON starts at 0); the names
        and meanings are ``TriGame.counters``."""
        return dict(zip(COUNTER_NAMES, self._counters, strict=True))

    def _action_event(self, action: int) -> Event:
        """Battle rolls and the attacker's card are seen by their owner only (RULES.md TRI
        "Battles" 2: each picks knowing only their own roll; the attacker's card is hidden from the
        defender); the defender's card is public, as the same action reveals the battle."""
        b = self.battle
        if b is None:  # built here rather than by the default, for speed: the same events
            if self.phase <= ACT:
                return Event(ev.MOVE, {"seat": self.to_move, "action": self.action_to_json(action)})
            return Event(ev.CHANCE, {"outcome": self.action_to_json(action)})
        step = b.step
        if step <= D_ROLL:
            seat = b.attacker if step == A_ROLL else b.defender
            return Event(ev.CHANCE, {"outcome": self.action_to_json(action), "seat": seat},
                         frozenset((seat,)), {"seat": seat})
        if step == A_CARD:
            seat = b.attacker
            return Event(ev.MOVE, {"seat": seat, "action": self.action_to_json(action)},
                         frozenset((seat,)), {"seat": seat})
        return Event(ev.MOVE, {"seat": b.defender, "action": self.action_to_json(action)})

    def action_label(self, action: int, seat: int) -> Hashable:
        """What ``seat`` observes of ``action``: the action itself, ``None`` for another seat's
        battle roll or the attacker's card, and at the reveal (the defender's card) the action
        with the attacker's roll, the defender's roll and the attacker's card."""
        b = self.battle
        if b is None:
            return action
        step = b.step
        if step in (A_ROLL, A_CARD):  # the attacker's roll and card: theirs only
            return action if seat == b.attacker else None
        if step == D_ROLL:  # the defender's roll: theirs only
            return action if seat == b.defender else None
        if step == D_CARD:  # the reveal: both rolls and both cards become public
            return (action, b.attacker_roll, b.defender_roll, b.attacker_card)
        return action

    def worlds(self, seat: int) -> Worlds | None:
        """During a battle, the positions ``seat`` cannot tell apart: every value of the other
        side's roll (highest of ``dice`` dice) and of the attacker's card (uniform over the
        distinct values in its hand) not shown to ``seat``, weighted by their probabilities;
        ``None`` when ``seat`` sees everything (outside a battle, at the ``void`` step, or a seat
        whose observation hides nothing)."""
        b = self.battle
        if b is None or b.step == VOID:
            return None
        hidden: list[tuple[str, list[tuple[int, float]]]] = []
        if b.step > A_ROLL and seat != b.attacker:
            hidden.append(("attacker_roll", roll_probs(b.dice)))
        if b.step > D_ROLL and seat != b.defender:
            hidden.append(("defender_roll", roll_probs(1)))
        if b.step > A_CARD and seat != b.attacker:
            hand = _hand_values(self.hands[b.attacker])
            hidden.append(("attacker_card", [(card, 1 / len(hand)) for card in hand]))
        if not hidden:
            return None
        states: list[State] = []
        weights: list[float] = []
        for combo in itertools.product(*(values for _key, values in hidden)):
            world = self._copy()
            wb = world.battle
            assert wb is not None
            w = 1.0
            for (key, _values), (value, p) in zip(hidden, combo, strict=True):
                setattr(wb, key, value)
                w *= p
            if w <= 0:
                continue
            states.append(world)
            weights.append(w)
        return states, weights

    # --- extras -------------------------------------------------------------------------
    def units(self) -> list[int]:
        """Triangles owned by each seat."""
        return [len(x) for x in self.owned]

    def is_closed(self, square: int) -> bool:
        b = square * 4
        o = self.owner
        return o[b] >= 0 and o[b] == o[b + 1] == o[b + 2] == o[b + 3]

    # --- JSON ---------------------------------------------------------------------------
    def action_to_json(self, action: Any) -> dict[str, Any]:
        if type(action) is not int and (isinstance(action, bool) or not isinstance(action, int)):
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
        b = self.battle
        if b is None:
            return None
        return {
            "attacker": b.attacker, "defender": b.defender,
            "target": self.game.tri_key[b.target], "dice": b.dice,
            "step": STEP_NAMES[b.step],
            "attacker_roll": b.attacker_roll, "defender_roll": b.defender_roll,
            "attacker_card": b.attacker_card, "defender_card": b.defender_card,
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
            # option teleports off: said only then, so a position of RULES.md's game is written as before
            **({} if g.teleports else {"teleports": False}),
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
        b = self.battle
        if battle is not None and b is not None and b.step != VOID:
            hidden = []
            if seat != b.attacker:
                hidden += ["attacker_roll", "attacker_card"]
            if seat != b.defender:
                hidden += ["defender_roll", "defender_card"]
            for k in hidden:
                battle[k] = None
            battle["hidden"] = hidden
        return data

    # --- text ---------------------------------------------------------------------------
    def render(self) -> str:
        g = self.game
        n = g.size
        owner = self.owner
        battle = self.battle
        target = -1 if battle is None else battle.target

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
                    "*" if b <= target < b + 4 else " ")
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
        if battle is not None:
            def v(x: Any) -> str:
                return "-" if x is None else str(x)
            lines.append(
                f"battle: P{battle.attacker} attacks {g.tri_key[battle.target]} of P{battle.defender} with "
                f"{battle.dice} dice; step {STEP_NAMES[battle.step]}; rolls {v(battle.attacker_roll)}/"
                f"{v(battle.defender_roll)}; cards {v(battle.attacker_card)}/{v(battle.defender_card)}")
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
        found = DIR_INDEX.get(value["from"]) if isinstance(value["from"], str) else None
        if found is None:
            raise IllegalActionError(f'teleport from: the side must be "N", "E", "S" or "W", '
                                     f"not {json.dumps(value['from'], default=str)}")
        side = found
    return g.teleport_action(s, side, t)


def _hand_values(counts: list[int]) -> list[int]:
    """The distinct card values in a hand (counts per ``CARD_VALUES``), ascending; ``[0]`` when
    the hand is empty (a player with no card plays ``{"card": 0}``)."""
    return [v for i, v in enumerate(CARD_VALUES) if counts[i]] or [0]


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
# The shape of the position JSON (RULES.md TRI "Position JSON"), checked by the shared reader;
# the functions below keep only the rule invariants.

Card = Literal[0, 2, 3, 4]
Roll = Annotated[int, Between(1, 6)]


class BattleJson(TypedDict):
    """``battle`` during the battle phase (``null`` otherwise)."""

    attacker: int
    defender: int
    target: str
    dice: Annotated[int, Between(1, 3)]
    step: Literal["attacker_roll", "defender_roll", "attacker_card", "defender_card", "void"]
    attacker_roll: Roll | None
    defender_roll: Roll | None
    attacker_card: Card | None
    defender_card: Card | None


class PositionJson(TypedDict):
    """A TRI position (``"turn"`` as in every game)."""

    game: Literal["tri"]
    players: int
    size: int
    owner: dict[str, int]
    hands: list[list[Card]]
    alive: list[bool]
    teleports_used: list[str]
    to_move: int
    round: Annotated[int, Between(1, None)]
    turn: Annotated[int, Between(0, None)]
    phase: Literal["place", "act", "battle", "income_roll", "tiebreak", "over"]
    battle: BattleJson | None
    teleports: NotRequired[bool]


def _seat(value: int, what: str, n: int) -> int:
    if not 0 <= value < n:
        raise ValueError(f"{what} must be a seat 0 to {n - 1}, not {value}")
    return value


def _check_over(g: TriGame, st: TriState, used: list[str]) -> None:
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
    pos = read(data, PositionJson)
    n = g.num_players
    if pos["players"] != n:
        raise ValueError(f"players is {pos['players']} but this game has {n} players")
    if "teleports" in pos and pos["teleports"] != g.teleports:
        raise ValueError(f"teleports is {pos['teleports']} but this game's is {g.teleports}")
    if pos["size"] != g.size:
        raise ValueError(f"size is {pos['size']} but this game's board has size {g.size}")
    st = TriState(g, blank=True)
    _read_alive(st, pos["alive"], n)
    _read_owner(g, st, pos["owner"])
    _read_hands(st, pos["hands"], n)
    _read_teleports(g, st, pos["teleports_used"])
    st.to_move = _seat(pos["to_move"], "to_move", n)
    st.round = pos["round"]
    st.turn = turn = pos["turn"]
    st.phase = phase = PHASE_NAMES.index(pos["phase"])
    if phase != BATTLE and pos["battle"] is not None:
        raise ValueError(f"battle must be null outside the battle phase (phase is {pos['phase']!r})")
    if turn > g.turn_limit:
        raise ValueError(f"turn {turn} is beyond the turn limit {g.turn_limit}: the game ended at turn "
                         f"{g.turn_limit}")
    if phase == OVER:
        _check_over(g, st, pos["teleports_used"])
        return st
    if phase != TIEBREAK and turn >= g.turn_limit:
        raise ValueError(f"turn {turn} has reached the turn limit {g.turn_limit}: the phase must be 'over'")
    # RULES.md Conventions: to_move at a chance node (income_roll, tiebreak) and at over is not
    # fixed by the rules; any seat is read (see the phases below). During a battle it is the attacker.
    if phase not in (INCOME, TIEBREAK) and not st.alive[st.to_move]:
        raise ValueError(f"to_move is seat {st.to_move}, who is out of the game")
    if phase == PLACE:
        _check_placement(g, st)
        return st
    _check_after_placement(st, pos["phase"])
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
        every = g.income_every
        if not every or st.round % every:
            raise ValueError(f"the income die is rolled after every round that is a multiple of {every} "
                             f"(option income_every; 0: never), not after round {st.round}")
        # the starting player rolls and then opens the next round: ours is the first seat still in
        st.to_move = st.alive.index(True)
        return st
    if phase == BATTLE:
        battle = pos["battle"]
        if battle is None:
            raise ValueError("during the battle phase battle must be an object")
        st.battle = _read_battle(g, st, battle)
    return st


def _read_alive(st: TriState, alive: list[bool], n: int) -> None:
    if len(alive) != n:
        raise ValueError(f"alive must be a list of {n} true/false values, not {alive!r}")
    if not any(alive):
        raise ValueError("alive: at least one player must still be in the game")
    st.alive = list(alive)
    st.n_alive = sum(alive)


def _read_owner(g: TriGame, st: TriState, owners: dict[str, int]) -> None:
    st.owner = owner = [-1] * g.T
    st.owned = [set() for _ in range(g.num_players)]
    for key, seat in owners.items():
        t = g.tri_index.get(key)
        if t is None:
            raise ValueError(f"owner: {key!r} is not a triangle of a size-{g.size} board "
                             f"(\"row,col,D\" with row and col 0 to {g.size - 1}, D one of N E S W)")
        _seat(seat, f"owner[{key!r}]", g.num_players)
        if not st.alive[seat]:
            raise ValueError(f"owner[{key!r}] is seat {seat}, who is out of the game")
        owner[t] = seat
        st.owned[seat].add(t)
    st.empty = owner.count(-1)


def _read_hands(st: TriState, hands: list[list[Card]], n: int) -> None:
    if len(hands) != n:
        raise ValueError(f"hands must be a list of {n} lists of cards")
    st.hands = []
    for hand in hands:
        counts = [0, 0, 0, 0]
        for v in hand:
            counts[CARD_INDEX[v]] += 1
        st.hands.append(counts)


def _read_teleports(g: TriGame, st: TriState, used: list[str]) -> None:
    st.used = [False] * g.S
    for key in used:
        s = g.sq_index.get(key)
        if s is None:
            raise ValueError(f"teleports_used: {key!r} is not a square \"row,col\" of a size-{g.size} board")
        if st.used[s]:
            raise ValueError(f"teleports_used lists {key!r} twice")
        st.used[s] = True


def _check_placement(g: TriGame, st: TriState) -> None:
    to_move = st.to_move
    if st.round != 1:
        raise ValueError(f"the placement phase is round 1, not round {st.round}")
    if not all(st.alive):
        raise ValueError("nobody can be out of the game during the placement round")
    if any(st.used):
        raise ValueError("no teleport can have been used during the placement round")
    if st.turn != to_move:
        raise ValueError(f"in the placement round turn equals to_move (seats 0..{to_move - 1} have "
                         f"placed), not turn {st.turn} with to_move {to_move}")
    for s, units in enumerate(st.units()):
        want = 1 if s < to_move else 0
        if units != want:
            raise ValueError(f"in the placement round before seat {to_move} places, seat {s} "
                             f"owns {want} triangle(s), not {units}")
    owner = st.owner
    for t, o in enumerate(owner):
        if o >= 0 and any(owner[u] >= 0 for u in g.NB[t]):
            raise ValueError(f"placed units may not be adjacent: {g.tri_key[t]} touches another unit")


def _check_after_placement(st: TriState, phase_name: str) -> None:
    if st.round < 2:
        raise ValueError(f"phase {phase_name!r} comes after the placement round: round must be 2 or more")
    if st.n_alive < 2:
        raise ValueError("with one player left the game is over: phase must be 'over'")
    for s, units in enumerate(st.units()):
        if st.alive[s] and not units:
            raise ValueError(f"seat {s} has no unit left after the first round and must be out")


def _read_battle(g: TriGame, st: TriState, battle: BattleJson) -> Battle:
    n = g.num_players
    owner = st.owner
    att = _seat(battle["attacker"], "battle['attacker']", n)
    dfn = _seat(battle["defender"], "battle['defender']", n)
    if att != st.to_move:
        raise ValueError(f"battle['attacker'] must be the player to move ({st.to_move}), not {att}")
    if dfn == att or not st.alive[dfn]:
        raise ValueError(f"battle['defender'] must be another player still in the game, not {dfn}")
    tkey = battle["target"]
    t = g.tri_index.get(tkey)
    if t is None:
        raise ValueError(f"battle['target'] {tkey!r} is not a triangle \"row,col,D\" of this board")
    if owner[t] != dfn:
        raise ValueError(f"battle['target'] {tkey} must belong to the defender {dfn}")
    if st.is_closed(t >> 2):
        raise ValueError(f"battle['target'] {tkey} is in a closed square, which cannot be attacked")
    k = sum(1 for u in g.NB[t] if owner[u] == att)
    if k == 0:
        raise ValueError(f"battle['target'] {tkey} is not adjacent to any unit of the attacker")
    k = min(k, g.most_dice)
    if battle["dice"] != k:
        raise ValueError(f"battle['dice'] must be {k}, the attacker's units adjacent to the target "
                         f"(at most most_dice, {g.most_dice})")
    step = STEP_NAMES.index(battle["step"])
    b = Battle(att, dfn, t, k, step, battle["attacker_roll"], battle["defender_roll"],
               battle["attacker_card"], battle["defender_card"])
    _check_battle_values(g, st, b)
    return b


def _check_battle_values(g: TriGame, st: TriState, b: Battle) -> None:
    """Rolls and cards are set exactly for the steps already played; the attacker's chosen card is
    in its hand until the reveal; at ``void`` the attack has failed."""
    decided = (("attacker_roll", b.attacker_roll, A_ROLL), ("defender_roll", b.defender_roll, D_ROLL),
               ("attacker_card", b.attacker_card, A_CARD), ("defender_card", b.defender_card, D_CARD))
    for key, value, step in decided:
        if b.step > step and value is None:
            raise ValueError(f"battle[{key!r}] must be set at step {STEP_NAMES[b.step]!r}")
        if b.step <= step and value is not None:
            raise ValueError(f"battle[{key!r}] must be null at step {STEP_NAMES[b.step]!r}")
    card = b.attacker_card
    if b.step == D_CARD and card is not None:
        hand = st.hands[b.attacker]
        if not (hand[CARD_INDEX[card]] or (card == 0 and not any(hand))):
            raise ValueError(f"battle['attacker_card'] {card} is not in the attacker's hand "
                             "(the chosen card stays in hand until the reveal)")
    if b.step == VOID:
        a_tot, d_tot = b.totals()
        if a_tot > d_tot or (a_tot == d_tot and g.ties_attacker):
            raise ValueError(f"at step 'void' the attack must have failed, but {a_tot} beats {d_tot}")
