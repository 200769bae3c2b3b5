"""A level's pace: at most ``turn`` moves in one turn, then the turn ends the way a person ends it.

In a game where a turn may go on (EXAGON: a tile with two connections lets the player place
another), a program that always goes on can empty its hand in one turn and win before a newcomer
has played five tiles. A ladder level may therefore carry ``turn=N`` in its spec
(``heuristic:turn=5``, :mod:`ludoteca.agents.levels`): once the player has made N moves of the turn
in progress, the agent ends the turn — with its own choice when that already ends it, else with a
winning move when there is one, else with one of the legal moves that end the turn (a last move
or a plain stop), drawn from its seeded generator. Where nothing ends the turn it plays on.

Stateless, as every agent must be (the web server makes a fresh agent for each move): how many
moves of the turn were made is read from the position. The game says where, in its
``ladder.json`` (beside its engine; no game is named here)::

    "pace": {"counted": "placed_this_turn", "turn": {"beginner": 3, "medium": 5}}

``counted`` is the key of the position JSON (:meth:`State.to_json`) holding the moves made in the
turn in progress; ``turn`` gives each level's cap in that game (:func:`ludoteca.agents.levels.spec`
adds it to the level's spec). A game without ``counted`` is never paced.
"""

from __future__ import annotations

from typing import Any

from ludoteca.agents.base import Agent
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import _


def counted_key(game: str | None) -> str | None:
    """The position JSON key that counts the moves of the turn in progress in ``game`` (its
    ladder.json's ``pace.counted``), or None."""
    if game is None:
        return None
    from ludoteca.agents.ladder import pace

    key = pace(game).get("counted")
    return key if isinstance(key, str) and key else None


class PacedAgent(Agent):
    """Plays ``inner``'s moves, and ends the turn once ``turn`` moves of it were made."""

    name = "paced"

    def __init__(self, inner: Agent, turn: Any, game: str | None) -> None:
        if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
            raise ValueError(_("agent {agent}: turn must be a whole number of moves, at least 1, not {value}").format(
                agent=repr(inner.name), value=repr(turn)))
        super().__init__(inner.seed)
        self.rng.seed(f"pace:{inner.seed}")
        self.inner = inner
        self.turn = turn
        self.key = counted_key(game)

    @property
    def spec(self) -> str:
        return f"{self.inner.spec}:turn={self.turn}"

    def restart(self) -> None:
        self.inner.restart()

    def made(self, state: State) -> int:
        """Moves made so far in the turn in progress (0 where the game does not count them)."""
        if self.key is None:
            return 0
        value = state.to_json().get(self.key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def step(self, state: State) -> Action:
        choice = self.inner.step(state)
        if self.made(state) < self.turn:
            return choice
        me = state.current_player()
        if _ends(state, choice, me)[0]:
            return choice
        ending: list[Action] = []
        for action in state.legal_actions():
            ends, wins = _ends(state, action, me)
            if wins:
                return action
            if ends:
                ending.append(action)
        return ending[self.rng.randrange(len(ending))] if ending else choice


def _ends(state: State, action: Action, me: int) -> tuple[bool, bool]:
    """Whether ``action`` ends ``me``'s turn, and whether it wins the game for ``me``."""
    after = state.clone()
    turn = after.turns_played()
    after.apply_unchecked(action)
    if after.is_terminal():
        return True, after.returns()[me] > 0
    return after.turns_played() != turn, False


def paced(agent: Agent, turn: Any, game: str | None) -> Agent:
    """``agent`` with a pace of ``turn`` moves a turn in ``game`` (see the module)."""
    return PacedAgent(agent, turn, game)
