"""TRI's board as an RGB image (PettingZoo's ``rgb_array``). numpy is imported when drawing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

CELL = 32
"""Pixels per square."""


@lru_cache(maxsize=1)
def _masks() -> Any:
    """The four triangles (N, E, S, W) of a square as boolean masks."""
    import numpy as np

    c = CELL
    yy, xx = np.mgrid[0:c, 0:c] + 0.5
    dy, dx = yy - c / 2, xx - c / 2
    north = (dy < 0) & (abs(dx) <= -dy)
    south = (dy >= 0) & (abs(dx) <= dy)
    east = (dx > 0) & ~north & ~south
    west = (dx <= 0) & ~north & ~south
    return np.stack([north, east, south, west])


def rgb_array(position: Mapping[str, Any], palette: Sequence[Sequence[int]]) -> Any:
    """Each square cut into its four triangles, coloured by their holder (``palette[seat]``;
    light grey: empty): a ``uint8`` numpy array of shape ``(height, width, 3)``."""
    import numpy as np

    n, c = position["size"], CELL
    masks = _masks()
    colours = np.asarray(palette, dtype=np.uint8)
    img = np.full((n * c + 1, n * c + 1, 3), 30, dtype=np.uint8)
    owner = position["owner"]
    for r in range(n):
        for k in range(n):
            block = np.full((c, c, 3), 225, dtype=np.uint8)
            for d, name in enumerate("NESW"):
                holder = owner.get(f"{r},{k},{name}")
                if holder is not None:
                    block[masks[d]] = colours[holder % len(colours)]
            block[0, :] = block[:, 0] = 30
            img[r * c:(r + 1) * c, k * c:(k + 1) * c] = block
    return img
