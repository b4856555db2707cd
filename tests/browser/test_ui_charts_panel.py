"""The Charts panel as a first-time user meets it (issue 28): drawn in the current theme, a
histogram with its value scale and a band where it was brushed, class ids in value order,
columns of all-different values summarised, counts never cut off, and a table that stays
whole when one of its rows is clicked."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}, "colorBy": "species"}
WORDS_2D = {"run": "words", "embedding": "words", "pca": {"is3d": False}}
DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False, "pca": {"is3d": False}}

CANVAS_PIXELS = """(column) => {
    const c = document.querySelector(`[data-testid=chart][data-column="${column}"] canvas`);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    return { width: c.width, height: c.height, data: Array.from(d) }; }"""


def _pixels(projector, column: str) -> np.ndarray:
    raw = projector.page.evaluate(CANVAS_PIXELS, column)
    return np.array(raw["data"], dtype=int).reshape(raw["height"], raw["width"], 4)


def _chart(projector, column: str):
    return projector.page.locator(f'[data-testid="chart"][data-column="{column}"]')


def _near(pixels: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 6) -> int:
    opaque = pixels[..., 3] > 200
    close = (np.abs(pixels[..., :3] - np.array(rgb)) <= tolerance).all(axis=2)
    return int((opaque & close).sum())


def _column(sample_logdir, run: str, name: str) -> list[str]:
    rows = list(csv.reader(io.StringIO((sample_logdir / run / "metadata.tsv").read_text()), delimiter="\t"))
    return [r[rows[0].index(name)] for r in rows[1:]]


def test_charts_redraw_in_the_dark_theme(serve, sample_logdir, projector):
    """Item 6: switching to the dark theme redraws the charts in its colours at once."""
    projector.open(serve(sample_logdir), IRIS_2D)
    projector.page.evaluate("document.documentElement.dataset.theme = 'light'")
    projector.page.wait_for_function(
        "document.querySelector('[data-column=species]').dataset.theme === 'light'")
    light_bar = (0xC9, 0xD3, 0xE0)  # --chart-all, light theme
    assert _near(_pixels(projector, "species"), light_bar) > 100
    projector.by("theme-toggle").click()
    assert projector.page.evaluate("document.documentElement.dataset.theme") == "dark"
    projector.page.wait_for_function(
        "document.querySelector('[data-column=species]').dataset.theme === 'dark'", timeout=5000)
    dark = _pixels(projector, "species")
    assert _near(dark, light_bar) == 0
    assert _near(dark, (0x3A, 0x45, 0x56)) > 100  # --chart-all, dark theme
    assert _near(dark, (0xE6, 0xE8, 0xEB), 40) > 20  # the labels and counts in --text, dark


def test_clicking_a_table_row_keeps_the_table(serve, sample_logdir, projector):
    """Item 12: a row click focuses its point (neighbours listed); the selection and the
    table of 50 rows stay."""
    projector.open(serve(sample_logdir), IRIS_2D)
    projector.by("search-column").select_option("species")
    projector.by("search-input").fill("setosa")
    projector.page.wait_for_function("window.__projector.state().selection.length === 50")
    rows = projector.by("selection-table").locator("tbody tr")
    assert rows.count() == 50
    row = rows.nth(3)
    index = int(row.get_attribute("data-index"))
    row.click()
    projector.page.wait_for_function(f"window.__projector.state().focus === {index}")
    assert len(projector.state()["selection"]) == 50
    assert rows.count() == 50
    assert "focused" in (row.get_attribute("class") or "")
    projector.page.wait_for_function("window.__projector.app.highlight.neighbors.length > 0")
    assert rows.count() == 50
    # Hovering a row highlights its point on the map.
    rows.nth(7).hover()
    hovered = int(rows.nth(7).get_attribute("data-index"))
    projector.page.wait_for_function(f"window.__projector.app.highlight.hover === {hovered}")


def test_histograms_have_a_scale_and_a_brush_band(serve, sample_logdir, projector):
    """Item 17: a histogram shows its value range, and the brushed range stays marked."""
    projector.open(serve(sample_logdir), IRIS_2D)
    lengths = [float(v) for v in _column(sample_logdir, "iris", "petal_length")]
    axis = _chart(projector, "petal_length").locator('[data-testid="chart-axis"] span')
    assert float(axis.first.inner_text()) == min(lengths)
    assert float(axis.last.inner_text()) == max(lengths)
    hist = _chart(projector, "petal_length").locator("canvas")
    hist.scroll_into_view_if_needed()
    box = hist.bounding_box()
    projector.page.mouse.move(box["x"] + box["width"] * 10.5 / 30, box["y"] + box["height"] / 2)
    projector.page.mouse.down()
    projector.page.mouse.move(box["x"] + box["width"] * 20.5 / 30, box["y"] + box["height"] / 2, steps=5)
    projector.page.mouse.up()
    projector.page.wait_for_function(
        "document.querySelector('[data-column=petal_length]').dataset.band === '10,20'")
    pixels = _pixels(projector, "petal_length")
    top = pixels[0, :, 3]  # the top row: no bar reaches it, only the band
    width = top.size
    inside = top[int(width * 11 / 30):int(width * 20 / 30)]
    outside = np.concatenate([top[int(width * 2 / 30):int(width * 9.5 / 30)], top[int(width * 21.5 / 30):]])
    assert (inside > 0).all() and (outside == 0).all()
    # A selection made elsewhere ends the band.
    projector.by("clear-selection").click()
    projector.page.wait_for_function(
        "document.querySelector('[data-column=petal_length]').dataset.band === ''")


def test_class_ids_in_value_order_and_unique_columns_summarised(serve, sample_logdir, projector):
    """Item 17: an integer column's bars go by value; a column of all-different values is a
    count with examples, not twelve bars of "1"; counts are never cut at the edge."""
    projector.open(serve(sample_logdir), WORDS_2D)
    labels = _chart(projector, "length").get_attribute("data-labels")
    shown = json.loads(labels)
    values = [v for v in shown if not v.startswith("(")]
    assert values == sorted(values, key=float) and len(values) >= 10
    assert all("1 other values" not in v for v in shown)
    word = _chart(projector, "word")
    assert word.get_attribute("data-kind") == "unique"
    assert word.locator("canvas").count() == 0
    summary = word.locator('[data-testid="chart-summary"]').inner_text()
    assert "4,000 different values" in summary and "e.g. " in summary
    # A big selection: counts like "3,764/3,764" fit inside the canvas.
    projector.by("search-column").select_option("category")
    projector.by("search-input").fill("other")
    projector.page.wait_for_function("window.__projector.state().selection.length === 3764")
    projector.page.wait_for_function(
        "document.querySelector('[data-column=category]').dataset.selected !== ''")
    pixels = _pixels(projector, "category")
    assert (pixels[:, -3:, 3] == 0).all(), "a count is cut off at the chart's right edge"


def test_digit_labels_in_value_order(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS_2D)
    shown = json.loads(_chart(projector, "label").get_attribute("data-labels"))
    assert shown == [str(d) for d in range(10)]
