"""The server holds only what it serves: its private memory during PCA, kNN and UMAP on a cluster.

``projector serve v.zarr --dask local:2`` runs as its own process (its LocalCluster's two
worker processes are its children, measured apart); a thread samples the server process's
private memory (USS: pages no other process shares) every 50 ms while the requests run.
Before issue 25 a PCA over 3M x 64 peaked at 4.2x the matrix in the server: the JSON answer
as one string of Python floats, the coordinates gathered whole. Now the workers write the
coordinates and tiles to the cache, and answers stream a block at a time. A sampled UMAP
too: the workers place their shards into the store and build its tiles, which carry the
categorical column stored beside the zarr (``v.columns/label``) and are exactly
``build_tiles`` over the stored coordinates in the workers' key order.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("zarr")
psutil = pytest.importorskip("psutil")

from projector_core.formats.chunked import open_chunked  # noqa: E402
from projector_core.formats.chunked_writer import write_zarr  # noqa: E402
from projector_core.formats.code_columns import write_code_column  # noqa: E402
from projector_core.tiles import shard_keys  # noqa: E402
from projector_core.tiles.build import build_tiles  # noqa: E402
from projector_core.tiles.stored import ZarrTileSource  # noqa: E402

pytestmark = pytest.mark.slow
# 1M x 64 (256 MB) by default: at 3M the workers' UMAP placement alone took over 10 minutes on
# this shared 2-core machine; PROJECTOR_MEMORY_ROWS=3000000 runs the 3M x 64 (768 MB).
ROWS = int(os.environ.get("PROJECTOR_MEMORY_ROWS", 1_000_000))
DIM = 64
BUDGET = 500 * 2**20  # the server's private memory beyond what it answers


@pytest.fixture(scope="module")
def zarr_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """ROWS x 64 float32 in 8 Gaussian blobs, written in blocks (never whole here either)."""
    path = tmp_path_factory.mktemp("memory") / "v.zarr"
    rng = np.random.default_rng(3)
    centres = rng.standard_normal((8, DIM)).astype(np.float32) * 6

    def blocks() -> Iterator[np.ndarray]:
        for start in range(0, ROWS, 250_000):
            size = min(250_000, ROWS - start)
            yield centres[rng.integers(0, 8, size)] + rng.standard_normal((size, DIM), np.float32)
    write_zarr(path, blocks())
    write_code_column(path, "label", _labels(), CLASSES, ROWS)
    return path


CLASSES = ["even", "odd", "third"]


def _labels() -> np.ndarray:
    return (np.arange(ROWS) % 3).astype(np.int32)


def _keys(coords: str, shard_rows: int, box: dict) -> np.ndarray:
    """The workers' LOD keys of every row, drawn again here by the same per-shard functions."""
    plans = [shard_keys.ShardPlan(coords, start, min(ROWS, start + shard_rows), (0, 1),
                                 tuple(box["lo"]), tuple(box["hi"]), 0)
             for start in range(0, ROWS, shard_rows)]
    leads = shard_keys.choose_leads([shard_keys.shard_leads(p) for p in plans])
    keys = np.concatenate([shard_keys.keys(p, *leads).key for p in plans])
    shard_keys.forget(coords)
    return keys


