"""Game options: declared once per game, validated once per ``load_game`` call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ludoteca.core.i18n import _

Resolver = Callable[[Any, Mapping[str, Any]], Any]
"""Turns a user's value (already defaulted) into the resolved value, or raises ValueError.

It receives the options resolved so far (``players`` first, then in declaration order)."""


@dataclass(frozen=True)
class Option:
    """One named game parameter, as RULES.md names it."""

    name: str
    doc: str
    default: Any = None
    """The default value, or a callable ``f(resolved_so_far) -> value`` (e.g. TRI's size by players)."""
    resolve: Resolver | None = None

    def default_for(self, resolved: Mapping[str, Any]) -> Any:
        return self.default(resolved) if callable(self.default) else self.default


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
                raise ValueError(_("option {name}: {error}").format(name=opt.name, error=exc)) from None
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
