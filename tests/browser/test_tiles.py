"""A million points shown from their level-of-detail tiles alone (``?tiles=always``; by default
above 2M points): the page never downloads the whole projection, holds every point only as
tiles, and hover, click-to-neighbours, lasso and search stay exact over all million."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from tests.browser.conftest import state_hash
from tests.browser.test_ui_scale import VIEW, hover_nearest, inside, screen_of_all

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REQUESTS = """performance.getEntriesByType('resource')
  .map((e) => new URL(e.name).pathname + new URL(e.name).search)"""
ALL_RESIDENT = """() => { const t = window.__projector.app.plot.source;
  return Boolean(t) && t.everyResident && t.loading.size === 0; }"""


def test_million_points_from_tiles_alone_answer_exactly(million, projector):
    url, labels = million
    page = projector.page
    page.goto(url + "/?tiles=always" + state_hash(VIEW))
    projector.wait_ready()
    page.wait_for_function(ALL_RESIDENT, timeout=120000)
    plot = "window.__projector.app.plot"
    assert page.evaluate(f"{plot}.n") == 0  # no whole-set buffers: the tiles' own
    tiles = page.evaluate(f"[...{plot}.source.resident.values()].map((t) => t.count)")
    assert sum(tiles) == 1_000_000 and max(tiles) <= 65536
    requests = page.evaluate(REQUESTS)
    assert any("/tiles/0/0/0" in r for r in requests)
    # The whole projection, its order and its result never came to the page.
    api = [r for r in requests if r.startswith("/api/")]
    assert not [r for r in api if "wait=true" in r or "/result" in r or "/lod" in r]
    projector.wait_settled()
    page.wait_for_function(f"{plot}.detailed.complete", timeout=120000)
    assert projector.drawn_pixels() > 5000
    box = projector.by("plot").bounding_box()

    # Hover: the nearest of all million points to the cursor.
    screen = screen_of_all(url, page)
    hovered, (x, y) = hover_nearest(page, screen, box, (0.4, 0.45))
    assert projector.by("tooltip").inner_text() == labels[hovered]

    # Click: that point, and its neighbours over the whole set.
    page.mouse.click(x, y)
    projector.by("neighbors-list").locator("li").nth(99).wait_for(timeout=60000)
    assert projector.state()["focus"] == hovered
    expected = httpx.get(f"{url}/api/neighbors", timeout=60, params={
        "run": "big", "embedding": "points", "index": hovered, "k": 100, "metric": "cosine"}).json()
    shown = [int(i) for i in page.eval_on_selector_all(
        "[data-testid=neighbors-list] li", "rows => rows.map(r => r.dataset.index)")]
    assert shown == [n["index"] for n in expected["neighbors"]]
    # The tiles draw the highlight: the focus's flags reached the tile that holds it.
    assert page.evaluate(f"""(row) => [...{plot}.source.resident.values()].some((t) =>
        t.rows.includes(row) && t.layer.flags[t.rows.indexOf(row)] !== 0)""", hovered)

    # Lasso: exactly the points inside, of all million.
    projector.by("tool-lasso").click()
    corners = [(0.45, 0.40), (0.60, 0.42), (0.58, 0.60), (0.47, 0.55)]
    points = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in corners]
    page.evaluate(f"""() => {{ const p = {plot}; const original = p.pointsInRegion;
        p.pointsInRegion = (region) => {{ window.__region = region.points.map((q) => q.slice());
          return original.call(p, region); }}; }}""")
    page.mouse.move(*points[0])
    page.mouse.down()
    for point in [*points[1:], points[0]]:
        page.mouse.move(*point, steps=4)
    page.mouse.up()
    page.wait_for_function("window.__region && window.__projector.state().selection.length > 1")
    chosen = np.sort(np.array(projector.state()["selection"]))
    assert len(chosen) > 1000
    assert np.array_equal(chosen, np.flatnonzero(inside(screen, page.evaluate("window.__region"))))

    # Search: every matching point of the million is selected.
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("class3")
    expected_match = np.flatnonzero(labels == "class3")
    page.wait_for_function(f"window.__projector.state().selection.length === {len(expected_match)}",
                           timeout=60000)
    assert np.array_equal(np.sort(projector.state()["selection"]), expected_match)


def near_edge(screen: np.ndarray, polygon: list[list[float]], tolerance: float = 0.01) -> np.ndarray:
    """Whether each point lies within `tolerance` px of the polygon's outline (where float32
    screen positions and the server's test in projection units may round either way)."""
    poly = np.array(polygon, dtype=np.float64)
    near = np.zeros(len(screen), dtype=bool)
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        ab = b - a
        t = np.clip(((screen - a) @ ab) / max(ab @ ab, 1e-12), 0, 1)
        near |= np.hypot(*(screen - (a + t[:, None] * ab)).T) < tolerance
    return near


