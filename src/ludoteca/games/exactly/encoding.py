"""exactly's observation vector for the research adapters (see :mod:`ludoteca.core.encoding`)."""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.encoding import INF, Encoder

_VALUES = ("5", "10", "20", "50")
_PHASES = ("start_roll", "roll", "move", "over")
_ROLLS = ("?", 50, 20, 10, 5)


class ExactlyEncoder(Encoder):
    """bank coins, each pile's coins and total, euros, who moves, phase, the die."""

    def _layout(self) -> None:
        n = self.num_players
        self.o_bank = self._add("bank coins per value / 10", 4)
        self.o_piles = self._add("pile coins per seat x value / 10", 4 * n)
        self.o_totals = self._add("pile total per seat / 200 cents", n, high=INF)
        self.o_euros = self._add("euros per seat / 3", n, high=INF)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (start_roll, roll, move, over)", 4)
        self.o_roll = self._add("die during move (?, 50, 20, 10, 5)", 5)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        n = self.num_players
        bank = obs["bank"]
        for i, k in enumerate(_VALUES):
            out[self.o_bank + i] = bank[k] / 10.0
        for s, pile in enumerate(obs["piles"]):
            r = self.rel(s, seat)
            total = 0
            for i, k in enumerate(_VALUES):
                c = pile[k]
                out[self.o_piles + 4 * r + i] = c / 10.0
                total += c * int(k)
            out[self.o_totals + r] = total / 200.0
        for s, e in enumerate(obs["euros"]):
            out[self.o_euros + self.rel(s, seat)] = e / 3.0
        if obs["phase"] != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat) % n] = 1.0
        out[self.o_phase + _PHASES.index(obs["phase"])] = 1.0
        roll = obs.get("roll")
        if roll in _ROLLS:
            out[self.o_roll + _ROLLS.index(roll)] = 1.0


ENCODER = ExactlyEncoder
