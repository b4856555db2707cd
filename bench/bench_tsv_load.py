"""From ``projector serve`` to the tensor served, for a TSV written by tensorboardX, against
TensorBoard serving the same LOGDIR, in the same run: cold (nothing cached; TensorBoard never
caches) and warm (our second start, from the cache).

    python bench/bench_tsv_load.py [--rows 50000] [--dims 768] [--repeats 1] [--keep DIR]

Each server is a subprocess started as a user starts it; the clock runs from the process start
until the tensor route answers with the whole tensor (154 MB at 50k x 768, read by http.client:
``serving.py``). Warm, the cache entry is found by a stat of the TSV (path, size, mtime_ns,
inode; the file is never read) and memory-mapped: a warm start is the start-up plus the
download. The file is read once before timing, so every contender finds it in the page cache.
The parser contenders (ours: polars on blocks with pyarrow as the exact path; that exact path
alone; pandas' C engine; polars reading the whole file; numpy.loadtxt) are timed in-process on
the same file.
TensorBoard and tensorboardX are benchmark/test dependencies (the ``test`` extra). tensorboardX
takes minutes to write a 50k x 768 file: ``--keep DIR`` keeps the LOGDIR it wrote in DIR and
reuses it on the next run with the same size.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import serving
from harness import machine_info

RUN, NAME = ".", "default:00000"


def write_logdir(logdir: Path, rows: int, dims: int) -> tuple[np.ndarray, Path]:
    """tensorboardX's LOGDIR for a seeded matrix; one already complete (kept) is reused."""
    matrix = np.random.default_rng(0).normal(size=(rows, dims)).astype(np.float32)
    tsv = logdir / "00000" / "default" / "tensors.tsv"
    complete = logdir.with_name(logdir.name + ".complete")
    if complete.exists():
        print(f"reusing the LOGDIR kept in {logdir}")
        return matrix, tsv
    import tensorboardX

    started = time.perf_counter()
    writer = tensorboardX.SummaryWriter(str(logdir))
    writer.add_embedding(matrix, global_step=0)
    writer.close()
    complete.touch()
    print(f"tensorboardX wrote {rows} x {dims}: {tsv.stat().st_size / 1e6:.0f} MB of TSV in "
          f"{time.perf_counter() - started:.0f} s")
    return matrix, tsv


def time_projector(logdir: Path, cache: Path, tmp: Path, nbytes: int) -> float:
    port = serving.free_port()
    started = time.perf_counter()
    process = serving.start(serving.projector_command(logdir, port, cache), tmp / "projector.log")
    try:
        return serving.until(process, started, serving.served_bytes(
            f"http://127.0.0.1:{port}/api/tensor", {"run": RUN, "embedding": NAME}, nbytes))
    finally:
        serving.stop(process)


def time_tensorboard(logdir: Path, tmp: Path, nbytes: int) -> float:
    port = serving.free_port()
    started = time.perf_counter()
    process = serving.start(serving.tensorboard_command(logdir, port), tmp / "tensorboard.log")
    try:
        return serving.until(process, started, serving.served_bytes(
            f"http://127.0.0.1:{port}/data/plugin/projector/tensor", {"run": RUN, "name": NAME},
            nbytes), every=0.2)
    finally:
        serving.stop(process)


def parsers(tsv: Path, matrix: np.ndarray, with_loadtxt: bool) -> dict[str, float]:
    """In-process parse times of the same file (exact float32 values checked for ours)."""
    from projector_core.formats import tensor_files
    from projector_core.formats.tensor_files import read_tsv

    def ours() -> np.ndarray:
        return read_tsv(tsv, tsv.name)

    def exact_path_alone() -> np.ndarray:
        fast = tensor_files._parse_clean_chunk
        tensor_files._parse_clean_chunk = lambda *args: None
        try:
            return read_tsv(tsv, tsv.name)
        finally:
            tensor_files._parse_clean_chunk = fast

    contenders = {"ours (polars blocks on every core)": ours,
                  "pyarrow blocks (our exact path alone)": exact_path_alone}
    try:
        import pandas as pd

        contenders["pandas C engine"] = lambda: pd.read_csv(
            tsv, sep="\t", header=None, dtype=np.float64, na_filter=False).to_numpy(np.float32)
    except ImportError:
        pass
    try:
        import polars as pl

        contenders["polars, whole file"] = lambda: pl.read_csv(
            tsv, separator="\t", has_header=False, quote_char=None,
            schema={f"c{i}": pl.Float64 for i in range(matrix.shape[1])}).to_numpy().astype(np.float32)
    except ImportError:
        pass
    if with_loadtxt:
        contenders["numpy.loadtxt"] = lambda: np.loadtxt(tsv, dtype=np.float32, delimiter="\t")
    times = {}
    for name, parse in contenders.items():
        started = time.perf_counter()
        parsed = parse()
        times[name] = time.perf_counter() - started
        assert parsed.tobytes() == matrix.tobytes(), f"{name}: values differ from the writer's"
        del parsed
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--repeats", type=int, default=1, help="starts of each server (median)")
    parser.add_argument("--loadtxt", action="store_true", help="also time numpy.loadtxt (slow)")
    parser.add_argument("--no-tensorboard", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep tensorboardX's LOGDIR in this folder and "
                        "reuse it on later runs (it takes minutes to write)")
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        logs = (args.keep or tmp) / f"logs-{args.rows}x{args.dims}"
        matrix, tsv = write_logdir(logs, args.rows, args.dims)
        nbytes = matrix.nbytes
        tsv.read_bytes()  # in the page cache for everyone

        def median(measure) -> float:
            return statistics.median(measure() for _ in range(args.repeats))

        tensorboard = None if args.no_tensorboard else median(
            lambda: time_tensorboard(logs, tmp, nbytes))
        caches = iter(range(1000))
        cold = median(lambda: time_projector(logs, tmp / f"cache{next(caches)}", tmp, nbytes))
        warm_cache = tmp / "warm"
        time_projector(logs, warm_cache, tmp, nbytes)
        warm = median(lambda: time_projector(logs, warm_cache, tmp, nbytes))
        print("\nstart to tensor served (seconds)")
        print(f"  {'ours, cold (parse + cache)':40} {cold:8.2f}")
        print(f"  {'ours, warm (from the cache)':40} {warm:8.2f}")
        if tensorboard is not None:
            print(f"  {'TensorBoard (parses on every start)':40} {tensorboard:8.2f}")
            print(f"  ratio TensorBoard / ours: cold {tensorboard / cold:.1f}x (goal 10x), "
                  f"warm {tensorboard / warm:.1f}x (goal 50x)", flush=True)
        parse_times = parsers(tsv, matrix, args.loadtxt)

    print("\nparsing the same file in-process (seconds; exact float32 values checked)")
    ours = next(iter(parse_times.values()))
    for name, seconds in parse_times.items():
        print(f"  {name:40} {seconds:8.2f}   {seconds / ours:5.2f}x ours")

if __name__ == "__main__":
    main()
