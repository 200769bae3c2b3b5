"""A game's guided first game ("Learn to play"): scripted positions that teach one rule at a time.

A game ships its guide as ``guide.json`` in its own package (read by :meth:`Game.guide
<ludoteca.core.game.Game.guide>`)::

    {"format": "ludoteca-guide", "version": 1, "players": 2, "options": {...}, "learner": 0,
     "steps": [{"title": {"en": "...", "it": "..."},
                "before": {"en": "...", "it": "..."},      # what to look at, what to do
                "position": {...},                          # canonical position JSON
                "setup": [{...}],                           # optional: played first (e.g. the learner's roll)
                "offered": [{...}],                         # optional: other legal moves the board also shows
                "moves": [{...}],                           # the move(s) asked (canonical JSON)
                "then": [{...}],                            # what follows: chance outcomes, the others' moves
                "after": {"en": "...", "it": "..."},       # what happened and why
                "hint": {"en": "...", "it": "..."}}]}       # optional: said when another move is tried

Each step is checked against the real engine (:func:`parse`): the position is read by
``state_from_json``; the actions of ``setup`` (chance outcomes such as the learner's own roll, or the
others' moves, never the learner's) are legal in turn, and then the learner is to move; every asked
move is legal there; every ``offered`` move is legal there and is not an asked one; after any asked move,
every action of ``then`` is legal in turn (applied checked); every text exists in every language of
:data:`LANGUAGES`, non-empty. A guide can therefore never teach a wrong rule.

``offered`` moves are shown on the board with the asked ones, first, so that the asked move takes a
deliberate choice: EXAGON's lesson on turning a tile offers the way it first fits and asks for another,
which only the Rotate control reaches. Played, an offered move is "not this one" like any other.

Playing a step (:func:`play_step`) is stateless: the step's position is rebuilt from the guide,
the action is applied with the checked ``apply_action`` and, when it is one of the asked moves,
``then`` follows; the answer holds each applied action's events.
"""

from __future__ import annotations

import importlib.resources
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ludoteca.core.constants import CHANCE
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import Event

if TYPE_CHECKING:
    from ludoteca.core.game import Game, State

FORMAT = "ludoteca-guide"
VERSION = 1
LANGUAGES = ("en", "it")
"""Every text of a guide exists in each of these languages."""
MAX_STEPS = 20
MAX_ACTIONS = 30
"""At most this many asked moves, and this many actions in a step's ``then``."""
MAX_TEXT = 2000
MAX_FILE = 400_000
"""Bytes of a guide file."""
TEXTS = ("title", "before", "after")
"""The texts every step has (``hint`` is optional)."""


class GuideError(ValueError):
    """A guide file that breaks the contract: the message names the step and what is wrong."""


@dataclass(frozen=True)
class Step:
    """One lesson: a position, the moves asked, what follows, and its texts per language."""

    index: int
    position: Mapping[str, Any]
    setup: tuple[Mapping[str, Any], ...]
    moves: tuple[Mapping[str, Any], ...]
    then: tuple[Mapping[str, Any], ...]
    texts: Mapping[str, Mapping[str, str]]
    """Text name (``title``, ``before``, ``after``, ``hint``) -> language -> text."""
    offered: tuple[Mapping[str, Any], ...] = ()
    """Legal moves that are not asked, shown on the board before the asked ones."""

    def text(self, name: str, lang: str) -> str:
        """Text ``name`` in ``lang`` (English when ``lang`` is not a guide language; "" when absent)."""
        texts = self.texts.get(name, {})
        return texts.get(lang) or texts.get(LANGUAGES[0], "")


@dataclass(frozen=True)
class Guide:
    """A game's guided first game: the game it is played with, and its steps."""

    game: Game
    learner: int
    steps: tuple[Step, ...]

    def start(self, index: int) -> State:
        """A fresh copy of step ``index``'s position, its ``setup`` played: the learner is to move."""
        return self.opening(index)[0]

    def opening(self, index: int) -> tuple[State, tuple[tuple[int | None, Mapping[str, Any], tuple[Event, ...]], ...]]:
        """Step ``index``'s position with its ``setup`` played, and (seat, action, events) of each."""
        state = self.game.state_from_json(self.steps[index].position)
        applied = []
        for action in self.steps[index].setup:
            seat, events = apply(state, action)
            applied.append((seat, action, events))
        return state, tuple(applied)


