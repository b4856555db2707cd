"""The keyboard (issue 28): result rows are reached with Tab and picked with Enter, Escape
clears the search and the selection, arrow keys pan the plot and + / - zoom it."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}, "colorBy": "species"}


def test_result_rows_focus_and_escape_clears(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    page = projector.page
    projector.by("search-column").select_option("species")
    projector.by("search-input").fill("setosa")
    page.wait_for_function("window.__projector.state().selection.length === 50")
    rows = projector.by("search-results").locator("li")
    first = int(rows.nth(0).get_attribute("data-index"))
    projector.by("search-input").focus()
    page.keyboard.press("Tab")  # the regex box
    page.keyboard.press("Tab")  # the first result
    assert page.evaluate("document.activeElement.dataset.index") == str(first)
    page.wait_for_function(f"window.__projector.app.highlight.hover === {first}")
    page.keyboard.press("Tab")
    second = int(page.evaluate("document.activeElement.dataset.index"))
    page.keyboard.press("Enter")
    page.wait_for_function(f"window.__projector.state().focus === {second}")
    assert projector.state()["selection"] == [second]
    # Escape clears the search and the selection, from wherever the focus is.
    page.keyboard.press("Escape")
    page.wait_for_function("window.__projector.state().selection.length === 0")
    state = projector.state()
    assert state["search"]["query"] == "" and state["focus"] is None
    assert projector.by("search-input").input_value() == ""


def test_arrow_keys_pan_and_plus_minus_zoom(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    page = projector.page
    projector.wait_settled()
    projector.by("plot").focus()
    before = page.evaluate("window.__projector.app.plot.camera")
    page.keyboard.press("ArrowRight")
    after = page.evaluate("window.__projector.app.plot.camera")
    assert after["target"][0] > before["target"][0] and after["target"][1] == before["target"][1]
    page.keyboard.press("ArrowUp")
    up = page.evaluate("window.__projector.app.plot.camera")
    assert up["target"][1] > after["target"][1]
    page.keyboard.press("+")
    zoomed = page.evaluate("window.__projector.app.plot.camera")
    assert zoomed["zoom"] > up["zoom"]
    page.keyboard.press("-")
    page.keyboard.press("-")
    assert page.evaluate("window.__projector.app.plot.camera")["zoom"] < zoomed["zoom"]
    # The camera is the state's: the URL keeps the moved view.
    page.wait_for_function("window.__projector.urlState()?.camera != null")
    # Keys typed in a field stay there.
    projector.by("search-input").focus()
    camera = page.evaluate("window.__projector.app.plot.camera")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("-")
    assert page.evaluate("window.__projector.app.plot.camera") == camera
