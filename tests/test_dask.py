"""The projector on a real Dask cluster: same REST answers as one process, computed on workers.

A LocalCluster of 2 worker processes on 127.0.0.1 serves a 200k x 32 zarr; every answer is
compared with the same app without a cluster, and the scheduler's task stream shows where the
tasks ran. An external ``dask scheduler`` + 2 ``dask worker`` processes serve the CLI. A worker
killed mid-job and a scheduler that goes away end in a right answer or a 503, never a hang.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("zarr")

import zarr
from distributed import get_task_stream
from websockets.sync.client import connect

from projector_core.distributed import dispatch, sample_fit
from projector_core.distributed.cluster import Cluster
from projector_core.distributed.knn import ShardedIndex
from projector_core.formats import chunked
from projector_core.formats.chunked import ChunkedVectors, open_chunked
from projector_core.formats.chunked_writer import write_zarr
from projector_core.kernels.knn import ExactIndex
from tests.test_lod_tiles import read_tile

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
N, D = 200_000, 32
SHARD_BYTES = 2 * 2**20  # 16,384 rows: 13 shards over the two workers
SMALL = 4000  # rows of the embedding t-SNE runs on (4 blobs)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose tensor is a zarr (chunks of 8,192 rows) with a metadata column."""
    root = tmp_path_factory.mktemp("dask_logdir")
    rng = np.random.default_rng(7)
    # Well separated variances, so every principal axis is well defined (no near-ties).
    scales = np.geomspace(4.0, 0.5, D)
    data = (rng.standard_normal((N, D)) * scales + rng.integers(0, 5, (N, 1))).astype(np.float32)
    data[123] = np.nan
    write_zarr(root / "vectors.zarr", data, chunk_rows=8192)
    labels = ["label\tparity"] + [f"c{i % 5}\t{i % 2}" for i in range(N)]
    (root / "metadata.tsv").write_text("\n".join(labels) + "\n")
    blobs = (rng.standard_normal((SMALL, 8)) + 12 * np.eye(8)[np.arange(SMALL) % 4]).astype("f4")
    blobs[5] = np.nan
    write_zarr(root / "small.zarr", blobs, chunk_rows=1000)
    (root / "projector_config.pbtxt").write_text(
        'embeddings {\n  tensor_name: "big"\n  tensor_path: "vectors.zarr"\n'
        '  metadata_path: "metadata.tsv"\n}\n'
        'embeddings {\n  tensor_name: "small"\n  tensor_path: "small.zarr"\n}\n')
    np.save(root.parent / "dask_vectors.npy", data)
    return root


@pytest.fixture(scope="module")
def data(logdir: Path) -> np.ndarray:
    return np.load(logdir.parent / "dask_vectors.npy")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # The timeout only catches a hang: a busy machine is slow.
    started = Cluster("local:2", timeout=300, store_dir=tmp_path_factory.mktemp("stores"))
    yield started
    started.close()


