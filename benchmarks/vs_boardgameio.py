"""ludoteca's server beside boardgame.io's, the same game and the same load, in one run.

    python benchmarks/vs_boardgameio.py [--part fixed|ramp|thousand|all] [--rounds 3]
                                        [--storage memory,flatfile] [--seconds 20] [--json]

boardgame.io 0.50.2 (Node, Koa + socket.io) is installed from the npm registry into a scratch
folder (``--scratch``, default ``~/.cache/ludoteca/boardgameio``) together with the TOHM game
written for it (benchmarks/boardgameio/tohm.js: RULES.md section 3, moves on the server only,
the die rolled by the server at the start of each turn, the legal actions sent in the state as
ludoteca sends them). Its load client (benchmarks/boardgameio/load.js) is the load of
benchmarks/server_load.py written for socket.io: two-player matches, two clients each, every
client answering its turn after a random think time (uniform in [0, 2 * think] s) with a random
legal action; a finished match is replaced by a new one.

ludoteca runs as ``ludoteca serve`` on SQLite (every action committed before it is broadcast);
boardgame.io in memory (nothing written) and, with ``--storage memory,flatfile``, with its
flat-file storage (written after the broadcast, without fsync). The servers take turns, round
after round (``--rounds``), and the figures printed are each configuration's median over the
rounds, with the ratio ludoteca / boardgame.io in memory (below 1 is better for ludoteca):

- ``fixed``: 200 matches at think 0.5 s (about 400 actions/s): latency from an action sent to its
  reaching the opponent's client (p50 / p99), the server's CPU per action, its memory;
- ``ramp``: the think time halved step after step: the most actions/s carried with p99 <= 50 ms;
- ``thousand``: 1,000 matches at think 2 s (about 500 actions/s): p99 and the memory with 1,000
  matches open.

The clients' CPU per action is printed too (they share the 2 cores with the server).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import server_load  # benchmarks/server_load.py: ludoteca's side of the load

HERE = Path(__file__).resolve().parent / "boardgameio"
PACKAGES = ("boardgame.io@0.50.2", "socket.io-client@4")
PARTS = {"fixed": {"tables": 200, "think": 0.5, "ramp": False},
         "ramp": {"tables": 200, "think": 0.25, "ramp": True},
         "thousand": {"tables": 1000, "think": 2.0, "ramp": False}}


def scratch_folder(path: Path) -> Path:
    """The scratch folder with boardgame.io installed and the game, server and load copied in."""
    path.mkdir(parents=True, exist_ok=True)
    if not (path / "node_modules" / "boardgame.io").is_dir():
        if shutil.which("npm") is None:
            raise SystemExit("npm is needed to install boardgame.io (apt-get install npm)")
        (path / "package.json").write_text(json.dumps({"name": "ludoteca-bench", "private": True}))
        print(f"installing {', '.join(PACKAGES)} into {path} ...", flush=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", *PACKAGES], cwd=path, check=True)
    for name in ("tohm.js", "server.js", "load.js"):
        shutil.copyfile(HERE / name, path / name)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def bgio_run(folder: Path, storage: str, args: argparse.Namespace) -> dict[str, Any]:
    """One run of boardgame.io's server under the load; the same result shape as server_load's."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="bgio-") as tmp:
        log = Path(tmp) / "server.log"  # a file, not a pipe: a full pipe would stop the server
        with log.open("w") as sink:
            server = subprocess.Popen(["node", "server.js", str(port), storage, tmp], cwd=folder,
                                      stdout=sink, stderr=subprocess.STDOUT, text=True)
        load = None
        try:
            deadline = time.monotonic() + 30
            while "listening" not in log.read_text() and server.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if "listening" not in log.read_text():
                raise RuntimeError(f"boardgame.io did not start: {log.read_text()[-2000:]}")
            base = f"127.0.0.1:{port}"
            steps = server_load.thinks(args)
            load = subprocess.Popen(["node", "load.js", base, str(args.tables), str(steps[0]), str(args.seed)],
                                    cwd=folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert load.stdin is not None and load.stdout is not None
            began = time.time()
            started = json.loads(load.stdout.readline())["started"]
            setup = time.time() - began
            t0, schedule, stop_at = server_load.plan(steps, args.seconds)
            load.stdin.write(json.dumps({"schedule": schedule, "stop_at": stop_at}) + "\n")
            load.stdin.flush()
            windows = server_load.measure_cpu(server.pid, [load.pid], t0, len(steps), args.seconds)
            rss = server_load.rss_mib(server.pid)
            result = json.loads(load.stdout.readline())
        finally:
            if load is not None:
                load.kill()
            server.terminate()
            server.wait(10)
    measured = server_load.measured_steps(steps, t0, args.seconds, result["samples"], result["peer"], windows)
    out = {"steps": measured, "errors": result["errors"], "games_finished": result["games"],
           "setup_s": round(setup, 1), "tables_started": started, "rss_mib": rss, "tables": args.tables}
    best = [s for s in measured if server_load.worst_p99(s) <= server_load.P99_BAR_MS]
    out["capacity"] = max((s["actions_per_s"] for s in best), default=0.0)
    return out


def ludoteca_run(args: argparse.Namespace) -> dict[str, Any]:
    return server_load.one_run(args, None)


def figures(result: dict[str, Any]) -> dict[str, float]:
    """The figures compared: of the first step (fixed load) and the capacity (ramp)."""
    first = result["steps"][0]
    n = max(1, first["actions"])
    return {"actions/s": first["actions_per_s"],
            "p50 to opponent ms": first["peer_p50_ms"], "p99 to opponent ms": first["peer_p99_ms"],
            "p99 to sender ms": first["p99_ms"],
            "server CPU ms/action": round(1000 * first["cpu_s"]["server"] / n, 3),
            "clients CPU ms/action": round(1000 * first["cpu_s"]["clients"] / n, 3),
            "server RSS MiB": result["rss_mib"],
            "carried at p99<=50ms": result["capacity"],
            "errors": sum(result["errors"].values())}


LOWER_IS_BETTER = {"p50 to opponent ms", "p99 to opponent ms", "p99 to sender ms", "server CPU ms/action",
                   "server RSS MiB", "errors"}


def median_figures(runs: list[dict[str, Any]]) -> dict[str, float]:
    rows = [figures(r) for r in runs]
    return {key: round(statistics.median(r[key] for r in rows), 3) for key in rows[0]}


def table(part: str, results: dict[str, list[dict[str, Any]]]) -> None:
    names = list(results)
    medians = {name: median_figures(runs) for name, runs in results.items()}
    spec = PARTS[part]
    print(f"\n{part}: {spec['tables']} two-player TOHM matches, think {spec['think']} s"
          f"{' halved step by step' if spec['ramp'] else ''}; median of {len(results[names[0]])} round(s)")
    print(f"{'':26}" + "".join(f"{n:>22}" for n in names) + f"{'ludoteca / bgio mem':>22}")
    for key in medians[names[0]]:
        ours, theirs = medians["ludoteca (SQLite)"][key], medians["boardgame.io memory"][key]
        ratio = f"{ours / theirs:.2f}x" if theirs else "-"
        if key in ("actions/s", "clients CPU ms/action", "errors"):
            ratio = ""
        elif key not in LOWER_IS_BETTER:
            ratio += " (higher better)"
        print(f"{key:26}" + "".join(f"{medians[n][key]!s:>22}" for n in names) + f"{ratio:>22}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--part", choices=(*PARTS, "all"), default="all")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the servers taking turns (median printed)")
    parser.add_argument("--storage", default="memory", help="boardgame.io storages: memory, flatfile or both")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds of each load step")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scratch", type=Path, default=Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
                        / "ludoteca" / "boardgameio", help="where boardgame.io is installed")
    parser.add_argument("--json", type=Path, help="write every run's result here")
    args = parser.parse_args()
    storages = [s.strip() for s in args.storage.split(",") if s.strip()]
    if not storages or set(storages) - {"memory", "flatfile"} or not 1 <= args.rounds <= 9 \
            or not 2 <= args.seconds <= 300:
        parser.error("--storage memory|flatfile|memory,flatfile; --rounds 1..9; --seconds 2..300")
    folder = scratch_folder(args.scratch)
    everything: dict[str, Any] = {}
    for part in PARTS if args.part == "all" else [args.part]:
        run_args = argparse.Namespace(**PARTS[part], seconds=args.seconds, seed=args.seed, game="tohm",
                                      client_procs=1, database=None)
        results: dict[str, list[dict[str, Any]]] = {"ludoteca (SQLite)": []}
        results.update({f"boardgame.io {s}": [] for s in storages})
        for k in range(args.rounds):
            order = list(results)
            if k % 2:
                order.reverse()  # alternate who goes first
            for name in order:
                print(f"{part} round {k + 1}: {name} ...", flush=True)
                run_args.seed = args.seed + k
                if name.startswith("ludoteca"):
                    results[name].append(ludoteca_run(run_args))
                else:
                    results[name].append(bgio_run(folder, name.split()[-1], run_args))
        table(part, results)
        everything[part] = results
    print(f"\nload average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    if args.json:
        args.json.write_text(json.dumps(everything))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
