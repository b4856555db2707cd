"""TensorBoard's 3D labels mode and sequences (`__next__` polylines), driven in Chromium."""

from __future__ import annotations

import colorsys
from pathlib import Path

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

CHAINS = 3
CHAIN_LENGTH = 8
N = CHAINS * CHAIN_LENGTH


def sequence_logdir(root: Path) -> tuple[Path, int]:
    """Three chains of eight points along separate lines, linked by `__next__`, two bad cells."""
    rng = np.random.default_rng(7)
    vectors = np.zeros((N, 6), dtype=np.float32)
    rows = []
    good = 0
    for chain in range(CHAINS):
        for step in range(CHAIN_LENGTH):
            i = chain * CHAIN_LENGTH + step
            vectors[i, chain] = 3.0 * chain
            vectors[i, 3 + chain] = step
            last = step == CHAIN_LENGTH - 1
            nxt = "" if last else str(i + 1)
            good += not last
            rows.append([f"w{i}", nxt])
    vectors += rng.normal(0, 0.01, vectors.shape).astype(np.float32)
    rows[CHAIN_LENGTH - 1][1] = "oops"  # end of chain 0: not an index
    rows[-1][1] = "999"  # end of chain 2: out of range
    logdir = root / "logs"
    add_embedding(logdir, vectors, metadata=rows, metadata_header=["word", "__next__"], tag="chains")
    add_embedding(logdir, vectors, metadata=[[f"p{i}", "x"] for i in range(N)],
                  metadata_header=["word", "kind"], tag="plain")
    return logdir, good


def layer(projector, expression: str):
    return projector.page.evaluate(f"window.__tbLabels.{expression}")


def changed_pixels(before: np.ndarray, after: np.ndarray) -> int:
    return int((np.abs(before - after).sum(axis=2) > 60).sum())


def test_sequences_draw_polylines_and_bad_cells_are_reported(serve, projector, tmp_path):
    logdir, good = sequence_logdir(tmp_path)
    projector.open(serve(logdir))
    projector.wait_js("window.__tbLabels.polylines.drawnSegments > 0")
    projector.wait_settled()
    assert layer(projector, "polylines.drawnSegments") == good
    assert projector.by("sequences-field").is_visible()
    assert projector.by("sequences-toggle").is_checked()
    assert f"{good} links (__next__)" in projector.by("sequences-status").inner_text()
    message = projector.by("status-message").inner_text()
    assert "__next__: 2 cells skipped" in message and '"oops"' in message
    # The server reads the file the same way and says which line is bad.
    assert "metadata.tsv line 9: column '__next__'" in projector.by("dataset-warnings").inner_text()

    with_lines = projector.plot_image()
    projector.by("sequences-toggle").uncheck()
    projector.wait_js("window.__tbLabels.polylines.drawnSegments === 0")
    projector.wait_settled()
    without = projector.plot_image()
    # Pixels along the segment 2 -> 3 (away from its two points) change when lines go.
    box = projector.by("plot").bounding_box()
    (ax, ay), (bx, by) = projector.screen_position(2), projector.screen_position(3)
    along = 0
    for f in np.linspace(0.3, 0.7, 9):
        x = round(ax + (bx - ax) * f - box["x"])
        y = round(ay + (by - ay) * f - box["y"])
        patch = (slice(max(0, y - 1), y + 2), slice(max(0, x - 1), x + 2))
        along += changed_pixels(with_lines[patch], without[patch]) > 0
    assert along >= 6, f"the line 2 -> 3 shows at {along} of 9 places along it"
    assert projector.state()["sequences"] is False

    # A tensor without a sequence column: no switch, no lines, no message.
    projector.by("embedding-select").select_option("plain:00000")
    projector.wait_js("app.dataset.name === 'plain:00000' && app.dataset.metadata")
    projector.wait_settled()
    assert not projector.by("sequences-field").is_visible()
    assert layer(projector, "polylines.pairs.length") == 0


def test_3d_labels_draw_every_label_and_survive_reload(serve, projector, tmp_path):
    logdir, _ = sequence_logdir(tmp_path)
    projector.open(serve(logdir))
    projector.wait_settled()
    assert projector.state()["labelBy"] == "word"
    assert layer(projector, "labels.drawn") == 0
    discs = projector.plot_image()
    projector.by("labels3d-toggle").check()
    projector.wait_js(f"window.__tbLabels.labels.drawn === {N}")
    projector.wait_settled()
    labelled = projector.plot_image()
    assert changed_pixels(discs, labelled) > 500, "label text replaces the discs"
    assert projector.page.evaluate("window.__projector.app.plot.points.hidden") is True
    # The labels are the "label by" column: switching it redraws them as indices.
    projector.by("label-by").select_option("")
    projector.wait_settled()
    assert changed_pixels(labelled, projector.plot_image()) > 100
    projector.by("label-by").select_option("word")

    projector.page.wait_for_function("window.__projector.urlState()?.labels3d === true")
    projector.page.reload()
    projector.wait_ready()
    assert projector.state()["labels3d"] is True
    assert projector.by("labels3d-toggle").is_checked()
    projector.wait_js(f"window.__tbLabels.labels.drawn === {N}")
    projector.by("labels3d-toggle").uncheck()
    projector.wait_js("window.__tbLabels.labels.drawn === 0")
    assert projector.page.evaluate("window.__projector.app.plot.points.hidden") is False


def test_3d_labels_replace_thumbnails_and_take_the_point_colours(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir))
    projector.wait_settled()
    thumbnails = projector.drawn_pixels()
    projector.by("labels3d-toggle").check()
    projector.wait_js("window.__tbLabels.labels.drawn === 1797")
    projector.wait_settled()
    image = projector.plot_image()
    background = np.median(image.reshape(-1, 3), axis=0)
    drawn = np.abs(image - background).sum(axis=2) > 60
    assert drawn.sum() < thumbnails, "text covers less than the thumbnails it replaces"
    # Coloured by the digit (10 classes): the labels show many hues, not one text colour.
    pixels = image[drawn]
    chroma = pixels.max(axis=1) - pixels.min(axis=1)
    coloured = pixels[chroma > 60]
    assert len(coloured) > 1000, "label text in colour, not grey"
    hues = {round(colorsys.rgb_to_hsv(*(c / 255))[0] * 12) % 12 for c in coloured}
    assert len(hues) >= 5, f"hues {sorted(hues)}"


def test_digits_are_labelled_by_their_digit_as_the_api_says(serve, projector, sample_logdir):
    """One rule for the label column: the page starts from /api/runs' label_column (digits:
    "label", not TensorBoard's first text column "parity"), as the MCP tools search it."""
    base = serve(sample_logdir)
    projector.open(base)  # a fresh view: the first run, digits
    projector.wait_js("app.dataset && app.dataset.name === 'digits' && app.dataset.metadata")
    assert projector.state()["labelBy"] == "label"
    assert projector.state()["search"]["column"] == "label"
