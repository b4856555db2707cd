"""A fresh install's first minute beside a warm one: UMAP on the words sample, and idle CPU.

    python bench/bench_install.py [--repeats 3] [--idle-at 60] [--idle-for 10]

Each server is ``projector serve`` (the bundled samples) started as a user starts it, with
``--cache-dir`` its cache directory and numba's on-disk cache inside it (``NUMBA_CACHE_DIR``
unset). First on an empty cache directory, as after ``pip install``; then again on the
directory the first server filled (a warm cache, the hundredth start). Each is asked at once
(as soon as it answers) for a UMAP of the words sample (4,000 x 384), timed from the request
to the job's first frame (goal <= 2 s), to UMAP's own first layout and to the job's end;
then, ``--idle-at`` seconds after the process started, the server's CPU over ``--idle-for``
seconds (goal: under 20% of one core). Fresh and warm servers take turns, ``--repeats``
times each (medians); the CPU is read on the last of each.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import serving
from harness import machine_info

WORDS_UMAP = {"run": "words", "embedding": "words", "method": "umap", "dims": 2,
              "params": {"n_neighbors": 15, "seed": 0}}
LAYOUT_PROGRESS = 0.2  # kernels/umap.py GRAPH_SHARE: the fuzzy graph and initial layout are done


def first_minute(cache: Path, log: Path, seed: int, idle_at: float | None = None,
                 idle_for: float = 10.0) -> dict[str, float]:
    """A server started on ``cache``, asked at once for a UMAP of words: seconds from the
    request to its first frame, to UMAP's layout, to the end; with ``idle_at``, the server's
    CPU (share of a core) over ``idle_for`` seconds from ``idle_at`` seconds after its start."""
    port = serving.free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    process = serving.start(serving.projector_command(None, port, cache), log)
    try:
        serving.until(process, started, lambda: httpx.get(f"{url}/api/health").status_code == 200)
        asked = time.perf_counter()
        request = {**WORDS_UMAP, "params": {**WORDS_UMAP["params"], "seed": seed}}
        job = httpx.post(f"{url}/api/projections", json=request, timeout=120).json()["job"]
        marks: dict[str, float] = {}

        def finished() -> bool:
            status = httpx.get(f"{url}/api/jobs/{job}", timeout=60).json()
            if status["status"] == "failed":
                raise SystemExit(f"UMAP failed: {status['error']}")
            now = time.perf_counter() - asked
            done = status["status"] == "done"
            if status["iteration"] is not None or done:
                marks.setdefault("first frame", now)
            if status["progress"] >= LAYOUT_PROGRESS or done:
                marks.setdefault("UMAP layout", now)
            return done

        marks["job done"] = serving.until(process, asked, finished, every=0.02)
        if idle_at is not None:
            time.sleep(max(0.0, started + idle_at - time.perf_counter()))
            server = psutil.Process(process.pid)
            before = server.cpu_times()
            time.sleep(idle_for)
            after = server.cpu_times()
            marks["idle CPU"] = ((after.user + after.system) - (before.user + before.system)) / idle_for
        return marks
    finally:
        serving.stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--idle-at", type=float, default=60.0)
    parser.add_argument("--idle-for", type=float, default=10.0)
    args = parser.parse_args()
    os.environ.pop("NUMBA_CACHE_DIR", None)  # numba's cache goes under --cache-dir
    print(f"machine: {machine_info()}")
    fresh: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        first_minute(tmp / "warm", tmp / "fill.log", seed=100)  # fills the warm cache
        # Fresh and warm in turns, so a change in the machine's load falls on both; each
        # request with its own seed (a result already in the cache would be no fit at all).
        for i in range(args.repeats):
            idle = args.idle_at if i == args.repeats - 1 else None
            fresh.append(first_minute(tmp / f"fresh{i}", tmp / "fresh.log", i, idle, args.idle_for))
            warm.append(first_minute(tmp / "warm", tmp / "warm.log", 10 + i, idle, args.idle_for))
    print(f"\nUMAP of words (4000 x 384) asked as soon as `projector serve` answers "
          f"(median of {args.repeats})")
    print(f"  {'':30} {'empty cache':>12} {'warm cache':>12} {'fresh/warm':>11}")
    for what in ("first frame", "UMAP layout", "job done"):
        f, w = (statistics.median(m[what] for m in runs) for runs in (fresh, warm))
        print(f"  {'request to ' + what:30} {f:10.2f} s {w:10.2f} s {f / w:10.1f}x")
    idle_fresh, idle_warm = fresh[-1]["idle CPU"], warm[-1]["idle CPU"]
    print(f"  {f'CPU over {args.idle_for:g} s at {args.idle_at:g} s':30} "
          f"{100 * idle_fresh:10.1f} % {100 * idle_warm:10.1f} %")
    first = statistics.median(m["first frame"] for m in fresh)
    met = first <= 2 and idle_fresh < 0.2
    print(f"\ngoals (empty cache): first frame <= 2 s, idle CPU < 20% of a core: "
          f"{'met' if met else 'missed'}")
    print(f"machine at the end: {machine_info()}")


if __name__ == "__main__":
    main()
