"""ludoteca: four designer board games — exactly, TRI, TOHM, EXAGON — as rules engines."""

from ludoteca.core import (
    CHANCE,
    TERMINAL,
    Game,
    IllegalActionError,
    Record,
    RecordError,
    State,
)
from ludoteca.registry import GAMES, game_class, load_game

__version__ = "0.1.0"

__all__ = [
    "CHANCE", "GAMES", "TERMINAL", "Game", "IllegalActionError", "Record", "RecordError",
    "State", "game_class", "load_game",
]
