"""One exact kNN query over N x D float32: ours vs a bare numpy scan vs faiss IndexFlat.

The bare scan (``data @ q``, no top-k) reads every byte once: the memory-bandwidth
floor any exact method pays. faiss (``pip install faiss-cpu``, bench only) is the
reference library. Prints machine info, each time, and ratios.

    python bench/bench_knn.py [--n 1000000] [--d 768] [--k 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from projector_core.kernels.knn import ExactIndex


def machine_info() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {mem:.0f} GiB, "
        f"python {platform.python_version()}, numpy {np.__version__}"
    )


def timed(fn, repeats: int) -> float:
    """Median seconds of ``repeats`` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def make_data(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    data = np.empty((n, d), np.float32)
    for start in range(0, n, 100_000):
        rng.standard_normal(out=data[start : start + 100_000], dtype=np.float32)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=768)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    print(f"data: {args.n} x {args.d} float32 ({args.n * args.d * 4 / 2**30:.2f} GiB), k={args.k}")
    data = make_data(args.n, args.d)
    query = data[12345 % args.n].copy()

    floor = timed(lambda: data @ query, args.repeats)
    print(f"bare numpy scan (data @ q)        {floor * 1e3:8.1f} ms")

    start = time.perf_counter()
    index = ExactIndex(data)
    print(f"ours: index build (norms, once)   {(time.perf_counter() - start) * 1e3:8.1f} ms")
    ours = {}
    for metric in ("cosine", "euclidean"):
        ours[metric] = timed(lambda m=metric: index.query(query, args.k, m), args.repeats)
        print(
            f"ours: one {metric:9s} query         {ours[metric] * 1e3:8.1f} ms  "
            f"ratio to floor {ours[metric] / floor:5.2f}"
        )

    try:
        import faiss
    except ImportError:
        print("faiss not installed (pip install faiss-cpu): reference skipped")
        return
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads")
    flat = faiss.IndexFlatL2(args.d)
    flat.add(data)
    q2 = query[None, :]
    ref_l2 = timed(lambda: flat.search(q2, args.k + 1), args.repeats)
    del flat
    print(
        f"faiss IndexFlatL2 one query        {ref_l2 * 1e3:8.1f} ms  "
        f"ours/faiss {ours['euclidean'] / ref_l2:5.2f}"
    )
    normed = data / np.maximum(np.linalg.norm(data, axis=1, keepdims=True), 1e-30)
    flat = faiss.IndexFlatIP(args.d)
    flat.add(normed)
    del normed
    qn = q2 / np.linalg.norm(q2)
    ref_ip = timed(lambda: flat.search(qn, args.k + 1), args.repeats)
    print(
        f"faiss IndexFlatIP one query        {ref_ip * 1e3:8.1f} ms  "
        f"ours/faiss {ours['cosine'] / ref_ip:5.2f}  (faiss on pre-normalised data)"
    )


if __name__ == "__main__":
    main()
