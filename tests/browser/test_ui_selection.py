"""Selecting points: search, click with neighbours, box and lasso, isolate."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

pytestmark = pytest.mark.browser

DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False,
             "pca": {"is3d": False}, "colorBy": "label", "labelBy": "label"}


def test_search_selects_matches_and_shows_bad_regex(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS_2D)
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("0")
    projector.page.wait_for_function("window.__projector.state().selection.length === 178")
    assert projector.by("match-count").inner_text() == "178 matches"
    assert projector.by("search-results").locator("li").count() == 8  # the rest behind "more"
    projector.by("search-results-more").click()
    assert projector.by("search-results").locator("li").count() == 100
    assert projector.by("search-results-more").is_hidden()
    assert "Selected 178 points" in projector.by("status-bar").inner_text()
    projector.by("search-column").select_option("parity")
    projector.by("search-regex").check()
    projector.by("search-input").fill("^ev")
    projector.wait_text("match-count", "891 matches")
    projector.by("search-input").fill("(")
    error = projector.by("search-error")
    error.wait_for()
    assert error.inner_text().startswith("Invalid search")
    # A bad query matches nothing: the last query's 891 matches are no longer selected.
    projector.page.wait_for_function("window.__projector.state().selection.length === 0")
    assert "Selected" not in projector.by("status-bar").inner_text()
    assert projector.by("search-results").locator("li").count() == 0


SHARE_IN_VIEW = """(rows) => { const p = window.__projector.app.plot; const m = p.matrix();
    let inside = 0;
    for (const i of rows) {
      const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
      const w = m[3]*x + m[7]*y + m[11]*z + m[15];
      const cx = (m[0]*x + m[4]*y + m[8]*z + m[12]) / w, cy = (m[1]*x + m[5]*y + m[9]*z + m[13]) / w;
      if (Math.abs(cx) <= 1 && Math.abs(cy) <= 1) inside++;
    }
    return inside / rows.length; }"""


def test_a_search_while_zoomed_in_elsewhere_brings_its_matches_into_view(serve, sample_logdir,
                                                                         projector):
    """Zoomed in on the 0s, a search for the 3s zooms back out so they show, instead of
    leaving a screen of dimmed points; a search whose matches are on screen leaves the view."""
    projector.open(serve(sample_logdir), DIGITS_2D)
    zeros = projector.page.evaluate(
        "window.__projector.app.dataset.values('label').flatMap((v, i) => v === '0' ? [i] : [])")
    centre = projector.page.evaluate("""(rows) => { const p = window.__projector.app.plot;
        const mean = (k) => rows.reduce((s, i) => s + p.positions[i*3+k], 0) / rows.length;
        return [mean(0), mean(1), 0]; }""", zeros)
    projector.page.evaluate("""(target) => window.__projector.app.update({ camera: {
        ...window.__projector.app.plot.camera, target, zoom: 8 } })""", centre)
    projector.wait_settled()
    assert projector.page.evaluate(SHARE_IN_VIEW, zeros) > 0.5
    projector.by("search-input").fill("0")
    projector.page.wait_for_function("window.__projector.state().selection.length === 178")
    assert projector.state()["camera"]["zoom"] == 8  # its matches are on screen: the view stays

    projector.by("search-input").fill("3")
    projector.page.wait_for_function("window.__projector.state().selection.length === 183")
    projector.wait_settled()
    threes = projector.state()["selection"]
    assert projector.page.evaluate(SHARE_IN_VIEW, threes) == 1
    assert projector.state()["camera"]["zoom"] == 1


def test_clicking_a_point_lists_its_neighbours(serve, sample_logdir, projector):
    url = serve(sample_logdir)
    projector.open(url, DIGITS_2D)
    projector.wait_settled()
    x, y = projector.screen_position(42)
    projector.page.mouse.move(x, y)
    # Point 42 or a neighbour drawn over it: the one under the cursor is picked.
    projector.page.wait_for_function("window.__projector.app.highlight.hover >= 0")
    index = projector.page.evaluate("window.__projector.app.highlight.hover")
    assert projector.by("tooltip").is_visible()
    label = projector.page.evaluate(f"window.__projector.app.highlight.labelOf({index})")
    assert projector.by("tooltip").inner_text() == label
    projector.page.mouse.click(x, y)
    rows = projector.by("neighbors-list").locator("li")
    rows.nth(99).wait_for()
    assert rows.count() == 100
    state = projector.state()
    assert state["focus"] == index and state["selection"] == [index]
    expected = httpx.get(f"{url}/api/neighbors", params={
        "run": "digits", "embedding": "digits", "index": index, "k": 100, "metric": "cosine"}).json()
    shown = [int(i) for i in projector.page.eval_on_selector_all(
        "[data-testid=neighbors-list] li", "rows => rows.map(r => r.dataset.index)")]
    assert shown == [n["index"] for n in expected["neighbors"]]
    card = projector.by("point-card").inner_text()
    assert "label" in card and "parity" in card and f"#{index}" in card
    # Fewer neighbours, euclidean: the list follows.
    projector.by("neighbors-k").fill("7")
    projector.by("neighbors-k").dispatch_event("change")
    projector.by("neighbors-metric").select_option("euclidean")
    projector.wait_js("document.querySelectorAll('[data-testid=neighbors-list] li').length === 7")
    # Clicking a neighbour row selects that point.
    first = int(rows.nth(0).get_attribute("data-index"))
    rows.nth(0).click()
    projector.page.wait_for_function(f"window.__projector.state().focus === {first}")
    projector.wait_js(f"app.highlight.neighbors.length === 7"
                      f" && !app.highlight.neighbors.some(n => n.index === {first})")
    assert projector.by("isolate-selection").inner_text() == "Isolate 8"
    # Isolate, show all, clear.
    projector.by("isolate-selection").click()
    assert "showing 8" in projector.by("status-points").inner_text()
    projector.by("show-all").click()
    assert "showing" not in projector.by("status-points").inner_text()
    projector.by("clear-selection").click()
    assert projector.state()["selection"] == []
    assert projector.by("neighbors-list").locator("li").count() == 0


def test_clicking_empty_space_clears_the_selection(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**DIGITS_2D, "selection": [1, 2, 3]})
    assert projector.state()["selection"] == [1, 2, 3]
    box = projector.by("plot").bounding_box()
    projector.page.mouse.click(box["x"] + box["width"] - 5, box["y"] + box["height"] - 5)
    projector.page.wait_for_function("window.__projector.state().selection.length === 0")


def _screen_positions(projector) -> np.ndarray:
    """Page coordinates of every point, from the plot's own matrix (as screen_position)."""
    xy = projector.page.evaluate("""() => { const p = window.__projector.app.plot; const m = p.matrix();
        const out = [];
        for (let i = 0; i < p.n; i++) {
          const [x, y, z] = [p.positions[i*3], p.positions[i*3+1], p.positions[i*3+2]];
          const w = m[3]*x + m[7]*y + m[11]*z + m[15];
          out.push([((m[0]*x + m[4]*y + m[8]*z + m[12]) / w + 1) / 2 * p.canvas.clientWidth,
                    (1 - (m[1]*x + m[5]*y + m[9]*z + m[13]) / w) / 2 * p.canvas.clientHeight]);
        }
        return out; }""")
    box = projector.by("plot").bounding_box()
    return np.array(xy) + np.array([box["x"], box["y"]])


