"""Which neighbour index a sampled t-SNE / UMAP fit should use (kernels/sampling.py).

A sampled fit needs two searches: each sample point's k nearest other sample points (k = 90
for t-SNE at perplexity 30, 14 for UMAP) and, for every point placed afterwards, its nearest
sample points (15 for openTSNE's transform, 15 for UMAP's). Contenders: openTSNE's Annoy
index (its default above 1,000 points), umap-learn's NN-descent, and the project's own
indexes, exact (kernels/knn.py), usearch HNSW with exact re-scoring (kernels/ann.py), and
the float32 usearch graph the sampled fits use (kernels/sample_index.py).
Printed: seconds of each step, and recall@k against the exact answer (2,000 queries). One
thread each (the projections run one kernel thread per job on this machine).

    python bench/bench_sample_neighbors.py [--sample 50000] [--queries 50000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from harness import machine_info
from openTSNE.nearest_neighbors import Annoy
from sklearn.datasets import make_blobs
from sklearn.utils import check_random_state

from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sample_index import SampleIndex

CHECKED = 2000  # queries whose recall is measured


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / exact.shape[1]
                          for a, b in zip(found[:CHECKED], exact[:CHECKED], strict=True)]))


def timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=50_000)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    data, _ = make_blobs(args.sample + args.queries, 50, centers=30, cluster_std=2.0,
                         random_state=0)
    data = data.astype(np.float32)
    sample, queries = data[:args.sample], data[args.sample:]
    rows = np.arange(args.sample)
    exact = ExactIndex(sample)
    (self90, _), s = timed(lambda: exact.neighbors_of(rows, 90, "euclidean"))
    print(f"sample kNN k=90 (t-SNE): exact {s:.1f} s", flush=True)
    annoy = Annoy(sample, 90, n_jobs=1, random_state=0)
    (found, _), s = timed(annoy.build)
    print(f"  openTSNE Annoy build + kNN {s:.1f} s, recall {recall(found, self90):.3f}")
    hnsw, build_s = timed(lambda: ApproximateIndex(exact, "euclidean"))
    (found, _), s = timed(lambda: hnsw.neighbors_of(rows, 90))
    print(f"  usearch build {build_s:.1f} s + kNN {s:.1f} s, recall {recall(found, self90):.3f}")
    ours, build_s = timed(lambda: SampleIndex(sample))
    (found, _), s = timed(lambda: ours.self_neighbors(90))
    print(f"  sample index build {build_s:.1f} s + kNN {s:.1f} s, "
          f"recall {recall(found, self90):.3f}", flush=True)
    (self14, _), s = timed(lambda: exact.neighbors_of(rows[:CHECKED], 14, "euclidean"))
    (found, _), s = timed(lambda: hnsw.neighbors_of(rows, 14))
    print(f"sample kNN k=14 (UMAP): usearch (index above) {s:.1f} s, "
          f"recall {recall(found, self14):.3f}", flush=True)
    (found, _), s = timed(lambda: ours.self_neighbors(14))
    print(f"  sample index (above) {s:.1f} s, recall {recall(found, self14):.3f}", flush=True)
    from umap.umap_ import nearest_neighbors

    nearest_neighbors(sample[:2000], 15, "euclidean", {}, False, check_random_state(0),
                      n_jobs=1)  # numba compiles on first use; not counted
    (found, _, _), s = timed(lambda: nearest_neighbors(
        sample, 15, "euclidean", {}, False, check_random_state(0), n_jobs=1))
    print(f"  umap-learn NN-descent {s:.1f} s (after compiling), "
          f"recall {recall(found[:, 1:], self14):.3f}", flush=True)
    (near15, _), s = timed(lambda: exact.query(queries, 15, "euclidean"))
    print(f"placement queries k=15: exact {s:.1f} s")
    (found, _), s = timed(lambda: annoy.query(queries, 15))
    print(f"  openTSNE Annoy (index above) {s:.1f} s, recall {recall(found, near15):.3f}")
    (found, _), s = timed(lambda: hnsw.query(queries, 15))
    print(f"  usearch (index above) {s:.1f} s, recall {recall(found, near15):.3f}")
    (found, _), s = timed(lambda: ours.query(queries, 15))
    print(f"  sample index (above) {s:.1f} s, recall {recall(found, near15):.3f}")


if __name__ == "__main__":
    main()
