"""Following a training run: (a) how soon the server knows a step once its files are complete
(its ``loading`` and ``ready`` events on GET /api/events), at 10k and 100k points; (b) the
server's memory after 200 steps of 50,000 x 128 (5 GB on disk) against the same server after
one step; (c) from a step's files complete to its picture in a page following the run, the
server's part and the page's apart, PCA and an aligned UMAP (``training_page.py``).

    python bench/bench_training_steps.py            # (a) 10k and 100k x 128; (b) 20 x 5,000
    python bench/bench_training_steps.py --full     # (b) 200 steps of 50,000 x 128 (5 GB, and
                                                    #     as much again in the tensor cache)

The server is ``projector serve`` in its own process, as a user starts it, told of changes by
the operating system; steps are written by ``projector.add_embedding`` as a training loop
calls it, and (a) is timed from the moment the call returns (the config renamed into place:
the step complete) to each event's arrival. Beside it, the floor any reader pays: parsing
the step's tensor file into the cache in this process. (b) writes float32 ``.npy`` steps
(``format="npy"``: 50k x 128 as TSV would be 25 GB), the same labels at every step, waits for
each ``ready``, then asks the server for every step's tensor, as a page stepping through them
would, and reads the server's resident memory (psutil) after one step, after all, and after
they were all read; apart, the part that is mapped files (the few step tensors kept mapped,
``catalog.KEEP_MAPPED``, which the kernel may drop at will).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
import psutil
import serving
from harness import machine_info
from training_page import page_latency

from projector_core.data.ingest import ingest, tensor_key
from projector_core.formats.writer import add_embedding
from projector_core.storage.tensor_cache import TensorCache


class Arrivals:
    """GET /api/events read on a thread: when each (run, step, state) event arrived (by
    ``clock``: the performance counter, or wall-clock time to set beside a page's)."""

    def __init__(self, url: str, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.at: dict[tuple[str, int, str], float] = {}
        self._changed = threading.Condition()
        self._opened = threading.Event()
        threading.Thread(target=self._read, args=(url,), daemon=True).start()
        if not self._opened.wait(60):
            raise SystemExit("the event stream did not open")

    def _read(self, url: str) -> None:
        with httpx.stream("GET", f"{url}/api/events", timeout=httpx.Timeout(30, read=None)) as r:
            kind = ""
            for line in r.iter_lines():
                arrived = self.clock()
                if line.startswith("event: "):
                    kind = line[7:]
                    self._opened.set()
                elif line.startswith("data: ") and kind == "step":
                    data = json.loads(line[6:])
                    with self._changed:
                        self.at.setdefault((data["run"], data["step"], data["state"]), arrived)
                        self._changed.notify_all()

    def wait(self, run: str, step: int, state: str, timeout: float = 600) -> float:
        with self._changed:
            if not self._changed.wait_for(lambda: (run, step, state) in self.at
                                          or (run, step, "error") in self.at, timeout):
                raise SystemExit(f"no {state} event for {run} step {step} in {timeout:.0f} s")
            if (run, step, "error") in self.at:
                raise SystemExit(f"{run} step {step} failed")
            return self.at[run, step, state]


def parse_floor(tsv: Path, scratch: Path) -> float:
    """Seconds to parse a step's TSV into a cache entry here: what any reader pays."""
    cache = TensorCache(scratch / f"floor-{time.monotonic_ns()}")
    key, kind = tensor_key(tsv, ())
    started = time.perf_counter()
    ingest(cache, key, tsv, tsv.name, kind, (), None)
    return time.perf_counter() - started


def latency(tmp: Path, sizes: list[int], dims: int, repeats: int) -> None:
    logdir = tmp / "latency"
    logdir.mkdir()
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    process = serving.start(serving.projector_command(logdir, port, tmp / "cache-latency",
                                                      "--wait", "--no-warm-up"), tmp / "a.log")
    try:
        serving.until(process, time.perf_counter(), lambda: httpx.get(f"{url}/api/health")
                      .status_code == 200, timeout=120)
        arrivals = Arrivals(url)
        print(f"(a) from a step's files complete to the server knowing it ({dims} dims, median "
              f"of {repeats})")
        print(f"{'points':>8} {'format':>6} {'written':>8} {'noticed':>8} {'ready':>8} "
              f"{'parse floor':>12}")
        rng = np.random.default_rng(0)
        step = 0
        for n in sizes:
            labels = [f"p{i % 10}" for i in range(n)]
            for fmt in ("tsv", "npy"):
                written, noticed, ready, floors = [], [], [], []
                for _ in range(repeats):
                    step += 1
                    matrix = rng.standard_normal((n, dims)).astype(np.float32)
                    started = time.perf_counter()
                    add_embedding(logdir / "run", matrix, metadata=labels, global_step=step,
                                  format=fmt)
                    complete = time.perf_counter()
                    written.append(complete - started)
                    noticed.append(arrivals.wait("run", step, "loading") - complete)
                    ready.append(arrivals.wait("run", step, "ready") - complete)
                    if fmt == "tsv":
                        tsv = logdir / "run" / f"{step:05d}" / "default" / "tensors.tsv"
                        floors.append(parse_floor(tsv, tmp))
                floor = f"{statistics.median(floors):11.2f}s" if floors else f"{'':>12}"
                print(f"{n:>8} {fmt:>6} {statistics.median(written):7.2f}s "
                      f"{statistics.median(noticed):7.2f}s {statistics.median(ready):7.2f}s "
                      f"{floor}", flush=True)
    finally:
        serving.stop(process)


def memory(tmp: Path, steps: int, n: int, dims: int) -> None:
    logdir = tmp / "memory"
    logdir.mkdir()
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    process = serving.start(serving.projector_command(logdir, port, tmp / "cache-memory",
                                                      "--wait", "--no-warm-up"), tmp / "b.log")
    server = psutil.Process(process.pid)

    def rss() -> tuple[float, float]:
        """Resident MiB in all, and of it mapped files (the step tensors kept mapped)."""
        info = server.memory_info()
        return info.rss / 2**20, getattr(info, "shared", 0) / 2**20

    try:
        serving.until(process, time.perf_counter(), lambda: httpx.get(f"{url}/api/health")
                      .status_code == 200, timeout=120)
        arrivals = Arrivals(url)
        labels = [f"class {i % 10}" for i in range(n)]
        rng = np.random.default_rng(1)
        figures = {}
        for step in range(steps):
            add_embedding(logdir / "run", rng.standard_normal((n, dims)).astype(np.float32),
                          metadata=labels, global_step=step, format="npy")
            arrivals.wait("run", step, "ready")
            if step == 0:
                figures["after 1 step"] = rss()
        figures[f"after {steps} steps"] = rss()
        with httpx.Client(timeout=600) as client:
            for step in range(steps):  # as a page stepping through them reads each
                response = client.get(f"{url}/api/tensor",
                                      params={"run": "run", "embedding": f"default:{step:05d}"})
                assert len(response.content) == n * dims * 4
        figures[f"after reading all {steps}"] = rss()
        on_disk = steps * n * dims * 4 / 2**20
        print(f"\n(b) server resident memory, {steps} steps of {n:,} x {dims} "
              f"({on_disk:,.0f} MiB of tensors on disk)")
        base, base_files = figures["after 1 step"]
        for what, (mib, files) in figures.items():
            print(f"{what:>24}: {mib:6.0f} MiB ({mib / base:.2f} x after 1 step), of which "
                  f"mapped files {files:4.0f} MiB; the rest {mib - files:4.0f} MiB "
                  f"({(mib - files) / (base - base_files):.2f} x)")
    finally:
        serving.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true",
                        help="(b) at 200 steps of 50,000 x 128 (about 10 GB of disk)")
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--umap-repeats", type=int, default=2,
                        help="(c) steps followed with UMAP at each size (each waits for the "
                             "UMAP before it to end)")
    args = parser.parse_args()
    print(machine_info())
    with tempfile.TemporaryDirectory(prefix="bench-steps-") as folder:
        tmp = Path(folder)
        if not args.skip_latency:
            latency(tmp, args.sizes, args.dims, args.repeats)
        if not args.skip_page:
            page_latency(tmp, args.sizes, args.dims, args.repeats,
                         lambda url: Arrivals(url, clock=time.time), args.umap_repeats)
        if not args.skip_memory:
            steps, n = (200, 50_000) if args.full else (20, 5_000)
            memory(tmp, steps, n, args.dims)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
