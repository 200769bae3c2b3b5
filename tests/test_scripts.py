"""The shell scripts (scripts/, .ci/run) and the CI rule "no skipped browser/postgres tests".

Nothing here runs apt-get or starts a server: apt-get is replaced by a stub on PATH.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ["scripts/test", "scripts/run", "scripts/setup", "scripts/start-postgres", "scripts/stop-postgres",
           "scripts/start-redis", "scripts/stop-redis", "scripts/common.sh", ".ci/run"]
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env.update(extra)
    return env


def _common(snippet: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``snippet`` in bash after sourcing scripts/common.sh."""
    code = f". {ROOT / 'scripts/common.sh'}\n{snippet}"
    return subprocess.run([BASH, "-c", code], cwd=tmp_path, env=_env(**env), capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_parses_and_is_executable(script: str) -> None:
    path = ROOT / script
    assert subprocess.run([BASH, "-n", str(path)], capture_output=True, text=True).returncode == 0
    if script != "scripts/common.sh":  # sourced, not run
        assert os.access(path, os.X_OK), f"{script} is not executable"


def test_scripts_test_does_not_exec_pytest() -> None:
    """`exec` would replace the shell, and the EXIT trap that stops PostgreSQL and Redis would never run."""
    text = (ROOT / "scripts/test").read_text()
    assert "exec " not in text
    assert "trap stop_started_services EXIT" in text


@pytest.mark.parametrize(("ci", "code", "word"), [("true", 1, "error"), ("", 0, "warning"), ("false", 0, "warning")])
def test_missing_dependency_is_an_error_only_under_ci(tmp_path: Path, ci: str, code: int, word: str) -> None:
    run = _common('missing "chromium is missing"; echo after', tmp_path, CI=ci)
    assert run.returncode == code
    assert word in run.stderr and "chromium is missing" in run.stderr
    assert ("after" in run.stdout) == (code == 0)


def _fake_apt(tmp_path: Path, update_fails: bool) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "apt-get"
    fake.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$*" >> {tmp_path / 'calls'}
        case "$*" in *update*) exit {1 if update_fails else 0};; esac
        exit 0
    """))
    fake.chmod(0o755)
    return bin_dir


def test_apt_install_waits_for_the_package_lock(tmp_path: Path) -> None:
    bin_dir = _fake_apt(tmp_path, update_fails=False)
    run = _common("apt_install chromium", tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}")
    assert run.returncode == 0, run.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 2
    assert "update" in calls[0] and "install" in calls[1] and "chromium" in calls[1]
    assert all("-o DPkg::Lock::Timeout=600" in c for c in calls)


def test_apt_install_gives_up_when_update_keeps_failing(tmp_path: Path) -> None:
    bin_dir = _fake_apt(tmp_path, update_fails=True)
    run = _common("apt_install chromium", tmp_path, PATH=f"{bin_dir}:{os.environ['PATH']}",
                  LUDOTECA_APT_LOCK_WAIT="0")
    assert run.returncode != 0
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 1 and "update" in calls[0]  # never reached install


def test_setup_says_what_it_does_on_the_first_run_only(tmp_path: Path) -> None:
    """The first scripts/run (which calls scripts/setup) installs for a minute: it must say so."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts/setup", tmp_path / "scripts/setup")
    (tmp_path / "pyproject.toml").write_text("")
    fake_python = tmp_path / "fake-python"  # `-m venv DIR` makes DIR/bin/python, itself a no-op
    fake_python.write_text('#!/bin/sh\nmkdir -p "$3/bin" && printf "#!/bin/sh\\nexit 0\\n" > "$3/bin/python" '
                           '&& chmod +x "$3/bin/python"\n')
    fake_python.chmod(0o755)
    env = _env(PYTHON=str(fake_python))
    first = subprocess.run([BASH, "scripts/setup", "web,lab"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert "setting up .venv and installing ludoteca[web,lab] (first run: a few minutes; pip's progress follows)" \
        in first.stderr
    again = subprocess.run([BASH, "scripts/setup", "web,lab"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 0 and again.stderr == ""
    other = subprocess.run([BASH, "scripts/setup", "web,lab,test"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
    assert "installing ludoteca[web,lab,test] into .venv" in other.stderr


def test_a_first_install_shows_pips_progress_and_later_ones_are_quiet(tmp_path: Path) -> None:
    """scripts/run's first install used to print nothing for minutes: pip's own lines now come as they
    happen (pip without -q), and an update after pyproject.toml changed stays quiet (-q)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts/setup", tmp_path / "scripts/setup")
    (tmp_path / "pyproject.toml").write_text("")
    # `-m venv DIR` makes DIR/bin/python: a stand-in for pip that says how it was called, and, unless
    # told -q, prints progress lines the way pip does
    pip = ('#!/bin/sh\necho "pip called: $*" >&2\ncase " $* " in *" -q "*) exit 0;; esac\n'
           'echo "Collecting openskill"\necho "Downloading numpy-2.0.whl (18.3 MB)"\n'
           'echo "x is ignored: it is neither a file nor a folder" >&2\n')
    fake_python = tmp_path / "fake-python"
    fake_python.write_text(f"#!/bin/sh\nmkdir -p \"$3/bin\" && printf '%s' '{pip}' > \"$3/bin/python\" "
                           '&& chmod +x "$3/bin/python"\n')
    fake_python.chmod(0o755)
    env = _env(PYTHON=str(fake_python))

    def setup() -> str:
        run = subprocess.run([BASH, "scripts/setup", "web,lab"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return run.stderr

    first = setup()
    assert "pip's progress follows" in first
    assert "Collecting openskill" in first and "Downloading numpy-2.0.whl (18.3 MB)" in first
    assert "is ignored" not in first
    install = [line for line in first.splitlines() if line.startswith("pip called:") and " -e " in line]
    assert install and " -q " not in install[0] + " "
    assert first.index("Collecting openskill") < first.index("is installed in .venv")
    assert setup() == ""  # nothing to do
    os.utime(tmp_path / "pyproject.toml", (2_000_000_000, 2_000_000_000))  # changed after the install
    update = setup()
    assert "updating ludoteca[web,lab]" in update and "Collecting" not in update
    assert any(" -e " in line and " -q " in line + " " for line in update.splitlines() if "pip called" in line)


def test_ci_run_sets_ci_true() -> None:
    assert 'export CI="${CI:-true}"' in (ROOT / ".ci/run").read_text()


# --- under CI, browser and postgres tests fail instead of skipping ---------------------------

SAMPLE = '''
import pytest

@pytest.mark.browser
def test_needs_chromium():
    pytest.skip("/usr/bin/chromium is missing")

@pytest.mark.postgres
@pytest.mark.skipif(True, reason="LUDOTECA_TEST_POSTGRES_URL is not set")
def test_needs_postgres():
    pass

def test_optional():
    pytest.skip("an optional extra is missing")

@pytest.mark.browser
@pytest.mark.xfail(reason="known")
def test_known_failure():
    assert False
'''


def _pytest(tmp_path: Path, ci: str, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    browser: b\n    postgres: p\n")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.ci_required", "-p", "no:cacheprovider", "-rfEs",
         "--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=tmp_path, env=_env(CI=ci, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=120)


SKIPPED_MODULE = {"tests/test_web_postgres.py": "import pytest\npytest.importorskip('no_such_module_xyz')\n"}


def test_without_ci_missing_services_skip(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "", {"test_sample.py": SAMPLE})
    assert run.returncode == 0, run.stdout
    assert "3 skipped" in run.stdout and "1 xfailed" in run.stdout
    run = _pytest(tmp_path / "module", "", SKIPPED_MODULE)
    assert run.returncode == 5 and "1 skipped" in run.stdout, run.stdout  # 5: no test ran


def test_under_ci_missing_services_fail(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "true", {"test_sample.py": SAMPLE})
    assert run.returncode == 1, run.stdout
    out = run.stdout
    assert "CI=true: this browser test must run, but it would be skipped: /usr/bin/chromium is missing" in out
    assert "CI=true: this postgres test must run" in out and "LUDOTECA_TEST_POSTGRES_URL is not set" in out
    # an unmarked skip stays a skip, an expected failure stays expected
    assert "1 failed" in out and "1 error" in out and "1 skipped" in out and "1 xfailed" in out


def test_under_ci_a_skipped_postgres_module_fails(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "true", SKIPPED_MODULE)
    assert run.returncode != 0, run.stdout
    assert "CI=true: the tests of test_web_postgres.py must run, but the module would be skipped" in run.stdout


# --- benchmarks/interop.py compares like with like ---------------------------------------------

def _interop() -> Any:
    spec = importlib.util.spec_from_file_location("bench_interop", ROOT / "benchmarks" / "interop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_interop_configures_ludoteca_mcts_like_openspiel() -> None:
    from ludoteca.agents import make_agent

    agent = make_agent(_interop().like_for_like_spec(200, 10, 1.4), seed=0, game="exagon")
    # uniformly random rollouts (EXAGON's default is heuristic), every legal action (default: pruned to 8)
    assert (agent.iterations, agent.cap, agent.rollout, agent.prune, agent.c) == (200, 10, "random", 0, 1.4)


class _Line:
    """A fake OpenSpiel state: a line of ``length`` forced moves, then the end (returns [1, -1])."""

    def __init__(self, length: int, done: int = 0) -> None:
        self.length, self.done = length, done
        self.ludoteca_state = ("position", done)

    def clone(self) -> _Line:
        return _Line(self.length, self.done)

    def is_terminal(self) -> bool:
        return self.done >= self.length

    def is_chance_node(self) -> bool:
        return False

    def legal_actions(self) -> list[int]:
        return [0]

    def apply_action(self, action: int) -> None:
        self.done += 1
        self.ludoteca_state = ("position", self.done)

    def returns(self) -> list[float]:
        return [1.0, -1.0] if self.is_terminal() else [0.0, 0.0]


@pytest.mark.parametrize(("cap", "length", "expected"), [
    (3, 5, [0.3, 0.7]),    # cut after 3 actions, as ludoteca's rollout: scored by the evaluation function
    (0, 5, [0.0, 1.0]),    # cap 0: the leaf itself is evaluated
    (10, 5, [1.0, -1.0]),  # the game ends first: its returns
])
def test_openspiel_cut_rollouts_use_ludotecas_leaf_evaluation(cap: int, length: int, expected: list[float]) -> None:
    np = pytest.importorskip("numpy")
    pytest.importorskip("open_spiel.python.algorithms.mcts")
    seen: list[Any] = []

    def value(position: Any) -> list[float]:
        seen.append(position)
        return [position[1] / 10, 1 - position[1] / 10]

    evaluator = _interop().cut_rollout_evaluator("exagon", cap, np.random.RandomState(0))
    evaluator.value = value
    assert list(evaluator.evaluate(_Line(length))) == pytest.approx(expected)
    assert seen == ([] if cap >= length else [("position", cap)])


def test_setup_py_refuses_an_unknown_engine_name() -> None:
    """``LUDOTECA_EXT`` picks engines to rebuild; a misspelled name stops the build and lists the known
    ones instead of silently building nothing (docs/compiled.md)."""
    env = _env(LUDOTECA_EXT="tohmm")
    done = subprocess.run([sys.executable, "setup.py", "--name"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0
    assert "no compiled engine is called 'tohmm'" in done.stderr
    assert "the engines are:" in done.stderr and "tohm" in done.stderr.split("the engines are:")[1]
