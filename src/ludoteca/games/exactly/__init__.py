"""exactly: collect coins that add up to exactly one euro, three times (seed ``001_…``).

Rules as in ``RULES.md`` section 1 and ``docs/rules/exactly.md``.

Integer encoding (fixed per game; ``P = players + 1`` piles, pile 0 is the bank and pile
``s + 1`` is seat ``s``'s pile):

- chance outcomes ``0..5``: the die faces ``0, ?, 50, 20, 10, 5`` (both the turn's die and
  the roll-off rolls);
- player action ``6``: pass;
- player action ``7 + (v * P + f) * P + t``: move one coin of value index ``v``
  (``5, 10, 20, 50`` → ``0..3``) from pile ``f`` to pile ``t``.

Chance outcomes and player moves never share an integer, so an action means the same thing
at every node and a roll is simply illegal where a player must move (and vice versa).

Events (:mod:`ludoteca.core.events`; every one public, piles written as in actions: ``"bank"``
or a seat), in the order ``apply_action`` returns them:

- ``chance`` ``{"outcome": {"roll": face}, "seat", "face", "rolloff"}``: ``seat`` rolled ``face``
  (``0``, ``"?"``, ``50``, ``20``, ``10``, ``5``); ``rolloff`` is true for a roll of the roll-off
  that decides who starts, false for the die of a turn.
- ``rolloff_tie`` ``{"seats", "face"}``: these seats tied for the highest roll (``face``) and roll
  again, in seat order.
- ``starter`` ``{"seat"}``: the roll-off is over; ``seat`` takes the first turn.
- ``move`` ``{"seat", "action"}``: the player's action, then one of:
- ``coin_moved`` ``{"seat", "coin", "from", "to"}``: ``seat`` moved a coin of ``coin`` cents.
- ``pass`` ``{"seat"}``: ``seat`` had no legal move and passed.
- ``euro`` ``{"seats", "mover", "euros", "target"}``: after ``mover``'s move the players ``seats``
  hold exactly ``target`` cents (the table's target; 100 by the rulebook) and each takes a 1-euro
  token; ``euros``: everyone's tokens now. The round
  ends. Unless the game is over, it is followed by
- ``new_round`` ``{"seat"}``: every coin is back in the bank and ``seat`` (the player to the left
  of the mover) rolls first; then
- ``start_coins`` ``{"seats", "coin"}``: each of ``seats`` took a ``coin``-cent coin from the bank
  (option ``start_coin="round"``; the coins of the game's start are in the initial position).
- ``end`` ``{"reason", "returns", "winners"}``: ``reason`` is ``"three_euros"`` (someone holds
  three 1-euro tokens) or ``"turn_limit"``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Literal, NotRequired, TypedDict

from ludoteca.core import events as ev
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Counter, Game, State
from ludoteca.core.i18n import N_, _
from ludoteca.core.jsonutil import need_int, per_seat
from ludoteca.core.options import Choice, Option, as_int
from ludoteca.core.shape import read

VALUES = (5, 10, 20, 50)
"""Coin values in cents, by value index."""
VALUE_INDEX = {5: 0, 10: 1, 20: 2, 50: 3}
VALUE_KEYS = ("5", "10", "20", "50")
COINS_PER_VALUE = 10
EUROS_TOTAL = 15

FACES: tuple[int | str, ...] = (0, "?", 50, 20, 10, 5)
"""Die face of each chance outcome."""
FACE_RANK = (0, 5, 4, 3, 2, 1)
"""Roll-off ranking of each face: ``?`` > 50 > 20 > 10 > 5 > 0."""
FACE_VALUES: tuple[tuple[int, ...], ...] = ((), (0, 1, 2, 3), (3,), (2,), (1,), (0,))
"""Value indices a face lets the player move."""
FACE_NAMES = ("0", "?", "50", "20", "10", "5")
QUESTION = 1
ZERO = 0

PASS = 6
MOVE_BASE = 7
CAP = 150
TARGET = 100
WIN_EUROS = 3
BANK_OFFSET = 1_000_000
"""Added to the bank's running total so it never equals 100 and the scoring test is one ``in``."""

START_ROLL, ROLL, MOVE, OVER = 0, 1, 2, 3
PHASES = ("start_roll", "roll", "move", "over")

CHANCE_ACTIONS = [0, 1, 2, 3, 4, 5]
CHANCE_OUTCOMES = [(i, 1.0 / 6.0) for i in range(6)]
"""The standard die's outcomes (every face once); a game's own are ``ExactlyGame.chance_outcomes``."""
MOST_COINS = sum(VALUES) * COINS_PER_VALUE
"""850: every coin of the box; a target or a cap beyond it means nothing more."""
DIE_OPTIONS = ("die_zero", "die_question", "die_50", "die_20", "die_10", "die_5")
"""The options counting the die's faces showing each face of :data:`FACES`, in that order."""
RULEBOOK_OPTIONS = frozenset({"target", "euros_to_win", "cap", *DIE_OPTIONS})
"""The rulebook's numbers as options: left out of records at their defaults."""


