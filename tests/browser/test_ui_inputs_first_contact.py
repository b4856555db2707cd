"""What a first-time user meets on inputs without the usual extras (the audit from a user's seat)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.browser


def test_search_without_metadata_says_there_is_nothing_to_search(serve, tmp_path, projector):
    """A plain .npy has no metadata: the search field says so and takes no typing, instead of
    an empty column box and a field where every query silently finds nothing."""
    np.save(tmp_path / "vectors.npy", np.random.default_rng(0).normal(size=(40, 5)).astype("f4"))
    projector.open(serve(tmp_path / "vectors.npy"))
    projector.wait_settled()
    search = projector.by("search-input")
    assert search.is_disabled() and projector.by("search-column").is_disabled()
    assert search.get_attribute("placeholder") == "No metadata to search"
    assert projector.drawn_pixels() > 50
    # A clicked point's card names it once ("#5", not "#5 #5") and says it has no metadata.
    projector.page.evaluate("window.__projector.app.highlight.selectPoint(5)")
    card = projector.by("point-card")
    card.wait_for()
    assert card.inner_text().split() == ["#5", "No", "metadata"]


def test_a_link_to_data_this_server_lacks_is_said_and_not_applied(serve, tmp_path, projector):
    """A colleague's link names a run this server does not have: the page opens its own data
    with its own defaults (not the link's selection of rows of other data) and says why."""
    from projector_core.formats.writer import add_embedding

    vectors = np.random.default_rng(1).normal(size=(30, 4)).astype("f4")
    add_embedding(tmp_path / "logs", vectors, metadata=[[f"w{i}", str(i % 3)] for i in range(30)],
                  metadata_header=["word", "group"], tag="mine")
    projector.open(serve(tmp_path / "logs"), {"run": "digits", "embedding": "digits",
                                              "projection": "tsne", "selection": [1, 2, 3]})
    projector.wait_settled()
    state = projector.state()
    assert (state["run"], state["embedding"]) == (".", "mine:00000")
    assert state["selection"] == [] and state["projection"] == "pca"
    assert state["labelBy"] == "word"
    projector.wait_text("status-bar", "The link's digits / digits: not on this server. Showing "
                        ". (logs) / mine:00000", contains=True)
    # "." (the LOGDIR itself) stays the run's name in the state and URL; the page shows the
    # folder's name beside it.
    assert projector.by("run-select").locator("option").all_inner_texts() == [". (logs)"]
    assert projector.by("run-select").input_value() == "."
    assert projector.by("dataset-title").inner_text().startswith(". (logs) / mine:00000")
    projector.page.wait_for_function("window.__projector.urlState()?.run === '.'")


def test_quality_of_a_small_set_is_measured_with_a_k_it_allows(serve, tmp_path, projector):
    """Twelve points: colour by quality measures with k = 5 (the measure needs k below half
    the points), instead of answering the default k = 10 with the server's refusal."""
    from projector_core.formats.writer import add_embedding

    add_embedding(tmp_path / "logs", np.random.default_rng(2).normal(size=(12, 5)).astype("f4"),
                  metadata=[f"p{i}" for i in range(12)], tag="small")
    refused: list[str] = []
    projector.page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
    projector.open(serve(tmp_path / "logs"))
    projector.wait_projection("pca")
    projector.by("quality-toggle").check()
    projector.wait_text("quality-status", "Trustworthiness", contains=True)
    assert "(k = 5, cosine)" in projector.by("quality-status").inner_text()
    assert refused == []


@pytest.mark.parametrize("hash_", ["#s=garbage!!!", "#s=eyJydW4iOiAiZGln"])  # mistyped, cut short
def test_a_link_that_cannot_be_read_is_said(serve, sample_logdir, projector, hash_):
    """A view link that cannot be read opens the default view and says so, as a link to an
    unknown run does, instead of "Loaded bookmark ..." (the sample's own bookmark, loaded as
    for a plain visit) as if the link had worked."""
    projector.page.goto(serve(sample_logdir) + "/" + hash_)
    projector.wait_ready()
    projector.wait_text("status-message", "The link's view cannot be read (it may be cut short). "
                        "Showing digits / digits")
    projector.page.wait_for_function("location.hash !== arg", arg=hash_)  # the view shown replaces it
