"""Chunked inputs (zarr v2/v3, folders of .npy shards): found, read lazily, checked, served.

No Dask here: these are the single-process paths, which must never read such an input whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from sklearn.decomposition import PCA

zarr = pytest.importorskip("zarr")

from projector_core.data.catalog import Catalog, PlainOptions  # noqa: E402
from projector_core.formats import chunked  # noqa: E402
from projector_core.formats.chunked import ChunkedVectors  # noqa: E402
from projector_core.formats.chunked_writer import write_npy_shards, write_zarr  # noqa: E402
from projector_core.formats.writer import add_embedding  # noqa: E402
from projector_core.kernels.knn import ExactIndex  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def vectors() -> np.ndarray:
    data = np.random.default_rng(1).standard_normal((3000, 12)).astype(np.float32)
    data[17] = np.nan
    return data


@pytest.fixture(autouse=True)
def _small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunked, "SHARD_BYTES", 40_000)  # several shards even for small data


@pytest.fixture
def never_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if anything reads a chunked embedding whole."""
    def refuse(self, dtype=None, copy=None):
        raise AssertionError(f"{self.display} was read whole")
    monkeypatch.setattr(ChunkedVectors, "__array__", refuse)


def _catalog(path: Path, tmp_path: Path, **plain) -> Catalog:
    catalog = Catalog(path, cache_dir=tmp_path / "cache", plain=PlainOptions(**plain))
    catalog.refresh()
    return catalog


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_zarr_array_is_one_lazy_embedding(tmp_path, vectors, zarr_format, never_whole):
    path = write_zarr(tmp_path / "vectors.zarr", vectors, chunk_rows=500, zarr_format=zarr_format)
    [run] = _catalog(path, tmp_path).runs()
    [embedding] = run.embeddings
    assert (embedding.name, embedding.shape, embedding.error) == ("vectors", (3000, 12), None)
    lazy = embedding.vectors()
    assert isinstance(lazy, ChunkedVectors)
    np.testing.assert_array_equal(lazy[480:1020], vectors[480:1020])
    np.testing.assert_array_equal(lazy[[2999, 0, 501, 0]], vectors[[2999, 0, 501, 0]])
    assert len(lazy.shards()) > 3
    assert not list((tmp_path / "cache").glob("tensors/*"))  # never copied into the cache


def test_npy_shards_as_tensor_path_in_json_and_pbtxt(tmp_path, vectors):
    write_npy_shards(tmp_path / "run_json" / "parts", vectors, chunk_rows=700)
    (tmp_path / "run_json" / "projector_config.json").write_text(json.dumps(
        {"embeddings": [{"tensorName": "big", "tensorPath": "parts", "tensorShape": [3000, 12]}]}))
    write_zarr(tmp_path / "run_pbtxt" / "v.zarr", vectors, chunk_rows=1000)
    (tmp_path / "run_pbtxt" / "projector_config.pbtxt").write_text(
        'embeddings {\n  tensor_name: "big"\n  tensor_path: "v.zarr"\n}\n')
    catalog = _catalog(tmp_path, tmp_path)
    for run in ("run_json", "run_pbtxt"):
        embedding = catalog.embedding(run, "big")
        assert embedding.error is None and embedding.shape == (3000, 12)
        np.testing.assert_array_equal(embedding.vectors()[2990:], vectors[2990:])


def test_writer_add_embedding_zarr_is_read_back(tmp_path, vectors):
    add_embedding(tmp_path, vectors, metadata=[f"p{i}" for i in range(3000)], tag="big",
                  format="zarr")
    embedding = _catalog(tmp_path, tmp_path).embedding(".", "big:00000")
    assert embedding.sources["tensor"] == "00000/big/tensors.zarr"
    assert embedding.metadata().column(embedding.metadata().names[0])[5] == "p5"
    np.testing.assert_array_equal(np.asarray(embedding.vectors()), vectors)


def test_folder_of_shards_with_the_flag(tmp_path, vectors):
    folder = write_npy_shards(tmp_path / "parts", iter(np.array_split(vectors, 4)))
    [embedding] = _catalog(folder, tmp_path, shards=True).runs()[0].embeddings
    assert embedding.shape == (3000, 12)
    np.testing.assert_array_equal(embedding.vectors()[740:760], vectors[740:760])


def test_ragged_shards_name_the_file(tmp_path, vectors):
    folder = tmp_path / "parts"
    folder.mkdir()
    np.save(folder / "a.npy", vectors[:10])
    np.save(folder / "b.npy", vectors[10:20, :5])
    run = _catalog(folder, tmp_path, shards=True).runs()[0]
    assert "parts/b.npy" in run.error and "same D" in run.error