class Sampler:
    """The highest private memory of a process, sampled on a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def now(self) -> int:
        return self.process.memory_full_info().uss

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.now())
            except psutil.Error:
                return
            time.sleep(0.05)

    def reset(self) -> None:
        self.peak = self.now()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture(scope="module")
def server(zarr_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Sampler]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cache = tmp_path_factory.mktemp("cache")
    log = (cache / "server.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "projector.server.cli", "serve", str(zarr_path), "--dask",
         "local:2", "--port", str(port), "--no-token", "--no-warm-up", "--cache-dir", str(cache)],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/api/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            raise AssertionError((cache / "server.log").read_text())
        sampler = Sampler(process.pid)
        yield base, sampler
        sampler.stop()
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a request still in flight holds uvicorn's shutdown
            process.kill()
            process.wait(timeout=60)
        log.close()


def _project(base: str, **body) -> tuple[int, dict]:
    """(bytes answered, info) of a projection read as a stream, as a client reads 100M rows."""
    size = 0
    with httpx.stream("POST", f"{base}/api/projections?wait=true", timeout=1800,
                      headers={"Accept": "application/octet-stream"},
                      json={"run": ".", "embedding": "v", **body}) as reply:
        assert reply.status_code == 200, reply.read()
        for block in reply.iter_bytes():
            size += len(block)
        return size, json.loads(reply.headers["X-Info"])


def test_the_server_holds_only_what_it_serves_during_pca_knn_and_umap(server, zarr_path):
    base, sampler = server
    idle = sampler.now()

    sampler.reset()
    size, info = _project(base, method="pca", dims=2)
    assert size == ROWS * 2 * 4 and info["dims"] == 2  # dims is the output width (issue 33)
    print(f"\n{ROWS:,} x {DIM}: server private memory idle {idle / 2**20:.0f} MB, "
          f"PCA peak {sampler.peak / 2**20:.0f} MB", end="")
    assert sampler.peak < BUDGET, f"PCA: {sampler.peak / 2**20:.0f} MB private (idle {idle / 2**20:.0f})"
    assert Path(info["stored"]["tiles"]).is_dir()  # the workers wrote the tiles
    assert info["tile_columns"] == ["label"]  # with the column stored beside the zarr

    sampler.reset()
    reply = httpx.get(f"{base}/api/neighbors", timeout=600,
                      params={"run": ".", "embedding": "v", "index": 7, "k": 10})
    assert reply.status_code == 200, reply.text
    assert len(reply.json()["neighbors"]) == 10
    print(f", kNN peak {sampler.peak / 2**20:.0f} MB", end="")
    assert sampler.peak < BUDGET, f"kNN: {sampler.peak / 2**20:.0f} MB private"

    sampler.reset()
    size, info = _project(base, method="umap", dims=2)
    result = ROWS * 2 * 4
    assert size == result and info["sample_rows"] > 0 and info["placed_by"] == "transform"
    print(f", UMAP peak {sampler.peak / 2**20:.0f} MB (result {result / 2**20:.0f} MB)")
    assert sampler.peak < BUDGET + result, f"UMAP: {sampler.peak / 2**20:.0f} MB private"
    # Placed by the workers into the store, whose tiles they built with the label column.
    assert info["tile_columns"] == ["label"]
    shard_rows = open_chunked(zarr_path, "v").shards()[0].stop  # the tile build's shards
    _the_tiles_are_build_tiles_over_the_stored_coordinates(info["stored"], shard_rows)


def _the_tiles_are_build_tiles_over_the_stored_coordinates(stored: dict[str, str],
                                                            shard_rows: int) -> None:
    import zarr

    plane = np.asarray(zarr.open_array(store=stored["coordinates"], mode="r")[:])
    assert plane.shape == (ROWS, 2) and np.isfinite(plane).all()
    source = ZarrTileSource(stored["tiles"])
    manifest = source.manifest()
    keys = _keys(stored["coordinates"], shard_rows, manifest["box"])
    reference = build_tiles(plane, np.lexsort((np.arange(ROWS), keys)), manifest["budget"])
    assert manifest["total"] == ROWS and manifest["box"] == {"lo": list(reference.lo),
                                                             "hi": list(reference.hi)}
    assert [tuple(t[:3]) for t in manifest["tiles"]] == [tuple(t) for t in reference.tiles]
    assert source.codes_dictionary("label") == CLASSES
    labels = _labels()
    for z, x, y, count in manifest["tiles"]:
        rows, coords, codes = source.read(z, x, y, column="label")
        assert count == rows.size and np.array_equal(rows, reference.rows[reference.find(z, x, y)])
        np.testing.assert_array_equal(coords, plane[rows])
        assert np.array_equal(codes, labels[rows])
