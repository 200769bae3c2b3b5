"""Hidden information for the search: determinization and per-seat observation of actions.

Only TRI hides anything during play (a battle's rolls and the attacker's card are secret until
the reveal). For such a game the search must not read the real position:

* :func:`worlds` rebuilds every position consistent with ``state.observation(seat)`` — the
  hidden values re-sampled, with their probabilities — through ``game.state_from_json``;
* :func:`labeler` says how each seat observes an action (a hidden one becomes ``None``), so
  that each seat's search tree only branches on what that seat can see.

Games without hidden information return ``None`` from :func:`worlds` and are searched on the
real state.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from ludoteca.core.game import Action, State

Worlds = tuple[list[State], list[float]]


def worlds(state: State, seat: int) -> Worlds | None:
    """The positions ``seat`` cannot tell apart from ``state``, with their weights; ``None``
    when ``seat`` sees everything that matters (search the real state)."""
    fn = _WORLDS.get(state.game.name)
    return fn(state, seat) if fn is not None else None


def labeler(game_name: str) -> Callable[[State, Action, int], Any]:
    """``label(state, action, seat)``: what ``seat`` observes when ``action`` is played in
    ``state`` (the action itself when public; ``None`` or a partial view when hidden)."""
    return _LABELERS.get(game_name, _public)


def _public(state: State, action: Action, seat: int) -> Any:
    return action


# --- TRI ------------------------------------------------------------------------------

def _tri_roll_probs(dice: int) -> list[tuple[int, float]]:
    """The highest of ``dice`` dice: ``(v^k - (v-1)^k) / 6^k``."""
    k = max(1, dice)
    return [(v, (v**k - (v - 1) ** k) / 6**k) for v in range(1, 7)]


def _tri_worlds(state: State, seat: int) -> Worlds | None:
    obs = state.observation(seat)
    battle = obs.get("battle")
    if not battle:
        return None
    hidden: list[tuple[str, list[tuple[Any, float]]]] = []
    attacker, defender = battle["attacker"], battle["defender"]
    step = battle["step"]
    order = ("attacker_roll", "defender_roll", "attacker_card", "defender_card", "void")
    pos = order.index(step) if step in order else len(order)
    # values already decided but not shown to this seat
    if pos > 0 and battle.get("attacker_roll") is None and seat != attacker:
        hidden.append(("attacker_roll", _tri_roll_probs(battle.get("dice", 1))))
    if pos > 1 and battle.get("defender_roll") is None and seat != defender:
        hidden.append(("defender_roll", _tri_roll_probs(1)))
    if pos > 2 and battle.get("attacker_card") is None and seat != attacker:
        hand = sorted(set(obs["hands"][attacker])) or [0]
        hidden.append(("attacker_card", [(card, 1 / len(hand)) for card in hand]))
    if not hidden:
        return None
    game = state.game
    states: list[State] = []
    weights: list[float] = []
    for combo in itertools.product(*(values for _, values in hidden)):
        data = dict(obs)
        b = dict(battle)
        w = 1.0
        for (key, _), (value, p) in zip(hidden, combo, strict=True):
            b[key] = value
            w *= p
        b.pop("hidden", None)
        data["battle"] = b
        if w <= 0:
            continue
        states.append(game.state_from_json(data))
        weights.append(w)
    return states, weights


def _tri_label(state: Any, action: Action, seat: int) -> Any:
    from ludoteca.games import tri

    if state.phase != tri.BATTLE:
        return action
    step = state.b_step
    if step == tri.A_ROLL or step == tri.A_CARD:  # the attacker's roll and card: theirs only
        return action if seat == state.b_att else None
    if step == tri.D_ROLL:  # the defender's roll: theirs only
        return action if seat == state.b_def else None
    if step == tri.D_CARD:  # the reveal: both rolls and both cards become public
        return (action, state.b_aroll, state.b_droll, state.b_acard)
    return action


_WORLDS: dict[str, Callable[[State, int], Worlds | None]] = {"tri": _tri_worlds}
_LABELERS: dict[str, Callable[[State, Action, int], Any]] = {"tri": _tri_label}
