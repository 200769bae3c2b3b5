"""ludoteca's games as PettingZoo AEC environments (``pip install 'ludoteca[pettingzoo]'``).

One module per game, in PettingZoo's own style::

    from ludoteca.interop.pettingzoo import ludoteca_tohm_v0

    env = ludoteca_tohm_v0.env(players=3, render_mode="ansi")   # wrapped, like pettingzoo.classic
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else env.action_space(agent).sample(obs["action_mask"])
        env.step(action)

``ludoteca_<game>_v0.raw_env(**kwargs)`` is the unwrapped environment; ``env()`` adds
PettingZoo's ``TerminateIllegalWrapper`` (an illegal action ends the game, reward -1 to its
author), ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``. The keyword arguments are
the game's options (RULES.md names: ``players``, ``size``, ``turn_limit``...), plus
``render_mode`` and ``position_info``. A game with a clock (EXAGON's hourglass) defaults to
no clock (``clock=None``).

* Agents ``player_0 … player_{n-1}`` are the seats. Only decision nodes reach the agents:
  chance (dice, deals, tiebreaks) is resolved inside the environment with a
  ``random.Random`` seeded by ``reset(seed=...)``, so a seed fixes the whole game given the
  agents' actions (``pettingzoo.test.seed_test`` passes).
* Actions: ``Discrete(game.num_distinct_actions())``, the engine's integer actions.
* Observations: ``{"observation": float32 vector, "action_mask": int8 vector}``. The vector is
  :mod:`ludoteca.interop.encoding`'s (the game's own ``encoding`` module), computed from
  ``state.observation(seat)`` (TRI's secret battle roll and card never leak). The mask is all
  zeros except for the agent to move.
* ``infos[agent]["position"]``: the canonical JSON position as that agent may see it (the
  same object for every agent when the game has no hidden information,
  ``game.has_hidden_information()``; don't modify it);
  ``position_info=False`` leaves it out, for speed. The agent to move also finds its legal
  actions as a sorted list in ``infos[agent]["legal_actions"]``: with EXAGON's ~1.5 million
  actions, picking from that list is far cheaper than scanning the mask (if you scan it, use
  ``np.flatnonzero(mask.view(bool))``, ten times faster than on the int8 array).
* Rewards: 0 until the end, then the engine's returns (winners share 1). The ``turn_limit``
  end is a rule of the game (the leaders share the win): it is a termination, not a
  truncation.
* A game without hidden information plays on its compiled engine when it is built and plays the
  game's options (``ludoteca.core.compiled.compiled_copy``: the same actions, chance outcomes and
  returns, so the same games for a seed); ``LUDOTECA_ENGINE=python`` asks for the Python engine.
* ``env.game_state`` is the engine's state (read it, don't change it); ``env.state()`` the
  global state for centralized critics: the full position (TRI: with the secrets) encoded.
* Rendering: ``"ansi"`` returns ``state.render()``, ``"human"`` prints it, ``"rgb_array"``
  draws the board for the games whose package has a ``drawing`` module (TOHM and TRI:
  ``ludoteca.games.<game>.drawing.rgb_array(position, palette)``).
"""

from __future__ import annotations

import random
import sys
import types
from typing import Any

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from gymnasium.utils import EzPickle
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"ludoteca.interop.pettingzoo needs PettingZoo, Gymnasium and numpy ({exc}); "
        "install them with: pip install 'ludoteca[pettingzoo]'"
    ) from exc

from ludoteca.core.chance import sample_outcome
from ludoteca.core.compiled import CompiledView, compiled_copy
from ludoteca.core.game import Game, State
from ludoteca.interop.encoding import make_encoder
from ludoteca.registry import GAMES, game_class, load_game

# seat colours for rgb_array (RGB)
PALETTE = np.array(
    [(220, 50, 47), (38, 139, 210), (133, 153, 0), (211, 54, 130), (181, 137, 0), (42, 161, 152)],
    dtype=np.uint8,
)


