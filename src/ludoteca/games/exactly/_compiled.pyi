"""Types of the compiled exactly engine (``_compiled.pyx``; see ``compiled.py``)."""

from collections.abc import Sequence

from ludoteca.core._cstate import _CStateBase

MAX_PLAYERS: int
START_COINS: tuple[str, str, str]

Counters = tuple[int, int, int, int]

class CState(_CStateBase):
    def __init__(self, players: int, start_coin: str, turn_limit: int, target: int = 100, win: int = 3,
                 cap: int = 150, die: Sequence[int] = (1, 1, 1, 1, 1, 1)) -> None: ...
    def load(self, counts: Sequence[int], euros: Sequence[int], to_move: int, phase: int, face: int, turn: int,
             ro_seats: Sequence[int] | None, ro_rolls: Sequence[int], counters: Counters | None = None) -> None: ...
    def fields(self) -> tuple[list[int], list[int], int, int, int, int, list[int] | None, list[int], Counters]: ...
    def totals(self) -> list[int]: ...
    def chance_outcomes(self) -> list[tuple[int, float]]: ...
