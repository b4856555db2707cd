"""What a projection request computes: an embedding in, coordinates and an info dict out.

Every method returns one row per point. Rows holding NaN or Inf are left out of the fit and
get NaN coordinates (``null`` in JSON); ``info.invalid_rows`` counts the rows without
coordinates. t-SNE and UMAP report each step to a :class:`Reporter` (the job's context),
which streams frames and can pause or cancel the run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from projector_core.kernels.backend import Backend
from projector_core.kernels.custom import custom_projection
from projector_core.kernels.finite import finite_rows
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.pca import pca
from projector_core.kernels.precomputed import check_columns, precomputed
from projector_core.kernels.sampling import (
    SampledResult,
    sample_size,
    sampled_tsne,
    sampled_umap,
)
from projector_core.kernels.search import search
from projector_core.kernels.supervision import label_codes
from projector_core.model import Embedding
from projector_core.projection_params import (
    CustomRequest,
    PcaRequest,
    PrecomputedRequest,
    ProjectionRequest,
    TsneRequest,
    UmapRequest,
)
from projector_core.result_cache import result_key

PCA_COMPONENTS = 10
# Threads one t-SNE may use. The job manager runs two jobs at a time, so each gets half the
# cores: more threads than free cores make openTSNE's OpenMP loops wait on each other and run
# several times slower than one thread.
KERNEL_THREADS = max(1, (os.cpu_count() or 1) // 2)


class Reporter(Protocol):
    def step(self, iteration: int | None, progress: float,
             frame: Callable[[], np.ndarray] | None = None) -> None: ...


@dataclass(frozen=True)
class ProjectionResult:
    coordinates: np.ndarray  # float32 [N, k], NaN rows for points without coordinates
    info: dict[str, Any]

    @property
    def nbytes(self) -> int:
        return self.coordinates.nbytes


class _Silent:
    def step(self, iteration: int | None, progress: float,
             frame: Callable[[], np.ndarray] | None = None) -> None:
        return None


def request_key(request: ProjectionRequest, embedding: Embedding, backend: Backend) -> str:
    """The result-cache key: this version of the embedding, the full request, the device."""
    described = request.model_dump(mode="json", exclude={"run", "embedding", "device"})
    described["device"] = backend.name if backend.is_numpy else f"{backend.name}:{backend.device}"
    return result_key(embedding.fingerprint, described)


def check(request: ProjectionRequest, embedding: Embedding) -> None:
    """Raise ValueError (a 422) for a request this embedding cannot satisfy, before queueing."""
    embedding.vectors()  # DataError when the tensor is broken
    n, dim = embedding.shape or (0, 0)
    if isinstance(request, TsneRequest | UmapRequest):
        n = _fitted_points(request, n)
    if isinstance(request, TsneRequest):
        from projector_core.kernels.tsne import max_perplexity  # openTSNE: imported on first use

        perplexity = request.params.perplexity
        if n < 4:
            raise ValueError(f"t-SNE needs at least 4 points; this embedding has {n}")
        if perplexity is not None and perplexity > max_perplexity(n):
            raise ValueError(f"perplexity {perplexity:g} is too large for {n} points: it must "
                             f"be at most (N - 1) / 3 = {max_perplexity(n):.4g}")
        if request.params.supervise_column is not None:
            check_columns(embedding.metadata(), [request.params.supervise_column], numeric=False)
    elif isinstance(request, UmapRequest):
        if request.params.n_neighbors >= n:
            raise ValueError(f"n_neighbors {request.params.n_neighbors} must be smaller than "
                             f"the number of points ({n})")
    elif isinstance(request, CustomRequest):
        params = request.params
        check_columns(embedding.metadata(), [params.column], numeric=False)
        if params.regex:
            for query in (params.left, params.right, params.up, params.down):
                search([], query, regex=True)  # raises ValueError for a bad pattern
    elif isinstance(request, PrecomputedRequest):
        if request.params.columns:
            check_columns(embedding.metadata(), request.params.columns)
        elif dim > 3:
            raise ValueError(f"the data has {dim} dimensions; plotting it as it is needs at "
                             "most 3 (or name 2-3 numeric metadata columns in 'columns')")


def compute(request: ProjectionRequest, embedding: Embedding, backend: Backend,
            reporter: Reporter | None = None, reference: np.ndarray | None = None) -> ProjectionResult:
    """Run the projection; ValueError/DataError mean the request or data do not fit.

    ``reference``: the layout of the job named by ``init_from_job`` / ``align_to_job``
    (same rows); t-SNE and UMAP start from it, and every result is turned onto it.
    """
    reporter = reporter or _Silent()
    started = time.perf_counter()
    data = embedding.vectors()
    info: dict[str, Any] = {"method": request.method, "n_points": int(data.shape[0]),
                            "device": backend.device}
    if isinstance(request, TsneRequest | UmapRequest):
        valid = finite_rows(data)
        fit_data = data if valid.all() else np.ascontiguousarray(data[valid])
        reporter.step(None, 0.0)
        init = None if reference is None else start_layout(reference, valid, request)
        if isinstance(request, TsneRequest):
            fitted, details = _tsne(request, fit_data, valid, backend, reporter, init,
                                    lambda: _supervise_labels(request, embedding, valid))
        else:
            fitted, details = _umap(request, fit_data, valid, backend, reporter, init)
        coordinates = spread(valid, fitted)
        info.update(details)
    elif isinstance(request, PcaRequest):
        result = pca(data, PCA_COMPONENTS, request.params.spherize, backend)
        coordinates = result.coordinates
        info["explained_variance_ratio"] = result.explained_variance_ratio
    elif isinstance(request, CustomRequest):
        params = request.params
        metadata = embedding.metadata()
        check_columns(metadata, [params.column], numeric=False)
        assert metadata is not None
        result = custom_projection(data, metadata.column(params.column), params.left,
                                   params.right, params.up, params.down, params.regex,
                                   backend=backend)
        coordinates = result.coordinates
        info["matches"] = result.matches
    else:
        result = precomputed(data, embedding.metadata(), request.params.columns)
        coordinates = result.coordinates
        info["columns"] = result.source
    coordinates = np.asarray(coordinates, np.float32)
    if reference is not None:
        # A wider reference (PCA's 10 columns) is matched on the columns this result has.
        from projector_core.kernels.align import procrustes_align  # scipy: on first use

        aligned = procrustes_align(reference[:, :coordinates.shape[1]], coordinates)
        coordinates = aligned.coordinates
        info["alignment"] = {"scale": aligned.scale, "residual": aligned.residual,
                             "initialised": isinstance(request, TsneRequest | UmapRequest)}
    placeable = np.isfinite(coordinates).all(axis=1)
    if not placeable.all():  # one missing value leaves the whole point unplaced
        coordinates[~placeable] = np.nan
    info["dims"] = int(coordinates.shape[1])
    info["invalid_rows"] = int(coordinates.shape[0] - placeable.sum())
    info["seconds"] = round(time.perf_counter() - started, 3)
    return ProjectionResult(coordinates, info)


def _fitted_points(request: TsneRequest | UmapRequest, n: int) -> int:
    """How many points the fit itself sees: the sample's size when sampling."""
    params = request.params
    m = sample_size(n, params.mode, params.sample_threshold, params.sample_size)
    return n if m is None else m


