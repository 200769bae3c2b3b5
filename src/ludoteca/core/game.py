"""The game/state protocol every ludoteca game implements (OpenSpiel-style).

A :class:`Game` describes: name, players, options, action space sizes, and the game's facts
(class attributes: hidden information, clock, score name, lab counters, agents' defaults).
A :class:`State` plays: ``current_player``, ``legal_actions``, ``apply_action``,
``chance_outcomes``, ``returns``, ``scores``, ``clone``, ``observation``; actions are always
``int`` on the hot path, canonical JSON at the edges.

Two ways to play an action, as python-chess has ``push`` beside its checked moves:

* :meth:`State.apply_action` (checked): refuses an illegal action with
  :class:`~ludoteca.core.errors.IllegalActionError` and leaves the state unchanged; takes the
  seconds a player spent (``elapsed``) for games with a clock; returns the action's
  :mod:`events <ludoteca.core.events>`.
* :meth:`State.apply_unchecked` (fast, for search and simulation): no legality check, no
  events, no clock. Playing an illegal action this way leaves the state undefined.

Subclasses implement the underscored hooks (``_legal_actions``, ``_apply``, ...) and announce
what happened with :meth:`State._emit` (a no-op on the fast path). Nothing outside ``core/``
and ``games/`` calls the hooks.
"""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import json
import operator
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

from ludoteca.core import events as ev
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event
from ludoteca.core.i18n import _
from ludoteca.core.options import Option, resolve_options

if TYPE_CHECKING:
    from ludoteca.core.guide import Guide

Action = int
"""An engine action: always an ``int`` (time spent enters through ``apply_action(elapsed=)``)."""

Worlds = tuple[list["State"], list[float]]
"""Positions a seat cannot tell apart, with their weights (information-set search)."""


@dataclass(frozen=True)
class Counter:
    """A figure the balance lab reports for a game, read from :meth:`State.counters`.

    ``kind``: ``"share_per_game"`` (the share of games where it is non-zero),
    ``"share_per_event"`` (``name`` counts successes out of ``of``: another counter, or
    ``"turns"``, the player turns of the game), ``"ratio_per_event"`` (``name`` per ``of``,
    which may exceed 1, e.g. bonuses earned per turn), ``"mean_per_game"`` (its mean per game).
    The lab pools events over games with the game as the sampling unit (``docs/lab.md``).
    """

    name: str
    kind: str
    doc: str
    of: str | None = None


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
    catalogue_order: ClassVar[int] = 100
    """Where the game comes in listings (lobby, ``ludoteca --help``); then by name."""

    # --- the game's facts (read by the web, terminal, lab, agents and adapters) -----------
    hidden_information: ClassVar[bool] = False
    """True when ``observation(seat)`` may hide part of the position from a seat."""
    clock_option: ClassVar[str | None] = None
    """The option holding the seconds per turn when the game has a clock (EXAGON: ``clock``)."""
    score_name: ClassVar[str] = "score"
    """What :meth:`State.scores` counts (the measure ``turn_limit`` uses), e.g. ``"euros"``."""
    counters: ClassVar[tuple[Counter, ...]] = ()
    """The figures :meth:`State.counters` reports, for the balance lab."""
    agent_defaults: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    """Tuning defaults per agent kind, e.g. ``{"mcts": {"iterations": 400, "c": 0.4}}``."""
    rules_notes: ClassVar[str | None] = None
    """Where the rules as ludoteca implements them are written with every decision the rulebook leaves
    open, as a path in ludoteca's source (e.g. ``"docs/rules/tri.md"``), or None: ``ludoteca rules``
    points to it. A new game needs none (its ``rules/<lang>.md`` pages are the rules)."""
    compiled_part: ClassVar[str | None] = None
    """The module of the game's package holding its compiled engine (e.g. ``"compiled"``), or None:
    see :meth:`compiled` and docs/compiled.md."""

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

    @classmethod
    def rules_text(cls, lang: str = "en") -> str | None:
        """The game's full rules page (Markdown) in ``lang`` ("en", "it", ...): the file
        ``rules/<lang>.md`` of the game's own package; English when ``lang`` has no page (or is
        not a language code); None when the game has no rules page at all."""
        try:
            root = importlib.resources.files(cls.__module__).joinpath("rules")
        except (TypeError, ModuleNotFoundError):  # a game defined outside a package (tests)
            return None
        wanted = lang.lower() if re.fullmatch(r"[A-Za-z]{2,3}", lang) else "en"
        for code in dict.fromkeys((wanted, "en")):
            page = root.joinpath(f"{code}.md")
            if page.is_file():
                return page.read_text(encoding="utf-8")
        return None

    # --- states ------------------------------------------------------------------------
    @abstractmethod
    def new_initial_state(self) -> State:
        """The position before the first action (often a chance node)."""

    @abstractmethod
    def state_from_json(self, data: Mapping[str, Any]) -> State:
        """Rebuild a position from its canonical JSON; ValueError saying what is wrong."""

    def has_hidden_information(self) -> bool:
        """True when this game (with its options) may hide part of a position from a seat.
        Default: the class's ``hidden_information``; a game whose secrecy depends on its options
        overrides it."""
        return self.hidden_information

    def clock(self) -> float | None:
        """Seconds per turn of this game's clock, or None (no clock)."""
        if self.clock_option is None:
            return None
        value = self.options.get(self.clock_option)
        return None if value is None else float(value)

    @classmethod
    def guide(cls) -> Guide | None:
        """The game's guided first game ("Learn to play", :mod:`ludoteca.core.guide`): the file
        ``guide.json`` of the game's own package, read and checked against this engine once; None
        when the game has no guide. A broken guide raises :class:`~ludoteca.core.guide.GuideError`."""
        from ludoteca.core.guide import load

        return load(cls)

    @classmethod
    def part(cls, name: str) -> ModuleType | None:
        """The module ``name`` of the game's package (``heuristic``, ``encoding``, ...), or None
        when the game has none: how agents and adapters find a game's parts without naming it
        (the TRI engine lives in ``ludoteca.games.tri``, its heuristic in
        ``ludoteca.games.tri.heuristic``)."""
        package = sys.modules[cls.__module__].__package__ or cls.__module__
        full = f"{package}.{name}"
        try:
            return importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name == full:
                return None
            raise

    def compiled(self) -> ModuleType | None:
        """The game's compiled engine (the module named by :attr:`compiled_part`), or None when the
        game has none. How agents find a compiled search without naming the game; the module offers
        ``unsupported(game) -> str`` (why it cannot play these options, "" when it can: not built,
        an option beyond it) and ``search(state, iterations, c, cap, seed) -> action`` (the compiled
        MCTS, ``core/_mcts.pxi``). See docs/compiled.md."""
        return self.part(self.compiled_part) if self.compiled_part else None

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items() if k != "tiles")
        return f"load_game({self.name!r}, {opts})"


