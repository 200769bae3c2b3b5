"""``ludoteca analyse RECORD [--json OUT] [--lang it]``: was it skill or luck? (docs/analysis.md)

Reads a game record (as ``ludoteca replay`` does) and prints, move by move, the loss of every
decision against the best move found with its label, the luck of every chance outcome for each
player, a summary per player and the three moments that decided the game; ``--json OUT`` writes
every figure as JSON. A progress bar runs on standard error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ludoteca.cli import UsageError
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("analyse a game record: the loss of every move against the best one, the luck of every roll")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help=_("a game record (JSON) written by ludoteca"))
    parser.add_argument("--json", metavar="OUT", help=_("also write every figure as JSON to this file"))
    parser.add_argument("--iterations", type=int, default=None,
                        help=_("simulations of the search per position, where the game is not solved "
                               "(default: the game's tuned search budget, at most 400; five times that where "
                               "the search is compiled)"))
    parser.add_argument("--seed", type=int, default=0, help=_("seed of the search (default 0)"))
    parser.add_argument("--no-progress", action="store_true", help=_("no progress bar"))
    add_lang_argument(parser, "messages")


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from ludoteca.analysis import analyse
    from ludoteca.analysis.review import LABELS, seat_name
    from ludoteca.core.records import Record, RecordError

    use_language(args.lang)
    if args.iterations is not None and not 1 <= args.iterations <= 1_000_000:
        raise UsageError(_("--iterations must be a whole number from 1 to 1000000, not {value}").format(
            value=args.iterations))
    try:
        record = Record.load(args.file)
        err = Console(stderr=True)
        with Progress(console=err, disable=args.no_progress, transient=True) as bar:
            task = bar.add_task(_("analysing"), total=max(1, len(record.actions)))
            result = analyse(record, iterations=args.iterations, seed=args.seed,
                             progress=lambda done, total: bar.update(task, completed=done, total=max(1, total)))
    except (RecordError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    out = Console(highlight=False)
    method = _("exact values (the game is solved)") if result.evaluator == "exact" else _(
        "estimates of a search ({iterations} simulations per position)").format(iterations=result.iterations)
    out.print(_("Analysis of a game of {game}: {method}.").format(game=record.load_game().title, method=method))
    for s in result.steps:
        who = seat_name(s.seat)
        if s.kind == "decision":
            line = _("{step}. {who}: {move} — win chance {played} (best {best})").format(
                step=s.step + 1, who=who, move=s.text, played=_percent(s.played or 0.0), best=_percent(s.best or 0.0))
            if s.label:
                line += " — " + _("{label}, better: {best}").format(label=_(LABELS[s.label]), best=s.best_text)
        else:
            line = _("{step}. {what}").format(step=s.step + 1, what=s.text)
            if s.luck is not None:
                line += " — " + _("luck: {luck}").format(luck=", ".join(
                    f"{seat_name(p)} {100 * x:+.1f}" for p, x in enumerate(s.luck)))
        out.print(line)
    out.print("")
    out.print(_("Summary"))
    for row in result.summary:
        out.print(_("{who}: moves: {moves}, inaccuracies: {inaccuracies}, mistakes: {mistakes}, blunders: "
                    "{blunders}, average loss: {loss} points, luck: {luck} points").format(
            who=seat_name(row["seat"]), moves=row["moves"],
            inaccuracies=row["inaccuracies"], mistakes=row["mistakes"], blunders=row["blunders"],
            loss=f"{100 * row['average_loss']:.1f}", luck=f"{100 * row['luck']:+.1f}"))
    if result.moments:
        out.print("")
        out.print(_("The moments that decided the game"))
        for text in result.moments:
            out.print("• " + text)
    if args.json:
        try:
            Path(args.json).write_text(json.dumps(result.to_json(), indent=1, ensure_ascii=False) + "\n",
                                       encoding="utf-8")
        except OSError as exc:
            raise UsageError(_("cannot write {path}: {error}").format(path=args.json, error=exc.strerror)) from None
    return 0
