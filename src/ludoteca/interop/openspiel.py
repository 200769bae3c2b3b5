"""ludoteca's games as OpenSpiel Python games (``pip install 'ludoteca[openspiel]'``).

Importing this module registers every game with ``pyspiel.register_game``::

    import pyspiel
    import ludoteca.interop.openspiel  # noqa: F401  (registers ludoteca_exactly, _tri, _tohm, _exagon)

    game = pyspiel.load_game("ludoteca_tohm", {"players": 3})
    game = pyspiel.load_game("ludoteca_tri(players=3,size=4,ties=attacker)")
    game = pyspiel.load_game("ludoteca_tri(players=2,teleport=move)")  # a teleport moves a unit

Game parameters are the game's options as each game declares them (``OPTIONS``, RULES.md
names) plus ``players`` (:func:`parameters`); an option whose ludoteca default depends on other
options (TRI ``size``, TOHM ``layout``) or is a list or null (EXAGON ``tiles``) takes a
*sentinel* of its type meaning "the ludoteca default" (:data:`SENTINELS`): ``size=0``,
``layout=""``, ``tiles=""``. OpenSpiel game strings split parameters on commas, so a list-valued
option travels comma-free in the form its game's ``encoding`` module gives (``OPTION_TEXTS``):
``layout="3456;6543;3344"`` (rows of digits, :func:`ludoteca.games.tohm.encoding.layout_text`),
``tiles="0:276768:36:4;..."`` (``id:sides:star:star_points`` per tile,
:func:`ludoteca.games.exagon.encoding.tiles_text`); JSON text or a file path is accepted too and
turned into that form, so ``str(game)`` always loads again. A game's clock option (EXAGON
``clock``) is ``0.0`` = no clock (``None``): research play never reads a wall clock, so the
adapter's default is no clock. Options a game's ``encoding`` module leaves unoffered
(``UNOFFERED_OPTIONS``: EXAGON's ``tournament``, whose length has no bound) are not parameters.

What the adapter declares (:func:`_game_type`):

* SEQUENTIAL, EXPLICIT_STOCHASTIC (every die, deal and tiebreak is a chance node with its
  outcomes), TERMINAL rewards, CONSTANT_SUM with ``utility_sum = 1`` (winners share 1),
  utilities in ``[0, 1]``.
* The information type is the game's own declaration: IMPERFECT_INFORMATION when
  ``game.has_hidden_information()`` (TRI: a battle's rolls and cards are secret until the
  reveal), else PERFECT_INFORMATION (exactly, TOHM, EXAGON with its default tile set). A loaded
  game's ``get_type()`` follows its options; the registered type follows the class's
  ``hidden_information``.
* Observation string: the compact JSON of ``state.observation(player)``. Observation tensor:
  :mod:`ludoteca.interop.encoding` (the game's ``encoding`` module). Information-state string
  (perfect recall): the action history, with the actions ``player`` cannot see (the action's
  event is not ``to`` them; TRI: the opponent's battle roll and card) written ``?`` until the
  reveal — an action with a public event besides its own, after which no seat has anything
  hidden any more (``state.worlds(seat)`` is None for every seat) — where the hidden actions
  are appended as ``=a,b,..``; it never holds a secret. For a
  game with hidden information it starts with ``seat N:``. A state built from a position JSON
  starts it with what the player sees of that position (secrets inside that position are not
  resampled by ``resample_from_infostate``). No information-state tensor.
* ``max_game_length``: player decisions are bounded through ``turn_limit`` and the game's
  ``decisions_per_turn`` (its ``encoding`` module): exactly and TOHM one decision per turn, TRI
  four (act, two cards, void), EXAGON ``2 * tiles + 1`` (placements, gifts, stop) — see
  :func:`max_game_length`.
* Serialization (``pyspiel.serialize_game_and_state`` / ``game.deserialize_state``, pickle)
  stores the action list (and the starting position if the state was built from JSON) and
  replays it: exact by construction.
* ``state.resample_from_infostate(player, sampler)`` (for IS-MCTS) replays the history with
  the still-secret actions that ``player`` cannot see resampled.

No game is named in this module: everything above comes from the game class, its options and
its package's ``encoding`` module.

Beyond OpenSpiel's API, a state has ``ludoteca_state`` (the engine's state: read it, don't
change it) and ``position(seat=None)`` (the observation JSON), and
``game.new_initial_state(position_json)`` starts from a canonical position.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Mapping
from types import BuiltinMethodType, ModuleType
from typing import Any

try:
    import numpy as np
    import pyspiel
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"ludoteca.interop.openspiel needs OpenSpiel and numpy ({exc}); "
        "install them with: pip install 'ludoteca[openspiel]'"
    ) from exc

from ludoteca.core.constants import CHANCE
from ludoteca.core.game import Game, State
from ludoteca.core.options import Option
from ludoteca.interop.encoding import Encoder, make_encoder
from ludoteca.interop.spiel_position import Position, restore_position
from ludoteca.registry import GAMES, game_class, load_game

PREFIX = "ludoteca_"

SENTINELS: dict[type, Any] = {int: 0, float: 0.0, str: ""}
"""The value of an OpenSpiel parameter that means "the ludoteca default", by the type of that
default: ``0``, ``0.0`` or ``""``. OpenSpiel needs a typed default for each parameter; an option
whose ludoteca default depends on other options (TRI ``size``, TOHM ``layout``), is a list or is
null (EXAGON ``tiles``) takes the sentinel of its type (lists and null: ``""``)."""


def _research(cls: type[Game]) -> ModuleType | None:
    """The game's ``encoding`` module (observation vector, option texts, length bound)."""
    return cls.part("encoding")


