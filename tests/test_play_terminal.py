"""Terminal play, end to end through a pseudo-terminal (pexpect drives the real command)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

PROMPT = r"\(([A-F])\)[^\n>]*> "
"""The prompt names the player to move and shows their mark: ``You (A) > ``, ``Player 2 (B) ⏳ 42 s > ``."""


LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def spawn(*args: str, color: bool = False, lang: str = "C.UTF-8") -> pexpect.spawn:
    """The command in a pseudo-terminal, its locale ``LANG=lang`` (English unless it says Italian)."""
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARIABLES}
    env.update({"COLUMNS": "120", "LINES": "50", "PYTHONIOENCODING": "utf-8", "LANG": lang})
    if color:
        env.pop("NO_COLOR", None)
        env["TERM"] = "xterm-256color"
    else:
        env["NO_COLOR"] = "1"
        env["TERM"] = "dumb"
    return pexpect.spawn(sys.executable, ["-m", "ludoteca.cli", "play", *args], env=env,
                         encoding="utf-8", timeout=60, dimensions=(50, 120))


def play_to_the_end(child: pexpect.spawn, move: str = "1", limit: int = 3000) -> None:
    for _ in range(limit):
        i = child.expect([PROMPT, "Game over"])
        if i == 1:
            return
        child.sendline(move)
    raise AssertionError("the game did not end")


def test_human_plays_tohm_against_the_ai_to_the_end() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3", color=True)
    child.expect("TOHM")
    child.expect(PROMPT)
    # The board is drawn in colour: Rich emits ANSI escape sequences in a real terminal.
    assert "\x1b[" in child.before
    assert "Legal moves" in child.before
    child.sendline("1")
    play_to_the_end(child)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_wrong_input_gets_a_message_and_the_prompt_again() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3")
    child.expect(PROMPT)
    for bad, answer in [("nonsense", "I don't understand"), ("99", "Choose a number from 1 to"),
                        ('{"place": [9, 9]}', "not legal|I don't understand"), ("save", "save needs a file name")]:
        child.sendline(bad)
        child.expect(answer)
        child.expect(PROMPT)
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_undo_takes_back_to_the_last_choice_without_rerolling(tmp_path: Path) -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "5")
    # Make two human moves, remembering the position before the second.
    child.expect(PROMPT)
    child.sendline("1")
    child.expect(PROMPT)
    before_second = child.before.split("Legal moves")[-1]
    child.sendline("1")
    child.expect(PROMPT)
    child.sendline("undo")
    child.expect("Taken back to your last choice")
    child.expect(PROMPT)
    # Same die, same legal moves as before the undone choice (the dice are not re-rolled).
    assert child.before.split("Legal moves")[-1] == before_second
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_save_then_load_continues_the_same_game(tmp_path: Path) -> None:
    path = tmp_path / "saved.json"
    child = spawn("tohm", "--seats", "human,random", "--seed", "8")
    for _ in range(3):
        child.expect(PROMPT)
        child.sendline("1")
    child.expect(PROMPT)
    position = child.before
    child.sendline(f"save {path}")
    child.expect("Game record saved")
    child.expect(PROMPT)
    child.sendline("quit")
    child.expect(pexpect.EOF)
    record = json.loads(path.read_text())
    assert record["format"] == "ludoteca-record" and record["meta"]["seats"] == ["human", "random"]

    again = spawn("--load", str(path))
    again.expect(PROMPT)
    # The same position and legal moves are shown again.
    assert again.before.split("Legal moves")[-1] == position.split("Legal moves")[-1]
    again.sendline("1")
    play_to_the_end(again)


def test_hint_names_a_legal_move() -> None:
    child = spawn("exactly", "--seats", "human,random", "--seed", "2", "--hint-agent", "random")
    child.expect(PROMPT)
    child.sendline("hint")
    child.expect(r"Hint: #\d+ — ")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_players_are_called_by_the_names_given_and_the_ai_by_its_level() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "3", "--names", "Ada")
    child.expect("TOHM — A Ada, B Random AI")
    child.expect(r"Ada \(A\)[^\n>]*> ")
    assert "to move: A (Ada)" in child.before and "Random AI: tokens in supply" in child.before
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_hot_seat_two_humans_take_turns() -> None:
    child = spawn("exactly", "--seats", "human,human", "--seed", "4")
    seen = set()
    for _ in range(40):
        child.expect(PROMPT)
        seen.add(child.match.group(1))
        child.sendline("1")
    assert seen == {"A", "B"}
    child.sendline("quit")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tohm", "--seats", "human,wizard"], "unknown agent 'wizard'"),
        (["tohm", "--players", "3", "--seats", "human,random"], "2 seats given for 3 players"),
        (["chess"], "unknown game 'chess'"),
        (["tohm", "--clock", "30"], "EXAGON only"),
        (["--load", "/no/such/file.json"], "cannot read"),
        (["tohm", "--seats", "human,random", "--names", "Ada,Bo,Cy"], "3 names given for 2 seats"),
    ],
)
def test_bad_arguments(args: list[str], message: str) -> None:
    child = spawn(*args)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert message in child.before
    assert "Traceback" not in child.before


def test_a_clocked_games_hourglass_ends_the_turn_when_it_runs_out_on_a_real_terminal() -> None:
    from ludoteca.registry import GAMES, game_class

    clocked = [n for n in GAMES if game_class(n).clock_option is not None]
    assert clocked
    child = spawn(clocked[0], "--seats", "human,random", "--seed", "1", "--clock", "2")
    child.expect("hourglass: 2 s a turn")
    # Opening steps have no clock: play until a prompt shows the hourglass, then wait it out.
    for _ in range(50):
        child.expect(PROMPT)
        if "⏳" in child.after:
            break
        fits = re.findall(r"\b([a-z]{1,2})→(\d+)", child.before)
        child.sendline("".join(fits[0]) if fits else "1")
    else:
        pytest.fail("no clocked turn for the human")
    child.expect("The hourglass ran out", timeout=15)
    child.sendline("quit")


@pytest.mark.parametrize(("clock", "said"), [(None, "hourglass: 60 s a turn (--clock none: without)"),
                                             ("none", "no hourglass (--clock SECONDS: with one)")])
def test_the_hourglass_is_on_by_default_as_the_rules_say_and_clock_none_turns_it_off(clock: str | None,
                                                                                     said: str) -> None:
    from ludoteca.registry import GAMES, game_class

    for name in (n for n in GAMES if game_class(n).clock_option is not None):
        # RULES.md EXAGON, Hourglass: clock defaults to 60 s; null for no clock.
        child = spawn(name, "--seats", "human,random", "--seed", "1", *(["--clock", clock] if clock else []))
        child.expect(re.escape(said))
        child.sendline("quit")
        child.expect(pexpect.EOF)


def test_a_bad_clock_is_refused_with_a_clear_message() -> None:
    child = spawn("tohm", "--clock", "soon")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2 and "--clock takes a number of seconds above 0, or none" in child.before


# --- secrets: each seat sees only what state.observation(seat) allows ------------------------

ATTACK = re.compile(r"(\d+)\) attack \d")
SHOWN_ROLL = re.compile(r"  die: \d")


def legal_part(screen: str) -> str:
    return screen.split("Legal moves")[-1]


def answer_until_attack(child: pexpect.spawn, limit: int = 150) -> str:
    """Play move 1 at every prompt until the seat to move can attack; attack; return that seat."""
    for _ in range(limit):
        child.expect(PROMPT)
        found = ATTACK.search(legal_part(child.before))
        if found:
            child.sendline(found.group(1))
            return str(child.match.group(1))
        child.sendline("1")
    raise AssertionError("no attack became possible")


def test_tri_human_attacker_sees_neither_the_defenders_roll_nor_the_ai_card_before_choosing(
        tmp_path: Path) -> None:
    # RULES.md, TRI battles: each side, knowing only its own roll, secretly picks a card; then both
    # are revealed. The human attacks: before the human's card choice the screen shows the human's
    # own roll, and neither the defender's roll nor the AI's card.
    child = spawn("tri", "--seats", "human,heuristic", "--seed", "1")
    assert answer_until_attack(child) == "A"
    child.expect(PROMPT)
    screen = child.before
    assert re.search(r"1\) card \+0", legal_part(screen))  # the human's card choice
    assert len(SHOWN_ROLL.findall(screen)) == 1  # the attacker's own roll only
    assert "  roll (secret)" in screen
    assert re.search(r"rolls \d vs \?", screen)
    assert "None" not in screen
    assert "Simple AI: card" not in screen
    child.sendline("1")
    # The defender's card completes the battle: it is shown with the now revealed roll.
    child.expect(r"B Simple AI: card \+(\d)")
    ai_card = int(child.match.group(1))
    child.expect(r"revealed: die: (\d)")
    defender_roll = int(child.match.group(1))
    path = tmp_path / "game.json"
    child.expect(PROMPT)
    child.sendline(f"save {path}")
    child.expect("Game record saved")
    child.sendline("quit")
    child.expect(pexpect.EOF)
    actions = json.loads(path.read_text())["actions"]
    k = next(i for i, a in enumerate(actions) if "attack" in a)
    assert actions[k + 1].keys() == {"roll"} and actions[k + 2] == {"roll": defender_roll}
    assert actions[k + 3] == {"card": 0} and actions[k + 4] == {"card": ai_card}


def test_tri_ai_attackers_card_and_roll_stay_secret_until_the_human_defender_chooses() -> None:
    child = spawn("tri", "--seats", "human,heuristic", "--seed", "2")
    for _ in range(150):
        child.expect(PROMPT)
        if "Simple AI: attack " in child.before:
            break
        child.sendline("1")
    else:
        pytest.fail("the AI never attacked")
    screen = child.before.split("Simple AI: attack ")[-1]
    assert re.search(r"1\) card \+0", legal_part(screen))  # the human defender's card choice
    assert "B Simple AI: card (secret)" in screen
    assert len(SHOWN_ROLL.findall(screen)) == 1 and "  roll (secret)" in screen  # own roll only
    assert re.search(r"rolls \? vs \d", screen) and "None" not in screen
    child.sendline("1")
    child.expect(r"revealed: die: \d")
    child.expect(r"revealed: B Simple AI: card \+\d")
    child.sendline("quit")


def test_tri_hot_seat_shows_each_seat_only_its_own_roll() -> None:
    # Two humans at one screen: the log shows neither roll (each is secret from the other seat);
    # the board shows the roll of the seat choosing now; both are revealed after both cards.
    child = spawn("tri", "--seats", "human,human", "--seed", "1")
    attacker = answer_until_attack(child)
    defender = "B" if attacker == "A" else "A"
    child.expect(PROMPT)
    assert child.match.group(1) == attacker
    screen = child.before
    assert not SHOWN_ROLL.search(screen) and screen.count("  roll (secret)") == 2
    assert re.search(r"rolls \d vs \?", screen) and "None" not in screen
    child.sendline("1")
    child.expect(PROMPT)
    assert child.match.group(1) == defender
    screen = child.before
    assert re.search(r"rolls \? vs \d", screen) and "revealed" not in screen and "None" not in screen
    child.sendline("1")
    child.expect(r"revealed: die: \d\s+revealed: die: \d\s+revealed: " + attacker + r" Player \d: card \+\d")
    child.sendline("quit")


@pytest.mark.parametrize(("viewer", "rolls"), [(0, "rolls 4 vs ?"), (1, "rolls ? vs 5"), (None, "rolls ? vs ?")])
def test_tri_board_draws_a_battle_from_the_viewers_observation(viewer: int | None, rolls: str) -> None:
    from rich.console import Console

    from ludoteca.play.boards import board
    from ludoteca.registry import load_game

    data = {"game": "tri", "players": 2, "size": 4, "owner": {"1,1,E": 0, "1,2,W": 1},
            "hands": [[0, 2, 3, 4], [0, 2, 3, 4]], "alive": [True, True], "teleports_used": [],
            "to_move": 0, "round": 2, "turn": 10, "phase": "battle",
            "battle": {"attacker": 0, "defender": 1, "target": "1,2,W", "dice": 1, "step": "defender_card",
                       "attacker_roll": 4, "defender_roll": 5, "attacker_card": 3, "defender_card": None}}
    state = load_game("tri", players=2, size=4).state_from_json(data)
    console = Console(record=True, width=140, color_system=None)
    console.print(board(state, viewer))
    text = console.export_text()
    assert rolls in text and "None" not in text
    assert ("cards +3 vs" in text) == (viewer == 0)
    console.print(board(state, None, everything=True))
    assert "rolls 4 vs 5; cards +3 vs -" in console.export_text()


def test_undo_makes_the_secrets_of_the_undone_battle_secret_again() -> None:
    from ludoteca.play.session import Session
    from ludoteca.registry import load_game

    session = Session(load_game("tri", players=2), ["human", "heuristic"], seed=1)

    def run_automatic() -> list[int]:
        revealed: list[int] = []
        while not session.is_human_turn():
            revealed += session.step_automatic()[1]
        return revealed

    for _ in range(200):  # the human plays its first legal move until it can attack
        run_automatic()
        s = session.state
        attacks = [a for a in s.legal_actions() if "attack" in s.action_to_json(a)]
        session.apply(attacks[0] if attacks else s.legal_actions()[0])
        if attacks:
            break
    k = len(session.log) - 1
    run_automatic()
    assert [e.kind for e in session.log[k:]] == ["attack", "roll", "roll"]
    assert not session.is_secret(k + 1) and session.is_secret(k + 2)  # own roll shown, defender's secret
    before = [e.text for e in session.log]
    assert session.apply(session.state.legal_actions()[0]) == []
    revealed = run_automatic()
    assert revealed == [k + 2] and session.log[k + 4].kind == "card" and not session.is_secret(k + 4)
    assert session.undo()
    assert [e.text for e in session.log] == before and session.is_secret(k + 2)


# --- boards and texts come from each game's package; the log from events ----------------------

def _playout(name: str, seed: int, steps: int = 400, **options: object) -> list[tuple[object, list]]:
    """(state before, events) for the first ``steps`` actions of a seeded random game."""
    import random

    from ludoteca.core.chance import random_action
    from ludoteca.registry import load_game

    rng = random.Random(seed)
    state = load_game(name, players=2, **options).new_initial_state()
    out = []
    for _ in range(steps):
        if state.is_terminal():
            break
        before = state.clone()
        out.append((before, state.apply_action(random_action(state, rng))))
    return out


@pytest.mark.parametrize("name", ["exactly", "tri", "tohm", "exagon"])
def test_every_game_draws_its_own_board_found_beside_its_engine(name: str) -> None:
    from rich.console import Console

    from ludoteca.play.boards import board, board_module
    from ludoteca.registry import load_game

    game = load_game(name, players=2)
    module = board_module(game)
    assert module is not None and module.__name__ == f"ludoteca.games.{name}.board"
    for state, _ in _playout(name, seed=7, steps=60)[::15]:
        for viewer in (0, 1, None):
            console = Console(record=True, width=140, color_system=None)
            console.print(board(state, viewer))
            text = console.export_text()
            assert "turn" in text and "Traceback" not in text and "None" not in text.split("phase")[0]


def test_a_game_without_a_board_module_is_shown_as_its_render_text() -> None:
    from rich.console import Console

    from ludoteca.games.tohm import TohmGame
    from ludoteca.play.boards import board, board_module

    class Homemade(TohmGame):  # defined outside a game package: no board module beside it
        pass

    game = Homemade(players=2)
    assert board_module(game) is None
    console = Console(record=True, width=140, color_system=None)
    state = game.new_initial_state()
    console.print(board(state, 0))
    assert console.export_text().strip() == state.render().strip()


@pytest.mark.parametrize("name", ["exactly", "tri", "tohm", "exagon"])
def test_each_games_texts_name_only_fields_its_events_carry(name: str) -> None:
    # A text naming a field the engine does not emit would fall back to the generic wording.
    from ludoteca.play.boards import board_module
    from ludoteca.play.texts import _format
    from ludoteca.registry import load_game

    texts = board_module(load_game(name, players=2)).TEXTS
    seen: set[str] = set()
    options = {"clock": 60} if name == "exagon" else {}
    for seed in range(6):
        for _, events in _playout(name, seed, steps=3000, **options):
            for event in events:
                template = texts.get(event.kind)
                if template:
                    assert _format(template, event.view(None, everything=True)) is not None, (event, template)
                    seen.add(event.kind)
                if event.secret and texts.get(f"{event.kind} (secret)"):
                    assert _format(texts[f"{event.kind} (secret)"], event.view(None)) is not None
    assert seen, f"no event of {name} has a text of its own"


def test_event_texts_generic_per_game_hidden_and_redacted() -> None:
    from ludoteca.core.events import event
    from ludoteca.play.texts import event_text, secret_label

    texts = {"euro": "a euro for player(s) {seats}", "placed": "", "chance (secret)": "roll (secret)"}
    euro = event("euro", seats=[0, 2], mover=1).view(None)
    assert event_text(euro, texts) == "a euro for player(s) player 0, player 2"
    assert event_text(event("euro", seats=[0, 2], mover=1).view(None), texts, ["Ada", "Bo", "Cy"]) == \
        "a euro for player(s) Ada, Cy"
    assert event_text(event("placed", seat=1, cell=[0, 1]).view(None), texts) is None  # restates the move
    assert event_text(event("comet", seat=1, cells=[[0, 1]]).view(None), texts) == "comet: seat 1, cells [[0,1]]"
    assert event_text(event("euro", mover=1).view(None), texts) == "euro: mover 1"  # field missing: plain words
    assert event_text(event("timeout", seat=3).view(None)) == "player 3: the time ran out"
    secret = event("chance", to=frozenset({0}), public={"seat": 0}, outcome={"roll": 4}, seat=0)
    assert secret_label(secret.view(1), texts) == "roll (secret)"
    assert secret_label(secret.view(1), {}) == "secret chance"
    assert event_text(secret.view(1), {}) == "chance (secret)"
    assert event_text(secret.view(0), texts) != "roll (secret)"


def test_the_log_keeps_each_actions_events_and_reveals_at_the_battle() -> None:
    from ludoteca.play.session import Session
    from ludoteca.registry import load_game

    battles = 0
    for seed in range(6):
        session = Session(load_game("tri", players=2), ["human", "human"], seed=seed)
        while not session.state.is_terminal() and len(session.log) < 2000:
            s = session.state
            if s.is_chance_node():
                revealed = session.step_automatic()[1]
            else:
                legal = s.legal_actions()
                attacks = [a for a in legal if "attack" in s.action_to_json(a)]
                revealed = session.apply(attacks[0] if attacks else legal[0])
            entry = session.log[-1]
            assert entry.events and entry.events[0].kind in ("move", "chance")
            if any(e.kind == "battle" for e in entry.events):
                battles += 1
                # RULES.md TRI: each battle roll is hidden from the other seat (so at a shared
                # screen both are secret) until both cards are down, and the attacker's card
                # too; the battle's reveal shows all three. The defender's card is never secret.
                kinds = [session.log[i].kind for i in revealed]
                assert kinds == ["roll", "roll", "card"] and not session.secret
            elif not session.state.is_terminal():
                assert revealed == []
    assert battles >= 3


def test_the_hourglass_takes_the_seconds_through_apply_action_and_the_record_keeps_them() -> None:
    from ludoteca.core.records import Record
    from ludoteca.play.session import Session
    from ludoteca.registry import load_game

    session = Session(load_game("exagon", players=2, clock=30), ["human", "human"], seed=2)
    while session.state.time_left() is None:  # the deal and the opening run without a clock
        s = session.state
        session.step_automatic() if s.is_chance_node() else session.apply(s.legal_actions()[0])
    s = session.state
    assert s.time_left() == 30  # RULES.md EXAGON: the first turn starts with time_left = clock
    place = next(a for a in s.legal_actions() if "place" in s.action_to_json(a))
    mover = s.current_player()
    session.apply(place, elapsed=4.5)
    assert session.record.actions[-1]["elapsed"] == 4.5
    assert "elapsed" not in s.action_to_json(place)
    after = session.state
    # RULES.md EXAGON: the seconds spent leave the hourglass; a next turn starts with clock + carry
    same_turn = after.current_player() == mover
    assert after.time_left() == pytest.approx(25.5 if same_turn else 30 + 25.5)
    again = Session.from_record(Record.from_json(session.record.to_json()), None, None)
    assert again.state.to_json() == session.state.to_json()


ITALIAN_PROMPT = r"Tu \(A\)[^\n>]*> "


def test_an_italian_locale_gets_italian_prompts_and_event_texts() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "1", lang="it_IT.UTF-8")
    child.expect("TOHM — A Tu, B IA casuale")
    child.expect(ITALIAN_PROMPT)
    assert "Mosse legali" in child.before and "Legal moves" not in child.before
    assert "pedine nella riserva" in child.before  # the board's own texts too
    child.sendline("help")
    child.expect("Comandi: moves")
    child.expect(ITALIAN_PROMPT)
    child.sendline("99")
    child.expect("Scegli un numero da 1 a")
    seen = ""
    for _ in range(3000):  # to the end, collecting what the game said (events such as passes and tris)
        i = child.expect([ITALIAN_PROMPT, "Partita finita"])
        seen += child.before
        if i == 1:
            break
        child.sendline("1")
    else:
        raise AssertionError("the game did not end")
    child.expect(pexpect.EOF)
    seen += child.before
    child.close()
    assert child.exitstatus == 0
    assert re.search(r"Vincitor[ei]: (Tu|IA casuale)", seen), seen[-500:]
    assert re.search(r"(Tu|IA casuale): (niente da fare con questo dado|tris)", seen)  # texts of TOHM's board.py
    assert "player " not in seen and "giocatore 0" not in seen and "random" not in seen


def test_lang_en_overrides_an_italian_locale() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "1", "--lang", "en", lang="it_IT.UTF-8")
    child.expect(PROMPT)
    assert "Legal moves" in child.before and "Mosse legali" not in child.before
    child.sendline("quit")
    child.expect("Bye")
    child.expect(pexpect.EOF)


def test_lang_it_overrides_an_english_locale() -> None:
    child = spawn("tohm", "--seats", "human,random", "--seed", "1", "--lang", "it", lang="en_GB.UTF-8")
    child.expect(ITALIAN_PROMPT)
    child.sendline("quit")
    child.expect("Ciao")
    child.expect(pexpect.EOF)
