"""Events: what happened when an action was applied, and who may see it.

``State.apply_action`` returns the events of the action it played, in order: first the action
itself (kind ``move`` for a player's choice, ``chance`` for a chance outcome), then what the
rules made of it (a coin moved, a euro scored, a battle revealed, a tile placed, ...), and
``end`` when the game is over. Events are **language-neutral**: a kind and JSON-able fields
(seats, cells and triangles in their canonical JSON form, numbers). Texts are made from them at
the edge (web log, terminal, announcements, replays), never inside ``games/``.

Visibility: ``to`` is ``None`` when everyone may see the event now; otherwise it is the set of
seats that may. The others see ``public`` instead (a redacted form, e.g. "player 1 chose a
card"), or nothing when ``public`` is ``None``. A secret becomes public when the game reveals it
by a later public event carrying it (TRI's ``battle``), and at the end of the game every event is
public (``view(viewer, everything=True)``, used by replays of finished games).

Field names shared by every game: ``seat`` (who acted or whom it concerns), ``action`` (the
canonical JSON of the action), ``outcome`` (a chance outcome's JSON). Kinds shared by every
game are the constants below; each game documents its own kinds in its module docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

MOVE = "move"
"""A player's action: ``{"seat", "action"}``."""
CHANCE = "chance"
"""A chance outcome: ``{"outcome"}`` (and ``"seat"`` when it is that seat's roll or card)."""
END = "end"
"""The game is over: ``{"reason", "returns", "winners"}``."""
TIMEOUT = "timeout"
"""The host ran out a seat's time: ``{"seat"}``."""

Viewer = int | None
"""A seat, or ``None`` for a spectator."""


class Event(NamedTuple):
    """One thing that happened, with who may see it now (a named tuple: cheap to build)."""

    kind: str
    data: Mapping[str, Any]
    to: frozenset[int] | None = None
    """``None``: everyone may see it; else only these seats."""
    public: Mapping[str, Any] | None = None
    """What the others see when ``to`` is set (``None``: the event is not shown to them)."""

    @property
    def secret(self) -> bool:
        return self.to is not None

    def visible_to(self, viewer: Viewer) -> bool:
        """True when ``viewer`` may see the whole event now."""
        return self.to is None or (viewer is not None and viewer in self.to)

    def view(self, viewer: Viewer, everything: bool = False) -> dict[str, Any] | None:
        """The event as ``viewer`` may see it: ``{"kind", **fields}``; ``"secret": True`` marks a
        redacted form; ``None`` when nothing of it may be shown. ``everything``: the game is over."""
        if everything or self.visible_to(viewer):
            return {"kind": self.kind, **self.data}
        if self.public is None:
            return None
        return {"kind": self.kind, **self.public, "secret": True}

    def to_json(self) -> dict[str, Any]:
        """The whole event, with its visibility (records of events, tests)."""
        out: dict[str, Any] = {"kind": self.kind, **self.data}
        if self.to is not None:
            out["to"] = sorted(self.to)
            if self.public is not None:
                out["public"] = dict(self.public)
        return out


def event(kind: str, to: frozenset[int] | None = None, public: Mapping[str, Any] | None = None,
          **data: Any) -> Event:
    """``event("euro", seat=2, round_reset=True)``: a shorthand for :class:`Event`."""
    return Event(kind, data, to, public)
