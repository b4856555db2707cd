"""PCA over every point (TensorBoard samples 50,000 and projects to 200 random dims).

Streams the data in row chunks so memory stays bounded and the same code runs on a
GPU backend. Up to ``_EXACT_MAX_DIM`` dimensions the D x D covariance is accumulated
by chunked matrix products and diagonalised exactly (scikit-learn's own choice,
``covariance_eigh``, for tall data), in one pass plus one for the coordinates; unlike
scikit-learn's it centres before multiplying, so the ratios keep float64 accuracy
(bench/bench_pca.py). Above that a randomised subspace iteration on the covariance
costs a few passes of N x D x (c + 10) instead of N x D x D. The explained variance
ratios are over the total variance (the covariance trace), exact either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from projector_core.jobs.priority import yield_point
from projector_core.kernels.backend import Array, Backend, get_backend

_CHUNK_BYTES = 64 * 2**20
_EXACT_MAX_DIM = 2048
_OVERSAMPLE = 10
_POWER_ITERATIONS = 7


@dataclass(frozen=True)
class PcaResult:
    coordinates: np.ndarray  # float32 [N, c]; NaN rows where the input row was not finite
    explained_variance_ratio: list[float]  # per component, over the total variance
    excluded_rows: int  # rows holding NaN or Inf, left out of the fit


def pca(
    data: np.ndarray,
    n_components: int = 10,
    spherize: bool = False,
    backend: Backend | None = None,
    seed: int = 0,
) -> PcaResult:
    """Top ``min(n_components, D)`` principal components of the finite rows of ``data``.

    ``spherize`` first centres the data and scales each row to unit length (zero rows
    stay zero), as TensorBoard's "Spherize data" does, then fits PCA on the result.
    Component signs follow scikit-learn: each component's largest-magnitude entry is
    positive. ``seed`` only matters for the randomised solver (D > 2048).
    """
    if data.ndim != 2:
        raise ValueError(f"data must be 2-D (N, D), got shape {data.shape}")
    if n_components <= 0:
        raise ValueError(f"n_components must be positive, got {n_components}")
    be = backend or get_backend("cpu")
    xp = be.xp
    n, dim = data.shape
    n_comp = min(n_components, dim)
    exact = dim <= _EXACT_MAX_DIM
    valid, mean, cov = _first_pass(data, be, with_covariance=exact and not spherize)
    count = int(valid.sum())
    if count == 0:
        raise ValueError("PCA needs at least one row without NaN or Inf values")

    # Spherizing moves the rows off centre; their own mean (shift) is subtracted too.
    shift = None
    if exact:
        if spherize:
            cov, shift = _covariance(data, valid, mean, spherize, count, be)
        assert cov is not None  # the first pass makes it unless spherizing, which made it here
        total = float(xp.sum(xp.linalg.diagonal(cov)))
        eigvals, eigvecs = xp.linalg.eigh(cov)
        order = xp.flip(xp.arange(dim, device=cov.device))[:n_comp]
        variances = xp.take(eigvals, order)
        components = xp.take(eigvecs, order, axis=1)
    else:
        if spherize:
            shift = _mean_of(_moved_chunks(data, valid, mean, spherize, be), dim, count, be)
        variances, components, total = _randomized(
            data, valid, mean, spherize, shift, count, n_comp, be, seed
        )
    components = _flip_signs(components, xp)
    variances = np.clip(be.to_numpy(variances), 0.0, None)
    ratios = variances / total if total > 0 else np.zeros_like(variances)

    coordinates = np.full((n, n_comp), np.nan, np.float32)
    v32 = xp.astype(components, xp.float32)
    if spherize:
        for start, rows, moved in _moved_chunks(data, valid, mean, spherize, be, shift, True):
            coordinates[start + rows] = be.to_numpy(xp.matmul(moved, v32))
    else:
        # x @ V - mean @ V: no centred copy of the data; the rounding is far below what
        # float32 coordinates show.
        offset = be.to_numpy(xp.matmul(mean, xp.astype(components, xp.float64)))
        for start, chunk in _row_chunks(data):
            ok = valid[start : start + chunk.shape[0]]
            product = be.to_numpy(_times(be, be.asarray(chunk, np.float32), v32))
            rows = coordinates[start : start + chunk.shape[0]]
            if ok.all():  # a boolean-indexed copy costs 25x a plain one (2 s at 10M x 2)
                np.subtract(product, offset, out=rows, casting="unsafe")
            else:
                rows[ok] = product[ok] - offset
    return PcaResult(coordinates, [float(r) for r in ratios], n - count)


def _times(be: Backend, x: Array, v: Array) -> Array:
    """x @ v; on numpy with few columns by einsum: numpy's matmul of a tall N x 2 block by a
    2 x 2 one took 15x longer (3.8 s against 0.25 s for 8M rows)."""
    if be.is_numpy and x.shape[1] <= 16:
        return np.einsum("nd,dc->nc", x, v)
    return be.xp.matmul(x, v)


def _row_chunks(data: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Row blocks of ``_CHUNK_BYTES``; before each, background work may give way to a request
    (and a job stop, cancelled): every pass over the data reads through here."""
    step = max(1, _CHUNK_BYTES // max(1, data.shape[1] * 4))
    for start in range(0, data.shape[0], step):
        yield_point()
        yield start, data[start : start + step]


def _first_pass(
    data: np.ndarray, be: Backend, with_covariance: bool
) -> tuple[np.ndarray, Array, Array | None]:
    """Host mask of the rows without NaN/Inf, the float64 mean of those rows and, if
    asked, their covariance, all in one pass over the data.

    Rows are shifted by a pivot (the first chunk's mean) before the products: the Gram
    matrix of rows near their mean, minus the outer product of the small residual mean,
    loses nothing to cancellation and needs no earlier pass for the exact mean (the
    shifted column sums are small, so float32 is enough within a chunk). Rows are
    checked one by one only in chunks whose column sums come out non-finite.
    """
    xp = be.xp
    dim = data.shape[1]
    valid = np.ones(data.shape[0], bool)
    total = xp.zeros((dim,), dtype=xp.float64, device=be.device)
    gram = xp.zeros((dim, dim), dtype=xp.float64, device=be.device) if with_covariance else None
    pivot = None
    for start, chunk in _row_chunks(data):
        x = be.asarray(chunk, np.float32)
        checked = pivot is None  # the pivot must come from finite rows
        if checked:
            x = _finite_rows(x, valid[start : start + chunk.shape[0]], be)
            if x.shape[0] == 0:
                continue
            pivot = xp.mean(x, axis=0)
        shifted = x - pivot
        column_sums = xp.astype(xp.sum(shifted, axis=0), xp.float64)
        if not checked and not bool(xp.all(xp.isfinite(column_sums))):
            x = _finite_rows(x, valid[start : start + chunk.shape[0]], be)
            shifted = x - pivot
            column_sums = xp.astype(xp.sum(shifted, axis=0), xp.float64)
        total = total + column_sums
        if gram is not None:
            gram = gram + xp.astype(xp.matmul(xp.matrix_transpose(shifted), shifted), xp.float64)
    count = int(valid.sum())
    if pivot is None:
        return valid, total, None
    residual = total / count
    mean = xp.astype(pivot, xp.float64) + residual
    if gram is None:
        return valid, mean, None
    return valid, mean, gram / count - residual[:, None] * residual[None, :]


def _finite_rows(x: Array, valid: np.ndarray, be: Backend) -> Array:
    """The rows of ``x`` without NaN/Inf; marks the others False in ``valid`` (a view)."""
    xp = be.xp
    # A float64 row sum is finite exactly when the float32 row holds no NaN or Inf.
    ok = be.to_numpy(xp.isfinite(xp.sum(x, axis=1, dtype=xp.float64)))
    valid[:] = ok
    return x if ok.all() else xp.take(x, be.asarray(np.flatnonzero(ok)), axis=0)


def _moved_chunks(
    data: np.ndarray,
    valid: np.ndarray,
    mean: Array,
    spherize: bool,
    be: Backend,
    shift: Array | None = None,
    with_rows: bool = False,
) -> Iterator[Any]:
    """Finite rows per chunk on the device, centred and (if asked) scaled to unit
    length, then minus ``shift`` (the mean of the spherized rows) when given."""
    xp = be.xp
    mean32 = xp.astype(mean, xp.float32)
    shift32 = None if shift is None else xp.astype(shift, xp.float32)
    for start, chunk in _row_chunks(data):
        rows = np.flatnonzero(valid[start : start + chunk.shape[0]])
        if rows.size == 0:
            continue
        x = be.asarray(chunk[rows] if rows.size < chunk.shape[0] else chunk, np.float32)
        x = x - mean32
        if spherize:
            norms = xp.sqrt(xp.sum(x * x, axis=1, keepdims=True))
            x = x / xp.where(norms > 0, norms, xp.ones_like(norms))
        if shift32 is not None:
            x = x - shift32
        yield (start, rows, x) if with_rows else x


def _mean_of(chunks: Iterator[Any], dim: int, count: int, be: Backend) -> Array:
    xp = be.xp
    total = xp.zeros((dim,), dtype=xp.float64, device=be.device)
    for x in chunks:
        total = total + xp.sum(x, axis=0, dtype=xp.float64)
    return total / count


def _covariance(
    data: np.ndarray,
    valid: np.ndarray,
    mean: Array,
    spherize: bool,
    count: int,
    be: Backend,
) -> tuple[Array, Array]:
    """(D x D covariance divided by the row count, mean) of the moved rows, float64, in one
    pass: the moved rows are centred or unit length, so the Gram matrix minus the outer
    product of their mean loses nothing to cancellation."""
    xp = be.xp
    dim = data.shape[1]
    gram = xp.zeros((dim, dim), dtype=xp.float64, device=be.device)
    total = xp.zeros((dim,), dtype=xp.float64, device=be.device)
    for x in _moved_chunks(data, valid, mean, spherize, be):
        gram = gram + xp.astype(xp.matmul(xp.matrix_transpose(x), x), xp.float64)
        total = total + xp.sum(x, axis=0, dtype=xp.float64)
    moved_mean = total / count
    return gram / count - moved_mean[:, None] * moved_mean[None, :], moved_mean


def _randomized(
    data: np.ndarray,
    valid: np.ndarray,
    mean: Array,
    spherize: bool,
    shift: Array | None,
    count: int,
    n_comp: int,
    be: Backend,
    seed: int,
) -> tuple[Array, Array, float]:
    """Subspace iteration on the covariance, one data pass per iteration, then
    Rayleigh-Ritz; returns (variances, components D x c, total variance)."""
    xp = be.xp
    dim = data.shape[1]
    width = min(dim, n_comp + _OVERSAMPLE)
    rng = np.random.default_rng(seed)

    def covariance_times(basis: Array) -> tuple[Array, float]:
        """(covariance @ basis, trace of the covariance) in one pass over the data."""
        image = xp.zeros((dim, width), dtype=xp.float64, device=be.device)
        b32 = xp.astype(basis, xp.float32)
        trace = 0.0
        for x in _moved_chunks(data, valid, mean, spherize, be, shift):
            product = xp.matmul(xp.matrix_transpose(x), xp.matmul(x, b32))
            image = image + xp.astype(product, xp.float64)
            trace += float(xp.sum(x * x, dtype=xp.float64))
        return image / count, trace / count

    basis, _ = xp.linalg.qr(be.asarray(rng.standard_normal((dim, width)), np.float64))
    for _ in range(_POWER_ITERATIONS):
        basis, _ = xp.linalg.qr(covariance_times(basis)[0])
    image, total = covariance_times(basis)
    small = xp.matmul(xp.matrix_transpose(basis), image)
    eigvals, eigvecs = xp.linalg.eigh((small + xp.matrix_transpose(small)) / 2)
    order = xp.flip(xp.arange(width, device=small.device))[:n_comp]
    components = xp.matmul(basis, xp.take(eigvecs, order, axis=1))
    return xp.take(eigvals, order), components, total


def _flip_signs(components: Array, xp: Any) -> Array:
    """Make each column's largest-magnitude entry positive (scikit-learn's svd_flip)."""
    rows = xp.argmax(xp.abs(components), axis=0)
    picked = xp.take_along_axis(components, rows[None, :], axis=0)
    signs = xp.where(picked < 0, -1.0, 1.0)
    return components * signs
