"""TOHM's board as an RGB image (PettingZoo's ``rgb_array``). numpy is imported when drawing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CELL = 32
"""Pixels per cell."""
_SHADE = {3: 235, 4: 210, 5: 185, 6: 160}


def rgb_array(position: Mapping[str, Any], palette: Sequence[Sequence[int]]) -> Any:
    """Cells shaded by their number (3 light … 6 dark, with as many pips along the top edge),
    tokens as squares in their holder's colour (``palette[seat]``): a ``uint8`` numpy array of
    shape ``(height, width, 3)``."""
    import numpy as np

    rows, cols, c = position["rows"], position["cols"], CELL
    colours = np.asarray(palette, dtype=np.uint8)
    img = np.full((rows * c + 1, cols * c + 1, 3), 40, dtype=np.uint8)
    for r in range(rows):
        for k in range(cols):
            y, x = r * c, k * c
            number = position["layout"][r][k]
            img[y + 1:y + c, x + 1:x + c] = _SHADE[number]
            holder = position["board"][r][k]
            if holder is not None:
                m = c // 5
                img[y + m:y + c - m + 1, x + m:x + c - m + 1] = colours[holder % len(colours)]
            for i in range(number):
                img[y + 3:y + 5, x + 3 + 4 * i:x + 5 + 4 * i] = 60
    return img
