"""Pig in the terminal (optional part, found with ``Game.part("board")`` by :mod:`ludoteca.play.boards`).

``draw(state, data, names)`` draws the position ``data`` (what the viewer may see of ``state``);
``TEXTS`` maps an event kind to a format string over its fields ("" hides a kind); ``PHASES`` and
``END_REASONS`` name the position's phases and the engine's end reasons; ``action_text`` says an
action in a player's words. Every text is marked with ``N_``/``_`` and translated in ``locale/``.
Without this module the terminal shows ``state.render()`` and generic texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ludoteca.core.drawing import seat, status
from ludoteca.core.game import Action, State
from ludoteca.core.i18n import N_, _

TEXTS: dict[str, str] = {
    "bust": N_("{seat} rolled a 1: {lost} points lost, the turn passes"),
    "hold": N_("{seat} holds: {banked} points banked, {score} in all"),
}
"""Texts of Pig's events (kinds and fields: the engine's docstring)."""

SEAT_FIELDS = frozenset({"seat"})
"""The event fields that hold a seat: the terminal shows the player's name."""

PHASES: dict[str, str] = {"decide": N_("roll or hold"), "roll": N_("rolling"), "over": N_("game over")}

END_REASONS: dict[str, str] = {"target": N_("a player reached the target"),
                               "turn_limit": N_("the turn limit was reached")}


def _player(names: Sequence[str] | None, i: Any) -> str:
    if isinstance(i, int) and names and 0 <= i < len(names):
        return names[i]
    return _("player {seat}").format(seat=i)


def action_text(state: State, action: Action, names: Sequence[str] | None = None) -> str | None:
    """An action in a player's words (``state``: the position before it), without who made it."""
    data = state.action_to_json(action)
    if "die" in data:
        return _("{name} rolls {face}").format(name=_player(names, state.to_json()["to_move"]), face=data["die"])
    return _("roll the die") if data["choose"] == "roll" else _("hold")


def draw(state: State, data: dict[str, Any], names: Sequence[str] | None = None) -> RenderableType:
    """Each player's score, the turn total and the die."""
    table = Table(title="Pig — " + _("first to {target} points").format(target=state.game.options["target"]),
                  title_style="bold")
    table.add_column(_("player"))
    table.add_column(_("points"), justify="right")
    for i, points in enumerate(data["scores"]):
        name = Text(_player(names, i) + " ")
        name.append_text(seat(i))
        table.add_row(name, str(points))
    extra = _("this turn: {points}").format(points=data["turn_total"])
    if data["die"] is not None:
        extra += "  " + _("die: {roll}").format(roll=data["die"])
    return Group(table, status(data, extra, names=names, phases=PHASES))
