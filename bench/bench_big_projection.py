"""t-SNE and UMAP jobs at a million points: time to the first frame, total time, quality.

Data: ``make_blobs`` clusters, float32: 1M x 50 (30 clusters) and an MNIST-sized 70k x 784
(10 clusters; fetch_openml cannot download here, so the size is MNIST's, the data synthetic).
Each projection runs as a job (a JobManager worker thread running
``projector_core.projection.compute.compute``, frames on) with the default parameters, so 1M points
fit a 100k sample and place the rest, and 70k points (below the 100k threshold) are fitted
whole. Printed per case: seconds to the first frame, to the sample's fit done (the job's
progress at the fit's share; a full fit: the end), to the first frame with every point
placed, total, the job's info (mode, sample size), and trustworthiness (k=10) on a 10k random
subset beside a full openTSNE (or umap-learn) fit of that same subset: the reference, fitted
in this process, and the gap (reference - ours, goal <= 0.02).

    python bench/bench_big_projection.py [--cases 1m 70k] [--methods tsne umap]
        [--subset 10000] [--sample-size N] [--first-frame-only]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import openTSNE
import umap as umap_learn
from harness import machine_info
from sklearn.datasets import make_blobs

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sampling import FIT_SHARE
from projector_core.projection.compute import compute
from projector_core.projection.methods.fitting import KERNEL_THREADS
from projector_core.projection.params import TsneParams, TsneRequest, UmapParams, UmapRequest

CASES = {"1m": (1_000_000, 50, 30), "70k": (70_000, 784, 10), "200k": (200_000, 50, 30),
         "50k": (50_000, 50, 30)}
RANK_ROWS = 256  # rows per block when ranking distances for trustworthiness


def trustworthiness(data: np.ndarray, embedded: np.ndarray, k: int = 10) -> float:
    """scikit-learn's trustworthiness in bounded memory (it holds two n x n matrices).

    For each point, the embedding's k nearest neighbours that are not among its k nearest in
    the input are penalised by their input-space rank beyond k.
    """
    n = data.shape[0]
    near_embedded, _ = ExactIndex(embedded.astype(np.float32)).neighbors_of(
        np.arange(n), k, "euclidean")
    x = data.astype(np.float64)
    squared = np.einsum("ij,ij->i", x, x)
    penalty = 0.0
    for start in range(0, n, RANK_ROWS):
        rows = np.arange(start, min(n, start + RANK_ROWS))
        dist = squared[rows, None] - 2 * x[rows] @ x.T + squared[None, :]
        dist[np.arange(rows.size), rows] = -np.inf  # the point itself ranks 0
        ranks = np.argsort(np.argsort(dist, axis=1), axis=1)
        picked = np.take_along_axis(ranks, near_embedded[rows], axis=1)
        penalty += np.maximum(picked - k, 0).sum()
    return float(1 - 2.0 / (n * k * (2 * n - 3 * k - 1)) * penalty)


def run_job(method: str, data: np.ndarray, sample_size: int | None,
            first_only: bool = False) -> dict:
    """Seconds to the first frame, to the first complete frame and to done; the result.
    ``first_only`` cancels the job at its first frame."""
    embedding = Embedding.of("bench", "blobs", "bench", vectors=data)
    extra = {} if sample_size is None else {"mode": "sample", "sample_size": sample_size}
    if method == "tsne":
        request = TsneRequest(run="bench", embedding="blobs", method="tsne",
                              params=TsneParams(**extra))
    else:
        request = UmapRequest(run="bench", embedding="blobs", method="umap",
                              params=UmapParams(**extra))
    jobs = JobManager(workers=1)
    started = time.perf_counter()
    job = jobs.submit(lambda ctx: compute(request, embedding, get_backend("cpu"), ctx))
    first = complete = fitted = None
    seen = 0
    while not job.status.finished:
        if fitted is None and job.progress >= FIT_SHARE:
            fitted = time.perf_counter() - started
        frame = job.frame
        if frame is not None and frame.seq != seen:
            seen = frame.seq
            first = first or time.perf_counter() - started
            if first_only:
                jobs.shutdown()
                return {"first": first}
            if complete is None and np.isfinite(frame.coordinates[:, 0]).all():
                complete = time.perf_counter() - started
        time.sleep(0.05)
    total = time.perf_counter() - started
    jobs.shutdown()
    assert job.status is JobStatus.DONE, job.error
    return {"first": first or total, "complete": complete or total, "total": total,
            "fitted": fitted or total,
            "info": job.result.info, "coordinates": job.result.coordinates}


def reference_fit(method: str, data: np.ndarray) -> np.ndarray:
    if method == "tsne":
        return np.asarray(openTSNE.TSNE(n_jobs=KERNEL_THREADS, random_state=0).fit(data))
    return umap_learn.UMAP(random_state=0).fit_transform(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--methods", nargs="+", default=["tsne", "umap"],
                        choices=["tsne", "umap"])
    parser.add_argument("--subset", type=int, default=10_000)
    parser.add_argument("--sample-size", type=int, default=None,
                        help='fit a sample of this size (params.mode "sample"); default: the '
                             "projections' defaults (mode auto)")
    parser.add_argument("--first-frame-only", action="store_true",
                        help="time the first frame, then cancel (no quality figures)")
    args = parser.parse_args()
    versions = f"openTSNE {openTSNE.__version__}, umap-learn {umap_learn.__version__}"
    print(f"machine: {machine_info(versions)}")
    print(f"{KERNEL_THREADS} thread(s) per job; 'reference' is a full fit of the subset")
    for case in args.cases:
        n, dim, centers = CASES[case]
        data, _ = make_blobs(n, dim, centers=centers, cluster_std=2.0, random_state=0)
        data = data.astype(np.float32)
        subset = np.sort(np.random.default_rng(1).choice(n, min(n, args.subset), replace=False))
        for method in args.methods:
            ours = run_job(method, data, args.sample_size, args.first_frame_only)
            if args.first_frame_only:
                print(f"{case} {method}: first frame {ours['first']:.2f} s", flush=True)
                continue
            started = time.perf_counter()
            reference = reference_fit(method, data[subset])
            reference_s = time.perf_counter() - started
            t_ours = trustworthiness(data[subset], ours["coordinates"][subset])
            t_ref = trustworthiness(data[subset], reference)
            info = ours["info"]
            fitted = ours["fitted"] if info["mode"] == "sample" else ours["total"]
            print(f"{case} {method}: first frame {ours['first']:.2f} s, sample fitted "
                  f"{fitted:.1f} s, every point placed "
                  f"{ours['complete']:.1f} s, done {ours['total']:.1f} s "
                  f"(mode {info['mode']}, sample {info['sample_size']}); trustworthiness on "
                  f"{subset.size}: ours {t_ours:.4f}, reference {t_ref:.4f} (fit in "
                  f"{reference_s:.1f} s), gap {t_ref - t_ours:+.4f}; load average "
                  f"{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
