"""The example game (``games/_example``, Pig; docs/architecture.md, "Adding a game").

It is found only when asked (the tests ask: tests/conftest.py), never by a user; and a copy of it in
``games/`` is a fifth game the cross-game tests accept with no file edited outside its folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ludoteca.core import registry as core_registry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "src" / "ludoteca" / "games" / "_example"
EXAMPLE_NAME = "pig"
COPY = "hog"
"""The copy's package and game name."""
CROSS_GAME_TESTS = ("test_engine_api.py", "test_position_roundtrip.py", "test_records.py", "test_lab_contract.py",
                    "test_agents.py", "test_rules_pages.py", "test_guide.py", "test_options_kinds.py",
                    "test_game_clients.py", "test_cli.py")
"""The cross-game test files the copy runs (each parametrised over the games the registry finds)."""
SKIP = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")


def test_the_tests_ask_for_the_example() -> None:
    assert EXAMPLE_NAME in core_registry.games()  # tests/conftest.py set the variable
    assert core_registry.game_class(EXAMPLE_NAME).__module__ == "ludoteca.games._example"


@pytest.mark.parametrize("value", [None, "", "0", "yes"])
def test_the_example_is_not_found_unless_the_variable_is_1(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(core_registry.EXAMPLES_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(core_registry.EXAMPLES_VARIABLE, value)
    found = core_registry.games()
    assert EXAMPLE_NAME not in found and len(found) >= 1
    with pytest.raises(ValueError, match="unknown game"):
        core_registry.game_class(EXAMPLE_NAME)


def user(*args: str) -> subprocess.CompletedProcess[str]:
    """``ludoteca ARGS`` as a user runs it: without the tests' variable, in English."""
    env = {k: v for k, v in os.environ.items()
           if k not in (core_registry.EXAMPLES_VARIABLE, "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run([sys.executable, "-m", "ludoteca.cli", *args], capture_output=True, text=True, timeout=120,
                          env={**env, "LANG": "C.UTF-8", "NO_COLOR": "1"}, check=False)


def test_a_user_never_meets_the_example() -> None:
    rules = user("rules", EXAMPLE_NAME)
    assert rules.returncode == 2 and f"unknown game '{EXAMPLE_NAME}'" in rules.stderr
    for args in (["--help"], ["lab", "--help"], ["play", "--help"]):
        out = user(*args)
        assert out.returncode == 0, out.stderr
        assert not re.search(rf"\b{EXAMPLE_NAME}\b", out.stdout, re.IGNORECASE), (args, out.stdout)


def copy_of_the_example(tree: Path) -> Path:
    """The source tree and the tests in ``tree``, with the example copied to ``games/hog`` and renamed
    there (its name and title, the ``game`` of the positions of its rules pages and guide): the only
    edits a newcomer makes before changing the rules."""
    shutil.copytree(ROOT / "src", tree / "src", ignore=SKIP)
    shutil.copytree(ROOT / "tests", tree / "tests", ignore=SKIP)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    folder = tree / "src" / "ludoteca" / "games" / COPY
    shutil.copytree(EXAMPLE, folder, ignore=SKIP)
    engine = folder / "__init__.py"
    text = engine.read_text(encoding="utf-8")
    text = text.replace(f'name = "{EXAMPLE_NAME}"', f'name = "{COPY}"').replace('title = "Pig"', 'title = "Hog"')
    engine.write_text(text, encoding="utf-8")
    for path in [*folder.glob("rules/*.md"), folder / "guide.json"]:
        path.write_text(path.read_text(encoding="utf-8").replace(f'"game": "{EXAMPLE_NAME}"', f'"game": "{COPY}"'),
                        encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_copy_of_the_example_is_a_game_the_cross_game_tests_accept(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    folder = copy_of_the_example(tree)
    parts = sorted(p.name for p in EXAMPLE.iterdir() if p.name != "__pycache__")
    assert sorted(p.name for p in folder.iterdir()) == parts
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), core_registry.EXAMPLES_VARIABLE: "1"}
    found = subprocess.run([sys.executable, "-c", "import ludoteca; print(ludoteca.game_class('hog').__module__)"],
                           capture_output=True, text=True, cwd=tree, env=env, timeout=120, check=False)
    assert found.stdout.strip() == f"ludoteca.games.{COPY}", found.stderr  # the copy, not the example
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q", "-k", COPY,
                           *(f"tests/{name}" for name in CROSS_GAME_TESTS)],
                          capture_output=True, text=True, cwd=tree, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 40, done.stdout[-2000:]  # the copy's cases ran, in every file


NEW_TEXT = "points at stake this turn: {points}"
NEW_ITALIAN = "punti in gioco in questo turno: {points}"
"""A terminal text the copy's board gains, and its Italian (the copy's own catalog holds both)."""


def _outside(tree: Path, folder: Path) -> dict[str, list[str]]:
    """Every file of ``tree`` outside ``folder``, its lines (a catalog's without its ``#:`` places and
    creation date)."""
    out: dict[str, list[str]] = {}
    for path in sorted(tree.rglob("*")):
        if not path.is_file() or folder in path.parents or "__pycache__" in path.parts or path.suffix == ".so":
            continue
        lines = path.read_bytes().decode("utf-8", "replace").splitlines()
        if path.suffix in (".po", ".pot"):
            lines = [line for line in lines if not line.startswith(("#:", '"POT-Creation-Date:'))]
        out[path.relative_to(tree).as_posix()] = lines
    return out


@pytest.mark.slow
def test_a_copy_of_the_example_brings_its_terminal_texts_in_its_own_folder(tmp_path: Path) -> None:
    """A new terminal text of the copy's board: scripts/i18n.py puts it in the copy's own catalog, the
    check asks for its Italian until it is written there, then the terminal shows it in Italian and
    the i18n tests pass, with no file outside the copy's folder changed."""
    tree = tmp_path / "tree"
    folder = copy_of_the_example(tree)
    shutil.copytree(ROOT / "scripts", tree / "scripts", ignore=SKIP)
    board = folder / "board.py"
    source = board.read_text(encoding="utf-8")
    assert '_("this turn: {points}")' in source
    board.write_text(source.replace('_("this turn: {points}")', f'_("{NEW_TEXT}")'), encoding="utf-8")
    before = _outside(tree, folder)
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), core_registry.EXAMPLES_VARIABLE: "1",
           "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=tree, env=env,
                              timeout=300, check=False)

    assert run("scripts/i18n.py").returncode == 0
    catalog = folder / "locale" / "terminal.it.po"
    empty = f'msgid "{NEW_TEXT}"\nmsgstr ""\n'
    assert empty in catalog.read_text(encoding="utf-8")
    check = run("scripts/i18n.py", "--check")  # (the copy's lines: other games' work in progress may show too)
    assert check.returncode == 1
    assert [line for line in check.stdout.splitlines() if line.startswith(f"{COPY}")] == [
        f"{COPY}:terminal: untranslated: {NEW_TEXT!r} ({catalog})"]
    translated = f'msgid "{NEW_TEXT}"\nmsgstr "{NEW_ITALIAN}"\n'
    catalog.write_text(catalog.read_text(encoding="utf-8").replace(empty, translated), encoding="utf-8")
    check = run("scripts/i18n.py", "--check")
    assert not [line for line in check.stdout.splitlines() if line.startswith(f"{COPY}")], check.stdout
    played = run("-m", "ludoteca.cli", "play", COPY, "--seats", "random,random", "--seed", "1", "--lang", "it")
    assert played.returncode == 0, played.stderr
    assert "punti in gioco in questo turno: 0" in played.stdout and "points at stake" not in played.stdout
    tests = run("-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-rA", "-k", f"{COPY} or catalog or folder",
                "tests/test_i18n.py")  # the copy's catalog checked, and the catalogs together
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert f"PASSED tests/test_i18n.py::test_every_message_in_the_code_has_an_italian_translation[{COPY}:terminal]" \
        in tests.stdout, tests.stdout[-4000:]
    assert _outside(tree, folder) == before
