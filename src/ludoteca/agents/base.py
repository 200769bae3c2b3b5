"""The agent protocol and the registry of agents by name.

An agent picks an action for the player to move: ``agent.step(state) -> action``. Agents
are seeded and reproducible: the same seed and the same sequence of positions give the
same actions. They are selected by a spec string ``name[:key=value[:key=value...]]``,
e.g. ``"random"``, ``"mcts:iterations=2000"``, ``"mcts:seconds=1"``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from ludoteca.core.game import Action, State
from ludoteca.core.i18n import _
from ludoteca.core.options import parse_option_text


class Agent(ABC):
    """Chooses actions for whoever is to move in the positions it is given."""

    name: str = "agent"
    plays_compiled: ClassVar[bool] = False
    """True when :meth:`step` reads only ``legal_actions()`` and ``current_player()``, which a compiled
    engine's position (``core.compiled.CompiledView``) answers alike: the lab then plays its games there."""

    def __init__(self, seed: int | None = None, **params: Any) -> None:
        if params:
            raise ValueError(_("agent {agent} has no parameter {name}").format(
                agent=repr(self.name), name=repr(sorted(params)[0])))
        self.seed = seed
        self.rng = random.Random(seed)

    @abstractmethod
    def step(self, state: State) -> Action:
        """A legal action for ``state.current_player()`` (never called at chance nodes)."""

    def restart(self) -> None:
        """Forget anything learnt during a game (called between games)."""

    @property
    def spec(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<agent {self.spec}>"


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"
    plays_compiled = True

    def step(self, state: State) -> Action:
        legal = state.legal_actions()
        return legal[self.rng.randrange(len(legal))]


AgentFactory = Callable[..., Agent]
_REGISTRY: dict[str, AgentFactory] = {"random": RandomAgent}


def register(name: str, factory: AgentFactory) -> None:
    """Make an agent available to :func:`make_agent` under ``name``."""
    _REGISTRY[name] = factory


def agent_names() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:iterations=2000:seconds=1"`` -> ``("mcts", {"iterations": 2000, "seconds": 1})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(_("an agent spec is a name such as 'random', 'heuristic' or 'mcts:iterations=500'"))
    name, *parts = spec.strip().split(":")
    params: dict[str, Any] = {}
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ValueError(_("agent parameter {part} in {spec} is not KEY=VALUE").format(
                part=repr(part), spec=repr(spec)))
        params[key.strip()] = parse_option_text(value)
    return name.strip().lower(), params


def make_agent(spec: str, seed: int | None = None, game: str | None = None) -> Agent:
    """An agent from its spec string; ValueError naming an unknown agent or parameter.

    ``game`` (a game name) lets families such as ``heuristic`` pick the right variant.
    """
    _load_builtin()
    from ludoteca.agents.levels import resolve

    name, params = parse_spec(resolve(spec, game))  # a ladder level ("medium") plays its agent
    turn = params.pop("turn", None)  # a level's pace: at most this many moves a turn (agents/pace.py)
    if name not in _REGISTRY:
        raise ValueError(_("unknown agent {name}; the agents are: {names}").format(
            name=repr(name), names=", ".join(sorted(_REGISTRY))))
    factory = _REGISTRY[name]
    if game is not None and getattr(factory, "wants_game", False):
        params["game"] = game
    try:
        agent = factory(seed=seed, **params)
    except TypeError as exc:
        raise ValueError(_("agent {name}: {error}").format(name=repr(name), error=exc)) from None
    if turn is None:
        return agent
    from ludoteca.agents.pace import paced

    return paced(agent, turn, game)


_loaded = False


def _load_builtin() -> None:
    """Import the agent modules that register themselves (heuristics, mcts)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for module in ("ludoteca.agents.heuristics", "ludoteca.agents.mcts", "ludoteca.agents.soft",
                   "ludoteca.agents.strong", "ludoteca.agents.perfect"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
