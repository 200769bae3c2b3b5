"""Types of the compiled TOHM solver (``_solve.pyx``; see ``solve.py``)."""

from collections.abc import Callable, Sequence
from typing import Any

BOARDS: int
PAIRS: int
SIZE: int

def index(mine: int, theirs: int, tm: int, to: int) -> int: ...
def bellman(V: Any, numbers: Sequence[int], mine: int, theirs: int, tm: int, to: int) -> float: ...
def solve(V: Any, numbers: Sequence[int], tol: float,
          progress: Callable[[int, int, float], None] | None = None) -> int: ...
