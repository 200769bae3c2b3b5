"""The golden playthroughs replayed on a compiled engine (issue 15), for every game's differential test.

:func:`generate` is ``ludoteca.core.playthrough.generate`` with the compiled engine playing: the
positions are the compiled ones (rendered through ``to_state``), the legal actions and the chance
outcomes too, so the text must equal the stored file of the Python engine.
"""

from __future__ import annotations

import json
import random
from typing import Any

import ludoteca
from ludoteca.core.chance import sample_outcome


def generate(game_name: str, compiled_state: Any, options: dict[str, Any], seed: int, max_actions: int) -> str:
    """The playthrough text of ``game_name`` with ``options`` and ``seed``, played by the compiled engine
    (``compiled_state``: the game's ``compiled.CompiledState`` class)."""
    game = ludoteca.load_game(game_name, **options)
    rng = random.Random(seed)
    c = compiled_state.initial(game)
    out = [f"game: {game_name}", f"options: {json.dumps(game.record_options(), sort_keys=True)}",
           f"seed: {seed}", ""]
    step = 0
    while True:
        view = c.to_state()
        out.append(f"=== step {step}")
        out.append(f"current_player: {c.current_player()}")
        out.append(view.render().rstrip())
        if c.is_terminal():
            out.append(f"returns: {json.dumps(c.returns())}")
            break
        if step >= max_actions:
            out.append("(stopped: max_actions)")
            break
        legal = c.legal_actions()
        out.append(f"legal_actions: {len(legal)}")
        if c.is_chance_node():
            action = sample_outcome(c.chance_outcomes(), rng)
        else:
            action = legal[rng.randrange(len(legal))]
        out.append(f"action: {json.dumps(view.action_to_json(action), sort_keys=True)}")
        c.apply_action(action)
        step += 1
    out.append(f"final: {json.dumps(c.to_json(), sort_keys=True)}")
    return "\n".join(out) + "\n"


def cases(game_name: str) -> list[tuple[str, dict[str, Any], int, int]]:
    """The golden playthroughs of ``game_name``: (file stem, options, seed, action limit)."""
    from tests.test_playthroughs import CASES

    return [(stem, options, seed, limit) for stem, game, options, seed, limit in CASES if game == game_name]
