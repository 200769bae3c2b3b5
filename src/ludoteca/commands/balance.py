"""``ludoteca balance GAME --players N --vary OPTION=A,B,C|LO..HI[/STEP] ... --target T``: the fairest setting.

Races the settings that ``--vary`` makes (every combination) with as few games as possible and
prints the best with its interval, the runner-up and what each setting cost (games, CPU seconds);
the method and its guarantee are in :mod:`ludoteca.lab.balance` and ``docs/lab.md``. With
``--out DIR`` every setting's games are stored as a lab run (``DIR/setting-001``, ...), the result
in ``DIR/balance.json`` (with the run's provenance), and the same command resumes an interrupted
search.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument, add_option_arguments, parse_options
from ludoteca.commands.lab import add_parallel_arguments, positive_int
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

if TYPE_CHECKING:
    from ludoteca.lab.balance import Candidate, RaceResult, Target

HELP = N_("find the fairest setting: race the values of some options (--vary), keep the best, with its interval")
DEFAULT_BUDGET = 2000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    add_option_arguments(parser)
    parser.add_argument("--vary", action="append", default=[], metavar="NAME=A,B|LO..HI[/STEP]",
                        help=_("an option's values to compare: a list (cap=100,150) or whole numbers from LO to "
                               "HI (target=90..110/5); repeatable: every combination is a setting"))
    parser.add_argument("--agents", default="random",
                        help=_("agents by seat, comma-separated, or one for every seat (default random; strong "
                               "for a designer's answer)"))
    parser.add_argument("--target", default="seat-advantage",
                        help=_("what to minimise: seat-advantage (the largest gap between a play-order position's "
                               "win rate and a fair share; default) or length=T (distance of the mean number of "
                               "turns from T)"))
    parser.add_argument("--budget", type=positive_int, default=DEFAULT_BUDGET, metavar="GAMES",
                        help=_("the most games the search plays, all settings together (default {games})").format(
                            games=DEFAULT_BUDGET))
    add_parallel_arguments(parser)
    parser.add_argument("--out", metavar="DIR", default=None,
                        help=_("keep the games and the result (balance.json) in DIR; rerun to resume"))
    parser.add_argument("--no-progress", action="store_true", help=_("no progress bar"))
    add_lang_argument(parser, "output: report, tables and messages")


def check(args: argparse.Namespace) -> None:
    """Everything the search will be refused for, as a UsageError (one line), before a game is played."""
    from ludoteca.lab.balance import build, parse_target, plan

    if args.address and args.backend != "ray":
        raise UsageError(_("--address is for --backend ray"))
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError(_("--backend ray needs Ray: pip install 'ludoteca[ray]'")) from None
    try:
        parse_target(args.target)
        spec = build(args.game, args.vary, players=args.players, agents=args.agents,
                     options=parse_options(args.option or []), seed=args.seed)
        plan(len(spec.variants), args.budget)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


class Progress:
    """The search's progress bar (lab/session.py's) and its estimate, told once the first games are timed."""

    def __init__(self, args: argparse.Namespace, err: Any) -> None:
        from ludoteca.lab.runner import default_jobs

        self.budget = args.budget
        self.stored = bool(args.out)
        self.jobs = args.jobs or default_jobs()
        self.err = err
        self.played = 0
        self.done = 0
        self.began = time.perf_counter()
        self.told = False
        self.bar: Any = None
        self.task: Any = None
        if not args.no_progress:
            from ludoteca.lab.session import _progress

            self.bar = _progress(err, self.budget, 0)
            self.task = self.bar.add_task(_("games (at most)"), total=self.budget, completed=0)
            self.bar.start()

    def stop(self, spent: int | None = None) -> None:
        if self.bar is not None:
            if spent is not None:
                self.bar.update(self.task, total=spent, completed=spent)
            self.bar.stop()
            self.bar = None

    def say(self, text: str) -> None:
        (self.bar.console if self.bar is not None else self.err).print(text)

    def games(self, new: int, reused: int) -> None:
        """``on_games`` of the search: ``new`` games just played, ``reused`` found on disk."""
        if self.played == 0 and new:
            self.began = time.perf_counter()  # the clock of the estimate starts with the first game played
        self.played += new
        self.done += new + reused
        if self.bar is not None:
            self.bar.update(self.task, advance=new + reused)
        if new:
            self._estimate()

    def _estimate(self) -> None:
        from ludoteca.lab.session import ANNOUNCE_AFTER, ESTIMATE_GAMES, duration_text, estimate_text

        if self.told or self.played < max(ESTIMATE_GAMES, 2 * self.jobs):
            return
        self.told = True
        seconds = time.perf_counter() - self.began
        left = seconds / self.played * max(0, self.budget - self.done)
        if left <= ANNOUNCE_AFTER:
            return
        if self.stored:
            self.say(estimate_text(self.budget - (self.done - self.played), self.played, seconds))  # reused aside
        else:
            self.say(_("At most about {time} (the whole budget; the search stops sooner when the best setting is "
                       "clear). Give --out DIR to be able to stop and resume.").format(time=duration_text(left)))

    def round(self, result: RaceResult) -> None:
        """``on_round`` of the search: one line a round."""
        last = result.rounds[-1]
        text = _("Round {round}: {settings}, {games} each").format(
            round=last["round"], settings=_settings(last["alive"]), games=_games(last["games_each"]))
        if last["dropped"]:
            text += "; " + _("dropped: {settings}").format(settings=", ".join(last["dropped"]))
        self.say(text)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ludoteca.lab.balance import RESULT_FILE, search
    from ludoteca.lab.report import set_language
    from ludoteca.lab.runner import GameError

    set_language(use_language(args.lang))
    check(args)
    console = Console()
    err = Console(stderr=True)
    progress = Progress(args, err)
    result = None
    try:
        result = search(args.game, args.vary, players=args.players, agents=args.agents, target=args.target,
                        budget=args.budget, options=parse_options(args.option or []), seed=args.seed,
                        jobs=args.jobs, backend=args.backend, address=args.address, out=args.out,
                        on_games=progress.games, on_round=progress.round)
    except ValueError as exc:  # another search's games in --out, Ray cannot start, ...
        raise UsageError(str(exc)) from None
    except GameError as exc:
        print(f"ludoteca: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.out:
            progress.stop()
            err.print(_("The games done so far are in {out}: run the same command again to continue.").format(
                out=args.out))
        raise
    finally:
        progress.stop(result.spent if result is not None else None)
    print_result(result, console)
    if args.out:
        console.print(_("Details: {file}").format(file=Path(args.out) / RESULT_FILE))
    return 0


def _settings(count: int) -> str:
    return (_("{n} setting") if count == 1 else _("{n} settings")).format(n=count)


def _games(count: float) -> str:
    from ludoteca.lab.report import plural

    return plural(count, "game")


def figure_text(target: Target, value: float | None) -> str:
    """A target's figure for a person: ``3.1 points`` (seat advantage) or ``4.2 turns`` (length)."""
    from ludoteca.lab.report import dec

    if value is None:
        return "-"
    if target.kind == "seat-advantage":
        return _("{x} points").format(x=dec(100 * value, 1))
    return _("{x} turns").format(x=dec(value, 1))


