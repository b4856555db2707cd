"""Inputs beyond TensorBoard's: TF checkpoints read without TensorFlow, plain arrays, our writer."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest

from projector_core.formats.writer import add_embedding
from tests.builders import vectors
from tests.cli_server import cli_server

CHECKPOINTS = Path(__file__).parent / "fixtures" / "tf_checkpoints"


def _embeddings(url: str) -> dict[tuple[str, str], dict]:
    runs = httpx.get(f"{url}/api/runs").json()
    return {(r["name"], e["name"]): e for r in runs for e in r["embeddings"]}


def _tensor(url: str, run: str, name: str) -> np.ndarray:
    response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": name})
    assert response.status_code == 200, response.text
    n, d = map(int, response.headers["x-shape"].split(","))
    return np.frombuffer(response.content, dtype="<f4").reshape(n, d)


def test_checkpoints_written_by_tensorflow_are_served_without_it(tmp_path, serve):
    logdir = tmp_path / "logs"
    shutil.copytree(CHECKPOINTS, logdir, ignore=shutil.ignore_patterns("expected"))
    url = serve(logdir)
    listed = _embeddings(url)
    # Every 2-D float variable but the optimiser's slots, each bit for bit as TensorFlow wrote
    # it (float16, bfloat16 and float64 ones as numpy's conversion to float32 gives).
    expected = {(run, name): values
                for run in ("tf1", "tf2", "sharded")
                for name, values in np.load(CHECKPOINTS / "expected" / f"{run}.npz").items()
                if not any(slot in name for slot in ("Adam", "OPTIMIZER_SLOT", "optimizer/"))}
    assert set(listed) == set(expected)
    for (run, name), values in expected.items():
        assert listed[(run, name)]["error"] is None and listed[(run, name)]["shape"] == list(values.shape)
        np.testing.assert_array_equal(_tensor(url, run, name), values)
    tutorial = listed[("tf2", "embedding/.ATTRIBUTES/VARIABLE_VALUE")]
    assert tutorial["shape"] == [6, 4] and tutorial["error"] is None
    assert tutorial["metadata_columns"] != []
    assert not any("optimizer" in name or "OPTIMIZER_SLOT" in name for _, name in listed)
    assert ("tf1", "embedding") in listed


def test_a_corrupt_checkpoint_shard_is_reported_and_the_rest_served(tmp_path, serve):
    logdir = tmp_path / "logs"
    shutil.copytree(CHECKPOINTS / "tf2", logdir / "tf2")
    shutil.copytree(CHECKPOINTS / "tf1", logdir / "tf1")
    shard = next((logdir / "tf2").glob("*.data-*"))
    data = np.frombuffer(shard.read_bytes(), dtype=np.uint8).copy()
    data[::16] ^= 0xFF  # damages every variable stored in the shard
    shard.write_bytes(data.tobytes())
    listed = _embeddings(serve(logdir))
    errors = [e["error"] for (run, _), e in listed.items() if run == "tf2" and e["error"]]
    assert errors and all("tf2/" in error for error in errors)
    assert listed[("tf1", "embedding")]["error"] is None


def test_plain_npy_with_metadata_and_sprite_from_the_command_line(tmp_path, serve):
    from projector_core.data.catalog import Catalog, PlainOptions
    from projector_core.formats.writer import make_sprite

    matrix = vectors(9, 3)
    np.save(tmp_path / "vecs.npy", matrix)
    (tmp_path / "meta.tsv").write_text("".join(f"item{i}\n" for i in range(9)))
    sprite, dim = make_sprite(np.random.default_rng(0).random((9, 10, 6)))
    sprite.save(tmp_path / "s.png")
    catalog = Catalog(tmp_path / "vecs.npy", cache_dir=tmp_path / "cache",
                      plain=PlainOptions(metadata=tmp_path / "meta.tsv", sprite=tmp_path / "s.png",
                                         sprite_dim=dim))
    catalog.refresh()
    url = serve(catalog=catalog)
    entry = _embeddings(url)[(".", "vecs")]
    assert entry["error"] is None and entry["metadata_columns"] == ["label"]
    assert entry["sprite"] == {"single_image_dim": list(dim)}
    np.testing.assert_array_equal(_tensor(url, ".", "vecs"), matrix)


def test_npz_and_parquet_become_embeddings_named_after_the_file(tmp_path, serve):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    folder = tmp_path / "arrays"
    folder.mkdir()
    a, b = vectors(5, 2, 1), vectors(4, 3, 2)
    np.savez(folder / "bundle.npz", a=a, b=b)
    emb = vectors(6, 4, 3)
    table = pa.table({"emb": [list(map(float, row)) for row in emb],
                      "word": [f"w{i}" for i in range(6)], "count": list(range(6))})
    pq.write_table(table, tmp_path / "table.parquet")

    url = serve(folder)
    listed = _embeddings(url)
    assert {name for _, name in listed} == {"bundle/a", "bundle/b"}
    np.testing.assert_array_equal(_tensor(url, ".", "bundle/b"), b)

    from projector_core.data.catalog import Catalog, PlainOptions

    catalog = Catalog(tmp_path / "table.parquet", cache_dir=tmp_path / "cache",
                      plain=PlainOptions(vector_column="emb"))
    catalog.refresh()
    url = serve(catalog=catalog)
    entry = _embeddings(url)[(".", "table")]
    assert entry["shape"] == [6, 4] and entry["metadata_columns"] == ["word", "count"]
    np.testing.assert_allclose(_tensor(url, ".", "table"), emb)
    metadata = httpx.get(f"{url}/api/metadata", params={"run": ".", "embedding": "table"}).text
    assert metadata.splitlines()[:2] == ["word\tcount", "w0\t0"]


def test_our_writer_output_is_read_back(tmp_path, serve):
    logdir = tmp_path / "logs"
    first, second = vectors(7, 3, 1), vectors(5, 3, 2)
    add_embedding(logdir, first, metadata=[f"a{i}" for i in range(7)], global_step=0)
    add_embedding(logdir, second, metadata=[[str(i), "x"] for i in range(5)],
                  metadata_header=["i", "kind"], global_step=2, tag="b/c",
                  label_img=np.random.default_rng(0).random((5, 12, 8)))
    url = serve(logdir)
    listed = _embeddings(url)
    assert listed[(".", "default:00000")]["metadata_columns"] == ["label"]
    assert listed[(".", "b/c:00002")]["sprite"] is not None
    np.testing.assert_allclose(_tensor(url, ".", "b/c:00002"), second)


def test_cli_serves_a_folder_of_plain_array_files(tmp_path):
    arrays = tmp_path / "arrays"
    arrays.mkdir()
    v, w = vectors(4, 2), vectors(3, 5, 1)
    np.save(arrays / "v.npy", v)
    np.savez(arrays / "w.npz", w=w)
    with cli_server([str(arrays)], tmp_path) as server:
        listed = {e["name"]: e for run in server.get("/api/runs").json()
                  for e in run["embeddings"]}
        assert {name: e["shape"] for name, e in listed.items()} == {"v": [4, 2], "w/w": [3, 5]}
        for name, values in (("v", v), ("w/w", w)):
            served = server.get("/api/tensor", run=".", embedding=name)
            np.testing.assert_array_equal(
                np.frombuffer(served.content, "<f4").reshape(values.shape), values)


def test_cli_names_a_plain_array_file_that_is_not_there(tmp_path):
    result = subprocess.run([sys.executable, "-m", "projector.server.cli", "serve", str(tmp_path / "x.npy")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "does not exist" in result.stderr
    assert str(tmp_path / "x.npy") in result.stderr
