"""A request on a server busy with its own background work, how quickly the server answers while
projection jobs run, and how quickly a cancel frees a worker: the speed goals the tests only
assert as orders (requests before guesses, answered while running, stopped before the end).

A requested PCA (``--mid`` points) and a requested UMAP (``--small`` points) on a server
preparing a ``--big`` x ``--dim`` default view, against the same request on an idle server,
same run (``busy_default_view.py`` says how; goal: busy / idle <= 1.2x). Then, against the
bundled sample (digits, 1797 x 64), on a server started as a user starts it:
- ``/api/health`` and ``/api/neighbors`` answer times, idle and while a t-SNE job runs
  (median and max of ``--repeats`` requests each; the ratio busy / idle is the figure);
- seconds from cancelling two running t-SNE jobs to a queued third one running, against the
  seconds one t-SNE iteration takes there (the work a cancel waits for at most).

    python bench/bench_busy_server.py [--big 1000000] [--mid 200000] [--small 20000]
        [--dim 768] [--methods pca umap] [--pairs 1] [--repeats 20] [--dir /tmp/projector-bench]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import serving
from busy_default_view import busy_over_idle
from harness import machine_info

DIGITS = {"run": "digits", "embedding": "digits"}
LONG_TSNE = {**DIGITS, "method": "tsne", "params": {"n_iter": 20000}}


def answer_times(http: httpx.Client, repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"health": [], "neighbors": []}
    for _ in range(repeats):
        for name, params in (("health", {}), ("neighbors", {**DIGITS, "index": 0, "k": 10})):
            started = time.perf_counter()
            http.get(f"/api/{name}", params=params).raise_for_status()
            times[name].append(time.perf_counter() - started)
        time.sleep(0.02)
    return times


def until(predicate, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("condition not reached")
        time.sleep(0.005)


def job(http: httpx.Client, seed: int) -> str:
    return http.post("/api/projections", json={**LONG_TSNE, "params": {
        **LONG_TSNE["params"], "seed": seed}}).json()["job"]


def state(http: httpx.Client, job_id: str) -> dict:
    return http.get(f"/api/jobs/{job_id}").json()


GOAL = 1.2  # busy / idle


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--mid", type=int, default=200_000)
    parser.add_argument("--small", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--methods", nargs="+", default=["pca", "umap"])
    parser.add_argument("--pairs", type=int, default=1, help="idle/busy pairs per method")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/projector-bench"),
                        help="where the LOGDIR and caches are kept between runs")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print(machine_info())
    times = busy_over_idle(args.dir, args.big, args.mid, args.small, args.dim,
                           tuple(args.methods), args.pairs)
    for method, (idle, busy) in times.items():
        points = args.mid if method == "pca" else args.small
        print(f"requested {method} of {points} x {args.dim} while a {args.big} x {args.dim} "
              f"default view is prepared: {busy:.1f} s against {idle:.1f} s idle, "
              f"busy / idle {busy / idle:.2f}x (goal <= {GOAL}x); load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        port = serving.free_port()
        started = time.perf_counter()
        process = serving.start(serving.projector_command(None, port, Path(tmp) / "cache"),
                                Path(tmp) / "server.log")
        try:
            base = f"http://127.0.0.1:{port}"
            serving.until(process, started, lambda: httpx.get(f"{base}/api/health").is_success)
            with httpx.Client(base_url=base, timeout=120) as http:
                idle = answer_times(http, args.repeats)
                running = job(http, 1)
                until(lambda: (state(http, running)["iteration"] or 0) > 5)
                busy = answer_times(http, args.repeats)
                first = state(http, running)["iteration"]
                time.sleep(1)
                per_iteration = 1 / max(1, state(http, running)["iteration"] - first)
                for name in idle:
                    i, b = statistics.median(idle[name]), statistics.median(busy[name])
                    print(f"/api/{name}: idle median {i * 1000:.1f} ms, max "
                          f"{max(idle[name]) * 1000:.1f} ms; during t-SNE median {b * 1000:.1f} ms,"
                          f" max {max(busy[name]) * 1000:.1f} ms; busy / idle {b / i:.1f}x")
                second, waiting = job(http, 2), job(http, 3)
                until(lambda: (state(http, second)["iteration"] or 0) > 5)
                cancelled = time.perf_counter()
                for job_id in (running, second):
                    http.delete(f"/api/jobs/{job_id}")
                until(lambda: state(http, waiting)["status"] == "running")
                freed = time.perf_counter() - cancelled
                http.delete(f"/api/jobs/{waiting}")
                print(f"cancel to a queued job running: {freed * 1000:.0f} ms "
                      f"({freed / per_iteration:.1f} t-SNE iterations of {per_iteration * 1000:.1f} ms)")
        finally:
            serving.stop(process)


if __name__ == "__main__":
    main()
