"""Types of the compiled EXAGON engine (``_compiled.pyx``; see ``compiled.py``)."""

from collections.abc import Sequence

from ludoteca.core._cstate import _CStateBase

MAX_TILES: int
MAX_PLAYERS: int
MAX_ACTION_COUNT: int
MAX_PLAYOUT_ACTIONS: int
VALUE_SHARPNESS: float

Counters = tuple[int, int, int, int, int, int, int, int, int, int, int]
Fields = tuple[int, list[int], list[list[int]], list[int], list[tuple[int, int, int]], int, int, int, int, int, int,
               float | None, float | None, list[int] | None, list[int] | None, int, Counters, int | None]

class CState(_CStateBase):
    def __init__(self, sides: Sequence[Sequence[int]], star: Sequence[int], penalty: Sequence[int],
                 nummask: Sequence[int], players: int, hourglass: float | None, tournament: bool, turn_limit: int,
                 radius: int, tournament_games: int, lenient: bool = False, carry_cap: float | None = None,
                 hand: int = 0, bonus: Sequence[int] = (1, 2, 3), go_on: int = 2, target: int = 50,
                 win_points: int = 20) -> None: ...
    def load(self, phase: int, owner: Sequence[int], hands: Sequence[Sequence[int]], aside: Sequence[int],
             table: Sequence[tuple[int, int, int]], dealt: int, to_move: int, turn: int, placed: int, bonus: int,
             passes: int, time_left: float | None, carry: float | None, points: Sequence[int] | None,
             winners: Sequence[int] | None, end: int, counts: Sequence[int], games: int | None = 0) -> None: ...
    def fields(self) -> Fields: ...
    def phase(self) -> int: ...
    def time_left(self) -> float | None: ...
    def spend(self, elapsed: float) -> None: ...
    def chance_outcomes(self) -> list[tuple[int, float]]: ...
    def greedy_action(self) -> int: ...
    def search(self, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
               prune: int = 0, greedy: bool = False) -> int: ...
    def search_values(self, iterations: int, c: float, cap: int, seed: int, evaluate: bool = True,
                      prune: int = 0, greedy: bool = False) -> list[tuple[int, int, float]]: ...
    def candidates(self, limit: int) -> list[int]: ...