@pytest.fixture
def apps(serve, logdir: Path, cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[str, str, str]:
    """(with the cluster, without, LOGDIR) over the same LOGDIR, each its own result cache."""
    monkeypatch.setattr(chunked, "SHARD_BYTES", SHARD_BYTES)

    def refuse(self, dtype=None, copy=None):
        raise AssertionError(f"the server read {self.display} whole")

    monkeypatch.setattr(ChunkedVectors, "__array__", refuse)
    return (serve(logdir, cluster=cluster, cache_dir=tmp_path / "with"),
            serve(logdir, cache_dir=tmp_path / "without"), str(logdir))


def _names(stream: list[dict]) -> dict[str, set[str]]:
    """Task name prefix -> the workers that ran such tasks."""
    ran: dict[str, set[str]] = {}
    for task in stream:
        ran.setdefault(task["key"].split("-")[0], set()).add(task["worker"])
    return ran


def _project(base: str, embedding: str = "big", **body) -> tuple[np.ndarray, dict]:
    """(coordinates, info) of a projection, as float32 bytes (NaN rows kept as NaN)."""
    reply = httpx.post(f"{base}/api/projections?wait=true", timeout=300,
                       headers={"Accept": "application/octet-stream"},
                       json={"run": ".", "embedding": embedding, **body})
    assert reply.status_code == 200, reply.text
    return _binary(reply)


def _binary(reply: httpx.Response) -> tuple[np.ndarray, dict]:
    shape = tuple(int(s) for s in reply.headers["X-Shape"].split(","))
    return np.frombuffer(reply.content, "<f4").reshape(shape), json.loads(reply.headers["X-Info"])


def test_same_answers_as_one_process_computed_on_the_workers(apps, cluster, data):
    with_cluster, alone, _ = apps
    embedding = {"run": ".", "embedding": "big"}
    with get_task_stream(client=cluster.client) as stream:
        for metric in ("cosine", "euclidean"):
            params = {**embedding, "index": 4321, "k": 25, "metric": metric}
            got = httpx.get(f"{with_cluster}/api/neighbors", params=params, timeout=60)
            assert got.status_code == 200, got.text
            assert got.json() == httpx.get(f"{alone}/api/neighbors", params=params).json()
        body = {**embedding, "vector": data[99].tolist(), "k": 10}
        got = httpx.post(f"{with_cluster}/api/neighbors", json=body, timeout=60).json()
        assert got == httpx.post(f"{alone}/api/neighbors", json=body).json()
        assert got["neighbors"][0] == {"index": 99, "distance": 0.0}

        pca, info = _project(with_cluster, method="pca")
        reference, reference_info = _project(alone, method="pca")
        np.testing.assert_allclose(info["explained_variance_ratio"],
                                   reference_info["explained_variance_ratio"], atol=1e-6)
        np.testing.assert_allclose(pca, reference, atol=1e-3)
        assert info["invalid_rows"] == 1 and info["cluster"] == "local:2"

        custom = {"method": "custom", "params": {"column": "label", "left": "c0", "right": "c4",
                                                 "up": "c1", "down": "c2"}}
        axes, info = _project(with_cluster, **custom)
        reference, reference_info = _project(alone, **custom)
        assert info["matches"] == reference_info["matches"]
        np.testing.assert_allclose(axes, reference, rtol=1e-5, atol=1e-4)
    search = {**embedding, "column": "label", "query": "c3"}
    assert httpx.get(f"{with_cluster}/api/search", params=search).json() == \
        httpx.get(f"{alone}/api/search", params=search).json()

    ran = _names(stream.data)
    workers = set(cluster.workers())
    # "shard": reading a shard into a worker's memory; the rest run on the shards held there.
    # project_into: the coordinates written to the cache by the workers, then the tiles.
    for task in ("shard", "shards_knn", "sum_over", "project_into", "shard_side_sums",
                 "level_counts", "place_shard", "write_group"):
        assert ran.get(task, set()) <= workers and ran.get(task), (task, ran)
    assert ran["shards_knn"] == workers  # both workers scanned the shards they hold


@pytest.mark.parametrize(("method", "params"), [
    ("tsne", {"n_iter": 100, "perplexity": 20}),
    ("umap", {"n_neighbors": 15, "n_epochs": 100}),
])
def test_a_sample_is_fitted_on_a_worker_and_the_workers_place_the_rest(apps, cluster, monkeypatch,
                                                                       method, params):
    monkeypatch.setattr(chunked, "SHARD_BYTES", 1000 * 8 * 4)  # 4 shards of 1,000 rows
    monkeypatch.setattr(sample_fit, "SAMPLE_ROWS", 600)
    monkeypatch.setattr(sample_fit, "PLACE_ROWS", 500)  # each shard placed by two tasks
    with get_task_stream(client=cluster.client) as stream:
        coordinates, info = _project(apps[0], "small", method=method, params=params)
    assert coordinates.shape == (SMALL, 2) and info["invalid_rows"] == 1
    assert info["sample_rows"] in (599, 600) and info["shards"] == 4
    assert info["placing_tasks"] == 8 and info["stored"]["tiles"]  # written by the workers
    assert np.isnan(coordinates[5]).all() and np.isfinite(np.delete(coordinates, 5, 0)).all()
    blob = np.arange(SMALL) % 4
    ok = np.isfinite(coordinates[:, 0])
    centres = np.stack([coordinates[ok & (blob == b)].mean(axis=0) for b in range(4)])
    spread = max(np.linalg.norm(coordinates[ok & (blob == b)] - centres[b], axis=1).mean()
                 for b in range(4))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a in range(4) for b in range(a)]
    assert min(gaps) > 2 * spread  # the four blobs stay apart on the map
    ran = _names(stream.data)
    assert len(ran["fit_sample"]) == 1 and ran["place_into"] <= set(cluster.workers())


def test_approximate_index_per_shard_recall(apps, cluster, data):
    vectors = open_chunked(Path(apps[2]) / "vectors.zarr", "vectors.zarr")
    approximate = ShardedIndex(vectors, cluster, approximate=True)
    exact = ExactIndex(data)
    queries = np.random.default_rng(3).choice(np.delete(np.arange(N), 123), 40, replace=False)
    for metric in ("cosine", "euclidean"):
        found, _ = approximate.neighbors_of(queries, 10, metric)
        truth, _ = exact.neighbors_of(queries, 10, metric)
        recall = np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth, strict=True)])
        assert recall >= 0.95, (metric, recall)


