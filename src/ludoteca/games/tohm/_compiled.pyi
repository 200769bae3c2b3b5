"""Types of the compiled TOHM engine (``_compiled.pyx``; see ``compiled.py``)."""

from collections.abc import Sequence

from ludoteca.core._cstate import _CStateBase

MAX_CELLS: int
MAX_PLAYERS: int

Counters = tuple[int, int, int, int, int, int, int]

class CState(_CStateBase):
    def __init__(self, rows: int, cols: int, numbers: Sequence[int], players: int, turn_limit: int,
                 tokens: int = 5, trophies: int = 10, tris: int = 3,
                 kinds: Sequence[int] = (0, 1, 2, 3, 3, 3, 3)) -> None: ...
    def load(self, board: Sequence[int], supply: Sequence[int], trophies: Sequence[int], trophies_left: int,
             to_move: int, phase: int, roll: int | None, turn: int, counters: Counters | None = None) -> None: ...
    def fields(self) -> tuple[list[int], list[int], list[int], int, int, int, int | None, int, Counters]: ...
    def chance_outcomes(self) -> list[tuple[int, float]]: ...
