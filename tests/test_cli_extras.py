"""The command line without an optional extra (pyproject.toml): ``pip install 'ludoteca[lab]'`` alone
gives a working ``ludoteca lab``; a command whose extra is missing says what to install, in one line,
instead of breaking every command with a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

WITHOUT_WEB = ("starlette", "fastapi", "uvicorn", "sqlalchemy", "argon2", "redis", "prometheus_client", "psycopg")
"""The packages only ``ludoteca[web]`` brings."""


def run_without(modules: tuple[str, ...], *args: str, lang: str = "en") -> subprocess.CompletedProcess[str]:
    """``ludoteca ARGS`` in a process where ``modules`` cannot be imported (as if not installed)."""
    code = ("import sys\n"
            f"for m in {modules!r}: sys.modules[m] = None\n"
            "from ludoteca.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LANGUAGE": lang})


def test_the_lab_runs_without_the_web_extra(tmp_path) -> None:
    assert run_without(WITHOUT_WEB, "--help").returncode == 0
    helped = run_without(WITHOUT_WEB, "lab", "--help")
    assert helped.returncode == 0 and "--agents" in helped.stdout
    from ludoteca.registry import GAMES

    done = run_without(WITHOUT_WEB, "random", GAMES[0], "--seed", "1", "--players", "2")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", ["serve", "backup", "admin"])
def test_a_command_without_its_extra_says_what_to_install(command: str, tmp_path) -> None:
    args = {"serve": ["serve"], "backup": ["backup", str(tmp_path / "b")], "admin": ["admin", "list"]}[command]
    out = run_without(WITHOUT_WEB, *args)
    assert out.returncode == 2, out.stderr
    assert "pip install 'ludoteca[web]'" in out.stderr and "Traceback" not in out.stderr
    italian = run_without(WITHOUT_WEB, *args, lang="it")
    assert "pip install 'ludoteca[web]'" in italian.stderr and "non è installato" in italian.stderr
