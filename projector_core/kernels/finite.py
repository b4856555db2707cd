"""Which rows hold only finite numbers: every kernel leaves rows with NaN or Inf out, and the
catalog warns about them. Scanned in blocks, so a memory-mapped N x D tensor is never copied
whole into an N x D temporary."""

from __future__ import annotations

import numpy as np

BLOCK_BYTES = 64 * 2**20


def finite_rows(data: np.ndarray) -> np.ndarray:
    """bool [N]: True where the row has no NaN or Inf."""
    out = np.empty(data.shape[0], bool)
    step = max(1, BLOCK_BYTES // max(1, data.shape[1] * data.itemsize))
    for start in range(0, data.shape[0], step):
        out[start:start + step] = np.isfinite(data[start:start + step]).all(axis=1)
    return out


def finite_or_none(values: np.ndarray) -> list[float | None]:
    """Values as JSON sends them: a float each, None (null) for NaN or Inf."""
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, np.float64).tolist()]
