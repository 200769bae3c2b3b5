"""The last English a person met in the terminal: game option errors, illegal moves,
``--help`` and argparse's own errors, in Italian through the real command line; English unchanged."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from ludoteca import cli, i18n
from ludoteca.core import i18n as hook
from ludoteca.registry import GAMES

MAIN = "import sys; from ludoteca.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    hook.install(None)


def ludoteca(*args: str, lang_env: str | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``ludoteca ARGS`` in a fresh interpreter, with no locale variable set (or LANG=``lang_env``)."""
    env = {k: v for k, v in os.environ.items() if k not in i18n.LOCALE_VARIABLES}
    env.update({"COLUMNS": "100", "PYTHONIOENCODING": "utf-8"})
    if lang_env:
        env["LANG"] = lang_env
    return subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=env,
                          input=stdin if stdin is not None else "", timeout=60)


def test_a_bad_option_value_in_italian() -> None:
    out = ludoteca("play", "tri", "--option", "size=99", "--lang", "it")
    assert out.returncode == 2
    assert out.stderr.strip() == "ludoteca: error: opzione size: atteso un valore da 2 a 12, ricevuto 99"


def test_a_bad_player_count_in_italian_from_lang_or_from_the_locale() -> None:
    for out in (ludoteca("random", "tohm", "--players", "9", "--lang", "it"),
                ludoteca("random", "tohm", "--players", "9", lang_env="it_IT.UTF-8")):
        assert out.returncode == 2
        assert out.stderr.strip() == "ludoteca: error: TOHM si gioca da 2 a 5 giocatori, non 9"


def test_a_games_own_option_error_in_italian() -> None:
    out = ludoteca("random", "tohm", "--option", "layout=[[3, 4]]", "--lang", "it")
    assert out.returncode == 2
    assert "un layout richiede almeno 3 righe, ricevute 1" in out.stderr
    out = ludoteca("random", "exagon", "--option", "clock=-1", "--lang", "it")
    assert "atteso un numero positivo di secondi o null, ricevuto -1" in out.stderr
    out = ludoteca("random", "exactly", "--option", "start_coin=maybe", "--lang", "it")
    assert "ricevuto 'maybe'" in out.stderr


def test_english_stays_the_default() -> None:
    out = ludoteca("play", "tri", "--option", "size=99")
    assert out.stderr.strip() == "ludoteca: error: option size: expected 2 to 12, got 99"
    out = ludoteca("random", "tohm", "--players", "9", lang_env="C.UTF-8")
    assert out.stderr.strip() == "ludoteca: error: TOHM is played by 2 to 5 players, not 9"
    out = ludoteca("lab", "tohm")
    assert out.stderr.strip() == "ludoteca: error: the following arguments are required: --out"
    out = ludoteca("play", "--help")
    assert out.returncode == 0
    assert out.stdout.startswith("usage: ludoteca play")
    assert "show this help message and exit" in out.stdout and "number of players" in out.stdout


@pytest.mark.parametrize("command", ["play", "lab"])
def test_help_in_italian(command: str) -> None:
    out = ludoteca(command, "--help", "--lang", "it")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith(f"uso: ludoteca {command}")
    for italian in ("argomenti posizionali:", "opzioni:", "mostra questo aiuto ed esce", "numero di giocatori",
                    f"uno tra: {', '.join(GAMES)}", "lingua: "):
        assert italian in text, italian
    for english in ("usage:", "positional arguments", "show this help", "number of players", "language of the"):
        assert english not in text, english
    if command == "lab":
        assert "partite da giocare (per variante; predefinito 1000)" in text
        assert "cartella dei risultati" in text


def test_the_language_of_help_may_come_from_the_locale_and_the_main_help_too() -> None:
    out = ludoteca("--help", lang_env="it_IT.UTF-8")
    assert out.stdout.startswith("uso: ludoteca")
    assert f"Giochi da tavolo d'autore: {', '.join(GAMES)}." in out.stdout  # every game the registry finds
    assert "gioca nel terminale" in out.stdout


def test_argparse_errors_in_italian() -> None:
    out = ludoteca("lab", "tohm", "--lang", "it")
    assert out.returncode == 2
    assert out.stderr.strip() == "ludoteca: error: questi argomenti sono obbligatori: --out"
    out = ludoteca("play", "tri", "--players", "x", "--lang=it")
    assert out.stderr.strip() == "ludoteca: error: argomento --players: valore int non valido: 'x'"
    out = ludoteca("play", "tri", "--lang", "it", "--nonsense")
    assert out.stderr.strip() == "ludoteca: error: argomenti non riconosciuti: --nonsense"


