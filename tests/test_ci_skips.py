"""The CI guard of tests/ci_skips.py, run on a small suite in a pytest of its own: with CI=true
a skip fails the run unless the test is marked ``may_skip_on_ci(reason)``; without CI a skip
stays a skip; either way ``-rs`` names each skip's reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SUITE = {
    "conftest.py": 'pytest_plugins = ["tests.ci_skips"]\n',
    "test_cases.py": '''
import pytest

def test_runs():
    pass

def test_skips_for_a_missing_dependency():
    pytest.importorskip("no_such_module_anywhere")

@pytest.mark.may_skip_on_ci(reason="CI runners have no CUDA GPU")
@pytest.mark.skipif(True, reason="needs a CUDA GPU")
def test_needs_a_gpu():
    pass

@pytest.mark.xfail(reason="known")
def test_expected_to_fail():
    assert False
''',
    "test_module_skip.py": 'import pytest\npytest.importorskip("another_missing_module")\n',
}


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                           "-p", "no:randomly", str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_on_ci_a_skip_fails_unless_the_test_allows_it(tmp_path):
    result = _run(tmp_path, "true")
    assert result.returncode == 1, result.stdout
    tail = result.stdout.splitlines()[-1]
    assert "1 failed" in tail and "1 passed" in tail and "2 skipped" in tail, tail
    assert "1 xfailed" in tail, tail
    assert "FAILED test_cases.py::test_skips_for_a_missing_dependency" in result.stdout
    assert "skipped on CI, where every test must run" in result.stdout
    assert "could not import 'no_such_module_anywhere'" in result.stdout
    assert ("FAILED (module skipped on CI, where every test must run) test_module_skip.py: "
            "could not import 'another_missing_module'") in result.stdout
    assert "SKIPPED [1] test_cases.py" in result.stdout and "needs a CUDA GPU" in result.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_off_ci_skips_stay_skips_and_say_why(tmp_path, ci):
    result = _run(tmp_path, ci)
    assert result.returncode == 0, result.stdout
    tail = result.stdout.splitlines()[-1]
    assert "1 passed" in tail and "3 skipped" in tail and "1 xfailed" in tail, tail
    assert "could not import 'no_such_module_anywhere'" in result.stdout
    assert "could not import 'another_missing_module'" in result.stdout