END_THREE_EUROS = "three_euros"
END_TURN_LIMIT = "turn_limit"

COUNTERS = (
    Counter("rounds", "mean_per_game", N_("rounds completed by a scoring move, per game")),
    Counter("euros", "ratio_per_event", N_("1-euro tokens awarded per round completed (two players can score on "
                                           "one move, so it may exceed 1)"), of="rounds"),
    Counter("question_rounds", "share_per_event", N_("rounds whose scoring move was made on a '?' roll"),
            of="rounds"),
    Counter("cap_blocks", "share_per_event", N_("turns in which the 150-cent cap forbade at least one move of the "
                                                "rolled value that would otherwise be legal"), of="turns"),
)
"""The figures the balance lab reports for exactly (``State.counters()``, ``Game.counters``)."""

LAB_NAMES = (N_("rounds"), N_("euros"), N_("question rounds"), N_("cap blocks"), N_("three euros"), N_("turn limit"))
"""The names of the counters, the end reasons and the score as the lab report shows them (translated
there with ``_``; the names themselves stay the identifiers of ``counters()`` and ``end_reason()``)."""


START_COIN_CHOICES = ("round", "game", "never")
"""Values of the ``start_coin`` option (RULES.md): when each player takes a 5-cent coin."""
START_COIN_ALIASES: dict[str, str] = {"true": "round", "false": "never"}


def _resolve_start_coin(value: Any, _resolved: Mapping[str, Any]) -> str:
    """``start_coin``: "round" (also true), "game" or "never" (also false); canonical text back."""
    if isinstance(value, bool):
        return "round" if value else "never"
    if isinstance(value, str):
        text = value.strip().lower()
        text = START_COIN_ALIASES.get(text, text)
        if text in START_COIN_CHOICES:
            return text
    raise ValueError(_(
        "expected \"round\" (or true), \"game\" or \"never\" (or false), got {value}"
    ).format(value=repr(value)))


def _resolve_target(value: Any, resolved: Mapping[str, Any]) -> int:
    """``target``: a whole number of cents the coins can make (a multiple of 5, 5 to 850)."""
    cents: int = as_int(5, MOST_COINS)(value, resolved)
    if cents % 5:
        raise ValueError(_("expected a multiple of 5 cents (the coins are 5, 10, 20 and 50), got {value}").format(
            value=cents))
    return cents


def _resolve_euros_to_win(value: Any, resolved: Mapping[str, Any]) -> int:
    """``euros_to_win``: 1 or more, with enough 1-euro tokens in the box for every player to come
    one short of it and two to score on the last move (players x (euros - 1) + 2 <= 15)."""
    euros: int = as_int(1, EUROS_TOTAL)(value, resolved)
    n = int(resolved["players"])
    most = most_euros_to_win(n)
    if euros > most:
        raise ValueError(_(
            "with {players} players at most {most} euros can be needed to win: the box holds {tokens} "
            "1-euro tokens, got {value}").format(players=n, most=most, tokens=EUROS_TOTAL, value=euros))
    return euros


def most_euros_to_win(players: int) -> int:
    """The largest ``euros_to_win`` the box's 15 tokens allow with ``players`` players: every player
    one short and two scoring on the same move must never need a 16th token."""
    return (EUROS_TOTAL - min(2, players)) // players + 1


def _resolve_die_face(value: Any, resolved: Mapping[str, Any]) -> int:
    count: int = as_int(0, 6)(value, resolved)
    return count


def _resolve_last_die_face(value: Any, resolved: Mapping[str, Any]) -> int:
    """The last face count, then the die as a whole: at least two different faces (else the
    roll-off that decides who starts never ends)."""
    count = _resolve_die_face(value, resolved)
    counts = [int(resolved[name]) for name in DIE_OPTIONS[:-1]] + [count]
    if sum(1 for c in counts if c) < 2:
        raise ValueError(_("the die needs at least two different faces, or the roll-off that decides who "
                           "starts never ends"))
    return count


def _die_option(name: str, face: str, label: str, last: bool = False) -> Option:
    return Option(
        name, f"how many faces of the die show {face} (RULES.md's die: one of each face)", 1,
        _resolve_last_die_face if last else _resolve_die_face, kind="int", low=0, high=6, label=label, variant=True,
        help="how many of the die's faces show this; every face is equally likely, so more faces make it "
             "more frequent and 0 removes it")


