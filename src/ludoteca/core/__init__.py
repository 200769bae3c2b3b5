"""Shared machinery: the game/state protocol, errors, options, records, chance helpers."""

from ludoteca.core.chance import random_playout, sample_chance, sample_outcome
from ludoteca.core.constants import CHANCE, TERMINAL
from ludoteca.core.errors import IllegalActionError
from ludoteca.core.game import Action, Game, State
from ludoteca.core.options import Option
from ludoteca.core.records import Record, RecordError

__all__ = [
    "CHANCE", "TERMINAL", "Action", "Game", "IllegalActionError", "Option", "Record",
    "RecordError", "State", "random_playout", "sample_chance", "sample_outcome",
]
