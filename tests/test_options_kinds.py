"""Options for people: every game declares each option's kind, label and help, translated
in its own package; the lobby's catalogue, the rules pages and ``ludoteca rules`` say them in words,
never as JSON. The games are asked through their classes: no game is named here."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from ludoteca.core.options import Choice, Option, OptionError, resolve_options
from ludoteca.i18n import web_text, web_translations
from ludoteca.registry import GAMES, game_class, load_game
from ludoteca.web.app import create_app

RULES = Path(__file__).resolve().parents[2] / "shared" / "RULES.md"
"""The rules contract, beside the checkout (as CI lays it out: ../shared)."""
PERSON_KINDS = {"choice", "bool", "int", "seconds_or_none", "file"}
JSON_WORDS = re.compile(r'[{}"]|\b(null|true|false|None|True|False)\b')
"""What a person must never read in an option's words: JSON's braces and quotes, its literals."""


def options_of(name: str) -> tuple[Option, ...]:
    return game_class(name).OPTIONS


ALL_OPTIONS = [(name, option.name) for name in GAMES for option in options_of(name)]


def option(name: str, option_name: str) -> Option:
    return next(o for o in options_of(name) if o.name == option_name)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    app = create_app(data_dir=str(tmp_path_factory.mktemp("web-data")), burst=10_000)
    with TestClient(app) as c:
        yield c


# --- the declarations ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("game", "name"), ALL_OPTIONS)
def test_every_option_declares_a_kind_a_person_can_set_with_words_in_both_languages(game: str, name: str) -> None:
    opt = option(game, name)
    assert opt.kind in PERSON_KINDS, f"{game}'s {name} has no kind a person can set"
    assert opt.label and opt.help, f"{game}'s {name} needs a label and a help text"
    italian = web_translations("it")
    for text in opt.texts():
        assert not JSON_WORDS.search(text), (name, text)
        assert italian.get(text), f"{game}'s {name}: no Italian for {text!r} (games/<name>/locale/options.it.po)"
        assert not JSON_WORDS.search(italian[text]), (name, italian[text])
    if opt.kind == "choice":
        assert len(opt.choices) >= 2 and all(c.label for c in opt.choices)
        assert opt.choice(opt.default) is not None, "the default is one of the choices"
    if opt.kind == "seconds_or_none":
        assert opt.none_label, "the words of 'none' (e.g. no hourglass)"
    if opt.kind == "file":
        assert opt.default_label, "the words of the default a designer's file replaces"


def _rules_sentence(name: str) -> str:
    """RULES.md's words about option ``name``: around its first `name` near the word "option"."""
    text = RULES.read_text(encoding="utf-8")
    for match in re.finditer(rf"`{re.escape(name)}`", text):
        if re.search(r"option", text[max(0, match.start() - 30):match.end() + 20], re.IGNORECASE):
            return text[max(0, match.start() - 80):match.end() + 300]
    raise AssertionError(f"RULES.md names no option {name}")


@pytest.mark.parametrize(("game", "name"), [(g, n) for g, n in ALL_OPTIONS if option(g, n).kind == "choice"])
def test_a_choice_offers_exactly_the_values_rules_md_names_and_its_default(game: str, name: str) -> None:
    """RULES.md names each choice option's values in quotes, and which one is the default."""
    sentence = _rules_sentence(name)
    named = re.findall(r'`"([a-z]+)"`', sentence)
    opt = option(game, name)
    assert {c.value for c in opt.choices} == set(named), (named, opt.choices)
    value = re.escape(str(opt.default))
    assert re.search(rf'`"{value}"`\s*\(default|default[^.;]*?\b{value}\b', sentence), sentence


@pytest.mark.parametrize(("game", "name"), [(g, n) for g, n in ALL_OPTIONS if option(g, n).kind == "seconds_or_none"])
def test_seconds_or_none_takes_rules_md_null_as_none(game: str, name: str) -> None:
    """RULES.md: the option is a number of seconds or `null` (no clock / no cap)."""
    assert "`null`" in _rules_sentence(name)
    built = load_game(game, players=game_class(game).min_players, **{name: None})
    assert built.options[name] is None


def test_a_kind_builds_its_resolver_and_refuses_what_it_does_not_declare() -> None:
    declared = (
        Option("speed", "", "slow", kind="choice", label="speed",
               choices=(Choice("slow", "slowly"), Choice("fast", "quickly"))),
        Option("loud", "", False, kind="bool", label="loud"),
        Option("rounds", "", 3, kind="int", low=1, high=9, label="rounds"),
        Option("timer", "", 30, kind="seconds_or_none", low=1, label="timer", none_label="no timer"),
    )
    assert resolve_options("g", declared, 2, 2, {"speed": "fast", "loud": "yes", "rounds": "4", "timer": "none"}) \
        == {"players": 2, "speed": "fast", "loud": True, "rounds": 4, "timer": None}
    for given, named in [({"speed": "warp"}, "speed"), ({"loud": 2}, "loud"), ({"rounds": 10}, "rounds"),
                         ({"rounds": 0}, "rounds"), ({"timer": 0}, "timer"), ({"timer": "soon"}, "timer")]:
        with pytest.raises(OptionError) as caught:
            resolve_options("g", declared, 2, 2, given)
        assert caught.value.option.name == named and str(caught.value).startswith(f"option {named}: ")
    with pytest.raises(ValueError, match="kind"):
        Option("x", "", kind="colour")
    with pytest.raises(ValueError, match="choices"):
        Option("x", "", kind="choice")
    with pytest.raises(ValueError, match="resolver"):
        Option("x", "", kind="file")


