"""A first visit: the page names every module it loads for preloading (no import waterfall),
and a 2-column embedding opens in 2D with its first picture from the level-of-detail tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.builders import write_pbtxt_run

pytestmark = [pytest.mark.browser]

LOADED_MODULES = """performance.getEntriesByType('resource')
  .map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.js'))"""
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
    write_pbtxt_run(
        folder, f'embeddings {{ tensor_name: "plane" tensor_path: "t.bytes" tensor_shape: {n} '
                'tensor_shape: 2 metadata_path: "meta.tsv" }',
        {"t.bytes": coords.astype("<f4").tobytes(),
         "meta.tsv": "".join(f"k{i % 5}\n" for i in range(n))})


def test_two_column_embedding_opens_in_2d_from_its_tiles(serve, tmp_path, projector):
    write_plane(tmp_path / "logs" / "plane", 300_000)
    url = serve(tmp_path / "logs", prepare_view=True)
    projector.open(url)  # the default view, no state in the URL
    page = projector.page
    assert page.evaluate("window.__projector.app.plot.threeD") is False
    assert projector.by("mode-badge").inner_text() == "2D"
    tiles = page.evaluate("performance.getEntriesByType('resource').map((e) => e.name)"
                          ".filter((n) => n.includes('/tiles/'))")
    assert any("/tiles/0/0/0?" in t for t in tiles) and len(tiles) == 5  # levels 0 and 1
