"""GET/POST /api/neighbors and GET /api/search against the real app under uvicorn."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from sklearn.neighbors import NearestNeighbors

DIGITS = {"run": "digits", "embedding": "digits"}


@pytest.fixture
def base(serve, sample_logdir) -> str:
    return serve(sample_logdir, refresh_seconds=0)


def tensor(base: str, run: str, embedding: str) -> np.ndarray:
    answer = httpx.get(f"{base}/api/tensor", params={"run": run, "embedding": embedding})
    n, d = map(int, answer.headers["X-Shape"].split(","))
    return np.frombuffer(answer.content, "<f4").reshape(n, d)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_neighbors_of_a_point_equal_sklearn(base, metric):
    data = tensor(base, **DIGITS)
    reference = NearestNeighbors(n_neighbors=20, algorithm="brute", metric=metric)
    ref_d, ref_i = reference.fit(data.astype(np.float64)).kneighbors()
    for index in (0, 901, 1796):
        answer = httpx.get(
            f"{base}/api/neighbors", params={**DIGITS, "index": index, "k": 20, "metric": metric}
        )
        assert answer.status_code == 200, answer.text
        found = answer.json()["neighbors"]
        distances = [n["distance"] for n in found]
        np.testing.assert_allclose(distances, ref_d[index], rtol=1e-5, atol=1e-5)
        unique = np.abs(np.diff(ref_d[index])) > 1e-9
        distinct = np.r_[True, unique] & np.r_[unique, False]  # not tied on either side
        assert np.array([n["index"] for n in found])[distinct].tolist() == ref_i[index][distinct].tolist()


def test_defaults_are_100_cosine_neighbours_ascending_without_the_point(base):
    found = httpx.get(f"{base}/api/neighbors", params={**DIGITS, "index": 42}).json()["neighbors"]
    assert len(found) == 100
    assert 42 not in [n["index"] for n in found]
    distances = [n["distance"] for n in found]
    assert distances == sorted(distances) and distances[0] >= 0 and distances[-1] <= 2


def test_k_up_to_the_other_points_is_answered_and_beyond_is_422(base):
    iris = {"run": "iris", "embedding": "iris"}
    found = httpx.get(f"{base}/api/neighbors", params={**iris, "index": 0, "k": 149}).json()
    assert len(found["neighbors"]) == 149
    for k in (150, 1000):
        answer = httpx.get(f"{base}/api/neighbors", params={**iris, "index": 0, "k": k})
        assert answer.status_code == 422
        assert answer.json()["detail"] == f"k {k} is more than the 149 other points of the embedding"
    vector = [1.0, 1.0, 1.0, 1.0]
    everyone = httpx.post(f"{base}/api/neighbors", json={**iris, "vector": vector, "k": 150})
    assert len(everyone.json()["neighbors"]) == 150
    too_many = httpx.post(f"{base}/api/neighbors", json={**iris, "vector": vector, "k": 151})
    assert too_many.status_code == 422


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        ({**DIGITS, "index": 1797}, 422, "index 1797 out of range: digits/digits has 1797 points"),
        ({**DIGITS, "index": -1}, 422, "index"),
        ({**DIGITS, "index": 0, "k": 0}, 422, "'k'"),
        ({**DIGITS, "index": 0, "metric": "manhattan"}, 422, "'metric'"),
        ({**DIGITS, "index": "x"}, 422, "'index'"),
        ({"run": "nope", "embedding": "digits", "index": 0}, 404, "unknown run 'nope'"),
        ({"run": "digits", "embedding": "nope", "index": 0}, 404, "unknown embedding 'nope'"),
    ],
)
def test_bad_neighbor_requests(base, params, status, detail):
    answer = httpx.get(f"{base}/api/neighbors", params=params)
    assert answer.status_code == status
    assert detail in answer.json()["detail"]


def test_neighbors_of_a_vector(base):
    data = tensor(base, **DIGITS)
    body = {**DIGITS, "vector": data[5].tolist(), "k": 3, "metric": "euclidean"}
    answer = httpx.post(f"{base}/api/neighbors", json=body)
    assert answer.status_code == 200, answer.text
    found = answer.json()["neighbors"]
    assert found[0] == {"index": 5, "distance": 0.0}  # the vector is row 5 itself
    assert len(found) == 3
    default = httpx.post(f"{base}/api/neighbors", json={**DIGITS, "vector": data[5].tolist()})
    assert len(default.json()["neighbors"]) == 100


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_more_like_these_is_the_neighbours_of_the_rows_centroid_without_them(base, metric):
    """Search by example: POST /api/neighbors with rows is the vector query of their mean,
    the rows themselves left out (a repeated row counts once)."""
    data = tensor(base, **DIGITS).astype(np.float64)
    rows = [3, 13, 23, 33, 3]
    centroid = data[sorted(set(rows))].mean(axis=0)
    reference = NearestNeighbors(n_neighbors=14, algorithm="brute", metric=metric).fit(data)
    _, indices = reference.kneighbors(centroid[None, :])
    expected = [int(i) for i in indices[0] if i not in rows][:10]
    answer = httpx.post(f"{base}/api/neighbors",
                        json={**DIGITS, "rows": rows, "k": 10, "metric": metric})
    assert answer.status_code == 200, answer.text
    assert [n["index"] for n in answer.json()["neighbors"]] == expected


def test_the_examples_a_query_may_average_are_a_data_limit(base):
    listed = next(e for r in httpx.get(f"{base}/api/runs").json() if r["name"] == "iris"
                  for e in r["embeddings"])
    assert listed["limits"]["neighbors"]["rows"] == {"minimum": 1, "maximum": 149}
    every = {"run": "iris", "embedding": "iris", "rows": list(range(150)), "k": 1}
    refused = httpx.post(f"{base}/api/neighbors", json=every)
    assert refused.status_code == 422
    assert "150 example rows" in refused.json()["detail"] and "1 to 149" in refused.json()["detail"]


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        ({**DIGITS, "rows": [1], "vector": [1.0] * 64}, 422, "give either vector"),
        ({**DIGITS}, 422, "give either vector"),
        ({**DIGITS, "rows": [1797]}, 422, "index 1797 out of range"),
        ({**DIGITS, "rows": [1], "k": 1797}, 422, "1796 other points"),
        ({**DIGITS, "vector": [1.0, 2.0]}, 422, "query has 2 values; the embedding has 64"),
        ({**DIGITS, "vector": [1.0] * 64, "k": -1}, 422, "k: "),
        ({**DIGITS, "vector": [1.0] * 64, "metric": "dot"}, 422, "metric: "),
        ({**DIGITS, "vector": [1.0] * 64, "colour": 1}, 422, "colour"),
        ({"run": "digits", "embedding": "nope", "vector": [1.0]}, 404, "unknown embedding"),
    ],
)
def test_bad_vector_requests(base, body, status, detail):
    answer = httpx.post(f"{base}/api/neighbors", json=body)
    assert answer.status_code == status
    assert detail in answer.json()["detail"]


def test_search_substring_and_regex(base):
    def search(**params) -> httpx.Response:
        return httpx.get(f"{base}/api/search", params={**DIGITS, **params})

    labels = np.array(httpx.get(f"{base}/api/metadata", params=DIGITS).text.splitlines()[1:])
    sevens = [i for i, row in enumerate(labels) if row.split("\t")[0] == "7"]
    assert search(column="label", query="^7$", regex="true").json() == {"indices": sevens}
    odd = search(column="parity", query="ODD").json()["indices"]
    assert odd == [i for i, row in enumerate(labels) if row.endswith("\todd")]
    assert search(column="label", query="").json() == {"indices": []}

    bad = search(column="label", query="(7", regex="true")
    assert bad.status_code == 422 and "invalid regular expression" in bad.json()["detail"]
    unknown = search(column="colour", query="7")
    assert unknown.status_code == 422
    assert unknown.json()["detail"] == "unknown metadata column 'colour'; columns: label, parity"


def test_search_without_metadata_uses_the_index_column(serve, tmp_path: Path):
    np.save(tmp_path / "vecs.npy", np.zeros((12, 2), np.float32))
    base = serve(tmp_path, refresh_seconds=0)
    params = {"run": ".", "embedding": "vecs", "column": "index", "query": "1"}
    assert httpx.get(f"{base}/api/search", params=params).json() == {"indices": [1, 10, 11]}


def test_rows_with_nan_are_never_neighbours(serve, tmp_path: Path):
    data = np.random.default_rng(0).normal(size=(30, 4)).astype(np.float32)
    data[[2, 5]] = np.nan
    np.save(tmp_path / "vecs.npy", data)
    base = serve(tmp_path, refresh_seconds=0)
    params = {"run": ".", "embedding": "vecs", "k": 29}  # 29 other points, 27 of them finite
    found = httpx.get(f"{base}/api/neighbors", params={**params, "index": 0}).json()["neighbors"]
    assert len(found) == 27 and not {2, 5} & {n["index"] for n in found}
    nan_row = httpx.get(f"{base}/api/neighbors", params={**params, "index": 2})
    assert nan_row.status_code == 422 and "NaN" in nan_row.json()["detail"]


@pytest.mark.slow
def test_neighbours_are_answered_while_a_tsne_job_runs(base):
    words = {"run": "words", "embedding": "words"}
    job = httpx.post(
        f"{base}/api/projections", json={**words, "method": "tsne", "dims": 2, "params": {"n_iter": 5000}}
    ).json()["job"]
    try:
        deadline = time.monotonic() + 60
        while httpx.get(f"{base}/api/jobs/{job}").json()["status"] != "running":
            assert time.monotonic() < deadline, "the t-SNE job never started"
            time.sleep(0.05)
        answer = httpx.get(f"{base}/api/neighbors", params={**words, "index": 3, "k": 10}, timeout=60)
        assert answer.status_code == 200 and len(answer.json()["neighbors"]) == 10
        # Answered while the job still runs: the query did not wait for it to end.
        after = httpx.get(f"{base}/api/jobs/{job}").json()
        assert after["status"] == "running" and (after["iteration"] or 0) < 5000, after
    finally:
        httpx.delete(f"{base}/api/jobs/{job}")