@dataclass(frozen=True)
class Played:
    """The answer to a move in a step: whether it was the asked one, the position after, and
    every action applied (the learner's, then ``then``'s) with its events."""

    asked: bool
    state: State
    applied: tuple[tuple[int | None, Mapping[str, Any], tuple[Event, ...]], ...]
    """(seat or None for chance, action JSON, events) of each action applied."""


def _texts(where: str, raw: Any, required: bool) -> dict[str, str]:
    if raw is None and not required:
        return {}
    if not isinstance(raw, Mapping):
        raise GuideError(f"{where}: must be an object with a text per language ({', '.join(LANGUAGES)})")
    out: dict[str, str] = {}
    for lang in LANGUAGES:
        text = raw.get(lang)
        if not isinstance(text, str) or not text.strip():
            raise GuideError(f"{where}: the {lang} text is missing or empty")
        if len(text) > MAX_TEXT:
            raise GuideError(f"{where}: the {lang} text is longer than {MAX_TEXT} characters")
        out[lang] = text
    return out


def _actions(where: str, raw: Any, allow_empty: bool) -> tuple[Mapping[str, Any], ...]:
    if raw is None and allow_empty:
        return ()
    if not isinstance(raw, list) or not all(isinstance(a, Mapping) for a in raw):
        raise GuideError(f"{where}: must be a list of actions (JSON objects)")
    if not raw and not allow_empty:
        raise GuideError(f"{where}: needs at least one action")
    if len(raw) > MAX_ACTIONS:
        raise GuideError(f"{where}: at most {MAX_ACTIONS} actions")
    return tuple(raw)


def seat_of(state: State) -> int | None:
    """Who decides at ``state``: a seat, or None at a chance node."""
    player = state.current_player()
    return None if player == CHANCE else player


def apply(state: State, action: Mapping[str, Any]) -> tuple[int | None, tuple[Event, ...]]:
    """Applies canonical JSON ``action`` checked; (who played it, its events).
    :class:`IllegalActionError` (state unchanged) when it is ill-formed or illegal."""
    seat = seat_of(state)
    events = state.apply_json(dict(action))  # with its "elapsed", if any
    return seat, tuple(events)


def play_step(guide: Guide, index: int, action: Mapping[str, Any]) -> Played:
    """Plays ``action`` (canonical JSON) in step ``index``: :class:`IllegalActionError` when it is not
    legal there; a :class:`Played` with ``asked`` False (nothing applied) when it is legal but not
    one of the moves asked; otherwise the move and the step's ``then``, applied checked."""
    step = guide.steps[index]
    state = guide.start(index)
    number = state.action_from_json(dict(action))
    if not state.is_legal(number):
        state.apply_action(number)  # raises the engine's own readable IllegalActionError
    if not any(_same(state, number, asked) for asked in step.moves):
        return Played(False, state, ())
    seat, played, elapsed = seat_of(state), state.action_to_json(number), action.get("elapsed")
    learned = state.apply_action(number) if elapsed is None else state.apply_action(number, elapsed=elapsed)
    applied = [(seat, played, tuple(learned))]  # time spent (elapsed) enters as apply_json passes it
    for follow in step.then:
        seat, events = apply(state, follow)
        applied.append((seat, dict(follow), events))
    return Played(True, state, tuple(applied))


def _same(state: State, number: int, asked: Mapping[str, Any]) -> bool:
    try:
        return state.action_from_json(dict(asked)) == number
    except IllegalActionError:
        return False


def parse(game_class: type[Game], data: Any) -> Guide:
    """Reads and checks a guide (the decoded JSON of ``guide.json``) with the real engine of
    ``game_class``: :class:`GuideError` naming the step and the problem."""
    if not isinstance(data, Mapping) or data.get("format") != FORMAT or data.get("version") != VERSION:
        raise GuideError(f'a guide is {{"format": "{FORMAT}", "version": {VERSION}, ...}}')
    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise GuideError("options: must be an object")
    try:
        game = game_class(players=data.get("players"), **options)
    except (TypeError, ValueError) as exc:
        raise GuideError(f"the game's options: {exc}") from None
    learner = data.get("learner", 0)
    if not isinstance(learner, int) or not 0 <= learner < game.num_players:
        raise GuideError("learner: must be a seat of the game")
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not 0 < len(raw_steps) <= MAX_STEPS:
        raise GuideError(f"steps: must be a list of 1 to {MAX_STEPS} steps")
    steps = []
    for i, raw in enumerate(raw_steps):
        where = f"step {i + 1}"
        if not isinstance(raw, Mapping):
            raise GuideError(f"{where}: must be an object")
        texts = {name: _texts(f"{where}, {name}", raw.get(name), True) for name in TEXTS}
        hint = _texts(f"{where}, hint", raw.get("hint"), False)
        if hint:
            texts["hint"] = hint
        position = raw.get("position")
        if not isinstance(position, Mapping):
            raise GuideError(f"{where}, position: must be a position (JSON object)")
        step = Step(i, position, _actions(f"{where}, setup", raw.get("setup"), True),
                    _actions(f"{where}, moves", raw.get("moves"), False),
                    _actions(f"{where}, then", raw.get("then"), True), texts,
                    _actions(f"{where}, offered", raw.get("offered"), True))
        _check(game, learner, step, where)
        steps.append(step)
    return Guide(game, learner, tuple(steps))


