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
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(7)")
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
    projector.by("bookmark-error").wait_for()
    assert "other.json" in projector.by("bookmark-error").inner_text()
    assert "150 x 4" in projector.by("bookmark-error").inner_text()
    # Refused before anything is replaced: the tray keeps the run's own two bookmarks.
    assert projector.page.evaluate("window.__projector.app.saving.bookmarks.map((b) => b.label)") == [
        "PCA 2-D, coloured by label", "PCA 3-D, the zeros selected"]


def test_bookmarks_can_be_renamed_and_deleted(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), DIGITS)
    items = projector.by("bookmarks-list").locator("li")
    assert items.count() == 2
    items.nth(0).get_by_role("button", name="Rename").click()
    name = items.nth(0).locator("input.bookmark-name-input")
    name.fill("My view")
    name.press("Enter")
    assert projector.page.evaluate("window.__projector.app.saving.bookmarks[0].label") == "My view"
    assert items.nth(0).get_by_test_id("bookmark-name").inner_text() == "My view"
    items.nth(1).get_by_role("button", name="Delete").click()
    assert items.count() == 1


def test_a_file_that_is_not_a_bookmark_list_is_refused_and_changes_nothing(serve, sample_logdir, projector,
                                                                            tmp_path):
    stray = tmp_path / "settings.json"
    stray.write_text(json.dumps({"not": "a list"}))
    projector.open(serve(sample_logdir), {**DIGITS, "colorBy": "parity", "labelBy": "label"})
    before = projector.state()
    projector.by("bookmark-load").set_input_files(str(stray))
    projector.by("bookmark-error").wait_for()
    assert "settings.json is not a list of bookmarks" in projector.by("bookmark-error").inner_text()
    assert projector.page.evaluate("window.__projector.app.saving.bookmarks.length") == 2
    assert projector.by("bookmarks-list").locator("li").count() == 2
    assert projector.state() == before  # nothing applied: colour, label, projection as they were
    assert projector.by("legend").is_visible()


def test_tensorboard_3d_camera_shows_the_whole_selection(serve, sample_logdir, projector):
    """The sample's "PCA 3-D, the zeros selected" (TensorBoard's start camera) frames the cloud."""
    projector.open(serve(sample_logdir), DIGITS)
    projector.by("bookmarks-list").locator("input[type=radio]").nth(1).check()
    projector.page.wait_for_function("window.__projector.state().selection.length === 178")
    projector.wait_settled()
    box = projector.by("plot").bounding_box()
    zeros = projector.state()["selection"]
    inside = 0
    for i in zeros:
        x, y = projector.screen_position(i)
        inside += box["x"] <= x <= box["x"] + box["width"] and box["y"] <= y <= box["y"] + box["height"]
    assert inside == len(zeros)
    # Not zoomed far in: the eye sits about as far as our own 3-D start camera's.
    distance = projector.state()["camera"]["distance"]
    assert 0.8 * 3.4 < distance < 1.25 * 3.4  # camera.js defaultCamera().distance


def test_a_bookmark_loads_from_its_name_and_the_tray_is_above_the_fold(serve, sample_logdir, projector):
    projector.page.set_viewport_size({"width": 1400, "height": 900})
    projector.open(serve(sample_logdir), DIGITS)
    panel = projector.by("bookmarks-panel").bounding_box()
    assert panel["y"] + panel["height"] <= 900  # the whole tray is in view without scrolling
    names = projector.by("bookmarks-list").get_by_test_id("bookmark-name")
    names.nth(1).click()
    projector.page.wait_for_function("window.__projector.state().pca.is3d === true")
    assert projector.page.evaluate("window.__projector.app.saving.activeBookmark") == 1
    assert projector.by("bookmarks-list").locator("input.bookmark-name-input").count() == 0  # not renaming
    names.nth(0).click()
    projector.page.wait_for_function("window.__projector.state().pca.is3d === false")


def test_leaving_with_bookmarks_made_here_asks_first(serve, sample_logdir, projector, tmp_path):
    """Bookmarks made in the page live in the page only: the panel says so, and closing or
    reloading the tab asks first, until they are saved to a file."""
    projector.open(serve(sample_logdir), DIGITS)
    page = projector.page
    asked: list[str] = []

    def answer(dialog) -> None:
        asked.append(dialog.type)
        dialog.dismiss()  # stay on the page

    page.on("dialog", answer)
    assert projector.by("bookmarks-unsaved").is_hidden()
    projector.by("bookmark-add").click()
    assert projector.by("bookmarks-unsaved").is_visible()
    page.evaluate("location.reload()")  # dismissed: the page stays, the bookmark with it
    assert asked == ["beforeunload"]
    assert projector.by("bookmarks-list").locator("li").count() == 3

    with page.expect_download() as download:
        projector.by("bookmark-save").click()
    download.value.save_as(tmp_path / "bookmarks.json")
    assert projector.by("bookmarks-unsaved").is_hidden()
    page.reload()  # saved: nothing to ask
    projector.wait_ready()
    assert asked == ["beforeunload"]
