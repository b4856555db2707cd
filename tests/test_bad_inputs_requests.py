"""Bad requests to the compute API (issue 3) over a live server: unknown names are 404, bad
parameters 422 naming the parameter, oversized bodies 413; the server keeps answering.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from projector.server.app import create_app

from tests.bad_input_corpus import TOKENS, embedding_config, npy_bytes
from tests.builders import vectors, write_pbtxt_run
from tests.conftest import LiveServer

# -- requests (the compute API of issue 3) ----------------------------------------------------


N_POINTS, DIMS = 12, 4


@pytest.fixture(scope="module", params=TOKENS, ids=["open", "token"])
def compute(tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> Iterator[httpx.Client]:
    """A run ``r`` / embedding ``e`` of 12 x 4 with two NaN/Inf rows and metadata; served
    open and with a token."""
    root = tmp_path_factory.mktemp("compute")
    matrix = vectors(N_POINTS, DIMS)
    matrix[3, 0] = np.nan
    matrix[9, 2] = np.inf
    config = embedding_config(tensor_name="e", tensor_path="e.npy", metadata_path="m.tsv")
    write_pbtxt_run(root / "logs" / "r", config, {
        "e.npy": npy_bytes(matrix),
        "m.tsv": "name\tgroup\n" + "".join(f"p{i}\t{i % 3}\n" for i in range(N_POINTS))})
    server = LiveServer(create_app(root / "logs", cache_dir=root / "cache", refresh_seconds=0,
                                   max_body_bytes=64 * 1024, token=request.param))
    server.start()
    headers = {"Authorization": f"Bearer {request.param}"} if request.param else {}
    with httpx.Client(base_url=server.url, timeout=30, headers=headers) as client:
        yield client
    server.stop()


def neighbors(compute: httpx.Client, **params: object) -> httpx.Response:
    query = {"run": "r", "embedding": "e", "index": 0, "k": 3, "metric": "cosine", **params}
    return compute.get("/api/neighbors", params=query)


def assert_error(response: httpx.Response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str)
    assert all(word in detail for word in words), (words, detail)


@pytest.mark.parametrize(("params", "word"), [
    ({"run": "nope"}, "nope"),
    ({"embedding": "nope"}, "nope"),
])
def test_neighbors_of_unknown_run_or_embedding_is_404(compute, params, word):
    assert_error(neighbors(compute, **params), 404, word)


@pytest.mark.parametrize(("params", "word"), [
    ({"index": N_POINTS}, "index"),
    ({"index": -1}, "index"),
    ({"k": 0}, "k"),
    ({"k": -2}, "k"),
    ({"metric": "manhattan"}, "metric"),
])
def test_neighbors_bad_parameters_are_422_naming_the_parameter(compute, params, word):
    assert_error(neighbors(compute, **params), 422, word)
    assert neighbors(compute).status_code == 200


@pytest.mark.parametrize("k", [N_POINTS, N_POINTS + 50])
def test_neighbors_k_not_below_n_is_422(compute, k):
    """Issue 5 lists k >= N among the requests refused with a clear error (not clamped)."""
    assert_error(neighbors(compute, k=k), 422, "k")
    assert neighbors(compute, k=N_POINTS - 1).status_code == 200


def test_nan_rows_are_never_neighbours(compute):
    for index in (0, 5):
        response = neighbors(compute, index=index, k=N_POINTS - 1, metric="euclidean")
        assert response.status_code == 200, response.text
        found = [n["index"] for n in response.json()["neighbors"]]
        assert 3 not in found and 9 not in found and index not in found


@pytest.mark.parametrize(("length", "words"), [
    (DIMS - 1, f"{DIMS - 1} values"),
    (DIMS + 1, f"{DIMS + 1} values"),
    (0, "vector"),
])
def test_neighbors_of_a_vector_of_the_wrong_length_is_422(compute, length, words):
    body = {"run": "r", "embedding": "e", "vector": [0.5] * length, "k": 3, "metric": "cosine"}
    assert_error(compute.post("/api/neighbors", json=body), 422, words)
    body["vector"] = [0.5] * DIMS
    assert compute.post("/api/neighbors", json=body).status_code == 200


def test_search_with_a_bad_regex_is_422(compute):
    params = {"run": "r", "embedding": "e", "column": "name", "query": "p(1", "regex": "true"}
    assert_error(compute.get("/api/search", params=params), 422)


@pytest.mark.parametrize(("method", "word"), [("isomap", "unknown"), (None, "missing")])
def test_projection_with_an_unknown_or_no_method_is_422_listing_the_methods(compute, method, word):
    body = {"run": "r", "embedding": "e", "method": method, "dims": 2, "params": {}}
    if method is None:
        del body["method"]
    assert_error(compute.post("/api/projections", json=body), 422, "method: ", word,
                 "'pca'", "'tsne'", "'umap'", "'custom'", "'precomputed'")


def test_projection_of_an_unknown_embedding_is_404(compute):
    body = {"run": "r", "embedding": "nope", "method": "pca", "dims": 2, "params": {}}
    assert_error(compute.post("/api/projections", json=body), 404, "nope")


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/api/jobs/no-such-job"),
    ("GET", "/api/jobs/no-such-job/result"),
    ("DELETE", "/api/jobs/no-such-job"),
])
def test_unknown_job_id_is_404(compute, method, path):
    assert_error(compute.request(method, path), 404, "no-such-job")


def test_huge_declared_body_is_413_before_it_is_read(compute):
    """The limit applies to the declared Content-Length, so the body is never buffered."""
    body = json.dumps({"run": "r", "embedding": "e", "vector": [0.25] * 40_000, "k": 3})
    response = compute.post("/api/neighbors", content=body,
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert compute.get("/api/health").status_code == 200


def test_huge_streamed_body_is_413(compute):
    """No Content-Length (chunked upload): the limit is enforced while the body streams in."""

    def chunks():
        yield b'{"run": "r", "embedding": "e", "k": 3, "vector": [0.25'
        for _ in range(20_000):
            yield b", 0.25"
        yield b"]}"

    response = compute.post("/api/neighbors", content=chunks(),
                          headers={"content-type": "application/json"})
    assert_error(response, 413, "larger than 65536 bytes")
    assert compute.get("/api/health").status_code == 200
