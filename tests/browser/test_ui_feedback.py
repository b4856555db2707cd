"""Feedback that tells the truth: a run that cannot be opened is refused in the plot, status
messages go when what they describe goes, the Structure panel says why it waits (issue 28)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from projector_core.formats.writer import add_embedding

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "sprites": False}


def write_logdir(logdir: Path) -> None:
    """Two readable runs and two broken ones (a missing tensor, an unparsable config)."""
    rng = np.random.default_rng(0)
    add_embedding(logdir / "alpha", rng.normal(size=(60, 5)), metadata=[f"a{i}" for i in range(60)])
    add_embedding(logdir / "beta", rng.normal(size=(40, 5)), metadata=[f"b{i}" for i in range(40)])
    (logdir / "broken").mkdir()
    (logdir / "broken" / "projector_config.pbtxt").write_text(
        'embeddings {\n  tensor_name: "t"\n  tensor_path: "missing.tsv"\n}\n')
    (logdir / "bad").mkdir()
    (logdir / "bad" / "projector_config.pbtxt").write_text("embeddings {")


def test_a_run_that_cannot_be_opened_is_refused_and_said_in_the_plot(serve, projector, tmp_path):
    write_logdir(tmp_path)
    projector.open(serve(tmp_path), {"run": "alpha", "embedding": "default:00000"})
    shown = projector.page.evaluate("Array.from(window.__projector.app.plot.positions)")
    for broken, why in [("broken", "tensor file not found"), ("bad", "unexpected end of file")]:
        projector.by("run-select").select_option(broken)
        failure = projector.by("load-failure")
        failure.wait_for()
        assert f"Could not open {broken}" in failure.inner_text() and why in failure.inner_text()
        assert "Still showing alpha / default:00000" in failure.inner_text()
        # Selectors, title and plot all stay on what is loaded.
        assert projector.by("run-select").input_value() == "alpha"
        assert projector.by("embedding-select").input_value() == "default:00000"
        assert projector.by("dataset-title").inner_text().startswith("alpha / default:00000")
        assert projector.state()["run"] == "alpha"
        assert projector.page.evaluate("Array.from(window.__projector.app.plot.positions)") == shown
    # Switching on to a good run clears the failure and the red status line.
    projector.by("run-select").select_option("beta")
    projector.page.wait_for_function("window.__projector.ready && window.__projector.state().run === 'beta'")
    projector.by("load-failure").wait_for(state="detached")  # cleared once beta is drawn
    assert projector.by("status-message").inner_text() == ""
    assert projector.by("dataset-title").inner_text().startswith("beta / default:00000")


def test_status_messages_go_when_what_they_describe_goes(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**DIGITS, "pca": {"is3d": False}})
    projector.by("bookmarks-list").get_by_test_id("bookmark-name").nth(1).click()
    projector.wait_text("status-message", "Loaded bookmark “PCA 3-D, the zeros selected”")
    projector.by("pca-3d").uncheck()  # the view is no longer the bookmark's
    projector.page.wait_for_function("window.__projector.state().pca.is3d === false")
    assert "Loaded bookmark" not in projector.by("status-message").inner_text()
    projector.by("bookmarks-list").get_by_test_id("bookmark-name").nth(1).click()
    projector.wait_text("status-message", "Loaded bookmark", contains=True)
    projector.by("run-select").select_option("iris")
    projector.page.wait_for_function("window.__projector.ready && window.__projector.state().run === 'iris'")
    assert "Loaded bookmark" not in projector.by("status-bar").inner_text()

    # A box selection is counted once, and the count goes with Clear.
    projector.wait_settled()
    box = projector.by("plot").bounding_box()
    page = projector.page
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + 5, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 5, box["y"] + box["height"] - 5, steps=5)
    page.mouse.up()
    page.keyboard.up("Shift")
    page.wait_for_function("window.__projector.state().selection.length > 100")
    assert projector.by("status-bar").inner_text().count("Selected") == 1
    projector.by("clear-selection").click()
    page.wait_for_function("window.__projector.state().selection.length === 0")
    assert "Selected" not in projector.by("status-bar").inner_text()


def test_structure_panel_says_ready_once_the_projection_has_finished(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), {**DIGITS, "tsne": {"nIter": 20000}})
    projector.wait_projection("pca")
    projector.page.wait_for_function("!document.querySelector('[data-testid=cluster-run]').disabled")
    assert "Available once" not in projector.by("cluster-status").inner_text()
    # While a t-SNE runs the panel waits for it, and says so; Stop says why there is nothing.
    projector.by("tab-tsne").click()
    projector.wait_text("cluster-status", "Available once the projection has finished.")
    projector.by("tsne-stop").click()
    projector.wait_text("cluster-status", "stopped before its end", contains=True)


def test_points_with_a_broken_metadata_file_open_and_say_what_is_broken(serve, projector, tmp_path):
    """The server says such points are usable (status "ready", the error beside them): the page
    opens them on a first visit and names the file, rather than "No readable embedding"."""
    add_embedding(tmp_path / "only", np.random.default_rng(0).normal(size=(50, 4)),
                  metadata=[f"p{i}" for i in range(50)])
    [metadata] = (tmp_path / "only").rglob("metadata.tsv")
    metadata.write_text("".join(f"p{i}\n" for i in range(49)))  # one row short
    projector.open(serve(tmp_path))
    projector.wait_text("status-bar", "Points: 50", contains=True)
    warnings = projector.by("dataset-warnings")
    warnings.wait_for()
    assert "metadata.tsv" in warnings.inner_text()
    assert projector.drawn_pixels() > 50