class ExactlyGame(Game):
    """exactly: move coins between piles to hold exactly one euro; three euros win.

    Each turn the active player rolls a die (0, ?, 50, 20, 10, 5) and moves one coin of the
    rolled value (any value on ?) from one pile to another: the bank and every player's pile.
    No coin may enter a pile already holding more than 150 cents. Whoever holds exactly
    100 cents after a move takes a 1-euro token and the round restarts.
    """

    name = "exactly"
    title = "exactly"
    min_players = 2
    max_players = 6
    hidden_information = False
    score_name = "euros"
    counters = COUNTERS
    agent_defaults = {"mcts": {"iterations": 1000, "cap": 10, "c": 0.4},
                      "strong": {"iterations": 3000, "cap": 10, "c": 0.4}}  # docs/strength.md: 3x mcts's budget in C
    compiled_part = "compiled"
    rules_notes = "docs/rules/exactly.md"
    catalogue_order = 1
    OPTIONS = (
        Option("start_coin", "when each player takes a 5-cent coin: \"round\" (start of the game and of every "
               "round; also true), \"game\" (start of the game only) or \"never\" (also false)",
               "round", _resolve_start_coin, kind="choice", label="5-cent coin to start",
               help="when each player takes a 5-cent coin from the bank",
               choices=(
                   Choice("round", "every round", "at the start of the game and again at the start of every round"),
                   Choice("game", "first round only", "only at the start of the game; later rounds start with "
                                                      "empty piles"),
                   Choice("never", "never", "nobody ever takes one; every round starts with empty piles"),
               )),
        Option("target", "the pile total, in cents, that takes a 1-euro token (a multiple of 5)", TARGET,
               _resolve_target, kind="int", low=5, high=MOST_COINS, label="target",
               help="the cents a pile must hold exactly to take a 1-euro token; a multiple of 5", variant=True),
        Option("euros_to_win", "1-euro tokens that win the game", WIN_EUROS, _resolve_euros_to_win,
               kind="int", low=1, high=most_euros_to_win(2), label="euros to win",
               help="the 1-euro tokens that win the game; with more players fewer are allowed, since the "
                    "box holds 15", variant=True),
        Option("cap", "a coin may not enter a player's pile holding more than this many cents (850: no cap)", CAP,
               kind="int", low=0, high=MOST_COINS, label="closed above",
               help="a player's pile holding more than this many cents accepts no coin; 850 (every coin) "
                    "means no limit", variant=True),
        _die_option("die_zero", "0", "die faces showing 0"),
        _die_option("die_question", "?", "die faces showing ?"),
        _die_option("die_50", "50", "die faces showing 50"),
        _die_option("die_20", "20", "die faces showing 20"),
        _die_option("die_10", "10", "die faces showing 10"),
        _die_option("die_5", "5", "die faces showing 5", last=True),
        Option("turn_limit", "the game ends after this many player turns; most euros win", 1000,
               kind="int", low=1, label="turn limit",
               help="the game stops after this many player turns; the players with the most euros share the win"),
    )

    def _setup(self) -> None:
        n = self.num_players
        p = n + 1
        self.piles = p
        self.start_coin: str = self.options["start_coin"]
        self.turn_limit: int = self.options["turn_limit"]
        self.target: int = self.options["target"]
        self.euros_to_win: int = self.options["euros_to_win"]
        self.cap: int = self.options["cap"]
        self.die: tuple[int, ...] = tuple(int(self.options[name]) for name in DIE_OPTIONS)
        """How many faces of the die show each face of FACES."""
        sides = sum(self.die)
        self.chance_actions: list[int] = [f for f in range(6) if self.die[f]]
        self.chance_outcomes: list[tuple[int, float]] = [(f, self.die[f] / sides) for f in self.chance_actions]
        size = MOVE_BASE + 4 * p * p
        self._size = size
        # Per action: source index, destination index (into the flat counts), value,
        # source pile, destination pile. -1 for non-moves.
        src = [-1] * size
        dst = [-1] * size
        val = [0] * size
        frm = [-1] * size
        to = [-1] * size
        for v in range(4):
            for f in range(p):
                for t in range(p):
                    a = MOVE_BASE + (v * p + f) * p + t
                    src[a] = v * p + f
                    dst[a] = v * p + t
                    val[a] = VALUES[v]
                    frm[a] = f
                    to[a] = t
        self.a_src, self.a_dst, self.a_val, self.a_from, self.a_to = src, dst, val, frm, to

    def record_options(self) -> dict[str, Any]:
        """The options, without the rulebook's numbers (target, euros to win, cap, die) at RULES.md's
        values: records, lab results and golden playthroughs written before those options existed
        stay as they were (and read back the same)."""
        options = dict(self.options)
        for opt in self.OPTIONS:
            if opt.name in RULEBOOK_OPTIONS and options[opt.name] == opt.default:
                del options[opt.name]
        return options

    def num_distinct_actions(self) -> int:
        return self._size

    def max_chance_outcomes(self) -> int:
        return 6

    def new_initial_state(self) -> ExactlyState:
        s = ExactlyState(self)
        s._new_round(first=True)
        s.phase = START_ROLL
        s.ro_seats = list(range(self.num_players))
        s.ro_rolls = []
        s.to_move = 0
        return s

    def state_from_json(self, data: Mapping[str, Any]) -> ExactlyState:
        return _state_from_json(self, data)


