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


def _npy(vectors: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, vectors)
    return buffer.getvalue()


def test_the_ninth_upload_evicts_the_oldest_and_keeps_the_rest(client):
    """The default of 8 uploads held: the oldest goes first, whole (listing, tensor)."""
    sent = [np.full((4, 3), i, np.float32) for i in range(9)]
    runs = []
    for i, vectors in enumerate(sent):
        answer = client.post("/api/uploads", params={"name": f"u{i}.npy"}, content=_npy(vectors))
        assert answer.status_code == 201, answer.text
        runs.append(answer.json()["run"])
    listed = [r["name"] for r in client.get("/api/runs").json() if r["name"].startswith("upload-")]
    assert sorted(listed) == sorted(runs[1:])
    gone = client.get("/api/tensor", params={"run": runs[0], "embedding": "u0.npy"})
    assert gone.status_code == 404
    for i in range(1, 9):
        kept = client.get("/api/tensor", params={"run": runs[i], "embedding": f"u{i}.npy"})
        np.testing.assert_array_equal(np.frombuffer(kept.content, "<f4").reshape(4, 3), sent[i])


@pytest.mark.slow
def test_the_default_limit_is_64_mib(serve, tmp_path):
    """A server started without a limit takes a 64 MiB .npy and refuses one 512 bytes more."""
    header = len(_npy(np.zeros((0, 64), np.float32)))
    rows = (64 * 2**20 - header) // 256
    fits = _npy(np.ones((rows, 64), np.float32))
    assert len(fits) <= 64 * 2**20 < len(fits) + 512
    with httpx.Client(base_url=serve(tmp_path), timeout=300) as http:
        accepted = http.post("/api/uploads", params={"name": "fits.npy"}, content=fits)
        assert accepted.status_code == 201, accepted.text
        assert accepted.json()["shape"] == [rows, 64]
        over = _npy(np.ones((rows + 2, 64), np.float32))
        refused = http.post("/api/uploads", params={"name": "over.npy"}, content=over)
        assert refused.status_code == 413
        assert "67108864 bytes" in refused.json()["detail"]


def test_a_binary_file_is_named_for_what_it_is_not_parsed_as_tsv(client, tmp_path):
    """A parquet or .npz picked in "Load data" is refused in words, not with its bytes quoted as
    a TSV cell; a .npy is known by its magic bytes whatever its name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"emb": [[1.0, 2.0], [3.0, 4.0]], "name": ["a", "b"]}),
                   tmp_path / "table.parquet")
    np.savez(tmp_path / "arrays.npz", vectors=_clusters(10, 3))
    for name, kind in (("table.parquet", "a parquet table"), ("arrays.npz", "a zip archive (.npz, .pt)")):
        data = (tmp_path / name).read_bytes()
        response = client.post("/api/uploads", files={"tensor": (name, data)})
        assert response.status_code == 422
        detail = response.json()["detail"]
        assert detail.startswith(f"{name}: is {kind}, not a tensor"), detail
        assert "PAR1" not in detail and "\\x" not in detail and "TSV" in detail
    metadata = client.post("/api/uploads", files={
        "tensor": ("ok.tsv", b"1\t2\n3\t4\n"),
        "metadata": ("labels.parquet", (tmp_path / "table.parquet").read_bytes())})
    assert metadata.status_code == 422
    assert metadata.json()["detail"].startswith("labels.parquet: is a parquet table, not a metadata TSV")
    unnamed = client.post("/api/uploads", files={"tensor": ("vectors", _npy(_clusters(6, 2)))})
    assert unnamed.status_code == 201, unnamed.text
    assert unnamed.json()["shape"] == [6, 2]


def test_the_upload_limit_is_the_one_that_applies_to_uploads(serve, sample_logdir):
    """An upload between the app's body limit and the upload limit is taken (the body limit
    does not shadow it); one past the upload limit hears of that limit, by its size, whether
    the body declares its length (multipart) or streams (chunked)."""
    url = serve(sample_logdir, max_body_bytes=100_000, max_upload_bytes=300_000)
    middle = _tsv(np.ones((2000, 10), "f4"))  # ~ 180 kB: over the body limit, under the upload's
    assert 100_000 < len(middle) < 300_000
    over = _tsv(np.ones((4000, 10), "f4"))  # ~ 360 kB
    with httpx.Client(base_url=url, timeout=60) as http:
        taken = http.post("/api/uploads", files={"tensor": ("middle.tsv", middle)})
        assert taken.status_code == 201, taken.text
        assert taken.json()["shape"] == [2000, 10]
        for refused in (http.post("/api/uploads", files={"tensor": ("over.tsv", over)}),
                        http.post("/api/uploads", content=iter([over[:150_000], over[150_000:]]))):
            assert refused.status_code == 413
            detail = refused.json()["detail"]
            assert "the upload is larger than this server's limit of 293 KiB (300000 bytes)" \
                in detail and "LOGDIR" in detail
        # Elsewhere the app's body limit still holds.
        body = http.post("/api/neighbors", content=b"[" + b"0," * 60_000 + b"0]",
                         headers={"content-type": "application/json"})
        assert body.status_code == 413 and "larger than 100000 bytes" in body.json()["detail"]
