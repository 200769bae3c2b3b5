"""TOHM's observation vector and the comma-free text of its layout, for the research adapters
(see :mod:`ludoteca.core.encoding`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableSequence
from typing import Any

from ludoteca.core.encoding import Encoder
from ludoteca.core.game import Game

_PHASES = ("roll", "act", "over")
_LAYOUT_TEXT = re.compile(r"^[3-6]+(;[3-6]+)*$")


class TohmEncoder(Encoder):
    """per cell: its number (3-6) and who holds it; supplies, trophies, who moves, the die."""

    def _layout(self) -> None:
        n = self.num_players
        probe = self.game.new_initial_state().to_json()
        self.rows, self.cols = probe["rows"], probe["cols"]
        cells = self.rows * self.cols
        self.o_number = self._add("cell number one-hot (3, 4, 5, 6) per cell", 4 * cells)
        self.o_cell = self._add("cell holder per cell: empty, then relative seats", (n + 1) * cells)
        self.o_supply = self._add("tokens in supply per seat / 5", n)
        self.o_trophies = self._add("trophies per seat / 10", n)
        self.o_left = self._add("trophies left / 10", 1)
        self.o_to_move = self._add("to move (one-hot seat)", n)
        self.o_phase = self._add("phase (roll, act, over)", 3)
        self.o_roll = self._add("die during act (1..6)", 6)

    def _fill(self, obs: Mapping[str, Any], seat: int, out: MutableSequence[float]) -> None:
        n1 = self.num_players + 1
        i = 0
        for lrow, brow in zip(obs["layout"], obs["board"], strict=True):
            for number, holder in zip(lrow, brow, strict=True):
                out[self.o_number + 4 * i + number - 3] = 1.0
                out[self.o_cell + n1 * i + (0 if holder is None else 1 + self.rel(holder, seat))] = 1.0
                i += 1
        for s, x in enumerate(obs["supply"]):
            out[self.o_supply + self.rel(s, seat)] = x / 5.0
        for s, x in enumerate(obs["trophies"]):
            out[self.o_trophies + self.rel(s, seat)] = x / 10.0
        out[self.o_left] = obs["trophies_left"] / 10.0
        if obs["phase"] != "over":
            out[self.o_to_move + self.rel(obs["to_move"], seat)] = 1.0
        out[self.o_phase + _PHASES.index(obs["phase"])] = 1.0
        roll = obs.get("roll")
        if isinstance(roll, int) and 1 <= roll <= 6:
            out[self.o_roll + roll - 1] = 1.0


def layout_text(grid: list[list[int]]) -> str:
    """A layout as a comma-free game-parameter value: rows of digits joined by ``;``
    ("345;563;436"). OpenSpiel's game strings split parameters on commas."""
    return ";".join("".join(str(x) for x in row) for row in grid)


def layout_from_text(text: str) -> Any:
    """Inverse of :func:`layout_text`; any other text (JSON text, a path) is returned as it is,
    for the engine to read."""
    if _LAYOUT_TEXT.match(text):
        return [[int(ch) for ch in row] for row in text.split(";")]
    return text


def _layout_text_of(game: Game) -> str:
    return layout_text(game.options["layout"])


ENCODER = TohmEncoder
OPTION_TEXTS = {"layout": (_layout_text_of, layout_from_text)}
