"""Uploads (``POST /api/uploads``): in memory for the session, a run of their own, 413 when big."""

from __future__ import annotations

import io

import httpx
import numpy as np
import pytest


def _clusters(n: int = 60, d: int = 5) -> np.ndarray:
    rng = np.random.default_rng(1)
    half = n // 2
    return np.concatenate([rng.normal(0, 1, (half, d)), rng.normal(8, 1, (n - half, d))]).astype("f4")


def _tsv(vectors: np.ndarray) -> bytes:
    return "".join("\t".join(f"{v:.6f}" for v in row) + "\n" for row in vectors).encode()


@pytest.fixture
def client(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir, max_upload_bytes=200_000), timeout=60) as http:
        yield http


def test_multipart_upload_is_a_run_that_tsne_runs_on(client, sample_logdir):
    vectors = _clusters()
    metadata = "name\tgroup\n" + "".join(f"p{i}\t{'ab'[i >= 30]}\n" for i in range(60))
    response = client.post("/api/uploads", files={
        "tensor": ("mine.tsv", _tsv(vectors), "text/tab-separated-values"),
        "metadata": ("mine-meta.tsv", metadata.encode(), "text/tab-separated-values")})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["run"].startswith("upload-") and body["embedding"] == "mine.tsv"
    assert body["shape"] == [60, 5]
    runs = {r["name"]: r for r in client.get("/api/runs").json()}
    assert "digits" in runs, "the LOGDIR's runs stay"
    uploaded = runs[body["run"]]["embeddings"][0]
    assert uploaded["metadata_columns"] == ["name", "group"]
    query = {"run": body["run"], "embedding": "mine.tsv"}
    tensor = np.frombuffer(client.get("/api/tensor", params=query).content, "<f4").reshape(60, 5)
    np.testing.assert_allclose(tensor, vectors, atol=1e-5)
    found = client.get("/api/search", params={**query, "column": "group", "query": "b"}).json()
    assert found["indices"] == list(range(30, 60))
    result = client.post("/api/projections", params={"wait": True}, json={
        **query, "method": "tsne", "params": {"perplexity": 10, "n_iter": 250}})
    assert result.status_code == 200, result.text
    coords = np.array(result.json()["coordinates"])
    assert coords.shape == (60, 2)
    # The two clusters stay apart in the t-SNE map.
    gap = np.linalg.norm(coords[:30].mean(0) - coords[30:].mean(0))
    assert gap > 3 * coords[:30].std()


def test_raw_npy_body_upload(client):
    buffer = io.BytesIO()
    np.save(buffer, _clusters(20, 3).astype("f8"))
    response = client.post("/api/uploads", params={"name": "points.npy"}, content=buffer.getvalue(),
                           headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 201, response.text
    assert response.json()["shape"] == [20, 3]


def test_broken_upload_names_file_and_line(client):
    response = client.post("/api/uploads", files={"tensor": ("broken.tsv", b"1\t2\n3\n")})
    assert response.status_code == 422
    assert "broken.tsv line 2" in response.json()["detail"]
    metadata = client.post("/api/uploads", files={"tensor": ("ok.tsv", b"1\t2\n3\t4\n"),
                                                  "metadata": ("meta.tsv", b"a\tb\n1\t2\n")})
    assert metadata.status_code == 422 and "meta.tsv" in metadata.json()["detail"]


def test_pickled_npy_is_refused(client):
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    response = client.post("/api/uploads", params={"name": "evil.npy"}, content=buffer.getvalue())
    assert response.status_code == 422 and "evil.npy" in response.json()["detail"]


def test_too_large_upload_is_a_clear_413(client):
    big = _tsv(np.zeros((5000, 10), "f4"))  # ~ 450 kB, over the 200 kB limit of this server
    response = client.post("/api/uploads", files={"tensor": ("big.tsv", big)})
    assert response.status_code == 413
    assert "limit of" in response.json()["detail"] and "LOGDIR" in response.json()["detail"]
    raw = client.post("/api/uploads", content=iter([big]))  # chunked: no Content-Length
    assert raw.status_code == 413
    assert not [r for r in client.get("/api/runs").json() if r["name"].startswith("upload-")]