class ExactlyState(State):
    __slots__ = (
        "c_cap", "c_euros", "c_question", "c_rounds", "counts", "euros", "face", "phase", "ro_rolls",
        "ro_seats", "to_move", "totals", "turn",
    )

    game: ExactlyGame

    def __init__(self, game: ExactlyGame) -> None:
        super().__init__(game)
        p = game.piles
        self.counts: list[int] = [0] * (4 * p)
        """Coins by ``value_index * P + pile``."""
        self.totals: list[int] = [0] * p
        """Cents by pile; the bank's is offset by BANK_OFFSET."""
        self.euros: list[int] = [0] * game.num_players
        self.to_move = 0
        self.phase = ROLL
        self.face = -1
        self.turn = 0
        self.ro_seats: list[int] | None = None
        self.ro_rolls: list[int] = []
        self.c_rounds = self.c_euros = self.c_question = self.c_cap = 0

    # --- internals ---------------------------------------------------------------------
    def _new_round(self, first: bool = False) -> None:
        """All coins in the bank, then (option start_coin) one 5-cent coin to each player.

        ``first``: the start of the game (``start_coin="game"`` deals the coin only then)."""
        g = self.game
        p = g.piles
        counts = [0] * (4 * p)
        for v in range(4):
            counts[v * p] = COINS_PER_VALUE
        totals = [0] * p
        if g.start_coin == "round" or (first and g.start_coin == "game"):
            # 10 five-cent coins, at most 6 players: the bank never runs out.
            counts[0] -= g.num_players
            for s in range(1, p):
                counts[s] = 1
                totals[s] = 5
        self.counts = counts
        self.totals = totals
        self._set_bank_total()

    def _set_bank_total(self) -> None:
        p = self.game.piles
        c = self.counts
        self.totals[0] = BANK_OFFSET + sum(VALUES[v] * c[v * p] for v in range(4))

    def _end_turn(self) -> None:
        self.turn += 1
        self.face = -1
        if self.turn >= self.game.turn_limit:
            self.phase = OVER
            return
        self.to_move = (self.to_move + 1) % self.game.num_players
        self.phase = ROLL

    def _score(self) -> None:
        """After a move: every player at exactly 100 cents takes a euro; the round ends."""
        g = self.game
        totals = self.totals
        euros = self.euros
        won = False
        for s in range(g.num_players):
            if totals[s + 1] == g.target:
                euros[s] += 1
                self.c_euros += 1
                if euros[s] >= g.euros_to_win:
                    won = True
        self.c_rounds += 1
        if self.face == QUESTION:
            self.c_question += 1
        if self._events is not None:
            self._emit("euro", seats=[s for s in range(g.num_players) if totals[s + 1] == g.target],
                       mover=self.to_move, euros=list(euros), target=g.target)
        self.turn += 1
        self.face = -1
        if won or self.turn >= g.turn_limit:
            # The game is over: the position stays as the last move left it.
            self.phase = OVER
            return
        self._new_round()
        self.to_move = (self.to_move + 1) % g.num_players
        self.phase = ROLL
        if self._events is not None:
            self._emit("new_round", seat=self.to_move)
            if g.start_coin == "round":
                self._emit("start_coins", seats=list(range(g.num_players)), coin=5)

    def _cap_blocks_something(self, face: int) -> bool:
        """Whether the cap (150 cents) forbids a move that would otherwise be legal."""
        p = self.game.piles
        cap = self.game.cap
        totals = self.totals
        counts = self.counts
        for t in range(1, p):
            if totals[t] > cap:
                for v in FACE_VALUES[face]:
                    base = v * p
                    for f in range(p):
                        if f != t and counts[base + f]:
                            return True
        return False

    # --- the State hooks ---------------------------------------------------------------
    def current_player(self) -> int:
        ph = self.phase
        if ph == MOVE:
            return self.to_move
        if ph == OVER:
            return TERMINAL
        return CHANCE

    def _legal_actions(self) -> list[int]:
        ph = self.phase
        if ph == MOVE:
            p = self.game.piles
            cap = self.game.cap
            totals = self.totals
            counts = self.counts
            open_piles = [0]
            for t in range(1, p):
                if totals[t] <= cap:
                    open_piles.append(t)
            out: list[int] = []
            for v in FACE_VALUES[self.face]:
                idx = v * p
                for f in range(p):
                    if counts[idx + f]:
                        base = MOVE_BASE + (idx + f) * p
                        out += [base + t for t in open_piles if t != f]
            return out or [PASS]
        if ph == OVER:
            return []
        return list(self.game.chance_actions)

    def _apply(self, action: int) -> None:
        ph = self.phase
        if ph == MOVE:
            if action == PASS:
                if self._events is not None:
                    self._emit("pass", seat=self.to_move)
                self._end_turn()
                return
            g = self.game
            counts = self.counts
            totals = self.totals
            counts[g.a_src[action]] -= 1
            counts[g.a_dst[action]] += 1
            value = g.a_val[action]
            totals[g.a_from[action]] -= value
            totals[g.a_to[action]] += value
            if self._events is not None:
                self._events.append(Event("coin_moved", {
                    "seat": self.to_move, "coin": value,
                    "from": _pile_name(g.a_from[action]), "to": _pile_name(g.a_to[action])}))
            if g.target in totals:
                self._score()
            else:
                self._end_turn()
        elif ph == ROLL:
            if action == ZERO:
                self._end_turn()
            else:
                self.face = action
                self.phase = MOVE
                if self._cap_blocks_something(action):
                    self.c_cap += 1
        else:  # START_ROLL
            seats = self.ro_seats
            rolls = self.ro_rolls
            assert seats is not None
            rolls.append(action)
            if len(rolls) < len(seats):
                self.to_move = seats[len(rolls)]
                return
            best = max(FACE_RANK[r] for r in rolls)
            tied = [s for s, r in zip(seats, rolls, strict=True) if FACE_RANK[r] == best]
            self.to_move = tied[0]
            if len(tied) == 1:
                self.phase = ROLL
                self.ro_seats = None
                self.ro_rolls = []
                if self._events is not None:
                    self._emit("starter", seat=tied[0])
            else:
                if self._events is not None:
                    self._emit("rolloff_tie", seats=list(tied), face=FACES[FACE_RANK.index(best)])
                self.ro_seats = tied
                self.ro_rolls = []

    def _copy(self) -> ExactlyState:
        c = ExactlyState.__new__(ExactlyState)
        c.game = self.game
        c._legal = None
        c._events = None
        c.counts = self.counts[:]
        c.totals = self.totals[:]
        c.euros = self.euros[:]
        c.to_move = self.to_move
        c.phase = self.phase
        c.face = self.face
        c.turn = self.turn
        seats = self.ro_seats
        c.ro_seats = None if seats is None else seats[:]
        c.ro_rolls = self.ro_rolls[:]
        c.c_rounds = self.c_rounds
        c.c_euros = self.c_euros
        c.c_question = self.c_question
        c.c_cap = self.c_cap
        return c

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.phase == ROLL or self.phase == START_ROLL:
            return list(self.game.chance_outcomes)
        return []

    def returns(self) -> list[float]:
        n = self.game.num_players
        if self.phase != OVER:
            return [0.0] * n
        best = max(self.euros)
        winners = [s for s in range(n) if self.euros[s] == best]
        share = 1.0 / len(winners)
        return [share if self.euros[s] == best else 0.0 for s in range(n)]

    def counters(self) -> dict[str, float]:
        """Event counts since the initial state (zero for a state read from JSON): see
        :data:`COUNTERS`."""
        return {
            "rounds": self.c_rounds,
            "euros": self.c_euros,
            "question_rounds": self.c_question,
            "cap_blocks": self.c_cap,
        }

    def turns_played(self) -> int:
        """Player turns completed (the position's ``turn``), read directly (the lab calls it often)."""
        return self.turn

    def scores(self) -> list[float]:
        """1-euro tokens held (RULES.md: "Score for turn_limit")."""
        return [float(e) for e in self.euros]

    def end_reason(self) -> str:
        """``"three_euros"`` (a player holds three tokens), ``"turn_limit"``; ``""`` before the end."""
        if self.phase != OVER:
            return ""
        return END_THREE_EUROS if max(self.euros) >= self.game.euros_to_win else END_TURN_LIMIT

    def _action_event(self, action: int) -> Event:
        """A roll says whose it is, its face and whether it belongs to the roll-off."""
        if self.phase == MOVE:
            return super()._action_event(action)
        face = FACES[action]
        return Event(ev.CHANCE, {"outcome": {"roll": face}, "seat": self.to_move, "face": face,
                                 "rolloff": self.phase == START_ROLL})

    # --- queries -----------------------------------------------------------------------
    def pile_total(self, seat: int) -> int:
        """Cents in ``seat``'s pile."""
        return self.totals[seat + 1]

    def pile(self, pile: int | str) -> dict[int, int]:
        """Coins by value in ``pile`` (``-1`` or ``"bank"``: the bank; else a seat)."""
        p = self.game.piles
        i = 0 if pile == "bank" or pile == -1 else int(pile) + 1
        return {VALUES[v]: self.counts[v * p + i] for v in range(4)}

    @property
    def die(self) -> int | str | None:
        """The die face during ``move``, else None."""
        return FACES[self.face] if self.phase == MOVE else None

    # --- JSON --------------------------------------------------------------------------
    def _pile_json(self, i: int) -> dict[str, int]:
        p = self.game.piles
        c = self.counts
        return {VALUE_KEYS[v]: c[v * p + i] for v in range(4)}

    def to_json(self) -> dict[str, Any]:
        n = self.game.num_players
        rolloff = None
        if self.phase == START_ROLL:
            assert self.ro_seats is not None
            rolloff = {"seats": list(self.ro_seats), "rolls": [FACES[r] for r in self.ro_rolls]}
        return {
            "game": "exactly",
            "players": n,
            "bank": self._pile_json(0),
            "piles": [self._pile_json(s + 1) for s in range(n)],
            "euros": list(self.euros),
            "to_move": self.to_move,
            "phase": PHASES[self.phase],
            "roll": FACES[self.face] if self.phase == MOVE else None,
            "turn": self.turn,
            "rolloff": rolloff,
            **rule_keys(self.game),
        }

    def action_to_json(self, action: int) -> dict[str, Any]:
        g = self.game
        if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < g._size:
            raise IllegalActionError(f"{action!r} is not an action of exactly")
        if action < 6:
            return {"roll": FACES[action]}
        if action == PASS:
            return {"pass": True}
        # ``from`` equal to ``to`` is well-formed but never legal (a coin moves "to a different pile")
        f, t = g.a_from[action], g.a_to[action]
        return {"coin": g.a_val[action], "from": _pile_name(f), "to": _pile_name(t)}

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        if not isinstance(data, Mapping):
            raise IllegalActionError(f"an action is a JSON object, not {data!r}")
        keys = set(data)
        if keys == {"roll"}:
            face = data["roll"]
            for i, f in enumerate(FACES):
                if face == f and type(face) is type(f):
                    return i
            raise IllegalActionError(f"the die has faces 0, \"?\", 50, 20, 10, 5, not {face!r}")
        if keys == {"pass"}:
            if data["pass"] is not True:
                raise IllegalActionError(f'a pass is {{"pass": true}}, not {json.dumps(dict(data))}')
            return PASS
        if keys == {"coin", "from", "to"}:
            coin = data["coin"]
            if isinstance(coin, bool) or not isinstance(coin, int) or coin not in VALUE_INDEX:
                raise IllegalActionError(f"coin must be 5, 10, 20 or 50, not {coin!r}")
            f = self._pile_from_json(data["from"], "from")
            t = self._pile_from_json(data["to"], "to")
            # from == to is well-formed (two piles named as RULES.md says) but never legal: it is
            # refused by apply_action, not here (RULES.md: "action_from_json rejects only
            # ill-formed actions").
            p = self.game.piles
            return MOVE_BASE + (VALUE_INDEX[coin] * p + f) * p + t
        raise IllegalActionError(
            'an exactly action is {"roll": face}, {"coin": value, "from": pile, "to": pile} or '
            f'{{"pass": true}}, not {json.dumps(dict(data), default=str)}'
        )

    def _pile_from_json(self, value: Any, key: str) -> int:
        if value == "bank" and isinstance(value, str):
            return 0
        n = self.game.num_players
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
            raise IllegalActionError(f'{key} must be "bank" or a seat 0 to {n - 1}, not {value!r}')
        return value + 1

    # --- text --------------------------------------------------------------------------
    def action_to_string(self, action: int) -> str:
        data = self.action_to_json(action)
        if "roll" in data:
            return f"roll {data['roll']}"
        if "pass" in data:
            return "pass"
        return f"{data['coin']} {data['from']}>{data['to']}"

    def action_from_string(self, text: str) -> int:
        if not isinstance(text, str):
            raise IllegalActionError(f"an action is text, not {text!r}")
        s = text.strip()
        if s.startswith("{"):
            return super().action_from_string(s)
        low = s.lower()
        if low == "pass":
            return PASS
        parts = low.split()
        if len(parts) == 2 and parts[0] == "roll":
            if parts[1] in FACE_NAMES:
                return FACE_NAMES.index(parts[1])
            raise IllegalActionError(f"the die has faces 0, ?, 50, 20, 10, 5, not {parts[1]!r}")
        if len(parts) == 2 and ">" in parts[1]:
            coin_text = parts[0].removesuffix("c")
            src, _, dst = parts[1].partition(">")
            if coin_text.isdigit():
                return self.action_from_json(
                    {"coin": int(coin_text), "from": _pile_text(src), "to": _pile_text(dst)}
                )
        raise IllegalActionError(
            f"cannot read {text!r} as an exactly action: write e.g. '20 bank>2', 'pass' or 'roll ?'"
        )

    def render(self) -> str:
        g = self.game
        n = g.num_players
        p = g.piles
        c = self.counts

        def coins(i: int) -> str:
            return "  ".join(f"{VALUES[v]:>2}c x{c[v * p + i]:>2}" for v in range(4))

        bank_total = self.totals[0] - BANK_OFFSET
        lines = [f"exactly, {n} players — turn {self.turn}, phase {PHASES[self.phase]}"]
        lines.append(f"bank      {coins(0)}  = {bank_total:>3}c")
        for s in range(n):
            mark = ""
            if self.phase != OVER and s == self.to_move:
                mark = "  <- to roll" if self.phase != MOVE else "  <- to move"
            total = self.totals[s + 1]
            flag = f" (closed: >{g.cap})" if total > g.cap else ""
            lines.append(
                f"player {s}  {coins(s + 1)}  = {total:>3}c{flag}  euros {self.euros[s]}{mark}"
            )
        if self.phase == START_ROLL:
            assert self.ro_seats is not None
            done = ", ".join(f"{s}: {FACE_NAMES[r]}" for s, r in zip(self.ro_seats, self.ro_rolls, strict=False))
            lines.append(
                f"roll-off among seats {', '.join(map(str, self.ro_seats))}; rolled so far: {done or 'none'}"
            )
        elif self.phase == MOVE:
            lines.append(f"die: {FACE_NAMES[self.face]}")
        elif self.phase == OVER:
            winners = [s for s, r in enumerate(self.returns()) if r > 0]
            lines.append(f"game over: {'winner' if len(winners) == 1 else 'winners'} "
                         f"{', '.join(map(str, winners))}")
        return "\n".join(lines)