class LudotecaAECEnv(AECEnv, EzPickle):
    """An AEC environment for one ludoteca game (subclassed per game: ``ludoteca_<game>_v0.raw_env``)."""

    GAME = ""
    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "name": "ludoteca_v0",
                                "is_parallelizable": False, "render_fps": 2}

    def __init__(self, render_mode: str | None = None, position_info: bool = True, **options: Any) -> None:
        super().__init__()
        EzPickle.__init__(self, render_mode=render_mode, position_info=position_info, **options)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        clock = game_class(self.GAME).clock_option
        if clock is not None:  # research play never reads a wall clock
            options.setdefault(clock, None)
        self.game: Game = load_game(self.GAME, **options)
        self.render_mode = render_mode
        self.position_info = position_info
        self.private = self.game.has_hidden_information()
        """True when ``observation(seat)`` may differ between seats (computed per seat)."""
        self.encoder = make_encoder(self.game)
        n = self.game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_seat = {a: i for i, a in enumerate(self.possible_agents)}
        num_actions = self.game.num_distinct_actions()
        self._action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self._observation_spaces = {
            a: spaces.Dict({
                "observation": spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(num_actions,), dtype=np.int8),
            })
            for a in self.possible_agents
        }
        self.state_space = spaces.Box(low=self.encoder.low, high=self.encoder.high, dtype=np.float32)
        self._num_actions = num_actions
        self._rng = random.Random()
        self._positions: dict[int, dict[str, Any]] = {}
        self._fast: CompiledView[Any, Any] | None = None
        self._state: State | None = None
        self._play: Any = None
        self._start()
        self.agents: list[str] = []

    # --- the engine ----------------------------------------------------------------------
    def _start(self) -> None:
        """A new game, on the compiled engine when it can play it (no hidden information)."""
        state = self.game.new_initial_state()
        self._fast = None if self.private else compiled_copy(state)
        self._state = state
        self._play = state if self._fast is None else self._fast._c  # same method names and answers

    @property
    def game_state(self) -> State:
        """The engine's state (a Python state, rebuilt from the compiled one after it moved)."""
        if self._state is None:
            assert self._fast is not None
            self._state = self._fast.to_state()
        return self._state

    def _advance(self, action: int) -> None:
        if self._fast is not None:
            self._fast.apply_action(action)
            self._state = None
        else:
            self.game_state.apply_action(action)

    # --- spaces --------------------------------------------------------------------------
    def state(self) -> np.ndarray:
        """The global state for centralized training: the full position (TRI: with the
        secrets) encoded as seat 0 would see it, in ``state_space``."""
        return self.encoder.encode(self.game_state.to_json(), 0)

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    # --- the game ------------------------------------------------------------------------
    def _resolve_chance(self) -> None:
        play, rng = self._play, self._rng
        while play.is_chance_node():
            self._advance(sample_outcome(play.chance_outcomes(), rng))

    def _after_move(self) -> None:
        state = self._play
        if state.is_terminal():
            returns = state.returns()
            for agent in self.agents:
                self.rewards[agent] = float(returns[self.agent_seat[agent]])
                self.terminations[agent] = True
        else:
            self.agent_selection = self.possible_agents[state.current_player()]
        self._update_infos()

    def _position(self, seat: int) -> dict[str, Any]:
        """``state.observation(seat)``, computed once per position (shared when public)."""
        key = seat if self.private else -1
        position = self._positions.get(key)
        if position is None:
            position = self._positions[key] = self.game_state.observation(seat)
        return position

    def _update_infos(self) -> None:
        state = self._play
        self._positions.clear()
        mover = None if state.is_terminal() else state.current_player()
        for agent in self.agents:
            seat = self.agent_seat[agent]
            info: dict[str, Any] = {}
            if self.position_info:
                info["position"] = self._position(seat)
            if seat == mover:
                info["legal_actions"] = state.legal_actions()
            self.infos[agent] = info

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
        self._start()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._resolve_chance()
        self._after_move()
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._advance(int(action))
        self._resolve_chance()
        self._after_move()
        if self._play.is_terminal():
            # every agent then steps once with None; the last mover goes first
            self.agent_selection = agent
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_seat[agent]
        state = self._play
        obs = self.encoder.encode(self._position(seat), seat)
        mask = np.zeros(self._num_actions, dtype=np.int8)
        if not state.is_terminal() and state.current_player() == seat:
            mask[state.legal_actions()] = 1
        return {"observation": obs, "action_mask": mask}

    # --- rendering -----------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (ansi, human or rgb_array)")
            return None
        if self.render_mode == "rgb_array":
            return self.render_rgb()
        text = self.game_state.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def render_rgb(self) -> np.ndarray:
        """The board drawn by the game's ``drawing`` module (``rgb_array``)."""
        drawing = self.game.part("drawing")
        if drawing is None:
            raise NotImplementedError(f"no rgb_array rendering for {self.GAME}")
        return np.asarray(drawing.rgb_array(self.game_state.to_json(), PALETTE), dtype=np.uint8)

    def close(self) -> None:
        pass


def _make_module(name: str) -> types.ModuleType:
    env_name = f"ludoteca_{name}_v0"
    drawing = game_class(name).part("drawing")
    modes = ["ansi", "human"] + (["rgb_array"] if hasattr(drawing, "rgb_array") else [])
    raw = type("raw_env", (LudotecaAECEnv,), {
        "GAME": name,
        "metadata": {"render_modes": modes, "name": env_name, "is_parallelizable": False, "render_fps": 2},
        "__module__": f"{__name__}.{env_name}",
        "__doc__": f"ludoteca {name} as a PettingZoo AEC environment (unwrapped).",
    })

    def env(**kwargs: Any) -> AECEnv:
        """The environment with PettingZoo's standard wrappers (illegal action ends the game)."""
        e = raw(**kwargs)
        e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
        e = wrappers.AssertOutOfBoundsWrapper(e)
        return wrappers.OrderEnforcingWrapper(e)

    module = types.ModuleType(f"{__name__}.{env_name}", f"ludoteca {name} for PettingZoo.")
    module.raw_env = raw  # type: ignore[attr-defined]
    module.env = env  # type: ignore[attr-defined]
    env.__module__ = module.__name__
    sys.modules[module.__name__] = module
    return module


ENVIRONMENTS: dict[str, types.ModuleType] = {name: _make_module(name) for name in GAMES}
"""``ludoteca_<game>_v0`` by game name; each is also this module's attribute of that name."""
globals().update({module.__name__.rsplit(".", 1)[1]: module for module in ENVIRONMENTS.values()})


def env(game: str, **kwargs: Any) -> AECEnv:
    """``env("tohm", players=3)``: the wrapped environment of a game by name."""
    return ENVIRONMENTS[game].env(**kwargs)


def raw_env(game: str, **kwargs: Any) -> LudotecaAECEnv:
    """The unwrapped environment of a game by name."""
    return ENVIRONMENTS[game].raw_env(**kwargs)
