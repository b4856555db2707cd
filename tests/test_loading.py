"""Start-up and background loading: a lean import, big tensors listed while they load (503 with
progress until then), exact float32 values from a real writer, and a cache copy of binary
inputs that the user's rewrite of the file cannot reach."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from projector_core.data.catalog import Catalog
from projector_core.formats import tensor_files
from tests.builders import vectors, write_pbtxt_run

COMPUTE_LIBRARIES = ("sklearn", "openTSNE", "umap", "numba", "pynndescent", "torch", "scipy",
                     "pandas")  # pyarrow imports pandas on a Python object's conversion: 0.3 s


def test_serving_imports_no_compute_library(tmp_path):
    """Importing the server and loading the sample data leaves the projection libraries out."""
    code = (
        "import json, sys\n"
        "import projector.server.cli\n"
        "from projector.server.app import create_app\n"
        f"create_app(cache_dir={str(tmp_path / 'cache')!r})\n"
        f"print(json.dumps([m for m in {COMPUTE_LIBRARIES!r} if m in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120)
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


class HeldLoad:
    """Holds the background loader at its first progress report until ``release()``: a
    tensor that stays "loading" for as long as the test needs, read by the real parser."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, int, int]] = []
        self.holding = threading.Event()
        self._release = threading.Event()

    def __call__(self, what: str, done: int, total: int) -> None:
        self.reports.append((what, done, total))
        if threading.current_thread().name == "tensor-loader":
            self.holding.set()
            self._release.wait(timeout=60)

    def release(self) -> None:
        self._release.set()


def _embedding(url: str, name: str) -> dict:
    runs = httpx.get(f"{url}/api/runs").json()
    return next(e for run in runs for e in run["embeddings"] if e["name"] == name)


