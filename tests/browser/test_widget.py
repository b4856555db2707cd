"""The notebook widget rendered for real: its anywidget module run in Chromium by a host page
that gives it a model as anywidget does (``get``/``set``/``on``), the page it embeds drawing
points from the server in this process, and the view shared both ways with Python."""

from __future__ import annotations

import html
import io
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from playwright.sync_api import Frame, Page

from projector import Projector

pytestmark = pytest.mark.browser

CELL = """from projector import Projector
widget = Projector(frame, vector_column="vector", color_by="group")
widget"""


def host_page(widget: Projector, folder: Path) -> Path:
    """A notebook-like page: a code cell, then the widget's output rendered by its own ESM."""
    state = {k: v for k, v in widget.get_state().items() if isinstance(v, (str, int, float))}
    page = folder / "notebook.html"
    state_json = json.dumps(state).replace("</", "<\\/")  # a script element ends at "</"
    page.write_text(f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font: 14px system-ui, sans-serif; margin: 16px; background: #fff; }}
pre {{ background: #f5f5f5; border: 1px solid #e0e0e0; padding: 8px 12px; margin: 0 0 8px; }}
.prompt {{ color: #307fc1; font: 12px monospace; margin-bottom: 4px; }}
</style></head><body>
<div class="prompt">In [1]:</div><pre>{html.escape(CELL)}</pre><div id="output"></div>
<script type="application/json" id="state">{state_json}</script>
<script type="module">
const state = JSON.parse(document.getElementById('state').textContent);
const listeners = {{}};
const model = {{
  get: (key) => state[key],
  set: (key, value) => {{ state[key] = value; (listeners['change:' + key] || []).forEach((f) => f()); }},
  on: (event, callback) => (listeners[event] ||= []).push(callback),
  off: () => {{}}, save_changes: () => {{}}, send: () => {{}},
}};
const url = URL.createObjectURL(new Blob([state._esm], {{ type: 'text/javascript' }}));
const widget = (await import(url)).default;
await widget.render({{ model, el: document.getElementById('output') }});
window.widgetRendered = true;
</script></body></html>""")
    return page


def _until(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _frame(page: Page) -> Frame:
    page.wait_for_function("window.widgetRendered === true")
    frame = page.frames[1]
    frame.wait_for_function("window.__projector && window.__projector.ready", timeout=60000)
    return frame


def _by(frame: Frame, testid: str):
    return frame.locator(f'[data-testid="{testid}"]')


def _state(frame: Frame) -> dict:
    return frame.evaluate("window.__projector.state()")


def _drawn_pixels(frame: Frame) -> int:
    image = np.asarray(Image.open(io.BytesIO(_by(frame, "plot").screenshot())).convert("RGB")).astype(int)
    background = np.median(image.reshape(-1, 3), axis=0)
    return int((np.abs(image - background).sum(axis=2) > 60).sum())


def _click_point(page: Page, frame: Frame, index: int) -> None:
    x, y = frame.evaluate(
        """(i) => { const p = window.__projector.app.plot; const m = p.matrix();
          const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
          const w = m[3]*x + m[7]*y + m[11]*z + m[15];
          return [((m[0]*x + m[4]*y + m[8]*z + m[12]) / w + 1) / 2 * p.canvas.clientWidth,
                  (1 - (m[1]*x + m[5]*y + m[9]*z + m[13]) / w) / 2 * p.canvas.clientHeight]; }""", index)
    box = _by(frame, "plot").bounding_box()
    page.mouse.click(box["x"] + x, box["y"] + y)


@pytest.fixture
def words() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    groups = ["red", "green", "blue"]
    centres = rng.normal(0, 6, (3, 8))
    rows = [(f"{groups[g]}-{i}", groups[g], centres[g] + rng.normal(0, 1, 8))
            for i in range(120) for g in [i % 3]]
    return pd.DataFrame({"word": [r[0] for r in rows], "group": [r[1] for r in rows],
                         "vector": [r[2] for r in rows]})


def test_widget_draws_and_shares_selection_both_ways(browser, words, tmp_path):
    widget = Projector(words, vector_column="vector", color_by="group")
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(30000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(host_page(widget, tmp_path).as_uri())
        frame = _frame(page)
        assert "Points: 120" in _by(frame, "status-bar").inner_text()
        # Python's colour column, given before the page loaded, is applied.
        frame.wait_for_function("window.__projector.state().colorBy === 'group'")
        assert _by(frame, "legend").locator(".legend-row").count() == 3
        frame.wait_for_function("!window.__projector.app.plot.fromPositions")
        assert _drawn_pixels(frame) > 300, "the widget's canvas shows the points"
        if os.environ.get("PROJECTOR_WIDGET_SCREENSHOT"):
            page.screenshot(path=os.environ["PROJECTOR_WIDGET_SCREENSHOT"])

        # The user's selection in the page arrives in Python.
        _click_point(page, frame, 7)
        frame.wait_for_function("window.__projector.state().selection.length === 1")
        clicked = _state(frame)["selection"]
        _until(lambda: widget.selection == clicked, "the click to reach widget.selection")
        _by(frame, "search-column").select_option("group")
        _by(frame, "search-input").fill("blue")
        blue = [i for i in range(120) if i % 3 == 2]
        _until(lambda: widget.selection == blue, "the search selection to reach Python")
        chosen = widget.selected_frame()
        assert list(chosen.index) == blue and set(chosen["group"]) == {"blue"}
        assert widget.run == "memory" and widget.embedding == "embedding"

        # Python's selection, colour and projection show in the page.
        widget.selection = [3, 5, 8]
        frame.wait_for_function("JSON.stringify(window.__projector.state().selection) === '[3,5,8]'")
        assert "Selected 3 points" in _by(frame, "status-selection").inner_text()
        widget.color_by = "word"
        frame.wait_for_function("window.__projector.state().colorBy === 'word'")
        widget.projection = "tsne"
        frame.wait_for_function("""() => { const p = window.__projector.projection();
            return p && p.method === 'tsne' && p.status === 'done'; }""", timeout=90000)
        assert widget.projection == "tsne" and widget.selection == [3, 5, 8]
    finally:
        context.close()
        widget.close()
    assert errors == []


def test_widget_over_a_server_with_a_token_draws_and_shares_selection(browser, words, tmp_path):
    """The iframe of another site's page (here a file) keeps no cookie: the widget shows the
    page under token/TOKEN/, and every request it makes carries the token there."""
    widget = Projector(words, vector_column="vector", token="widget-token")
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(30000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        assert httpx.get(f"{widget.url}api/runs").status_code == 401
        page.goto(host_page(widget, tmp_path).as_uri())
        frame = _frame(page)
        assert "/token/widget-token/" in frame.url
        assert "Points: 120" in _by(frame, "status-bar").inner_text()
        frame.wait_for_function("!window.__projector.app.plot.fromPositions")
        assert _drawn_pixels(frame) > 300
        _click_point(page, frame, 7)
        frame.wait_for_function("window.__projector.state().selection.length === 1")
        clicked = _state(frame)["selection"]
        _until(lambda: widget.selection == clicked, "the click to reach widget.selection")
    finally:
        context.close()
        widget.close()
    assert errors == []