def rule_keys(g: ExactlyGame) -> dict[str, int]:
    """The position's keys for the rulebook's numbers a board shows (``target``, ``cap``,
    ``euros_to_win``), written only when not RULES.md's value (so a position of the default game is
    written as before those options existed); a board reads an absent key as RULES.md's value."""
    values = {"target": (g.target, TARGET), "cap": (g.cap, CAP), "euros_to_win": (g.euros_to_win, WIN_EUROS)}
    return {key: value for key, (value, default) in values.items() if value != default}


def _pile_name(i: int) -> str | int:
    return "bank" if i == 0 else i - 1


def _pile_text(text: str) -> str | int:
    text = text.strip()
    if text in ("bank", "b"):
        return "bank"
    if text.startswith("p"):
        text = text[1:]
    if text.isdigit():
        return int(text)
    raise IllegalActionError(f'a pile is "bank" or a seat number, not {text!r}')


# --- reading positions -------------------------------------------------------------------

CoinsJson = TypedDict("CoinsJson", {"5": int, "10": int, "20": int, "50": int})
"""A pile's coins by value (the keys are the coin values as text)."""


class RolloffJson(TypedDict):
    """The roll-off under way (a key this engine adds; RULES.md lets implementations add keys)."""

    seats: list[int]
    rolls: list[int | Literal["?"]]


