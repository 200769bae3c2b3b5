"""The golden playthroughs replayed on a compiled engine, for every game's differential test.

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


DESIGNER_VARIANTS: dict[str, list[dict[str, Any]]] = {
    "exactly": [{"players": 3, "target": 50, "euros_to_win": 2, "cap": 100},
                {"players": 4, "die_zero": 0, "die_question": 2, "cap": 850, "start_coin": "never"},
                {"players": 2, "die_50": 0, "die_20": 3, "die_10": 2, "euros_to_win": 5, "target": 120}],
    "tohm": [{"players": 2, "tris": 2, "tokens": 3, "trophies": 4},
             {"players": 4, "tris": 4, "face_1": False, "face_2": False},
             {"players": 3, "place_anywhere": True, "face_6": False, "trophies": 6, "tokens": 7}],
    "tri": [{"players": 3, "size": 3, "start_0": 0, "start_4": 3, "income_every": 2, "income_6": 0},
            {"players": 4, "size": 3, "elimination_cards": False, "most_dice": 1, "teleports": False},
            {"players": 2, "size": 2, "teleport": "move", "income_every": 0, "start_2": 4, "most_dice": 2}],
    "exagon": [{"players": 2, "clock": None, "go_on": 1, "bonus_3": 0, "hand": 12},
               {"players": 3, "clock": None, "go_on": 3, "bonus_4": 4, "bonus_5": 0},
               {"players": 2, "clock": None, "tournament": True, "tournament_target": 15, "win_points": 10,
                "jolly_penalty": 9, "hand": 6}],
}
"""Designer variants of each game (the rulebook's numbers and switches off their defaults): their
playthroughs on the compiled engine must equal the Python engine's text (no stored file: the Python
engine is the reference)."""


def designer_cases(game_name: str) -> list[tuple[dict[str, Any], int]]:
    """(options, seed) of the designer variants of ``game_name``, two seeds each."""
    return [(options, seed) for options in DESIGNER_VARIANTS.get(game_name, []) for seed in (1, 2)]


def python_text(game_name: str, options: dict[str, Any], seed: int, max_actions: int) -> str:
    """The same playthrough text, played by the Python engine."""
    from ludoteca.core.playthrough import generate as generate_python

    return generate_python(game_name, options, seed, max_actions)
