"""The JSON of a broadcast's parts with the standard library and with the server's codec.

    python benchmarks/codec.py [--game tohm] [--positions 60] [--repeat 200]

Plays one random game, and for each position before a move times the encoding of what every
broadcast carries: the position (``to_json``) and the legal moves (canonical JSON), with
``json.dumps`` and with ``ludoteca.web.codec.dumps`` (orjson when installed). Prints the mean
microseconds of CPU per position and the mean size of the text (docs/web.md, "Speed against
boardgame.io").
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from ludoteca.registry import load_game
from ludoteca.web import codec


def positions(game_name: str, most: int, seed: int) -> list[tuple[Any, Any]]:
    """(position JSON, legal moves JSON) of the positions of a random game, a player to move."""
    rng = random.Random(seed)
    state = load_game(game_name).new_initial_state()
    out: list[tuple[Any, Any]] = []
    while not state.is_terminal() and len(out) < most:
        if state.is_chance_node():
            state.apply_action(rng.choice([a for a, _ in state.chance_outcomes()]))
            continue
        legal = state.legal_actions()
        out.append((state.to_json(), [state.action_to_json(a) for a in legal]))
        state.apply_action(rng.choice(legal))
    return out


def micros(encode: Callable[[Any], str], parts: list[tuple[Any, Any]], repeat: int) -> float:
    start = time.process_time()
    for _ in range(repeat):
        for position, legal in parts:
            encode(position)
            encode(legal)
    return 1e6 * (time.process_time() - start) / (repeat * len(parts))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--game", default="tohm")
    parser.add_argument("--positions", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not 1 <= args.positions <= 1000 or not 1 <= args.repeat <= 10_000:
        parser.error("--positions 1..1000, --repeat 1..10000")
    parts = positions(args.game, args.positions, args.seed)
    size = sum(len(codec.dumps(p)) + len(codec.dumps(legal)) for p, legal in parts) / max(1, len(parts))
    print(f"{args.game}: {len(parts)} positions, position + legal moves {size:.0f} bytes of JSON on average")
    stdlib = micros(lambda v: json.dumps(v, separators=(",", ":")), parts, args.repeat)
    ours = micros(codec.dumps, parts, args.repeat)
    name = "orjson" if codec.orjson is not None else "json"
    print(f"  json.dumps: {stdlib:.1f} us   ludoteca.web.codec.dumps ({name}): {ours:.1f} us   "
          f"({stdlib / max(ours, 1e-9):.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