class State(ABC):
    """A position of a game, and the way to play it forward."""

    __slots__ = ("_events", "_legal", "game")

    def __init__(self, game: Game) -> None:
        self.game = game
        self._legal: list[Action] | None = None
        self._events: list[Event] | None = None

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

    def legal_actions_view(self) -> Sequence[Action]:
        """The legal actions without a copy, for search loops: the state's own cached list,
        valid until the next action is applied. Read it, never change it (:meth:`legal_actions`
        returns a list of your own)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._legal_actions()
        return legal

    def is_legal(self, action: Action) -> bool:
        if self._legal is None:
            self._legal = self._legal_actions()
        if type(action) is not int:
            try:
                action = as_action_int(action)
            except IllegalActionError:
                return False
        return action in self._legal

    def apply_action(self, action: Action, *, elapsed: float | None = None) -> list[Event]:
        """Play ``action``; an illegal one raises IllegalActionError and changes nothing.

        ``elapsed``: the seconds the player spent on it, for a game with a clock (others ignore
        it); more than the time left is refused. Returns the action's events, in order.
        """
        if type(action) is not int:
            action = as_action_int(action)
        if self._legal is None:
            self._legal = self._legal_actions()
        if action not in self._legal and not self._accepts_unlisted(action):
            raise IllegalActionError(self.illegal_message(action))
        if elapsed is not None:
            self._check_elapsed(action, elapsed)
        out: list[Event] = [self._action_event(action)]
        self._events = out
        try:
            self._legal = None
            if elapsed is not None:
                self._spend(elapsed)
            self._apply(action)
        finally:
            self._events = None
        if self.current_player() == TERMINAL:
            out.append(self._end_event())
        return out

    def apply_unchecked(self, action: Action) -> None:
        """Play ``action`` without checking it: the fast path for search and simulation.

        Like python-chess's ``push``: no legality check, no events, no clock. ``action`` must be
        one of :meth:`legal_actions` (or a chance outcome); anything else leaves the state
        undefined. Use :meth:`apply_action` for anything a person or a file supplied.
        """
        self._legal = None
        self._apply(action)

    def apply_json(self, data: Mapping[str, Any]) -> list[Event]:
        """Parse and play a canonical JSON action (``elapsed`` read from the data if present)."""
        elapsed = data.get("elapsed") if isinstance(data, Mapping) else None
        action = self.action_from_json(data)
        if elapsed is None:
            return self.apply_action(action)
        return self.apply_action(action, elapsed=elapsed)

    # --- hooks with defaults -----------------------------------------------------------
    def _accepts_unlisted(self, action: Action) -> bool:
        """True for an action the host may apply that ``legal_actions`` never lists (EXAGON's
        timeout). Default: none."""
        return False

    def _check_elapsed(self, action: Action, elapsed: float) -> None:
        """Refuse ``elapsed`` (IllegalActionError, state unchanged) if it cannot be spent now.
        Default: games without a clock accept any number of seconds >= 0 and ignore it."""
        if isinstance(elapsed, bool) or not isinstance(elapsed, int | float) or not elapsed >= 0:
            raise IllegalActionError(f"elapsed must be a number of seconds >= 0, not {elapsed!r}")

    def _spend(self, elapsed: float) -> None:
        """Take ``elapsed`` seconds off the clock before the action is applied. Default: nothing."""

    def _action_event(self, action: Action) -> Event:
        """The event of the action itself, before it is applied: ``move`` (a player's choice) or
        ``chance``, public. A game with secrets overrides it to set who may see it."""
        player = self.current_player()
        if player == CHANCE:
            return ev.event(ev.CHANCE, outcome=self.action_to_json(action))
        return ev.event(ev.MOVE, seat=player, action=self.action_to_json(action))

    def _end_event(self) -> Event:
        r = self.returns()
        return ev.event(ev.END, reason=self.end_reason(), returns=list(r),
                        winners=[i for i, x in enumerate(r) if x > 0])

    def _emit(self, kind: str, to: frozenset[int] | None = None,
              public: Mapping[str, Any] | None = None, **data: Any) -> None:
        """Announce what happened while applying an action (no-op on the fast path). Hot code
        may test ``self._events is not None`` first to skip building the fields."""
        if self._events is not None:
            self._events.append(Event(kind, data, to, public))

    def end_reason(self) -> str:
        """Why the game ended (a game-defined word such as ``"three_euros"``, ``"turn_limit"``)."""
        return "over"

    def scores(self) -> list[float]:
        """Each seat's score by the game's own measure (the one ``turn_limit`` uses; higher is
        better)."""
        raise NotImplementedError(f"{self.game.title} does not define scores()")

    def counters(self) -> dict[str, float]:
        """The game's figures so far, as declared by ``Game.counters`` (balance lab)."""
        return {}

    def turns_played(self) -> int:
        """Player turns completed so far: the position JSON's ``turn`` (RULES.md; roll-offs and
        deals excluded), the count ``turn_limit`` compares against. Default: read from
        :meth:`to_json`; a game overrides it with a direct read (the lab calls it often)."""
        return int(self.to_json()["turn"])

    def time_left(self) -> float | None:
        """Seconds left on the clock of the seat to move, or None (no clock running)."""
        return None

    def worlds(self, seat: int) -> Worlds | None:
        """The positions ``seat`` cannot tell apart from this one, with their weights; None when
        ``seat`` sees everything that matters (information-set search)."""
        return None

    def action_label(self, action: Action, seat: int) -> Hashable:
        """What ``seat`` observes when ``action`` is played here (the action itself when public;
        None or a partial view when hidden). Must agree with the action's event."""
        return action

    def illegal_message(self, action: Action) -> str:
        """Why ``action`` cannot be played here, in words a person understands."""
        if self.is_terminal():
            return _("the game is over: no action can be played")
        try:
            text = json.dumps(self.action_to_json(action))
        except (ValueError, KeyError, IndexError, TypeError):
            return _("{action} is not an action of {game}").format(action=repr(action), game=self.game.title)
        if self.is_chance_node():
            return _("{action} is not legal now (chance to act)").format(action=text)
        return _("{action} is not legal now (player {seat} to act)").format(action=text, seat=self.current_player())

    def clone(self) -> State:
        """An independent copy: playing on it never changes this state."""
        copy = self._copy()
        copy._legal = self._legal
        copy._events = None
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
