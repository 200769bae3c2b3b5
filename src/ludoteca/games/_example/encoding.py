"""Pig's observation vector for the research adapters (optional part, :mod:`ludoteca.core.encoding`)."""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.encoding import INF, Encoder

_PHASES = ("decide", "roll", "over")


class PigEncoder(Encoder):
    """each seat's score and the turn total (over the target), who moves, the phase, the die."""

    def _layout(self) -> None:
        n = self.num_players
        self.o_scores = self._add("score per seat / target", n, high=INF)
        self.o_turn = self._add("turn total / target", 1, high=INF)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (decide, roll, over)", 3)
        self.o_die = self._add("last face rolled (one-hot 1..6)", 6)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        target = float(self.game.options["target"])
        for s, points in enumerate(obs["scores"]):
            out[self.o_scores + self.rel(s, seat)] = points / target
        out[self.o_turn] = obs["turn_total"] / target
        if obs["phase"] != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_phase + _PHASES.index(obs["phase"])] = 1.0
        if obs["die"] is not None:
            out[self.o_die + obs["die"] - 1] = 1.0


ENCODER = PigEncoder
