"""The rows an edit touched, kept compactly: a bitmap or a sorted int32 list, whichever is
smaller (1M rows of 1M: a 125 KB bitmap; a lasso of 500 rows of 10M: 2 KB of ids).

A row set is checked once, when it arrives (integers inside the embedding, duplicates
dropped), and from then on is read back from its bytes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_BITMAP, _IDS = b"B", b"I"


@dataclass(frozen=True)
class RowSet:
    """Distinct rows of an embedding of ``n`` rows, ascending (``ids``, int64)."""

    n: int
    ids: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[int] | np.ndarray, n: int) -> RowSet:
        """The rows ``rows`` names (any order, repeats allowed); ValueError naming a row
        outside ``0..n-1`` or a value that is not a row number."""
        values = np.asarray(rows)
        if values.size == 0:
            return cls(n, np.zeros(0, np.int64))
        if values.ndim != 1 or values.dtype.kind not in "iu":
            if values.ndim == 1 and values.dtype.kind == "f" and np.all(values == np.round(values)):
                values = values.astype(np.int64)
            else:
                raise ValueError("rows must be a list of row numbers (integers)")
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= n:
            bad = low if low < 0 else high
            raise ValueError(f"row {bad} is outside the embedding's {n:,} rows (0 to {n - 1:,})")
        mask = np.zeros(n, bool)  # sorts and drops repeats in one O(n) pass
        mask[values] = True
        return cls(n, np.flatnonzero(mask))

    @classmethod
    def every(cls, n: int) -> RowSet:
        return cls(n, np.arange(n, dtype=np.int64))

    @property
    def count(self) -> int:
        return int(self.ids.size)

    def encode(self) -> bytes:
        """The smaller of a little-endian bitmap over ``n`` and the int32 ids."""
        if self.count * 32 > self.n:
            mask = np.zeros(self.n, bool)
            mask[self.ids] = True
            return _BITMAP + np.packbits(mask, bitorder="little").tobytes()
        return _IDS + self.ids.astype("<i4").tobytes()

    @classmethod
    def decode(cls, blob: bytes, n: int) -> RowSet:
        kind, body = blob[:1], memoryview(blob)[1:]
        if kind == _BITMAP:
            bits = np.unpackbits(np.frombuffer(body, np.uint8), count=n, bitorder="little")
            return cls(n, np.flatnonzero(bits))
        if kind == _IDS:
            return cls(n, np.frombuffer(body, "<i4").astype(np.int64))
        raise ValueError(f"unknown row set encoding {bytes(kind)!r}")
