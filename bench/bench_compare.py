"""Comparing two embeddings of the same points: the all-kNN of both and the per-point overlap.

Data as bench_ann.py (clustered points on a 32-dim manifold in D dims); B is A plus noise
with 1% of the rows permuted among themselves, the shape of two training steps. Above the
exact budget the compare runs on k-means cells (kernels/cells.py), cells included in the
time, as the API does. Beside it, in the same process: the exact all-kNN of both, timed on
a sample of rows and scaled to N (its cost is linear in the rows queried), and the previous
approach, an HNSW graph (usearch) built and queried for every row, timed on the first
``--hnsw-rows`` rows and scaled linearly (a lower bound: HNSW grows faster than N). Recall@k
is measured on a sample against the exact index, as the API reports it. ``--previous COMMIT``
also times that commit's CellIndex (read with ``git show``) on A, in this process, for the
same-run ratio of a change to the cells.

    python bench/bench_compare.py [--n 1000000] [--d 128] [--k 10] [--metric cosine] [--probes 6]
                                  [--spectrum subspace|spread] [--previous COMMIT]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
from bench_ann import make_data
from harness import machine_info

from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.cells import PROBES, CellIndex
from projector_core.kernels.compare import compare, needs_approximate
from projector_core.kernels.knn import ExactIndex

GOAL_SECONDS = 60.0
EXACT_SAMPLE = 512
# compare()'s progress: A's cells are made in [0, 0.1) (cells._PARTITION_SHARE), scanned to 0.5; B's likewise
STAGES = {"A cells made": 0.1, "A scanned": 0.5, "B cells made": 0.6, "B scanned": 1.0}


def spread(n: int, d: int, seed: int = 0) -> np.ndarray:
    """200 Gaussian clusters using all d dims, the i-th principal direction with variance ~1/i
    (a decaying spectrum, as trained embeddings have): no small subspace holds the neighbours."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((200, d)) * 3
    labels = rng.integers(0, len(centres), n)
    scale = (1.0 + np.arange(d)) ** -0.5
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    data = np.empty((n, d), np.float32)
    for start in range(0, n, 65536):
        block = centres[labels[start:start + 65536]] + rng.standard_normal((min(65536, n - start), d))
        data[start:start + 65536] = (block * scale) @ rotation.T
    return data


