"""A first visit: the page names every module it loads for preloading (no import waterfall),
and a 2-column embedding opens in 2D with its first picture from the level-of-detail tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.browser.test_ui_scale import N, hover_nearest, screen_of_all, write_million
from tests.builders import write_points_run

pytestmark = [pytest.mark.browser]

LOADED_MODULES = """(() => {  // the classic script of <head> (theme_first.js) is named by its tag
  const classic = new Set([...document.querySelectorAll('script[src]:not([type=module])')]
    .map((s) => new URL(s.src).pathname));
  return performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)
    .filter((p) => p.endsWith('.js') && !classic.has(p)); })()"""
PRELOADED = """[...document.querySelectorAll('link[rel=modulepreload]')]
  .map((l) => new URL(l.href).pathname)"""


def test_every_module_the_page_loads_is_preloaded(serve, projector):
    url = serve()  # the bundled sample data
    projector.open(url)
    loaded = set(projector.page.evaluate(LOADED_MODULES))
    preloaded = projector.page.evaluate(PRELOADED)
    assert "/static/js/app.js" in loaded and len(loaded) > 30
    assert loaded <= set(preloaded), f"not preloaded: {sorted(loaded - set(preloaded))}"
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) <= loaded  # nothing preloaded that the page does not use


def write_plane(folder: Path, n: int) -> None:
    rng = np.random.default_rng(5)
    coords = rng.normal(0, 1, (n, 2)) + rng.integers(0, 4, (n, 1)) * 3
    write_points_run(folder, coords, "".join(f"k{i % 5}\n" for i in range(n)), name="plane")


def test_two_column_embedding_opens_in_2d_from_its_tiles(serve, tmp_path, projector):
    write_plane(tmp_path / "logs" / "plane", 300_000)
    url = serve(tmp_path / "logs")
    projector.open(url)  # the default view, no state in the URL
    page = projector.page
    assert page.evaluate("window.__projector.app.plot.threeD") is False
    assert projector.by("mode-badge").inner_text() == "2D"
    tiles = "performance.getEntriesByType('resource').map((e) => e.name)" \
        ".filter((n) => n.includes('/api/jobs/') && n.includes('/tiles/'))"
    page.wait_for_function(f"{tiles}.length >= 1")
    assert ["/tiles/0/0/0?" in name for name in page.evaluate(tiles)] == [True]  # the root alone


@pytest.mark.slow
def test_while_the_whole_set_streams_the_tiles_show_and_search_is_exact(serve, tmp_path,
                                                                        projector):
    """A million points: the whole projection is held back (as a slow link would) while the
    first picture shows from the tiles; the page answers meanwhile (a search selects exactly
    the matching points of the million), and once the whole set is in, hover is exact."""
    labels = write_million(tmp_path / "logs")
    url = serve(tmp_path / "logs")
    held = []
    page = projector.page
    page.route("**/api/projections?wait=true", lambda route: held.append(route))
    page.goto(url + "/")
    page.wait_for_function("window.__projector && window.__projector.app.plot.preview.count > 0",
                           timeout=120000)
    assert page.evaluate("window.__projector.app.plot.n") == 0  # the tiles alone so far
    assert projector.drawn_pixels() > 1500
    # The root tile alone: it holds more points than the first picture draws.
    assert page.evaluate("performance.getEntriesByType('resource').filter((e) =>"
                         " e.name.includes('/api/jobs/') && e.name.includes('/tiles/')).length") == 1
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("class7")
    expected = np.flatnonzero(labels == "class7")
    page.wait_for_function(f"window.__projector.state().selection.length === {len(expected)}",
                           timeout=60000)
    assert np.array_equal(np.sort(projector.state()["selection"]), expected)
    assert page.evaluate("window.__projector.app.plot.n") == 0 and held  # still streaming
    for route in held:
        route.continue_()
    page.unroute("**/api/projections?wait=true")
    page.wait_for_function(f"window.__projector.ready && window.__projector.app.plot.n === {N}",
                           timeout=120000)
    assert page.evaluate("window.__projector.app.plot.preview.count") == 0
    # Hover over the whole set: the nearest of all million points to the cursor.
    projector.wait_settled()
    box = projector.by("plot").bounding_box()
    screen = screen_of_all(url, page)
    hover_nearest(page, screen, box, (0.55, 0.5))
