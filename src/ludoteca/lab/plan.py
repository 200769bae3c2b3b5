"""Turning command-line choices into a :class:`~ludoteca.lab.runner.RunSpec`, with clear errors.

Sweeps: ``--sweep name=v1,v2`` (repeatable) runs every combination of the listed values.
The word ``default`` stands for "this option left at the game's default" (e.g.
``--sweep layout=default,my.json`` compares a designer's board with the standard one);
a file actually named ``default`` is written ``./default``. Values are read like ``--option``
values (numbers, ``true``/``false``, ``null``, else text such as a file path). Sweeping is
generic: any option of any game, whatever its type (numbers, words such as
``teleport=claim,move`` or ``start_coin=round,game,never``, file paths). A value
read as a number or a truth value that the game refuses is tried again as the text itself (a
layout file named ``5``, a word option whose value looks like ``yes``).

The number of players is a sweepable dimension too: ``--sweep players=2,3,4`` (without
``--players``) plays one variant per count, each with the game's defaults for that count (a
board cut to it, say). The agents are then one spec for every seat, or one per seat of the
largest count (a variant with fewer players seats the first ones); ``--rotate`` rounds the games
up to a multiple of every count.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from ludoteca.core.i18n import _
from ludoteca.core.options import parse_option_text
from ludoteca.lab.runner import DEFAULT_DETAIL, RunSpec, Variant

DEFAULT_WORD = "default"


def parse_sweep(text: str) -> tuple[str, list[str]]:
    """``"ties=defender,attacker"`` -> ``("ties", ["defender", "attacker"])``."""
    name, sep, values = text.partition("=")
    name = name.strip()
    parts = [v.strip() for v in values.split(",")] if sep else []
    if not sep or not name or not parts or any(not v for v in parts):
        raise ValueError(_("--sweep takes NAME=VALUE1,VALUE2,... (e.g. ties=defender,attacker), not {text}").format(
            text=repr(text)))
    if len(set(parts)) != len(parts):
        raise ValueError(_("--sweep {text} lists a value twice").format(text=repr(text)))
    return name, parts


def lineup_for(agents: Sequence[str], players: int, *, fill: bool = False) -> tuple[str, ...]:
    """The agent spec of each seat: one spec for every seat, or one per seat.

    With ``fill`` (the arena), fewer specs than seats repeat in turn: ``a,b`` for 4 seats
    is ``a,b,a,b``."""
    specs = [a.strip() for a in agents]
    if not specs or any(not a for a in specs):
        raise ValueError(_("--agents takes agent names separated by commas, e.g. heuristic,random"))
    if len(specs) == 1:
        return tuple(specs * players)
    if len(specs) == players:
        return tuple(specs)
    if fill and len(specs) < players:
        return tuple(specs[s % len(specs)] for s in range(players))
    if fill:
        message = _("--agents lists {agents} agents but the game has {players} players (at most one per seat)")
    else:
        message = _("--agents lists {agents} agents but the game has {players} players (one per seat, or one for "
                    "every seat)")
    raise ValueError(message.format(agents=len(specs), players=players))


def check_agents(lineup: Sequence[str], game: str) -> None:
    """Build each agent once so that an unknown agent or parameter fails before the run."""
    from ludoteca.agents.base import make_agent

    for spec in dict.fromkeys(lineup):
        try:
            make_agent(spec, seed=0, game=game)
        except ImportError as exc:  # an agent family without a variant for this game (yet)
            raise ValueError(_("agent {agent} is not available for {game}: {error}").format(
                agent=repr(spec), game=game, error=exc)) from None


def _load_variant(name: str, base: dict[str, Any], overrides: dict[str, Any],
                  texts: dict[str, str]) -> tuple[Any, dict[str, Any]]:
    """The game of one variant, and the overrides it was built with. A swept value that was
    read as a number, a truth value or null and refused is tried again as its text; the first
    error is the one reported."""
    from ludoteca.registry import load_game

    try:
        return load_game(name, **{**base, **overrides}), overrides
    except ValueError as first:
        error = first
    for opt, text in texts.items():
        if isinstance(overrides[opt], str):
            continue
        trial = {**overrides, opt: text}
        try:
            return load_game(name, **{**base, **trial}), trial
        except ValueError:
            continue
    raise error


def build_spec(
    game: str,
    players: int | None,
    agents: Sequence[str],
    options: dict[str, Any],
    sweeps: Sequence[str] = (),
    seed: int = 0,
    *,
    rotate: bool = False,
    fill: bool = False,
    detail: int = DEFAULT_DETAIL,
) -> RunSpec:
    """Validate everything (game, options of every variant, agents) and describe the run.

    Raises ValueError with a one-line message on any bad input."""
    from ludoteca.registry import game_class

    cls = game_class(game)
    name = cls.name
    base = dict(options)
    if players is not None:
        base["players"] = players
    if "players" in base and not isinstance(base["players"], int):
        raise ValueError(_("players must be a whole number, not {players}").format(players=repr(base["players"])))
    if cls.clock_option is not None and cls.clock_option not in base:
        base[cls.clock_option] = None  # the lab spends no time: games with a clock play without it
    parsed = [parse_sweep(s) for s in sweeps]
    names = [n for n, _values in parsed]
    for opt in names:
        if names.count(opt) > 1:
            raise ValueError(_("--sweep {option} is given twice; list all its values in one --sweep").format(
                option=opt))
        if opt in options or (opt == "players" and players is not None):
            raise ValueError(_("{option} is given both as --option/--players and as --sweep; keep one").format(
                option=opt))
    variants: list[Variant] = []
    combos = itertools.product(*[values for _name, values in parsed]) if parsed else [()]
    for combo in combos:
        overrides: dict[str, Any] = {}
        label = []
        for (opt, _values), text in zip(parsed, combo, strict=True):
            label.append(f"{opt}={text}")
            if text.lower() == DEFAULT_WORD:
                continue
            overrides[opt] = parse_option_text(text)
        key = " ".join(label) or "base"
        texts = {opt: text for (opt, _values), text in zip(parsed, combo, strict=True) if opt in overrides}
        try:
            g, overrides = _load_variant(name, base, overrides, texts)
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}" if parsed else str(exc)) from None
        variants.append(Variant(key, overrides, g.record_options()))
    n_players = sorted({int(v.options["players"]) for v in variants})
    n = n_players[-1]
    specs = [a.strip() for a in agents]
    if len(n_players) > 1 and len(specs) not in (1, n) and not fill:
        raise ValueError(_(
            "with the number of players swept, --agents takes one agent for every seat, or one per seat of "
            "the largest game ({players} players; smaller games seat the first ones), not {agents}").format(
                players=n, agents=len(specs)))
    lineup = lineup_for(agents, n, fill=fill)
    check_agents(lineup, name)
    if detail < 0:
        raise ValueError(_("--detail takes 0 (no detailed games) or more, not {detail}").format(detail=detail))
    return RunSpec(name, n, lineup, int(seed), tuple(variants), rotate, detail)
