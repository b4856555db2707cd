"""Orthogonal Procrustes: turn B's layout so that what did not change lands where it is in A.

PCA axes come out in any sign and any order of near-equal components, and two runs of the
same projection differ by a rotation; comparing two plots point by point needs that
arbitrary part removed. The rotation (reflections allowed) that best maps B onto A after
centring both is scipy's ``orthogonal_procrustes``; a uniform scale and A's centre follow,
so B is drawn in A's frame. Rows without coordinates in either are left out of the fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import orthogonal_procrustes


@dataclass(frozen=True)
class Alignment:
    coordinates: np.ndarray  # float32 [N, max(cols of A, cols of B)], B in A's frame
    scale: float
    residual: float  # root-mean-square distance between aligned B and A over the fitted rows


def procrustes_align(reference: np.ndarray, moving: np.ndarray) -> Alignment:
    """``moving`` rotated, scaled and shifted onto ``reference`` (same rows; the column
    counts may differ: the narrower is padded with zeros)."""
    if reference.shape[0] != moving.shape[0]:
        raise ValueError(f"alignment needs the same rows: the reference has "
                         f"{reference.shape[0]}, the layout {moving.shape[0]}")
    cols = max(reference.shape[1], moving.shape[1])
    a = _padded(reference, cols)
    b = _padded(moving, cols)
    fit = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    if fit.sum() < 2:
        raise ValueError("alignment needs at least two rows placed in both layouts")
    centre_a, centre_b = a[fit].mean(axis=0), b[fit].mean(axis=0)
    a0, b0 = a[fit] - centre_a, b[fit] - centre_b
    rotation, singular_sum = orthogonal_procrustes(b0, a0)
    spread = float((b0 * b0).sum())
    scale = float(singular_sum) / spread if spread > 0 else 1.0
    aligned = (b - centre_b) @ rotation * scale + centre_a
    residual = float(np.sqrt(((aligned[fit] - a[fit]) ** 2).sum(axis=1).mean()))
    return Alignment(aligned.astype(np.float32), scale, residual)


def _padded(x: np.ndarray, cols: int) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if x.shape[1] == cols:
        return x
    return np.hstack([x, np.zeros((x.shape[0], cols - x.shape[1]))])
