"""``ludoteca lab GAME --players N --agents A[,B...] --games G --out DIR``: the balance lab.

Plays many games (in parallel, deterministically, resumably), then writes ``DIR/report.html``
and ``DIR/summary.json`` and prints a short table. See ``docs/lab.md``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument, add_option_arguments, parse_options
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language
from ludoteca.lab import CONNECT_TIMEOUT

if TYPE_CHECKING:
    from ludoteca.lab.runner import RunSpec

HELP = N_("simulate many games and report balance: win rate by seat, lengths, metrics, sweeps")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("invalid whole number: {text}").format(text=repr(text))) from None
    if value < 1:
        raise argparse.ArgumentTypeError(_("must be 1 or more, not {value}").format(value=value))
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("invalid number of seconds: {text}").format(text=repr(text))) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(_("must be a number of seconds above 0, not {text}").format(text=text))
    return value


def add_parallel_arguments(parser: argparse.ArgumentParser) -> None:
    """``--seed``, ``--jobs``, ``--backend``, ``--address``: how a run's games are seeded and spread
    (``lab``, ``arena``, ``balance``)."""
    parser.add_argument("--seed", type=int, default=0, help=_("master seed (default 0): same seed, same results"))
    parser.add_argument("--jobs", "-j", type=positive_int, default=None,
                        help=_("parallel workers (default: every core)"))
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help=_("local processes (default) or Ray"))
    parser.add_argument("--address", default=None,
                        help=_("with --backend ray: the Ray cluster to join (default: start Ray locally)"))


def add_run_arguments(parser: argparse.ArgumentParser, *, games: int, per_variant: bool = False) -> None:
    """Arguments shared by ``lab`` and ``arena``."""
    add_game_argument(parser)
    add_option_arguments(parser)
    parser.add_argument("--games", type=positive_int, default=games,
                        help=(_("games to play (per variant; default {games})") if per_variant
                              else _("games to play (default {games})")).format(games=games))
    add_parallel_arguments(parser)
    parser.add_argument("--connect-timeout", type=positive_seconds, default=CONNECT_TIMEOUT, metavar="SECONDS",
                        help=_("with --address: give up if the Ray cluster does not answer within SECONDS "
                               "(default {seconds})").format(seconds=f"{CONNECT_TIMEOUT:g}"))
    parser.add_argument("--no-progress", action="store_true", help=_("no progress bar"))
    add_lang_argument(parser, "output: report, tables and messages")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser, games=1000, per_variant=True)
    parser.add_argument("--agents", default="random",
                        help=_("agents by seat, comma-separated, or one for every seat (default random)"))
    parser.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2",
                        help=_("compare option values (repeatable: every combination); "
                             "'default' stands for the game's default"))
    parser.add_argument("--rotate", action="store_true",
                        help=_("rotate the agents round the seats from game to game"))
    parser.add_argument("--out", required=True, metavar="DIR",
                        help=_("results directory (games.jsonl, report.html, summary.json); rerun to resume"))
    parser.add_argument("--detail", type=int, default=8, metavar="K",
                        help=_("measure every decision (branching, decision factor, drama) in every K-th "
                             "game (default 8; 1: every game, a little slower; 0: none)"))
    parser.add_argument("--no-report", action="store_true", help=_("skip report.html (no matplotlib needed)"))
    parser.add_argument("--luck", type=int, default=0, metavar="N",
                        help=_("also measure the luck share: N games of each variant played again, the luck of "
                               "every chance event measured (slow: seconds a game; docs/lab.md)"))
    parser.add_argument("--estimate", action="store_true",
                        help=_("only estimate how long the run takes: play and time a few games, play no more"))
    parser.add_argument("--csv", metavar="FILE", default=None,
                        help=_("also write the games as CSV (one row a game, for a spreadsheet or pandas)"))


def check_backend(args: argparse.Namespace) -> None:
    if args.address and args.backend != "ray":
        raise UsageError(_("--address is for --backend ray"))
    if args.connect_timeout != CONNECT_TIMEOUT and not args.address:
        raise UsageError(_("--connect-timeout is for --backend ray --address ADDR"))
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError(_("--backend ray needs Ray: pip install 'ludoteca[ray]'")) from None


def build(args: argparse.Namespace, *, sweeps: list[str], rotate: bool, fill: bool, detail: int) -> RunSpec:
    from ludoteca.lab.plan import build_spec

    options = parse_options(args.option or [])
    try:
        return build_spec(args.game, args.players, args.agents.split(","), options, sweeps, args.seed,
                          rotate=rotate, fill=fill, detail=detail)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ludoteca.lab.metrics import summarise
    from ludoteca.lab.report import dec, print_tables, set_language, write_summary
    from ludoteca.lab.report_html import write_html
    from ludoteca.lab.runner import GameError
    from ludoteca.lab.session import run_spec
    from ludoteca.lab.store import StoreError

    set_language(use_language(args.lang))
    check_backend(args)
    if not args.no_report:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError(_("the HTML report needs matplotlib: pip install 'ludoteca[lab]' "
                               "(or use --no-report)")) from None
    spec = build(args, sweeps=args.sweep, rotate=args.rotate, fill=False, detail=args.detail)
    games = args.games
    if args.rotate and games % spec.rotation_period:
        games += spec.rotation_period - games % spec.rotation_period
    console = Console()
    err = Console(stderr=True)
    if args.estimate:
        return estimate(spec, games, args, console)
    try:
        outcome = run_spec(spec, games, out=args.out, jobs=args.jobs, backend=args.backend,
                           address=args.address, connect_timeout=args.connect_timeout,
                           progress=not args.no_progress, console=err)
    except (StoreError, ValueError) as exc:  # another run in DIR, Ray cannot start, ...
        raise UsageError(str(exc)) from None
    except GameError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        err.print(_("The games done so far are in {out}: run the same command again to continue.").format(
            out=args.out))
        raise
    if outcome.played:
        text = played_text(outcome.played, outcome.seconds, outcome.rate, outcome.jobs, outcome.backend)
        if outcome.resumed:
            text += (_("; {count} was already done") if outcome.resumed == 1
                     else _("; {count} were already done")).format(count=outcome.resumed)
        console.print(text)
    elif outcome.resumed == 1:
        console.print(_("The only game was already done in {out}.").format(out=args.out))
    else:
        console.print(_("All {count} games were already done in {out}.").format(
            count=dec(outcome.resumed, 0, group=True), out=args.out))
    summary = summarise(spec, outcome.rows, games)
    summary["provenance"] = outcome.extra.get("provenance")
    if args.luck > 0:
        from ludoteca.lab.luck import measure

        summary["luck"] = measure(spec, min(args.luck, games), progress=not args.no_progress, console=err)
    out = Path(args.out)
    write_summary(summary, out / "summary.json")
    if args.csv:
        from ludoteca.lab.api import rows_to_csv

        rows_to_csv(outcome.rows, args.csv)
    if not args.no_report:
        from_shell = sys.argv[1:2] == ["lab"]
        command = "ludoteca " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if from_shell else None
        write_html(summary, outcome.rows, out / "report.html", command)
    print_tables(summary, console)
    if summary.get("luck"):
        from ludoteca.lab.luck import print_luck

        print_luck(summary, console)
    console.print(_("Report: {report}  summary: {summary}  rows: {rows}").format(
        report=out / "report.html" if not args.no_report else _("(skipped)"), summary=out / "summary.json",
        rows=out / "games.jsonl"))
    return 0


def estimate(spec: RunSpec, games: int, args: argparse.Namespace, console: Any) -> int:
    """``--estimate``: a pilot of a few games per variant (not stored), timed; the whole run's estimate."""
    from ludoteca.lab.runner import GameError, default_jobs
    from ludoteca.lab.session import ESTIMATE_GAMES, estimate_text, run_spec

    jobs = args.jobs or default_jobs()
    pilot = min(games, max(2, -(-max(ESTIMATE_GAMES, 2 * jobs) // len(spec.variants))))
    try:
        outcome = run_spec(spec, pilot, jobs=jobs, backend=args.backend, address=args.address,
                           connect_timeout=args.connect_timeout, progress=False)
    except GameError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    # the pilot ran on ``jobs`` processes: its wall time per game is what the whole run will see
    console.print(estimate_text(games * len(spec.variants), outcome.played, outcome.seconds))
    return 0


def played_text(played: int, seconds: float, rate: float, jobs: int, backend: str) -> str:
    """``"20 games in 0.1 s (200.0 games/s, 2 jobs, local)"`` in the current language."""
    from ludoteca.lab.report import dec, plural

    return _("{games} in {seconds} s ({rate} games/s, {jobs}, {backend})").format(
        games=plural(played, "game"), seconds=dec(seconds, 1), rate=dec(rate, 1, group=True),
        jobs=plural(jobs, "job"), backend=backend)
