"""Annotations at scale, through the service every door calls (projector_core/annotations/):
label a lasso of 1M rows (of 2M), and read a 10M-row annotation column as int32 codes.

Reference, same run, same disk, same SQLite settings (WAL, synchronous=FULL): the plain
``sqlite3`` way, the same rows ``executemany``-inserted as (row, value) into one table in one
transaction, and that table's 10M rows read back with one SELECT. Printed: median seconds of
each, their ratio and the goal (issue 35: a 1M-row label answers in <= 1 s; a 10M-row column
reaches the page as codes like any column).

    python bench/bench_annotations.py [--label-points 2000000] [--read-points 10000000]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import machine_info, timed_together

from projector_core.annotations import AnnotationService
from projector_core.data.catalog import Catalog

VALUES = ["cat", "dog", "owl", "eel"]


def write_run(folder: Path, n: int) -> None:
    """A run of one N x 2 float32 tensor, as a ``.bytes`` file and its config."""
    folder.mkdir(parents=True)
    np.random.default_rng(0).random((n, 2), np.float32).tofile(folder / "t.bytes")
    (folder / "projector_config.pbtxt").write_text(
        f'embeddings {{ tensor_name: "points" tensor_path: "t.bytes" tensor_shape: {n} '
        'tensor_shape: 2 }')


def reference_table(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE labels (row INTEGER, value TEXT)")
    return db


def insert(db: sqlite3.Connection, rows: np.ndarray, value: str) -> None:
    db.execute("BEGIN")
    db.executemany("INSERT INTO labels VALUES (?, ?)", ((r, value) for r in rows.tolist()))
    db.execute("COMMIT")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label-points", type=int, default=2_000_000)
    parser.add_argument("--label-rows", type=int, default=1_000_000)
    parser.add_argument("--read-points", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"# {machine_info(f'sqlite {sqlite3.sqlite_version}')}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_run(root / "logdir" / "small", args.label_points)
        write_run(root / "logdir" / "big", args.read_points)
        catalog = Catalog(root / "logdir", cache_dir=root / "cache")
        catalog.refresh()
        service = AnnotationService.open(root / "store.sqlite", catalog.logdir, catalog.embedding)
        reference = reference_table(root / "reference.sqlite")
        rng = np.random.default_rng(1)
        lasso = np.sort(rng.choice(args.label_points, args.label_rows, replace=False))
        turn = iter(range(10**9))

        def ours_label() -> None:
            service.annotate("small", "points", "label", VALUES[next(turn) % 4], lasso)

        def reference_label() -> None:
            insert(reference, lasso, "cat")

        label = timed_together({"ours": ours_label, "reference": reference_label}, args.repeats)

        reference.execute("DELETE FROM labels")
        quarters = np.array_split(np.arange(args.read_points), 4)
        for value, rows in zip(VALUES, quarters, strict=True):
            service.annotate("big", "points", "label", value, rows)
            insert(reference, rows, value)

        def ours_read() -> None:
            found = service.values("big", "points", "label")
            assert found.codes.size == args.read_points

        def reference_read() -> None:
            assert len(reference.execute("SELECT row, value FROM labels").fetchall()) == \
                args.read_points

        read = timed_together({"ours": ours_read, "reference": reference_read}, args.repeats)
        reference.close()
        service.store.close()  # type: ignore[union-attr]
    print("| task | ours (s) | sqlite3 executemany / SELECT (s) | ours / reference | goal |")
    print("|---|---:|---:|---:|---|")
    for name, times, goal in (
            (f"label {args.label_rows:,} rows of {args.label_points:,}", label, "<= 1 s"),
            (f"read a {args.read_points:,}-row column", read, "<= 1 s, as codes")):
        print(f"| {name} | {times['ours']:.3f} | {times['reference']:.3f} | "
              f"{times['ours'] / times['reference']:.3f} | {goal} |")


if __name__ == "__main__":
    main()
