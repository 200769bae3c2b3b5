"""The players' names at the terminal: "You" for the only person, "Player 1" ... in a hot seat,
the AI by its level ("Hard AI"), or the names given with ``--names``."""

from __future__ import annotations

from collections.abc import Sequence

from ludoteca.core.i18n import N_, _

AGENT_NAMES: dict[str, str] = {
    "beginner": N_("Beginner AI"),
    "easy": N_("Easy AI"),
    "medium": N_("Medium AI"),
    "hard": N_("Hard AI"),
    "expert": N_("Expert AI"),
    "random": N_("Random AI"),
    "heuristic": N_("Simple AI"),
    "soft": N_("Soft AI"),
    "mcts": N_("Search AI"),
    "strong": N_("Strong AI"),
    "perfect": N_("Perfect AI"),
}
"""An AI seat's name by the kind of its agent (the part of its spec before any ``:``)."""


def agent_name(spec: str) -> str:
    """A person's name for the agent ``spec`` (``mcts:seconds=1`` -> "Search AI")."""
    kind = spec.split(":", 1)[0].strip().lower()
    text = AGENT_NAMES.get(kind)
    return _(text) if text else _("AI {kind}").format(kind=kind)


def seat_names(seats: Sequence[str], given: Sequence[str] | None = None, human: str = "human") -> list[str]:
    """The name of each seat: ``given`` ones first (an empty one keeps the default), then "You"
    for a lone person, "Player N" for each person in a hot seat, the AI by its level; the same
    name twice gets a number."""
    people = [i for i, spec in enumerate(seats) if spec == human]
    names = []
    for i, spec in enumerate(seats):
        if given and i < len(given) and given[i].strip():
            names.append(given[i].strip())
        elif spec == human:
            names.append(_("You") if len(people) == 1 else _("Player {n}").format(n=people.index(i) + 1))
        else:
            names.append(agent_name(spec))
    for name in set(names):
        same = [i for i, n in enumerate(names) if n == name]
        if len(same) > 1:
            for k, i in enumerate(same, 1):
                names[i] = f"{name} {k}"
    return names
