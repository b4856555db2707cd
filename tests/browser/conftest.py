"""Browser fixtures: Debian's headless Chromium through Playwright, driving the real app.

WebGL2 renders with SwiftShader (software GL), so what the canvas shows is checked in
screenshots, pixel by pixel, the way a person would see it.
"""

from __future__ import annotations

import base64
import io
import json
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, sync_playwright

from tests.page_policy import waits_under_the_page_policy  # noqa: F401 (an autouse fixture)

CHROMIUM = os.environ.get("PROJECTOR_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")  # not session: its event loop would outlive the browser tests
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def state_hash(state: dict[str, Any]) -> str:
    """The URL hash the front end writes for a state (base64url JSON, state.js)."""
    raw = base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")
    return f"#s={raw}"


class ProjectorPage:
    """The app in one browser tab, with the waits and reads the tests share."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        # What the server's Content-Security-Policy refused (a blocked image throws nothing).
        page.on("console", lambda message: self.errors.append(message.text)
                if "Content Security Policy" in message.text else None)

    def open(self, url: str, state: dict[str, Any] | None = None) -> ProjectorPage:
        self.page.goto(url + "/" + (state_hash(state) if state else ""))
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        self.page.wait_for_function("window.__projector && window.__projector.ready", timeout=60000)

    def by(self, testid: str):
        return self.page.locator(f'[data-testid="{testid}"]')

    def wait_text(self, testid: str, text: str, *, contains: bool = False) -> None:
        """Waits until an element's text is (or contains) `text`."""
        self.page.wait_for_function(
            """([id, text, contains]) => {
                const node = document.querySelector(`[data-testid="${id}"]`);
                return node && (contains ? node.textContent.includes(text) : node.textContent === text); }""",
            arg=[testid, text, contains])

    def wait_js(self, condition: str) -> None:
        """Waits until a JavaScript expression over `app` (the controller) is true."""
        self.page.wait_for_function(
            f"(() => {{ const app = window.__projector.app; return {condition}; }})()")

    def state(self) -> dict[str, Any]:
        return self.page.evaluate("window.__projector.state()")

    def projection(self) -> dict[str, Any] | None:
        return self.page.evaluate("window.__projector.projection()")

    def wait_projection(self, method: str, status: str = "done", timeout: float = 60000) -> dict:
        self.page.wait_for_function(
            """([method, status]) => { const p = window.__projector.projection();
                return p && p.method === method && p.status === status; }""",
            arg=[method, status], timeout=timeout)
        return self.projection()

    def plot_image(self) -> np.ndarray:
        """The plot canvas as the user sees it: an RGB array of a screenshot."""
        png = self.by("plot").screenshot()
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)

    def drawn_pixels(self) -> int:
        """Pixels of the plot that differ clearly from its background colour."""
        image = self.plot_image()
        background = np.median(image.reshape(-1, 3), axis=0)
        return int((np.abs(image - background).sum(axis=2) > 60).sum())

    def screen_position(self, index: int) -> tuple[float, float]:
        """Page coordinates of point `index` on the canvas, from the plot's own matrix."""
        x, y = self.page.evaluate(
            """(i) => { const p = window.__projector.app.plot; const m = p.matrix();
              const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
              const w = m[3]*x + m[7]*y + m[11]*z + m[15];
              const cx = (m[0]*x + m[4]*y + m[8]*z + m[12]) / w;
              const cy = (m[1]*x + m[5]*y + m[9]*z + m[13]) / w;
              return [(cx + 1) / 2 * p.canvas.clientWidth, (1 - cy) / 2 * p.canvas.clientHeight]; }""",
            index)
        box = self.by("plot").bounding_box()
        return box["x"] + x, box["y"] + y

    def wait_settled(self) -> None:
        """Waits until transitions are over (two quiet animation frames)."""
        self.page.wait_for_function(
            "() => !window.__projector.app.plot.fromPositions"
            " && !window.__projector.app.plot.frames.requested")


@pytest.fixture
def projector(browser: Browser) -> Iterator[ProjectorPage]:
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30000)
    wrapper = ProjectorPage(page)
    yield wrapper
    context.close()
    assert wrapper.errors == [], f"uncaught errors in the page: {wrapper.errors}"


@pytest.fixture(scope="session")
def million(tmp_path_factory: pytest.TempPathFactory,
            _compute_warmed_up: None) -> Iterator[tuple[str, np.ndarray]]:
    """``(url, labels)``: one 1M-point log dir (``test_ui_scale.write_million``) served once,
    with the view prepared as ``projector serve`` does, for every 1M browser test of the
    session (test_ui_scale, test_tiles): none writes and loads its own million again."""
    from projector.server.cli import build_parser, serve_app

    from tests.browser.test_ui_scale import write_million
    from tests.conftest import LiveServer

    root = tmp_path_factory.mktemp("million")
    labels = write_million(root / "logs")
    argv = ["serve", str(root / "logs"), "--cache-dir", str(root / "cache")]
    server = LiveServer(serve_app(build_parser().parse_args(argv)))
    server.start()
    yield server.url, labels
    server.stop()
