"""A game in progress in the terminal: seats, chance, history for undo, the record, who sees what."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from ludoteca.agents import Agent, make_agent
from ludoteca.core.chance import sample_chance
from ludoteca.core.events import Event
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import _
from ludoteca.core.records import Record
from ludoteca.play.boards import board_module
from ludoteca.play.names import seat_names

HUMAN = "human"


@dataclass
class Entry:
    """One action of the game's log: who made it (None: chance), its notation, the kind of
    action (the first key of its JSON), the events it produced (the action's own first) and the
    action in a player's words when the game's board module words it (``action_text``)."""

    seat: int | None
    text: str
    kind: str | None
    events: list[Event]
    words: str | None = None


@dataclass
class Snapshot:
    """Everything needed to take the game back to just before a human's choice."""

    state: State
    rng_state: Any
    n_actions: int
    secret: set[int]


@dataclass
class Session:
    """Seats (``"human"`` or an agent spec), the position, the record and undo history.

    Chance is drawn from one seeded generator; undo restores its state too, so taking a
    move back never re-rolls the dice.

    Who may see what: the terminal's *audience* is the human seats (everyone at the screen).
    An entry of the log is *secret* while one of its events is hidden from at least one of them
    (:meth:`Event.visible_to`: the game decides it when it emits the event); with no human seat
    nothing is secret. Secret entries are revealed when the game reveals them: by a public event
    of a kind the game's board module lists in ``REVEALS`` (TRI: ``battle``, which carries both
    rolls and both cards), or at the end of the game.
    """

    game: Game
    seats: list[str]
    seed: int
    given_names: list[str] | None = None
    names: list[str] = field(init=False)
    state: State = field(init=False)
    record: Record = field(init=False)
    agents: dict[int, Agent] = field(init=False)
    rng: random.Random = field(init=False)
    history: list[Snapshot] = field(default_factory=list)
    log: list[Entry] = field(default_factory=list)
    secret: set[int] = field(default_factory=set)
    module: ModuleType | None = field(init=False)
    texts: dict[str, str] = field(init=False)
    reveals: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        if len(self.seats) != self.game.num_players:
            raise ValueError(f"{len(self.seats)} seats given for {self.game.num_players} players")
        if self.given_names is not None and len(self.given_names) > len(self.seats):
            raise ValueError(_("{count} names given for {seats} seats").format(count=len(self.given_names),
                                                                            seats=len(self.seats)))
        self.state = self.game.new_initial_state()
        self.rng = random.Random(self.seed)
        self.record = Record.start(self.game, seed=self.seed, seats=list(self.seats))
        self.agents = {
            i: make_agent(spec, seed=self.seed * 100 + i, game=self.game.name)
            for i, spec in enumerate(self.seats) if spec != HUMAN
        }
        self.names = seat_names(self.seats, self.given_names, HUMAN)
        module = board_module(self.game)
        self.module = module
        self.texts = dict(getattr(module, "TEXTS", {}))
        self.reveals = frozenset(getattr(module, "REVEALS", ()))

    @classmethod
    def from_record(cls, record: Record, seats: list[str] | None, seed: int | None,
                    names: list[str] | None = None) -> Session:
        game = record.load_game()
        seats = seats or list(record.meta.get("seats") or [HUMAN] * game.num_players)
        base_seed = seed if seed is not None else int(record.meta.get("seed", 0))
        session = cls(game, seats, base_seed, names)
        for data in record.actions:
            elapsed = data.get("elapsed")
            session.apply(session.state.action_from_json(data), elapsed=elapsed)
        # A continued game draws fresh dice from a generator advanced past the replayed part.
        session.rng = random.Random(f"{base_seed}:{len(record.actions)}")
        session.history.clear()
        return session

    @property
    def audience(self) -> list[int]:
        """The human seats: everyone who looks at this terminal."""
        return [i for i, spec in enumerate(self.seats) if spec == HUMAN]

    def is_human_turn(self) -> bool:
        s = self.state
        return not s.is_terminal() and not s.is_chance_node() and self.seats[s.current_player()] == HUMAN

    def viewer(self) -> int | None:
        """The seat whose view the board shows now: the human deciding, else the only human, else None."""
        if self.is_human_turn():
            return self.state.current_player()
        audience = self.audience
        return audience[0] if len(audience) == 1 else None

    def hidden(self, event: Event) -> bool:
        """True when ``event`` is hidden from at least one human seat (the screen is shared)."""
        return any(not event.visible_to(v) for v in self.audience)

    def apply(self, action: Action, seat: int | None = None, elapsed: float | None = None) -> list[int]:
        """Play ``action`` (legal or IllegalActionError, the session unchanged) and note it.

        ``seat`` is who made it (None: chance; by default the player to move); ``elapsed`` the
        seconds the player spent on it (games with a clock). Returns the earlier secret entries
        that this action reveals to every human seat.
        """
        s = self.state
        if seat is None and not s.is_chance_node():
            seat = s.current_player()
        snap = None
        if self.is_human_turn():
            snap = Snapshot(s.clone(), self.rng.getstate(), len(self.record.actions), set(self.secret))
        data = s.action_to_json(action)
        text = s.action_to_string(action)
        words = self.words(action)
        events = s.apply_action(action) if elapsed is None else s.apply_action(action, elapsed=elapsed)
        # The record keeps the seconds spent, as RULES.md lets any action carry them.
        self.record.actions.append(data if elapsed is None else {**data, "elapsed": elapsed})
        self.log.append(Entry(seat, text, next(iter(data), None), events, words))
        if snap is not None:
            self.history.append(snap)
        return self._note(len(self.log) - 1, events)

    def words(self, action: Action) -> str | None:
        """``action`` in a player's words, as the game's board module says it here (or None)."""
        say = getattr(self.module, "action_text", None)
        return None if say is None else say(self.state, action, self.names)

    def _note(self, i: int, events: list[Event]) -> list[int]:
        if any(e.to is None and e.kind in self.reveals for e in events) or self.state.is_terminal():
            revealed = sorted(self.secret)
            self.secret.clear()
            return revealed
        if any(self.hidden(e) for e in events):
            self.secret.add(i)
        return []

    def is_secret(self, i: int) -> bool:
        """True while log entry ``i`` is hidden from at least one human seat."""
        return i in self.secret

    def step_automatic(self) -> tuple[int, list[int]]:
        """Play one chance outcome or one AI move; return (its log index, the entries it reveals)."""
        s = self.state
        if s.is_chance_node():
            action = sample_chance(s, self.rng)
            seat = None
        else:
            seat = s.current_player()
            action = self.agents[seat].step(s.clone())
        revealed = self.apply(action, seat)
        return len(self.log) - 1, revealed

    def undo(self) -> bool:
        """Back to just before the last human choice; False if there is none."""
        if not self.history:
            return False
        snap = self.history.pop()
        self.state = snap.state
        self.rng.setstate(snap.rng_state)
        del self.record.actions[snap.n_actions:]
        del self.log[snap.n_actions:]
        self.secret = snap.secret
        return True

    def hint(self, spec: str = "heuristic") -> Action:
        agent = make_agent(spec, seed=len(self.record.actions), game=self.game.name)
        return agent.step(self.state.clone())
