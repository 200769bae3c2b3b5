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


def assert_required_keys_rebuild(s, keys) -> None:
    """RULES.md: "Keys listed are required; implementations may add keys ... a position written by
    one program can be read by another": the required ``keys`` alone rebuild the position of ``s``."""
    d = s.to_json()
    req = {k: d[k] for k in keys}
    s2 = s.game.state_from_json(req)
    assert {k: s2.to_json()[k] for k in keys} == req
    assert legal_json(s2) == legal_json(s) and s2.current_player() == s.current_player()


def play_random_checked(s, rng, history: list, ref) -> None:
    """Play one random legal action of ``s``: its JSON reads back as the same action; it is applied
    to ``s`` and to the reference model ``ref``, which then checks the engine's position."""
    a = rng.choice(s.legal_actions())
    aj = s.action_to_json(a)
    assert s.action_from_json(json.loads(json.dumps(aj))) == a
    s.apply_action(a)
    history.append(aj)
    ref.apply(aj)
    ref.check(s.to_json())
