"""A zarr whose categorical column is stored beside it as int32 codes (``v.columns/kind``, no
metadata TSV) is coloured by that column in a view shown from tiles: the Colour-by menu
offers it, the tiles bring its codes, and every resident point takes the colour the
whole-set rule gives its value (issue 25: colour by a categorical column comes with the
tiles)."""

from __future__ import annotations

import numpy as np
import pytest

from projector_core.formats.chunked_writer import write_zarr
from projector_core.formats.code_columns import write_code_column
from tests.browser.conftest import state_hash

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N = 120_000  # above COLUMNS_ABOVE (columns.js): no column would come whole either way
KINDS = ["oak", "ash", "elm", "yew", "fir", "box"]
VIEW = {"run": ".", "embedding": "v", "pca": {"is3d": False}, "sprites": False}
TILES = "window.__projector.app.plot.source"
# Per resident point: [row, colour word, code].
RESIDENT_POINTS = f"""() => [...{TILES}.resident.values()].flatMap((t) => {{
  const words = new Uint32Array(t.layer.colors.buffer, t.layer.colors.byteOffset, t.count);
  return Array.from(t.rows, (row, r) => [row, words[r], t.codes ? t.codes[r] : -1]); }})"""


def test_colour_by_a_stored_column_comes_with_the_tiles(serve, tmp_path, projector):
    rng = np.random.default_rng(11)
    blob = rng.integers(0, 9, N)
    coords = (rng.normal(0, 6, (9, 2))[blob] + rng.normal(0, 1, (N, 2))).astype(np.float32)
    weights = np.arange(1, len(KINDS) + 1, dtype=float)  # uneven: the palette goes by count
    codes = rng.choice(len(KINDS), N, p=weights / weights.sum()).astype(np.int32)
    path = write_zarr(tmp_path / "v.zarr", coords, chunk_rows=50_000)
    write_code_column(path, "kind", codes, KINDS, N, chunk_rows=40_000)
    url = serve(path)
    page = projector.page
    page.goto(url + "/?tiles=always&tilePoints=60000" + state_hash(VIEW))
    projector.wait_ready()

    options = projector.by("color-by").locator("option").all_inner_texts()
    assert "kind" in options
    projector.by("color-by").select_option("kind")
    page.wait_for_function(f"""() => window.__projector.app.highlight.coloring?.kind === 'categorical'
        && {TILES}.resident.size > 0 && {TILES}.loading.size === 0
        && [...{TILES}.resident.values()].every((t) => t.codes)""", timeout=120000)
    requests = page.evaluate("""performance.getEntriesByType('resource')
        .map((e) => new URL(e.name).pathname + new URL(e.name).search)""")
    assert any("/tiles/" in r and "column=kind" in r for r in requests)
    assert any(r.startswith("/api/metadata/column/counts") for r in requests)
    assert not [r for r in requests if r.startswith(("/api/metadata/column?", "/api/metadata?"))]

    labels = [KINDS[c] for c in codes.tolist()]
    whole = np.array(page.evaluate("""async (labels) => {
        const { categoricalColoring } = await import('/static/js/colors.js');
        const c = categoricalColoring(labels);
        return Array.from(new Uint32Array(c.colors.buffer)); }""", labels), dtype=np.int64)
    points = np.array(page.evaluate(RESIDENT_POINTS), dtype=np.int64)
    rows, words, carried = points[:, 0], points[:, 1], points[:, 2]
    assert len(rows) > 10_000
    np.testing.assert_array_equal(carried, codes[rows])  # the stored codes, row for row
    np.testing.assert_array_equal(words, whole[rows])
    legend = page.evaluate("window.__projector.app.highlight.coloring.legend")
    counts = np.bincount(codes, minlength=len(KINDS))
    assert [(i["value"], i["count"]) for i in legend["items"]] == sorted(  # by value
        (k, int(c)) for k, c in zip(KINDS, counts, strict=True))
