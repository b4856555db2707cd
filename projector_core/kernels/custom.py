"""TensorBoard's custom (linear) projection: axes defined by metadata queries.

As TensorBoard's Custom tab: each side (left, right, up, down) is a search on one
metadata column; its centroid is the mean of the matching points in the original
space; x axis = centroid(right) - centroid(left), y axis = centroid(up) -
centroid(down); a point's coordinates are its dot products with the two axes (the
axes are not normalised). A side that matches nothing (or has an empty query) uses a
random standard-normal vector as its centroid, as TensorBoard does, but seeded, and drawn by
``portable_random`` so that the browser's local compute draws the same vector.

One difference, documented: TensorBoard projects whatever vectors it holds, which are
centred and scaled to unit length when "Spherize data" is on (its default for D >= 50).
We project the original vectors minus their mean. Centring only translates the picture
(x . a - mean . a), so it keeps the plot around the origin without changing its shape;
a spherized picture needs spherized input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from projector_core.kernels.backend import Backend, get_backend
from projector_core.kernels.portable_random import standard_normal
from projector_core.kernels.search import search

SIDES = ("left", "right", "up", "down")
_CHUNK_BYTES = 64 * 2**20


def fallback_centroids(dim: int, seed: int) -> dict[str, np.ndarray]:
    """Each side's random centroid, drawn in the order of SIDES from one stream, so each is
    stable on its own (the browser's customProjection draws them alike)."""
    normals = standard_normal(len(SIDES) * dim, seed).reshape(len(SIDES), dim)
    return dict(zip(SIDES, normals, strict=True))


@dataclass(frozen=True)
class CustomResult:
    coordinates: np.ndarray  # float32 [N, 2]; NaN rows where the input row was not finite
    matches: dict[str, int]  # finite points matched per side; 0 means a random centroid


def custom_projection(
    data: np.ndarray,
    values: list[str],
    left: str,
    right: str,
    up: str,
    down: str,
    regex: bool = False,
    seed: int = 0,
    backend: Backend | None = None,
) -> CustomResult:
    """Project ``data`` on the axes right - left and up - down.

    ``values`` is the metadata column searched (one string per row); queries are
    case-insensitive substrings or, with ``regex``, regular expressions (a bad one
    raises ValueError). Rows holding NaN or Inf never join a centroid and get NaN.
    """
    if data.ndim != 2:
        raise ValueError(f"data must be 2-D (N, D), got shape {data.shape}")
    n, dim = data.shape
    if len(values) != n:
        raise ValueError(f"the metadata column has {len(values)} values for {n} points")
    be = backend or get_backend("cpu")
    xp = be.xp
    queries = dict(zip(SIDES, (left, right, up, down), strict=True))
    member = {}
    for side, query in queries.items():
        member[side] = np.zeros(n, bool)
        member[side][search(values, query, regex)] = True

    # One pass: the finite rows' mean and each side's sum, in float64.
    step = max(1, _CHUNK_BYTES // max(1, dim * 8))
    valid = np.empty(n, bool)
    total = np.zeros(dim, np.float64)
    sums = {side: np.zeros(dim, np.float64) for side in SIDES}
    matches = dict.fromkeys(SIDES, 0)
    for start in range(0, n, step):
        x = np.asarray(data[start : start + step], np.float64)
        ok = np.isfinite(x).all(axis=1)
        valid[start : start + step] = ok
        total += x[ok].sum(axis=0)
        for side in SIDES:
            rows = member[side][start : start + step] & ok
            sums[side] += x[rows].sum(axis=0)
            matches[side] += int(rows.sum())
    n_valid = int(valid.sum())
    if n_valid == 0:
        raise ValueError("custom projection needs at least one row without NaN or Inf values")
    mean = total / n_valid

    fallback = fallback_centroids(dim, seed)
    centroids = {side: sums[side] / matches[side] if matches[side] else fallback[side] for side in SIDES}
    axes = np.stack([centroids["right"] - centroids["left"], centroids["up"] - centroids["down"]], axis=1)

    axes_dev = be.asarray(axes, np.float32)
    offset = mean @ axes  # centring, applied after the product to keep it one pass
    coordinates = np.full((n, 2), np.nan, np.float32)
    for start in range(0, n, step):
        ok = valid[start : start + step]
        product = be.to_numpy(xp.matmul(be.asarray(data[start : start + step], np.float32), axes_dev))
        coordinates[start : start + step][ok] = (product[ok] - offset).astype(np.float32)
    return CustomResult(coordinates, matches)
