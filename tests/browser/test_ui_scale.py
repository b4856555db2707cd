"""A million points: hover, click-to-neighbours, lasso and search pick exactly the right
points over all of them, whatever sample a frame draws (level of detail)."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import numpy as np
import pytest
from PIL import Image

from tests.builders import write_points_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N = 1_000_000
VIEW = {"run": "big", "embedding": "points", "pca": {"is3d": False}, "sprites": False,
        "labelBy": "label", "colorBy": "label"}


def write_million(logdir: Path) -> np.ndarray:
    """1M points in 2D (20 blobs) with a 10-class label column and a group column."""
    rng = np.random.default_rng(3)
    blob = rng.integers(0, 20, N)
    coords = rng.normal(0, 5, (20, 2))[blob] + rng.normal(0, 1, (N, 2))
    labels = np.array([f"class{b % 10}" for b in range(20)])[blob]
    rows = "".join(f"{lab}\tg{b % 3}\n" for lab, b in zip(labels, blob, strict=True))
    write_points_run(logdir / "big", coords, "label\tgroup\n" + rows)
    return labels


def screen_of_all(url: str, page) -> np.ndarray:
    """Every point's screen position (CSS px, float32 as the page computes it) from the
    server's coordinates, fitted and projected as the front end does, in numpy."""
    answer = httpx.post(f"{url}/api/projections?wait=true", timeout=120,
                        json={"run": "big", "embedding": "points", "method": "pca", "dims": 3,
                              "params": {"spherize": False}},
                        headers={"Accept": "application/octet-stream"})
    cols = int(answer.headers["X-Shape"].split(",")[1])
    return screen_of(np.frombuffer(answer.content, "<f4").reshape(N, cols)[:, :2], page)


def screen_of(xy: np.ndarray, page) -> np.ndarray:
    """The screen positions (CSS px) of N x 2 projection coordinates as the page fits and
    projects the whole set (or its tiles, fitted alike), in numpy."""
    coords = xy.astype(np.float64)
    n = len(coords)
    lo, hi = coords.min(0), coords.max(0)
    mid = (lo + hi) / 2
    scale = 1 / ((hi - lo) / 2).max()
    pos = ((coords - mid) * scale).astype(np.float32).astype(np.float64)
    m, width, height = page.evaluate("""() => { const p = window.__projector.app.plot;
        return [Array.from(p.matrix()), p.canvas.clientWidth, p.canvas.clientHeight]; }""")
    x, y, z = pos[:, 0], pos[:, 1], np.zeros(n)
    w = m[3] * x + m[7] * y + m[11] * z + m[15]
    sx = ((m[0] * x + m[4] * y + m[8] * z + m[12]) / w + 1) * 0.5 * width
    sy = (1 - (m[1] * x + m[5] * y + m[9] * z + m[13]) / w) * 0.5 * height
    return np.stack([sx, sy], axis=1).astype(np.float32).astype(np.float64)


def hover_nearest(page, screen: np.ndarray, box: dict, at: tuple[float, float], *,
                  tolerance: float = 1e-4, timeout: float = 30000) -> tuple[int, tuple[float, float]]:
    """Moves the mouse onto the point nearest ``at`` (fractions of the plot's width and
    height), waits for the page's hover and checks that the hovered point is the nearest of
    all points (``screen``) to where the cursor is: the row, and where the mouse is."""
    page.evaluate("""() => { window.__pointer = null; document.querySelector('[data-testid=plot]')
        .addEventListener('pointermove', (e) => { const r = e.target.getBoundingClientRect();
          window.__pointer = [e.clientX - r.left, e.clientY - r.top]; }); }""")
    target = int(np.argmin(np.abs(screen[:, 0] - box["width"] * at[0])
                           + np.abs(screen[:, 1] - box["height"] * at[1])))
    x, y = box["x"] + screen[target, 0], box["y"] + screen[target, 1]
    page.mouse.move(x, y)
    page.wait_for_function("window.__projector.app.highlight.hover >= 0 && window.__pointer", timeout=timeout)
    hovered = page.evaluate("window.__projector.app.highlight.hover")
    distance = np.hypot(*(screen - np.array(page.evaluate("window.__pointer"))).T)
    assert distance[hovered] == pytest.approx(distance.min(), abs=tolerance)
    return hovered, (x, y)


