"""Pig: the example game — the worked case of docs/architecture.md, "Adding a game".

A package under ``games/`` whose name begins with an underscore is an *example*: the registry finds
it only when the environment variable ``LUDOTECA_EXAMPLE_GAMES`` is ``1`` (the tests set it, so the
whole cross-game suite runs on it), never in a user's lobby, ``ludoteca rules`` or lab. Copy this
folder to ``games/<your game>/``, change :attr:`PigGame.name` and ``title``, and you have a fifth game
the whole suite accepts; then change the rules.

The rules (the classic dice game, from John Scarne's book, 1945): on your turn you roll one die as
often as you like, adding each face to your *turn total*. Roll a 1 and you **bust**: the turn total is
lost and the turn passes. Choose to **hold** and the turn total is added to your score and the turn
passes. The first player whose score reaches ``target`` (option, default 50) wins. After
``turn_limit`` player turns the players with the highest score share the win. A turn's first decision
is always a roll (a forced choice is still an action: the engine never skips a decision).

Integer encoding (fixed for the game, so an action means the same at every node):

- chance outcomes ``0..5``: the die faces ``1..6``;
- player actions ``6``: roll, ``7``: hold.

Canonical JSON: a chance outcome ``{"die": face}``; a decision ``{"choose": "roll"}`` or
``{"choose": "hold"}``.

Position JSON (every game writes ``game``, ``players`` and ``turn``; the rest is the game's own):
``{"game": "pig", "players", "scores", "to_move", "turn_total", "phase": "decide" | "roll" | "over",
"die": the last face rolled or null, "turn"}``.

Events (:mod:`ludoteca.core.events`; all public — a game with secrets gives ``_emit`` a ``to=`` and a
``public=`` form, see docs/architecture.md), in the order ``apply_action`` returns them:

- ``move`` ``{"seat", "action"}`` or ``chance`` ``{"outcome": {"die": face}, "seat"}``: the action itself;
- ``bust`` ``{"seat", "lost"}``: ``seat`` rolled a 1 and lost ``lost`` points of its turn;
- ``hold`` ``{"seat", "banked", "score"}``: ``seat`` added ``banked`` points; its score is now ``score``;
- ``end`` ``{"reason", "returns", "winners"}``: ``reason`` is ``"target"`` or ``"turn_limit"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.game import Counter, Game, State
from ludoteca.core.i18n import N_
from ludoteca.core.jsonutil import need_int
from ludoteca.core.options import Option
from ludoteca.core.shape import read

FACES = 6
"""Chance outcomes ``0..5`` are the die's faces ``1..6``."""
ROLL, HOLD = 6, 7
"""The player actions."""
BUST_FACE = 1

DECIDE, ROLLING, OVER = 0, 1, 2
PHASES = ("decide", "roll", "over")
CHOICES = ("roll", "hold")

END_TARGET = "target"
END_TURN_LIMIT = "turn_limit"

COUNTERS = (
    Counter("rolls", "mean_per_game", N_("dice rolled per game")),
    Counter("busts", "share_per_event", N_("turns that ended on a 1, their points lost"), of="turns"),
)
"""The figures the balance lab reports for the game (``State.counters()``)."""

LAB_NAMES = (N_("rolls"), N_("busts"), N_("target"), N_("turn limit"))
"""The names of the counters and end reasons as the lab report shows them (translated there)."""


class PigGame(Game):
    """Pig: roll a die as often as you dare; a 1 loses the turn's points. First to the target wins."""

    name = "pig"
    title = "Pig"
    min_players = 2
    max_players = 6
    catalogue_order = 900
    score_name = "points"
    counters = COUNTERS
    agent_defaults = {"mcts": {"iterations": 300, "c": 0.5}}
    OPTIONS = (
        Option("target", "the score that wins", 50, kind="int", low=10, high=1000, label="target",
               help="the first player whose score reaches this many points wins"),
        Option("turn_limit", "the game ends after this many player turns; the highest scores share the win", 1000,
               kind="int", low=1, label="turn limit",
               help="the game stops after this many player turns; the players with the highest score share the win"),
    )

    def _setup(self) -> None:
        self.target: int = self.options["target"]
        self.turn_limit: int = self.options["turn_limit"]

    def num_distinct_actions(self) -> int:
        return HOLD + 1

    def max_chance_outcomes(self) -> int:
        return FACES

    def new_initial_state(self) -> PigState:
        return PigState(self)

    def state_from_json(self, data: Mapping[str, Any]) -> PigState:
        return _state_from_json(self, data)


