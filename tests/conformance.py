"""Helpers shared by the RULES.md conformance tests (tests/test_conformance_*.py)."""

from __future__ import annotations

import json

from ludoteca import IllegalActionError


def key(j) -> str:
    """A JSON value as a comparable string."""
    return json.dumps(j, sort_keys=True)


def legal_json(s) -> set[str]:
    """The legal actions of ``s`` as canonical JSON keys."""
    return {key(s.action_to_json(a)) for a in s.legal_actions()}


def parse_then_apply_problems(s, actions) -> list[str]:
    """RULES.md: "`action_from_json` rejects only ill-formed actions; `apply_action` rejects any
    action that is not legal in the position." Every well-formed action must parse; an illegal
    one must be refused by ``apply_action`` with the state unchanged. (``elapsed`` is EXAGON's
    timing, not part of which action it is.)"""
    legal = legal_json(s)
    problems = []
    for aj in actions:
        try:
            a = s.action_from_json(aj)
        except IllegalActionError as exc:
            problems.append(f"{aj} rejected by action_from_json in phase {s.to_json()['phase']}: {exc}")
            continue
        c = s.clone()
        before = c.to_json()
        if key({k: v for k, v in aj.items() if k != "elapsed"}) in legal:
            c.apply_action(a)
            continue
        try:
            c.apply_action(a)
            problems.append(f"{aj} (not legal) was applied in phase {before['phase']}")
        except IllegalActionError:
            assert c.to_json() == before
    return problems
