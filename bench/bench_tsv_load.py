"""From ``projector serve`` to the tensor served, for a TSV written by tensorboardX, against
TensorBoard serving the same LOGDIR, in the same run: cold (nothing cached; TensorBoard never
caches) and warm (our second start, from the cache).

    python bench/bench_tsv_load.py [--rows 50000] [--dims 768] [--repeats 1]

Each server is a subprocess started as a user starts it; the clock runs from the process start
until the tensor route answers with the whole tensor. The file is read once before timing, so
every contender finds it in the page cache. The parser contenders (pyarrow as we use it,
pandas' C engine, polars if installed, numpy.loadtxt) are timed in-process on the same file.
TensorBoard and tensorboardX are benchmark/test dependencies (the ``test`` extra).
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
    import tensorboardX

    matrix = np.random.default_rng(0).normal(size=(rows, dims)).astype(np.float32)
    writer = tensorboardX.SummaryWriter(str(logdir))
    writer.add_embedding(matrix, global_step=0)
    writer.close()
    return matrix, logdir / "00000" / "default" / "tensors.tsv"


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
    from projector_core.formats.tensor_files import read_tsv

    def ours() -> np.ndarray:
        return read_tsv(tsv, tsv.name)

    contenders = {"ours (pyarrow, blocks on every core)": ours}
    try:
        import pandas as pd

        contenders["pandas C engine"] = lambda: pd.read_csv(
            tsv, sep="\t", header=None, dtype=np.float64, na_filter=False).to_numpy(np.float32)
    except ImportError:
        pass
    try:
        import polars as pl

        contenders["polars"] = lambda: pl.read_csv(
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
    args = parser.parse_args()
    print(f"machine: {machine_info()}")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        started = time.perf_counter()
        matrix, tsv = write_logdir(tmp / "logs", args.rows, args.dims)
        nbytes = matrix.nbytes
        print(f"tensorboardX wrote {args.rows} x {args.dims}: {tsv.stat().st_size / 1e6:.0f} MB "
              f"of TSV in {time.perf_counter() - started:.0f} s")
        tsv.read_bytes()  # in the page cache for everyone

        def median(measure) -> float:
            return statistics.median(measure() for _ in range(args.repeats))

        tensorboard = None if args.no_tensorboard else median(
            lambda: time_tensorboard(tmp / "logs", tmp, nbytes))
        caches = iter(range(1000))
        cold = median(lambda: time_projector(tmp / "logs", tmp / f"cache{next(caches)}", tmp, nbytes))
        warm_cache = tmp / "warm"
        time_projector(tmp / "logs", warm_cache, tmp, nbytes)
        warm = median(lambda: time_projector(tmp / "logs", warm_cache, tmp, nbytes))
        parse_times = parsers(tsv, matrix, args.loadtxt)

    print("\nstart to tensor served (seconds)")
    print(f"  {'ours, cold (parse + cache)':40} {cold:8.2f}")
    print(f"  {'ours, warm (from the cache)':40} {warm:8.2f}")
    if tensorboard is not None:
        print(f"  {'TensorBoard (parses on every start)':40} {tensorboard:8.2f}")
        print(f"  ratio TensorBoard / ours: cold {tensorboard / cold:.1f}x (goal 10x), "
              f"warm {tensorboard / warm:.1f}x (goal 50x)")
    print("\nparsing the same file in-process (seconds; exact float32 values checked)")
    ours = next(iter(parse_times.values()))
    for name, seconds in parse_times.items():
        print(f"  {name:40} {seconds:8.2f}   {seconds / ours:5.2f}x ours")


if __name__ == "__main__":
    main()
