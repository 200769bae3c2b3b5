"""ludoteca's games as OpenSpiel Python games (``pip install 'ludoteca[openspiel]'``).

Importing this module registers every game with ``pyspiel.register_game``::

    import pyspiel
    import ludoteca.interop.openspiel  # noqa: F401  (registers ludoteca_exactly, _tri, _tohm, _exagon)

    game = pyspiel.load_game("ludoteca_tohm", {"players": 3})
    game = pyspiel.load_game("ludoteca_tri(players=3,size=4,ties=attacker)")
    game = pyspiel.load_game("ludoteca_tri(players=2,teleport=move)")  # a teleport moves a unit

Game parameters are the game's options (RULES.md names) plus ``players``; an option whose
ludoteca default depends on other options (TRI ``size``, TOHM ``layout``) or is a list (EXAGON
``tiles``) takes a *sentinel* meaning "the ludoteca default": ``size=0``, ``layout=""``,
``tiles=""``. OpenSpiel game strings split parameters on commas, so a layout or a tile set
travels comma-free: ``layout="3456;6543;3344"`` (rows of digits), ``tiles="0:276768:36:4;..."``
(``id:sides:star:star_points`` per tile, see :func:`layout_text`, :func:`tiles_text`); JSON
text or a file path is accepted too and turned into that form, so ``str(game)`` always loads
again. EXAGON ``clock`` is ``0.0`` = no clock (``None``): research play never reads a wall
clock, so the adapter's default is ``clock=None``. EXAGON's ``tournament`` mode is not exposed
(its length has no bound).

What the adapter declares (:data:`GAME_TYPES`):

* SEQUENTIAL, EXPLICIT_STOCHASTIC (every die, deal and tiebreak is a chance node with its
  outcomes), TERMINAL rewards, CONSTANT_SUM with ``utility_sum = 1`` (winners share 1),
  utilities in ``[0, 1]``.
* TRI is IMPERFECT_INFORMATION: a battle's rolls and cards are secret until the reveal.
  exactly, TOHM and EXAGON are PERFECT_INFORMATION. EXAGON deals face down but hands are face
  up once dealt; with a designer's tile set leaving two or more tiles over, those tiles are set
  aside unseen, but they are exactly the tiles of the public ``tiles`` list that are in no hand
  and not on the table, and they never come into play: every player knows the same and every
  history is distinguishable, so the game stays PERFECT_INFORMATION (observations omit
  ``aside`` as the engine's ``observation(seat)`` does).
* Observation string: the compact JSON of ``state.observation(player)``. Observation tensor:
  :mod:`ludoteca.interop.encoding`. Information-state string (perfect recall): the action
  history, with the actions ``player`` cannot see written ``?`` (TRI: the opponent's battle roll
  and card) until the reveal, when the hidden actions are appended as ``=a,b,..``; it never
  holds a secret. A state built from a position JSON starts it with what the player sees of
  that position (secrets inside that position are not resampled by
  ``resample_from_infostate``). No information-state tensor.
* ``max_game_length``: player decisions are bounded through ``turn_limit``: exactly and
  TOHM one decision per turn, TRI four (act, two cards, void), EXAGON ``2 * tiles + 1``
  (placements, gifts, stop) — see :func:`max_game_length`.
* Serialization (``pyspiel.serialize_game_and_state`` / ``game.deserialize_state``, pickle)
  stores the action list (and the starting position if the state was built from JSON) and
  replays it: exact by construction.
* ``state.resample_from_infostate(player, sampler)`` (for IS-MCTS) replays the history with
  the still-secret actions that ``player`` cannot see resampled.

Beyond OpenSpiel's API, a state has ``ludoteca_state`` (the engine's state: read it, don't
change it) and ``position(seat=None)`` (the observation JSON), and
``game.new_initial_state(position_json)`` starts from a canonical position.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
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
from ludoteca.interop.encoding import Encoder, make_encoder
from ludoteca.registry import GAMES, game_class, load_game

PREFIX = "ludoteca_"

# Game parameters: OpenSpiel needs a typed default for each one.
PARAMETERS: dict[str, dict[str, Any]] = {
    "exactly": {"players": 2, "start_coin": "round", "turn_limit": 1000},
    "tri": {"players": 2, "size": 0, "ties": "defender", "turn_limit": 1000, "teleport": "claim"},
    "tohm": {"players": 2, "layout": "", "turn_limit": 1000},
    "exagon": {"players": 2, "clock": 0.0, "tiles": "", "turn_limit": 1000},
}
# Parameter values that mean "the ludoteca default" (not passed on to load_game).
_UNSET: dict[str, dict[str, Any]] = {"tri": {"size": 0}, "tohm": {"layout": ""}, "exagon": {"tiles": ""}}

_INFORMATION = {"tri": pyspiel.GameType.Information.IMPERFECT_INFORMATION}

_TOKEN_HIDDEN = "?"


_LAYOUT_TEXT = re.compile(r"^[3-6]+(;[3-6]+)*$")
_TILES_TEXT = re.compile(r"^-?\d+:[1-9JX]{6}:\d+:\d+(;-?\d+:[1-9JX]{6}:\d+:\d+)*$")


def layout_text(grid: list[list[int]]) -> str:
    """A TOHM layout as a game-parameter value: rows of digits joined by ``;`` ("345;563;436").

    OpenSpiel's game strings split parameters on commas, so JSON text cannot travel in one."""
    return ";".join("".join(str(x) for x in row) for row in grid)


