"""The widget in a real JupyterLab (started headless here, its kernel a real ipykernel):
Run the cell, the projector draws inside the output, a click or a selection made in the page
arrives in the kernel's ``widget.selection``, and cells setting ``widget.selection``,
``color_by`` and ``projection`` change the page."""

from __future__ import annotations

import io
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
import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, Frame, Page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MAKE_WIDGET = """import json
from pathlib import Path
import numpy as np
import pandas as pd
from projector import Projector
rng = np.random.default_rng(0)
vectors = np.concatenate([rng.normal(centre, 1, (30, 5)) for centre in (0, 6, 12)])
frame = pd.DataFrame({"group": ["a"] * 30 + ["b"] * 30 + ["c"] * 30,
                      "name": [f"p{i}" for i in range(90)], "vector": list(vectors)})
widget = Projector(frame, vector_column="vector", color_by="group")
def saved(change):
    Path("selection.json").write_text(json.dumps(change["new"]))
    Path("chosen.json").write_text(json.dumps([int(i) for i in widget.selected_frame().index]))
widget.observe(saved, "selection")
widget"""
SET_SELECTION = "widget.selection = [1, 2, 3]"
SET_VIEW = 'widget.color_by = "name"\nwidget.projection = "tsne"'
REPORT = """Path("state.json").write_text(json.dumps({"projection": widget.projection,
                                              "selection": widget.selection}))"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[str]:
    """JupyterLab on a fresh config, serving a folder with the notebook; yields its URL."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code) for code in (
        MAKE_WIDGET, SET_SELECTION, SET_VIEW, REPORT)])
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


def _kernel_wrote(path: Path, expected: object, what: str) -> None:
    deadline = time.monotonic() + 60
    while not (path.exists() and json.loads(path.read_text() or "null") == expected):
        assert time.monotonic() < deadline, f"{what}: {path.read_text() if path.exists() else None}"
        time.sleep(0.2)


def _drawn_pixels(frame: Frame) -> int:
    shot = frame.locator('[data-testid="plot"]').screenshot()
    image = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB")).astype(int)
    background = np.median(image.reshape(-1, 3), axis=0)
    return int((np.abs(image - background).sum(axis=2) > 60).sum())


def _click_point(page: Page, frame: Frame, index: int) -> None:
    x, y = frame.evaluate(
        """(i) => { const p = window.__projector.app.plot; const m = p.matrix();
          const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
          const w = m[3]*x + m[7]*y + m[11]*z + m[15];
          return [((m[0]*x + m[4]*y + m[8]*z + m[12]) / w + 1) / 2 * p.canvas.clientWidth,
                  (1 - (m[1]*x + m[5]*y + m[9]*z + m[13]) / w) / 2 * p.canvas.clientHeight]; }""", index)
    box = frame.locator('[data-testid="plot"]').bounding_box()
    page.mouse.click(box["x"] + x, box["y"] + y)


def test_widget_in_jupyterlab_shares_the_view_with_the_kernel(browser: Browser, jupyterlab,
                                                                tmp_path: Path):
    """The real host (JupyterLab + ipykernel + anywidget) in place of a hand-written one: the
    widget draws, a click and a search reach ``widget.selection`` (and ``selected_frame``), and
    cells setting the selection, the colour column and the projection change the page."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    work = tmp_path / "work"
    try:
        page.goto(jupyterlab)
        page.wait_for_selector(".jp-Notebook .jp-Cell .jp-InputArea-editor", timeout=120000)
        # The kernel must be up before Shift+Enter, or the run is dropped.
        page.wait_for_function("document.querySelector('.jp-StatusBar-Widget, #jp-main-statusbar')"
                               " && document.body.innerText.includes('| Idle')", timeout=120000)
        _run_cell(page, 0)
        frame = _projector_frame(page)
        assert "Points: 90" in frame.locator('[data-testid="status-bar"]').inner_text()
        # Python's colour column, given before the page loaded, is applied.
        frame.wait_for_function("window.__projector.state().colorBy === 'group'")
        assert frame.locator('[data-testid="legend"] .legend-row').count() == 3
        frame.wait_for_function("!window.__projector.app.plot.fromPositions")
        assert _drawn_pixels(frame) > 300, "the widget's canvas shows the points"

        # A click in the page arrives in the kernel.
        _click_point(page, frame, 7)
        frame.wait_for_function("window.__projector.state().selection.length === 1")
        clicked = frame.evaluate("window.__projector.state().selection")
        _kernel_wrote(work / "selection.json", clicked, "the click did not reach the kernel")
        # So does a search, and selected_frame() gives its rows.
        frame.locator('[data-testid="search-column"]').select_option("group")
        frame.locator('[data-testid="search-input"]').fill("b")
        _kernel_wrote(work / "selection.json", list(range(30, 60)),
                      "the page's selection did not reach the kernel")
        _kernel_wrote(work / "chosen.json", list(range(30, 60)), "selected_frame()")

        _run_cell(page, 1)
        frame.wait_for_function("JSON.stringify(window.__projector.state().selection) === '[1,2,3]'")
        assert "Selected 3 points" in frame.locator('[data-testid="status-selection"]').inner_text()
        _run_cell(page, 2)
        frame.wait_for_function("window.__projector.state().colorBy === 'name'")
        frame.wait_for_function("""() => { const p = window.__projector.projection();
            return p && p.method === 'tsne' && p.status === 'done'; }""", timeout=120000)
        _run_cell(page, 3)
        _kernel_wrote(work / "state.json", {"projection": "tsne", "selection": [1, 2, 3]},
                      "the kernel's view after the cells")
    except Exception:
        page.screenshot(path=str(tmp_path / "jupyterlab.png"))  # what the user would have seen
        raise
    finally:
        context.close()
    assert errors == []
