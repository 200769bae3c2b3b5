"""``ludoteca replay FILE``: show a recorded game's positions step by step."""

from __future__ import annotations

import argparse
import json

from ludoteca.cli import UsageError

HELP = "show the positions of a game record step by step"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a game record (JSON) written by ludoteca")
    parser.add_argument("--final", action="store_true", help="show only the final position")


def run(args: argparse.Namespace) -> int:
    from ludoteca.core.records import Record, RecordError

    try:
        record = Record.load(args.file)
        if args.final:
            state = record.replay()
            print(state.render())
            return 0
        for step, (state, action) in enumerate(record.states()):
            print(f"--- step {step}")
            print(state.render())
            if action is not None:
                print(f"> {json.dumps(action)}")
    except RecordError as exc:
        raise UsageError(str(exc)) from None
    if state.is_terminal():
        print(f"Game over. Returns: {state.returns()}")
    else:
        print("The record ends before the game is over.")
    return 0