class PositionJson(TypedDict):
    """An exactly position (RULES.md section 1, "Position JSON"), as :mod:`ludoteca.core.shape` reads it."""

    game: Literal["exactly"]
    players: int
    bank: CoinsJson
    piles: list[CoinsJson]
    euros: list[int]
    to_move: int
    phase: Literal["start_roll", "roll", "move", "over"]
    roll: int | Literal["?"] | None
    turn: int
    rolloff: NotRequired[RolloffJson | None]
    target: NotRequired[int]
    cap: NotRequired[int]
    euros_to_win: NotRequired[int]


def _coins_from_json(value: CoinsJson, where: str) -> list[int]:
    """The four counts of a pile, each 0 to 10; no other coin values."""
    extra = sorted(set(value) - set(VALUE_KEYS), key=str)
    if extra:
        raise ValueError(f"{where} has the key {extra[0]!r}; coin values are \"5\", \"10\", \"20\", \"50\"")
    out = []
    for key in VALUE_KEYS:
        count: int = value[key]  # type: ignore[literal-required]
        if count < 0:
            raise ValueError(f"{where}[{key!r}] must not be negative, got {count}")
        if count > COINS_PER_VALUE:
            raise ValueError(f"{where}[{key!r}] is {count}, but there are only {COINS_PER_VALUE} coins of each value")
        out.append(count)
    return out


