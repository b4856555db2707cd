"""t-SNE through our job manager vs calling openTSNE directly, plus time to the first frame.

Data: ``make_blobs`` clusters in 50 dimensions (float32), 10k and 70k points by default. The
reference is ``openTSNE.TSNE(...).fit(X)`` with the same iterations, perplexity, seed and
thread count; ours is a ``tsne`` projection job (a JobManager worker thread running
``projector_core.projection.compute.compute`` with frame streaming on). The two alternate, so a busy
machine slows both alike; on a shared machine the CPU seconds (all threads of this process)
are the steadier figure. Printed per size: wall and CPU seconds of each and their ratios ours /
reference, the KL divergences (same computation, so they agree), and when the job published
its first frame (the PCA initialisation, before the affinities) and its first optimised frame.

With ``--api`` the job is asked of ``projector serve`` over HTTP instead (a LOGDIR of the same
blobs; the server started as a user starts it and left to finish its own background work),
from the POST to the job done, beside openTSNE in this process: the issue's "through the API".

    python bench/bench_tsne.py [--sizes 10000 70000] [--n-iter 750] [--repeats 1] [--api]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import openTSNE
import serving
from harness import machine_info
from sklearn.datasets import make_blobs

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import JobStatus
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


class ApiServer:
    """``projector serve`` over a LOGDIR holding ``data`` as one .npy tensor, quiet (its
    warm-up and default view done) before the first request."""

    def __init__(self, data: np.ndarray, tmp: Path) -> None:
        logdir = tmp / "logdir" / "bench"
        logdir.mkdir(parents=True)
        np.save(logdir / "blobs.npy", data)
        (logdir / "projector_config.pbtxt").write_text(
            'embeddings {\n  tensor_name: "blobs"\n  tensor_path: "blobs.npy"\n}\n')
        port = serving.free_port()
        self.process = serving.start(serving.projector_command(logdir.parent, port, tmp / "cache"),
                                     tmp / "server.log")
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
        serving.until(self.process, time.perf_counter(),
                      lambda: self.http.get("/api/health").is_success)
        serving.wait_quiet(self.process)
        self.asked = 0

    def tsne(self, n_iter: int) -> dict[str, float]:
        """Wall seconds from the POST (``?wait=true``, as a script asks) to its answer, the
        server's CPU seconds meanwhile, the KL divergence."""
        self.asked += 1  # a new seed each time: never the cached result of the last one
        body = {"run": "bench", "embedding": "blobs", "method": "tsne", "dims": 2,
                "params": {"n_iter": n_iter, "seed": self.asked}}
        cpu = serving.cpu_seconds(self.process.pid)
        started = time.perf_counter()
        answer = self.http.post("/api/projections", params={"wait": "true"}, json=body,
                                headers={"Accept": "application/octet-stream"})
        seconds = time.perf_counter() - started
        answer.raise_for_status()
        return {"seconds": seconds, "cpu": serving.cpu_seconds(self.process.pid) - cpu,
                "kl": json.loads(answer.headers["X-Info"])["kl_divergence"],
                "first_frame": float("nan"), "first_optimised_frame": float("nan")}

    def stop(self) -> None:
        self.http.close()
        serving.stop(self.process)


def api_vs_opentsne(data: np.ndarray, n_iter: int, repeats: int
                    ) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """(openTSNE runs, our runs through the API), alternating, same data and threads."""
    with tempfile.TemporaryDirectory() as tmp:
        server = ApiServer(data, Path(tmp))
        try:
            ref_runs, our_runs = [], []
            for _ in range(repeats):
                ref_runs.append(reference(data, n_iter, KERNEL_THREADS))
                our_runs.append(server.tsne(n_iter))
            return ref_runs, our_runs
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 70_000])
    parser.add_argument("--n-iter", type=int, default=750)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--api", action="store_true",
                        help="ours through projector serve's HTTP API (see the docstring)")
    args = parser.parse_args()
    print(f"machine: {machine_info('openTSNE ' + openTSNE.__version__)}")
    print(f"t-SNE: {args.n_iter} iterations ({early_exaggeration_iterations(args.n_iter)} "
          f"exaggerated), perplexity 30, {KERNEL_THREADS} thread(s) each")
    for n in args.sizes:
        data, _ = make_blobs(n, 50, centers=30, cluster_std=2.0, random_state=0)
        data = data.astype(np.float32)
        if args.api:
            ref_runs, our_runs = api_vs_opentsne(data, args.n_iter, args.repeats)
        else:
            ref_runs, our_runs = [], []
            for _ in range(args.repeats):
                ref_runs.append(reference(data, args.n_iter, KERNEL_THREADS))
                our_runs.append(ours(data, args.n_iter))

        def median(runs: list[dict[str, float]], name: str) -> float:
            return statistics.median(run[name] for run in runs)

        ref_s, our_s = median(ref_runs, "seconds"), median(our_runs, "seconds")
        ref_cpu, our_cpu = median(ref_runs, "cpu"), median(our_runs, "cpu")
        first, optimised = median(our_runs, "first_frame"), median(our_runs, "first_optimised_frame")
        frames = "" if args.api else (
            f"; first frame {first:.3f} s ({first / ref_s:.1%} of openTSNE's wall time), first "
            f"optimised frame {optimised:.2f} s ({optimised / ref_s:.1%})")
        print(f"n={n}{' through the API' if args.api else ''}: wall openTSNE {ref_s:.1f} s, ours "
              f"{our_s:.1f} s, ratio {our_s / ref_s:.3f} (goal <= 1.05); CPU openTSNE "
              f"{ref_cpu:.1f} s, ours {our_cpu:.1f} s, ratio {our_cpu / ref_cpu:.3f}; KL "
              f"{our_runs[-1]['kl']:.4f} vs {ref_runs[-1]['kl']:.4f}{frames}; load average "
              f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