def interval_text(target: Target, low: float | None, high: float | None) -> str:
    """An interval in the figure's unit: ``[0.0, 8.1]`` (``[0,0; 8,1]`` in Italian)."""
    from ludoteca.lab.report import ci_num

    if low is None or high is None:
        return "-"
    scale = 100.0 if target.kind == "seat-advantage" else 1.0
    return ci_num([scale * low, scale * high], 1)


def target_text(target: Target) -> str:
    from ludoteca.lab.report import num

    if target.kind == "seat-advantage":
        return _("seat advantage: the largest gap, in percentage points, between a play-order position's win rate "
                 "and its fair share")
    return _("length: the distance of the mean number of turns from {turns}").format(turns=num(target.goal or 0, 1))


def unit_text(target: Target) -> str:
    """The heading of the figures' column."""
    return _("points") if target.kind == "seat-advantage" else _("turns off")


def status_text(result: RaceResult, c: Candidate) -> str:
    runner = result.runner_up
    if c is result.best:
        return _("best")
    if runner is not None and c is runner:
        return _("runner-up") if c.dropped is None else _("runner-up, out in round {round}").format(
            round=c.dropped)
    if c.dropped is not None:
        return _("out in round {round}").format(round=c.dropped)
    return _("still in")


def stop_text(result: RaceResult) -> str:
    count = len(result.rounds)
    rounds = (_("{n} round") if count == 1 else _("{n} rounds")).format(n=count)
    if result.stop == "separated":
        return _("The best setting was separated from every other after {rounds}: it is the best with at least "
                 "95% confidence.").format(rounds=rounds)
    return _("The budget ended the search after {rounds}, before one setting was separated from the others: the "
             "best is among those still in (95% confidence), and the one named has the smallest estimate.").format(
                 rounds=rounds)


def print_result(result: RaceResult, console: Any) -> None:
    from rich.table import Table

    from ludoteca.lab.report import dec

    target = result.target
    best, runner = result.best, result.runner_up
    console.print(_("Target: {target}.").format(target=target_text(target)))
    console.print(_("Best setting: {setting}: {figure}, interval {interval}").format(
        setting=best.key, figure=figure_text(target, best.estimate),
        interval=interval_text(target, best.low, best.high)))
    if runner is not None:
        console.print(_("Runner-up: {setting}: {figure}, interval {interval}").format(
            setting=runner.key, figure=figure_text(target, runner.estimate),
            interval=interval_text(target, runner.low, runner.high)))
    console.print(stop_text(result))
    table = Table(show_header=True, header_style="bold")
    table.add_column(_("setting"))
    table.add_column(_("games"), justify="right", no_wrap=True)
    table.add_column(_("CPU s"), justify="right", no_wrap=True)
    table.add_column(unit_text(target), justify="right", no_wrap=True)
    table.add_column(_("interval"), justify="right", no_wrap=True)
    table.add_column(_("status"), no_wrap=True)
    scale = 100.0 if target.kind == "seat-advantage" else 1.0
    for c in sorted(result.candidates, key=lambda c: (c.dropped is not None, -(c.dropped or 0), c.estimate)):
        table.add_row(c.key, dec(c.games, 0, group=True), dec(c.cpu, 1, group=True),
                      dec(scale * c.estimate, 1) if math.isfinite(c.estimate) else "-",
                      interval_text(target, c.low, c.high), status_text(result, c))
    console.print(table)
    console.print(_("The intervals hold at 95% for all the settings and rounds together (Bonferroni), so they are "
                    "wider than a single 95% interval; see docs/lab.md."))
    console.print(_("{games} of a budget of {budget}, {seconds} CPU s in all.").format(
        games=_games(result.spent), budget=dec(result.budget, 0, group=True),
        seconds=dec(sum(c.cpu for c in result.candidates), 1, group=True)))
