"""Comparing two embeddings of the same points: the all-kNN of both and the per-point overlap.

Data as bench_ann.py (clustered points on a 32-dim manifold in D dims); B is A plus noise
with 1% of the rows permuted among themselves, the shape of two training steps. Above the
exact budget the compare runs on the approximate (HNSW) indexes, graph builds included in
the time; the reference beside it is the project's exact all-kNN, timed on a sample of rows
in the same process and scaled to N (its cost is linear in the rows queried). Recall@k is
measured on a sample against the exact index, as the API reports it.

    python bench/bench_compare.py [--n 1000000] [--d 128] [--k 10] [--metric cosine]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_ann import make_data
from harness import machine_info

from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.compare import compare, needs_approximate
from projector_core.kernels.knn import ExactIndex

GOAL_SECONDS = 60.0
EXACT_SAMPLE = 512


def pair(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = make_data(n, d, seed)
    rng = np.random.default_rng(seed + 1)
    b = a + 0.01 * rng.standard_normal(a.shape, dtype=np.float32)
    moved = rng.choice(n, max(2, n // 100), replace=False)
    b[moved] = b[np.roll(moved, 1)]
    return a, b, moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--metric", default="cosine", choices=["cosine", "euclidean"])
    args = parser.parse_args()
    print(machine_info())
    a, b, moved = pair(args.n, args.d)
    print(f"data: 2 x {args.n:,} x {args.d} float32, k = {args.k}, {args.metric}; "
          f"{moved.size:,} rows permuted")

    start = time.perf_counter()
    exact_a, exact_b = ExactIndex(a), ExactIndex(b)
    approximate = needs_approximate(args.n, args.d, args.d)
    if approximate:
        index_a = ApproximateIndex(exact_a, args.metric)
        index_b = ApproximateIndex(exact_b, args.metric)
    else:
        index_a, index_b = exact_a, exact_b
    built = time.perf_counter() - start
    result = compare(index_a, index_b, args.k, args.metric, top=2 * moved.size)
    total = time.perf_counter() - start

    rows = np.random.default_rng(2).choice(args.n, min(EXACT_SAMPLE, args.n), replace=False)
    t0 = time.perf_counter()
    exact_a.neighbors_of(rows, args.k, args.metric)
    exact_b.neighbors_of(rows, args.k, args.metric)
    exact_total = (time.perf_counter() - t0) * args.n / rows.size

    found = np.isin(moved, result.most_changed[:moved.size * 2]).mean()
    print(f"neighbours: {result.neighbors}"
          + (f", recall@{args.k} {result.recall:.4f} on a sample" if result.recall is not None else ""))
    mean = np.nanmean(result.per_point)
    print(f"compare: {total:.1f} s (index builds {built:.1f} s); mean overlap {mean:.3f}; "
          f"{found:.0%} of the permuted rows among the top {moved.size * 2:,} most changed")
    print(f"reference, exact all-kNN of both (scaled from {rows.size} rows): {exact_total:.1f} s; "
          f"ratio {exact_total / total:.1f}x faster")
    print(f"goal: <= {GOAL_SECONDS:.0f} s at 1M x 128: {'met' if total <= GOAL_SECONDS else 'NOT met'}"
          f" at this size ({args.n:,} x {args.d})")


if __name__ == "__main__":
    main()
