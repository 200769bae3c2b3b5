"""Special values of ``State.current_player()`` (the same as OpenSpiel's)."""

from __future__ import annotations

CHANCE: int = -1
"""``current_player()`` at a chance node: a die roll, a deal, a roll-off."""

TERMINAL: int = -4
"""``current_player()`` once the game is over."""
