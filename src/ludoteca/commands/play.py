"""``ludoteca play GAME --players N --seats human,mcts [--seed S]``: play in the terminal."""

from __future__ import annotations

import argparse
import random

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_option_arguments, load_game_from_args
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language
from ludoteca.registry import GAMES

HELP = N_("play in the terminal: hot seat with friends and/or against AI seats")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", nargs="?", type=str.lower,
                        help=_("one of: {games} (not with --load)").format(games=", ".join(GAMES)))
    add_option_arguments(parser)
    parser.add_argument("--seats", default=None,
                        help=_("comma-separated, one per seat: human or an agent "
                               "(random, heuristic, mcts:seconds=1)"))
    parser.add_argument("--seed", type=int, default=None, help=_("seed for the dice and the agents"))
    parser.add_argument("--clock", default=None, metavar="SECONDS",
                        help=_("for a game with a clock: seconds per turn, or 'none' to play without "
                               "(default: the rules' own)"))
    parser.add_argument("--names", default=None,
                        help=_("comma-separated names of the players, one per seat (default: You, the AI by "
                               "its level)"))
    parser.add_argument("--load", metavar="FILE", help=_("continue a game saved with 'save FILE'"))
    parser.add_argument("--hint-agent", default="heuristic", help=_("the agent that answers 'hint'"))
    parser.add_argument("--coach", action="store_true",
                        help=_("after each of your moves, its loss of win chance against the best move, and the "
                               "better move"))
    add_lang_argument(parser, "game's messages")


NO_CLOCK = ("none", "off", "no", "null")


def clock_seconds(text: str | None) -> float | str | None:
    """``--clock``'s value: seconds (a positive number), ``"none"`` (no clock), or None when not
    given. UsageError for anything else."""
    if text is None:
        return None
    low = text.strip().lower()
    if low in NO_CLOCK or low == _("none").lower():
        return "none"
    try:
        seconds = float(low)
    except ValueError:
        seconds = -1.0
    if not seconds > 0 or seconds == float("inf"):
        raise UsageError(_("--clock takes a number of seconds above 0, or none; not {value}").format(
            value=repr(text)))
    return seconds


def clock_options(name: str, clock: float | str | None) -> list[str]:
    """The ``--option`` that sets the game's clock: ``--clock`` seconds or ``none``; nothing (the
    rules' default) without ``--clock``. UsageError for ``--clock`` with a game that has no clock."""
    from ludoteca.registry import game_class

    try:
        option = game_class(name).clock_option
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if option is None:
        if clock is not None:
            clocked = [game_class(n).title for n in GAMES if game_class(n).clock_option is not None]
            raise UsageError(_("--clock is for {games} only").format(
                games=_(" and ").join(clocked) or _("games with a clock")))
        return []
    if clock is None:
        return []
    return [f"{option}={'null' if clock == 'none' else clock}"]


def run(args: argparse.Namespace) -> int:
    from ludoteca.agents import make_agent
    from ludoteca.core.records import Record, RecordError
    from ludoteca.play.session import HUMAN, Session
    from ludoteca.play.terminal import TerminalPlay

    use_language(args.lang)
    clock = clock_seconds(args.clock)
    names = [x.strip() for x in args.names.split(",")] if args.names else None
    seats = [x.strip().lower() for x in args.seats.split(",")] if args.seats else None
    if seats:
        for spec in seats:
            if spec != HUMAN:
                try:
                    make_agent(spec)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
    if names is not None and seats is not None and len(names) > len(seats):
        raise UsageError(_("{count} names given for {seats} seats").format(count=len(names), seats=len(seats)))
    try:
        if args.load:
            if args.game:
                raise UsageError(_("give either GAME or --load FILE, not both"))
            session = Session.from_record(Record.load(args.load), seats, args.seed, names)
        else:
            if not args.game:
                raise UsageError(_("name a game ({games}) or --load FILE").format(games=", ".join(GAMES)))
            if args.players is None and seats:
                args.players = len(seats)
            args.option = [*args.option, *clock_options(args.game, clock)]
            game = load_game_from_args(args)
            seats = seats or [HUMAN] + ["heuristic"] * (game.num_players - 1)
            seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
            session = Session(game, seats, seed, names)
    except (RecordError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    coach = None
    if args.coach:
        from ludoteca.play.coach import Coach

        coach = Coach(session.game, seed=session.seed)
    return TerminalPlay(session, hint_agent=args.hint_agent, coach=coach).run()
