"""``strong``: the MCTS of ``mcts`` run by the game's compiled engine (issue 15).

The search is the compiled MCTS (``core/_mcts.pxi``: UCT, chance sampled, the whole returns vector
backed up, random rollouts of at most ``cap`` actions scored by the game's evaluation when cut short,
the most visited action played), reached through the game's hook ``game.compiled()`` — never by the
game's name: a game plugs in by naming its compiled module (``Game.compiled_part``) whose
``unsupported(game)`` says whether it can play these options and ``search(state, iterations, c, cap,
seed)`` returns the action (docs/compiled.md).

Hidden information: where the seat to move sees everything that matters (``state.worlds(seat)`` is
None) the compiled search reads nothing hidden and plays. Where something is hidden from it, the module
searches it itself when it declares ``SEARCHES_HIDDEN_INFORMATION = True`` (its ``search`` then reads
nothing the seat cannot see: TRI's card choices go to its information-set MCTS in C, one tree per seat
over the seat's worlds, docs/compiled.md); a module that does not declare it leaves those moves to the
Python information-set ``mcts`` (the game's tuned settings: one tree per seat, worlds sampled from what
the seat sees).

Parameters (spec ``strong:key=value:...``): ``iterations``, ``c`` (the UCT constant), ``cap`` (rollout
length in actions, chance included; 0 = evaluate the leaf at once). Unset ones take the game's
``agent_defaults["strong"]`` (tuned per game: docs/strength.md), then :data:`FALLBACKS`. The agent is
exactly reproducible for a given seed.

When the game has no compiled search, or it is not built, or it cannot play the game's options, the
agent plays the game's Python ``mcts`` with the game's tuned settings (``agent_defaults["mcts"]``), after
one warning per game and process saying why. The parameters given to ``strong`` are not passed on: they
are a budget for the compiled search, tens of times too large for the Python one (the ``expert`` level
asks for 20 times the tuned iterations: seconds a move in Python), so the fallback costs what ``mcts``
costs.
"""

from __future__ import annotations

import logging
from typing import Any

from ludoteca.agents import ismcts
from ludoteca.agents.base import Agent, register
from ludoteca.agents.mcts import MCTSAgent
from ludoteca.core.game import Action, Game, State
from ludoteca.core.i18n import _

log = logging.getLogger(__name__)

PARAMETERS = ("iterations", "c", "cap")
"""The agent's parameters, in spec order."""
FALLBACKS: dict[str, Any] = {"iterations": 3000, "c": 0.4, "cap": 60}
"""Parameters neither the spec nor the game's ``agent_defaults["strong"]`` sets."""
LIMITS = {"iterations": 1_000_000, "cap": 100_000, "c": 100.0}
"""The largest value of each parameter (a search's time and memory grow with them)."""

_warned: set[str] = set()
"""The games whose fallback to ``mcts`` was already announced (once per process)."""


def _check(key: str, value: Any) -> Any:
    """``value`` for the parameter ``key``, or a translated ValueError."""
    if value is None:
        return None
    if key not in PARAMETERS:
        raise ValueError(_("agent {agent} has no parameter {name}; its parameters are: {names}").format(
            agent="'strong'", name=repr(key), names=", ".join(PARAMETERS)))
    if key == "c":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= LIMITS["c"]:
            raise ValueError(_("agent {agent}: {name} must be a number from {low} to {high}, not {value}").format(
                agent="'strong'", name=key, low=0, high=LIMITS["c"], value=repr(value)))
        return float(value)
    least = 1 if key == "iterations" else 0
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= LIMITS[key]:
        raise ValueError(_("agent {agent}: {name} must be a whole number from {low} to {high}, not {value}").format(
            agent="'strong'", name=key, low=least, high=LIMITS[key], value=repr(value)))
    return value


