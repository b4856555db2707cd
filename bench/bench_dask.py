"""One exact kNN query and one PCA over a zarr N x D, on a 2-worker Dask cluster vs one process.

Both read the same zarr (written once, in chunks, under --dir). One process: the
single-machine kernels (kernels/knn.py ExactIndex, kernels/pca.py) over the matrix read into
its memory. Cluster: a LocalCluster of --workers processes (1 thread each) on 127.0.0.1 that
read their shards from the zarr and keep them; the server process never holds the matrix.
The two run one after the other in the same process, so at most one copy is in memory at a
time. Goal on a 2-core machine (where the cluster cannot be faster): cluster <= 1.5x one
process. Also prints the bytes moved between the server and the workers per query.

    python bench/bench_dask.py [--n 4000000] [--d 256] [--k 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import numpy as np
from harness import machine_info, timed_together

from projector_core.distributed.cluster import Cluster
from projector_core.distributed.knn import ShardedIndex
from projector_core.distributed.pca import sharded_pca
from projector_core.formats.chunked import open_chunked
from projector_core.formats.chunked_writer import write_zarr
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.pca import pca

BLOCK_ROWS = 65_536  # 64 MiB of 256-D float32: the zarr chunk, and one shard


def zarr_of(folder: Path, n: int, d: int) -> Path:
    """The bench zarr, written once in blocks (never the whole matrix in memory)."""
    path = folder / f"bench_{n}x{d}.zarr"
    if path.is_dir():
        return path
    rng = np.random.default_rng(0)
    scales = np.geomspace(3.0, 0.3, d).astype(np.float32)  # a spectrum PCA can resolve

    def blocks():
        for start in range(0, n, BLOCK_ROWS):
            rows = min(BLOCK_ROWS, n - start)
            yield rng.standard_normal((rows, d), dtype=np.float32) * scales

    started = time.perf_counter()
    write_zarr(path, blocks(), chunk_rows=BLOCK_ROWS)
    print(f"wrote {path} in {time.perf_counter() - started:.1f} s")
    return path


def one_process(vectors, query_row: int, k: int, repeats: int) -> tuple[dict, object, tuple]:
    """The single-machine kernels over the matrix read into this process's memory."""
    started = time.perf_counter()
    data = np.asarray(vectors)
    index = ExactIndex(data)
    print(f"one process: read + norms        {time.perf_counter() - started:8.2f} s")
    times = timed_together({"knn": lambda: index.neighbors_of([query_row], k, "cosine")}, repeats)
    started = time.perf_counter()
    result = pca(data, 10)
    times["pca"] = time.perf_counter() - started
    return times, result, index.neighbors_of([query_row], k, "cosine")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=4_000_000)
    parser.add_argument("--d", type=int, default=256)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dir", default="/tmp/projector-bench")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    gib = args.n * args.d * 4 / 2**30
    print(f"data: {args.n} x {args.d} float32 zarr ({gib:.2f} GiB), k={args.k}, "
          f"{args.workers} workers x 1 thread")
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    vectors = open_chunked(zarr_of(folder, args.n, args.d), "bench.zarr")
    query_row = 12345 % args.n

    single, single_pca, expected = one_process(vectors, query_row, args.k, args.repeats)
    gc.collect()

    # -- the cluster: workers read and hold the shards -----------------------------------------
    cluster = Cluster(f"local:{args.workers}", timeout=600)
    try:
        sharded = ShardedIndex(vectors, cluster)
        started = time.perf_counter()
        cluster.reduce(lambda part: (part.index.n,), cluster.held(vectors))
        print(f"cluster: workers read + norms    {time.perf_counter() - started:8.2f} s "
              f"({len(vectors.shards())} shards)")
        distributed = timed_together(
            {"knn": lambda: sharded.neighbors_of([query_row], args.k, "cosine")}, args.repeats)
        got = sharded.neighbors_of([query_row], args.k, "cosine")
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
        started = time.perf_counter()
        cluster_pca = sharded_pca(vectors, cluster, 10)
        distributed["pca"] = time.perf_counter() - started
        gap = np.abs(np.subtract(cluster_pca.explained_variance_ratio,
                                 single_pca.explained_variance_ratio)).max()
    finally:
        cluster.close()

    for name, label in (("knn", "kNN query (cosine)"), ("pca", "PCA (10 components)")):
        ratio = distributed[name] / single[name]
        verdict = "ok" if ratio <= 1.5 else "over the 1.5x goal"
        print(f"{label:22s} one process {single[name] * 1e3:9.1f} ms   cluster "
              f"{distributed[name] * 1e3:9.1f} ms   ratio {ratio:5.2f}x ({verdict})")
    print(f"kNN: identical indices and distances; PCA ratios differ by at most {gap:.1e}")
    shards = len(vectors.shards())
    print(f"bytes moved per kNN query: {sharded.last_bytes_moved} + {args.d * 4} B for the "
          f"query row ({args.workers} worker tasks x (query {args.d * 4} B + top-{args.k} "
          f"int64 indices and float64 distances)), while {vectors.nbytes / 2**20:.0f} MiB in "
          f"{shards} shards stayed on the workers")
    moved_pca = args.n * 10 * 4 + args.workers * (args.d * args.d * 8 + args.d * 8)
    print(f"bytes moved by PCA: about {moved_pca / 2**20:.1f} MiB (N x 10 float32 coordinates "
          f"back, one D x D partial sum per worker)")


if __name__ == "__main__":
    main()