def _inside_polygon(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Even-odd rule, and each point's distance to the nearest edge."""
    inside = np.zeros(len(points), bool)
    distance = np.full(len(points), np.inf)
    x, y = points[:, 0], points[:, 1]
    for (x1, y1), (x2, y2) in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        crosses = (y1 > y) != (y2 > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (x < at)
        edge = np.array([x2 - x1, y2 - y1])
        t = np.clip(((points - [x1, y1]) @ edge) / max(edge @ edge, 1e-12), 0, 1)
        nearest = np.array([x1, y1]) + t[:, None] * edge
        distance = np.minimum(distance, np.hypot(*(points - nearest).T))
    return inside, distance


def _assert_selected(projector, inside: np.ndarray, distance: np.ndarray) -> None:
    """The selection is the points inside, computed here; a point within a pixel of the edge
    may go either way (rounding of the mouse positions)."""
    selection = set(projector.state()["selection"])
    sure = distance > 1.0
    assert set(np.flatnonzero(inside & sure)) <= selection
    assert not set(np.flatnonzero(~inside & sure)) & selection
    assert selection <= set(np.flatnonzero(inside | ~sure))


def test_box_and_lasso_select_the_points_inside(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS_2D)
    projector.wait_settled()
    box = projector.by("plot").bounding_box()
    points = _screen_positions(projector)
    projector.by("tool-box").click()
    page = projector.page
    corners = [(box["x"] + 0.3 * box["width"], box["y"] + 0.25 * box["height"]),
               (box["x"] + 0.7 * box["width"], box["y"] + 0.75 * box["height"])]
    page.mouse.move(*corners[0])
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2, steps=5)
    page.mouse.move(*corners[1], steps=5)
    page.mouse.up()
    (x0, y0), (x1, y1) = corners
    rectangle = np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)])
    inside, distance = _inside_polygon(points, rectangle)
    assert 100 < inside.sum() < 1797  # the test means something: some in, some out
    _assert_selected(projector, inside, distance)
    # A lasso around the left half: the points inside its polygon.
    projector.by("tool-lasso").click()
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    path = [(left + 2, top + 2)] + [(left + fx * width, top + fy * height) for fx, fy in
                                    [(0.5, 0.02), (0.5, 0.98), (0.02, 0.98), (0.02, 0.03)]]
    page.mouse.move(*path[0])
    page.mouse.down()
    for x, y in path[1:]:
        page.mouse.move(x, y, steps=4)
    page.mouse.up()
    inside, distance = _inside_polygon(points, np.array(path))
    assert 100 < inside.sum() < 1797
    _assert_selected(projector, inside, distance)
    half = len(projector.state()["selection"])
    assert f"Selected {half:,} points" in projector.by("status-bar").inner_text()
