"""A projection shown from tiles holds only per-tile data (issue 25): the colour-by column
comes with the tiles as codes, coloured exactly as the whole set would be; a lasso selection
is kept as its region and a search as its matching codes, each tile's flags made from them;
no metadata column is fetched whole, and no array the size of the data set is made."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.browser.conftest import state_hash
from tests.builders import write_points_run

pytestmark = [pytest.mark.browser, pytest.mark.slow]

N = 200_000  # above COLUMNS_ABOVE (columns.js): a whole-set view would fetch columns
RESIDENT = 100_000  # ?tilePoints: the tab holds at most half the points
VIEW = {"run": "mid", "embedding": "points", "pca": {"is3d": False}, "sprites": False,
        "labelBy": "label", "colorBy": "label"}
REQUESTS = """performance.getEntriesByType('resource')
  .map((e) => new URL(e.name).pathname + new URL(e.name).search)"""
TILES = "window.__projector.app.plot.source"
# Per resident point: [row, colour word, flags, label code].
RESIDENT_POINTS = f"""() => [...{TILES}.resident.values()].flatMap((t) => {{
  const words = new Uint32Array(t.layer.colors.buffer, t.layer.colors.byteOffset, t.count);
  return Array.from(t.rows, (row, r) => [row, words[r], t.layer.flags[r], t.codes[r]]); }})"""


def write_set(logdir) -> np.ndarray:
    """N points in 2-D (12 blobs) with an 8-class label column of uneven counts (the palette
    goes by count) and a few missing values."""
    rng = np.random.default_rng(5)
    blob = rng.integers(0, 12, N)
    coords = rng.normal(0, 5, (12, 2))[blob] + rng.normal(0, 1, (N, 2))
    weights = np.arange(1, 9, dtype=float)
    labels = np.array([f"class{i}" for i in range(8)])[rng.choice(8, N, p=weights / weights.sum())]
    labels[rng.choice(N, 500, replace=False)] = ""
    rows = "".join(f"{lab}\tg{b % 3}\n" for lab, b in zip(labels, blob, strict=True))
    write_points_run(logdir / "mid", coords, "label\tgroup\n" + rows)
    return labels


def resident(page) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    points = np.array(page.evaluate(RESIDENT_POINTS), dtype=np.int64)
    return points[:, 0], points[:, 1], points[:, 2]


def test_tiles_colour_and_highlight_by_rules_without_per_point_arrays(serve, tmp_path, projector):
    labels = write_set(tmp_path / "logs")
    url = serve(tmp_path / "logs")
    page = projector.page
    page.goto(url + f"/?tiles=always&tilePoints={RESIDENT}" + state_hash(VIEW))
    projector.wait_ready()
    app = "window.__projector.app"
    page.wait_for_function(f"""() => {app}.highlight.coloring?.kind === 'categorical'
        && {TILES}.resident.size > 0 && {TILES}.loading.size === 0
        && [...{TILES}.resident.values()].every((t) => t.codes)""",
                           timeout=120000)

    # The tiles carry the label column's codes; no column, TSV or result came whole.
    requests = page.evaluate(REQUESTS)
    tiles = [r for r in requests if r.startswith("/api/jobs/") and "/tiles/" in r]
    assert tiles and all("column=label" in r for r in tiles)
    assert any(r.startswith("/api/metadata/column/counts") for r in requests)
    assert not [r for r in requests if r.startswith(("/api/metadata/column?", "/api/metadata?"))
                or "/result" in r or "wait=true" in r]

    # Colours: the whole-set rule (colors.js categoricalColoring) over every label, per row.
    whole = np.array(page.evaluate("""async (labels) => {
        const { categoricalColoring } = await import('/static/js/colors.js');
        const c = categoricalColoring(labels);
        return Array.from(new Uint32Array(c.colors.buffer)); }""", labels.tolist()),
                     dtype=np.int64)
    rows, words, _ = resident(page)
    assert len(rows) > 10000
    assert np.array_equal(words, whole[rows])
    counts = Counter(v for v in labels.tolist() if v)
    legend = page.evaluate(f"{app}.highlight.coloring.legend")
    assert [(i["value"], i["count"]) for i in legend["items"]] == sorted(
        counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert legend["missing"] == int((labels == "").sum())

    # Nothing the size of the data set: no whole-set colours or flags, tiles within budget.
    held = page.evaluate(f"""() => {{ const a = {app}; const p = a.plot; return {{
        coloring: a.highlight.coloring.colors === null, colors: p.points.colors?.length ?? 0,
        flags: p.flags?.length ?? 0, columns: a.dataset.metadata.columns.filter(Boolean).length,
        points: p.source.residentPoints, bytes: p.source.residentBytes }}; }}""")
    assert held["coloring"] and held["colors"] < N and held["flags"] < N
    assert held["columns"] == 0
    # Panels that need a whole column (charts, the inspector's row) asked: they are told no,
    # and the status line says why.
    refused = page.evaluate(f"[...({app}.dataset.refused ?? [])]")
    if refused:
        assert "stays on the server" in page.evaluate(f"{app}.status.message.text")
    assert held["points"] <= RESIDENT and held["bytes"] <= 64 * held["points"]

    # Lasso: answered by the server (the tab holds half the points), kept as its region;
    # every resident point inside is flagged, none outside.
    projector.wait_settled()
    box = projector.by("plot").bounding_box()
    projector.by("tool-lasso").click()
    corners = [(0.35, 0.30), (0.65, 0.35), (0.60, 0.65), (0.40, 0.60)]
    points = [(box["x"] + fx * box["width"], box["y"] + fy * box["height"]) for fx, fy in corners]
    page.mouse.move(*points[0])
    page.mouse.down()
    for point in [*points[1:], points[0]]:
        page.mouse.move(*point, steps=4)
    page.mouse.up()
    page.wait_for_function(f"{app}.highlight.selectionScope?.kind === 'region'", timeout=60000)
    selection = set(projector.state()["selection"])
    assert len(selection) > 1000
    assert page.evaluate(f"{app}.highlight.selectedCount()") == len(selection)
    assert any("/select" in r for r in page.evaluate(REQUESTS))
    rows, _, flags = resident(page)
    flagged = (flags & 1) != 0
    inside = np.isin(rows, list(selection))
    assert flagged.sum() > 100 and np.array_equal(flagged, inside)
    assert page.evaluate(f"{TILES}.marks.rows.size") == 0  # the region, not a list of rows

    # Search: its matching codes flag every resident class3 point and no other.
    projector.by("search-column").select_option("label")
    projector.by("search-input").fill("class3")
    expected = int((labels == "class3").sum())
    page.wait_for_function(f"{app}.highlight.selectionScope?.kind === 'search' && "
                           f"{app}.highlight.selectedCount() === {expected}", timeout=60000)
    rows, _, flags = resident(page)
    assert np.array_equal((flags & 1) != 0, labels[rows] == "class3")
    assert sorted(projector.state()["selection"]) == np.flatnonzero(labels == "class3").tolist()

    # A click: the point and its neighbours over the whole set flag the tiles that hold them.
    projector.by("search-input").fill("")
    projector.by("tool-navigate").click()
    rows, _, _ = resident(page)
    target = int(rows[0])
    page.evaluate(f"(row) => {app}.highlight.selectPoint(row)", target)
    projector.by("neighbors-list").locator("li").nth(99).wait_for(timeout=60000)
    neighbours = [int(i) for i in page.eval_on_selector_all(
        "[data-testid=neighbors-list] li", "rows => rows.map(r => r.dataset.index)")]
    page.wait_for_function(f"{TILES}.marks.rows.size === {len(neighbours) + 1}")
    rows, _, flags = resident(page)
    at = dict(zip(rows.tolist(), flags.tolist(), strict=True))
    assert at[target] & 8  # the focus
    near = [at[i] for i in neighbours if i in at]
    assert near and all(f & 2 for f in near)
    # Its label from the tiles' codes (the label column never came whole).
    assert page.evaluate(f"(row) => {app}.highlight.labelOf(row)", target) == (labels[target] or f"#{target}")
    assert projector.errors == []
