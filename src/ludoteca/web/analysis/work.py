"""What an analysis process does: analyse a table's record, at the lowest CPU priority.

The processes of the pool lower their own priority (``os.nice`` and, on Linux, the idle scheduling
class ``SCHED_IDLE``) when they start, so the live
tables — their actions, broadcasts and AI moves, in the server's process and the AI pool — always
come first: an analysis takes only the CPU time live play leaves. The server also stops them outright
while live play needs the CPU (gate.py); a process stopped when its server dies is killed with it (on
Linux: the parent's death signal, ``SIGKILL``, which a stopped process receives too).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import Any

NICE = 19
"""The analysis processes' niceness: the lowest priority the system gives."""


PR_SET_PDEATHSIG = 1
"""Linux's ``prctl`` option: the signal a process gets when its parent dies."""


def die_with(parent: int) -> None:
    """On Linux, be killed when the server ``parent`` dies, even while stopped (``SIGKILL``), so that a
    crashed server never leaves a paused analysis behind; exit at once if it is already gone."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(0)


def lower_priority(parent: int | None = None) -> None:
    """The pool's initializer: make this process yield the CPU to everything else — Linux's idle
    scheduling class where there is one (it runs only when no other process wants the CPU), and the
    lowest niceness anyway — and die with the server process ``parent``."""
    if parent is not None:
        die_with(parent)
    with contextlib.suppress(AttributeError, OSError):  # a system without priorities: run as is
        os.nice(NICE)
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def analyse_record(data: dict[str, Any], iterations: int | None = None) -> dict[str, Any]:
    """The analysis (``Analysis.to_json()``) of a record's JSON, with, for each labelled decision,
    the position after the better move (``best_position``: the replay page draws it)."""
    from ludoteca.analysis import analyse
    from ludoteca.core.records import Record

    record = Record.from_json(data)
    result = analyse(record, iterations=iterations)
    out = result.to_json()
    states = [state for state, _data in record.states()]
    for step in out["steps"]:
        if step.get("label") and "best_action" in step:
            state = states[step["step"]].clone()
            state.apply_unchecked(state.action_from_json(step["best_action"]))
            step["best_position"] = state.to_json()
    return out


__all__ = ["NICE", "analyse_record", "die_with", "lower_priority"]