def check_reference(reference: np.ndarray, request: ProjectionRequest, rows: int) -> None:
    """A reference layout must cover the same rows (and, to start from, the output dims)."""
    if reference.shape[0] != rows:
        raise ValueError(f"the reference job's layout has {reference.shape[0]} rows; this "
                         f"embedding has {rows}: a reference pairs rows")
    if isinstance(request, TsneRequest | UmapRequest) and reference.shape[1] < request.dims:
        raise ValueError(f"the reference job's layout has {reference.shape[1]} columns; a "
                         f"{request.dims}-D start needs as many")


def start_layout(reference: np.ndarray, valid: np.ndarray, request: TsneRequest | UmapRequest
                 ) -> np.ndarray:
    """The reference's rows for the fitted points as a start layout: centred, rows without
    coordinates at the centre. t-SNE keeps its scale and continues from it (openTSNE's tiny
    std-1e-4 start plus early exaggeration would rebuild the layout: 15% median drift against
    2% on an unchanged, rotated input); UMAP gets its 0..10 box."""
    start = np.array(reference[valid][:, :request.dims], np.float64)
    start -= np.nanmean(start, axis=0)
    start[~np.isfinite(start)] = 0.0
    if isinstance(request, TsneRequest):
        return start
    span = start.max(axis=0) - start.min(axis=0)
    return np.ascontiguousarray(10.0 * (start - start.min(axis=0)) / np.where(span > 0, span, 1.0),
                                np.float32)


