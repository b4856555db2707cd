"""Labelling in the page (issue 35), driven in real Chromium against a real server: a lasso
labelled in one step, seen in Color by and the Charts, undone and redone from the keyboard,
found again after a reload, and arriving in a second page without one (its event awaited,
never a time); a note on a point; bookmarks kept by the server; a tiled view labelled by
its region, as the server counts it."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from tests.browser.conftest import state_hash

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}, "colorBy": "species"}
DIGITS_2D = {"run": "digits", "embedding": "digits", "sprites": False, "pca": {"is3d": False}}


def lasso_left_half(projector) -> None:
    """A lasso around the left half of the plot."""
    box = projector.by("plot").bounding_box()
    projector.by("tool-lasso").click()
    left, top, width, height = box["x"], box["y"], box["width"], box["height"]
    path = [(left + 2, top + 2)] + [(left + fx * width, top + fy * height) for fx, fy in
                                    [(0.5, 0.02), (0.5, 0.98), (0.02, 0.98), (0.02, 0.03)]]
    page = projector.page
    page.mouse.move(*path[0])
    page.mouse.down()
    for x, y in path[1:]:
        page.mouse.move(x, y, steps=4)
    page.mouse.up()


def wait_edit(page, edit: int) -> None:
    """Until the page shows the store's edit ``edit`` (its own, or one that arrived)."""
    page.wait_for_function(
        "(edit) => document.querySelector('[data-testid=edit-status]').dataset.edit === String(edit)",
        arg=edit)


def column_of(url: str, column: str, names: dict) -> list[str]:
    answer = httpx.get(f"{url}/api/metadata/column", params={**names, "column": column})
    head = int(answer.headers["x-dictionary-bytes"])
    dictionary = json.loads(answer.content[:head])
    return [dictionary[c] for c in np.frombuffer(answer.content, "<i4", offset=head).tolist()]


def test_a_lasso_labelled_in_one_step_shows_everywhere_undoes_and_outlives_a_reload(
        serve, sample_logdir, projector, browser):
    url = serve(sample_logdir, refresh_seconds=0)
    names = {"run": "iris", "embedding": "iris"}
    projector.open(url, IRIS_2D)
    other = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    other.goto(url + "/?user=bob" + state_hash(IRIS_2D))
    other.wait_for_function("window.__projector && window.__projector.ready", timeout=60000)
    projector.wait_settled()
    assert projector.by("label-where").inner_text() == "saved on the server"
    lasso_left_half(projector)
    projector.page.wait_for_function("window.__projector.state().selection.length > 10")
    selected = sorted(projector.state()["selection"])
    projector.by("edit-column").fill("label_fixed")
    projector.by("edit-value").fill("left <b>")
    projector.by("tag-selection").click()
    projector.wait_text("edit-status", "Saved:", contains=True)
    edit = int(projector.by("edit-status").get_attribute("data-edit"))
    assert f"{len(selected)} points, “left <b>” in label_fixed" in projector.by("edit-status").inner_text()
    stored = column_of(url, "label_fixed", names)
    assert [i for i, v in enumerate(stored) if v] == selected  # saved before it said so
    # Color by: the column is there; the legend shows the value as text.
    projector.by("color-by").select_option("label_fixed")
    legend = projector.by("legend")
    projector.page.wait_for_function(
        "() => document.querySelector('[data-testid=legend]').textContent.includes('left <b>')")
    assert legend.locator("b").count() == 0
    # Charts: a chart of the column, its values.
    chart = projector.page.locator('[data-testid="chart"][data-column="label_fixed"]')
    chart.wait_for()
    assert "left <b>" in json.loads(chart.get_attribute("data-labels"))
    # A second page (another user) shows it without a reload: the event arrived and applied.
    wait_edit(other, edit)
    assert "label_fixed" in other.locator('[data-testid="color-by"] option').all_inner_texts()
    assert "labelled" in other.locator('[data-testid="edit-status"]').inner_text()
    # Ctrl+Z undoes it (the plot has the focus, not a field); Ctrl+Shift+Z redoes it.
    projector.by("plot").click(position={"x": 5, "y": 5})
    projector.page.keyboard.press("Control+z")
    projector.wait_text("edit-status", "Undone:", contains=True)
    assert not any(column_of(url, "label_fixed", names))
    undone = int(projector.by("edit-status").get_attribute("data-edit"))
    wait_edit(other, undone)
    projector.page.keyboard.press("Control+Shift+Z")
    projector.wait_text("edit-status", "Redone:", contains=True)
    assert [i for i, v in enumerate(column_of(url, "label_fixed", names)) if v] == selected
    # A reload finds it: a column of the metadata like the others.
    projector.page.reload()
    projector.wait_ready()
    assert "label_fixed" in projector.by("color-by").locator("option").all_inner_texts()
    values = projector.page.evaluate("window.__projector.app.dataset.values('label_fixed')")
    assert [i for i, v in enumerate(values) if v] == selected
    other.context.close()


