"""``ludoteca random GAME --players N --seed S [--record FILE]``: a random game, shown."""

from __future__ import annotations

import argparse
import random

from ludoteca.cli import UsageError
from ludoteca.commands.common import add_game_argument, add_option_arguments, load_game_from_args
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("play a uniformly random game, show it, and save its record")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_game_argument(parser)
    add_option_arguments(parser)
    parser.add_argument("--seed", type=int, default=None, help=_("random seed (default: a fresh one)"))
    parser.add_argument("--record", metavar="FILE", help=_("save the game record (JSON) here"))
    parser.add_argument("--quiet", action="store_true", help=_("show only the final position"))
    add_lang_argument(parser, "game's texts")


def run(args: argparse.Namespace) -> int:
    from ludoteca.core.chance import random_action
    from ludoteca.core.events import END
    from ludoteca.core.records import Record
    from ludoteca.play.boards import board_module
    from ludoteca.play.texts import event_text

    use_language(args.lang)
    game = load_game_from_args(args)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    state = game.new_initial_state()
    record = Record.start(game, seed=seed)
    if args.record:
        try:
            open(args.record, "a").close()
        except OSError as exc:
            raise UsageError(_("cannot write the record to {path}: {error}").format(
                path=args.record, error=exc.strerror)) from None
    texts = getattr(board_module(game), "TEXTS", {})
    print(_("{title}, {count} players, seed {seed}").format(title=game.title, count=game.num_players, seed=seed))
    while not state.is_terminal():
        action = random_action(state, rng)
        if not state.is_chance_node() and not args.quiet:
            print()
            print(state.render())
            print("> " + _("player {seat}: {move}").format(seat=state.current_player(),
                                                           move=state.action_to_string(action)))
        record.add(state, action)
        events = state.apply_action(action)
        if not args.quiet:
            for event in events[1:]:  # what the action led to, in words (the end is said below)
                text = None if event.kind == END else event_text(event.view(None, everything=True) or {}, texts)
                if text:
                    print(f"  {text}")
    print()
    print(state.render())
    returns = state.returns()
    winners = [str(i) for i, r in enumerate(returns) if r > 0]
    print(_("Game over after {count} actions. Winner(s): {winners}  returns {returns}").format(
        count=len(record.actions), winners=", ".join(winners), returns=returns))
    if args.record:
        record.save(args.record)
        print(_("Record saved to {path}").format(path=args.record))
    return 0
