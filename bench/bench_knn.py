"""One exact kNN query over N x D float32: ours vs a bare numpy scan vs faiss IndexFlat.

The bare scan (the product ``data @ q`` alone, no top-k) reads every byte once: the memory-bandwidth
floor any exact method pays. faiss (``pip install faiss-cpu``, bench only) is the
reference library. Prints machine info, each time, and ratios.

    python bench/bench_knn.py [--n 1000000] [--d 768] [--k 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from harness import machine_info, timed_together

from projector_core.kernels.knn import ExactIndex


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
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    print(f"data: {args.n} x {args.d} float32 ({args.n * args.d * 4 / 2**30:.2f} GiB), k={args.k}")
    data = make_data(args.n, args.d)
    query = data[12345 % args.n].copy()

    start = time.perf_counter()
    index = ExactIndex(data)
    print(f"ours: index build (norms, once)    {(time.perf_counter() - start) * 1e3:8.1f} ms")
    # The bare product two ways (BLAS gemv and gemm); the faster one is the floor.
    got = timed_together(
        {
            "gemv": lambda: data @ query,
            "gemm": lambda: query[None, :] @ data.T,
            "cosine": lambda: index.query(query, args.k, "cosine"),
            "euclidean": lambda: index.query(query, args.k, "euclidean"),
        },
        args.repeats,
    )
    floor = min(got["gemv"], got["gemm"])
    print(f"bare numpy scan, data @ q          {got['gemv'] * 1e3:8.1f} ms")
    print(f"bare numpy scan, q[None] @ data.T  {got['gemm'] * 1e3:8.1f} ms")
    for metric in ("cosine", "euclidean"):
        print(
            f"ours: one {metric:9s} query         {got[metric] * 1e3:8.1f} ms  "
            f"ratio to floor {got[metric] / floor:5.2f}"
        )

    try:
        import faiss
    except ImportError:
        print("faiss not installed (pip install faiss-cpu): reference skipped")
        return
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads")
    q2 = query[None, :]
    flat = faiss.IndexFlatL2(args.d)
    flat.add(data)
    got = timed_together(
        {
            "faiss": lambda: flat.search(q2, args.k + 1),
            "ours": lambda: index.query(query, args.k, "euclidean"),
        },
        args.repeats,
    )
    del flat
    print(
        f"faiss IndexFlatL2 one query        {got['faiss'] * 1e3:8.1f} ms  "
        f"ours {got['ours'] * 1e3:.1f} ms, ours/faiss {got['ours'] / got['faiss']:5.2f}"
    )
    normed = data / np.maximum(np.linalg.norm(data, axis=1, keepdims=True), 1e-30)
    flat = faiss.IndexFlatIP(args.d)
    flat.add(normed)
    del normed
    qn = q2 / np.linalg.norm(q2)
    got = timed_together(
        {
            "faiss": lambda: flat.search(qn, args.k + 1),
            "ours": lambda: index.query(query, args.k, "cosine"),
        },
        args.repeats,
    )
    print(
        f"faiss IndexFlatIP one query        {got['faiss'] * 1e3:8.1f} ms  "
        f"ours {got['ours'] * 1e3:.1f} ms, ours/faiss {got['ours'] / got['faiss']:5.2f} "
        "(faiss on pre-normalised data)"
    )


if __name__ == "__main__":
    main()