def _learners_choice(state: State, learner: int, action: Mapping[str, Any]) -> bool:
    """True when ``action`` would be a choice of the learner: the learner decides at ``state`` and the
    action is one of their legal moves (the host's own actions, such as a timeout, are never listed)."""
    if state.current_player() != learner:
        return False
    try:
        return state.action_from_json(dict(action)) in state.legal_actions()
    except ValueError:
        return False


def _check(game: Game, learner: int, step: Step, where: str) -> None:
    try:
        start = game.state_from_json(step.position)
    except ValueError as exc:
        raise GuideError(f"{where}, position: {exc}") from None
    for j, action in enumerate(step.setup):
        if _learners_choice(start, learner, action):
            raise GuideError(f"{where}, setup {j + 1}: the learner is to move; the guide never moves for them")
        try:
            apply(start, action)
        except (IllegalActionError, ValueError) as exc:
            raise GuideError(f"{where}, setup {j + 1} {json.dumps(action)}: {exc}") from None
    if start.current_player() != learner:
        raise GuideError(f"{where}: the learner (seat {learner}) is not to move after the setup")
    for k, offer in enumerate(step.offered):
        try:
            number = start.action_from_json(dict(offer))
        except (IllegalActionError, ValueError) as exc:
            raise GuideError(f"{where}, offered {k + 1} {json.dumps(offer)}: {exc}") from None
        if not start.is_legal(number):
            raise GuideError(f"{where}, offered {k + 1} {json.dumps(offer)}: not a legal move there")
        if any(_same(start, number, asked) for asked in step.moves):
            raise GuideError(f"{where}, offered {k + 1} {json.dumps(offer)}: is one of the moves asked")
    for k, move in enumerate(step.moves):
        state = start.clone()
        try:
            apply(state, move)
        except (IllegalActionError, ValueError) as exc:
            raise GuideError(f"{where}, move {k + 1} {json.dumps(move)}: {exc}") from None
        for j, follow in enumerate(step.then):
            if _learners_choice(state, learner, follow):
                raise GuideError(f"{where}, then {j + 1}: the learner is to move; the guide never moves for them")
            try:
                apply(state, follow)
            except (IllegalActionError, ValueError) as exc:
                raise GuideError(f"{where}, then {j + 1} {json.dumps(follow)} (after move {k + 1}): {exc}") from None


_LOADED: dict[type[Any], Guide | None] = {}


def load(game_class: type[Game]) -> Guide | None:
    """``game_class``'s guide (``guide.json`` beside its engine), read and checked once per process;
    None when the game has none."""
    if game_class in _LOADED:
        return _LOADED[game_class]
    try:
        source = importlib.resources.files(game_class.__module__).joinpath("guide.json")
    except (TypeError, ModuleNotFoundError):  # a game defined outside a package (tests)
        source = None
    guide = None
    if source is not None and source.is_file():
        raw = source.read_bytes()
        if len(raw) > MAX_FILE:
            raise GuideError(f"the guide of {game_class.name} is larger than {MAX_FILE} bytes")
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise GuideError(f"the guide of {game_class.name} is not JSON: {exc}") from None
        guide = parse(game_class, data)
    _LOADED[game_class] = guide
    return guide


def moves_json(state: State, seat: int) -> list[dict[str, Any]]:
    """The legal moves of ``seat`` at ``state`` (canonical JSON; [] when another decides)."""
    if state.current_player() != seat:
        return []
    return [state.action_to_json(a) for a in state.legal_actions()]


def texts_in(step: Step, lang: str, names: Sequence[str] = TEXTS) -> dict[str, str]:
    """The step's texts ``names`` in ``lang`` (absent ones left out)."""
    return {name: step.text(name, lang) for name in names if step.text(name, lang)}