@pytest.mark.filterwarnings("ignore:The data type")  # zarr: no v3 spec for fixed strings yet
@pytest.mark.parametrize("bad, message", [
    (np.array([["a", "b"], ["c", "d"]]), "needs numbers"),
    (np.zeros((4, 3, 2), np.float32), "2-D"),
])
def test_bad_zarr_is_a_clear_error(tmp_path, bad, message):
    path = tmp_path / "bad.zarr"
    zarr.create_array(store=str(path), data=bad)
    (tmp_path / "projector_config.pbtxt").write_text('embeddings {\n  tensor_path: "bad.zarr"\n}\n')
    [embedding] = _catalog(tmp_path, tmp_path).runs()[0].embeddings
    assert "bad.zarr" in embedding.errors["tensor"] and message in embedding.errors["tensor"]


def _coordinates(rows: list[list[float] | None]) -> np.ndarray:
    """JSON coordinates, a not-finite input row (null) as a row of NaN."""
    width = len(next(row for row in rows if row is not None))
    return np.array([[np.nan] * width if row is None else row for row in rows], dtype=float)


def test_neighbors_pca_custom_over_zarr_without_a_cluster(serve, tmp_path, vectors, never_whole):
    path = write_zarr(tmp_path / "logs" / "v.zarr", vectors, chunk_rows=250)
    labels = ["ab"[i % 2] + str(i % 3) for i in range(3000)]  # a0 b1 a2 b0 a1 b2 ...
    # One column, so no header line (TensorBoard's rule); the column is then called "label".
    (tmp_path / "logs" / "meta.tsv").write_text("\n".join(labels) + "\n")
    (tmp_path / "logs" / "projector_config.pbtxt").write_text(
        f'embeddings {{\n  tensor_name: "v"\n  tensor_path: "{path.name}"\n'
        '  metadata_path: "meta.tsv"\n}\n')
    base = serve(tmp_path / "logs")
    exact = ExactIndex(vectors)
    for metric in ("cosine", "euclidean"):
        got = httpx.get(f"{base}/api/neighbors", params={"run": ".", "embedding": "v",
                                                          "index": 5, "k": 20, "metric": metric})
        indices, distances = exact.neighbors_of([5], 20, metric)
        assert [n["index"] for n in got.json()["neighbors"]] == indices[0].tolist()
        assert [n["distance"] for n in got.json()["neighbors"]] == [float(str(d)) for d in distances[0]]
    finite = np.isfinite(vectors).all(axis=1)
    centred = vectors.astype(np.float64) - vectors[finite].mean(axis=0, dtype=np.float64)
    body = {"run": ".", "embedding": "v", "method": "pca"}
    pca = httpx.post(f"{base}/api/projections?wait=true", json=body, timeout=60).json()
    assert pca["info"]["invalid_rows"] == 1
    ours = _coordinates(pca["coordinates"])[:, :2]
    reference = PCA(2).fit(vectors[finite]).transform(np.nan_to_num(vectors))
    assert np.isnan(ours[17]).all() and np.isfinite(np.delete(ours, 17, axis=0)).all()
    signs = np.sign(np.nansum(ours * reference, axis=0))
    np.testing.assert_allclose(np.delete(ours * signs, 17, 0), np.delete(reference, 17, 0),
                               rtol=1e-4, atol=1e-4)
    # The custom projection: axes from the centroids of the rows each query matches.
    sides = {"left": "a", "right": "b", "up": "0", "down": "1"}
    body = {"run": ".", "embedding": "v", "method": "custom", "params": {"column": "label", **sides}}
    custom = httpx.post(f"{base}/api/projections?wait=true", json=body, timeout=60)
    assert custom.status_code == 200, custom.text
    ours = _coordinates(custom.json()["coordinates"])
    centroid = {side: vectors[finite & np.array([query in label for label in labels])]
                .mean(axis=0, dtype=np.float64) for side, query in sides.items()}
    axes = np.stack([centroid["right"] - centroid["left"], centroid["up"] - centroid["down"]], 1)
    expected = centred @ axes
    assert np.isnan(ours[17]).all()
    np.testing.assert_allclose(np.delete(ours, 17, 0), np.delete(expected, 17, 0),
                               rtol=1e-4, atol=1e-4)
    tensor = httpx.get(f"{base}/api/tensor", params={"run": ".", "embedding": "v"})
    np.testing.assert_array_equal(np.frombuffer(tensor.content, "<f4").reshape(3000, 12), vectors)


@pytest.mark.slow
def test_dask_is_not_imported_without_the_flag(tmp_path, vectors):
    write_zarr(tmp_path / "v.zarr", vectors)
    code = f"""
import sys
from fastapi.testclient import TestClient
from projector.server.app import create_app
from projector.server.cli import build_parser
build_parser()
client = TestClient(create_app({str(tmp_path / "v.zarr")!r}, cache_dir={str(tmp_path / "c")!r}),
                    base_url="http://127.0.0.1")
reply = client.get("/api/neighbors", params={{"run": ".", "embedding": "v", "index": 1, "k": 3}})
assert reply.status_code == 200, reply.text
client.post("/api/projections?wait=true", json={{"run": ".", "embedding": "v", "method": "pca"}})
loaded = [m for m in ("dask", "distributed") if m in sys.modules]
assert not loaded, loaded
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
