"""Metadata TSV of millions of rows: parse time and peak memory, ours against the line-split
parser this project used before (Python strings, one list per column), each in a fresh process.

    python bench/bench_metadata.py [--rows 10000000]

Peak memory is the child's maximum resident set minus that of a child that only imports the
same modules; the file's own size is printed beside it (the parsed columns must hold about
that much).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from harness import machine_info

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import resource, sys, time
sys.path.insert(0, {root!r})
from projector_core.formats.metadata import read_metadata
path, which = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if which == "ours":
    rows = read_metadata(__import__("pathlib").Path(path), "m.tsv", None).n_rows
elif which == "line-split":
    lines = open(path, encoding="utf-8").read().split("\\n")[1:-1]
    columns = [[], [], []]
    for line in lines:
        for column, cell in zip(columns, line.split("\\t")):
            column.append(cell)
    rows = len(columns[0])
else:
    rows = 0
seconds = time.perf_counter() - start
print(rows, seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def write_file(path: Path, rows: int) -> None:
    rng = np.random.default_rng(0)
    kinds = np.array(["cat", "dog", "bird", "fish"])
    with path.open("w") as handle:
        handle.write("name\tkind\tscore\n")
        for start in range(0, rows, 1_000_000):
            n = min(1_000_000, rows - start)
            score = np.round(rng.normal(size=n), 4).astype(str)
            kind = kinds[rng.integers(0, 4, n)]
            handle.write("".join(f"p{start + i}\t{k}\t{s}\n"
                                 for i, k, s in zip(range(n), kind, score, strict=True)))


def run(path: Path, which: str) -> tuple[int, float, int]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=str(ROOT)), str(path), which],
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), float(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    print(machine_info())
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.tsv"
        write_file(path, args.rows)
        size = path.stat().st_size
        _, _, baseline = run(path, "imports-only")
        print(f"{args.rows:,} rows, {size / 2**20:.0f} MiB of TSV")
        results = {which: run(path, which) for which in ("ours", "line-split")}
        for which, (rows, seconds, peak) in results.items():
            print(f"{which:>10}: {seconds:6.2f} s, peak +{(peak - baseline) / 2**20:6.0f} MiB "
                  f"({(peak - baseline) / size:.1f}x the file), {rows:,} rows")
        ours, ref = results["ours"], results["line-split"]
        print(f"ours vs line-split: {ref[1] / ours[1]:.1f}x faster, "
              f"{(ref[2] - baseline) / max(1, ours[2] - baseline):.1f}x less memory")


if __name__ == "__main__":
    main()
