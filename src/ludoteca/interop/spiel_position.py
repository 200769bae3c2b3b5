"""A position as the OpenSpiel adapter holds it: the engine answering and the history of actions.

:class:`Position` is what a :class:`ludoteca.interop.openspiel.LudotecaState` wraps (its only
attribute in ``__dict__``, which OpenSpiel's C++ ``Clone`` and serialisation copy): the compiled
engine's state or the Python one, the actions applied (a list of ints), who saw each action and
what each reveal revealed (games with hidden information), and the information-state strings built
from them. It needs neither OpenSpiel nor numpy.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from typing import Any

from ludoteca.core.compiled import CompiledView, compiled_copy
from ludoteca.core.game import Game, State
from ludoteca.registry import load_game

TOKEN_HIDDEN = "?"
"""An action a seat cannot see, in its information-state string."""


def _sees_everything(state: State) -> bool:
    """True when no seat has anything hidden from it now (every secret so far is revealed)."""
    return all(state.worlds(seat) is None for seat in range(state.num_players))


class Position:
    """Holds the engine state and the history; cheap to copy (OpenSpiel's clone).

    A game without hidden information plays on its compiled engine when it is built and plays
    the game's options (``core.compiled.compiled_copy``: the same actions, outcomes and returns);
    ``play`` is what answers the hot questions (the compiled copy's ``CState``, else the Python
    state: the same method names and answers) and
    :attr:`state` the Python state, rebuilt from the compiled one when asked (observations,
    strings, rendering).

    The history is a list of ints (``actions``, one per applied action, chance included: appending
    allocates nothing an int id does not already have), beside it, for a game with hidden
    information, who saw each action (``seen``) and the reveals (``reveals``: at the index of
    the action that revealed them, the secret actions it revealed). Who saw each action comes
    from the game: the event of the action (``to``: the seats that may see it, None for
    everyone). Secrets pending are revealed by an action with a public event besides its own after
    which no seat has anything hidden any more (``state.worlds(seat)`` is None for every seat)."""

    __slots__ = ("_state", "_state_at", "actions", "cache", "fast", "game", "hidden", "origin", "play", "reveals",
                 "secrets", "seen")

    def __init__(self, state: State, origin: dict[str, Any] | None = None) -> None:
        self.game = state.game
        self.origin = origin
        self.hidden = state.game.has_hidden_information()
        self.fast: CompiledView[Any, Any] | None = None if self.hidden else compiled_copy(state)
        self._state: State | None = state
        self._state_at = 0
        """The length of the history :attr:`_state` is the position of (compiled play moves on)."""
        self.play: Any = self.fast._c if self.fast is not None else state
        self.actions: list[int] = []
        self.seen: list[frozenset[int] | None] = []
        """Who saw each action (the Python engine only: the compiled one plays no secrets)."""
        self.reveals: dict[int, tuple[int, ...]] = {}
        # the secret actions since the last reveal, oldest first
        self.secrets: tuple[int, ...] = ()
        # info-state text per seat, with the length of the history it describes
        self.cache: dict[int | None, tuple[int, str]] = {}

    @property
    def state(self) -> State:
        """The Python state of this position (rebuilt from the compiled copy after it moved)."""
        if self.fast is None:
            assert self._state is not None
            return self._state
        state = self._state
        if state is None or self._state_at != len(self.actions):
            state = self._state = self.fast.to_state()
            self._state_at = len(self.actions)
        return state

    @property
    def moves(self) -> int:
        return len(self.actions)

    def apply(self, action: int) -> None:
        action = operator.index(action)  # an int (numpy's too); TypeError for anything else
        if self.fast is not None:  # no hidden information: every action is public
            if not self.play.play(action):
                self.fast.apply_action(action)  # raises IllegalActionError, saying why
            self.actions.append(action)
            return
        state = self.state
        events = state.apply_action(action)
        seen = events[0].to
        if self.hidden and (self.secrets or seen is not None):
            # a secret is revealed by a later public event carrying it (core.events), so only an
            # action with a public event besides its own may reveal: then ask every seat
            if any(e.to is None for e in events[1:]) and _sees_everything(state):
                self.reveals[len(self.actions)] = (*self.secrets, action)
                self.secrets = ()
            elif seen is not None:
                self.secrets = (*self.secrets, action)
        self.actions.append(action)
        self.seen.append(seen)

    def entries(self, start: int = 0) -> list[tuple[int, frozenset[int] | None, tuple[int, ...] | None]]:
        """``(action, seats that saw it or None, revealed actions or None)`` from index ``start`` on."""
        seen, reveals = self.seen, self.reveals
        return [(a, seen[i] if seen else None, reveals.get(i)) for i, a in enumerate(self.actions[start:], start)]

    def _since_reveal(self) -> list[tuple[int, frozenset[int] | None, tuple[int, ...] | None]]:
        """Entries after the last reveal, oldest first."""
        return self.entries(max(self.reveals, default=-1) + 1)

    def info_state(self, seat: int | None) -> str:
        """The history as ``seat`` saw it. Built incrementally: the text of an earlier prefix of
        this history is extended (the history is append-only and a token never changes)."""
        done, text = self.cache.get(seat, (0, None))
        tokens = []
        for action, viewer, revealed in self.entries(done):
            tok = str(action) if viewer is None or seat in viewer else TOKEN_HIDDEN
            if revealed is not None:
                tok += "=" + ",".join(map(str, revealed))
            tokens.append(tok)
        if text is None:
            if self.origin is not None:  # a state built from a position: what seat saw of it
                start = self.state.game.state_from_json(self.origin)
                text = "from " + json.dumps(start.observation(seat), separators=(",", ":"))
            else:
                text = ""
        if tokens:
            text = text + " " + " ".join(tokens) if text else " ".join(tokens)
        self.cache[seat] = (len(self.actions), text)
        return f"seat {seat}: {text}" if self.hidden else text

    def copy(self) -> Position:
        """An independent copy (the history's lists copied, the engine state cloned)."""
        new = Position.__new__(Position)
        new.game = self.game
        new.fast = fast = None if self.fast is None else self.fast.clone()
        if fast is not None:
            new._state, new._state_at, new.play = None, 0, fast._c
        else:
            assert self._state is not None
            new._state = new.play = self._state.clone()
            new._state_at = 0
        new.origin = self.origin
        new.hidden = self.hidden
        new.secrets = self.secrets
        new.actions = self.actions[:]
        new.seen = self.seen[:]
        new.reveals = dict(self.reveals)
        new.cache = dict(self.cache)
        return new

    def __deepcopy__(self, memo: dict) -> Position:
        return self.copy()

    def __reduce__(self) -> tuple:
        game = self.game
        return (restore_position, (game.name, game.record_options(), self.origin, self.actions[:]))


_GAME_CACHE: dict[str, Game] = {}


def _cached_game(name: str, options: Mapping[str, Any]) -> Game:
    key = name + json.dumps(options, sort_keys=True, default=str)
    game = _GAME_CACHE.get(key)
    if game is None:
        if len(_GAME_CACHE) > 64:
            _GAME_CACHE.clear()
        game = _GAME_CACHE[key] = load_game(name, **options)
    return game


def restore_position(name: str, options: dict[str, Any], origin: dict[str, Any] | None,
                      actions: list[int]) -> Position:
    game = _cached_game(name, options)
    pos = Position(game.state_from_json(origin) if origin is not None else game.new_initial_state(), origin)
    for action in actions:
        pos.apply(action)
    return pos
