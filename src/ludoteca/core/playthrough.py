"""Golden playthroughs: a seeded random game written out as reviewable text.

Like OpenSpiel's playthroughs: every position's rendering, its legal-action count and the
action taken. A test regenerates each stored file and fails on any difference, so a rule
change always shows up as a visible diff.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ludoteca.core.chance import random_action


def generate(game_name: str, options: dict[str, Any], seed: int, max_actions: int = 400) -> str:
    """The text of a seeded uniformly random game (at most ``max_actions`` actions)."""
    from ludoteca.core.registry import load_game

    game = load_game(game_name, **options)
    rng = random.Random(seed)
    state = game.new_initial_state()
    out = [
        f"game: {game_name}",
        f"options: {json.dumps(game.record_options(), sort_keys=True)}",
        f"seed: {seed}",
        "",
    ]
    step = 0
    while True:
        out.append(f"=== step {step}")
        out.append(f"current_player: {state.current_player()}")
        out.append(state.render().rstrip())
        if state.is_terminal():
            out.append(f"returns: {json.dumps(state.returns())}")
            break
        if step >= max_actions:
            out.append("(stopped: max_actions)")
            break
        legal = state.legal_actions()
        out.append(f"legal_actions: {len(legal)}")
        action = random_action(state, rng)
        out.append(f"action: {json.dumps(state.action_to_json(action), sort_keys=True)}")
        state.apply_action(action)
        step += 1
    out.append(f"final: {json.dumps(state.to_json(), sort_keys=True)}")
    return "\n".join(out) + "\n"
