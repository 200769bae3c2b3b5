"""The terminal front end: draw the board, list the legal moves, read the player's choice."""

from __future__ import annotations

import select
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from ludoteca.core.errors import IllegalActionError
from ludoteca.core.events import END, Event
from ludoteca.core.game import Action
from ludoteca.core.i18n import N_, _
from ludoteca.play.boards import board, seat, shown
from ludoteca.play.coach import Coach
from ludoteca.play.session import Session
from ludoteca.play.texts import SKIPPED, event_text, secret_label

HELP = N_(
    "Type a move's number (the game's notation and JSON work too).\n"
    "Commands: moves (list again), undo (back to your last choice), hint (ask the AI),\n"
    "save FILE (write the game record), help, quit."
)
HELP_SHORT_NAMES = N_(
    "Type a move as shown under the board (the game's notation and JSON work too).\n"
    "Commands: moves (show the board again), undo (back to your last choice), hint (ask the AI),\n"
    "save FILE (write the game record), help, quit."
)
WARNINGS = (30.0, 10.0)
"""Seconds left on the hourglass at which the prompt says how much time is left."""
TIMEOUT = "\0timeout"


class TerminalPlay:
    """Runs a :class:`Session` to the end, reading humans' moves from ``stdin``.

    ``clock`` gives the seconds of a monotonic clock (tests inject one): the hourglass of a game
    with a clock counts from the prompt, the seconds spent go to ``apply_action(..., elapsed=)``
    and ``{"timeout": true}`` is played when the time is out (a line typed too late included).
    """

    def __init__(self, session: Session, console: Console | None = None, stdin: TextIO | None = None,
                 hint_agent: str = "heuristic", ai_delay: float = 0.0,
                 clock: Callable[[], float] = time.monotonic, coach: Coach | None = None) -> None:
        self.session = session
        self.coach = coach
        """``--coach``: each of a human's moves judged against the best one (coach.py)."""
        self.console = console or Console(highlight=False)
        self.stdin = stdin or sys.stdin
        self.hint_agent = hint_agent
        self.ai_delay = ai_delay
        self.clock = clock
        self.turn_started: float | None = None
        self.grouped: list[int] = []
        self.seen: dict[str, Any] | None = None
        self.before: dict[str, Any] | None = None

    @property
    def module(self) -> Any:
        return self.session.module

    def name(self, seat_no: int) -> str:
        return self.session.names[seat_no]

    # --- output ----------------------------------------------------------------------
    def show(self) -> None:
        """The board as the seat deciding now may see it (no human seat, or game over: all of it)."""
        s = self.session
        everything = not s.audience or s.state.is_terminal()
        viewer = s.viewer()
        data = shown(s.state, viewer, everything)
        if data != self.seen:  # a new position: what changed is marked from the one shown before
            self.before, self.seen = self.seen, data
        self.console.print()
        self.console.print(board(s.state, viewer, everything=everything, names=s.names, width=self.console.width,
                                 height=self.console.height, before=self.before))

    def describe(self, i: int, secret: bool = False) -> Text:
        """Log entry ``i`` as one line: who made it and what it was (only its kind while secret)."""
        s = self.session
        entry = s.log[i]
        what = entry.words or entry.text
        if secret and entry.events and s.hidden(entry.events[0]):
            what = secret_label(self._public_view(entry.events[0]), s.texts)
        if entry.seat is None:
            return Text(what if entry.words else _("chance: {what}").format(what=what))
        return Text.assemble(seat(entry.seat), " " + _("{name}: {what}").format(name=self.name(entry.seat),
                                                                                 what=what))

    def _public_view(self, event: Event) -> dict[str, Any] | None:
        """What every human seat may see of ``event`` (its public form when one seat may not)."""
        return event.view(None) if self.session.audience else event.view(None, everything=True)

    def event_lines(self, i: int, secret: bool = False, only_hidden: bool = False) -> list[Text]:
        """The events that log entry ``i``'s action led to (after the action itself), one line
        each, as every human seat may see them; ``only_hidden``: just those some seat could not."""
        s = self.session
        seat_fields = getattr(self.module, "SEAT_FIELDS", None)
        lines = []
        for event in s.log[i].events[1:]:
            if event.kind in SKIPPED or event.kind == END:
                continue
            hidden = s.hidden(event)
            if only_hidden and not hidden:
                continue
            view = self._public_view(event) if secret and hidden else event.view(None, everything=True)
            text = None if view is None else event_text(view, s.texts, s.names, seat_fields)
            if text:
                lines.append(Text("  " + text, style="italic"))
        return lines

    def announce(self, i: int) -> None:
        """Print a move or a chance outcome as the human seats may see it now."""
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

    def group(self, i: int) -> bool:
        """Keep chance entry ``i`` for one line with the others of its run (a deal) when the game
        tells such runs in one line (``GROUPED``); False when it is told on its own."""
        s = self.session
        entry = s.log[i]
        grouped = getattr(self.module, "GROUPED", {})
        if entry.seat is not None or entry.kind not in grouped or s.is_secret(i):
            return False
        if self.grouped and s.log[self.grouped[-1]].kind != entry.kind:
            self.flush()
        self.grouped.append(i)
        return True

    def flush(self) -> None:
        """Print the run of grouped chance entries as one line, then what they led to."""
        if not self.grouped:
            return
        run, self.grouped = self.grouped, []
        kind = self.session.log[run[0]].kind
        text = _(getattr(self.module, "GROUPED", {})[kind]).format(count=len(run))
        self.console.print(Text("  " + text, style="dim"))
        for i in run:
            self.consequences(i)

    def list_moves(self) -> list[Action]:
        s = self.session.state
        legal = s.legal_actions()
        helper = getattr(self.module, "moves_help", None)
        if helper is not None:
            viewer = s.current_player()
            self.console.print(helper(s, s.observation(viewer), self.session.names))
            return legal
        self.console.print(Text(_("Legal moves ({count}):").format(count=len(legal)), style="bold"))
        width = len(str(len(legal)))
        items = [f"{i + 1:>{width}}) {self.session.words(a) or s.action_to_string(a)}" for i, a in enumerate(legal)]
        col = max(len(x) for x in items) + 3
        per_line = max(1, min(4, self.console.width // col))  # no wrapped move in a narrow terminal
        for k in range(0, len(items), per_line):
            self.console.print("".join(x.ljust(col) for x in items[k:k + per_line]).rstrip(), markup=False)
        return legal

    # --- input -----------------------------------------------------------------------
    def read_line(self, prompt: str, timeout: float | None, again: Callable[[], str] | None = None) -> str | None:
        """A line from stdin; None at end of input; ``TIMEOUT`` when the hourglass ran out before
        the line came (waiting on a terminal, or a line that arrives after the time). On a terminal
        the time left is said at :data:`WARNINGS` seconds, then the prompt again (``again()``: a
        new one, with the time left)."""
        self.console.print(prompt, end="", markup=False)
        self.console.file.flush()
        if timeout is not None and self._selectable():
            warnings = [w for w in WARNINGS if w < timeout]
            while True:
                left = self.time_left()
                left = 0.0 if left is None else left
                wake = max((w for w in warnings if w < left), default=0.0)
                ready, _w, _x = select.select([self.stdin], [], [], max(0.0, left - wake))
                if ready:
                    break
                if wake <= 0:
                    self.console.print()
                    return TIMEOUT
                warnings.remove(wake)
                self.console.print()
                self.console.print(Text("⏳ " + _("{seconds:.0f} s left").format(seconds=wake), style="bold yellow"))
                self.console.print(again() if again is not None else prompt, end="", markup=False)
                self.console.file.flush()
        line = self.stdin.readline()
        if not self._is_tty():
            self.console.print()  # a terminal echoes the line typed with its Enter; a pipe does not
        if not line:
            return None
        left = self.time_left()
        if timeout is not None and left is not None and left <= 0:
            return TIMEOUT
        return line.strip()

    def _is_tty(self) -> bool:
        try:
            return bool(self.stdin.isatty())
        except (AttributeError, OSError, ValueError):
            return False

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
        return float(left) - (self.clock() - self.turn_started)

    def elapsed(self) -> float | None:
        """The seconds the human spent on this action, for a game whose clock runs now."""
        left = self.session.state.time_left()
        if self.turn_started is None or left is None:
            return None
        return min(round(self.clock() - self.turn_started, 3), float(left))

    def prompt(self) -> str:
        s = self.session
        player = s.state.current_player()
        left = self.time_left()
        clock = " ⏳ " + _("{seconds:.0f} s").format(seconds=max(0.0, left)) if left is not None else ""
        return f"{self.name(player)} ({seat(player).plain}){clock} > "

    # --- the loop --------------------------------------------------------------------
    def header(self) -> None:
        s = self.session
        who = Text()
        for i, name in enumerate(s.names):
            if i:
                who.append(", ")
            who.append_text(seat(i))
            who.append(" " + name)
        self.console.print(Text.assemble((s.game.title, "bold"), " — ", who))
        game = s.game
        line = _("seed {seed}; type 'help' for commands").format(seed=s.seed)
        if game.clock_option is not None:
            seconds = game.clock()
            line = (_("hourglass: {seconds:g} s a turn (--clock none: without)").format(seconds=seconds)
                    if seconds is not None else _("no hourglass (--clock SECONDS: with one)")) + "; " + line
        self.console.print(line, style="dim", markup=False)

    def run(self) -> int:
        s = self.session
        self.header()
        shown_for = None
        while not s.state.is_terminal():
            if not s.is_human_turn():
                index, revealed = s.step_automatic()
                if not self.group(index):
                    self.flush()
                    self.announce(index)
                    self.reveal(revealed)
                    self.consequences(index)
                seat_no = s.log[index].seat
                if seat_no is not None and self.ai_delay:
                    time.sleep(self.ai_delay)
                self.turn_started = None
                shown_for = None
                continue
            self.flush()
            key = (len(s.record.actions),)
            if shown_for != key:
                self.show()
                self.list_moves()
                shown_for = key
                if self.turn_started is None:
                    self.turn_started = self.clock()
            legal = s.state.legal_actions()
            player = s.state.current_player()
            left = self.time_left()
            line = self.read_line(self.prompt(), left, self.prompt)
            if line is None:
                self.console.print(("\n" if self._is_tty() else "")
                                   + _("Input ended: the game is not finished. Use 'save FILE' to keep it."),
                                   markup=False)
                return 1
            if not line:
                continue
            if line == TIMEOUT:
                self.timeout()
                continue
            result = self.handle(line, legal)
            if result == "quit":
                return 1
            if result == "timeout":
                self.timeout()
                continue
            if result == "moved":
                if s.is_human_turn() and s.state.current_player() == player and s.state.time_left() is not None:
                    # the same turn goes on (several tiles in one turn): its clock restarts
                    # from what the engine has left, the seconds spent being taken off already
                    self.turn_started = self.clock()
                else:
                    self.turn_started = None
                shown_for = None
        self.flush()
        self.show()
        self.finish()
        return 0

    def timeout(self) -> None:
        s = self.session
        self.console.print(_("The hourglass ran out: the turn ends."), style="bold red", markup=False)
        self.reveal(s.apply(s.state.action_from_json({"timeout": True})))
        self.consequences(len(s.log) - 1)
        self.turn_started = None

    def finish(self) -> None:
        s = self.session
        returns = s.state.returns()
        winners = [i for i, r in enumerate(returns) if r > 0]
        names = ", ".join(self.name(i) for i in winners)
        reason = s.state.end_reason()
        texts = getattr(self.module, "END_REASONS", {})
        why = _(texts[reason]) if reason in texts else reason.replace("_", " ")
        who = (_("Winners: {names}") if len(winners) > 1 else _("Winner: {names}")).format(names=names) \
            if winners else _("Nobody wins.")
        self.console.print(Text.assemble((_("Game over"), "bold green"), f" ({why}). {who}"), highlight=False)

    def handle(self, line: str, legal: list[Action]) -> str:
        """Act on one line typed by a human; returns 'moved', 'quit', 'timeout' or 'stay'."""
        s = self.session
        word, _sep, rest = line.partition(" ")
        cmd = word.lower()
        if cmd in ("help", "?", _("help")):
            short = getattr(self.module, "moves_help", None) is not None
            self.console.print(_(HELP_SHORT_NAMES if short else HELP), markup=False)
            return "stay"
        if cmd in ("quit", "exit", _("quit")):
            self.console.print(_("Bye. (The game is not saved unless you used 'save FILE'.)"), markup=False)
            return "quit"
        if cmd in ("moves", "list", "ls", _("moves")):
            self.show()
            self.list_moves()
            return "stay"
        if cmd in ("undo", _("undo")):
            if s.undo():
                self.console.print(_("Taken back to your last choice."))
                self.turn_started = None
                self.show()
                self.list_moves()
                self.turn_started = self.clock()
            else:
                self.console.print(_("Nothing to undo."))
            return "stay"
        if cmd in ("hint", _("hint")):
            return self.hint(legal)
        if cmd in ("save", _("save")):
            return self.save(rest.strip())
        chosen = self.parse_move(line, legal)
        if chosen is None:
            return "stay"
        if isinstance(chosen, str):
            return chosen  # "timeout": the hourglass ran out while the player chose
        return self.play(chosen)

    def hint(self, legal: list[Action]) -> str:
        s = self.session
        try:
            action = s.hint(self.hint_agent)
        except ValueError as exc:
            self.console.print(_("No hint available: {error}").format(error=exc), markup=False)
            return "stay"
        short = getattr(self.module, "move_name", None)
        move = short(s.state, action) if short is not None else None
        if move is None:
            move = f"#{legal.index(action) + 1}"
        words = s.words(action) or s.state.action_to_string(action)
        self.console.print(_("Hint: {move}").format(move=move) + f" — {words}", markup=False)
        return "stay"

    def save(self, path: str) -> str:
        s = self.session
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

    def play(self, chosen: Action) -> str:
        """Apply a human's move, then say it (so the player sees what was played) and what it led to."""
        s = self.session
        before = s.state.clone() if self.coach is not None else None
        try:
            revealed = s.apply(chosen, elapsed=self.elapsed())
        except IllegalActionError as exc:
            self.console.print(_("Not allowed: {error}").format(error=exc), style="red", markup=False)
            return "stay"
        i = len(s.log) - 1
        self.announce(i)
        self.reveal(revealed)
        self.consequences(i)
        if self.coach is not None and before is not None:
            verdict = self.coach.judge(before, chosen)
            if verdict is not None:
                say = getattr(self.module, "action_text", None)  # the better move, said where it was possible
                line = self.coach.says(verdict, lambda a: (say(before, a, s.names) if say else None)
                                       or before.action_to_string(a))
                self.console.print(Text(line, style="cyan"))
        return "moved"

    def parse_move(self, line: str, legal: list[Action]) -> Action | str | None:
        """The move ``line`` names (a short name of the game's board, a number of the list, the
        notation or JSON); None after saying why there is none; ``"timeout"`` when the hourglass
        ran out while the player was choosing between the ways a short name left open."""
        s = self.session
        reader = getattr(self.module, "read_move", None)
        if reader is not None:
            try:
                actions = reader(s.state, line)
            except ValueError as exc:
                self.console.print(str(exc), style="red", markup=False)
                return None
            if actions:
                return actions[0] if len(actions) == 1 else self.choose(actions)
        if line.isdigit():
            if reader is not None:
                self.console.print(_("Type one of the moves shown under the board, or 'help'."), style="red")
                return None
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

    def choose(self, actions: list[Action]) -> Action | str | None:
        """Ask which of ``actions`` the player means (the game draws them, numbered from 1)."""
        s = self.session
        drawing = getattr(self.module, "draw_choices", None)
        if drawing is not None:
            self.console.print(drawing(s.state, actions, s.names, self.console.width))
        else:
            for k, a in enumerate(actions, 1):
                self.console.print(f"{k}) {s.words(a) or s.state.action_to_string(a)}", markup=False)
        prompt = _("which one? 1 to {count} (Enter: none)").format(count=len(actions)) + " > "
        answer = self.read_line(prompt, self.time_left())
        if answer == TIMEOUT:
            return "timeout"
        if answer and answer.isdigit() and 1 <= int(answer) <= len(actions):
            return actions[int(answer) - 1]
        self.console.print(_("No move made."), style="dim")
        return None
