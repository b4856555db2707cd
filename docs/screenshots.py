"""Regenerates the screenshots in docs/img/ (README and the docs site) from the bundled sample data.

    python docs/screenshots.py             # every one
    python docs/screenshots.py labelling   # docs/LABELLING.md's only

Runs the real app under uvicorn and drives Debian's headless Chromium (software WebGL).
"""

from __future__ import annotations

import base64
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from projector.server.app import SAMPLE_DATA, create_app  # noqa: E402

OUT = ROOT / "docs" / "img"
VIEWPORT = {"width": 1400, "height": 900}


def state_url(base: str, state: dict) -> str:
    raw = base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")
    return f"{base}/#s={raw}"


def ready(page: Page) -> None:
    page.wait_for_function("() => window.__projector && window.__projector.ready", timeout=120000)


def settle(page: Page) -> None:
    page.wait_for_function("() => !window.__projector.app.plot.fromPositions")
    page.wait_for_function("() => document.querySelector('[data-testid=progress]').hidden",
                           timeout=120000)
    time.sleep(0.5)


def click_point(page: Page, index: int) -> None:
    page.evaluate(f"window.__projector.app.selectPoint({index})")
    page.wait_for_function("window.__projector.app.neighbors.length > 0")
    settle(page)


def labelling(page: Page, base: str) -> None:
    """docs/LABELLING.md's picture: a lasso of digits labelled in one step, the map coloured by
    the new column, the Inspector saying it is saved."""
    page.goto(state_url(base, {"run": "digits", "embedding": "digits", "sprites": False,
                               "pca": {"is3d": False}, "colorBy": "label", "labelBy": "label"}))
    ready(page)
    settle(page)
    box = page.get_by_test_id("plot").bounding_box()
    page.get_by_test_id("tool-lasso").click()
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    path = [(0.62, 0.18), (0.9, 0.22), (0.93, 0.55), (0.7, 0.62), (0.58, 0.4), (0.62, 0.19)]
    page.mouse.move(left + path[0][0] * width, top + path[0][1] * height)
    page.mouse.down()
    for fx, fy in path[1:]:
        page.mouse.move(left + fx * width, top + fy * height, steps=6)
    page.mouse.up()
    page.wait_for_function("() => window.__projector.state().selection.length > 0")
    page.get_by_test_id("edit-column").fill("label_fixed")
    page.get_by_test_id("edit-value").fill("to review")
    page.get_by_test_id("tag-selection").click()
    page.wait_for_function("() => document.querySelector('[data-testid=edit-status]')"
                           ".textContent.startsWith('Saved')")
    page.get_by_test_id("color-by").select_option("label_fixed")
    page.get_by_test_id("edit-value").fill("")
    settle(page)
    page.screenshot(path=OUT / "labelling.png")


def main(only: str | None = None) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cache = Path(tempfile.mkdtemp())
    store = cache / "annotations.sqlite"  # labels made for the pictures: never the user's
    server = uvicorn.Server(uvicorn.Config(create_app(SAMPLE_DATA, cache_dir=cache, refresh_seconds=0,
                                                      annotations=store),
                                           host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
        page.add_init_script("localStorage.setItem('projector-theme', 'light')")
        if only == "labelling":
            labelling(page, base)
            browser.close()
            server.should_exit = True
            return
        digits = {"run": "digits", "embedding": "digits", "colorBy": "label", "labelBy": "label"}

        page.goto(state_url(base, {**digits, "sprites": False, "pca": {"is3d": True},
                                   "camera": {"target": [0, 0, 0], "theta": 0.5, "phi": 1.2,
                                              "distance": 2.9, "zoom": 1}}))
        ready(page)
        settle(page)
        page.screenshot(path=OUT / "pca-3d.png")

        page.goto(state_url(base, {**digits, "projection": "tsne", "sprites": True,
                                   "tsne": {"is3d": False, "perplexity": 30, "nIter": 750}}))
        page.wait_for_function("(() => { const p = window.__projector.projection();"
                               " return p && p.method === 'tsne' && p.status === 'done'; })()",
                               timeout=300000)
        settle(page)
        page.screenshot(path=OUT / "tsne-sprites.png")

        page.evaluate("window.__projector.app.update({ sprites: false })")
        settle(page)
        page.get_by_test_id("density-toggle").check()
        page.get_by_test_id("cluster-run").click()
        page.wait_for_function("document.querySelector('[data-testid=cluster-status]')"
                               ".textContent.includes('cluster')", timeout=120000)
        settle(page)
        page.screenshot(path=OUT / "structure.png")
        page.get_by_test_id("density-toggle").uncheck()
        page.get_by_test_id("cluster-labels-toggle").uncheck()
        page.evaluate("window.__projector.app.update({ neighbors: { k: 40, metric: 'cosine' } })")
        click_point(page, 1234)
        page.evaluate("window.__projector.app.toggleTheme()")
        settle(page)
        page.screenshot(path=OUT / "neighbours-dark.png")

        page.evaluate("window.__projector.app.toggleTheme()")
        page.goto(f"{base}/compare")  # opens on the training run's steps 1 -> 5
        page.wait_for_function("window.__compare && window.__compare.shown", timeout=300000)
        time.sleep(1.0)
        page.screenshot(path=OUT / "compare-steps.png")
        labelling(page, base)
        browser.close()
    server.should_exit = True


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