def _face_from_json(value: object, where: str) -> int:
    for i, f in enumerate(FACES):
        if value == f and type(value) is type(f):
            return i
    raise ValueError(f"{where} must be a die face 0, \"?\", 50, 20, 10 or 5, not {value!r}")


def _piles_from_json(pos: PositionJson, n: int) -> tuple[list[int], list[list[int]]]:
    """The bank's and each player's coin counts; every coin is somewhere (10 of each value)."""
    bank = _coins_from_json(pos["bank"], "bank")
    if len(pos["piles"]) != n:
        raise ValueError(f"piles must list one pile per player ({n}), not {len(pos['piles'])}")
    piles = [_coins_from_json(pj, f"piles[{s}]") for s, pj in enumerate(pos["piles"])]
    for v in range(4):
        total = bank[v] + sum(pl[v] for pl in piles)
        if total != COINS_PER_VALUE:
            raise ValueError(
                f"coin conservation broken: there are {total} coins of {VALUES[v]} cents in bank and piles, "
                f"not {COINS_PER_VALUE}"
            )
    return bank, piles


def _check_end(game: ExactlyGame, pos: PositionJson, phase: int, euros: list[int], turn: int) -> None:
    """``over`` exactly when someone holds three euros or ``turn`` reached ``turn_limit``."""
    win = game.euros_to_win
    if phase != OVER:
        if max(euros) >= win:
            raise ValueError(f"a player holds {win} euros, so phase must be over, not {pos['phase']!r}")
        if turn >= game.turn_limit:
            raise ValueError(f"turn {turn} has reached turn_limit {game.turn_limit}, so phase must be over")
    elif max(euros) < win and turn < game.turn_limit:
        raise ValueError(
            f"phase is over, but nobody holds {win} euros and turn {turn} is below turn_limit "
            f"{game.turn_limit}"
        )