def tiles_text(tiles: list[Mapping[str, Any]]) -> str:
    """An EXAGON tile list as a game-parameter value: ``id:sides:star:star_points`` joined by
    ``;`` ("0:276768:36:4;1:...")."""
    return ";".join(f"{t['id']}:{''.join(str(x) for x in t['sides'])}:{t['star']}:{t['star_points']}"
                    for t in tiles)


def _parse_layout(text: str) -> Any:
    if _LAYOUT_TEXT.match(text):
        return [[int(ch) for ch in row] for row in text.split(";")]
    return text  # JSON text or a path: the engine reads it


def _parse_tiles(text: str) -> Any:
    if _TILES_TEXT.match(text):
        tiles = []
        for item in text.split(";"):
            tid, sides, star, points = item.split(":")
            tiles.append({"id": int(tid), "sides": [ch if ch in "JX" else int(ch) for ch in sides],
                          "star": int(star), "star_points": int(points)})
        return tiles
    return text  # a path or JSON text: the engine reads it


def options_from_params(name: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """ludoteca options (``load_game`` kwargs) from OpenSpiel game parameters."""
    spec = PARAMETERS[name]
    params = dict(params or {})
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise ValueError(f"{PREFIX}{name} has no parameter {unknown[0]!r}; its parameters are: "
                         f"{', '.join(sorted(spec))}")
    options: dict[str, Any] = {}
    for key, default in spec.items():
        value = params.get(key, default)
        if key in _UNSET.get(name, {}) and value == _UNSET[name][key]:
            continue
        if name == "exagon" and key == "clock":
            value = None if not value else float(value)
        elif name == "tohm" and key == "layout" and isinstance(value, str):
            value = _parse_layout(value)
        elif name == "exagon" and key == "tiles" and isinstance(value, str):
            value = _parse_tiles(value)
        options[key] = value
    return options


def max_game_length(game: Game) -> int:
    """An upper bound on the number of player decisions in a game (not counting chance).

    Every game ends when ``turn`` reaches ``turn_limit``; a turn holds at most one decision
    (exactly, TOHM), four (TRI: act, attacker card, defender card, void) or ``2 * tiles + 1``
    (EXAGON: each placement, each gift, and ``stop``).
    """
    limit = int(game.options["turn_limit"])
    if game.name == "tri":
        return 4 * limit + 4
    if game.name == "exagon":
        tiles = len(game.new_initial_state().to_json()["tiles"])
        return (2 * tiles + 1) * (limit + 1)
    return limit + 1


# --- hidden information -------------------------------------------------------------------

Visibility = Callable[[State, int], tuple[int, bool]]
"""``f(state, action) -> (viewer, reveal)`` before ``action`` is applied: ``viewer`` is -1 when
everyone sees the action, else the only seat that does; ``reveal`` is true when the action
makes every still-secret action public (after it is applied)."""


def _tri_visibility(state: State, action: int) -> tuple[int, bool]:
    """TRI: a battle roll is seen by its roller, a card by its player, until both cards are down."""
    data = state.action_to_json(action)
    if "roll" in data:
        battle = state.to_json()["battle"]
        if battle is not None:
            if battle["step"] == "attacker_roll":
                return battle["attacker"], False
            if battle["step"] == "defender_roll":
                return battle["defender"], False
        return -1, False
    if "card" in data:
        battle = state.to_json()["battle"]
        return state.current_player(), battle is not None and battle["step"] == "defender_card"
    return -1, False


VISIBILITY: dict[str, Visibility] = {"tri": _tri_visibility}


class _Position:
    """Holds the engine state and the history; cheap to deep-copy (OpenSpiel's clone)."""

    __slots__ = ("cache", "log", "origin", "state", "visibility")

    def __init__(self, state: State, origin: dict[str, Any] | None = None) -> None:
        self.state = state
        self.origin = origin
        self.visibility = VISIBILITY.get(state.game.name)
        # a linked list, newest first: (parent, action, viewer, revealed actions or None)
        self.log: tuple | None = None
        # info-state text per seat, with the log node it describes
        self.cache: dict[int | None, tuple[tuple | None, str]] = {}

    def apply(self, action: int) -> None:
        state = self.state
        if self.visibility is None:
            state.apply_action(action)
            self.log = (self.log, action, -1, None)
            return
        viewer, reveal = self.visibility(state, action)
        state.apply_action(action)
        revealed = None
        if reveal:
            pending = [a for a, v, _ in self._since_reveal() if v >= 0]
            revealed = (*pending, action)
        self.log = (self.log, action, viewer, revealed)

    def _since_reveal(self) -> list[tuple[int, int, tuple | None]]:
        """Entries after the last reveal, oldest first."""
        out = []
        node = self.log
        while node is not None and node[3] is None:
            out.append((node[1], node[2], node[3]))
            node = node[0]
        out.reverse()
        return out

    def entries(self) -> list[tuple[int, int, tuple | None]]:
        out = []
        node = self.log
        while node is not None:
            out.append((node[1], node[2], node[3]))
            node = node[0]
        out.reverse()
        return out

    def actions(self) -> list[int]:
        return [a for a, _, _ in self.entries()]

    def info_state(self, seat: int | None) -> str:
        """The history as ``seat`` saw it. Built incrementally: the text of an earlier node of
        this history is extended (the log is append-only and a token never changes)."""
        cached = self.cache.get(seat)
        news = []
        node = self.log
        while node is not None and (cached is None or node is not cached[0]):
            news.append(node)
            node = node[0]
        if node is None and cached is not None and cached[0] is not None:
            return self._rebuild(seat)
        tokens = []
        for entry in reversed(news):
            _, action, viewer, revealed = entry
            tok = str(action) if viewer < 0 or viewer == seat else _TOKEN_HIDDEN
            if revealed is not None:
                tok += "=" + ",".join(map(str, revealed))
            tokens.append(tok)
        if cached is not None:
            prefix = cached[1]
        elif self.origin is not None:  # a state built from a position: what seat saw of it
            start = self.state.game.state_from_json(self.origin)
            prefix = "from " + json.dumps(start.observation(seat), separators=(",", ":"))
        else:
            prefix = ""
        text = prefix + " " + " ".join(tokens) if prefix and tokens else prefix or " ".join(tokens)
        self.cache[seat] = (self.log, text)
        return text if self.visibility is None else f"seat {seat}: {text}"

    def _rebuild(self, seat: int | None) -> str:
        self.cache.pop(seat, None)
        return self.info_state(seat)

    def __deepcopy__(self, memo: dict) -> _Position:
        copy = _Position.__new__(_Position)
        copy.state = self.state.clone()
        copy.origin = self.origin
        copy.visibility = self.visibility
        copy.log = self.log  # immutable and shared
        copy.cache = dict(self.cache)
        return copy

    def __reduce__(self) -> tuple:
        game = self.state.game
        return (_restore_position, (game.name, game.record_options(), self.origin, self.actions()))


_GAME_CACHE: dict[str, Game] = {}


def _cached_game(name: str, options: Mapping[str, Any]) -> Game:
    key = name + json.dumps(options, sort_keys=True, default=str)
    game = _GAME_CACHE.get(key)
    if game is None:
        if len(_GAME_CACHE) > 64:
            _GAME_CACHE.clear()
        game = _GAME_CACHE[key] = load_game(name, **options)
    return game


def _restore_position(name: str, options: dict[str, Any], origin: dict[str, Any] | None,
                      actions: list[int]) -> _Position:
    game = _cached_game(name, options)
    pos = _Position(game.state_from_json(origin) if origin is not None else game.new_initial_state(), origin)
    for action in actions:
        pos.apply(action)
    return pos


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

class LudotecaState(pyspiel.State):
    """An OpenSpiel state wrapping a ludoteca state (``ludoteca_state``)."""

    def __init__(self, game: LudotecaGame, pos: _Position | None = None) -> None:
        super().__init__(game)
        self._pos = pos if pos is not None else _Position(game.ludoteca_game.new_initial_state())

    # the engine, for readers
    @property
    def ludoteca_state(self) -> State:
        return self._pos.state

    def position(self, seat: int | None = None) -> dict[str, Any]:
        """The canonical position JSON as ``seat`` may see it (``None``: a spectator)."""
        return self._pos.state.observation(seat)

    # OpenSpiel's Python-game hooks
    def current_player(self) -> int:
        return self._pos.state.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        return self._pos.state.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return self._pos.state.chance_outcomes()

    def _apply_action(self, action: int) -> None:
        self._pos.apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        state = self._pos.state
        if player == state.current_player():
            try:
                return state.action_to_string(int(action))
            except (ValueError, KeyError, IndexError, TypeError):
                pass
        who = "chance" if player == CHANCE else f"p{player}"
        return f"{who}:{action}"

    def is_terminal(self) -> bool:
        return self._pos.state.is_terminal()

    def returns(self) -> list[float]:
        return [float(x) for x in self._pos.state.returns()]

    def __str__(self) -> str:
        return self._pos.state.render()

    def resample_from_infostate(self, player_id: int, probability_sampler: Any = None) -> LudotecaState:
        """A state ``player_id`` cannot tell from this one: the actions still secret to them
        (TRI: an opponent's roll and card in the battle in progress) drawn afresh — chance
        outcomes by their probabilities, an opponent's card uniformly among its legal ones."""
        pos = self._pos
        if pos.visibility is None or not any(v >= 0 and v != player_id for _, v, _ in pos._since_reveal()):
            return self.clone()  # nothing is secret to player_id
        game = self.get_game()
        entries = pos.entries()
        last_reveal = max((i for i, e in enumerate(entries) if e[2] is not None), default=-1)
        if probability_sampler is not None:
            def draw() -> float:
                return float(probability_sampler())
        else:
            draw = random.random
        new = LudotecaState(game, _Position(
            pos.state.game.state_from_json(pos.origin) if pos.origin is not None
            else pos.state.game.new_initial_state(), pos.origin))
        for i, (action, viewer, _) in enumerate(entries):
            if i > last_reveal and viewer >= 0 and viewer != player_id:
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
        full = dict(PARAMETERS[name])
        full.update(params or {})
        # list-valued options travel in a comma-free form, so that str(game) loads again
        if name == "tohm" and full["layout"]:
            full["layout"] = layout_text(g.options["layout"])
        if name == "exagon" and full["tiles"]:
            full["tiles"] = tiles_text(g.new_initial_state().to_json()["tiles"])
        super().__init__(GAME_TYPES[name], info, full)
        self._encoder: Encoder | None = None

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = make_encoder(self.ludoteca_game)
        return self._encoder

    def new_initial_state(self, position: Any = None) -> LudotecaState:
        """The start of a game, or (given its canonical JSON, a dict or text) any position."""
        if position is None:
            return LudotecaState(self)
        if isinstance(position, str):
            position = json.loads(position)
        data = dict(position)
        return LudotecaState(self, _Position(self.ludoteca_game.state_from_json(data), data))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> LudotecaObserver:
        return LudotecaObserver(self, iig_obs_type, params)


def _game_type(name: str) -> pyspiel.GameType:
    cls = game_class(name)
    return pyspiel.GameType(
        short_name=PREFIX + name,
        long_name=f"ludoteca {cls.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=_INFORMATION.get(name, pyspiel.GameType.Information.PERFECT_INFORMATION),
        utility=pyspiel.GameType.Utility.CONSTANT_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=cls.max_players,
        min_num_players=cls.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS[name],
    )


GAME_TYPES: dict[str, pyspiel.GameType] = {}
GAME_CLASSES: dict[str, type[LudotecaGame]] = {}
UNAVAILABLE: dict[str, str] = {}
"""Games whose engine could not be imported (name -> reason); not registered."""


def register() -> list[str]:
    """Register every game with OpenSpiel (idempotent); return the registered short names."""
    registered = set(pyspiel.registered_names())
    names = []
    for name in GAMES:
        short = PREFIX + name
        if name not in GAME_TYPES:
            try:
                GAME_TYPES[name] = _game_type(name)
            except ImportError as exc:  # an engine not written yet
                UNAVAILABLE[name] = str(exc)
                continue
            UNAVAILABLE.pop(name, None)
            GAME_CLASSES[name] = type(f"Ludoteca{name.capitalize()}Game", (LudotecaGame,),
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
