"""Bookmarks and links: a saved view comes back from the URL, from the tray and from a file."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser

DIGITS = {"run": "digits", "embedding": "digits", "sprites": False}


def view(state: dict) -> dict:
    """The parts of the state a restored view must reproduce."""
    keys = ["run", "embedding", "projection", "pca", "colorBy", "labelBy", "selection", "focus", "sprites"]
    out = {k: state[k] for k in keys}
    out["camera"] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in state["camera"].items()}
    return out


def test_bookmark_saved_reloaded_and_loaded_from_a_file(serve, sample_logdir, projector, tmp_path):
    url = serve(sample_logdir)
    projector.open(url, DIGITS)
    # Make a view: PCA 3D, coloured by parity, point 7 selected, camera turned.
    projector.by("pca-3d").check()
    projector.by("color-by").select_option("parity")
    projector.page.evaluate("window.__projector.app.selectPoint(7)")
    box = projector.by("plot").bounding_box()
    projector.page.mouse.move(box["x"] + 300, box["y"] + 300)
    projector.page.mouse.down()
    projector.page.mouse.move(box["x"] + 360, box["y"] + 330, steps=4)
    projector.page.mouse.up()
    saved = view(projector.state())
    assert saved["pca"]["is3d"] and saved["colorBy"] == "parity" and saved["focus"] == 7
    projector.by("bookmark-add").click()
    assert projector.by("bookmarks-list").locator("li").count() == 3
    with projector.page.expect_download() as download:
        projector.by("bookmark-save").click()
    path = tmp_path / "bookmarks.json"
    download.value.save_as(path)
    states = json.loads(path.read_text())
    assert [s["label"] for s in states][-1] == "State 2"
    assert states[-1]["selectedProjection"] == "pca" and states[-1]["dataSetDimensions"] == [1797, 64]
    assert states[-1]["pcaComponentDimensions"] == [0, 1, 2]
    assert states[-1]["selectedPoints"] == [7]

    # Reload: the URL holds the view.
    projector.page.wait_for_function(
        "JSON.stringify(window.__projector.urlState()) === JSON.stringify(window.__projector.state())")
    projector.page.reload()
    projector.wait_ready()
    assert view(projector.state()) == saved

    # Change everything, then load the file: the view comes back.
    projector.by("clear-selection").click()
    projector.by("pca-3d").uncheck()
    projector.by("color-by").select_option("")
    projector.by("bookmark-load").set_input_files(str(path))
    projector.page.wait_for_function("window.__projector.state().focus === 7")
    projector.wait_ready()
    assert view(projector.state()) == saved
    assert projector.by("bookmarks-list").locator("li").count() == 3
    assert projector.by("neighbors-list").locator("li").count() == 100

    # The tray loads a bookmark by click.
    projector.by("bookmarks-list").locator("input[type=radio]").nth(0).check()
    projector.page.wait_for_function("window.__projector.state().pca.is3d === false")


def test_tensorboard_bookmark_files_load(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS)
    projector.by("bookmark-load").set_input_files(str(sample_logdir / "digits" / "bookmarks.json"))
    projector.page.wait_for_function("window.__projector.state().pca.is3d === false")
    radios = projector.by("bookmarks-list").locator("input[type=radio]")
    radios.nth(1).check()
    projector.page.wait_for_function("window.__projector.state().selection.length === 178")
    assert projector.state()["pca"]["is3d"] is True


def test_a_bookmark_for_another_data_set_is_refused(serve, sample_logdir, projector, tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"label": "iris view", "dataSetDimensions": [150, 4]}]))
    projector.open(serve(sample_logdir), DIGITS)
    projector.by("bookmark-load").set_input_files(str(other))
    projector.wait_text("status-message", "150 x 4", contains=True)


def test_bookmarks_can_be_renamed_and_deleted(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS)
    items = projector.by("bookmarks-list").locator("li")
    assert items.count() == 2
    name = items.nth(0).locator("input.bookmark-name")
    name.fill("My view")
    name.press("Enter")
    assert projector.page.evaluate("window.__projector.app.bookmarks[0].label") == "My view"
    items.nth(1).locator("button").click()
    assert items.count() == 1
