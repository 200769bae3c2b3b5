"""Game records: a game's options plus its list of canonical actions (chance included).

A record replays to the identical position without any seed::

    {"format": "ludoteca-record", "version": 1, "game": "tohm",
     "options": {"players": 2, ...}, "actions": [{"roll": 4}, {"place": [0, 1]}, ...]}

Each action is stored as its canonical JSON. Time spent on an action (EXAGON's hourglass) is
not part of the action: it is stored beside it as the JSON's ``"elapsed"`` key (RULES.md: any
EXAGON action may carry it), and replay gives it back to ``apply_action(action, elapsed=...)``
(through :meth:`State.apply_json`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ludoteca.core.game import Action, Game, State

FORMAT = "ludoteca-record"
VERSION = 1


class RecordError(ValueError):
    """A record that cannot be read or does not replay; the message names step and reason."""


@dataclass
class Record:
    """A game as it was played, replayable to the identical position."""

    game: str
    options: dict[str, Any]
    actions: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def start(cls, game: Game, **meta: Any) -> Record:
        return cls(game=game.name, options=game.record_options(), meta=dict(meta))

    def add(self, state: State, action: Action, elapsed: float | None = None) -> None:
        """Note ``action`` as played from ``state`` (call before applying it), with the seconds
        spent on it when given (stored as ``"elapsed"``, a float, after the action's keys). A game
        without a clock (no ``clock_option``) ignores ``elapsed``, as ``apply_action`` does, and its
        actions are stored without it (their canonical JSON has no such key)."""
        data = state.action_to_json(action)
        if elapsed is not None and state.game.clock_option is not None:
            data["elapsed"] = float(elapsed)
        self.actions.append(data)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT, "version": VERSION, "game": self.game,
            "options": self.options, "actions": self.actions,
        }
        if self.meta:
            data["meta"] = self.meta
        return data

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.dumps() + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, data: Any) -> Record:
        if not isinstance(data, Mapping):
            raise RecordError("a record must be a JSON object")
        if data.get("format") != FORMAT:
            raise RecordError(f"not a ludoteca record: format is {data.get('format')!r}, expected {FORMAT!r}")
        if data.get("version") != VERSION:
            raise RecordError(f"unsupported record version {data.get('version')!r} (this program reads {VERSION})")
        game, options, actions = data.get("game"), data.get("options", {}), data.get("actions")
        if not isinstance(game, str):
            raise RecordError("the record does not name its game")
        if not isinstance(options, Mapping):
            raise RecordError("the record's options must be a JSON object")
        if not isinstance(actions, list) or not all(isinstance(a, Mapping) for a in actions):
            raise RecordError("the record's actions must be a list of JSON objects")
        meta = data.get("meta", {})
        return cls(game, dict(options), [dict(a) for a in actions], dict(meta) if isinstance(meta, Mapping) else {})

    @classmethod
    def loads(cls, text: str) -> Record:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"the record is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        return cls.from_json(data)

    @classmethod
    def load(cls, path: str | Path) -> Record:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror}") from None
        return cls.loads(text)

    def load_game(self) -> Game:
        from ludoteca.core.registry import load_game

        try:
            return load_game(self.game, **self.options)
        except ValueError as exc:
            raise RecordError(f"the record's game cannot be set up: {exc}") from None

    def states(self) -> Iterator[tuple[State, dict[str, Any] | None]]:
        """Yield ``(state, next_action_json)`` for every position; the last has ``None``."""
        state = self.load_game().new_initial_state()
        for step, data in enumerate(self.actions):
            yield state, data
            state = state.clone()
            try:
                state.apply_json(data)
            except ValueError as exc:
                raise RecordError(f"step {step + 1} ({json.dumps(data)}) does not replay: {exc}") from None
        yield state, None

    def replay(self) -> State:
        """The position reached after every action; RecordError naming a failing step."""
        state = self.load_game().new_initial_state()
        for step, data in enumerate(self.actions):
            try:
                state.apply_json(data)
            except ValueError as exc:
                raise RecordError(f"step {step + 1} ({json.dumps(data)}) does not replay: {exc}") from None
        return state
