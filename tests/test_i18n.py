"""The terminal in Italian and English: Babel catalogs, the locale variables, ``--lang``."""

from __future__ import annotations

import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from ludoteca import i18n
from ludoteca.core import i18n as hook
from ludoteca.core.events import Event
from ludoteca.play.texts import event_text
from ludoteca.registry import GAMES


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    hook.install(None)


TERMINAL_CATALOGS = [label for label, _po, _make in i18n.terminal_catalogs()]
"""The shared terminal catalog and each game's own (``<game>:terminal``)."""


def read_italian(po: Path) -> dict[str, str]:
    with po.open("rb") as f:
        catalog = read_po(f, locale="it", domain=i18n.DOMAIN)
    return {str(m.id): str(m.string or "") for m in catalog if m.id and not m.fuzzy}


def italian_catalog() -> dict[str, str]:
    """What the terminal finds in Italian: a game's own catalog first, then the shared one."""
    merged: dict[str, str] = {}
    for _label, po, _make in reversed(i18n.terminal_catalogs()):
        merged.update({k: v for k, v in read_italian(po).items() if v.strip()})
    return merged


def placeholders(text: str) -> set[str]:
    """The fields a :meth:`str.format` string names, with their format specs (``time_left:.0f``)."""
    return {f"{name}:{spec}" for _text, name, spec, _conv in string.Formatter().parse(text) if name is not None}


def test_the_sources_hold_messages_of_every_part() -> None:
    found = {loc[0].split("/")[0] for message in i18n.extract() for loc in message.locations}
    assert {"play", "commands", "core", "lab"} <= found
    assert len(i18n.extract()) > 50


def test_a_games_terminal_texts_live_in_its_own_folder() -> None:
    """The shared catalog holds no game's text; each game's board, engine explanations and counters
    are extracted from its folder into its folder's ``locale/terminal.it.po``."""
    assert not [loc for m in i18n.extract() for loc in m.locations if loc[0].startswith("games/")]
    for name in GAMES:
        folder = i18n.game_dir(name)
        po = i18n.game_terminal_catalog_path(name, "it")
        assert po.parent == folder / "locale" and f"{name}:terminal" in TERMINAL_CATALOGS
        messages = i18n.extract_game_terminal(name)
        assert len(messages) > 5, name  # its board's texts at least
        places = {loc[0] for m in messages for loc in m.locations}
        assert all((i18n.LOCALE_DIR.parent / place).parent == folder for place in places), places


@pytest.mark.parametrize("label", TERMINAL_CATALOGS)
def test_every_message_in_the_code_has_an_italian_translation(label: str) -> None:
    """Extracted from the source now (Babel's extractor) into its own catalog: a new message without a
    translation there fails."""
    _label, po, make = next(c for c in i18n.terminal_catalogs() if c[0] == label)
    catalog = read_italian(po) if po.exists() else {}
    missing = [str(m.id) for m in make() if m.id and not catalog.get(str(m.id), "").strip()]
    assert not missing, f"run scripts/i18n.py and translate in {po}:\n" + "\n".join(missing)


def test_no_two_terminal_catalogs_translate_a_message_differently() -> None:
    """The terminal has one table: a text two catalogs hold must read the same in both."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for label, po, _make in i18n.terminal_catalogs():
        for msgid, text in read_italian(po).items():
            if msgid in seen and text.strip() and seen[msgid][1] != text:
                clashes.append((msgid, seen[msgid], (label, text)))
            seen.setdefault(msgid, (label, text))
    assert not clashes, clashes


def test_the_terminal_finds_a_games_text_in_its_catalog_then_in_the_shared_one() -> None:
    table = i18n.translations("it")
    for label, po, _make in i18n.terminal_catalogs():
        own = {k: v for k, v in read_italian(po).items() if v.strip()}
        assert own and all(table[k] == v for k, v in own.items()), label


def test_the_pot_template_is_up_to_date() -> None:
    with (i18n.LOCALE_DIR / "messages.pot").open("rb") as f:
        template = {str(m.id) for m in read_po(f) if m.id}
    assert template == {str(m.id) for m in i18n.extract() if m.id}, "run scripts/i18n.py"


@pytest.mark.parametrize("label", TERMINAL_CATALOGS)
def test_placeholders_are_the_same_in_msgid_and_msgstr(label: str) -> None:
    catalog = read_italian(next(po for name, po, _make in i18n.terminal_catalogs() if name == label))
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
    from ludoteca.registry import game_class

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
    assert {"cli.py", "core/game.py", "core/options.py", "commands/rules.py"} <= files
    for name in GAMES:  # its engine's explanations: from its __init__.py, into its own catalog
        assert f"{i18n.game_dir(name).name}/__init__.py" in {
            loc[0].removeprefix("games/") for m in i18n.extract_game_terminal(name) for loc in m.locations}, name
    catalog = italian_catalog()
    for msgid in ("usage: ", "positional arguments", "options", "show this help message and exit",
                  "the following arguments are required: %s", "{action} is not legal now (player {seat} to act)"):
        assert catalog.get(msgid, "").strip(), msgid
