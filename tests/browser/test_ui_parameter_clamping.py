"""A link or bookmark with parameters out of range opens clamped into the parameter table
(GET /api/projections/methods, the data's limits applied), says so, and projects."""

from __future__ import annotations

import httpx
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # a t-SNE run: about 9 s here

# iris has 150 points: perplexity at most 149 / 3, n_neighbors and k at most 149.
WILD = {"run": "iris", "embedding": "iris", "projection": "tsne",
        "tsne": {"is3d": False, "perplexity": 500, "nIter": 300},
        "umap": {"nNeighbors": 1000}, "neighbors": {"k": 5000}}


def test_a_link_out_of_range_opens_clamped_with_a_note(serve, sample_logdir, projector):
    url = serve(sample_logdir)
    table = httpx.get(f"{url}/api/projections/methods",
                      params={"run": "iris", "embedding": "iris"}).json()["methods"]
    top = table["tsne"]["params"]["perplexity"]["maximum"]
    projector.open(url, WILD)
    assert projector.wait_projection("tsne", "done")["iteration"] == 300  # no 422: it ran
    state = projector.state()
    assert state["tsne"]["perplexity"] == pytest.approx(top) == pytest.approx(149 / 3)
    assert state["umap"]["nNeighbors"] == table["umap"]["params"]["n_neighbors"]["maximum"] == 149
    assert state["neighbors"]["k"] == 149
    note = projector.by("status-message").inner_text()
    assert "perplexity 500 is out of range" in note and "n_neighbors 1000" in note
    # The URL comes to hold the clamped value (written after the state, not in the same task).
    projector.page.wait_for_function(
        f"Math.abs(window.__projector.urlState()?.tsne.perplexity - {top}) < 1e-4")
    # The panels' ranges are the table's for this data.
    assert projector.by("tsne-perplexity").get_attribute("max") == "49"
    assert projector.by("umap-neighbors").get_attribute("max") == "149"
    assert projector.by("tsne-iterations").get_attribute("max") == "100000"

    # A bookmark asking 200,000 t-SNE iterations loads with the table's most, and says so.
    projector.page.evaluate("""() => {
        const app = window.__projector.app;
        const tb = { selectedProjection: 'tsne', label: 'wild', projector: {
            ...window.__projector.state(), tsne: { ...app.state.tsne, nIter: 200000 } } };
        app.saving.bookmarks = [tb];
        app.saving.loadBookmark(0);
    }""")
    assert projector.state()["tsne"]["nIter"] == table["tsne"]["params"]["n_iter"]["maximum"]
    note = projector.by("status-message").inner_text()
    assert note.startswith("Loaded bookmark “wild”") and "n_iter 200000 is out of range" in note
    assert not projector.errors
