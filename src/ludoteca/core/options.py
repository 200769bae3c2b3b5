"""Game options: declared once per game, validated once per ``load_game`` call.

Each option declares its **kind**, which says how a person sets it and which resolver checks it:

- ``"choice"``: one of the declared :class:`Choice` values (a select), checked by :func:`one_of`;
- ``"bool"``: yes or no (a switch), checked by :func:`as_bool`;
- ``"int"``: a whole number from ``low`` to ``high`` (a number field), checked by :func:`as_int`;
- ``"seconds_or_none"``: seconds from ``low`` to ``high``, or None (a "none" switch, ``none_label``,
  beside a number field), checked by :func:`as_seconds_or_none`;
- ``"file"``: a designer's JSON file (an upload), checked by the game's own ``resolve``;
- ``"value"``: anything else (kept for options declared before kinds; a resolver of its own).

``label`` and ``help`` (and each choice's ``label`` and ``help``) are English texts a player reads;
their translations live in the game's own ``locale/options.<lang>.po``. A kind builds its resolver
when the option gives none, so ``resolve`` stays the single validator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ludoteca.core.i18n import _

Resolver = Callable[[Any, Mapping[str, Any]], Any]
"""Turns a user's value (already defaulted) into the resolved value, or raises ValueError.

It receives the options resolved so far (``players`` first, then in declaration order)."""

KINDS = ("choice", "bool", "int", "seconds_or_none", "file", "value")
"""The kinds of option (see the module's text)."""


@dataclass(frozen=True)
class Choice:
    """One value of a ``"choice"`` option, with the words a player reads for it."""

    value: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class Option:
    """One named game parameter, as RULES.md names it."""

    name: str
    doc: str
    """The developer's description (``ludoteca rules`` in English, the lab): names values as typed."""
    default: Any = None
    """The default value, or a callable ``f(resolved_so_far) -> value`` (e.g. TRI's size by players)."""
    resolve: Resolver | None = None
    kind: str = "value"
    label: str = ""
    """What a player calls the option (English; translated by the game's options catalog)."""
    help: str = ""
    """One or two sentences a player reads under the option's control."""
    choices: tuple[Choice, ...] = ()
    low: int | None = None
    high: int | None = None
    none_label: str = ""
    """``"seconds_or_none"``: the words of None (e.g. "no hourglass")."""
    default_label: str = ""
    """``"file"``: the words of the default (e.g. "the 40 standard tiles")."""
    variant: bool = False
    """A rule of the rulebook made a number or a switch for designers (its default is the rulebook's):
    the lobby shows it folded under "For designers", beside the options a table usually sets."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.kind == "choice" and not self.choices:
            raise ValueError(f"option {self.name}: a choice needs its choices")
        if self.kind in ("int", "seconds_or_none") and self.low is None:
            raise ValueError(f"option {self.name}: a number needs its lowest value (low)")
        if self.kind == "file" and self.resolve is None:
            raise ValueError(f"option {self.name}: a file option needs the game's resolver")
        if self.resolve is None:
            object.__setattr__(self, "resolve", self._kind_resolver())

    def _kind_resolver(self) -> Resolver | None:
        if self.kind == "choice":
            return one_of(*(c.value for c in self.choices))
        if self.kind == "bool":
            return as_bool
        if self.kind == "int":
            return as_int(self.low or 0, self.high)
        if self.kind == "seconds_or_none":
            return as_seconds_or_none(self.low or 0, self.high)
        return None

    def default_for(self, resolved: Mapping[str, Any]) -> Any:
        return self.default(resolved) if callable(self.default) else self.default

    @property
    def shown_label(self) -> str:
        """The option's English label: its declared one, else its name in words (``turn_limit``:
        "turn limit")."""
        return self.label or self.name.replace("_", " ")

    @property
    def shown_help(self) -> str:
        """The option's English help: its declared one, else its developer's description."""
        return self.help or self.doc

    def texts(self) -> list[str]:
        """Every English text a player reads about this option (its catalog's messages): the label,
        the help, each choice's label and help, the words of None and of the default."""
        out = [self.shown_label, self.shown_help, self.none_label, self.default_label]
        for c in self.choices:
            out += [c.label, c.help]
        return [text for text in out if text]

    def choice(self, value: Any) -> Choice | None:
        """The declared choice of ``value`` (None: not a choice of this option)."""
        return next((c for c in self.choices if c.value == value), None)


class OptionError(ValueError):
    """A value an option refuses: which option (:attr:`option`) and why (:attr:`reason`, in the
    language of ``_`` when it was raised). Its text names the option as typed (``option size: …``)."""

    def __init__(self, option: Option, reason: str) -> None:
        super().__init__(_("option {name}: {error}").format(name=option.name, error=reason))
        self.option = option
        self.reason = reason


def resolve_options(
    game_name: str,
    declared: tuple[Option, ...],
    min_players: int,
    max_players: int,
    given: Mapping[str, Any],
) -> dict[str, Any]:
    """Validate ``given`` against the declared options; return every option resolved.

    Raises ValueError naming an unknown option or an out-of-range value.
    """
    known = {"players"} | {o.name for o in declared}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(_("unknown option {name} for {game}; its options are: {names}").format(
            name=repr(unknown[0]), game=game_name, names=", ".join(sorted(known))))
    players = given.get("players", min_players)
    if isinstance(players, str) and players.strip().isdigit():
        players = int(players)
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError(_("players must be a whole number, not {players}").format(players=repr(players)))
    if not min_players <= players <= max_players:
        raise ValueError(_("{game} is played by {low} to {high} players, not {players}").format(
            game=game_name, low=min_players, high=max_players, players=players))
    resolved: dict[str, Any] = {"players": players}
    for opt in declared:
        value = given[opt.name] if opt.name in given else opt.default_for(resolved)
        if opt.resolve is not None:
            try:
                value = opt.resolve(value, resolved)
            except ValueError as exc:
                raise OptionError(opt, str(exc)) from None
        resolved[opt.name] = value
    return resolved


def parse_option_text(text: str) -> Any:
    """Turn a command-line option value into a Python value: ints, floats, true/false/null."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("null", "none"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def as_int(low: int, high: int | None = None) -> Resolver:
    """A resolver accepting whole numbers in ``[low, high]`` (strings of digits too)."""

    def check(value: Any, _resolved: Mapping[str, Any]) -> int:
        if isinstance(value, str):
            value = parse_option_text(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(_("expected a whole number, got {value}").format(value=repr(value)))
        if high is not None and not low <= value <= high:
            raise ValueError(_("expected {low} to {high}, got {value}").format(low=low, high=high, value=value))
        if value < low:
            raise ValueError(_("expected {low} or more, got {value}").format(low=low, value=value))
        return value

    return check


def as_bool(value: Any, _resolved: Mapping[str, Any]) -> bool:
    """A resolver accepting booleans (and their usual text forms)."""
    if isinstance(value, str):
        value = parse_option_text(value)
    if not isinstance(value, bool):
        raise ValueError(_("expected true or false, got {value}").format(value=repr(value)))
    return value


def one_of(*choices: str) -> Resolver:
    """A resolver accepting one of the given strings."""

    def check(value: Any, _resolved: Mapping[str, Any]) -> str:
        if value not in choices:
            raise ValueError(_("expected one of {choices}, got {value}").format(
                choices=", ".join(map(repr, choices)), value=repr(value)))
        return str(value)

    return check


def as_seconds_or_none(low: float, high: float | None = None) -> Resolver:
    """A resolver accepting None (no limit) or a number of seconds in ``[low, high]`` (text too)."""

    def check(value: Any, _resolved: Mapping[str, Any]) -> float | int | None:
        if isinstance(value, str):
            value = parse_option_text(value)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(_("expected a number of seconds or none, got {value}").format(value=repr(value)))
        if value < low or (high is not None and value > high):
            raise ValueError(_("expected {low} to {high} seconds, got {value}").format(
                low=low, high=high, value=value) if high is not None else
                _("expected {low} seconds or more, got {value}").format(low=low, value=value))
        return value

    return check
