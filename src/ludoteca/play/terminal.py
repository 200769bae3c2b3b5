"""The terminal front end: draw the board, list the legal moves, read the player's choice."""

from __future__ import annotations

import select
import sys
import time
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import END, Event
from ludoteca.core.game import Action
from ludoteca.core.i18n import N_, _
from ludoteca.play.boards import board, seat
from ludoteca.play.session import Session
from ludoteca.play.texts import SKIPPED, event_text, secret_label

HELP = N_(
    "Type a move's number or its short notation (shown beside it), or JSON.\n"
    "Commands: moves (list again), undo (back to your last choice), hint (ask the AI),\n"
    "save FILE (write the game record), help, quit."
)


class TerminalPlay:
    """Runs a :class:`Session` to the end, reading humans' moves from ``stdin``."""

    def __init__(self, session: Session, console: Console | None = None, stdin: TextIO | None = None,
                 hint_agent: str = "heuristic", ai_delay: float = 0.0) -> None:
        self.session = session
        self.console = console or Console(highlight=False)
        self.stdin = stdin or sys.stdin
        self.hint_agent = hint_agent
        self.ai_delay = ai_delay
        self.turn_started: float | None = None

    # --- output ----------------------------------------------------------------------
    def show(self) -> None:
        """The board as the seat deciding now may see it (no human seat, or game over: all of it)."""
        s = self.session
        everything = not s.audience or s.state.is_terminal()
        self.console.print()
        self.console.print(board(s.state, s.viewer(), everything=everything))

    def describe(self, i: int, secret: bool = False) -> Text:
        """Log entry ``i`` as one line: who made it and what it was (only its kind while secret)."""
        s = self.session
        entry = s.log[i]
        what = entry.text
        if secret and entry.events and s.hidden(entry.events[0]):
            what = secret_label(self._public_view(entry.events[0]), s.texts)
        if entry.seat is None:
            return Text(_("chance: {what}").format(what=what))
        return Text.assemble(seat(entry.seat), " " + _("player {seat} ({spec}): {what}").format(
            seat=entry.seat, spec=s.seats[entry.seat], what=what))

    def _public_view(self, event: Event) -> dict[str, Any] | None:
        """What every human seat may see of ``event`` (its public form when one seat may not)."""
        return event.view(None) if self.session.audience else event.view(None, everything=True)

    def event_lines(self, i: int, secret: bool = False, only_hidden: bool = False) -> list[Text]:
        """The events that log entry ``i``'s action led to (after the action itself), one line
        each, as every human seat may see them; ``only_hidden``: just those some seat could not."""
        s = self.session
        lines = []
        for event in s.log[i].events[1:]:
            if event.kind in SKIPPED or event.kind == END:
                continue
            hidden = s.hidden(event)
            if only_hidden and not hidden:
                continue
            view = self._public_view(event) if secret and hidden else event.view(None, everything=True)
            text = None if view is None else event_text(view, s.texts)
            if text:
                lines.append(Text("  " + text, style="italic"))
        return lines

    def announce(self, i: int) -> None:
        """Print an AI's move or a chance outcome as the human seats may see it now."""
        line = self.describe(i, secret=self.session.is_secret(i))
        if self.session.log[i].seat is None:
            line = Text("  ").append_text(line)
            line.stylize("dim")
        self.console.print(line)

    def consequences(self, i: int) -> None:
        """Print what log entry ``i``'s action led to (a euro, a battle, ...)."""
        for line in self.event_lines(i, secret=self.session.is_secret(i)):
            self.console.print(line)

    def reveal(self, entries: list[int]) -> None:
        """Print the entries that have just become visible to every human seat."""
        s = self.session
        for i in entries:
            entry = s.log[i]
            if entry.events and s.hidden(entry.events[0]):
                self.console.print(Text(_("revealed:") + " ", style="bold").append_text(self.describe(i)))
            for line in self.event_lines(i, only_hidden=True):
                self.console.print(Text(_("revealed:"), style="bold").append_text(line))

    def list_moves(self) -> list[Action]:
        s = self.session.state
        legal = s.legal_actions()
        self.console.print(Text(_("Legal moves ({count}):").format(count=len(legal)), style="bold"))
        width = len(str(len(legal)))
        items = [f"{i + 1:>{width}}) {s.action_to_string(a)}" for i, a in enumerate(legal)]
        col = max(len(x) for x in items) + 3
        per_line = max(1, min(4, self.console.width // col))  # no wrapped move in a narrow terminal
        for k in range(0, len(items), per_line):
            self.console.print("".join(x.ljust(col) for x in items[k:k + per_line]).rstrip(), markup=False)
        return legal

    # --- input -----------------------------------------------------------------------
    def read_line(self, prompt: str, timeout: float | None) -> str | None:
        """A line from stdin; None at end of input; '' + timeout -> ``"\\0timeout"``."""
        self.console.print(prompt, end="", markup=False)
        self.console.file.flush()
        if timeout is not None and self._selectable():
            ready, _w, _x = select.select([self.stdin], [], [], max(0.0, timeout))
            if not ready:
                self.console.print()
                return "\0timeout"
        line = self.stdin.readline()
        if not line:
            return None
        return line.strip()

    def _selectable(self) -> bool:
        try:
            self.stdin.fileno()
            return True
        except (AttributeError, OSError, ValueError):
            return False

    def time_left(self) -> float | None:
        """Seconds left on the clock of the human to move (the engine's, less the time spent
        since the prompt appeared), or None when no clock runs."""
        left = self.session.state.time_left()
        if left is None or self.turn_started is None:
            return left
        return float(left) - (time.monotonic() - self.turn_started)

    def elapsed(self) -> float | None:
        """The seconds the human spent on this action, for a game whose clock runs now."""
        left = self.session.state.time_left()
        if self.turn_started is None or left is None:
            return None
        return min(round(time.monotonic() - self.turn_started, 3), float(left))

    # --- the loop --------------------------------------------------------------------
    def run(self) -> int:
        s = self.session
        seats = ", ".join(f"{i}={spec}" for i, spec in enumerate(s.seats))
        self.console.print(Text.assemble(
            (s.game.title, "bold"),
            " — " + _("{count} players: {seats}  (seed {seed}; type 'help' for commands)").format(
                count=s.game.num_players, seats=seats, seed=s.seed)))
        shown_for = None
        while not s.state.is_terminal():
            if not s.is_human_turn():
                index, revealed = s.step_automatic()
                self.announce(index)
                self.reveal(revealed)
                self.consequences(index)
                seat_no = s.log[index].seat
                if seat_no is not None and self.ai_delay:
                    time.sleep(self.ai_delay)
                self.turn_started = None
                shown_for = None
                continue
            key = (len(s.record.actions),)
            if shown_for != key:
                self.show()
                self.list_moves()
                shown_for = key
                if self.turn_started is None:
                    self.turn_started = time.monotonic()
            legal = s.state.legal_actions()
            player = s.state.current_player()
            left = self.time_left()
            clock = f" ⏳{left:.0f}s" if left is not None else ""
            line = self.read_line(_("player {seat}").format(seat=player) + f"{clock} > ", left)
            if line is None:
                self.console.print("\n" + _("Input ended: the game is not finished. Use 'save FILE' to keep it."),
                                   markup=False)
                return 1
            if not line:
                continue
            if line == "\0timeout":
                self.console.print(_("The hourglass ran out: the turn ends."), style="bold red", markup=False)
                self.reveal(s.apply(s.state.action_from_json({"timeout": True})))
                self.consequences(len(s.log) - 1)
                self.turn_started = None
                continue
            result = self.handle(line, legal)
            if result == "quit":
                return 1
            if result == "moved":
                if s.is_human_turn() and s.state.current_player() == player and s.state.time_left() is not None:
                    # the same turn goes on (EXAGON places several tiles): its clock restarts
                    # from what the engine has left, the seconds spent being taken off already
                    self.turn_started = time.monotonic()
                else:
                    self.turn_started = None
                shown_for = None
        self.show()
        returns = s.state.returns()
        winners = [i for i, r in enumerate(returns) if r > 0]
        names = ", ".join(_("player {seat} ({spec})").format(seat=i, spec=s.seats[i]) for i in winners)
        reason = s.state.end_reason().replace("_", " ")
        why = f" ({reason})" if reason != "over" else ""
        who = (_("Winners: {names}") if len(winners) > 1 else _("Winner: {names}")).format(names=names)
        self.console.print(Text.assemble((_("Game over"), "bold green"), f"{why}. {who}"), highlight=False)
        return 0

    def handle(self, line: str, legal: list[Action]) -> str:
        """Act on one line typed by a human; returns 'moved', 'quit' or 'stay'."""
        s = self.session
        word, _sep, rest = line.partition(" ")
        cmd = word.lower()
        if cmd in ("help", "?"):
            self.console.print(_(HELP), markup=False)
            return "stay"
        if cmd in ("quit", "exit"):
            self.console.print(_("Bye. (The game is not saved unless you used 'save FILE'.)"), markup=False)
            return "quit"
        if cmd in ("moves", "list", "ls"):
            self.show()
            self.list_moves()
            return "stay"
        if cmd == "undo":
            if s.undo():
                self.console.print(_("Taken back to your last choice."))
                self.turn_started = None
                self.show()
                self.list_moves()
            else:
                self.console.print(_("Nothing to undo."))
            return "stay"
        if cmd == "hint":
            try:
                action = s.hint(self.hint_agent)
            except ValueError as exc:
                self.console.print(_("No hint available: {error}").format(error=exc), markup=False)
                return "stay"
            self.console.print(_("hint ({agent}): {move}  (#{number})").format(
                agent=self.hint_agent, move=s.state.action_to_string(action), number=legal.index(action) + 1),
                markup=False)
            return "stay"
        if cmd == "save":
            path = rest.strip()
            if not path:
                self.console.print(_("save needs a file name: save FILE"), markup=False)
                return "stay"
            try:
                s.record.save(path)
            except OSError as exc:
                self.console.print(_("cannot save to {path}: {error}").format(path=path, error=exc.strerror),
                                   markup=False)
                return "stay"
            self.console.print(_("Game record saved to {path}; continue it with: ludoteca play --load {path}")
                               .format(path=path), markup=False)
            return "stay"
        chosen = self.parse_move(line, legal)
        if chosen is None:
            return "stay"
        try:
            revealed = s.apply(chosen, elapsed=self.elapsed())
        except IllegalActionError as exc:
            self.console.print(_("Not allowed: {error}").format(error=exc), style="red", markup=False)
            return "stay"
        self.reveal(revealed)
        self.consequences(len(s.log) - 1)
        return "moved"

    def parse_move(self, line: str, legal: list[Action]) -> Action | None:
        s = self.session
        if line.isdigit():
            k = int(line)
            if 1 <= k <= len(legal):
                return legal[k - 1]
            self.console.print(_("Choose a number from 1 to {count}.").format(count=len(legal)), style="red")
            return None
        try:
            action = s.state.action_from_string(line)
        except ValueError:
            self.console.print(_("I don't understand {text}. Type a move's number, its notation, or 'help'.")
                               .format(text=repr(line)), style="red", markup=False)
            return None
        if action not in legal:
            self.console.print(_("{text} is not a legal move now. Type 'moves' to see them.").format(text=repr(line)),
                               style="red", markup=False)
            return None
        return action
