"""Structure features in the real UI: linked charts (cross-filtering), the selection table,
the density layer, cluster names and projection quality."""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}, "colorBy": "species"}
DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False,
             "pca": {"is3d": False}, "colorBy": "label", "labelBy": "label"}


def _iris(sample_logdir) -> dict[str, list[str]]:
    text = (sample_logdir / "iris" / "metadata.tsv").read_text()
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}


def _chart(projector, column: str):
    return projector.page.locator(f'[data-testid="chart"][data-column="{column}"]')


def _selected(projector, column: str) -> list[int]:
    text = _chart(projector, column).get_attribute("data-selected")
    return [int(v) for v in text.split(",")] if text else []


def test_charts_filter_the_map_and_follow_its_selection(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    meta = _iris(sample_logdir)
    charts = projector.by("chart")
    assert charts.count() == 5
    kinds = {c.get_attribute("data-column"): c.get_attribute("data-kind") for c in charts.all()}
    assert kinds == {"species": "categorical", "sepal_length": "numeric", "sepal_width": "numeric",
                     "petal_length": "numeric", "petal_width": "numeric"}
    # Clicking the first bar of "species" selects that species on the map.
    species = _chart(projector, "species").locator("canvas")
    box = species.bounding_box()
    species.click(position={"x": box["width"] * 0.7, "y": 7})
    projector.page.wait_for_function("window.__projector.state().selection.length === 50")
    chosen = {meta["species"][i] for i in projector.state()["selection"]}
    assert len(chosen) == 1
    # Every chart now shows the selected rows over all rows.
    projector.page.wait_for_function(
        "document.querySelector('[data-column=petal_length]').dataset.selected !== ''")
    for column in ("species", "sepal_length", "petal_length", "petal_width"):
        assert sum(_selected(projector, column)) == 50
    # Brushing the lower half of the petal_length histogram selects exactly those rows.
    hist = _chart(projector, "petal_length").locator("canvas")
    hist.scroll_into_view_if_needed()
    hb = hist.bounding_box()
    last_bin = 12
    projector.page.mouse.move(hb["x"] + 1, hb["y"] + hb["height"] / 2)
    projector.page.mouse.down()
    projector.page.mouse.move(hb["x"] + hb["width"] * (last_bin + 0.5) / 30, hb["y"] + hb["height"] / 2,
                              steps=5)
    projector.page.mouse.up()
    lengths = np.array([float(v) for v in meta["petal_length"]])
    width = (lengths.max() - lengths.min()) / 30
    expected = np.flatnonzero(np.minimum(29, np.floor((lengths - lengths.min()) / width)) <= last_bin)
    projector.page.wait_for_function(f"window.__projector.state().selection.length === {expected.size}")
    assert sorted(projector.state()["selection"]) == expected.tolist()
    assert "petal_length in [" in projector.by("status-message").inner_text()
    # A selection made elsewhere (search) redraws the charts as selected-vs-all.
    projector.by("search-column").select_option("species")
    projector.by("search-input").fill("virginica")
    projector.page.wait_for_function("window.__projector.state().selection.length === 50")
    projector.page.wait_for_function(
        "document.querySelector('[data-column=species]').dataset.selected.split(',').includes('50')")
    counts = [int(v) for v in _chart(projector, "species").get_attribute("data-counts").split(",")]
    assert counts == [50, 50, 50]


def test_selection_table_sorts_and_exports_csv(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    meta = _iris(sample_logdir)
    projector.by("search-column").select_option("species")
    projector.by("search-input").fill("setosa")
    projector.page.wait_for_function("window.__projector.state().selection.length === 50")
    assert projector.by("table-count").inner_text() == "50 selected"
    table = projector.by("selection-table")
    assert table.locator("tbody tr").count() == 50
    table.locator('th[data-column="sepal_width"]').click()
    table.locator('th[data-column="sepal_width"]').click()  # descending
    first = table.locator("tbody tr").first.locator("td").nth(3).inner_text()
    assert float(first) == max(float(meta["sepal_width"][i]) for i in range(50))
    with projector.page.expect_download() as download:
        projector.by("table-csv").click()
    text = Path(download.value.path()).read_text()
    rows = list(csv.reader(io.StringIO(text)))
    columns = ["species", "sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert rows[0] == ["index", *columns]
    # Exactly the 50 setosa rows of the file, each as written, in the table's order.
    expected = {(str(i), *(meta[c][i] for c in columns)) for i in range(150)
                if meta["species"][i] == "setosa"}
    assert len(rows) == 51 and {tuple(r) for r in rows[1:]} == expected
    widths = [float(r[3]) for r in rows[1:]]
    assert widths == sorted(widths, reverse=True) and widths[0] == float(first)


def test_density_clusters_and_quality_on_the_map(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS_2D)
    projector.wait_settled()
    page = projector.page
    painted = """() => { const c = document.querySelector('[data-testid=structure-overlay]');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""
    assert page.evaluate(painted) == 0
    projector.by("density-toggle").check()
    page.wait_for_function(f"({painted})() > 1000")
    assert projector.by("density-legend").is_visible()
    # Clusters of the PCA picture, named from the label column.
    projector.by("cluster-label-column").select_option("label")
    projector.by("cluster-run").click()
    projector.wait_text("cluster-status", "clusters", contains=True)
    page.wait_for_function("window.__structure.overlay.drawnLabels.length > 0")
    labels = page.evaluate("window.__structure.overlay.drawnLabels")
    assert all("%)" in label["label"] for label in labels)
    # Names never overlap: each one's ink, measured here by the browser's own text metrics
    # in the font drawn (centred on its point), meets no other's.
    boxes = page.evaluate("""(labels) => { const ctx = document.createElement('canvas').getContext('2d');
        ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
        return labels.map((l) => {
          ctx.font = `600 ${l.size}px system-ui, -apple-system, "Segoe UI", "Noto Sans", sans-serif`;
          const m = ctx.measureText(l.label);
          return [l.x - m.actualBoundingBoxLeft, l.y - m.actualBoundingBoxAscent,
                  l.x + m.actualBoundingBoxRight, l.y + m.actualBoundingBoxDescent]; }); }""", labels)
    assert len(boxes) == len(labels)
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (l1, t1, r1, b1), (l2, t2, r2, b2) = boxes[a], boxes[b]
            assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, (labels[a], labels[b])
    # Quality: colour by it, then a clicked point tells how many neighbours it kept.
    projector.by("quality-toggle").check()
    projector.wait_text("quality-status", "Trustworthiness", contains=True)
    assert projector.by("quality-legend").is_visible()
    x, y = projector.screen_position(42)
    page.mouse.click(x, y)
    page.wait_for_function("window.__projector.state().focus !== null")
    projector.wait_text("point-quality", "original neighbours are near it here", contains=True)
    focus = projector.state()["focus"]
    assert projector.by("point-quality").inner_text().startswith(f"Point #{focus}: ")
    assert " of 10 " in projector.by("point-quality").inner_text()


def test_quality_of_a_large_set_runs_only_when_asked_and_can_be_cancelled(serve, tmp_path,
                                                                          projector):
    """Above QUALITY_AUTO_POINTS (structure/quality.js) a finished projection and a clicked
    point measure nothing by themselves (exact quality is O(N^2): minutes at 100,000 points);
    Measure, or ticking the colouring, starts it with its progress in the panel, not over the
    plot, and Cancel stops it."""
    from projector_core.formats.writer import add_embedding

    rng = np.random.default_rng(4)
    add_embedding(tmp_path / "logs", rng.normal(size=(12_000, 8)).astype("f4"), tag="large")
    asked: list[str] = []
    projector.page.on(
        "request", lambda r: asked.append(r.url) if "/api/jobs/" in r.url and "/quality" in r.url else None)
    url = serve(tmp_path / "logs")
    projector.open(url, {"pca": {"is3d": False}})
    projector.wait_projection("pca")
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(5)")
    projector.wait_text("quality-status", "Not measured for this projection", contains=True)
    assert asked == []
    assert projector.by("quality-run").is_visible() and projector.by("quality-cancel").is_hidden()

    projector.by("quality-run").click()
    projector.wait_text("quality-status", "Measuring the quality of 12,000 points", contains=True)
    assert len(asked) == 1 and "background=true" in asked[0]
    assert projector.by("quality-cancel").is_visible() and projector.by("progress").is_hidden()
    projector.by("quality-cancel").click()
    projector.wait_text("quality-status", "Quality: not measured (cancelled).")
    assert _quality_jobs(url) == ["cancelled"]  # the server's job stopped, not only the page
    assert projector.by("quality-run").is_visible()

    projector.by("quality-toggle").check()  # colouring by it asks for it
    projector.wait_text("quality-status", "Measuring the quality", contains=True)
    assert len(asked) == 2
    projector.by("quality-cancel").click()
    projector.wait_text("quality-status", "Quality: not measured (cancelled).")
    assert _quality_jobs(url)[-1] == "cancelled"


def _quality_jobs(url: str) -> list[str]:
    """The statuses of the server's quality jobs, oldest first, once none is still going."""
    deadline = time.monotonic() + 30
    while True:
        jobs = [j["status"] for j in httpx.get(f"{url}/api/jobs", timeout=30).json()["jobs"]
                if j.get("kind") == "quality"]
        if all(s in ("done", "failed", "cancelled") for s in jobs) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.1)