def spread(valid: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    """Coordinates of the fitted (finite) rows placed back among all rows, NaN elsewhere."""
    if valid.all():
        return np.array(fitted, dtype=np.float32)
    out = np.full((valid.shape[0], fitted.shape[1]), np.nan, np.float32)
    out[valid] = fitted
    return out


def _supervise_labels(request: TsneRequest, embedding: Embedding, valid: np.ndarray
                      ) -> np.ndarray | None:
    """Label codes of the fitted rows when the request supervises, else None."""
    params = request.params
    if params.supervise_column is None or params.supervise_weight <= 0:
        return None
    metadata = embedding.metadata()
    check_columns(metadata, [params.supervise_column], numeric=False)
    assert metadata is not None
    codes = label_codes(metadata.arrays[params.supervise_column])
    if codes.shape[0] != valid.shape[0]:
        raise ValueError(f"metadata has {codes.shape[0]} rows for {valid.shape[0]} points: "
                         "supervision needs one label per point")
    return codes[valid]


def _tsne(request: TsneRequest, data: np.ndarray, valid: np.ndarray, backend: Backend,
          reporter: Reporter, init: np.ndarray | None,
          supervision: Callable[[], np.ndarray | None] = lambda: None
          ) -> tuple[np.ndarray, dict[str, Any]]:
    """``supervision`` gives the fitted rows' label codes (or None); read in full mode only."""
    from projector_core.kernels.tsne import default_perplexity, tsne  # openTSNE: on first use

    params = request.params
    m = sample_size(data.shape[0], params.mode, params.sample_threshold, params.sample_size)
    if m is not None:  # the sample fit is unsupervised (said in info)
        fitted, details = _sampled(valid, reporter, lambda on_step: sampled_tsne(
            data, m, request.dims, params.perplexity, params.learning_rate, params.n_iter,
            params.early_exaggeration, params.seed, KERNEL_THREADS, on_step))
        return fitted, {**details, "supervised": False}
    labels = supervision()
    neighbors = None
    if not backend.is_numpy:
        perplexity = params.perplexity or default_perplexity(data.shape[0])
        k = min(data.shape[0] - 1, int(3 * perplexity))
        indices, distances = ExactIndex(data, backend).neighbors_of(
            np.arange(data.shape[0]), k, "euclidean")
        neighbors = (indices, distances.astype(np.float64))

    def on_step(iteration: int, progress: float, live: np.ndarray | None) -> None:
        reporter.step(iteration, progress, None if live is None else lambda: spread(valid, live))

    # A start layout is already organised: no early exaggeration to tear it apart.
    exaggeration = params.early_exaggeration if init is None else 1.0
    result = tsne(data, request.dims, params.perplexity, params.learning_rate, params.n_iter,
                  exaggeration, params.seed, neighbors=neighbors,
                  n_jobs=KERNEL_THREADS, on_step=on_step, init=init,
                  supervision=None if labels is None else (labels, params.supervise_weight))
    return result.coordinates, {
        "supervised": labels is not None,
        "perplexity": result.perplexity, "kl_divergence": result.kl_divergence,
        "gradient_method": result.gradient_method, "iterations": params.n_iter,
        "neighbors": "exact" if neighbors is not None else "openTSNE",
        "mode": "full", "sample_size": int(data.shape[0]),
    }


def _umap(request: UmapRequest, data: np.ndarray, valid: np.ndarray, backend: Backend,
          reporter: Reporter, init: np.ndarray | None) -> tuple[np.ndarray, dict[str, Any]]:
    from projector_core.kernels.umap import exact_neighbors, umap  # numba: imported on first use

    params = request.params
    if params.n_neighbors >= data.shape[0]:
        raise ValueError(f"n_neighbors {params.n_neighbors} must be smaller than the number of "
                         f"finite points ({data.shape[0]})")
    m = sample_size(data.shape[0], params.mode, params.sample_threshold, params.sample_size)
    if m is not None:
        return _sampled(valid, reporter, lambda on_step: sampled_umap(
            data, m, request.dims, params.n_neighbors, params.min_dist, params.n_epochs,
            params.seed, on_step))
    neighbors = None
    if not backend.is_numpy:
        neighbors = exact_neighbors(data, params.n_neighbors - 1, ExactIndex(data, backend))

    def on_step(epoch: int, progress: float, live: np.ndarray) -> None:
        reporter.step(epoch, progress, lambda: spread(valid, live))

    result = umap(data, request.dims, params.n_neighbors, params.min_dist, params.n_epochs,
                  params.seed, neighbors=neighbors, on_step=on_step, init=init)
    return result.coordinates, {"n_epochs": result.n_epochs, "neighbors": result.neighbors,
                                "mode": "full", "sample_size": int(data.shape[0])}


def _sampled(valid: np.ndarray, reporter: Reporter,
             run: Callable[[Callable], SampledResult]) -> tuple[np.ndarray, dict[str, Any]]:
    """A sampled fit (:mod:`kernels.sampling`) streaming its frames to ``reporter``."""
    def on_step(iteration: int, progress: float, live: np.ndarray | None) -> None:
        reporter.step(iteration, progress, None if live is None else lambda: spread(valid, live))

    result = run(on_step)
    return result.coordinates, {**result.details, "mode": "sample",
                                "sample_size": result.sample_size}
