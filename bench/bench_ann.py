"""Approximate kNN libraries: build time, query time and recall@10 against exact.

Data: clustered points on a low-dimensional manifold embedded in D dims plus noise,
the shape of real embeddings (uniform random high-dimensional data has no neighbour
structure for any index to find). Queries are held-out points from the same
distribution; the ground truth is our exact kNN. Libraries not installed are skipped
(pynndescent ships with umap-learn; ``pip install hnswlib faiss-cpu usearch`` for the
rest, bench only).

    python bench/bench_ann.py [--n 100000] [--d 768] [--metric cosine] [--queries 1000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable

import numpy as np
from harness import machine_info

from projector_core.kernels.knn import ExactIndex

K = 10
Builder = Callable[[np.ndarray, str], Callable[[np.ndarray, int], np.ndarray]]




def make_data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Gaussian clusters in a 32-dim subspace, rotated into d dims, plus small noise."""
    rng = np.random.default_rng(seed)
    intrinsic = min(32, d)
    centres = rng.standard_normal((200, intrinsic)) * 3
    labels = rng.integers(0, len(centres), n)
    low = centres[labels] + rng.standard_normal((n, intrinsic))
    rotation, _ = np.linalg.qr(rng.standard_normal((d, intrinsic)))
    data = np.empty((n, d), np.float32)
    step = 65536  # in row blocks (the same draws as one call): 1M x 128 never holds float64 whole
    for start in range(0, n, step):
        block = low[start:start + step]
        data[start:start + step] = block @ rotation.T + 0.05 * rng.standard_normal((len(block), d))
    return data


def unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30)


def pynndescent_builder(data: np.ndarray, metric: str):
    from pynndescent import NNDescent

    index = NNDescent(data, metric=metric, random_state=0, n_jobs=-1)
    index.prepare()
    return lambda q, k: index.query(q, k=k, epsilon=0.2)[0]


def hnswlib_builder(data: np.ndarray, metric: str):
    import hnswlib

    index = hnswlib.Index(space="cosine" if metric == "cosine" else "l2", dim=data.shape[1])
    index.init_index(max_elements=len(data), ef_construction=200, M=16, random_seed=0)
    index.add_items(data, np.arange(len(data)), num_threads=os.cpu_count() or 1)
    index.set_ef(100)
    return lambda q, k: index.knn_query(q, k=k)[0]


def faiss_hnsw_builder(data: np.ndarray, metric: str):
    import faiss

    if metric == "cosine":
        index = faiss.IndexHNSWFlat(data.shape[1], 16, faiss.METRIC_INNER_PRODUCT)
        data = unit_rows(data)
    else:
        index = faiss.IndexHNSWFlat(data.shape[1], 16)
    index.hnsw.efConstruction = 200
    index.add(data)
    index.hnsw.efSearch = 100

    def query(q: np.ndarray, k: int) -> np.ndarray:
        return index.search(unit_rows(q) if metric == "cosine" else q, k)[1]

    return query


def usearch_builder(dtype: str) -> Builder:
    def build(data: np.ndarray, metric: str):
        from usearch.index import Index

        index = Index(
            ndim=data.shape[1],
            metric="cos" if metric == "cosine" else "l2sq",
            dtype=dtype,
            connectivity=16,
            expansion_add=200,
            expansion_search=100,
        )
        index.add(np.arange(len(data)), data, threads=os.cpu_count() or 1)
        return lambda q, k: index.search(q, k, threads=os.cpu_count() or 1).keys

    return build


def projector_builder(data: np.ndarray, metric: str):
    from projector_core.kernels.ann import ApproximateIndex

    index = ApproximateIndex(ExactIndex(data), metric)
    return lambda q, k: index.query(q, k, metric)[0]


CANDIDATES: list[tuple[str, str, Builder]] = [
    ("pynndescent epsilon=0.2", "pynndescent", pynndescent_builder),
    ("hnswlib M=16 ef=200/100", "hnswlib", hnswlib_builder),
    ("faiss HNSWFlat M=16 ef=200/100", "faiss", faiss_hnsw_builder),
    ("usearch f32 M=16 ef=200/100", "usearch", usearch_builder("f32")),
    ("usearch f16 M=16 ef=200/100", "usearch", usearch_builder("f16")),
    ("usearch i8 M=16 ef=200/100", "usearch", usearch_builder("i8")),
    ("projector ApproximateIndex (ours)", "usearch", projector_builder),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--metric", choices=("cosine", "euclidean"), default="cosine")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--only", default="", help="comma-separated module names to run")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    both = make_data(args.n + args.queries, args.d)
    data, queries = both[: args.n], both[args.n :]
    print(
        f"data: {args.n} x {args.d} float32, {args.queries} held-out queries, "
        f"metric {args.metric}, recall@{K}"
    )
    start = time.perf_counter()
    exact = ExactIndex(data).query(queries, K, args.metric)[0]
    exact_s = time.perf_counter() - start
    print(
        f"{'exact (ours, brute force)':36s} build      0.0 s  query {exact_s / args.queries * 1e3:7.2f}"
        f" ms/q  recall 1.000"
    )
    only = {name for name in args.only.split(",") if name}
    for label, module, builder in CANDIDATES:
        if only and module not in only:
            continue
        if importlib.util.find_spec(module) is None:
            print(f"{label:36s} skipped: {module} not installed")
            continue
        builder(data[:2000], args.metric)(queries[:10], K)  # warm-up: JIT, thread pools
        start = time.perf_counter()
        search = builder(data, args.metric)
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        found = np.asarray(search(queries, K))
        query_s = time.perf_counter() - start
        recall = np.mean([len(set(f) & set(e)) / K for f, e in zip(found, exact, strict=True)])
        print(
            f"{label:36s} build {build_s:7.1f} s  query {query_s / args.queries * 1e3:7.2f} ms/q"
            f"  recall {recall:.3f}"
        )


if __name__ == "__main__":
    main()