def inside(screen: np.ndarray, polygon: list[list[float]]) -> np.ndarray:
    """Even-odd test of every point against the polygon (its bounding box inclusive)."""
    x, y = screen[:, 0], screen[:, 1]
    poly = np.array(polygon)
    result = np.zeros(len(screen), dtype=bool)
    for (xi, yi), (xj, yj) in zip(poly, np.roll(poly, 1, axis=0), strict=True):
        crosses = (yi > y) != (yj > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            result ^= crosses & (x < (xj - xi) * (y - yi) / (yj - yi) + xi)
    box = (x >= poly[:, 0].min()) & (x <= poly[:, 0].max()) & (y >= poly[:, 1].min()) & \
        (y <= poly[:, 1].max())
    return result & box


COLUMNS_FETCHED = """performance.getEntriesByType('resource')
  .filter((e) => e.name.includes('/metadata/column?'))
  .map((e) => ({ column: new URL(e.name).searchParams.get('column'), start: e.startTime,
                 end: e.responseEnd }))"""

ZOOM_AND_COUNT = """(factor) => new Promise((resolve) => {
  // Zooms the 2D view in by `factor`; after the next frame (moving: a budget), the points drawn.
  const p = window.__projector.app.plot;
  p.setCamera({ ...p.camera, zoom: p.camera.zoom * factor });
  requestAnimationFrame(() => requestAnimationFrame(() => resolve([p.drawn, p.frames.budget])));
})"""


def test_million_points_pick_and_select_exactly(million, projector):
    url, labels = million
    projector.open(url, VIEW)
    page = projector.page
    page.wait_for_function("window.__projector.app.dataset.metadata && window.__projector.app.shown.lod",
                           timeout=120000)
    assert page.evaluate("window.__projector.app.plot.frames.budget") < N  # frames draw a sample
    # Metadata columns on demand: the colour and label column alone first; the others only
    # when a panel asks for them (the charts panel on screen here, the inspector's card).
    fetched = page.evaluate(COLUMNS_FETCHED)
    assert fetched[0]["column"] == "label"
    assert all(f["start"] >= fetched[0]["end"] for f in fetched[1:])
    assert page.evaluate("window.__projector.app.highlight.coloring.kind") == "categorical"
    # The first picture came from the level-of-detail tiles, before the whole.
    assert page.evaluate("performance.getEntriesByType('resource')"
                         ".some((e) => e.name.includes('/tiles/0/0/0?'))")
    projector.wait_settled()
    box = projector.by("plot").bounding_box()

    # The still frame of a million points is rasterised on the CPU, and looks as the GPU's.
    frames = {}
    for path in ("cpu", "gpu"):
        if path == "gpu":
            page.evaluate("window.__projector.app.plot.cpuDetail.suits = () => false")
        page.evaluate("window.__projector.app.plot.setCamera({ ...window.__projector.app.plot.camera })")
        page.wait_for_function("window.__projector.app.plot.fullDetail", timeout=120000)
        assert page.evaluate("window.__projector.app.plot.detailed.cpu") == (path == "cpu")
        frames[path] = np.asarray(Image.open(io.BytesIO(projector.by("plot").screenshot()))
                                  .convert("RGB")).astype(int)
    page.evaluate("delete window.__projector.app.plot.cpuDetail.suits")
    difference = np.abs(frames["cpu"] - frames["gpu"]).sum(axis=2)
    assert difference.mean() < 1 and (difference > 90).mean() < 0.001

    # Hover: the point nearest to the cursor among all million.
    screen = screen_of_all(url, page)
    hovered, (x, y) = hover_nearest(page, screen, box, (0.4, 0.45))
    # Picked through the grid in the plane: nothing projected all million points.
    assert page.evaluate("window.__projector.app.plot.picking.stale")
    assert projector.by("tooltip").inner_text() == labels[hovered]

    # Click: that point and its neighbours over the whole set.
    page.mouse.click(x, y)
    rows = projector.by("neighbors-list").locator("li")
    rows.nth(99).wait_for(timeout=60000)
    assert projector.state()["focus"] == hovered
    expected = httpx.get(f"{url}/api/neighbors", timeout=60, params={
        "run": "big", "embedding": "points", "index": hovered, "k": 100, "metric": "cosine"}).json()
    shown = [int(i) for i in page.eval_on_selector_all(
        "[data-testid=neighbors-list] li", "rows => rows.map(r => r.dataset.index)")]
    assert shown == [n["index"] for n in expected["neighbors"]]
    # The point's card asks for every column: "group" comes then.
    page.wait_for_function("[...document.querySelectorAll('[data-testid=point-card] dd')]"
                           ".some((d) => /^g[012]$/.test(d.textContent))", timeout=60000)
    assert sorted(f["column"] for f in page.evaluate(COLUMNS_FETCHED)) == ["group", "label"]

    # Zoom in (the moving frames draw a sample), then lasso: exactly the points inside.
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -600)
    projector.wait_settled()
    page.wait_for_function("window.__projector.app.plot.fullDetail", timeout=120000)
    screen = screen_of_all(url, page)
    projector.by("tool-lasso").click()
    corners = [(0.45, 0.40), (0.60, 0.42), (0.58, 0.60), (0.47, 0.55)]
    points = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in corners]
    page.evaluate("""() => { const p = window.__projector.app.plot; const original = p.pointsInRegion;
        p.pointsInRegion = (region) => { window.__region = region.points.map((q) => q.slice());
          return original.call(p, region); }; }""")
    page.mouse.move(*points[0])
    page.mouse.down()
    for point in [*points[1:], points[0]]:
        page.mouse.move(*point, steps=4)
    page.mouse.up()
    page.wait_for_function("window.__region && window.__projector.state().selection.length > 0")
    chosen = np.sort(np.array(projector.state()["selection"]))
    expected_inside = np.flatnonzero(inside(screen, page.evaluate("window.__region")))
    assert len(chosen) > 1000
    assert np.array_equal(chosen, expected_inside)

    # Zoomed in further, a moving frame draws every point of the region when they fit its
    # budget (the sample is spent on the view, not on the whole set).
    for _ in range(8):
        drawn, budget = page.evaluate(ZOOM_AND_COUNT, 4)
        screen = screen_of_all(url, page)
        on_screen = int(((screen[:, 0] >= 0) & (screen[:, 0] <= box["width"])
                         & (screen[:, 1] >= 0) & (screen[:, 1] <= box["height"])).sum())
        if on_screen < budget:
            break
    assert 0 < on_screen < budget
    assert on_screen <= drawn < N * 0.7
    # Still, the full-detail frame too draws every point on screen and few off it.
    page.wait_for_function("window.__projector.app.plot.fullDetail", timeout=120000)
    assert on_screen <= page.evaluate("window.__projector.app.plot.drawn") < N * 0.7

    # Search: every matching point of the million is selected.
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("class3")
    expected_match = np.flatnonzero(labels == "class3")
    page.wait_for_function(f"window.__projector.state().selection.length === {len(expected_match)}",
                           timeout=60000)
    assert np.array_equal(np.sort(projector.state()["selection"]), expected_match)