def _option_texts(cls: type[Game]) -> Mapping[str, tuple[Callable[[Game], str], Callable[[str], Any]]]:
    return getattr(_research(cls), "OPTION_TEXTS", {})


def _typed_default(cls: type[Game], option: Option) -> tuple[Any, bool]:
    """(OpenSpiel default, whether it is a sentinel) of one of the game's options."""
    if option.name == cls.clock_option:
        return 0.0, True  # no clock: research play never reads a wall clock
    default = option.default
    if callable(default):
        default = option.default_for({"players": cls.min_players})
        return SENTINELS.get(type(default), ""), True
    if isinstance(default, bool | int | float | str):
        return default, False
    return "", True  # a list or null


def parameters(cls: type[Game]) -> dict[str, Any]:
    """The OpenSpiel parameters of a game and their typed defaults: ``players`` and every option
    the game declares (``OPTIONS``) but those its ``encoding`` module leaves unoffered."""
    unoffered = set(getattr(_research(cls), "UNOFFERED_OPTIONS", ()))
    params: dict[str, Any] = {"players": cls.min_players}
    for option in cls.OPTIONS:
        if option.name not in unoffered:
            params[option.name] = _typed_default(cls, option)[0]
    return params


def _sentinels(cls: type[Game]) -> dict[str, Any]:
    out = {}
    for option in cls.OPTIONS:
        value, sentinel = _typed_default(cls, option)
        if sentinel and option.name != cls.clock_option:
            out[option.name] = value
    return out


