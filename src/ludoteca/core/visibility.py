"""Who may see each entry of a game's move log, worked out from ``State.observation`` alone.

Every front end (the web tables, the terminal) shows a player only what
``state.observation(seat)`` allows. The log of moves must not leak more than the position does:
an entry is shown to a viewer when

- the viewer made it, or
- it changed nothing the viewer cannot see (what the viewer's observation hides is the same
  before and after it), or
- no other legal action would have shown the viewer the same position (so the viewer can tell
  which one was played anyway);

otherwise it is hidden from that viewer, and revealed as soon as the viewer's observation hides
nothing again (TRI: at the battle's reveal) or the game is over.

Nothing here knows a game by name: a game's secrecy comes from its ``observation()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ludoteca.core.game import Action, State

Viewer = int | None
"""A seat number, or ``None`` for a spectator."""

Hidden = list[tuple[tuple, Any]]
"""What a full position holds that an observation does not show: ``[(path, value)]``."""

UNIQUE_TEST_LIMIT = 64
"""Above this many legal actions a hidden-looking log entry stays hidden (no uniqueness test)."""


def hidden_part(obs: Any, full: Any, path: tuple = ()) -> Hidden:
    """What ``full`` holds that ``obs`` does not show: ``[(path, value)]`` (extra keys ignored)."""
    if obs == full:
        return []
    if isinstance(full, dict) and isinstance(obs, dict):
        out: Hidden = []
        for key, value in full.items():
            if key not in obs:
                out.append(((*path, key), value))
            else:
                out.extend(hidden_part(obs[key], value, (*path, key)))
        return out
    if isinstance(full, list) and isinstance(obs, list) and len(full) == len(obs):
        out = []
        for k, (a, b) in enumerate(zip(obs, full, strict=True)):
            out.extend(hidden_part(a, b, (*path, k)))
        return out
    return [(path, full)]


def hidden_now(state: State, viewer: Viewer) -> Hidden:
    """What ``viewer`` cannot see of ``state`` right now (``[]``: nothing hidden)."""
    return hidden_part(state.observation(viewer), state.to_json())


def has_hidden_information(state: State) -> bool:
    """True when the game's observations may differ from the full position."""
    return type(state).observation is not State.observation


def is_unique(before: State, action: Action, plain: dict[str, Any], viewer: Viewer,
              obs_after: dict[str, Any], limit: int = UNIQUE_TEST_LIMIT) -> bool:
    """True when no other legal action in ``before`` would have shown ``viewer`` ``obs_after``.

    ``plain`` is the canonical JSON of ``action`` without its ``elapsed`` key. Above ``limit``
    legal actions the test is not made and the answer is False (the entry stays hidden).
    """
    try:
        legal = before.legal_actions()
        if len(legal) > limit:
            return False
        for b in legal:
            if b == action:
                continue
            other = before.clone()
            other.apply_action(b)
            if other.observation(viewer) == obs_after and before.action_to_json(b) != plain:
                return False
        return True
    except (ValueError, KeyError, IndexError, TypeError):
        return False


@dataclass
class LogVisibility:
    """The log entries hidden from each viewer, kept up to date one action at a time.

    Start it with :meth:`start` on the initial position, then call :meth:`note` for every action
    appended to the log (``before``: the position it was played in, ``after``: the position it
    led to) and :meth:`reveal_all` when the game is over.
    """

    viewers: list[Viewer]
    limit: int = UNIQUE_TEST_LIMIT
    hidden: dict[Viewer, set[int]] = field(default_factory=dict)
    """Per viewer, the indices of the entries hidden from them now."""
    hp: dict[Viewer, Hidden] = field(default_factory=dict)
    """Per viewer, what the latest position hides from them."""
    changed: dict[Viewer, int] = field(default_factory=dict)
    """Per viewer, the first entry whose visibility changed since the caller last cleared this."""

    def __post_init__(self) -> None:
        for v in self.viewers:
            self.hidden.setdefault(v, set())

    def start(self, state: State) -> None:
        """Take ``state`` as the position before the first entry."""
        for v in self.viewers:
            self.hp[v] = hidden_now(state, v)

    def note(self, i: int, seat: int | None, data: dict[str, Any], action: Action, before: State,
             after: State) -> dict[Viewer, list[int]]:
        """Work out who may see entry ``i`` (``data``: its JSON; ``seat``: who made it, None for chance).

        Returns, per viewer, the entries (``i`` excluded) this action revealed to them.
        """
        full_after = after.to_json()
        plain = {k: v for k, v in data.items() if k != "elapsed"}
        revealed: dict[Viewer, list[int]] = {}
        for v in self.viewers:
            obs_after = after.observation(v)
            hp_after = hidden_part(obs_after, full_after)
            visible = (seat is not None and v == seat) or self.hp.get(v, []) == hp_after \
                or is_unique(before, action, plain, v, obs_after, self.limit)
            hidden = self.hidden[v]
            if not visible:
                hidden.add(i)
                self.changed[v] = min(self.changed.get(v, i), i)
            elif not hp_after and hidden:
                revealed[v] = sorted(hidden)
                self.changed[v] = min(self.changed.get(v, revealed[v][0]), revealed[v][0])
                hidden.clear()
            self.hp[v] = hp_after
        return revealed

    def reveal_all(self) -> dict[Viewer, list[int]]:
        """The game is over: every entry becomes visible to everyone; returns what was hidden."""
        revealed: dict[Viewer, list[int]] = {}
        for v, hidden in self.hidden.items():
            if hidden:
                revealed[v] = sorted(hidden)
                self.changed[v] = min(self.changed.get(v, revealed[v][0]), revealed[v][0])
                hidden.clear()
        return revealed

    def is_hidden(self, i: int, viewer: Viewer) -> bool:
        return i in self.hidden.get(viewer, ())

    def hidden_from_any(self, i: int) -> bool:
        """True when entry ``i`` is hidden from at least one of the viewers."""
        return any(i in h for h in self.hidden.values())