class StrongAgent(Agent):
    """MCTS in C through the game's compiled engine; the Python ``mcts`` where there is none."""

    name = "strong"
    wants_game = True

    def __init__(self, seed: int | None = None, iterations: int | None = None, c: float | None = None,
                 cap: int | None = None, game: str | None = None, **params: Any) -> None:
        for key in params:
            _check(key, params[key])  # an unknown parameter: a clear error naming the known ones
        super().__init__(seed)
        self.iterations: int | None = _check("iterations", iterations)
        self.c: float | None = _check("c", c)
        self.cap: int | None = _check("cap", cap)
        self.game_name = game
        self._fallback: MCTSAgent | None = None
        self._game: Game | None = None
        self._settings: dict[str, Any] = {}
        self._module: Any = None
        self.last_stats: tuple[int, int, int] = (0, 0, 0)
        """(simulations, nodes, rollout actions) of the last compiled search."""

    @property
    def spec(self) -> str:
        parts = [self.name]
        for key in PARAMETERS:
            value = getattr(self, key)
            if value is not None:
                parts.append(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}")
        return ":".join(parts)

    def settings(self, game: Game) -> dict[str, Any]:
        """Every parameter as this agent plays ``game``: its own, else the game's
        ``agent_defaults["strong"]``, else :data:`FALLBACKS`."""
        defaults = game.agent_defaults.get("strong", {})
        out: dict[str, Any] = {}
        for key in PARAMETERS:
            value = getattr(self, key)
            if value is None:
                value = _check(key, defaults.get(key))
            out[key] = FALLBACKS[key] if value is None else value
        return out

    @staticmethod
    def unavailable(game: Game) -> str:
        """Why the compiled search cannot play ``game`` here (not built, no search, these options), or
        ``""`` when it can."""
        module = game.compiled()
        if module is None:
            return _("{game} has no compiled engine").format(game=game.title)
        if not hasattr(module, "search"):
            return _("the compiled engine of {game} has no search yet").format(game=game.title)
        return str(module.unsupported(game) or "")

    def engine(self, game: Game) -> dict[str, Any]:
        """What plays ``game``: ``{"engine": "compiled"}`` (hidden choices included when the module
        declares ``SEARCHES_HIDDEN_INFORMATION``), with ``"hidden": "python ismcts"`` when the seat's
        hidden choices go to the Python information-set search, or ``{"engine": "python mcts",
        "reason": …}`` for the fallback (the lab records it in run.json and its report)."""
        reason = self.unavailable(game)
        if reason:
            return {"engine": "python mcts", "reason": reason, "settings": MCTSAgent(game=game.name).settings(game)}
        module = game.compiled()
        out: dict[str, Any] = {"engine": "compiled"}
        if game.has_hidden_information() and not getattr(module, "SEARCHES_HIDDEN_INFORMATION", False):
            out["hidden"] = "python ismcts"
        return out

    def compiled_search(self, game: Game) -> Any:
        """The game's compiled engine module when it can search ``game`` here, else None (after
        one warning per game and process saying why)."""
        reason = self.unavailable(game)
        if not reason:
            return game.compiled()
        if game.name not in _warned:
            _warned.add(game.name)
            log.warning(_("agent 'strong': {reason}; playing the Python mcts instead (much slower)").format(
                reason=reason))
        return None

    def restart(self) -> None:
        if self._fallback is not None:
            self._fallback.restart()

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        game = state.game
        if game is not self._game:  # a game is immutable: look its search and settings up once
            self._game = game
            self._settings = self.settings(game)
            self._module = self.compiled_search(game)
        settings = self._settings
        module = self._module
        if module is None or (self._hidden_by_python and ismcts.worlds(state, state.current_player()) is not None):
            return self._python_mcts().step(state)
        action = module.search(state, settings["iterations"], settings["c"], settings["cap"],
                               self.rng.getrandbits(64))
        return action

    @property
    def _hidden_by_python(self) -> bool:
        """True when positions hiding something from the seat to move are searched by the Python
        information-set ``mcts`` (a hidden-information game whose compiled module does not declare
        ``SEARCHES_HIDDEN_INFORMATION``)."""
        game = self._game
        return bool(game is not None and game.has_hidden_information()
                    and not getattr(self._module, "SEARCHES_HIDDEN_INFORMATION", False))

    def _python_mcts(self) -> MCTSAgent:
        """The game's tuned Python ``mcts`` (made once, seeded from this agent): the fallback, and
        the search of positions hiding something from the seat to move. strong's own budget is not
        passed on: it is meant for the compiled search."""
        if self._fallback is None:
            self._fallback = MCTSAgent(seed=self.rng.getrandbits(64), game=self.game_name)
        return self._fallback


register("strong", StrongAgent)
