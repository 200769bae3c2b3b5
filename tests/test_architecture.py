"""The architecture (docs/architecture.md): no module outside ``games/`` names a game.

A fifth game is added by writing one package in ``games/`` (and one line in ``registry.py``):
everything else reads the game's facts, events and board module, never a game's name. This test
reads every module of ``src/ludoteca`` except ``games/`` and ``registry.py``: a game's name as
an identifier (or a part of one: ``tri_visibility``, ``TriGame``) or as a word of a string
literal is an offence. Docstrings and comments are prose and may give a game as an example.
Files served to browsers (``web/static``: scripts, pages) are read too, comments aside.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ludoteca.registry import GAMES, game_class

SRC = Path(__file__).resolve().parents[1] / "src" / "ludoteca"
EXEMPT = (SRC / "games", SRC / "registry.py")
NAMES = frozenset(n.lower() for n in GAMES) | frozenset(game_class(n).title.lower() for n in GAMES)
STATIC_SUFFIXES = (".js", ".html", ".css")


def identifier_parts(identifier: str) -> list[str]:
    """``_tri_visibility`` -> ``["tri", "visibility"]``; ``TriGame`` -> ``["tri", "game"]``."""
    return [p.lower() for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", identifier)]


def words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z]+", text)]


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """ids of the string constants that are bare expression statements (docstrings, notes)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.add(id(node.value))
    return out


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.alias):
        return [*node.name.split("."), *([node.asname] if node.asname else [])]
    if isinstance(node, ast.ImportFrom) and node.module:
        return node.module.split(".")
    return []


def python_offences(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    prose = _docstring_nodes(tree)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        for ident in _identifiers(node):
            hits = NAMES.intersection(identifier_parts(ident))
            if hits:
                yield f"{line}: identifier {ident!r} names {', '.join(sorted(hits))}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            hits = NAMES.intersection(words(node.value))
            if hits:
                text = node.value if len(node.value) <= 60 else node.value[:57] + "..."
                yield f"{line}: string {text!r} names {', '.join(sorted(hits))}"


_COMMENTS = re.compile(r"/\*.*?\*/|<!--.*?-->|(?<![:\"'\\])//[^\n]*", re.S)


def static_offences(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8")
    code = _COMMENTS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for number, line in enumerate(code.splitlines(), 1):
        hits = NAMES.intersection(words(line)) | NAMES.intersection(
            p for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line) for p in identifier_parts(w))
        if hits:
            yield f"{number}: {line.strip()[:60]!r} names {', '.join(sorted(hits))}"


def scanned_files() -> list[Path]:
    out = []
    for path in sorted(SRC.rglob("*")):
        if not path.is_file() or any(path == e or e in path.parents for e in EXEMPT):
            continue
        if "__pycache__" in path.parts:
            continue
        if path.suffix == ".py" or (path.suffix in STATIC_SUFFIXES and "static" in path.parts):
            out.append(path)
    return out


def offences(path: Path) -> list[str]:
    found = python_offences(path) if path.suffix == ".py" else static_offences(path)
    rel = path.relative_to(SRC.parent)
    return [f"{rel}:{o}" for o in sorted(set(found), key=lambda o: (int(o.split(":")[0]), o))]


def test_the_scanner_finds_names_and_spares_prose(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""TRI\'s battle is an example in a docstring."""\n'
        "# EXAGON in a comment\n"
        "def _tri_visibility(state):\n"
        '    """exactly as before"""\n'
        '    return state.game.name == "exagon"\n'
        "class TohmEncoder:\n"
        "    triangle = 'a triangle'\n",
        encoding="utf-8",
    )
    found = sorted(python_offences(sample), key=lambda f: int(f.split(":")[0]))
    assert [f.split(":")[0] for f in found] == ["3", "5", "6"], found
    script = tmp_path / "x.js"
    script.write_text("// tri in a comment\nconst url = 'http://x'; // exagon\nrender.tohm = 1;\n"
                      "/* exactly\n */ draw('TRI');\n", encoding="utf-8")
    assert [f.split(":")[0] for f in static_offences(script)] == ["3", "5"]


def test_the_scan_covers_the_front_ends() -> None:
    files = {str(p.relative_to(SRC)) for p in scanned_files()}
    for part in ("agents", "commands", "core", "interop", "lab", "play", "web"):
        assert any(f.startswith(part + "/") for f in files), part
    assert not any(f.startswith("games/") for f in files) and "registry.py" not in files


@pytest.mark.parametrize("part", ["core", "agents", "play", "commands", "interop", "lab", "web", "top"])
def test_no_module_outside_games_names_a_game(part: str) -> None:
    def in_part(p: Path) -> bool:
        rel = p.relative_to(SRC)
        return len(rel.parts) == 1 if part == "top" else rel.parts[0] == part

    found = [o for p in scanned_files() if in_part(p) for o in offences(p)]
    assert not found, f"{len(found)} places outside games/ name a game:\n" + "\n".join(found)
