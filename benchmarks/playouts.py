"""Uniformly random playouts on one core: one JSON line per game and player count.

    python benchmarks/playouts.py [--seconds 2] [--games exactly,tohm]

Floors (issue 2): exactly >= 50,000 actions/s, TOHM >= 100,000, TRI >= 20,000, EXAGON >= 5,000.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import ludoteca
from ludoteca.core.chance import random_action

PLAYERS = {"exactly": range(2, 7), "tri": range(2, 5), "tohm": range(2, 6), "exagon": range(2, 6)}
FLOORS = {"exactly": 50_000, "tohm": 100_000, "tri": 20_000, "exagon": 5_000}


def measure(name: str, players: int, seconds: float, seed: int = 0) -> dict:
    options = {"players": players}
    if name == "exagon":
        options["clock"] = None
    game = ludoteca.load_game(name, **options)
    rng = random.Random(seed)
    games = actions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(random_action(state, rng))
            actions += 1
        games += 1
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - start
    return {
        "game": name, "players": players,
        "games_per_s": round(games / elapsed, 2), "actions_per_s": round(actions / elapsed),
        "floor_actions_per_s": FLOORS[name], "ok": actions / elapsed >= FLOORS[name],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per game and player count")
    parser.add_argument("--games", default=",".join(ludoteca.GAMES))
    args = parser.parse_args()
    for name in args.games.split(","):
        for players in PLAYERS[name]:
            print(json.dumps(measure(name, players, args.seconds)), flush=True)


if __name__ == "__main__":
    main()
