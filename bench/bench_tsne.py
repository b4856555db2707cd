"""t-SNE through our job manager vs calling openTSNE directly, plus time to the first frame.

Data: ``make_blobs`` clusters in 50 dimensions (float32), 10k and 70k points by default. The
reference is ``openTSNE.TSNE(...).fit(X)`` with the same iterations, perplexity, seed and
thread count; ours is a ``tsne`` projection job (a JobManager worker thread running
``projector_core.projection.compute.compute`` with frame streaming on). The two alternate, so a busy
machine slows both alike; on a shared machine the CPU seconds (all threads of this process)
are the steadier figure. Printed per size: wall and CPU seconds of each and their ratios ours /
reference, the KL divergences (same computation, so they agree), and when the job published
its first frame (the PCA initialisation, before the affinities) and its first optimised frame.

    python bench/bench_tsne.py [--sizes 10000 70000] [--n-iter 750] [--repeats 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import openTSNE
from harness import machine_info
from sklearn.datasets import make_blobs

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager, JobStatus
from projector_core.kernels.backend import get_backend
from projector_core.kernels.tsne import early_exaggeration_iterations
from projector_core.projection.compute import compute
from projector_core.projection.methods.fitting import KERNEL_THREADS
from projector_core.projection.params import TsneParams, TsneRequest


def reference(data: np.ndarray, n_iter: int, threads: int) -> dict[str, float]:
    """Wall and CPU seconds and the KL divergence of openTSNE's own fit with our defaults."""
    early = early_exaggeration_iterations(n_iter)
    started, cpu = time.perf_counter(), time.process_time()
    embedding = openTSNE.TSNE(
        perplexity=30, n_iter=n_iter - early, early_exaggeration_iter=early,
        early_exaggeration=12, random_state=0, n_jobs=threads,
    ).fit(data)
    return {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
            "kl": float(embedding.kl_divergence)}


def ours(data: np.ndarray, n_iter: int) -> dict[str, float]:
    """Wall and CPU seconds to done, seconds to the first frame and to the first optimised
    frame, and the KL divergence."""
    embedding = Embedding.of("bench", "blobs", "bench", vectors=data)
    request = TsneRequest(run="bench", embedding="blobs", method="tsne",
                          params=TsneParams(n_iter=n_iter, seed=0))
    backend = get_backend("cpu")
    jobs = JobManager(workers=1)
    started, cpu = time.perf_counter(), time.process_time()
    job = jobs.submit(lambda ctx: compute(request, embedding, backend, ctx))
    first = first_optimised = None
    while not job.status.finished:
        frame = job.frame
        if frame is not None and first is None:
            first = time.perf_counter() - started
        if frame is not None and first_optimised is None and (frame.iteration or 0) >= 1:
            first_optimised = time.perf_counter() - started
        time.sleep(0.01)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu
    jobs.shutdown()
    assert job.status is JobStatus.DONE, job.error
    return {"seconds": total, "cpu": cpu, "first_frame": first or total,
            "first_optimised_frame": first_optimised or total,
            "kl": job.result.info["kl_divergence"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 70_000])
    parser.add_argument("--n-iter", type=int, default=750)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {machine_info('openTSNE ' + openTSNE.__version__)}")
    print(f"t-SNE: {args.n_iter} iterations ({early_exaggeration_iterations(args.n_iter)} "
          f"exaggerated), perplexity 30, {KERNEL_THREADS} thread(s) each")
    for n in args.sizes:
        data, _ = make_blobs(n, 50, centers=30, cluster_std=2.0, random_state=0)
        data = data.astype(np.float32)
        ref_runs, our_runs = [], []
        for _ in range(args.repeats):
            ref_runs.append(reference(data, args.n_iter, KERNEL_THREADS))
            our_runs.append(ours(data, args.n_iter))

        def median(runs: list[dict[str, float]], name: str) -> float:
            return statistics.median(run[name] for run in runs)

        ref_s, our_s = median(ref_runs, "seconds"), median(our_runs, "seconds")
        ref_cpu, our_cpu = median(ref_runs, "cpu"), median(our_runs, "cpu")
        first, optimised = median(our_runs, "first_frame"), median(our_runs, "first_optimised_frame")
        print(f"n={n}: wall openTSNE {ref_s:.1f} s, ours {our_s:.1f} s, ratio {our_s / ref_s:.3f}; "
              f"CPU openTSNE {ref_cpu:.1f} s, ours {our_cpu:.1f} s, ratio {our_cpu / ref_cpu:.3f}; "
              f"KL {our_runs[-1]['kl']:.4f} vs {ref_runs[-1]['kl']:.4f}; first frame {first:.3f} s "
              f"({first / ref_s:.1%} of openTSNE's wall time), first optimised frame "
              f"{optimised:.2f} s ({optimised / ref_s:.1%})")


if __name__ == "__main__":
    main()