def test_an_illegal_move_typed_in_play_is_explained_in_italian() -> None:
    out = ludoteca("play", "tri", "--seats", "human,random", "--seed", "1", "--lang", "it",
                   stdin='{"pass": true}\n999\nnonsense\nquit\n')
    assert out.stderr == ""  # quit: the game left unfinished
    assert "'{\"pass\": true}' non è una mossa legale ora. Scrivi 'moves' per vederle." in out.stdout
    assert "Scegli un numero da 1 a 64." in out.stdout
    assert "Non capisco 'nonsense'" in out.stdout
    assert "is not a legal move" not in out.stdout
    english = ludoteca("play", "tri", "--seats", "human,random", "--seed", "1", stdin='{"pass": true}\nquit\n')
    assert "'{\"pass\": true}' is not a legal move now. Type 'moves' to see them." in english.stdout


def test_the_engines_explanations_of_an_illegal_action_in_italian() -> None:
    from ludoteca.core.errors import IllegalActionError
    from ludoteca.registry import load_game

    state = load_game("tri", players=2).new_initial_state()
    illegal = next(a for a in range(10_000) if not state.is_legal(a))
    i18n.use_language("it", {})
    with pytest.raises(IllegalActionError, match=r"non è consentita ora \(tocca al giocatore 0\)|non è una mossa"):
        state.apply_action(illegal)
    exagon = load_game("exagon", players=2, clock=None).new_initial_state()
    while exagon.is_chance_node():
        exagon.apply_action(exagon.legal_actions()[0])
    timeout = exagon.game.timeout_action  # type: ignore[attr-defined]
    assert exagon.illegal_message(timeout) == '{"timeout": true} non è accettata ora: questa partita non ha orologio'
    i18n.use_language("en", {})
    assert exagon.illegal_message(timeout) == '{"timeout": true} is not accepted now: this game has no clock'


def test_language_in_finds_lang_anywhere_before_a_double_dash() -> None:
    assert cli.language_in(["play", "tri", "--lang", "IT"]) == "it"
    assert cli.language_in(["--lang=en", "lab"]) == "en"
    assert cli.language_in(["play", "--lang", "fr"]) is None
    assert cli.language_in(["play", "--", "--lang", "it"]) is None
    assert cli.language_in(["play", "--lang"]) is None


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    out: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.update({f"{name} {k}": v for k, v in _helps(sub).items()})
        elif action.help and action.help != argparse.SUPPRESS:
            out[action.dest] = action.help
    return out


def test_every_help_text_of_the_terminal_commands_has_italian(monkeypatch: pytest.MonkeyPatch) -> None:
    """The web server's ``serve`` is another part's (its help stays out of this check)."""
    monkeypatch.setattr(argparse, "_", argparse._)  # type: ignore[attr-defined]  # restored afterwards
    cli.translate_argparse()
    i18n.use_language("en", {})
    english = _helps(cli.build_parser())
    i18n.use_language("it", {})
    italian = _helps(cli.build_parser())
    same = [k for k, v in english.items() if italian.get(k) == v and not k.startswith("serve ")]
    assert not same, same


def english_phrases() -> dict[str, str]:
    """The literal parts (two words or more, placeholders cut out) of every message of the terminal
    catalogue whose Italian differs, each with its message: none may reach an Italian player."""
    table = i18n.translations("it")
    out: dict[str, str] = {}
    for msgid, msgstr in table.items():
        if msgid == msgstr:
            continue
        for part in re.split(r"\{[^}]*\}", msgid):
            for piece in part.split("\n"):
                piece = piece.strip(" .,;:()'\"—-→!?")
                if len(re.findall(r"[A-Za-z]+", piece)) >= 2 and piece not in msgstr:
                    out[piece] = msgid
    return out


@pytest.mark.parametrize("name", GAMES)
def test_every_game_played_in_italian_shows_no_english_of_the_terminal_catalogue(name: str) -> None:
    """A whole game between two AIs (every log line, the boards, the end), then a person's prompt
    with help, a hint, a wrong move, the moves again and undo, all with ``--lang it``."""
    whole = ludoteca("play", name, "--seats", "random,random", "--seed", "1", "--lang", "it")
    assert whole.returncode == 0, whole.stderr
    assert "Partita finita (" in whole.stdout and "IA casuale 1" in whole.stdout
    person = ludoteca("play", name, "--seats", "human,easy", "--seed", "1", "--lang", "it",
                      stdin="help\nhint\nnonsense\n999\nmoves\nundo\nquit\n")
    assert person.stderr == ""
    assert "Tu (A)" in person.stdout and "IA facile" in person.stdout
    shown = whole.stdout + person.stdout
    leaks = {phrase: msgid for phrase, msgid in english_phrases().items() if phrase in shown}
    assert not leaks, leaks
    for english in ("player ", "giocatore 0", "giocatore 1", "chance:", "caso:", "(heuristic)", "human"):
        assert english not in shown, english


def test_the_catalogue_check_finds_an_english_sentence() -> None:
    phrases = english_phrases()
    assert phrases["Type one of the moves shown under the board, or 'help"].startswith("Type one of the moves")
    assert phrases["the hourglass starts"] == "{seat}: the hourglass starts, {time_left:.0f} s"
