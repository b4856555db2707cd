"""A column as it is now, kept as blocks of int32 codes: what a read returns without
replaying any edit.

A 10M-row column is 153 blobs of 256 KB, read in one query and joined (as the code columns
stored beside chunked data are read, ``formats/code_columns.py``); an edit reads and
rewrites only the blocks its rows fall in. A block holding only code 0 ("") is not stored,
so a column of a few labels on 10M rows costs a few blocks.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from projector_core.annotations.database import BLOCK_ROWS


def read_column(connection: sqlite3.Connection, column_id: int, n: int) -> np.ndarray:
    """Every row's int32 code."""
    codes = np.zeros(n, np.int32)
    for block, blob in connection.execute(
            "SELECT block, codes FROM blocks WHERE column_id = ?", (column_id,)):
        start = block * BLOCK_ROWS
        codes[start:start + BLOCK_ROWS] = np.frombuffer(blob, "<i4")
    return codes


def write_codes(connection: sqlite3.Connection, column_id: int, n: int, rows: np.ndarray,
                codes: np.ndarray | int) -> int:
    """Set ``rows`` (ascending) to ``codes`` (one per row, or one for all); how many of them
    held another code before."""
    changed = 0
    bounds = np.searchsorted(rows, np.arange(0, n + BLOCK_ROWS, BLOCK_ROWS))
    for block in np.flatnonzero(np.diff(bounds)).tolist():
        lo, hi = int(bounds[block]), int(bounds[block + 1])
        start = block * BLOCK_ROWS
        found = connection.execute("SELECT codes FROM blocks WHERE column_id = ? AND block = ?",
                                   (column_id, block)).fetchone()
        current = (np.frombuffer(found[0], "<i4").copy() if found is not None
                   else np.zeros(min(BLOCK_ROWS, n - start), np.int32))
        inside = rows[lo:hi] - start
        new = codes if isinstance(codes, int) else codes[lo:hi]
        changed += int(np.count_nonzero(current[inside] != new))
        current[inside] = new
        if current.any():
            blob = current.astype("<i4", copy=False).tobytes()
            connection.execute("INSERT OR REPLACE INTO blocks (column_id, block, codes) "
                               "VALUES (?, ?, ?)", (column_id, block, blob))
        elif found is not None:
            connection.execute("DELETE FROM blocks WHERE column_id = ? AND block = ?",
                               (column_id, block))
    return changed
