"""Uniformly random playouts on one core, side by side: the fast path, the checked path, and
(optionally) another revision of ludoteca, in one run.

    python benchmarks/playouts.py [--seconds 2] [--games exactly,tohm] [--against REV]

* ``fast``: ``state.apply_unchecked`` — the path search and simulation use (no checks, no events);
* ``checked``: ``state.apply_action`` — checks legality and builds the action's events (what
  the web and the terminal use);
* ``compiled`` (a game with a built extension: docs/compiled.md): random playouts in C
  (``ludoteca.games.<game>.compiled``), same rules, its own generator; ``x`` = compiled / fast;
* ``REV`` (with ``--against``): that git revision's ``apply_unchecked`` if it has one, else its
  ``apply_action``, run in a subprocess from ``git archive`` of the revision, alternating
  with this tree's runs so that machine noise hits both alike. ``ratio`` = fast / REV.

Speeds are actions per CPU second (``time.process_time``), the best of ``--repeat`` runs.
Floors (issue 2): exactly >= 50,000 actions/s, TOHM >= 100,000, TRI >= 20,000, EXAGON >= 5,000.
Compiled target (issue 15): >= 10x the fast path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = {"exactly": range(2, 7), "tri": range(2, 5), "tohm": range(2, 6), "exagon": range(2, 6)}
FLOORS = {"exactly": 50_000, "tohm": 100_000, "tri": 20_000, "exagon": 5_000}


def measure(name: str, players: int, seconds: float, path: str, seed: int = 0) -> float:
    """Actions per CPU second of random playouts through ``path`` (``fast`` or ``checked``)."""
    import ludoteca
    from ludoteca.core.chance import random_action

    options: dict[str, object] = {"players": players}
    if name == "exagon":
        options["clock"] = None
    game = ludoteca.load_game(name, **options)
    rng = random.Random(seed)
    actions = 0
    start = time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_initial_state()
        play = getattr(state, "apply_unchecked", None) if path == "fast" else None
        play = play or state.apply_action
        while not state.is_terminal():
            play(random_action(state, rng))
            actions += 1
        if time.process_time() >= deadline:
            break
    return actions / (time.process_time() - start)


def compiled_engine(name: str) -> bool:
    """True when ``name`` has a compiled engine that is built (``ludoteca.games.<name>.compiled``)."""
    import importlib

    try:
        compiled = importlib.import_module(f"ludoteca.games.{name}.compiled")
    except ImportError:  # no compiled engine for this game
        return False
    return bool(compiled.available())


def measure_compiled(name: str, players: int, seconds: float, seed: int = 0) -> float:
    """Actions per CPU second of random playouts in the compiled engine, from the initial state
    (batches of playouts in C, doubled until ``seconds`` of CPU time are spent)."""
    import importlib

    import ludoteca

    compiled = importlib.import_module(f"ludoteca.games.{name}.compiled")
    options: dict[str, object] = {"players": players}
    if name == "exagon":
        options["clock"] = None  # as measure(): the same game on both sides
    game = ludoteca.load_game(name, **options)
    state = compiled.CompiledState.initial(game)
    actions, batch = 0, 16
    start = time.process_time()
    while time.process_time() - start < seconds:
        actions += state.playout_actions(batch, seed)
        seed += 1
        batch *= 2
    return actions / (time.process_time() - start)


def other_revision(rev: str) -> Path:
    """``git archive`` of ``rev``'s src/ into a temporary folder; returns that src folder."""
    out = Path(tempfile.mkdtemp(prefix="ludoteca-rev-"))
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    tar = out / "src.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(out, filter="data")
    return out / "src"


def measure_in(src: Path, name: str, players: int, seconds: float) -> float:
    """The same measure, run by another revision's code in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import playouts; "
            f"print(playouts.measure({name!r}, {players}, {seconds}, 'fast'))")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU time per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (the best is kept)")
    parser.add_argument("--games", default="exactly,tri,tohm,exagon")
    parser.add_argument("--against", metavar="REV", help="also measure this git revision (e.g. HEAD~3)")
    args = parser.parse_args()
    src = other_revision(args.against) if args.against else None
    for name in args.games.split(","):
        for players in PLAYERS[name]:
            fast, checked, other, comp = [], [], [], []
            for _ in range(args.repeat):
                fast.append(measure(name, players, args.seconds, "fast"))
                checked.append(measure(name, players, args.seconds, "checked"))
                if compiled_engine(name):
                    comp.append(measure_compiled(name, players, args.seconds))
                if src is not None:
                    other.append(measure_in(src, name, players, args.seconds))
            row: dict[str, object] = {"game": name, "players": players, "fast": round(max(fast)),
                                      "checked": round(max(checked))}
            if comp:
                row["compiled"] = round(max(comp))
                row["x"] = round(max(comp) / max(fast), 1)
            if src is not None:
                row[args.against] = round(max(other))
                row["ratio"] = round(max(fast) / max(other), 3)
            row["floor"] = FLOORS[name]
            row["ok"] = max(fast) >= FLOORS[name]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