def _worker_busy_with(cluster: Cluster, prefixes: tuple[str, ...], seconds: float = 120) -> str:
    """The first worker the scheduler lists as processing a task of the request (by key)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for worker, keys in cluster.client.processing().items():
            if any(str(key).startswith(prefixes) for key in keys):
                return worker
        time.sleep(0.005)
    raise AssertionError(f"no worker ever held a task of {prefixes}")


def test_a_worker_killed_mid_job_is_retried_on_the_others(apps, cluster):
    """The worker is killed only once the scheduler says it is processing the request's tasks,
    so the retry is what brings the right answer."""
    with_cluster, alone, _ = apps
    _, reference = _project(alone, method="pca", params={"spherize": True})
    pids = cluster.client.run(os.getpid)
    job = httpx.post(f"{with_cluster}/api/projections", timeout=60,
                     json={"run": ".", "embedding": "big", "method": "pca",
                           "params": {"spherize": True}}).json()["job"]
    busy = _worker_busy_with(cluster, ("sum_over", "shard_project", "shard"))
    os.kill(pids[busy], signal.SIGKILL)
    deadline = time.monotonic() + 120
    while (status := httpx.get(f"{with_cluster}/api/jobs/{job}").json())["status"] not in (
            "done", "failed"):
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    assert status["status"] == "done", status
    _, info = _binary(httpx.get(f"{with_cluster}/api/jobs/{job}/result", timeout=60,
                                headers={"Accept": "application/octet-stream"}))
    np.testing.assert_allclose(info["explained_variance_ratio"],
                               reference["explained_variance_ratio"], atol=1e-6)
    params = {"run": ".", "embedding": "big", "index": 7, "k": 5}
    assert httpx.get(f"{with_cluster}/api/neighbors", params=params, timeout=60).json() == \
        httpx.get(f"{alone}/api/neighbors", params=params).json()


def test_a_cluster_job_streams_the_sample_then_the_placed_shards(apps, monkeypatch):
    """Followed over the WebSocket as the browser does: frames while running, each placing
    more rows, the last one the whole result."""
    monkeypatch.setattr(chunked, "SHARD_BYTES", 1000 * 8 * 4)  # 4 shards of 1,000 rows
    monkeypatch.setattr(sample_fit, "SAMPLE_ROWS", 600)
    with_cluster = apps[0]
    job = httpx.post(f"{with_cluster}/api/projections", timeout=60, json={
        "run": ".", "embedding": "small", "method": "tsne",
        "params": {"n_iter": 100, "perplexity": 20}}).json()["job"]
    frames, headers = [], []
    with connect(with_cluster.replace("http", "ws", 1) + f"/api/jobs/{job}/stream",
                 max_size=None) as socket:
        for message in socket:
            if isinstance(message, str):
                headers.append(json.loads(message))
            else:
                frames.append((headers[-1], np.frombuffer(message, "<f4").reshape(
                    headers[-1]["shape"]).copy()))
    assert headers[-1]["status"] == "done", headers[-1]
    running = [frame for header, frame in frames if not header["final"]]
    assert running and all(h["status"] == "running" for h, _ in frames if not h["final"])
    placed = [int(np.isfinite(frame[:, 0]).sum()) for _, frame in frames]
    assert placed == sorted(placed) and placed[0] in (0, 600) and placed[-1] == SMALL - 1
    assert frames[-1][0]["final"]
    result, _ = _binary(httpx.get(f"{with_cluster}/api/jobs/{job}/result", timeout=60,
                                  headers={"Accept": "application/octet-stream"}))
    np.testing.assert_array_equal(frames[-1][1], result)


def test_a_layout_too_large_to_send_whole_fills_its_early_tiles_as_shards_finish(apps,
                                                                                monkeypatch):
    """Over ``WHOLE_BYTES`` (lowered here) a cluster's t-SNE publishes a thin frame, every
    stride-th row as placing tasks end: its early tiles grow while it runs, hold only rows at
    multiples of the stride, at their final coordinates, and carry no column."""
    monkeypatch.setattr(chunked, "SHARD_BYTES", 1000 * 8 * 4)  # 4 shards of 1,000 rows
    monkeypatch.setattr(sample_fit, "SAMPLE_ROWS", 600)
    monkeypatch.setattr(sample_fit, "PLACE_ROWS", 250)  # 16 placing tasks
    monkeypatch.setattr(sample_fit, "WHOLE_BYTES", 1)
    monkeypatch.setattr(sample_fit, "EARLY_POINTS", 1000)  # stride 4 over 4,000 rows
    base = apps[0]
    job = httpx.post(f"{base}/api/projections", timeout=60, json={
        "run": ".", "embedding": "small", "method": "tsne",
        "params": {"n_iter": 100, "perplexity": 20}}).json()["job"]
    early = []
    deadline = time.monotonic() + 300  # only catches a hang
    while time.monotonic() < deadline:
        tile = httpx.get(f"{base}/api/jobs/{job}/tiles/0/0/0", params={"early": "true"},
                         timeout=60)
        if tile.headers["X-Order"] != "random":
            break  # done: the computed tiles answer
        early.append(read_tile(tile, 2)[:2])
        time.sleep(0.05)
    status = httpx.get(f"{base}/api/jobs/{job}").json()["status"]
    assert status == "done"
    result, _ = _binary(httpx.get(f"{base}/api/jobs/{job}/result", timeout=60,
                                  headers={"Accept": "application/octet-stream"}))
    counts = [rows.size for rows, _ in early]
    assert counts and counts[0] == 0 and max(counts) > 0  # nothing placed, then shards
    assert max(counts) <= SMALL // 4
    for rows, xy in early:
        assert (rows % 4 == 0).all()
        np.testing.assert_array_equal(xy, result[rows])  # where the workers placed them


def test_rest_neighbours_use_the_shards_approximate_index_above_the_budget(
        apps, cluster, logdir, monkeypatch):
    """Above the exact budget (lowered here to 0 values) a REST query asks each shard's HNSW
    graph, built on the workers, and re-scores the candidates exactly."""
    monkeypatch.setattr(dispatch, "EXACT_BUDGET", 0)
    graphs = lambda: __import__(  # noqa: E731  (a lambda: pickled by value to the workers)
        "projector_core.distributed.shard_tasks", fromlist=["_GRAPHS"])._GRAPHS
    def built() -> set:
        return {key for keys in cluster.client.run(lambda: [repr(k) for k in graphs()]).values()
                for key in keys if "small.zarr" in key}

    assert built() == set()
    small = np.asarray(zarr.open_array(str(logdir / "small.zarr"), mode="r")[:], np.float32)
    exact = ExactIndex(small)
    recalls = []
    for index in (0, 17, 1234, 3999):
        got = httpx.get(f"{apps[0]}/api/neighbors", timeout=60, params={
            "run": ".", "embedding": "small", "index": index, "k": 10, "metric": "euclidean"})
        assert got.status_code == 200, got.text
        found = [n["index"] for n in got.json()["neighbors"]]
        truth, _ = exact.neighbors_of([index], 10, "euclidean")
        recalls.append(len(set(found) & set(truth[0].tolist())) / 10)
        distances = np.linalg.norm(small[found] - small[index], axis=1)
        np.testing.assert_allclose([n["distance"] for n in got.json()["neighbors"]], distances,
                                   rtol=1e-4, atol=1e-4)
    assert built() and all("euclidean" in key for key in built())
    assert np.mean(recalls) >= 0.9, recalls


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(url: str, process: subprocess.Popen, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer")


def test_external_scheduler_and_workers_then_the_scheduler_goes_away(logdir, data, tmp_path):
    dask = Path(sys.executable).with_name("dask")
    port, web = _free_port(), _free_port()
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--no-dashboard"], **quiet)
    workers = [subprocess.Popen([dask, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                                 "--no-dashboard", "--no-nanny"], **quiet) for _ in range(2)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PROJECTOR_CACHE_DIR": str(tmp_path / "cache")}
    server = subprocess.Popen([sys.executable, "-m", "projector.server.cli", "serve", str(logdir), "--port",
                               str(web), "--dask", address, "--dask-timeout", "20"],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        base = f"http://127.0.0.1:{web}"
        _wait_http(f"{base}/api/health", server)
        params = {"run": ".", "embedding": "big", "index": 11, "k": 10, "metric": "euclidean"}
        got = httpx.get(f"{base}/api/neighbors", params=params, timeout=60)
        assert got.status_code == 200, got.text
        indices, _ = ExactIndex(data).neighbors_of([11], 10, "euclidean")
        assert [n["index"] for n in got.json()["neighbors"]] == indices[0].tolist()

        scheduler.kill()
        scheduler.wait(10)
        gone = httpx.get(f"{base}/api/neighbors", params=params, timeout=120)
        assert gone.status_code == 503 and "Dask cluster" in gone.json()["detail"], gone.text
        assert httpx.get(f"{base}/api/health").status_code == 200  # the server stays up
    finally:
        for process in (server, *workers, scheduler):
            process.kill()
            process.wait(10)
