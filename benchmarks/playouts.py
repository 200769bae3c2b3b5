"""Uniformly random playouts on one core, side by side: the fast path, the checked path, and
(optionally) another revision of ludoteca, in one run.

    python benchmarks/playouts.py [--seconds 2] [--games exactly,tohm] [--against REV]

* ``fast``: ``state.apply_unchecked`` — the path search and simulation use (no checks, no events);
* ``checked``: ``state.apply_action`` — checks legality and builds the action's events (what
  the web and the terminal use);
* ``compiled`` (a game with a built extension: docs/compiled.md): random playouts in C
  (``ludoteca.games.<game>.compiled``), same rules, its own generator; ``x`` = compiled / fast;
* ``pure`` (with ``--pure``): the fast path on the game's Python engine *compiled by Cython as
  it stands* — Cython's pure-Python mode (the ``.py`` files, their annotations read as C types
  where Cython can, no edit), the game's ``__init__.py`` with ``core/game.py`` and
  ``core/chance.py`` (the rest of the fast path), built once under ``build/pure/<game>`` as
  separate modules (``ludoteca`` itself is untouched); ``pure/fast`` = pure / fast. The single-source
  question of docs/compiled.md;
* ``REV`` (with ``--against``): that git revision's ``apply_unchecked`` if it has one, else its
  ``apply_action``, run in a subprocess from ``git archive`` of the revision, alternating
  with this tree's runs so that machine noise hits both alike. ``ratio`` = fast / REV.

Speeds are actions per CPU second (``time.process_time``), the best of ``--repeat`` runs.
Floors: exactly >= 50,000 actions/s, TOHM >= 100,000, TRI >= 20,000, EXAGON >= 5,000.
Compiled target: >= 10x the fast path.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FLOORS = {"exactly": 50_000, "tohm": 100_000, "tri": 20_000, "exagon": 5_000}
"""The fast path's floors; a game not listed has none (its rows say no ``ok``)."""


def player_counts(name: str) -> range:
    """Every player count the game supports (its class's ``min_players`` to ``max_players``)."""
    import ludoteca

    cls = ludoteca.game_class(name)
    return range(cls.min_players, cls.max_players + 1)


def random_play_options(name: str, players: int) -> dict[str, object]:
    """``players``, and no clock for a game that has one (its class's ``clock_option``)."""
    import ludoteca

    options: dict[str, object] = {"players": players}
    clock = ludoteca.game_class(name).clock_option
    if clock is not None:
        options[clock] = None
    return options


def measure(name: str, players: int, seconds: float, path: str, seed: int = 0, engine: Any = None) -> float:
    """Actions per CPU second of random playouts through ``path`` (``fast`` or ``checked``); ``engine``:
    the modules of :func:`pure_engine` instead of ludoteca's."""
    import ludoteca
    from ludoteca.core.chance import random_action

    if engine is None:
        game = ludoteca.load_game(name, **random_play_options(name, players))
    else:
        rules, chance = engine
        random_action = chance.random_action
        game = getattr(rules, ludoteca.game_class(name).__name__)(**random_play_options(name, players))
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
    game = ludoteca.load_game(name, **random_play_options(name, players))  # as measure(): the same game
    state = compiled.CompiledState.initial(game)
    actions, batch = 0, 16
    start = time.process_time()
    while time.process_time() - start < seconds:
        actions += state.playout_actions(batch, seed)
        seed += 1
        batch *= 2
    return actions / (time.process_time() - start)


PURE_MODULES = {"game": "ludoteca/core/game.py", "chance": "ludoteca/core/chance.py"}
"""The modules of the fast path compiled with the game's engine by :func:`pure_engine`."""


def pure_engine(name: str) -> tuple[Any, Any] | None:
    """The game's engine module and ``core.chance``, compiled by Cython in pure-Python mode from
    today's ``.py`` files (copies named ``pure_<game>``, ``pure_game``, ``pure_chance``, their
    imports of each other rewritten, built once under ``build/pure/<game>``), or None (printed
    why) without Cython or a compiler."""
    import importlib

    import ludoteca

    cls = ludoteca.game_class(name)
    source = Path(sys.modules[cls.__module__].__file__ or "")
    out = ROOT / "build" / "pure" / name
    out.mkdir(parents=True, exist_ok=True)
    files = {f"pure_{name}": source, **{f"pure_{k}": ROOT / "src" / v for k, v in PURE_MODULES.items()}}
    for module, path in files.items():
        text = path.read_text()
        for k, v in PURE_MODULES.items():
            text = text.replace(f"from {v[:-3].replace('/', '.')} import", f"from pure_{k} import")
        target = out / f"{module}.py"
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    if not all(any(out.glob(f"{module}.*.so")) for module in files):
        build = ("from setuptools import Extension, setup\nfrom Cython.Build import cythonize\n"
                 f"setup(ext_modules=cythonize([Extension(m, [m + '.py'], extra_compile_args=['-O3']) "
                 f"for m in {sorted(files)!r}], language_level=3, quiet=True), "
                 "script_args=['build_ext', '--inplace'])")
        done = subprocess.run([sys.executable, "-c", build], cwd=out, capture_output=True, text=True)
        if done.returncode:
            print(f"pure: not built ({done.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
            return None
    sys.path.insert(0, str(out))
    return importlib.import_module(f"pure_{name}"), importlib.import_module("pure_chance")


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
    parser.add_argument("--games", default=None, help="comma-separated games (default: every installed game)")
    parser.add_argument("--against", metavar="REV", help="also measure this git revision (e.g. HEAD~3)")
    parser.add_argument("--pure", action="store_true",
                        help="also the game's Python engine compiled by Cython in pure-Python mode (column pure)")
    args = parser.parse_args()
    src = other_revision(args.against) if args.against else None
    import ludoteca

    for name in args.games.split(",") if args.games else ludoteca.GAMES:
        pure = pure_engine(name) if args.pure else None
        for players in player_counts(name):
            fast, checked, other, comp, pures = [], [], [], [], []
            for _ in range(args.repeat):
                if pure is not None:
                    pures.append(measure(name, players, args.seconds, "fast", engine=pure))
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
            if pures:
                row["pure"] = round(max(pures))
                row["pure/fast"] = round(max(pures) / max(fast), 2)
            if src is not None:
                row[args.against] = round(max(other))
                row["ratio"] = round(max(fast) / max(other), 3)
            if name in FLOORS:
                row["floor"] = FLOORS[name]
                row["ok"] = max(fast) >= FLOORS[name]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