def _rolloff_from_json(pos: PositionJson, n: int, to_move: int, euros: list[int], turn: int,
                       ) -> tuple[list[int], list[int], int]:
    """``(seats, rolls, to_move)`` of the roll-off in phase ``start_roll``."""
    if turn != 0:
        raise ValueError(f"the roll-off comes before every turn: turn must be 0 in start_roll, not {turn}")
    if any(euros):
        raise ValueError("the roll-off comes before every turn: euros must all be 0 in start_roll")
    rolloff = pos.get("rolloff")
    if rolloff is None:
        # Only RULES.md's required keys: they cannot say what the seats before to_move rolled.
        # Read as the roll-off among to_move and the seats after it (a fresh roll-off of every
        # seat when to_move is 0), so a position written without the extra key is readable.
        return list(range(to_move, n)), [], to_move
    seats = [need_int(x, f"rolloff.seats[{i}]", 0, n - 1) for i, x in enumerate(rolloff["seats"])]
    if not seats or any(a >= b for a, b in pairwise(seats)):
        raise ValueError("rolloff.seats must list one or more different seats in increasing order")
    rolls = [_face_from_json(x, f"rolloff.rolls[{i}]") for i, x in enumerate(rolloff["rolls"])]
    if len(rolls) >= len(seats):
        raise ValueError("rolloff.rolls must be shorter than rolloff.seats (someone is still to roll)")
    return seats, rolls, seats[len(rolls)]  # the next seat to roll, whatever to_move said


def _to_move_from_json(pos: PositionJson, phase: int, n: int) -> int:
    """RULES.md, "Reading a position": to_move at ``over``, and during a roll-off whose rolls are
    given, is not fixed by the rules: any whole number is read, and this engine writes its own."""
    to_move = pos["to_move"]
    if phase == OVER or (phase == START_ROLL and pos.get("rolloff") is not None):
        return to_move if 0 <= to_move < n else 0
    return need_int(to_move, "to_move", 0, n - 1)


def _state_from_json(game: ExactlyGame, data: Mapping[str, Any]) -> ExactlyState:
    pos = read(data, PositionJson)
    n = game.num_players
    if pos["players"] != n:
        raise ValueError(f"the position has {pos['players']} players, but this game has {n}")
    for key, value in (("target", game.target), ("cap", game.cap), ("euros_to_win", game.euros_to_win)):
        if key in pos and pos[key] != value:  # type: ignore[literal-required]
            raise ValueError(f"the position's {key} is {pos[key]}, but this game's is {value}")  # type: ignore[literal-required]
    bank, piles = _piles_from_json(pos, n)
    euros = per_seat(pos["euros"], "euros", n, 0, game.euros_to_win, noun="count")
    if sum(euros) > EUROS_TOTAL:
        raise ValueError(f"euros total {sum(euros)}, but there are only {EUROS_TOTAL} tokens")
    phase = PHASES.index(pos["phase"])
    to_move = _to_move_from_json(pos, phase, n)
    turn = need_int(pos["turn"], "turn", 0)
    face = -1
    roll = pos["roll"]
    if phase == MOVE:
        face = _face_from_json(roll, "roll")
        if face == ZERO:
            raise ValueError("roll cannot be 0 in phase move: a 0 ends the turn at once")
        if not game.die[face]:
            raise ValueError(f"roll is {FACES[face]!r}, but no face of this game's die shows it")
    elif roll is not None:
        raise ValueError(f"roll must be null outside phase move, not {roll!r}")
    _check_end(game, pos, phase, euros, turn)
    ro_seats: list[int] | None = None
    ro_rolls: list[int] = []
    if phase == START_ROLL:
        ro_seats, ro_rolls, to_move = _rolloff_from_json(pos, n, to_move, euros, turn)
    elif pos.get("rolloff") is not None:
        raise ValueError(f"rolloff must be null outside phase start_roll, not {pos.get('rolloff')!r}")
    s = ExactlyState(game)
    _set_coins(s, bank, piles)
    s.euros = euros
    s.to_move = to_move
    s.phase = phase
    s.face = face
    s.turn = turn
    s.ro_seats = ro_seats
    s.ro_rolls = ro_rolls
    return s


def _set_coins(s: ExactlyState, bank: list[int], piles: list[list[int]]) -> None:
    p = s.game.piles
    counts = [0] * (4 * p)
    totals = [0] * p
    for v in range(4):
        counts[v * p] = bank[v]
        for seat, pile in enumerate(piles):
            counts[v * p + seat + 1] = pile[v]
            totals[seat + 1] += VALUES[v] * pile[v]
    s.counts = counts
    s.totals = totals
    s._set_bank_total()
