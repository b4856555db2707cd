"""GET /api/jobs/ID/clusters and /quality against the real app under uvicorn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
from projector.server.app import SAMPLE_DATA, create_app
from sklearn.manifold import trustworthiness
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import NearestNeighbors

from tests.conftest import LiveServer

DIGITS = {"run": "digits", "embedding": "digits"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module, so the digits t-SNE is computed once."""
    server = LiveServer(create_app(SAMPLE_DATA, cache_dir=tmp_path_factory.mktemp("cache"),
                                   refresh_seconds=0))
    server.start()
    yield server.url
    server.stop()


def _tensor(base: str) -> np.ndarray:
    answer = httpx.get(f"{base}/api/tensor", params=DIGITS)
    n, d = map(int, answer.headers["X-Shape"].split(","))
    return np.frombuffer(answer.content, "<f4").reshape(n, d)


def _labels(base: str) -> np.ndarray:
    text = httpx.get(f"{base}/api/metadata", params=DIGITS).text
    return np.array([line.split("\t")[0] for line in text.strip().split("\n")[1:]])


def _finished(base: str, body: dict) -> tuple[str, np.ndarray]:
    answer = httpx.post(f"{base}/api/projections?wait=true", json=body, timeout=300)
    assert answer.status_code == 200, answer.text
    return answer.headers["X-Job"], np.array(answer.json()["coordinates"], np.float64)


@pytest.fixture(scope="module")
def tsne(base: str) -> tuple[str, np.ndarray]:
    return _finished(base, {**DIGITS, "method": "tsne", "params": {"seed": 1}})


@pytest.mark.slow
def test_tsne_clusters_agree_with_the_digits_and_are_named_by_their_majority(base, tsne):
    job, _ = tsne
    answer = httpx.get(f"{base}/api/jobs/{job}/clusters", params={"label_column": "label"},
                       timeout=120)
    assert answer.status_code == 200, answer.text
    found = answer.json()
    truth = _labels(base)
    assignment = np.array(found["assignment"])
    assert assignment.shape == truth.shape and assignment.min() >= -1
    assert adjusted_rand_score(truth, assignment) >= 0.8
    top = [c for c in found["clusters"] if c["parent"] is None]
    assert 8 <= len(top) <= 14
    for cluster in found["clusters"]:
        members = (np.flatnonzero(assignment == cluster["id"]) if cluster["parent"] is None
                   else None)
        if members is not None:
            assert cluster["size"] == members.size
            values, counts = np.unique(truth[members], return_counts=True)
            majority = values[counts.argmax()]
            share = counts.max() / members.size
            assert cluster["label"].startswith(f"{majority} ({share:.0%})")
        assert len(cluster["centroid"]) == 2
    children = [c for c in found["clusters"] if c["parent"] is not None]
    for child in children:  # sub-clusters nest in their parent
        parent = next(c for c in top if c["id"] == child["parent"])
        assert child["size"] < parent["size"]


@pytest.mark.slow
def test_clusters_in_the_original_space_and_without_labels(base, tsne):
    job, _ = tsne
    found = httpx.get(f"{base}/api/jobs/{job}/clusters",
                      params={"space": "original", "min_cluster_size": 15}, timeout=120).json()
    assert len(found["assignment"]) == 1797 and found["min_cluster_size"] == 15
    assert all(c["label"] == f"cluster {c['id']}" for c in found["clusters"])
    # HDBSCAN in 64 raw pixel dimensions leaves much as noise, yet what it groups is digits.
    assignment = np.array(found["assignment"])
    assert len({c["id"] for c in found["clusters"] if c["parent"] is None}) >= 3
    clustered = assignment >= 0
    assert adjusted_rand_score(_labels(base)[clustered], assignment[clustered]) > 0.5


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_quality_equals_sklearn(base, tsne, metric):
    job, coordinates = tsne
    data = _tensor(base).astype(np.float64)
    found = httpx.get(f"{base}/api/jobs/{job}/quality", params={"k": 10, "metric": metric},
                      timeout=120).json()
    assert found["k"] == 10 and found["excluded_rows"] == 0 and found["sample_size"] is None
    assert (found["neighbors"], found["recall"], found["per_point_error"]) == ("exact", None, None)
    original = NearestNeighbors(n_neighbors=11, algorithm="brute", metric=metric).fit(data)
    distances, near = original.kneighbors()
    near_y = NearestNeighbors(n_neighbors=10).fit(coordinates).kneighbors(return_distance=False)
    expected = np.array([len(set(a[:10]) & set(b)) / 10 for a, b in zip(near, near_y, strict=True)])
    # Digits are integer pixels: equal distances at the 10th place make sklearn's choice of
    # neighbour arbitrary; everywhere else the answer is exactly sklearn's.
    untied = ~np.isclose(distances[:, 9], distances[:, 10], rtol=0, atol=1e-9)
    per_point = np.array(found["per_point"])
    assert untied.mean() > 0.6
    assert np.array_equal(per_point[untied], expected[untied])
    assert found["mean"] == pytest.approx(per_point.mean(), abs=1e-12)
    assert per_point.min() >= 0 and per_point.max() <= 1
    if metric == "cosine":  # no exact ties: sklearn's ranks are well defined
        reference = trustworthiness(data, coordinates, n_neighbors=10, metric="cosine")
        assert found["trustworthiness"] == pytest.approx(reference, abs=1e-6)
    assert 0.9 < found["trustworthiness"] <= 1 and 0.9 < found["continuity"] <= 1