def test_beyond_the_tabs_budget_the_server_answers_exactly(million, projector):
    """The tab keeps 400k points at most (`?tilePoints=`): not every point is resident, so
    hover, click and lasso are answered by the server's pick and select over all million,
    and zooming in brings deeper tiles while the resident set stays within its budget."""
    url, _ = million
    page = projector.page
    page.goto(url + "/?tiles=always&tilePoints=400000" + state_hash(VIEW))
    projector.wait_ready()
    plot = "window.__projector.app.plot"
    page.wait_for_function(f"{plot}.source.resident.size > 0 && {plot}.source.loading.size === 0",
                           timeout=120000)
    assert page.evaluate(f"{plot}.source.everyResident") is False
    projector.wait_settled()
    box = projector.by("plot").bounding_box()

    # Hover: the server's nearest of all million (the tab holds far fewer).
    screen = screen_of_all(url, page)
    hovered, (x, y) = hover_nearest(page, screen, box, (0.55, 0.5), tolerance=1e-3, timeout=60000)
    resident = page.evaluate(f"[...{plot}.source.resident.values()].flatMap((t) => [...t.rows])")
    assert len(resident) <= 400_000
    assert any("/pick?" in r for r in page.evaluate(REQUESTS))

    # Click: that point and its neighbours.
    page.mouse.click(x, y)
    projector.by("neighbors-list").locator("li").nth(99).wait_for(timeout=60000)
    assert projector.state()["focus"] == hovered

    # Lasso: the server's region selection, exactly the points inside.
    projector.by("tool-lasso").click()
    corners = [(0.45, 0.40), (0.60, 0.42), (0.58, 0.60), (0.47, 0.55)]
    points = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in corners]
    page.evaluate(f"""() => {{ const p = {plot}; const original = p.pointsInRegion;
        p.pointsInRegion = (region) => {{ window.__region = region.points.map((q) => q.slice());
          return original.call(p, region); }}; }}""")
    page.mouse.move(*points[0])
    page.mouse.down()
    for point in [*points[1:], points[0]]:
        page.mouse.move(*point, steps=4)
    page.mouse.up()
    page.wait_for_function("window.__region && window.__projector.state().selection.length > 1",
                           timeout=60000)
    region = page.evaluate("window.__region")
    chosen = np.zeros(len(screen), dtype=bool)
    chosen[projector.state()["selection"]] = True
    expected = inside(screen, region)
    assert chosen.sum() > 1000
    assert not (chosen != expected)[~near_edge(screen, region)].any()
    assert any("/select" in r for r in page.evaluate(REQUESTS))

    # Zoomed in off the centre: deeper tiles come, the resident set stays within the budget.
    projector.by("tool-navigate").click()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.35)
    for _ in range(3):
        page.mouse.wheel(0, -600)
    page.wait_for_function(f"""() => {{ const t = {plot}.source; return t.loading.size === 0 &&
        [...t.resident.values()].some((tile) => tile.z >= 2); }}""", timeout=120000)
    assert page.evaluate(f"{plot}.source.residentPoints") <= 400_000
