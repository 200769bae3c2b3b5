"""``ludoteca arena GAME --players N --agents A,B --games G``: agents against each other.

Seats rotate from game to game (in game ``i`` seat ``s`` is played by agent ``(s + i) mod n``
of the lineup), so every agent plays every seat equally often; the number of games is
rounded up to a multiple of the player count. Uses the lab's runner: deterministic for a
seed whatever ``--jobs``, resumable with ``--out``.
"""

from __future__ import annotations

import argparse
import sys

from ludoteca.cli import UsageError
from ludoteca.commands.lab import add_run_arguments, build, check_backend, played_text
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import use_language

HELP = N_("pit agents against each other with seats rotated; win rates with 95% intervals")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, games=200)
    parser.add_argument("--agents", required=True,
                        help=_("agents, comma-separated (e.g. mcts,heuristic); fewer than the players "
                             "repeat in turn (a,b for 4 seats: a,b,a,b)"))
    parser.add_argument("--out", default=None, metavar="DIR",
                        help=_("also keep one row per game here (rerun to resume)"))


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from ludoteca.lab import stats
    from ludoteca.lab.metrics import agent_table
    from ludoteca.lab.report import ci_text, dec, localize, pct, plural, pval, set_language
    from ludoteca.lab.runner import GameError
    from ludoteca.lab.session import run_spec
    from ludoteca.lab.store import StoreError

    set_language(use_language(args.lang))
    check_backend(args)
    spec = build(args, sweeps=[], rotate=True, fill=True, detail=0)
    n = spec.players
    games = args.games
    console = Console()
    if games % n:
        games += n - games % n
        console.print(_("(playing {games}, a multiple of {n}, so that every agent plays every seat equally "
                        "often)").format(games=plural(games, "game"), n=n))
    try:
        outcome = run_spec(spec, games, out=args.out, jobs=args.jobs, backend=args.backend,
                           address=args.address, connect_timeout=args.connect_timeout,
                           progress=not args.no_progress,
                           console=Console(stderr=True))
    except (StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    except GameError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    rows = outcome.rows
    results = agent_table(spec, rows)
    from ludoteca.registry import game_class

    title = _("Arena: {title} with {n} players, {games}, seed {seed} (seats rotated; lineup {lineup})").format(
        title=game_class(spec.game).title, n=n, games=plural(len(rows), "game"), seed=spec.seed,
        lineup=", ".join(spec.lineup))
    t = Table(title=title, title_justify="left")
    columns = (_("agent"), _("seats"), _("win rate"), _("95% CI"), _("fair"), "p", _("wins"), _("by seat"))
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i in (0, 7) else "right")
    for a in results:
        by_seat = "  ".join(f"{b['seat']}: {pct(b['rate'])}" for b in a["by_seat"] if b["rate"] is not None)
        t.add_row(a["agent"], f"{a['instances']}/{n}", pct(a["rate"]), ci_text(a["ci"]), pct(a["fair"]),
                  pval(a["p_value"]), str(a["outright"]), by_seat)
    console.print(t)
    shared = sum(1 for r in rows if len(r["winners"]) > 1)
    limited = sum(1 for r in rows if r["limit"])
    turns = [r["turns"] for r in rows]
    rounds = [r["rounds"] for r in rows]
    console.print(_(
        "draws (shared wins): {shared} ({share})   stopped by turn_limit: {limited}   mean game length: {turns} "
        "turns ({rounds} rounds; median {median}, p90 {p90})").format(
        shared=shared, share=pct(shared / len(rows) if rows else 0.0), limited=limited,
        turns=dec(stats.mean(turns), 1), rounds=dec(stats.mean(rounds), 1),
        median=localize(f"{stats.median(turns):g}"), p90=localize(f"{stats.percentile(turns, 90):g}")))
    console.print(_("win rate: mean return (a shared win counts 1/k); 95% CI: Wilson (on the effective "
                    "sample size when wins are shared); p: test against the fair share (exact binomial, or z "
                    "with the observed variance when wins are shared); wins: games won outright"))
    if outcome.played:
        console.print(played_text(outcome.played, outcome.seconds, outcome.rate, outcome.jobs, outcome.backend))
    return 0
