"""Files over the server's upload limit are computed in the browser: the same answers as the
server's kernels (the rules themselves are pinned by tests/cases, read by node and pytest)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.pca import pca
from projector_core.kernels.search import search

pytestmark = pytest.mark.browser

NAMES = [f"p{i}" for i in range(40)]
NAMES[5], NAMES[7] = "straße", "a b"


def test_an_upload_over_the_limit_gets_the_servers_pca_search_and_neighbours(serve, sample_logdir, projector,
                                                                              tmp_path):
    vectors = np.random.default_rng(3).normal(0, 1, (40, 6)).round(4).astype(np.float32)
    tensor = tmp_path / "big.tsv"
    tensor.write_text("".join("\t".join(repr(float(v)) for v in row) + "\n" for row in vectors))
    metadata = tmp_path / "meta.tsv"
    metadata.write_text("name\tgroup\n" + "".join(f"{name}\t{i % 3}\n" for i, name in enumerate(NAMES)))
    projector.open(serve(sample_logdir, max_upload_bytes=64))
    projector.page.locator("details.subsection summary").click()
    projector.by("upload-tensor").set_input_files(str(tensor))
    projector.by("upload-metadata").set_input_files(str(metadata))
    projector.by("upload-apply").click()
    projector.wait_js("app.dataset && app.dataset.local")
    projector.wait_projection("pca")

    coords = np.array(projector.page.evaluate("Array.from(window.__projector.app.shown.data)"))
    expected = pca(vectors, 10).coordinates  # min(10, D) components, signs as scikit-learn
    np.testing.assert_allclose(coords.reshape(expected.shape)[:, :3], expected[:, :3], atol=1e-3)

    projector.by("search-column").select_option("name")
    for query in ["STRASSE", "a b", "P1", " "]:  # case folding, an inner space, a blank query
        projector.by("search-input").fill(query)
        expected = json.dumps(search(NAMES, query), separators=(",", ":"))
        projector.wait_js(f"app.state.search.query === {json.dumps(query)}"
                          f" && JSON.stringify(app.highlight.searchResult.indices) === '{expected}'")
    assert search(NAMES, " ") == []

    projector.page.evaluate("window.__projector.app.update({ selection: [4], focus: 4 })")
    projector.wait_js("app.highlight.neighbors.length === 39")
    found = projector.page.evaluate("window.__projector.app.highlight.neighbors")
    indices, distances = ExactIndex(vectors).neighbors_of([4], 39, "cosine")
    assert [n["index"] for n in found] == indices[0].tolist()
    np.testing.assert_allclose([n["distance"] for n in found], distances[0], atol=1e-6)
    assert projector.errors == []