# --- the lobby's catalogue ----------------------------------------------------------------------------------

def test_the_catalogue_carries_each_options_kind_words_choices_and_range_in_both_languages(client: TestClient) -> None:
    english = {g["name"]: g for g in client.get("/api/games").json()["games"]}
    italian = {g["name"]: g for g in client.get("/api/games", headers={"Accept-Language": "it"}).json()["games"]}
    for name in GAMES:
        shown = {o["name"] for o in english[name]["options"]}
        assert shown == {o.name for o in options_of(name)}, "every option, a designer's file included"
        for en, it in zip(english[name]["options"], italian[name]["options"], strict=True):
            opt = option(name, en["name"])
            assert en["kind"] == it["kind"] == opt.kind
            assert en["label"] == opt.shown_label and it["label"] == web_text("it", opt.shown_label) != en["label"]
            assert en["help"] == opt.help and it["help"] == web_text("it", opt.help) != en["help"]
            assert en["default_words"] and it["default_words"]
            for words in (it["label"], it["help"], it["default_words"], it.get("none_label", "")):
                assert not JSON_WORDS.search(words), words
            if opt.kind == "choice":
                assert [c["value"] for c in it["choices"]] == [c.value for c in opt.choices]
                assert [c["label"] for c in en["choices"]] == [c.label for c in opt.choices]
                assert all(ci["label"] != ce["label"] for ci, ce in zip(it["choices"], en["choices"], strict=True))
            if opt.kind in ("int", "seconds_or_none"):
                assert it["low"] == opt.low and it.get("high") == opt.high
            if opt.kind == "seconds_or_none":
                assert it["none_label"] == web_text("it", opt.none_label) != en["none_label"]


def test_a_designers_file_is_sent_as_its_content_and_refused_in_the_creators_language(client: TestClient) -> None:
    files = [(name, o) for name in GAMES for o in options_of(name) if o.kind == "file"]
    assert files, "a game takes a designer's file"
    refuses = web_text("it", "the game refuses these options: {reason}").split("{")[0]
    for name, opt in files:
        players = game_class(name).min_players
        # a file's content as the browser reads it: the game's own default, written out, is accepted
        content = json.loads(json.dumps(game_class(name)(players=players).options[opt.name]))
        made = client.post("/api/tables", json={"game": name, "players": players, "options": {opt.name: content}})
        assert made.status_code == 201, made.text
        # a grid with a number out of range is no designer's set of anything: a clear refusal, in Italian
        bad = [[3, 4, 5], [5, 6, 3], [4, 3, 7]]
        res = client.post("/api/tables", json={"game": name, "players": players, "options": {opt.name: bad}},
                          headers={"Accept-Language": "it"})
        assert res.status_code == 400 and res.json()["error"] == "bad_options"
        message = res.json()["message"]
        assert message.startswith(refuses) and web_text("it", opt.shown_label) in message, message
        # text is never read as a path on the server
        res = client.post("/api/tables", json={"game": name, "players": players, "options": {opt.name: "/etc/passwd"}})
        assert res.status_code == 400 and "passwd" not in res.json()["message"]


# --- the rules pages and ``ludoteca rules`` -----------------------------------------------------------------

def option_section(page: str, lang: str) -> str:
    heading = web_text(lang, "Options")
    match = re.search(rf"<h2>{re.escape(heading)}</h2>(.*?)(<h2>|</article>)", page, re.S)
    assert match, f"the page has its section {heading!r}"
    return html.unescape(re.sub(r"<[^>]+>", " ", match.group(1)))


@pytest.mark.parametrize("lang", ["en", "it"])
@pytest.mark.parametrize("name", GAMES)
def test_the_rules_pages_option_section_lists_labels_and_value_names_never_json(
        client: TestClient, name: str, lang: str) -> None:
    page = client.get(f"/rules/{name}", params={"lang": lang})
    assert page.status_code == 200
    section = option_section(page.text, lang)
    assert not JSON_WORDS.search(section), section
    for opt in options_of(name):
        words = web_text(lang, opt.shown_label)
        assert words[:1].upper() + words[1:] in section
        assert f"`{opt.name}`" not in section
        for c in opt.choices:
            assert web_text(lang, c.label) in section
            assert web_text(lang, c.help) in section
        if opt.kind == "choice":
            default = web_text(lang, "Default: {value}.", value=web_text(lang, opt.choice(opt.default).label))
            assert default in " ".join(section.split())


@pytest.mark.parametrize("name", GAMES)
def test_ludoteca_rules_in_italian_lists_the_options_by_their_italian_words(name: str) -> None:
    ours = {k: v for k, v in os.environ.items() if k.startswith("LUDOTECA_") or k == "PYTHONPATH"}  # (example game)
    out = subprocess.run([sys.executable, "-m", "ludoteca.cli", "rules", name, "--lang", "it"], capture_output=True,
                         text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": "utf-8",
                                                      "NO_COLOR": "1", "COLUMNS": "100", **ours})
    assert out.returncode == 0 and out.stderr == ""
    listed = out.stdout[out.stdout.rindex("Opzioni:"):]
    for opt in options_of(name):
        words = web_text("it", opt.shown_label)
        assert f"\n  {words[:1].upper() + words[1:]}: {web_text('it', opt.help)}" in listed
        assert f"--option {opt.name}=" in listed  # what a terminal player types
        for c in opt.choices:
            assert f"- {web_text('it', c.label)}: {web_text('it', c.help)}" in listed
    english = [o.help for o in options_of(name)] + [c.help for o in options_of(name) for c in o.choices]
    assert not any(text in listed for text in english)

