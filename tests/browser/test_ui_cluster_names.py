"""Cluster names a first-time user can read (issue 28, item 8): named by default from a
column of a few values, by central members when the chosen column has a value per point
(saying so), and a clustering that finds nothing says why."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

WORDS_2D = {"run": "words", "embedding": "words", "pca": {"is3d": False}, "labelBy": "word"}
IRIS_2D = {"run": "iris", "embedding": "iris", "pca": {"is3d": False}}

CLUSTERS = """async (column) => {
    const app = window.__projector.app;
    const url = app.api.url(`jobs/${app.shown.jobId}/clusters`, { label_column: column });
    return (await fetch(url)).json(); }"""


def test_words_are_named_by_category_then_by_central_members(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), WORDS_2D)
    projector.wait_js("app.shown && app.shown.status === 'done' && !!app.shown.jobId")
    # The label column is "word" (a value per point); clusters are named by "category".
    assert projector.by("cluster-label-column").input_value() == "category"
    projector.by("cluster-label-column").select_option("word")
    projector.by("cluster-run").click()
    projector.wait_text("cluster-status", "clusters", contains=True)
    status = projector.by("cluster-status").inner_text()
    assert "most central members" in status and "word" in status
    body = projector.page.evaluate(CLUSTERS, "word")
    assert body["label_kind"] == "unique"
    words = projector.page.evaluate("window.__projector.app.dataset.values('word')")
    top = [c for c in body["clusters"] if c["parent"] is None]
    assert top
    alphabetical = 0
    for cluster in top:
        members = sorted(words[i] for i, a in enumerate(body["assignment"]) if a == cluster["id"])
        named = cluster["label"].split(" ")
        assert set(named) <= set(members) and len(named) == 3
        alphabetical += named == members[:3]
    assert alphabetical < len(top) / 2
    # The central member anchors the name: it is one of the three.
    assert all(words[c["point"]] in c["label"].split(" ") for c in top)


def test_no_clusters_comes_with_a_hint(serve, sample_logdir, projector):
    projector.open(serve(sample_logdir), IRIS_2D)
    projector.wait_js("app.shown && app.shown.status === 'done' && !!app.shown.jobId")
    projector.by("cluster-min-size").fill("100")  # more than half of 150: HDBSCAN finds none
    projector.by("cluster-space").select_option("original")
    projector.by("cluster-run").click()
    projector.wait_text("cluster-status", "0 clusters", contains=True)
    hint = projector.by("cluster-hint")
    assert hint.is_visible()
    assert "No dense groups of at least 100 points" in hint.inner_text()
    assert "Min size" in hint.inner_text()


def test_a_majority_value_is_named_once(serve, sample_logdir, projector):
    """Polish: the ~30 "other (100%)" labels on words are drawn once, at the biggest."""
    projector.open(serve(sample_logdir), WORDS_2D)
    projector.wait_js("app.shown && app.shown.status === 'done' && !!app.shown.jobId")
    projector.by("cluster-label-column").select_option("category")
    projector.by("cluster-run").click()
    projector.wait_text("cluster-status", "clusters", contains=True)
    projector.page.wait_for_function("window.__structure.overlay.drawnLabels.length > 0")
    labels = [d["label"] for d in projector.page.evaluate("window.__structure.overlay.drawnLabels")]
    assert len(labels) == len(set(labels))
    assert any(label.startswith("other (") for label in labels)
    # None sits under the plot's toolbar.
    drawn = projector.page.evaluate("window.__structure.overlay.drawnLabels")
    toolbar = projector.page.locator(".plot-toolbar").bounding_box()
    plot = projector.by("plot").bounding_box()
    for label in drawn:
        x, y = plot["x"] + label["x"], plot["y"] + label["y"]
        inside_x = toolbar["x"] <= x <= toolbar["x"] + toolbar["width"]
        inside_y = toolbar["y"] - label["size"] <= y <= toolbar["y"] + toolbar["height"] + label["size"]
        assert not (inside_x and inside_y), label
