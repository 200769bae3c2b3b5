"""A game in progress in the terminal: seats, chance, history for undo, the record."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ludoteca.agents import Agent, make_agent
from ludoteca.core.chance import sample_chance
from ludoteca.core.game import Action, Game, State
from ludoteca.core.records import Record

HUMAN = "human"


@dataclass
class Snapshot:
    """Everything needed to take the game back to just before a human's choice."""

    state: State
    rng_state: Any
    n_actions: int


@dataclass
class Session:
    """Seats (``"human"`` or an agent spec), the position, the record and undo history.

    Chance is drawn from one seeded generator; undo restores its state too, so taking a
    move back never re-rolls the dice.
    """

    game: Game
    seats: list[str]
    seed: int
    state: State = field(init=False)
    record: Record = field(init=False)
    agents: dict[int, Agent] = field(init=False)
    rng: random.Random = field(init=False)
    history: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.seats) != self.game.num_players:
            raise ValueError(f"{len(self.seats)} seats given for {self.game.num_players} players")
        self.state = self.game.new_initial_state()
        self.rng = random.Random(self.seed)
        self.record = Record.start(self.game, seed=self.seed, seats=list(self.seats))
        self.agents = {
            i: make_agent(spec, seed=self.seed * 100 + i, game=self.game.name)
            for i, spec in enumerate(self.seats) if spec != HUMAN
        }

    @classmethod
    def from_record(cls, record: Record, seats: list[str] | None, seed: int | None) -> Session:
        game = record.load_game()
        seats = seats or list(record.meta.get("seats") or [HUMAN] * game.num_players)
        base_seed = seed if seed is not None else int(record.meta.get("seed", 0))
        session = cls(game, seats, base_seed)
        for data in record.actions:
            session.apply(session.state.action_from_json(data))
        # A continued game draws fresh dice from a generator advanced past the replayed part.
        session.rng = random.Random(f"{base_seed}:{len(record.actions)}")
        session.history.clear()
        return session

    def is_human_turn(self) -> bool:
        s = self.state
        return not s.is_terminal() and not s.is_chance_node() and self.seats[s.current_player()] == HUMAN

    def apply(self, action: Action) -> None:
        """Play ``action`` (legal or IllegalActionError, the session unchanged) and note it."""
        if self.is_human_turn():
            snap = Snapshot(self.state.clone(), self.rng.getstate(), len(self.record.actions))
        else:
            snap = None
        data = self.state.action_to_json(action)
        self.state.apply_action(action)
        self.record.actions.append(data)
        if snap is not None:
            self.history.append(snap)

    def step_automatic(self) -> tuple[int | None, str]:
        """Play one chance outcome or one AI move; return (seat or None for chance, its text)."""
        s = self.state
        if s.is_chance_node():
            action = sample_chance(s, self.rng)
            seat = None
        else:
            seat = s.current_player()
            action = self.agents[seat].step(s.clone())
        text = s.action_to_string(action)
        self.apply(action)
        return seat, text

    def undo(self) -> bool:
        """Back to just before the last human choice; False if there is none."""
        if not self.history:
            return False
        snap = self.history.pop()
        self.state = snap.state
        self.rng.setstate(snap.rng_state)
        del self.record.actions[snap.n_actions:]
        return True

    def hint(self, spec: str = "heuristic") -> Action:
        agent = make_agent(spec, seed=len(self.record.actions), game=self.game.name)
        return agent.step(self.state.clone())
