"""The game/state protocol every ludoteca game implements (OpenSpiel-style).

A :class:`Game` describes: name, players, options, action space sizes. A :class:`State`
plays: ``current_player``, ``legal_actions``, ``apply_action``, ``chance_outcomes``,
``returns``, ``clone``; integer actions on the hot path, canonical JSON at the edges.

Subclasses implement the underscored hooks (``_legal_actions``, ``_apply``, ...); the base
class caches the legal actions of a position and refuses illegal ones with a clear message,
leaving the state unchanged.
"""

from __future__ import annotations

import inspect
import json
import operator
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.options import Option, resolve_options

Action = Any
"""An engine action: an ``int`` for every game (EXAGON may wrap one with its elapsed time)."""


def as_action_int(action: object) -> int:
    """An integer-like action (e.g. a numpy integer) as a plain int; others are refused."""
    if isinstance(action, bool | float):
        raise IllegalActionError(f"{action!r} is not an action: actions are whole numbers")
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise IllegalActionError(f"{action!r} is not an action: actions are whole numbers") from None


class Game(ABC):
    """Describes one game with its options resolved. Cheap to create; immutable by contract."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    OPTIONS: ClassVar[tuple[Option, ...]] = ()

    def __init__(self, **options: Any) -> None:
        self.options: dict[str, Any] = resolve_options(
            self.title, self.OPTIONS, self.min_players, self.max_players, options
        )
        self.num_players: int = self.options["players"]
        self._setup()

    def _setup(self) -> None:
        """Precompute tables that depend on the options (board, adjacency, ...)."""

    # --- description -----------------------------------------------------------------
    @abstractmethod
    def num_distinct_actions(self) -> int:
        """Player actions are ints in ``range(num_distinct_actions())``."""

    @abstractmethod
    def max_chance_outcomes(self) -> int:
        """Chance outcomes are ints in ``range(max_chance_outcomes())``."""

    def record_options(self) -> dict[str, Any]:
        """The options as JSON-able keyword arguments that rebuild this game (records)."""
        return dict(self.options)

    @classmethod
    def rules_summary(cls) -> str:
        """A short human-readable summary of the rules and options (``ludoteca rules``)."""
        doc = inspect.cleandoc(cls.__doc__ or cls.title)
        lines = [doc, "", f"Players: {cls.min_players} to {cls.max_players}.", "Options:"]
        for opt in cls.OPTIONS:
            default = "depends on players" if callable(opt.default) else json.dumps(opt.default)
            lines.append(f"  {opt.name} (default {default}): {opt.doc}")
        return "\n".join(lines)

    # --- states ------------------------------------------------------------------------
    @abstractmethod
    def new_initial_state(self) -> State:
        """The position before the first action (often a chance node)."""

    @abstractmethod
    def state_from_json(self, data: Mapping[str, Any]) -> State:
        """Rebuild a position from its canonical JSON; ValueError saying what is wrong."""

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items() if k != "tiles")
        return f"load_game({self.name!r}, {opts})"


class State(ABC):
    """A position of a game, and the way to play it forward."""

    __slots__ = ("_legal", "game")

    def __init__(self, game: Game) -> None:
        self.game = game
        self._legal: list[Action] | None = None

    # --- hooks for each game -----------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """A seat, :data:`CHANCE` or :data:`TERMINAL`."""

    @abstractmethod
    def _legal_actions(self) -> list[Action]:
        """Legal actions (player moves, or chance outcomes at a chance node); [] when over."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply an action already known to be legal."""

    @abstractmethod
    def _copy(self) -> State:
        """A deep, independent copy (the cache is handled by :meth:`clone`)."""

    @abstractmethod
    def chance_outcomes(self) -> list[tuple[Action, float]]:
        """``[(outcome, probability)]`` at a chance node (probabilities sum to 1); else []."""

    @abstractmethod
    def returns(self) -> list[float]:
        """One value per seat: winners share 1 at the end; all 0 before the end."""

    @abstractmethod
    def action_to_json(self, action: Action) -> dict[str, Any]:
        """The canonical JSON of an action (RULES.md)."""

    @abstractmethod
    def action_from_json(self, data: Mapping[str, Any]) -> Action:
        """Inverse of :meth:`action_to_json`; ill-formed -> IllegalActionError."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The canonical position JSON (RULES.md)."""

    @abstractmethod
    def render(self) -> str:
        """The position as text a person can read: board, hands, whose turn, the die."""

    # --- shared machinery --------------------------------------------------------------
    @property
    def num_players(self) -> int:
        return self.game.num_players

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def legal_actions(self) -> list[Action]:
        """Legal actions of the player to move, or chance outcomes at a chance node."""
        if self._legal is None:
            self._legal = self._legal_actions()
        return list(self._legal)

    def is_legal(self, action: Action) -> bool:
        if self._legal is None:
            self._legal = self._legal_actions()
        if type(action) is not int:
            try:
                action = as_action_int(action)
            except IllegalActionError:
                return False
        return action in self._legal

    def apply_action(self, action: Action) -> None:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing."""
        if type(action) is not int:
            action = as_action_int(action)
        if self._legal is None:
            self._legal = self._legal_actions()
        if action not in self._legal:
            raise IllegalActionError(self.illegal_message(action))
        self._legal = None
        self._apply(action)

    def apply_json(self, data: Mapping[str, Any]) -> None:
        """Parse and play a canonical JSON action."""
        self.apply_action(self.action_from_json(data))

    def illegal_message(self, action: Action) -> str:
        """Why ``action`` cannot be played here, in words a person understands."""
        if self.is_terminal():
            return "the game is over: no action can be played"
        try:
            text = json.dumps(self.action_to_json(action))
        except (ValueError, KeyError, IndexError, TypeError):
            return f"{action!r} is not an action of {self.game.title}"
        who = "chance" if self.is_chance_node() else f"player {self.current_player()}"
        return f"{text} is not legal now ({who} to act)"

    def clone(self) -> State:
        """An independent copy: playing on it never changes this state."""
        copy = self._copy()
        copy._legal = self._legal
        return copy

    def observation(self, seat: int | None) -> dict[str, Any]:
        """The position as ``seat`` may see it (``None``: a spectator). Default: all of it."""
        return self.to_json()

    def action_to_string(self, action: Action) -> str:
        """A short text form of an action (terminal play, logs)."""
        return json.dumps(self.action_to_json(action), separators=(",", ":"))

    def action_from_string(self, text: str) -> Action:
        """Parse :meth:`action_to_string` output or canonical JSON text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise IllegalActionError(f"cannot read {text!r} as an action: {exc.msg}") from None
        if not isinstance(data, dict):
            raise IllegalActionError(f"an action is a JSON object, not {text!r}")
        return self.action_from_json(data)

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return f"<{self.game.title} state {json.dumps(self.to_json())}>"
