"""EXAGON in the terminal, as a person plays it: the table and the hand drawn as hexes, moves typed
by short names (a tile's letter and a place's number, then the way to turn it), the hourglass on by
default with the seconds spent going through ``apply_action(..., elapsed=)`` (an injected clock:
nothing here waits), one line for the deal, the player's own moves echoed, players by name."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from ludoteca.core.i18n import install
from ludoteca.play.boards import board, board_module
from ludoteca.play.session import Session
from ludoteca.play.terminal import TerminalPlay
from ludoteca.registry import load_game

GAME = "exagon"


@pytest.fixture(autouse=True)
def english() -> Any:
    install(None)
    yield
    install(None)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


FITS = re.compile(r"\b([a-z]{1,2})→([\d,]+)")


class Person(io.TextIOBase):
    """Reads what the terminal printed since its last answer, as a person would, and types the
    first placement listed under "Fits now" (the first way when asked how to turn it), else stop
    or pass; each answer takes ``think`` seconds of the clock. ``late``: on the first prompt that
    shows the hourglass, wait until the time is out first."""

    def __init__(self, screen: io.StringIO, clock: Clock, think: float = 2.0, late: bool = False) -> None:
        self.screen = screen
        self.clock = clock
        self.think = think
        self.late = late
        self.read_to = 0
        self.typed: list[str] = []
        self.prompts: list[str] = []
        self.session: Session | None = None

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        text = self.screen.getvalue()[self.read_to:]
        self.read_to += len(text)
        prompt = text.rstrip("\n").rsplit("\n", 1)[-1]
        self.prompts.append(prompt)
        self.clock.now += self.think
        if self.late and "⏳" in prompt and self.session is not None:
            left = self.session.state.time_left()
            assert left is not None
            self.clock.now += left
            self.late = False
        answer = self.answer(text, prompt)
        self.typed.append(answer)
        return answer + "\n"

    def answer(self, text: str, prompt: str) -> str:
        if prompt.startswith("which one?"):
            return "1"
        if "Fits now:" in text:
            label, places = FITS.findall(text.rsplit("Fits now:", 1)[1])[0]
            return f"{label}{places.split(',')[0]}"
        if "stop: end your turn" in text:
            return "stop"
        return "pass"


def play(seats: list[str], seed: int, think: float = 2.0, late: bool = False,
         **options: Any) -> tuple[int, str, Session, Person]:
    screen = io.StringIO()
    clock = Clock()
    person = Person(screen, clock, think, late)
    session = Session(load_game(GAME, players=len(seats), **options), seats, seed=seed)
    person.session = session
    console = Console(file=screen, width=120, height=50, color_system=None, highlight=False)
    code = TerminalPlay(session, console=console, stdin=person, clock=clock).run()
    return code, screen.getvalue(), session, person


def test_a_person_plays_a_whole_game_against_the_ai_by_short_names() -> None:
    code, out, session, person = play(["human", "easy"], seed=5)
    assert code == 0 and "Game over" in out
    assert re.search(r"Game over \(.+\)\. (Winner: (You|Easy AI)|Nobody wins)", out)
    human = [(a, e) for a, e in zip(session.record.actions, session.log, strict=True) if e.seat == 0]
    placed = [a for a, _e in human if "place" in a]
    assert len(placed) >= 3
    assert all(re.fullmatch(r"[a-z]{1,2}\d+|1|stop|pass", t) for t in person.typed), person.typed
    # Each of the person's own moves is said back, in words (no coordinates, no tile numbers).
    echoes = re.findall(r"^A You: (?!tiles in hand)(.+)$", out, re.M)
    assert len(echoes) == len(human)
    assert sum(1 for e in echoes if "tile placed" in e or "first tile" in e) == len(placed)
    assert not re.search(r"t\d+@|-?\d+,-?\d+r\d", out)
    # One line for the deal (RULES.md EXAGON, Deal: 20 tiles to each of 2 players), none per tile.
    assert out.count("tiles dealt: 40") == 1 and "deal t" not in out and "chance:" not in out
    # The hourglass is on by default (the rules' 60 s): each placement in phase turn carries the
    # seconds the person spent on it, as the injected clock ran.
    clocked = [a for a, e in human if "place" in a and "elapsed" in a]
    assert clocked and all(a["elapsed"] in (2.0, 4.0) for a in clocked)
    assert any("⏳" in p for p in person.prompts)
    assert "Easy AI" in out and "player 1" not in out


def test_the_hourglass_runs_out_and_the_turn_ends_with_a_timeout() -> None:
    code, out, session, person = play(["human", "easy"], seed=5, late=True)
    assert code == 0
    shown = next(p for p in person.prompts if "⏳" in p)
    # RULES.md EXAGON, Hourglass: a clocked turn starts with clock + carry seconds.
    assert re.search(r"You \(A\) ⏳ (60|120) s > $", shown), shown
    assert "The hourglass ran out: the turn ends." in out
    k = next(i for i, a in enumerate(session.record.actions) if "timeout" in a)
    assert session.record.actions[k] == {"timeout": True} and session.log[k].seat == 0
    # The line typed too late was not played: the next action is the AI's.
    assert session.log[k + 1].seat != 0 or session.log[k + 1].kind != "place"


def test_no_hourglass_when_the_clock_is_off() -> None:
    code, out, session, person = play(["human", "easy"], seed=3, clock=None)
    assert code == 0
    assert not any("⏳" in p for p in person.prompts)
    assert "no hourglass (--clock SECONDS: with one)" in out
    assert all("elapsed" not in a for a in session.record.actions)


def _two_matching_tiles() -> tuple[Any, dict[str, Any], int]:
    """A position with two tiles touching east-west on the table, their touching sides equal."""
    game = load_game(GAME, players=2, clock=None)
    tiles = game.tiles  # type: ignore[attr-defined]
    a = tiles[0]
    for b in tiles[1:]:
        for rot in range(6):
            if b["sides"][(3 - rot) % 6] == a["sides"][0] and "X" != a["sides"][0] != "J":
                rest = [t["id"] for t in tiles if t["id"] not in (a["id"], b["id"])]
                data = {"game": GAME, "players": 2, "tiles": [dict(t) for t in tiles],
                        "table": [{"tile": a["id"], "at": [0, 0], "rot": 0},
                                  {"tile": b["id"], "at": [1, 0], "rot": rot}],
                        "hands": [rest[:19], rest[19:]], "aside": [], "to_move": 0, "phase": "turn", "turn": 2,
                        "placed_this_turn": 0, "bonus": 0, "time_left": None, "carry": None, "scores": None}
                return game.state_from_json(data), a, b["sides"][(0 - rot) % 6]
    raise AssertionError("no two tiles of the default set match")


def test_touching_sides_are_drawn_side_by_side_and_the_hand_with_letters_and_stars() -> None:
    state, a, far_east = _two_matching_tiles()
    console = Console(record=True, width=120, color_system=None)
    console.print(board(state, 0, names=["You", "Easy AI"], width=120))
    text = console.export_text()
    matched = a["sides"][0]
    # RULES.md EXAGON, Geometry: side 0 of a tile with rotation 0 faces east and touches the side
    # facing west of the tile at [1, 0]; the two equal numbers show next to each other.
    assert re.search(rf"{a['sides'][3]}\s+{matched}{matched}\s+(◆◆\s+)?{far_east}\b", text), text
    # The hand of the player to move: each tile a small hex with its letter and its star.
    hand = state.observation(0)["hands"][0]
    tiles = {t["id"]: t for t in state.observation(0)["tiles"]}
    first, second = tiles[hand[0]], tiles[hand[1]]
    assert re.search(rf"{first['sides'][3]} a {first['star']:>2} {first['sides'][0]}", text), text
    assert re.search(rf"{second['sides'][3]} b {second['star']:>2} {second['sides'][0]}", text), text
    assert "You: tiles in hand: 19" in text and "Easy AI: tiles in hand: 19" in text


def test_short_names_explain_what_does_not_fit_and_the_notation_still_works() -> None:
    state, _a, _e = _two_matching_tiles()
    read = board_module(state.game).read_move
    with pytest.raises(ValueError, match="You have no tile zz"):
        read(state, "zz1")
    with pytest.raises(ValueError, match="There is no place 99"):
        read(state, "a99")
    with pytest.raises(ValueError, match="You can stop only after placing a tile"):
        read(state, "stop")
    assert read(state, "t5@1,-1r2") is None  # the notation is not a short name: the terminal reads it
    legal = set(state.legal_actions())
    some = next(iter(sorted(legal)))
    notation = state.action_to_string(some)
    assert state.action_from_string(notation) == some
    for text in ("a1", "b2", "c3"):
        try:
            actions = read(state, text)
        except ValueError as exc:
            assert "does not fit" in str(exc) or "no place" in str(exc)
            continue
        assert actions and set(actions) <= legal
        # Several ways to turn it: each is one of the tile's rotations at that place.
        places = {tuple(state.action_to_json(x)["place"]["at"]) for x in actions}
        assert len(places) == 1


def test_players_are_named_and_the_ai_by_its_level() -> None:
    from ludoteca.play.names import seat_names

    assert seat_names(["human", "hard"]) == ["You", "Hard AI"]
    assert seat_names(["human", "human", "mcts:seconds=1"]) == ["Player 1", "Player 2", "Search AI"]
    assert seat_names(["easy", "easy"]) == ["Easy AI 1", "Easy AI 2"]
    assert seat_names(["human", "hard"], ["Ada", ""]) == ["Ada", "Hard AI"]
