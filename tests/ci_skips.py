"""On CI (``CI=true``) a skipped test is a failure: every test dependency is installed there,
so a skip can only mean a broken part of the project. A test that may skip on CI (it needs
hardware CI has not, such as a CUDA GPU) says so with ``@pytest.mark.may_skip_on_ci(reason)``.
Skips are listed with their reasons in the log (``-rfEs`` in scripts/test.sh)."""

from __future__ import annotations

import os

import pytest


def on_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "may_skip_on_ci(reason): the test needs what CI has not (a CUDA GPU)")


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def _failed_skip(report: pytest.TestReport) -> None:
    reason = _reason(report)
    report.outcome = "failed"
    report.longrepr = (f"skipped on CI, where every test must run ({reason}); mark it "
                       "may_skip_on_ci(reason) if CI cannot run it")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    allowed = item.get_closest_marker("may_skip_on_ci")
    with_reason = allowed is not None and bool(allowed.args or allowed.kwargs.get("reason"))
    if on_ci() and report.skipped and not hasattr(report, "wasxfail") and not with_reason:
        _failed_skip(report)


SKIPPED_MODULES = pytest.StashKey[list[str]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    """A whole module skipped at import (``importorskip`` of a missing dependency): kept as a
    skip so that the other modules still run, and the session fails at its end."""
    outcome = yield
    report = outcome.get_result()
    if on_ci() and report.skipped:
        collector.config.stash.setdefault(SKIPPED_MODULES, []).append(
            f"{report.nodeid}: {_reason(report)}")


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    for line in config.stash.get(SKIPPED_MODULES, []):
        terminalreporter.write_line(f"FAILED (module skipped on CI, where every test must run) "
                                    f"{line}", red=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.stash.get(SKIPPED_MODULES, []) and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
