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
    parser.add_argument("--clock", type=float, default=None, metavar="SECONDS",
                        help=_("for a game with a clock: seconds per turn (default: no clock in the terminal)"))
    parser.add_argument("--load", metavar="FILE", help=_("continue a game saved with 'save FILE'"))
    parser.add_argument("--hint-agent", default="heuristic", help=_("the agent that answers 'hint'"))
    add_lang_argument(parser, "game's messages")


def clock_options(name: str, clock: float | None) -> list[str]:
    """The ``--option`` that sets the game's clock: ``--clock`` seconds, else none in the
    terminal. UsageError for ``--clock`` with a game that has no clock."""
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
    return [f"{option}={clock if clock else 'null'}"]


def run(args: argparse.Namespace) -> int:
    from ludoteca.agents import make_agent
    from ludoteca.core.records import Record, RecordError
    from ludoteca.play.session import HUMAN, Session
    from ludoteca.play.terminal import TerminalPlay

    use_language(args.lang)
    seats = [x.strip().lower() for x in args.seats.split(",")] if args.seats else None
    if seats:
        for spec in seats:
            if spec != HUMAN:
                try:
                    make_agent(spec)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
    try:
        if args.load:
            if args.game:
                raise UsageError(_("give either GAME or --load FILE, not both"))
            session = Session.from_record(Record.load(args.load), seats, args.seed)
        else:
            if not args.game:
                raise UsageError(_("name a game ({games}) or --load FILE").format(games=", ".join(GAMES)))
            if args.players is None and seats:
                args.players = len(seats)
            args.option = [*args.option, *clock_options(args.game, args.clock)]
            game = load_game_from_args(args)
            seats = seats or [HUMAN] + ["heuristic"] * (game.num_players - 1)
            seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
            session = Session(game, seats, seed)
    except (RecordError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    return TerminalPlay(session, hint_agent=args.hint_agent).run()