def options_from_params(name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """ludoteca options (``load_game`` kwargs) from OpenSpiel game parameters."""
    cls = game_class(name)
    spec = parameters(cls)
    params = dict(params or {})
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ValueError(f"{PREFIX}{name} has no parameter {unknown[0]!r}; its parameters are: "
                         f"{', '.join(sorted(spec))}")
    unset = _sentinels(cls)
    texts = _option_texts(cls)
    options: dict[str, Any] = {}
    for key, default in spec.items():
        value = params.get(key, default)
        if key in unset and value == unset[key]:
            continue
        if key == cls.clock_option:
            value = None if not value else float(value)
        elif key in texts and isinstance(value, str):
            value = texts[key][1](value)
        options[key] = value
    return options


def max_game_length(game: Game) -> int:
    """An upper bound on the number of player decisions in a game (not counting chance).

    Every game ends when ``turn`` reaches ``turn_limit``; a turn holds at most the number of
    decisions the game's ``encoding`` module gives (``decisions_per_turn``; 1 when it gives none):
    exactly and TOHM one, TRI four (act, attacker card, defender card, void), EXAGON
    ``2 * tiles + 1`` (each placement, each gift, and ``stop``).
    """
    limit = int(game.options.get("turn_limit", 1 << 20))
    per_turn = getattr(_research(type(game)), "decisions_per_turn", None)
    return (per_turn(game) if per_turn is not None else 1) * (limit + 1)


# --- observers ----------------------------------------------------------------------------

class LudotecaObserver:
    """OpenSpiel's PyObserver protocol: ``tensor``, ``dict``, ``set_from``, ``string_from``."""

    def __init__(self, game: LudotecaGame, iig_obs_type: Any = None, params: Any = None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, not {params}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.public_only = bool(iig_obs_type is not None
                                and iig_obs_type.private_info == pyspiel.PrivateInfoType.NONE)
        self.encoder = game.encoder
        if self.perfect_recall:
            self.tensor = None
            self.dict: dict[str, np.ndarray] = {}
        else:
            self.tensor = np.zeros(self.encoder.size, dtype=np.float32)
            self.dict = {"observation": self.tensor}

    def set_from(self, state: LudotecaState, player: int) -> None:
        if self.tensor is not None:
            seat = None if self.public_only else player
            self.encoder.encode(state._pos.state.observation(seat), player, out=self.tensor)

    def string_from(self, state: LudotecaState, player: int) -> str:
        seat = None if self.public_only else player
        if self.perfect_recall:
            return state._pos.info_state(seat)
        return json.dumps(state._pos.state.observation(seat), separators=(",", ":"))


# --- game and state -----------------------------------------------------------------------

def _hook(method: Callable[[], Any]) -> Callable[[], Any]:
    """``method`` as an override of one of OpenSpiel's C++ ``State`` hooks (C++ asks for it by name:
    ``current_player``, ``is_terminal``, ``chance_outcomes``). pybind11 takes an attribute that is
    a C function (``builtin_function_or_method``: a compiled class's method built without Cython's
    ``binding``) for its own C++ function, not an override, and would call the pure virtual: such
    a method is wrapped in a partial. Anything else (a Cython function's bound method, a Python
    method) is an override as it is, and the cheapest call."""
    return functools.partial(method) if isinstance(method, BuiltinMethodType) else method


class LudotecaState(pyspiel.State):
    """An OpenSpiel state wrapping a ludoteca state (``ludoteca_state``).

    Called from Python, the playing methods (``current_player``, ``is_chance_node``,
    ``legal_actions``, ``chance_outcomes``, ``apply_action``, ``returns``, ``history``,
    ``move_number``) answer here, without a round trip through OpenSpiel's C++ ``State`` (which
    calls back into Python for each of them); OpenSpiel's C++ algorithms call the ``_``-hooks
    below. Either way the history is the position's (``Position``), so both agree.

    The position is the one attribute in the instance's ``__dict__`` (``_pos``), which OpenSpiel's
    C++ ``Clone`` and serialisation copy; setting it also fills the slots the hot methods read
    (``_p``, ``_play``: the engine answering, ``_fast``: compiled), since an attribute of a pybind11
    object's ``__dict__`` costs about twice a slot to read."""

    __slots__ = ("__dict__", "_acts", "_fast", "_p", "_play", "chance_outcomes", "current_player", "is_chance_node",
                 "is_terminal")

    def __init__(self, game: LudotecaGame, pos: Position | None = None) -> None:
        super().__init__(game)
        self._pos = pos if pos is not None else Position(game.ludoteca_game.new_initial_state())

    @property
    def _pos(self) -> Position:
        return self._p  # type: ignore[no-any-return]

    @_pos.setter
    def _pos(self, pos: Position) -> None:
        self.__dict__["_pos"] = pos
        self._p = pos
        self._play = pos.play
        self._fast = pos.fast is not None
        self._acts = pos.actions
        play = pos.play
        # the engine's own methods answer, without a Python frame of ours (see _hook)
        self.is_chance_node = play.is_chance_node
        self.is_terminal = _hook(play.is_terminal)
        self.current_player = _hook(play.current_player)
        self.chance_outcomes = _hook(play.chance_outcomes)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its game and position (which pickle as their parameters and history)."""
        return (_unpickle_state, (self.get_game(), self._p))

    # the engine, for readers
    @property
    def ludoteca_state(self) -> State:
        return self._p.state  # type: ignore[no-any-return]

    def position(self, seat: int | None = None) -> dict[str, Any]:
        """The canonical position JSON as ``seat`` may see it (``None``: a spectator)."""
        return self._p.state.observation(seat)  # type: ignore[no-any-return]

    # OpenSpiel's Python-game hooks (besides current_player, is_terminal, chance_outcomes: slots)
    def _legal_actions(self, player: int) -> list[int]:
        return self._play.legal_actions()  # type: ignore[no-any-return]

    def _apply_action(self, action: int) -> None:
        self.apply_action(action)

    # the same from Python, without the round trip through C++ (same answers as pyspiel.State's)
    def legal_actions(self, player: int | None = None) -> list[int]:
        play = self._play
        if player is not None and player != play.current_player():
            return []
        return play.legal_actions()  # type: ignore[no-any-return]

    def is_player_node(self) -> bool:
        return self._play.current_player() >= 0  # type: ignore[no-any-return]

    def apply_action(self, action: int) -> None:
        if self._fast and self._play.play(action):  # compiled: a legal int is played at once
            self._acts.append(action)
        else:  # the Python engine, an int-like (numpy's), or an illegal action (IllegalActionError)
            self._p.apply(int(action))

    def history(self) -> list[int]:
        return self._acts[:]  # type: ignore[no-any-return]

    def history_str(self) -> str:
        return ", ".join(map(str, self._acts))

    def move_number(self) -> int:
        return len(self._acts)

    def is_initial_state(self) -> bool:
        return not self._acts

    def _action_to_string(self, player: int, action: int) -> str:
        state = self._pos.state
        if player == state.current_player():
            try:
                return state.action_to_string(int(action))
            except (ValueError, KeyError, IndexError, TypeError):
                pass
        who = "chance" if player == CHANCE else f"p{player}"
        return f"{who}:{action}"

    def returns(self) -> list[float]:
        return [float(x) for x in self._play.returns()]

    def __str__(self) -> str:
        return self._pos.state.render()

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> LudotecaState:
        """A state ``player_id`` cannot tell from this one: the actions still secret to them
        (TRI: an opponent's roll and card in the battle in progress) drawn afresh — chance
        outcomes by their probabilities, an opponent's card uniformly among its legal ones."""
        pos = self._pos
        if not any(v is not None and player_id not in v for _, v, _ in pos._since_reveal()):
            return self.clone()  # nothing is secret to player_id
        game = self.get_game()
        entries = pos.entries()
        last_reveal = max((i for i, e in enumerate(entries) if e[2] is not None), default=-1)
        if probability_sampler is not None:
            def draw() -> float:
                return float(probability_sampler())
        else:
            draw = random.random
        new = LudotecaState(game, Position(
            pos.state.game.state_from_json(pos.origin) if pos.origin is not None
            else pos.state.game.new_initial_state(), pos.origin))
        for i, (action, viewer, _) in enumerate(entries):
            if i > last_reveal and viewer is not None and player_id not in viewer:
                if new.is_chance_node():
                    x, acc = draw(), 0.0
                    outcomes = new.chance_outcomes()
                    action = outcomes[-1][0]
                    for a, p in outcomes:
                        acc += p
                        if x < acc:
                            action = a
                            break
                else:
                    legal = new.legal_actions()
                    action = legal[min(int(draw() * len(legal)), len(legal) - 1)]
            new.apply_action(action)
        return new


class LudotecaGame(pyspiel.Game):
    """An OpenSpiel game wrapping a ludoteca game (``ludoteca_game``)."""

    GAME_NAME = ""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        name = self.GAME_NAME
        self._params = dict(params or {})
        self.ludoteca_game: Game = load_game(name, **options_from_params(name, params))
        g = self.ludoteca_game
        info = pyspiel.GameInfo(
            num_distinct_actions=g.num_distinct_actions(),
            max_chance_outcomes=g.max_chance_outcomes(),
            num_players=g.num_players,
            min_utility=0.0,
            max_utility=1.0,
            utility_sum=1.0,
            max_game_length=max_game_length(g),
        )
        cls = type(g)
        full = parameters(cls)
        full.update(params or {})
        # list-valued options travel in a comma-free form, so that str(game) loads again
        for key, (to_text, _) in _option_texts(cls).items():
            if full.get(key):
                full[key] = to_text(g)
        super().__init__(_game_type(cls, g.has_hidden_information()), info, full)
        self._encoder: Encoder | None = None
        self._start: Position | None = None

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = make_encoder(self.ludoteca_game)
        return self._encoder

    def new_initial_state(self, position: Any = None) -> LudotecaState:
        """The start of a game, or (given its canonical JSON, a dict or text) any position."""
        if position is None:  # a copy of the first position (OpenSpiel's clone starts with one too)
            if self._start is None:
                self._start = Position(self.ludoteca_game.new_initial_state())
            return LudotecaState(self, self._start.copy())
        if isinstance(position, str):
            position = json.loads(position)
        data = dict(position)
        return LudotecaState(self, Position(self.ludoteca_game.state_from_json(data), data))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> LudotecaObserver:
        return LudotecaObserver(self, iig_obs_type, params)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its name and parameters, loaded again (spawn-based multiprocessing, Ray)."""
        return (_load_pickled, (self.GAME_NAME, self._params))


_restore_position = restore_position
"""The name pickles of positions written by earlier versions load."""


def _unpickle_state(game: LudotecaGame, pos: Position) -> LudotecaState:
    return LudotecaState(game, pos)


def _load_pickled(name: str, params: dict[str, Any]) -> LudotecaGame:
    return load(name, **params)


def _game_type(cls: type[Game], hidden: bool) -> pyspiel.GameType:
    """The game's OpenSpiel type; ``hidden``: IMPERFECT_INFORMATION (the game may hide part of a
    position from a seat), else PERFECT_INFORMATION."""
    info = pyspiel.GameType.Information
    return pyspiel.GameType(
        short_name=PREFIX + cls.name,
        long_name=f"ludoteca {cls.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=info.IMPERFECT_INFORMATION if hidden else info.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=cls.max_players,
        min_num_players=cls.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters(cls),
    )


GAME_TYPES: dict[str, pyspiel.GameType] = {}
"""The registered type of each game (information: the class's ``hidden_information``; a loaded
game's own ``get_type()`` follows ``has_hidden_information()`` for its options)."""
GAME_CLASSES: dict[str, type[LudotecaGame]] = {}


def register() -> list[str]:
    """Register every game with OpenSpiel (idempotent); return the registered short names."""
    registered = set(pyspiel.registered_names())
    names = []
    for name in GAMES:
        short = PREFIX + name
        if name not in GAME_TYPES:
            cls = game_class(name)
            GAME_TYPES[name] = _game_type(cls, cls.hidden_information)
            title = f"Ludoteca{cls.__name__}"
            GAME_CLASSES[name] = globals()[title] = type(title, (LudotecaGame,),
                                                         {"GAME_NAME": name, "__module__": __name__})
        if short not in registered:
            pyspiel.register_game(GAME_TYPES[name], GAME_CLASSES[name])
        names.append(short)
    return names


def load(name: str, **params: Any) -> LudotecaGame:
    """``load("tohm", players=3)`` = ``pyspiel.load_game("ludoteca_tohm", {"players": 3})``."""
    if name.startswith(PREFIX):
        name = name[len(PREFIX):]
    register()
    return pyspiel.load_game(PREFIX + name, params)


REGISTERED: list[str] = register()
