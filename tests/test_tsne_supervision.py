"""Supervised t-SNE: labels reweight the affinities; same-label points end up closer."""

from __future__ import annotations

import httpx
import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.neighbors import NearestNeighbors

from projector_core.kernels.supervision import MISSING, label_codes, supervise_affinities
from projector_core.kernels.tsne import tsne

IRIS = {"run": "iris", "embedding": "iris", "method": "tsne"}


def _label_agreement(coordinates: np.ndarray, labels: np.ndarray, k: int = 5) -> float:
    """Share of each point's k nearest neighbours in the layout that carry its label."""
    nearest = NearestNeighbors(n_neighbors=k + 1).fit(coordinates).kneighbors(
        coordinates, return_distance=False)[:, 1:]
    return float((labels[nearest] == labels[:, None]).mean())


def test_label_codes_equal_labels_share_a_code_and_empty_cells_are_missing():
    codes = label_codes(pa.chunked_array([["a", "b", ""], [" a", "b"]]))
    assert codes[0] == codes[3] and codes[1] == codes[4] and codes[0] != codes[1]
    assert codes[2] == MISSING


def test_affinities_reweighted_by_label_stay_symmetric_and_sum_to_one():
    P = sp.csr_matrix(np.array([[0, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]]) / 12.0)
    labels = np.array([0, 0, 1, MISSING])
    out = supervise_affinities(P, labels, 0.5).toarray()
    assert out.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(out, out.T)
    # same label x1.5, different x0.5, unlabelled x1, before renormalising
    assert out[0, 1] / out[0, 3] == pytest.approx(1.5)
    assert out[0, 2] / out[0, 3] == pytest.approx(0.5)
    np.testing.assert_allclose(supervise_affinities(P, labels, 0.0).toarray(), P.toarray())
    assert supervise_affinities(P, labels, 1.0)[0, 2] == 0


def test_full_weight_groups_same_label_points_in_the_layout():
    data, species = load_iris(return_X_y=True)
    data = data.astype(np.float32)
    plain = tsne(data, 2, n_iter=300, seed=0, n_jobs=1, supervision=(species, 0.0))
    supervised = tsne(data, 2, n_iter=300, seed=0, n_jobs=1, supervision=(species, 1.0))
    before = _label_agreement(plain.coordinates, species)
    after = _label_agreement(supervised.coordinates, species)
    assert before < 0.99 and after > before + 0.02, (before, after)


def test_supervised_job_through_the_api_reports_it(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        params = {"n_iter": 300, "supervise_column": "species", "supervise_weight": 1.0}
        answer = http.post("/api/projections?wait=true", json={**IRIS, "params": params})
        assert answer.status_code == 200, answer.text
        result = answer.json()
        assert result["info"]["supervised"] is True and result["info"]["mode"] == "full"
        species = np.array([line.split("\t")[0] for line in
                            (sample_logdir / "iris" / "metadata.tsv").read_text().splitlines()[1:]])
        assert _label_agreement(np.array(result["coordinates"]), species) > 0.98


@pytest.mark.parametrize("params, message", [
    ({"supervise_column": "nope", "supervise_weight": 0.5}, "unknown metadata column 'nope'"),
    ({"supervise_column": "species", "supervise_weight": 1.5}, "supervise_weight"),
])
def test_bad_supervision_is_422(serve, sample_logdir, params, message):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        answer = http.post("/api/projections", json={**IRIS, "params": params})
    assert answer.status_code == 422
    assert message in str(answer.json()["detail"])


def test_a_sampled_fit_says_it_was_not_supervised(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        params = {"n_iter": 100, "mode": "sample", "sample_size": 300,
                  "supervise_column": "label", "supervise_weight": 1.0}
        answer = http.post("/api/projections?wait=true",
                           json={"run": "digits", "embedding": "digits", "method": "tsne",
                                 "params": params})
    assert answer.status_code == 200, answer.text
    info = answer.json()["info"]
    assert info["mode"] == "sample" and info["supervised"] is False
