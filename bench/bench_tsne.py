"""t-SNE through our job manager vs calling openTSNE directly, plus time to the first frame.

Data: ``make_blobs`` clusters in 50 dimensions (float32), 10k and 70k points by default. The
reference is ``openTSNE.TSNE(...).fit(X)`` with the same iterations, perplexity, seed and
thread count; ours is a ``tsne`` projection job (a JobManager worker thread running
``projector_core.projections.compute`` with frame streaming on). The two alternate, so a busy
machine slows both alike. Printed per size: seconds of each, the ratio ours / reference, the
KL divergences (same computation, so they agree), and when the job published its first frame
(the PCA initialisation, before the affinities) and its first optimised frame.

    python bench/bench_tsne.py [--sizes 10000 70000] [--n-iter 750] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np
import openTSNE
from sklearn.datasets import make_blobs

from projector_core.jobs import JobManager, JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.kernels.tsne import early_exaggeration_iterations
from projector_core.model import Embedding
from projector_core.projection_params import TsneParams, TsneRequest
from projector_core.projections import KERNEL_THREADS, compute


def machine_info() -> str:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"{mem:.0f} GiB, python {platform.python_version()}, openTSNE {openTSNE.__version__}")


def reference(data: np.ndarray, n_iter: int, threads: int) -> tuple[float, float]:
    """(seconds, KL divergence) of openTSNE's own fit with our defaults."""
    early = early_exaggeration_iterations(n_iter)
    started = time.perf_counter()
    embedding = openTSNE.TSNE(
        perplexity=30, n_iter=n_iter - early, early_exaggeration_iter=early,
        early_exaggeration=12, random_state=0, n_jobs=threads,
    ).fit(data)
    return time.perf_counter() - started, float(embedding.kl_divergence)


def ours(data: np.ndarray, n_iter: int) -> dict[str, float]:
    """Seconds to done, to the first frame and to the first optimised frame, and the KL."""
    embedding = Embedding(run="bench", name="blobs", fingerprint="bench", _vectors=data)
    request = TsneRequest(run="bench", embedding="blobs", method="tsne",
                          params=TsneParams(n_iter=n_iter, seed=0))
    backend = get_backend("cpu")
    jobs = JobManager(workers=1)
    started = time.perf_counter()
    job = jobs.submit(lambda ctx: compute(request, embedding, backend, ctx))
    first = first_optimised = None
    while not job.status.finished:
        frame = job.frame
        if frame is not None and first is None:
            first = time.perf_counter() - started
        if frame is not None and first_optimised is None and (frame.iteration or 0) >= 1:
            first_optimised = time.perf_counter() - started
        time.sleep(0.002)
    total = time.perf_counter() - started
    jobs.shutdown()
    assert job.status is JobStatus.DONE, job.error
    return {"seconds": total, "first_frame": first or total,
            "first_optimised_frame": first_optimised or total,
            "kl": job.result.info["kl_divergence"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 70_000])
    parser.add_argument("--n-iter", type=int, default=750)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    print(f"t-SNE: {args.n_iter} iterations ({early_exaggeration_iterations(args.n_iter)} "
          f"exaggerated), perplexity 30, {KERNEL_THREADS} thread(s) each")
    for n in args.sizes:
        data, _ = make_blobs(n, 50, centers=30, cluster_std=2.0, random_state=0)
        data = data.astype(np.float32)
        ref_times, our_runs = [], []
        for _ in range(args.repeats):
            ref_seconds, ref_kl = reference(data, args.n_iter, KERNEL_THREADS)
            ref_times.append(ref_seconds)
            our_runs.append(ours(data, args.n_iter))
        ref_s = statistics.median(ref_times)
        our_s = statistics.median(r["seconds"] for r in our_runs)
        first = statistics.median(r["first_frame"] for r in our_runs)
        optimised = statistics.median(r["first_optimised_frame"] for r in our_runs)
        print(f"n={n}: openTSNE {ref_s:.2f} s, ours {our_s:.2f} s, ratio {our_s / ref_s:.3f}; "
              f"KL {our_runs[-1]['kl']:.4f} vs {ref_kl:.4f}; first frame {first:.3f} s "
              f"({first / ref_s:.1%} of openTSNE's time), first optimised frame "
              f"{optimised:.2f} s ({optimised / ref_s:.1%})")


if __name__ == "__main__":
    main()
