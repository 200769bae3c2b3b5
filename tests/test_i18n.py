"""The terminal in Italian and English (issue 12): Babel catalogs, the locale variables, ``--lang``."""

from __future__ import annotations

import string
from collections.abc import Iterator

import pytest
from babel.messages.pofile import read_po

from ludoteca import i18n
from ludoteca.core import i18n as hook
from ludoteca.core.events import Event
from ludoteca.play.texts import event_text


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    hook.install(None)


def italian_catalog() -> dict[str, str]:
    with i18n.catalog_path("it").open("rb") as f:
        catalog = read_po(f, locale="it", domain=i18n.DOMAIN)
    return {str(m.id): str(m.string or "") for m in catalog if m.id and not m.fuzzy}


def placeholders(text: str) -> set[str]:
    """The fields a :meth:`str.format` string names, with their format specs (``time_left:.0f``)."""
    return {f"{name}:{spec}" for _text, name, spec, _conv in string.Formatter().parse(text) if name is not None}


def test_the_sources_hold_messages_of_every_part() -> None:
    found = {loc[0].split("/")[0] for message in i18n.extract() for loc in message.locations}
    assert {"play", "commands", "games", "core", "lab"} <= found
    assert len(i18n.extract()) > 50


def test_every_message_in_the_code_has_an_italian_translation() -> None:
    """Extracted from the source now (Babel's extractor): a new message without a translation fails."""
    catalog = italian_catalog()
    missing = [str(m.id) for m in i18n.extract() if m.id and not catalog.get(str(m.id), "").strip()]
    assert not missing, "run scripts/i18n.py and translate in locale/it/LC_MESSAGES/messages.po:\n" + \
        "\n".join(missing)


def test_the_pot_template_is_up_to_date() -> None:
    with (i18n.LOCALE_DIR / "messages.pot").open("rb") as f:
        template = {str(m.id) for m in read_po(f) if m.id}
    assert template == {str(m.id) for m in i18n.extract() if m.id}, "run scripts/i18n.py"


def test_placeholders_are_the_same_in_msgid_and_msgstr() -> None:
    catalog = italian_catalog()
    wrong = [(msgid, text) for msgid, text in catalog.items() if text and placeholders(msgid) != placeholders(text)]
    assert not wrong, wrong
    # and the translation formats with the fields of its msgid
    for msgid, text in catalog.items():
        fields = {name.split(".")[0].split("[")[0]: 1.0 for name in (p.split(":")[0] for p in placeholders(msgid))}
        text.format(**fields)


@pytest.mark.parametrize(("environ", "lang"), [
    ({}, "en"), ({"LANG": "it_IT.UTF-8"}, "it"), ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANGUAGE": "it:en", "LANG": "en_US.UTF-8"}, "it"), ({"LC_ALL": "en_GB.UTF-8", "LANG": "it_IT"}, "en"),
    ({"LC_MESSAGES": "it_CH", "LANG": "en_US"}, "it"), ({"LANGUAGE": "", "LANG": "it"}, "it"),
])
def test_the_language_follows_the_first_locale_variable_set(environ: dict[str, str], lang: str) -> None:
    assert i18n.terminal_language(environ) == lang
    assert i18n.use_language(None, environ) == lang


def test_lang_overrides_the_locale_and_english_is_the_default() -> None:
    assert i18n.use_language("en", {"LANG": "it_IT.UTF-8"}) == "en"
    assert hook._("Game over") == "Game over"
    assert i18n.use_language("it", {"LANG": "en_US.UTF-8"}) == "it"
    assert hook._("Game over") == "Partita finita"
    assert hook._("") == ""  # never the catalog's header
    assert hook._("a text no catalog has") == "a text no catalog has"
    i18n.use_language(None, {})
    assert hook._("Game over") == "Game over"


def test_event_texts_of_a_games_board_are_translated_when_shown() -> None:
    from ludoteca.games.tohm import board

    event = Event("pass", {"seat": 1})
    view = event.view(None, everything=True) or {}
    assert event_text(view, board.TEXTS) == "player 1: nothing possible with this die, the turn passes"
    i18n.use_language("it", {})
    assert event_text(view, board.TEXTS) == "giocatore 1: niente da fare con questo dado, il turno passa"
    assert event_text({"kind": "pass", "secret": True}, board.TEXTS) == "pass (segreto)"


@pytest.mark.parametrize("command", ["play", "replay", "random", "rules"])
def test_the_terminal_commands_take_lang(command: str) -> None:
    import argparse
    import importlib

    parser = argparse.ArgumentParser()
    importlib.import_module(f"ludoteca.commands.{command}").add_arguments(parser)
    args = parser.parse_args([*(["x.json"] if command == "replay" else ["tohm"]), "--lang", "IT"])
    assert args.lang == "it"


@pytest.mark.parametrize(("command", "args"), [
    ("lab", ["tohm", "--out", "x"]), ("arena", ["tohm", "--agents", "random"]), ("serve", []),
])
def test_the_lab_arena_and_serve_take_lang(command: str, args: list[str]) -> None:
    import argparse
    import importlib

    parser = argparse.ArgumentParser()
    importlib.import_module(f"ludoteca.commands.{command}").add_arguments(parser)
    assert parser.parse_args([*args, "--lang", "IT"]).lang == "it"
    assert parser.parse_args(args).lang is None


def test_every_figure_a_game_declares_is_named_in_italian() -> None:
    """The lab report shows each counter of a game (``Game.counters``) by its name and its doc, and the
    game's score by its name: a game that adds a counter adds both to its ``LAB_NAMES`` and its docs
    to the catalog (``N_``)."""
    from ludoteca.lab.metrics import label
    from ludoteca.registry import GAMES, game_class

    catalog = italian_catalog()
    missing = []
    for name in GAMES:
        cls = game_class(name)
        for c in cls.counters:
            missing += [f"{name}: {text!r}" for text in (label(c.name), c.doc) if not catalog.get(text)]
        if not catalog.get(label(cls.score_name)):
            missing.append(f"{name}: score {cls.score_name!r}")
    assert not missing, missing


def test_the_command_line_its_help_and_the_engines_explanations_are_in_the_catalog() -> None:
    """``--help`` (cli.py, every command's help texts), argparse's own words and the engines'
    explanations of an illegal action or a bad option value are messages of the terminal catalog."""
    files = {loc[0] for message in i18n.extract() for loc in message.locations}
    assert {"cli.py", "core/game.py", "core/options.py", "commands/rules.py", "games/tohm/__init__.py"} <= files
    catalog = italian_catalog()
    for msgid in ("usage: ", "positional arguments", "options", "show this help message and exit",
                  "the following arguments are required: %s", "{action} is not legal now (player {seat} to act)"):
        assert catalog.get(msgid, "").strip(), msgid