def pair(n: int, d: int, seed: int = 0, spectrum: str = "subspace"
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = make_data(n, d, seed) if spectrum == "subspace" else spread(n, d, seed)
    rng = np.random.default_rng(seed + 1)
    b = a + 0.01 * rng.standard_normal(a.shape, dtype=np.float32)
    moved = rng.choice(n, max(2, n // 100), replace=False)
    b[moved] = b[np.roll(moved, 1)]
    return a, b, moved


def hnsw_seconds(data: np.ndarray, rows: int, k: int, metric: str) -> float:
    """Build an HNSW graph of the first ``rows`` rows and find every row's k neighbours."""
    start = time.perf_counter()
    index = ApproximateIndex(ExactIndex(np.ascontiguousarray(data[:rows])), metric)
    index.build(k, metric)
    return time.perf_counter() - start


def previous_cells(commit: str) -> type:
    """``CellIndex`` as it was at ``commit``: this repository's own source, run to time it."""
    source = subprocess.run(["git", "show", f"{commit}:projector_core/kernels/cells.py"],
                            cwd=Path(__file__).parent, capture_output=True, text=True,
                            check=True).stdout
    module = types.ModuleType("previous_cells")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, f"{commit}:cells.py", "exec"), module.__dict__)
    return module.CellIndex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--metric", default="cosine", choices=["cosine", "euclidean"])
    parser.add_argument("--probes", type=int, default=PROBES, help="cells scanned per cell")
    parser.add_argument("--spectrum", default="subspace", choices=["subspace", "spread"],
                        help="subspace: clusters in 32 dims (bench_ann's data); spread: variance "
                             "~1/i over all dims")
    parser.add_argument("--previous", help="a commit whose CellIndex is timed on A beside this one")
    parser.add_argument("--hnsw-rows", type=int, default=50_000, help="0: skip the HNSW reference")
    args = parser.parse_args()
    print(machine_info())
    a, b, moved = pair(args.n, args.d, spectrum=args.spectrum)
    print(f"data ({args.spectrum}): 2 x {args.n:,} x {args.d} float32, k = {args.k}, {args.metric}; "
          f"{moved.size:,} rows permuted")

    start, cpu_start = time.perf_counter(), time.process_time()
    exact_a, exact_b = ExactIndex(a), ExactIndex(b)
    approximate = needs_approximate(args.n, args.d, args.d)
    index_a, index_b = ((CellIndex(exact_a, probes=args.probes), CellIndex(exact_b, probes=args.probes))
                        if approximate else (exact_a, exact_b))
    marks: dict[str, float] = {}
    cpu_a: list[float] = []  # CPU-seconds until A's graph is built

    def progress(done: float) -> None:
        for name, at in STAGES.items():
            if done >= at and name not in marks:
                marks[name] = time.perf_counter() - start
                if name == "A scanned":
                    cpu_a.append(time.process_time() - cpu_start)

    result = compare(index_a, index_b, args.k, args.metric, top=2 * moved.size, progress=progress)
    total = time.perf_counter() - start
    cpu = time.process_time() - cpu_start  # all threads: what a machine of our own would need
    load = os.getloadavg()
    stages = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in marks.items())

    rows = np.random.default_rng(2).choice(args.n, min(EXACT_SAMPLE, args.n), replace=False)
    t0 = time.perf_counter()
    truth_a, _ = exact_a.neighbors_of(rows, args.k, args.metric)
    exact_b.neighbors_of(rows, args.k, args.metric)
    exact_total = (time.perf_counter() - t0) * args.n / rows.size

    found = np.isin(moved, result.most_changed[:moved.size * 2]).mean()
    print(f"neighbours: {result.neighbors}"
          + (f", recall@{args.k} {result.recall:.4f} on a sample" if result.recall is not None else ""))
    mean = np.nanmean(result.per_point)
    print(f"compare: {total:.1f} s, {cpu:.1f} CPU-seconds (cumulative: {stages}; then recall and "
          f"overlap); load average {load[0]:.1f} / {load[1]:.1f} at the end; mean overlap "
          f"{mean:.3f}; {found:.0%} of the permuted rows among the top {moved.size * 2:,} most changed")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak memory of this process: {peak:.2f} GiB")
    print(f"reference, exact all-kNN of both (scaled from {rows.size} rows): {exact_total:.1f} s; "
          f"ratio {exact_total / total:.1f}x faster")
    if args.previous and approximate:
        rows_a = np.flatnonzero(exact_a.valid_host & exact_b.valid_host)
        t0, cpu0 = time.perf_counter(), time.process_time()
        before = previous_cells(args.previous)(exact_a, probes=args.probes).build(args.k, args.metric, rows_a)
        previous, previous_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        now, now_cpu = marks.get("A scanned", float("nan")), cpu_a[0]
        position = np.searchsorted(rows_a, rows)
        recall = np.mean([np.intersect1d(t, f).size / args.k
                          for t, f in zip(truth_a, before[position], strict=True)])
        print(f"previous CellIndex ({args.previous}) on A, same process: {previous:.1f} s, "
              f"{previous_cpu:.1f} "
              f"CPU-s (recall@{args.k} {recall:.4f} on {rows.size} rows); this one {now:.1f} s, "
              f"{now_cpu:.1f} CPU-s; ratio {previous / now:.2f}x wall, {previous_cpu / now_cpu:.2f}x CPU; "
              f"load average {os.getloadavg()[0]:.1f}")
    if args.hnsw_rows and approximate:
        sub = min(args.n, args.hnsw_rows)
        hnsw = (hnsw_seconds(a, sub, args.k, args.metric) + hnsw_seconds(b, sub, args.k, args.metric))
        scaled = hnsw * args.n / sub
        print(f"previous approach, HNSW graphs of both built and queried for every row: {hnsw:.1f} s "
              f"at {sub:,} rows, >= {scaled:.0f} s scaled to {args.n:,}; ratio >= {scaled / total:.1f}x")
    print(f"goal: <= {GOAL_SECONDS:.0f} s at 1M x 128: {'met' if total <= GOAL_SECONDS else 'NOT met'}"
          f" at this size ({args.n:,} x {args.d}), load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