@pytest.mark.slow
def test_trustworthiness_and_continuity_equal_sklearn_without_ties(serve, tmp_path: Path):
    from sklearn.datasets import load_digits

    from projector_core.formats.writer import add_embedding

    rng = np.random.default_rng(3)
    data = (load_digits().data[:600] + rng.normal(0, 1e-3, (600, 64))).astype(np.float32)
    add_embedding(str(tmp_path / "logs"), data, tag="jittered")
    base = serve(tmp_path / "logs", refresh_seconds=0)
    run = httpx.get(f"{base}/api/runs").json()[0]
    body = {"run": run["name"], "embedding": run["embeddings"][0]["name"], "method": "pca"}
    job, coordinates = _finished(base, body)
    found = httpx.get(f"{base}/api/jobs/{job}/quality", params={"k": 7, "metric": "euclidean"},
                      timeout=60).json()
    x = data.astype(np.float64)
    y = coordinates[:, :2]
    assert found["trustworthiness"] == pytest.approx(trustworthiness(x, y, n_neighbors=7), abs=1e-6)
    assert found["continuity"] == pytest.approx(trustworthiness(y, x, n_neighbors=7), abs=1e-6)


def test_running_job_is_409_and_bad_parameters_422(base):
    started = httpx.post(f"{base}/api/projections", json={
        **DIGITS, "method": "tsne", "params": {"n_iter": 100000, "seed": 77}}).json()["job"]
    try:
        for route in ("clusters", "quality"):
            answer = httpx.get(f"{base}/api/jobs/{started}/{route}")
            assert answer.status_code == 409, answer.text
            assert started in answer.json()["detail"]
    finally:
        httpx.delete(f"{base}/api/jobs/{started}")
    job, _ = _finished(base, {**DIGITS, "method": "pca"})
    bad = [
        ("clusters", {"label_column": "nope"}, "unknown metadata column 'nope'"),
        ("clusters", {"min_cluster_size": 1}, "min_cluster_size"),
        ("clusters", {"min_cluster_size": 5000}, "more than the 1797 points"),
        ("clusters", {"space": "sideways"}, "space"),
        ("quality", {"metric": "manhattan"}, "metric"),
        ("quality", {"k": 0}, "'k'"),
        ("quality", {"k": 900}, "less than half the 1797"),
    ]
    for route, params, message in bad:
        answer = httpx.get(f"{base}/api/jobs/{job}/{route}", params=params)
        assert answer.status_code == 422, (route, params, answer.text)
        assert message in answer.json()["detail"]
    assert httpx.get(f"{base}/api/jobs/nope/clusters").status_code == 404


@pytest.mark.slow
def test_quality_above_the_exact_budget_values_every_point_and_states_its_error(
        serve, tmp_path: Path):
    """33,000 x 128 is past the exact all-points budget (33,000^2 x 128 > 2^37): every point
    still gets a value, from approximate neighbours whose recall and error the answer states
    and which hold against scikit-learn's exact neighbours of 300 rows."""
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(40, 16)) * 4
    low = centres[rng.integers(0, 40, 33_000)] + rng.normal(size=(33_000, 16))
    data = (low @ rng.normal(size=(16, 128)) + 0.05 * rng.normal(size=(33_000, 128))
            ).astype(np.float32)
    logdir = tmp_path / "logs"
    logdir.mkdir()
    np.save(logdir / "big.npy", data)
    base = serve(logdir, refresh_seconds=0)
    job, coordinates = _finished(base, {"run": ".", "embedding": "big", "method": "pca"})
    found = httpx.get(f"{base}/api/jobs/{job}/quality", params={"k": 5, "metric": "euclidean"},
                      timeout=600).json()
    assert (found["neighbors"], found["sample_size"], found["excluded_rows"]) == (
        "approximate", 1000, 0)
    per_point = np.array(found["per_point"], dtype=float)
    assert per_point.shape == (33_000,) and np.isfinite(per_point).all()
    assert found["recall"] >= 0.9 and 0 <= found["per_point_error"] <= 0.05
    rows = rng.choice(33_000, 300, replace=False)
    near_x = NearestNeighbors(n_neighbors=5).fit(data.astype(np.float64)).kneighbors(
        data[rows].astype(np.float64), 6, return_distance=False)[:, 1:]
    near_y = NearestNeighbors(n_neighbors=5).fit(coordinates[:, :2]).kneighbors(
        return_distance=False)[rows]
    expected = np.array([len(set(a) & set(b)) / 5 for a, b in zip(near_x, near_y, strict=True)])
    assert np.abs(per_point[rows] - expected).mean() <= found["per_point_error"] + 0.02
