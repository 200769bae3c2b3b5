"""Texts of events, made at the edge from an event's kind and fields (never inside ``games/``).

A game may give texts for its own kinds in its board module (``games/<name>/board.py``,
``TEXTS``: kind -> :meth:`str.format` string over the event's fields); the shared kinds and any
kind without a text get a generic one, so a new kind is never lost, only plainly worded. An
empty text hides a kind that only restates the action (a token placed by a "place" move).
The redacted form of a secret event (what the seats that may not see it get) is worded by the
text of ``"<kind> (secret)"``, e.g. ``"chance (secret)": "roll (secret)"``.

The texts are marked with ``N_()`` where they are written and translated here, when shown (``_``
of :mod:`ludoteca.core.i18n`, into the language the command chose).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ludoteca.core import events as ev
from ludoteca.core.i18n import N_, _

GENERIC: dict[str, str] = {
    ev.TIMEOUT: N_("{seat}: the time ran out"),
    ev.END: N_("the game is over ({reason})"),
}

SEAT_FIELDS = frozenset({"seat", "seats", "winner", "winners", "attacker", "defender", "owner", "from"})
"""The fields that name seats when a game's board module does not list its own (``SEAT_FIELDS``)."""

SKIPPED = frozenset({ev.MOVE, ev.CHANCE})
"""Kinds the terminal shows as the log line of the action itself, not as an extra line."""


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(x, int | str) for x in value):
        return ",".join(str(x) for x in value)
    return json.dumps(value, separators=(",", ":"))


def generic_text(view: Mapping[str, Any]) -> str:
    """``kind: field value, ...`` for a kind without a text of its own."""
    fields = ", ".join(f"{k} {_value(v)}" for k, v in view.items() if k not in ("kind", "secret"))
    kind = str(view.get("kind", "event")).replace("_", " ")
    return f"{kind}: {fields}" if fields else kind


def _seat_name(value: Any, names: Sequence[str] | None) -> Any:
    """A seat (or a list of seats) as the players' names; "player N" without names."""
    def name(i: int) -> str:
        return names[i] if names and 0 <= i < len(names) else _("player {seat}").format(seat=i)

    if isinstance(value, int) and not isinstance(value, bool):
        return name(value)
    if isinstance(value, list | tuple) and value and all(isinstance(x, int) and not isinstance(x, bool)
                                                          for x in value):
        return ", ".join(name(x) for x in value)
    return value


def _format(template: str, view: Mapping[str, Any], names: Sequence[str] | None = None,
            seat_fields: Collection[str] | None = None) -> str | None:
    """``template`` translated and filled with the event's fields; the fields in ``seat_fields``
    (default :data:`SEAT_FIELDS`) show the players' ``names`` (default "player N")."""
    seats = SEAT_FIELDS if seat_fields is None else seat_fields
    fields = {k: _seat_name(v, names) if k in seats else v for k, v in view.items()}
    fields = {k: _value(v) if isinstance(v, list | tuple | dict) else v for k, v in fields.items()}
    try:
        return _(template).format_map(fields)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        return None  # the event lacks a field the text names (or has another type): say it plainly


def event_text(view: Mapping[str, Any], texts: Mapping[str, str] | None = None,
               names: Sequence[str] | None = None, seat_fields: Collection[str] | None = None) -> str | None:
    """The text of an event as a viewer sees it (``view``: :meth:`Event.view`'s result); None
    when the game's texts hide the kind (an empty text). ``names``: the players' names, shown for
    the fields in ``seat_fields`` (the game's ``SEAT_FIELDS``; default :data:`SEAT_FIELDS`)."""
    texts = texts or {}
    kind = str(view.get("kind"))
    if view.get("secret"):
        template = texts.get(f"{kind} (secret)")
        secret = _("{kind} (secret)").format(kind=kind.replace("_", " "))
        return (_format(template, view, names, seat_fields) if template else None) or secret
    template = texts.get(kind, GENERIC.get(kind))
    if template == "":
        return None
    if kind not in texts:
        seat_fields = SEAT_FIELDS
    return (_format(template, view, names, seat_fields) if template is not None else None) or generic_text(view)


def secret_label(view: Mapping[str, Any] | None, texts: Mapping[str, str] | None = None) -> str:
    """What a redacted move or chance outcome (``view``: its public form) shows of itself: the
    game's text for ``"<kind> (secret)"`` (TRI: ``roll (secret)``), else ``secret <kind>``."""
    if view is None:
        return _("secret")
    kind = str(view.get("kind", "move"))
    template = (texts or {}).get(f"{kind} (secret)")
    return (_format(template, view) if template else None) or _("secret {kind}").format(kind=kind)
