"""Installed as a user installs it: the wheel built from this tree, installed into a clean
virtual environment outside the repository, used from a folder whose own ``server.py`` and
``frontend.py`` exit on import (a user's files must never stand in for ours).

The editable install the tests otherwise run on hides what the wheel lacks (a module, the
front end, the sample data). Dependencies come from the package index through pip's cache;
the install is done once for this module (about a minute with a warm pip cache).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
SHADOW = 'raise SystemExit("shadowed: the user\'s own {name} was imported")\n'
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info",
                                    "__pycache__", ".ruff_cache", ".pytest_cache", "node_modules")
WORDS_UMAP = {"run": "words", "embedding": "words", "method": "umap", "dims": 2,
              "params": {"n_neighbors": 15, "n_epochs": 30, "seed": 0}}


@dataclass(frozen=True)
class Installed:
    wheel: Path
    python: Path  # the clean environment's interpreter
    projector: Path  # its console script
    user_folder: Path  # where the user works: holds server.py and frontend.py
    env: dict[str, str]


def _run(*command: object, cwd: Path, env: dict[str, str] | None = None,
         timeout: float = 900) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("installed")
    assert REPO not in root.parents
    # Built from a copy of the source alone: a stale build/ folder in a checkout would
    # otherwise put files in the wheel that the tree no longer has.
    source = root / "source"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", root / "dist", source, cwd=root)
    wheel = next((root / "dist").glob("embedding_projector-*.whl"))
    _run(sys.executable, "-m", "venv", root / "venv", cwd=root)
    python = root / "venv" / "bin" / "python"
    _run(python, "-m", "pip", "install", wheel, cwd=root)
    user = root / "user"
    user.mkdir()
    for name in ("server.py", "frontend.py"):
        (user / name).write_text(SHADOW.format(name=name))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "NUMBA_CACHE_DIR", "PROJECTOR_CACHE_DIR")}
    env["PROJECTOR_CACHE_DIR"] = str(root / "cache")  # empty, as on a fresh install
    return Installed(wheel, python, root / "venv" / "bin" / "projector", user, env)


def test_the_wheel_holds_every_module_the_page_and_the_samples(installed):
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    sources = {str(p.relative_to(REPO)) for p in REPO.glob("projector_core/**/*.py")}
    assert sources <= names  # projector_core.projection.methods was once missing
    for folder, installed_as in (("server", "projector/server"), ("frontend", "projector/frontend"),
                                 ("sample_data", "projector/sample_data")):
        files = [p for p in (REPO / folder).rglob("*") if p.is_file()
                 and "__pycache__" not in p.parts and "tests" not in p.parts]
        assert files and {f"{installed_as}/{p.relative_to(REPO / folder)}" for p in files} <= names
    assert {"projector/py.typed", "projector_core/py.typed"} <= names
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"projector", "projector_core"}  # no top-level server/ or frontend/
    assert not any(name.startswith("projector/frontend/tests") for name in names)


def test_its_dependencies_pull_no_torch(installed):
    listed = json.loads(_run(installed.python, "-m", "pip", "list", "--format=json",
                             cwd=installed.user_folder, env=installed.env).stdout)
    names = {p["name"].lower() for p in listed}
    assert "embedding-projector" in names
    assert not {n for n in names if n == "torch" or n.startswith(("nvidia-", "triton"))}


def test_projector_version_and_imports_beside_the_users_own_files(installed):
    version = _run(installed.projector, "--version", cwd=installed.user_folder, env=installed.env)
    assert version.stdout.startswith("projector 0.")
    # `python -c` puts the working folder first on sys.path, where server.py lies in wait.
    _run(installed.python, "-c", "import projector.server.app, projector.frontend, projector",
         cwd=installed.user_folder, env=installed.env)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(installed) -> Iterator[str]:
    """``projector serve`` with no LOGDIR, from the user's folder: the bundled samples."""
    port = _free_port()
    log = (installed.user_folder / "serve.log").open("w")
    process = subprocess.Popen([installed.projector, "serve", "--port", str(port)],
                               cwd=installed.user_folder, env=installed.env, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert process.poll() is None, (installed.user_folder / "serve.log").read_text()
            try:
                if httpx.get(f"{url}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            raise AssertionError("projector serve did not answer")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_serve_lists_the_samples_and_streams_a_umap(served):
    from websockets.sync.client import connect

    runs = {run["name"]: run for run in httpx.get(f"{served}/api/runs").json()}
    assert {"digits", "iris", "words"} <= set(runs)
    assert runs["words"]["embeddings"][0]["shape"] == [4000, 384]
    job = httpx.post(f"{served}/api/projections", json=WORDS_UMAP, timeout=60).json()["job"]
    frames, last = [], None
    with connect(f"{served.replace('http', 'ws')}/api/jobs/{job}/stream", open_timeout=30) as stream:
        while True:
            message = stream.recv(timeout=300)  # only a hang times out
            if isinstance(message, bytes):
                frames.append(len(message))
                continue
            last = json.loads(message)
            if last["type"] == "status":
                break
    assert last is not None and last["status"] == "done", last
    assert len(frames) >= 2 and set(frames) == {4000 * 2 * 4}  # streamed, not just the end
    assert last["info"]["neighbors"] == "exact"


@pytest.mark.browser
def test_the_page_loads_and_draws(served):
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, ProjectorPage

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            projector = ProjectorPage(page).open(served, {"run": "digits", "embedding": "digits"})
            projector.wait_projection("pca")
            projector.wait_settled()
            assert projector.drawn_pixels() > 500
            assert projector.errors == []
        finally:
            browser.close()


SHOW = """
import numpy as np
from projector import show
show(np.random.default_rng(0).normal(size=(50, 3)).astype(np.float32), labels=[f"p{i}" for i in range(50)])
"""


def test_show_serves_an_array_from_the_users_folder(installed):
    (installed.user_folder / "script.py").write_text(SHOW)
    process = subprocess.Popen([installed.python, "script.py"], cwd=installed.user_folder,
                               env=installed.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("Projector at http://"), line + process.stderr.read()
        url = line.split()[2].rstrip("/")
        runs = httpx.get(f"{url}/api/runs", timeout=60).json()
        embedding = runs[0]["embeddings"][0]
        assert embedding["shape"] == [50, 3]
        tensor = httpx.get(f"{url}/api/tensor", timeout=60,
                           params={"run": runs[0]["name"], "embedding": embedding["name"]})
        assert tensor.status_code == 200 and len(tensor.content) == 50 * 3 * 4
    finally:
        process.terminate()
        process.communicate(timeout=30)
