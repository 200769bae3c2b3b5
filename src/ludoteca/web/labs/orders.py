"""A lab request from the browser, checked and turned into the lab's own command.

The page sends what a person chose (``POST /api/lab/runs``)::

    {"kind": "run" | "balance", "game": NAME, "players": N | null, "agents": [AGENT, ...],
     "games": G (a run: per variant) | "budget": B (a search), "seed": S, "options": {NAME: VALUE},
     "compare": [{"name": NAME, "values": [VALUE, ...]}],          (a run's sweeps, a search's --vary)
     "target": "seat-advantage" | "length", "length": T}

``players`` is null only when the number of players is among the compared values. A compared value
``{"default": true}`` is the game's default ("default" of ``--sweep``); a designer's file is its
JSON content (written to the run's folder, passed to the lab as a path). The web's bounds are checked
first (web/limits.py: known options, sizes), then the lab's own checks run exactly as the command's
(``lab/plan.py``, ``lab/balance.py``): the page learns every refusal before anything is queued.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ludoteca.core.game import Game
from ludoteca.core.options import OptionError
from ludoteca.i18n import Message
from ludoteca.registry import GAMES, game_class
from ludoteca.web.errors import Code, WebError
from ludoteca.web.labs.settings import LabSettings
from ludoteca.web.limits import BadInput, check_options
from ludoteca.web.lobby.option_words import in_language
from ludoteca.web.master.ai import available_levels

KINDS = ("run", "balance")
AGENTS = ("random", "heuristic", "mcts", "strong")
"""The agents the page offers besides the AI ladder's levels (their words are the page's)."""
TARGETS = ("seat-advantage", "length")
MAX_COMPARED = 3
"""Options compared at once (every combination of their values is a variant)."""
MAX_VALUES = 8
PLAYERS = "players"
DEFAULT = {"default": True}


@dataclass
class Order:
    """A checked request: what to play, in the web's values (not yet the command's texts)."""

    kind: str
    game: str
    players: int | None
    agents: list[str]
    games: int
    """A run: games per variant; a search: its budget (every setting together)."""
    seed: int
    options: dict[str, Any]
    compare: list[tuple[str, list[Any]]] = field(default_factory=list)
    target: str = "seat-advantage"
    length: float | None = None

    @property
    def variants(self) -> int:
        return math.prod(len(values) for _name, values in self.compare) if self.compare else 1

    @property
    def total(self) -> int:
        """The games the run plays at most (its progress bar's end)."""
        return self.games if self.kind == "balance" else self.games * self.variants

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["compare"] = [{"name": n, "values": v} for n, v in self.compare]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Order:
        data = dict(data)
        data["compare"] = [(c["name"], list(c["values"])) for c in data.get("compare", [])]
        return cls(**data)


def _whole(body: dict[str, Any], key: str, low: int, high: int, default: int | None = None) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise WebError(Code.BAD_REQUEST, "{name} is a whole number from {low} to {high}", name=key, low=low, high=high)
    return value


def check_order(body: Any, settings: LabSettings) -> Order:
    """The request checked against the web's bounds (WebError saying what is wrong)."""
    if not isinstance(body, dict):
        raise WebError(Code.BAD_REQUEST, "a lab request is a JSON object")
    kind = body.get("kind", "run")
    if kind not in KINDS:
        raise WebError(Code.BAD_REQUEST, "kind is run or balance")
    name = body.get("game")
    if not isinstance(name, str) or name.lower() not in GAMES:
        raise WebError(Code.BAD_GAME, "unknown game {game}; the games are: {games}", game=str(name)[:32],
                   games=", ".join(GAMES))
    cls = game_class(name.lower())
    compare = _compare(body.get("compare", []), cls, settings)
    players = body.get("players")
    swept = any(n == PLAYERS for n, _v in compare)
    if players is None and not swept:
        raise WebError(Code.BAD_PLAYERS, "players is a whole number")
    if players is not None:
        if swept:
            raise WebError(Code.BAD_PLAYERS, "the number of players is compared: leave players out")
        if isinstance(players, bool) or not isinstance(players, int):
            raise WebError(Code.BAD_PLAYERS, "players is a whole number")
        if not cls.min_players <= players <= cls.max_players:
            raise WebError(Code.BAD_PLAYERS, "{game} is played by {min} to {max} players", game=cls.name,
                       min=cls.min_players, max=cls.max_players)
    agents = body.get("agents", ["random"])
    allowed = (*AGENTS, *available_levels())
    if (not isinstance(agents, list) or not 1 <= len(agents) <= cls.max_players
            or any(not isinstance(a, str) or a not in allowed for a in agents)):
        raise WebError(Code.BAD_REQUEST, "agents is a list of agents, one for every seat or one per seat: {agents}",
                   agents=", ".join(allowed))
    options = body.get("options", {})
    _check_options(cls, options)
    for opt, _values in compare:
        if opt in (options or {}):
            raise WebError(Code.BAD_OPTIONS, "option {name} is both set and compared: keep one", name=opt)
    seed = _whole(body, "seed", 0, 2**31 - 1, 0)
    if kind == "balance":
        if not compare:
            raise WebError(Code.BAD_REQUEST,
                           "a search for the fairest setting compares the values of at least one option")
        games = _whole(body, "budget", 2, settings.max_games, 2000)
    else:
        games = _whole(body, "games", 1, settings.max_games, 1000)
    target, length = body.get("target", "seat-advantage"), body.get("length")
    if kind == "balance":
        if target not in TARGETS:
            raise WebError(Code.BAD_REQUEST, "target is seat-advantage or length")
        if target == "length" and (isinstance(length, bool) or not isinstance(length, int | float)
                                   or not 0 < length <= 10_000):
            raise WebError(Code.BAD_REQUEST, "a length target is a number of turns above 0")
    order = Order(kind, cls.name, players, list(agents), games, seed, dict(options), compare,
                  target if kind == "balance" else "seat-advantage",
                  float(length) if kind == "balance" and target == "length" and length is not None else None)
    if order.total > settings.max_games:
        raise WebError(Code.BAD_REQUEST,
                       "at most {limit} games a run on this server ({games} asked: {variants} variants of {each})",
                       limit=settings.max_games, games=order.total, variants=order.variants, each=order.games)
    return order


def _check_options(cls: type[Game], options: Any) -> None:
    try:
        check_options(cls.name, options, {o.name: o.default for o in cls.OPTIONS},
                      files=frozenset(o.name for o in cls.OPTIONS if o.kind == "file"))
    except BadInput as exc:
        raise WebError(Code(exc.code), exc.template, **exc.params) from None


def _compare(compare: Any, cls: type[Game], settings: LabSettings) -> list[tuple[str, list[Any]]]:
    if not isinstance(compare, list) or len(compare) > MAX_COMPARED:
        raise WebError(Code.BAD_REQUEST, "compare is a list of at most {n} options with their values", n=MAX_COMPARED)
    out: list[tuple[str, list[Any]]] = []
    for entry in compare:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not isinstance(
                entry.get("values"), list):
            raise WebError(Code.BAD_REQUEST, "each compared option has a name and a list of values")
        name, values = entry["name"], entry["values"]
        if any(name == n for n, _v in out):
            raise WebError(Code.BAD_REQUEST, "option {name} is compared twice", name=name[:40])
        if not 2 <= len(values) <= MAX_VALUES:
            raise WebError(Code.BAD_REQUEST, "compare 2 to {n} values of an option", n=MAX_VALUES)
        if any(json.dumps(v, sort_keys=True) == json.dumps(w, sort_keys=True)
               for i, v in enumerate(values) for w in values[:i]):
            raise WebError(Code.BAD_REQUEST, "option {name}: a value is listed twice", name=name[:40])
        for value in values:
            if value == DEFAULT:
                continue
            if name == PLAYERS:
                if isinstance(value, bool) or not isinstance(value, int) or not (
                        cls.min_players <= value <= cls.max_players):
                    raise WebError(Code.BAD_PLAYERS, "{game} is played by {min} to {max} players", game=cls.name,
                               min=cls.min_players, max=cls.max_players)
                continue
            _check_options(cls, {name: value})
        out.append((name, list(values)))
    variants = math.prod(len(v) for _n, v in out) if out else 1
    if variants > settings.max_variants:
        raise WebError(Code.BAD_REQUEST, "at most {limit} variants a run ({n} asked)", limit=settings.max_variants,
                   n=variants)
    return out


# --- the lab's command ------------------------------------------------------------------------------------

def _text(value: Any, name: str, inputs: Path, k: int) -> str:
    """A value as the command reads it (``--option``, ``--sweep``): a designer's file written to ``inputs``."""
    if value == DEFAULT:
        return "default"
    if isinstance(value, dict | list):
        inputs.mkdir(parents=True, exist_ok=True)
        path = inputs / f"{name}-{k}.json"
        path.write_text(json.dumps(value), encoding="utf-8")
        return str(path.resolve())
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.strip().lower() == "default":
        return "./default"
    return str(value)


def command(order: Order, directory: Path, settings: LabSettings, lang: str) -> list[str]:
    """The ``ludoteca lab`` (or ``ludoteca balance``) command line playing ``order`` into ``directory``."""
    inputs = directory / "inputs"
    argv = [sys.executable, "-m", "ludoteca.cli", "lab" if order.kind == "run" else "balance", order.game,
            "--agents", ",".join(order.agents), "--seed", str(order.seed), "--out", str(directory / "out"),
            "--no-progress", "--lang", lang]
    if order.players is not None:
        argv += ["--players", str(order.players)]
    for k, (name, value) in enumerate(sorted(order.options.items())):
        argv += ["--option", f"{name}={_text(value, name, inputs, k)}"]
    for name, values in order.compare:
        texts = ",".join(_text(v, name, inputs, k) for k, v in enumerate(values))
        argv += ["--sweep" if order.kind == "run" else "--vary", f"{name}={texts}"]
    if order.kind == "run":
        argv += ["--games", str(order.games), "--csv", str(directory / "out" / "games.csv")]
    else:
        target = order.target if order.length is None else f"length={order.length:g}"
        argv += ["--budget", str(order.games), "--target", target]
    if settings.ray:
        argv += ["--backend", "ray", "--address", settings.ray]
    else:
        argv += ["--jobs", str(settings.jobs)]
    return argv


def check_with_lab(order: Order, directory: Path, lang: str) -> None:
    """The game's own checks of every variant ``order`` plays (each built as the lab will build it) and
    the agents made for the game, before anything is queued; WebError with the game's reason in ``lang``.
    (The lab's command checks them again when it starts; ``directory`` is the run's folder.)"""
    from ludoteca.agents.base import make_agent
    from ludoteca.registry import load_game

    base = dict(order.options)
    if order.players is not None:
        base[PLAYERS] = order.players
    try:
        for values in variant_values(order) if order.compare else [{}]:
            chosen = {k: v for k, v in values.items() if v != DEFAULT}
            in_language(lang, load_game, order.game, **{**base, **chosen})
        for spec in dict.fromkeys(order.agents):
            in_language(lang, make_agent, spec, seed=0, game=order.game)
    except OptionError as exc:
        raise WebError(Code.BAD_OPTIONS, "the game refuses these options: {reason}",
                       reason=Message("{option}: {error}", {"option": Message(exc.option.shown_label),
                                                            "error": exc.reason})) from None
    except (ValueError, ImportError) as exc:
        raise WebError(Code.BAD_OPTIONS, "the game refuses these options: {reason}", reason=str(exc)) from None
    if order.kind == "balance" and order.games < 2 * order.variants:
        raise WebError(Code.BAD_REQUEST, "a search over {n} settings needs at least {least} games", n=order.variants,
                       least=2 * order.variants)


def variant_values(order: Order) -> list[dict[str, Any]]:
    """Each variant's compared values, in the lab's order (every combination, the first option slowest)."""
    names = [n for n, _v in order.compare]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*[v for _n, v in order.compare])]