def _until_ready(url: str, name: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        embedding = _embedding(url, name)
        if embedding["status"] == "ready":
            return embedding
        time.sleep(0.05)
    raise AssertionError(f"{name} still loading after {timeout} s")


def test_a_big_tsv_is_listed_while_it_loads_and_served_once_read(tmp_path, serve, monkeypatch):
    import tensorboardX

    matrix = vectors(600, 24, 7)
    writer = tensorboardX.SummaryWriter(str(tmp_path / "logs"))
    writer.add_embedding(matrix, metadata=[f"p{i}" for i in range(600)], global_step=0)
    writer.close()
    tsv = tmp_path / "logs" / "00000" / "default" / "tensors.tsv"
    monkeypatch.setattr(tensor_files, "CHUNK_BYTES", 16 * 1024)  # many blocks: progress between
    held = HeldLoad()
    catalog = Catalog(tmp_path / "logs", cache_dir=tmp_path / "cache", progress=held,
                      background_bytes=0)
    catalog.refresh()
    try:
        url = serve(catalog=catalog)
        assert held.holding.wait(30)
        listed = _embedding(url, "default:00000")
        assert listed["status"] == "loading"
        assert listed["shape"] is None  # a TSV's row count is known only at its end
        progress = listed["progress"]
        assert progress["bytes_total"] == tsv.stat().st_size
        assert 0 < progress["bytes_done"] < progress["bytes_total"]
        assert progress["fraction"] == pytest.approx(progress["bytes_done"] / progress["bytes_total"])

        params = {"run": ".", "embedding": "default:00000"}
        for route in ("tensor", "metadata", "neighbors"):
            extra = {"index": 0, "k": 3} if route == "neighbors" else {}
            response = httpx.get(f"{url}/api/{route}", params={**params, **extra})
            assert response.status_code == 503, route
            assert response.headers["Retry-After"] == "1"
            body = response.json()
            assert body["status"] == "loading"
            assert body["progress"]["bytes_done"] == progress["bytes_done"]
            assert "tensors.tsv is still loading" in body["detail"]
        assert any(what.startswith("parsing ") for what, _, _ in held.reports)  # the CLI line
    finally:
        held.release()
    ready = _until_ready(url, "default:00000")
    assert ready["shape"] == [600, 24] and ready["progress"] is None
    assert ready["metadata_columns"]
    served = httpx.get(f"{url}/api/tensor", params=params)
    assert served.status_code == 200
    assert served.content == matrix.astype("<f4").tobytes()  # the writer's float32 bytes exactly
    assert httpx.get(f"{url}/api/metadata", params=params).text.splitlines()[1] == "p0"
    assert httpx.get(f"{url}/api/neighbors", params={**params, "index": 0, "k": 3}).status_code == 200


def test_binary_tensors_are_listed_with_their_shape_while_copied(tmp_path, serve):
    logdir = tmp_path / "logs"
    npy, raw = vectors(300, 8, 1), vectors(200, 4, 2)
    np.save(logdir / "n" / "t.npy", npy) if (logdir / "n").mkdir(parents=True) is None else None
    write_pbtxt_run(logdir / "n", 'embeddings { tensor_name: "t" tensor_path: "t.npy" }')
    write_pbtxt_run(logdir / "r", 'embeddings { tensor_name: "b" tensor_path: "t.bytes" '
                                  "tensor_shape: [200, 4] }", {"t.bytes": raw.tobytes()})
    held = HeldLoad()
    catalog = Catalog(logdir, cache_dir=tmp_path / "cache", progress=held, background_bytes=0)
    catalog.refresh()
    try:
        url = serve(catalog=catalog)
        assert held.holding.wait(30)
        listed = _embedding(url, "t")
        assert listed["status"] == "loading" and listed["shape"] == [300, 8]
        assert _embedding(url, "b")["status"] == "loading"  # queued behind the first
    finally:
        held.release()
    assert _until_ready(url, "t")["shape"] == [300, 8]
    assert _until_ready(url, "b")["shape"] == [200, 4]
    for run, name, matrix in (("n", "t", npy), ("r", "b", raw)):
        response = httpx.get(f"{url}/api/tensor", params={"run": run, "embedding": name})
        assert response.content == matrix.tobytes()
    # served from our cache copy, never from a map of the user's file
    cached = catalog.embedding("n", "t").vectors()
    assert Path(cached.filename).parent == tmp_path / "cache" / "tensors"


def test_cached_tensors_are_ready_at_once_on_the_next_start(tmp_path):
    logdir = tmp_path / "logs"
    matrix = vectors(50, 6, 3)
    write_pbtxt_run(logdir, 'embeddings { tensor_name: "t" tensor_path: "t.tsv" }',
                    {"t.tsv": "".join("\t".join(map(str, row.tolist())) + "\n" for row in matrix)})
    first = Catalog(logdir, cache_dir=tmp_path / "cache")
    first.refresh()
    again = Catalog(logdir, cache_dir=tmp_path / "cache", background_bytes=0)
    again.refresh()
    embedding = again.embedding(".", "t")
    assert embedding.status == "ready"
    assert isinstance(embedding.vectors(), np.memmap)  # the cache entry, mapped
    assert embedding.vectors().tobytes() == matrix.tobytes()


def test_a_rewrite_during_the_load_cancels_it_and_the_new_file_is_read(tmp_path):
    logdir = tmp_path / "logs"
    old, new = vectors(100, 4, 1), vectors(30, 4, 2)
    np.save((logdir.mkdir() or logdir) / "t.npy", old)
    write_pbtxt_run(logdir, 'embeddings { tensor_name: "t" tensor_path: "t.npy" }')
    held = HeldLoad()
    catalog = Catalog(logdir, cache_dir=tmp_path / "cache", progress=held, background_bytes=0)
    catalog.refresh()
    placeholder = catalog.embedding(".", "t")
    assert held.holding.wait(30)  # the loader is inside the read when the file changes
    np.save(logdir / "t.npy", new)
    time.sleep(1.5)  # past the settle time, with room for a slow clock on a busy machine
    catalog.refresh()
    held.release()
    assert placeholder.loading is not None and placeholder.loading.cancelled
    assert placeholder.loading.finished.wait(30)
    deadline = time.monotonic() + 30
    while catalog.embedding(".", "t").status == "loading" and time.monotonic() < deadline:
        time.sleep(0.05)
    np.testing.assert_array_equal(catalog.embedding(".", "t").vectors(), new)
