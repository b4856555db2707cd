"""TensorBoard's inspector "edit label" where nothing keeps labels (a read-only server: tags
of this page only, downloaded as metadata.tsv; a server with a store labels for good:
test_ui_labelling.py) and the t-SNE panel's supervision controls, driven in real Chromium."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.browser

IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False},
           "colorBy": "species", "labelBy": "species"}
TAG = 'yes <b>&amp;'  # markup in a value is text, never HTML


def test_tagging_the_selection_adds_a_column_shown_at_once_and_downloaded(
        serve, sample_logdir, projector):
    on_disk = (sample_logdir / "iris" / "metadata.tsv").read_bytes()
    url = serve(sample_logdir, annotations="off")
    projector.open(url, IRIS_2D)
    assert projector.by("tag-selection").is_disabled()  # nothing selected yet
    # One clicked point: its card shows the new value at once.
    projector.wait_settled()
    x, y = projector.screen_position(7)
    projector.page.mouse.click(x, y)
    projector.page.wait_for_function("window.__projector.state().focus !== null")
    projector.by("edit-column").fill("note")
    projector.by("edit-value").fill("checked")
    projector.by("tag-selection").click()
    assert "note" in projector.by("point-card").inner_text()
    assert "checked" in projector.by("point-card").inner_text()
    projector.by("search-column").select_option("species")
    projector.by("search-input").fill("virginica")
    projector.page.wait_for_function("window.__projector.state().selection.length === 50")
    selected = sorted(projector.state()["selection"])

    projector.by("edit-column").fill("reviewed")
    projector.by("edit-value").fill(TAG)
    projector.by("tag-selection").click()
    assert projector.by("edit-status").inner_text().startswith(
        f'Tagged 50 points: reviewed = "{TAG}" (this page only: ')
    options = projector.by("color-by").locator("option").all_inner_texts()
    assert options[-1] == "reviewed"
    projector.by("color-by").select_option("reviewed")
    legend = projector.by("legend")
    assert TAG in legend.inner_text() and legend.locator("b").count() == 0
    # A tab would break the TSV: refused, nothing written.
    projector.by("edit-value").fill("a\tb")
    projector.by("tag-selection").click()
    assert "Tabs" in projector.by("edit-status").inner_text()

    # Search reads the tagged column in the browser (the server does not have it).
    projector.by("search-column").select_option("reviewed")
    projector.by("search-input").fill("yes")
    projector.wait_text("match-count", "50 matches")
    assert sorted(projector.state()["selection"]) == selected

    with projector.page.expect_download() as download:
        projector.by("download-metadata").click()  # one download, with the edits
    lines = Path(download.value.path()).read_text().splitlines()
    header = lines[0].split("\t")
    assert header[0] == "species" and header[-2:] == ["note", "reviewed"] and len(lines) == 151
    tagged = [i for i, line in enumerate(lines[1:]) if line.split("\t")[-1] == TAG]
    assert tagged == selected
    assert all(lines[1 + i].split("\t")[-1] == "" for i in range(150) if i not in selected)
    # The user's files and the server's metadata are untouched.
    assert (sample_logdir / "iris" / "metadata.tsv").read_bytes() == on_disk
    served = httpx.get(f"{url}/api/metadata", params={"run": "iris", "embedding": "iris"}).text
    assert "reviewed" not in served
    # A tagged column exists only in this page: t-SNE cannot be supervised with it.
    projector.by("tab-tsne").click()
    supervise = projector.by("tsne-supervise-column").locator("option").all_inner_texts()
    assert "species" in supervise and "reviewed" not in supervise


def test_supervision_controls_go_into_the_tsne_request(serve, sample_logdir, projector):
    url = serve(sample_logdir)
    projector.open(url, {**IRIS_2D, "projection": "tsne", "tsne": {"nIter": 200}})
    projector.by("tsne-supervise-column").select_option("species")
    projector.by("tsne-supervise-weight").fill("1")
    assert projector.by("tsne-supervise-weight-value").inner_text() == "1"
    tsne = projector.state()["tsne"]
    assert tsne["superviseColumn"] == "species" and tsne["superviseWeight"] == 1
    projector.by("tsne-run").click()
    projector.wait_js("app.projecting.projections.tsne"
                      " && app.projecting.projections.tsne.params.supervise_column === 'species'"
                      " && app.projecting.projections.tsne.status === 'done'")
    job = projector.page.evaluate("window.__projector.app.projecting.projections.tsne.jobId")
    params = projector.page.evaluate("window.__projector.app.projecting.projections.tsne.params")
    assert params["supervise_column"] == "species" and params["supervise_weight"] == 1
    result = httpx.get(f"{url}/api/jobs/{job}/result", timeout=30).json()
    assert result["info"]["supervised"] is True and len(result["coordinates"]) == 150
