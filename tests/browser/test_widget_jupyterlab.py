"""The widget in a real JupyterLab (started headless here, its kernel a real ipykernel):
Run the cell, the projector draws inside the output, a selection made in the page arrives in
the kernel's ``widget.selection``, and a cell setting ``widget.selection`` changes the page."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Browser, Frame, Page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MAKE_WIDGET = """import json
from pathlib import Path
import numpy as np
from projector import Projector
rng = np.random.default_rng(0)
vectors = np.concatenate([rng.normal(centre, 1, (30, 5)) for centre in (0, 6, 12)])
widget = Projector(vectors, {"group": ["a"] * 30 + ["b"] * 30 + ["c"] * 30}, color_by="group")
widget.observe(lambda change: Path("selection.json").write_text(json.dumps(change["new"])), "selection")
widget"""
SET_SELECTION = "widget.selection = [1, 2, 3]"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[str]:
    """JupyterLab on a fresh config, serving a folder with the notebook; yields its URL."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(MAKE_WIDGET),
                                               nbformat.v4.new_code_cell(SET_SELECTION)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    work = tmp_path / "work"
    work.mkdir()
    nbformat.write(notebook, work / "widget.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    log = tmp_path / "jupyterlab.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_PLATFORM_DIRS": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
         f"--LabApp.user_settings_dir={tmp_path / 'settings'}", "--LabApp.news_url=None",
         "--ServerApp.log_level=WARN", "--allow-root"],  # CI runs as root
        env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError(f"JupyterLab did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.3)
    yield f"{url}/lab/tree/widget.ipynb?token={token}"
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def _run_cell(page: Page, index: int) -> None:
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    cell.locator(".jp-InputPrompt").filter(has_text="[").wait_for()
    page.wait_for_function("(i) => !document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
                           ".querySelector('.jp-InputPrompt').textContent.includes('[ ]')", arg=index)


def _projector_frame(page: Page) -> Frame:
    handle = page.wait_for_selector(".jp-OutputArea-output iframe", timeout=60000)
    frame = handle.content_frame()
    assert frame is not None
    frame.wait_for_function("window.__projector && window.__projector.ready", timeout=120000)
    return frame


def test_widget_in_jupyterlab_shares_the_selection_with_the_kernel(browser: Browser, jupyterlab,
                                                                     tmp_path: Path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60000)
    try:
        page.goto(jupyterlab)
        page.wait_for_selector(".jp-Notebook .jp-Cell .jp-InputArea-editor", timeout=120000)
        # The kernel must be up before Shift+Enter, or the run is dropped.
        page.wait_for_function("document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')"
                               " && document.body.innerText.includes('| Idle')", timeout=120000)
        _run_cell(page, 0)
        frame = _projector_frame(page)
        assert "Points: 90" in frame.locator('[data-testid="status-bar"]').inner_text()
        frame.wait_for_function("window.__projector.state().colorBy === 'group'")

        frame.locator('[data-testid="search-column"]').select_option("group")
        frame.locator('[data-testid="search-input"]').fill("b")
        selection_file = tmp_path / "work" / "selection.json"
        deadline = time.monotonic() + 30
        while not (selection_file.exists() and json.loads(selection_file.read_text()) == list(range(30, 60))):
            assert time.monotonic() < deadline, "the page's selection did not reach the kernel"
            time.sleep(0.2)

        _run_cell(page, 1)
        frame.wait_for_function("JSON.stringify(window.__projector.state().selection) === '[1,2,3]'")
        assert "Selected 3 points" in frame.locator('[data-testid="status-selection"]').inner_text()
    except Exception:
        page.screenshot(path=str(tmp_path / "jupyterlab.png"))  # what the user would have seen
        raise
    finally:
        context.close()
