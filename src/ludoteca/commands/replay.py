"""``ludoteca replay FILE``: show a recorded game's positions step by step, with its events."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ludoteca.cli import UsageError
from ludoteca.core.i18n import N_, _
from ludoteca.i18n import add_lang_argument, use_language

HELP = N_("show the positions of a game record step by step")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help=_("a game record (JSON) written by ludoteca"))
    parser.add_argument("--final", action="store_true", help=_("show only the final position"))
    add_lang_argument(parser, "events' texts")


def run(args: argparse.Namespace) -> int:
    from ludoteca.core.events import END, Event
    from ludoteca.core.game import State
    from ludoteca.core.records import Record, RecordError
    from ludoteca.play.boards import board_module
    from ludoteca.play.texts import event_text

    use_language(args.lang)

    def play(state: State, step: int, data: dict[str, Any]) -> list[Event]:
        try:
            return state.apply_json(data)  # the action and the time spent on it ("elapsed")
        except ValueError as exc:
            raise RecordError(_("step {step} ({action}) does not replay: {error}").format(
                step=step, action=json.dumps(data), error=exc)) from None

    try:
        record = Record.load(args.file)
        state = record.load_game().new_initial_state()
        texts = getattr(board_module(state.game), "TEXTS", {})
        for step, data in enumerate(record.actions):
            if not args.final:
                print("--- " + _("step {step}").format(step=step))
                print(state.render())
                print(f"> {json.dumps(data)}")
            events = play(state, step + 1, data)
            if not args.final:
                # a record is replayed in full: every event shows, secret or not
                for event in events[1:]:  # the action's own event is the line above; the end below
                    if event.kind == END:
                        continue
                    text = event_text(event.view(None, everything=True) or {}, texts)
                    if text:
                        print(f"  {text}")
        if args.final:
            print(state.render())
            return 0
        print("--- " + _("step {step}").format(step=len(record.actions)))
        print(state.render())
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    if state.is_terminal():
        print(_("Game over. Returns: {returns}").format(returns=state.returns()))
    else:
        print(_("The record ends before the game is over."))
    return 0