class PigState(State):
    __slots__ = ("busts", "die", "phase", "rolls", "scores_", "to_move", "turn", "turn_total")

    game: PigGame

    def __init__(self, game: PigGame) -> None:
        super().__init__(game)
        self.scores_: list[int] = [0] * game.num_players
        self.to_move = 0
        self.turn_total = 0
        self.phase = DECIDE
        self.die: int | None = None
        self.turn = 0
        self.rolls = self.busts = 0

    # --- the hooks every game writes -------------------------------------------------
    def current_player(self) -> int:
        if self.phase == OVER:
            return TERMINAL
        return CHANCE if self.phase == ROLLING else self.to_move

    def _legal_actions(self) -> list[int]:
        if self.phase == ROLLING:
            return list(range(FACES))
        if self.phase == DECIDE:
            return [ROLL, HOLD] if self.turn_total else [ROLL]
        return []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(f, 1.0 / FACES) for f in range(FACES)] if self.phase == ROLLING else []

    def _apply(self, action: int) -> None:
        if self.phase == ROLLING:
            face = action + 1
            self.die = face
            self.rolls += 1
            if face == BUST_FACE:
                self._emit("bust", seat=self.to_move, lost=self.turn_total)
                self.busts += 1
                self._next_turn()
            else:
                self.turn_total += face
                self.phase = DECIDE
        elif action == ROLL:
            self.phase = ROLLING
        else:
            seat = self.to_move
            self.scores_[seat] += self.turn_total
            self._emit("hold", seat=seat, banked=self.turn_total, score=self.scores_[seat])
            if self.scores_[seat] >= self.game.target:
                self.turn_total = 0
                self.turn += 1
                self.phase = OVER
                return
            self._next_turn()

    def _next_turn(self) -> None:
        self.turn_total = 0
        self.turn += 1
        self.to_move = (self.to_move + 1) % self.num_players
        self.phase = OVER if self.turn >= self.game.turn_limit else DECIDE

    def _copy(self) -> PigState:
        c = PigState(self.game)
        c.scores_ = self.scores_[:]
        c.to_move, c.turn_total, c.phase, c.die, c.turn = self.to_move, self.turn_total, self.phase, self.die, self.turn
        c.rolls, c.busts = self.rolls, self.busts
        return c

    def returns(self) -> list[float]:
        if self.phase != OVER:
            return [0.0] * self.num_players
        best = max(self.scores_)
        winners = [s for s, x in enumerate(self.scores_) if x == best]
        return [1.0 / len(winners) if s in winners else 0.0 for s in range(self.num_players)]

    def _action_event(self, action: int) -> Event:
        """A roll says whose it is (the default chance event has only the outcome)."""
        if self.phase == ROLLING:
            return Event("chance", {"outcome": self.action_to_json(action), "seat": self.to_move})
        return super()._action_event(action)

    # --- canonical JSON at the edges ---------------------------------------------------
    def action_to_json(self, action: int) -> dict[str, Any]:
        if 0 <= action < FACES:
            return {"die": action + 1}
        if action in (ROLL, HOLD):
            return {"choose": CHOICES[action - ROLL]}
        raise IllegalActionError(f"{action!r} is not an action of Pig")

    def action_from_json(self, data: Mapping[str, Any]) -> int:
        if not isinstance(data, Mapping) or not ({"die", "choose"} & data.keys()):
            raise IllegalActionError(f"a Pig action is {{\"choose\": \"roll\" or \"hold\"}} or {{\"die\": 1..6}}, "
                                     f"not {data!r}")
        if "choose" in data:
            if data["choose"] not in CHOICES:
                raise IllegalActionError(f"choose must be \"roll\" or \"hold\", not {data['choose']!r}")
            return ROLL + CHOICES.index(data["choose"])
        face = data["die"]
        if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= FACES:
            raise IllegalActionError(f"die must be a face from 1 to 6, not {face!r}")
        return face - 1

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game.name, "players": self.num_players, "scores": self.scores_[:], "to_move": self.to_move,
                "turn_total": self.turn_total, "phase": PHASES[self.phase], "die": self.die, "turn": self.turn}

    def render(self) -> str:
        scores = ", ".join(f"player {seat}: {x}" for seat, x in enumerate(self.scores_))
        if self.phase == OVER:
            return f"Pig, game over. Scores: {scores}."
        return (f"Pig, turn {self.turn}. Scores: {scores}. Player {self.to_move} to "
                f"{'roll' if self.phase == ROLLING else 'decide'}, turn total {self.turn_total}, "
                f"die {self.die if self.die is not None else '-'}.")

    # --- the facts the lab, the terminal and the web read ------------------------------
    def scores(self) -> list[float]:
        return [float(x) for x in self.scores_]

    def end_reason(self) -> str:
        if self.phase != OVER:
            return ""
        return END_TARGET if max(self.scores_) >= self.game.target else END_TURN_LIMIT

    def counters(self) -> dict[str, float]:
        return {"rolls": self.rolls, "busts": self.busts}

    def turns_played(self) -> int:
        return self.turn


class PositionJson(TypedDict):
    """A Pig position, as :mod:`ludoteca.core.shape` reads it (a clear error for anything else)."""

    game: str
    players: int
    scores: list[int]
    to_move: int
    turn_total: int
    phase: Literal["decide", "roll", "over"]
    die: int | None
    turn: int


def _state_from_json(game: PigGame, data: Mapping[str, Any]) -> PigState:
    pos = read(data, PositionJson)
    n = game.num_players
    if pos["game"] != game.name:
        raise ValueError(f"the position is of the game {pos['game']!r}, not {game.name!r}")
    if pos["players"] != n:
        raise ValueError(f"the position has {pos['players']} players, but this game has {n}")
    if len(pos["scores"]) != n:
        raise ValueError(f"scores must list one score per player ({n}), not {len(pos['scores'])}")
    scores = [need_int(x, f"scores[{seat}]", 0) for seat, x in enumerate(pos["scores"])]
    s = PigState(game)
    s.scores_ = scores
    s.to_move = need_int(pos["to_move"], "to_move", 0, n - 1)
    s.turn_total = need_int(pos["turn_total"], "turn_total", 0)
    s.turn = need_int(pos["turn"], "turn", 0, game.turn_limit)
    s.phase = PHASES.index(pos["phase"])
    s.die = None if pos["die"] is None else need_int(pos["die"], "die", 1, FACES)
    if s.phase == OVER:
        if s.turn_total:
            raise ValueError("a finished game has no turn total")
        if max(scores) < game.target and s.turn < game.turn_limit:
            raise ValueError(f"phase over, but nobody reached {game.target} points and the turn limit is not reached")
    else:
        if max(scores) >= game.target:
            raise ValueError(f"a score reached the target ({game.target}): the game is over")
        if s.turn >= game.turn_limit:
            raise ValueError(f"turn {s.turn} reached the turn limit ({game.turn_limit}): the game is over")
    return s
