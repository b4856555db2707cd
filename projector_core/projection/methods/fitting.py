"""What t-SNE and UMAP share: the points a fit sees, its start layout, its streamed frames.

Both fit the finite rows only (the rest get NaN coordinates), may fit an even sample first
(:mod:`kernels.sampling`), may start from another job's layout, and stream every step to the
job's reporter.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.sample_fit import TsneFit, UmapFit, sampled_embedding
from projector_core.jobs.reporter import Reporter
from projector_core.kernels.backend import Backend
from projector_core.kernels.finite import finite_rows
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sampling import SampledResult, sample_size
from projector_core.projection.limits import Limit
from projector_core.projection.methods.base import ProjectionMethod, RunContext
from projector_core.projection.params import TsneParams, UmapParams

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.formats.chunked import ChunkedVectors

FitParams = TypeVar("FitParams", TsneParams, UmapParams)

# Threads one t-SNE may use. The job manager runs two jobs at a time, so each gets half the
# cores: more threads than free cores make openTSNE's OpenMP loops wait on each other and run
# several times slower than one thread.
KERNEL_THREADS = max(1, (os.cpu_count() or 1) // 2)


def fitted_points(params: TsneParams | UmapParams, n_points: int) -> int:
    """How many points the fit itself sees: the sample's size when sampling (ValueError when
    the sample cannot be taken: :func:`kernels.sampling.sample_size`)."""
    m = sample_size(n_points, params.mode, params.sample_threshold, params.sample_size)
    return n_points if m is None else m


def fit_neighbors(data: np.ndarray, k: int, backend: Backend
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """The neighbour graph a full t-SNE or UMAP fit is handed, chosen here for both: each
    row's ``k`` nearest other rows (euclidean; indices, float32 distances), scanned exactly on
    a GPU, where a scan is cheap. None on the CPU: the kernel searches itself (t-SNE: openTSNE's
    Annoy; UMAP: exact below 4,096 points, our HNSW graph above, never NN-descent). A sampled
    fit's neighbours come from its sample index (``kernels/sampling.py``)."""
    if backend.is_numpy:
        return None
    return ExactIndex(data, backend).neighbors_of(np.arange(data.shape[0]), k, "euclidean")


def start_layout(reference: np.ndarray, valid: np.ndarray, dims: int, keep_scale: bool
                 ) -> np.ndarray:
    """The reference's rows for the fitted points as a start layout: centred, rows without
    coordinates at the centre. t-SNE keeps its scale (``keep_scale``) and continues from it
    (openTSNE's tiny std-1e-4 start plus early exaggeration would rebuild the layout: 15%
    median drift against 2% on an unchanged, rotated input); UMAP gets its 0..10 box."""
    start = np.array(reference[valid][:, :dims], np.float64)
    start -= np.nanmean(start, axis=0)
    start[~np.isfinite(start)] = 0.0
    if keep_scale:
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


def streamed(valid: np.ndarray, reporter: Reporter
             ) -> Callable[[int, float, np.ndarray | None], None]:
    """A kernel's ``on_step`` that hands the job each live layout, spread over all rows."""
    def on_step(iteration: int, progress: float, live: np.ndarray | None) -> None:
        reporter.step(iteration, progress, None if live is None else lambda: spread(valid, live))

    return on_step


def sampled(valid: np.ndarray, reporter: Reporter,
            run: Callable[[Callable[..., Any]], SampledResult]) -> tuple[np.ndarray, dict[str, Any]]:
    """A sampled fit (:mod:`kernels.sampling`) streaming its frames to ``reporter``."""
    result = run(streamed(valid, reporter))
    return result.coordinates, {**result.details, "mode": "sample",
                                "sample_size": result.sample_size}


class LayoutFit(ProjectionMethod[FitParams]):
    """t-SNE or UMAP: a layout fitted to the finite rows, from a start layout when given.

    ``fit_limits(n)`` declares the limits for ``n`` fitted points; ``check`` applies them to
    the points the fit will see (the sample's size when sampling), ``run`` again to the
    finite rows it actually fits.
    """

    quick = False
    starts_from_layout = True
    streams_frames = True
    keeps_start_scale: ClassVar[bool] = False
    params_model: ClassVar[type[TsneParams] | type[UmapParams]]

    @classmethod
    @abstractmethod
    def fit_limits(cls, n_points: int, points: str = "points") -> dict[str, Limit]:
        """The limits ``n_points`` fitted points put on the parameters."""

    @abstractmethod
    def limited_values(self, n_points: int) -> dict[str, float | None]:
        """This request's value for each of :meth:`fit_limits` (None: a default that fits)."""

    @abstractmethod
    def fit(self, data: np.ndarray, valid: np.ndarray, ctx: RunContext, init: np.ndarray | None,
            sample: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        """The layout of ``data`` (the finite rows, ``valid`` marks them among all rows):
        of all of them, or of an even ``sample`` of that many, the rest placed after it."""

    @classmethod
    def fitted_defaults(cls, n_points: int) -> dict[str, Any]:
        """Defaults for ``n_points`` fitted points (see :meth:`data_defaults`)."""
        return {}

    @classmethod
    def data_defaults(cls, n_points: int, dim: int) -> dict[str, Any]:
        return cls.fitted_defaults(fitted_points(cls.params_model(), n_points))

    @classmethod
    def limits(cls, n_points: int, dim: int) -> dict[str, Limit]:
        fitted = fitted_points(cls.params_model(), n_points)
        return {name: limit.within(cls.params_model, name)
                if name in cls.params_model.model_fields else limit
                for name, limit in cls.fit_limits(fitted).items()}

    def check_fit(self, n_points: int, points: str = "points") -> None:
        """ValueError unless this request's parameters fit ``n_points`` fitted points."""
        values = self.limited_values(n_points)
        for name, limit in self.fit_limits(n_points, points).items():
            limit.check(values[name])

    def check(self, embedding: Embedding) -> None:
        super().check(embedding)
        self.check_fit(fitted_points(self.params, (embedding.shape or (0, 0))[0]))

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        valid = finite_rows(ctx.data)
        data = ctx.data if valid.all() else np.ascontiguousarray(ctx.data[valid])
        params = self.params
        sample = sample_size(data.shape[0], params.mode, params.sample_threshold,
                             params.sample_size)
        self.check_fit(sample or data.shape[0], "finite points")
        ctx.reporter.step(None, 0.0)
        init = None if ctx.reference is None else start_layout(
            ctx.reference, valid, self.dims, self.keeps_start_scale)
        fitted, details = self.fit(data, valid, ctx, init, sample)
        return spread(valid, fitted), details

    @abstractmethod
    def sample_fit(self) -> TsneFit | UmapFit:
        """This request as the cluster's sample fit takes it (its width and parameters)."""

    def run_on_cluster(self, embedding: Embedding, vectors: ChunkedVectors, cluster: Cluster,
                       reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
        """A sample fitted on one worker, the rest placed by all (:mod:`distributed.sample_fit`)."""
        return sampled_embedding(self.sample_fit(), vectors, cluster, reporter)