def test_a_note_on_a_point_is_kept(serve, sample_logdir, projector):
    url = serve(sample_logdir, refresh_seconds=0)
    projector.open(url, IRIS_2D)
    projector.wait_settled()
    x, y = projector.screen_position(7)
    projector.page.mouse.click(x, y)
    projector.page.wait_for_function("window.__projector.state().focus !== null")
    focus = projector.state()["focus"]
    assert projector.by("note-label").inner_text() == f"Note on #{focus}"
    projector.by("point-note").fill("petals look\nodd")
    projector.by("save-note").click()
    projector.wait_text("edit-status", "Saved:", contains=True)
    assert column_of(url, "note", {"run": "iris", "embedding": "iris"})[focus] == "petals look\nodd"
    assert "petals look" in projector.by("point-card").inner_text()


def test_bookmarks_made_in_the_page_are_kept_by_the_server(serve, sample_logdir, projector):
    url = serve(sample_logdir, refresh_seconds=0)
    projector.open(url, IRIS_2D)
    projector.by("bookmark-add").click()
    projector.by("bookmark-add").click()
    projector.page.wait_for_function(
        "() => window.__projector.app.saving.bookmarks.every((b) => b.saved)")
    names = projector.by("bookmark-name").all_inner_texts()
    assert names == ["State 0", "State 1"]
    projector.by("bookmark-rename").first.click()
    projector.page.keyboard.type("the first")
    projector.page.keyboard.press("Enter")
    projector.page.locator('[aria-label="Delete State 1"]').click()
    projector.page.wait_for_function("""async () => {
        const r = await fetch('api/bookmarks?run=iris&embedding=iris');
        const list = await r.json();
        return list.length === 1 && list[0].label === 'the first'; }""")
    projector.page.reload()
    projector.wait_ready()
    projector.page.wait_for_function("window.__projector.app.saving.bookmarks.length === 1")
    assert projector.by("bookmark-name").all_inner_texts() == ["the first"]


def test_a_tiled_lasso_is_labelled_by_its_region_as_the_server_counts_it(
        serve, sample_logdir, projector):
    url = serve(sample_logdir, refresh_seconds=0)
    projector.page.goto(url + "/?tiles=always" + state_hash(DIGITS_2D))  # shown from tiles
    projector.wait_ready()
    lasso_left_half(projector)
    projector.page.wait_for_function(
        "() => window.__projector.app.highlight.scope()?.kind === 'region'")
    count = projector.page.evaluate("window.__projector.app.highlight.scope().count")
    projector.by("color-by").select_option("label")
    projector.by("edit-column").fill("left")
    projector.by("edit-value").fill("yes")
    projector.by("tag-selection").click()
    projector.wait_text("edit-status", "Saved:", contains=True)
    assert f"Saved: {count:,} points" in projector.by("edit-status").inner_text()
    stored = column_of(url, "left", {"run": "digits", "embedding": "digits"})
    assert sum(v == "yes" for v in stored) == count
    projector.by("color-by").select_option("left")
    projector.page.wait_for_function(
        "() => document.querySelector('[data-testid=legend]').textContent.includes('yes')")
