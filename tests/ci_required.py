"""Under CI, tests that need an outside service fail instead of skipping.

Outside CI, a test marked ``browser`` (needs Debian's Chromium and playwright), ``postgres``
(needs a PostgreSQL server), ``redis`` (needs Debian's redis-server and the redis package) or
``nginx`` (needs Debian's nginx) or ``compiled`` (needs a compiled engine, built by ``pip install -e .``
with the system C compiler) is skipped when what it needs is missing, so a developer can run
the suite anywhere. Under ``CI=true`` such a skip would let a run pass without testing those
parts, so the skip is turned into a failure that says what is missing. A test module of
:data:`REQUIRED_MODULES` skipped as a whole (``pytest.importorskip`` at module level) fails too.

The hooks are imported by ``tests/conftest.py``; ``-p tests.ci_required`` loads them alone.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

REQUIRED_IN_CI = ("browser", "postgres", "redis", "nginx", "compiled")
"""Markers of the tests that must run, not skip, under CI."""
REQUIRED_MODULES = ("tests/browser/", "tests/test_web_postgres.py", "tests/test_web_bus.py",
                    "tests/test_web_leases.py", "tests/test_proxy.py", "tests/test_cluster_e2e.py")
"""Test files (path suffixes or folders) that must not be skipped as a whole under CI."""


def ci() -> bool:
    """True when the environment says we run under CI (``CI=true``, as CI systems set it)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _reason(longrepr: Any) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # (path, line, "Skipped: why")
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def _required_module(path: str) -> bool:
    path = path.replace(os.sep, "/")
    return any(path.endswith(m) or f"/{m}" in path for m in REQUIRED_MODULES)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail") or not ci():
        return
    needed = [m for m in REQUIRED_IN_CI if item.get_closest_marker(m) is not None]
    if needed:
        report.outcome = "failed"
        report.longrepr = (f"CI=true: this {needed[0]} test must run, but it would be skipped: "
                           f"{_reason(report.longrepr)}")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and ci() and isinstance(collector, pytest.Module) and _required_module(str(collector.path)):
        report.outcome = "failed"
        report.longrepr = (f"CI=true: the tests of {collector.path.name} must run, but the module would be "
                           f"skipped: {_reason(report.longrepr)}")
