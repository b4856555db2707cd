"""What a projection request computes: an embedding in, coordinates and an info dict out.

Each method is a class in :mod:`projector_core.projection.methods` that checks the request
against the data and runs it, here or, over a chunked embedding with ``--dask``, on the
cluster's workers (``run_on_cluster``; ``distributed/dispatch.py`` says where the vectors
are computed on); this module picks it from the registry and does what every method shares.
Every method returns one row per point. Rows holding NaN or Inf are left out of the fit and
get NaN coordinates (``null`` in JSON); ``info.invalid_rows`` counts the rows without
coordinates. t-SNE and UMAP report each step to a :class:`Reporter` (the job's context),
which streams frames and can pause or cancel the run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.coords_store import StoredCoordinates
from projector_core.distributed.dispatch import on_cluster
from projector_core.jobs.reporter import Reporter, Silent
from projector_core.kernels.backend import Backend
from projector_core.projection.methods import method_for
from projector_core.projection.methods.base import RunContext
from projector_core.projection.params import ProjectionRequest
from projector_core.storage.result_cache import result_key

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster


@dataclass(frozen=True)
class ProjectionResult:
    coordinates: np.ndarray  # float32 [N, k], NaN rows for points without coordinates
    info: dict[str, Any]

    @property
    def nbytes(self) -> int:
        return self.coordinates.nbytes


def request_key(request: ProjectionRequest, embedding: Embedding, backend: Backend) -> str:
    """The result-cache key: this version of the embedding, the full request, the device."""
    described = request.model_dump(mode="json", exclude={"run", "embedding", "device"})
    described["device"] = backend.name if backend.is_numpy else f"{backend.name}:{backend.device}"
    named = [v for value in described.get("params", {}).values()
             for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    added = embedding.added_columns() if named else {}
    # A column the request reads that changes while the data stays (an annotation column):
    # its version is part of the key, so an edit is never answered from an older result.
    versions = {name: added[name].digest for name in named if name in added}
    if versions:
        described["columns"] = versions
    return result_key(embedding.fingerprint, described)


def check(request: ProjectionRequest, embedding: Embedding, cluster: Cluster | None = None
          ) -> None:
    """Raise ValueError (a 422) for a request this embedding cannot satisfy, before queueing;
    ClusterUnavailable (a 503) when the cluster that would compute it is down."""
    method_for(request).check(embedding)
    on_cluster(cluster, embedding.vectors())


def compute(request: ProjectionRequest, embedding: Embedding, backend: Backend,
            reporter: Reporter | None = None, reference: np.ndarray | None = None,
            cluster: Cluster | None = None) -> ProjectionResult:
    """Run the projection; ValueError/DataError mean the request or data do not fit.

    ``reference``: the layout of the job named by ``init_from_job`` / ``align_to_job``
    (same rows); t-SNE and UMAP start from it, and every result is turned onto it.
    With a ``cluster``, a chunked embedding's method that runs there does (t-SNE and UMAP: a
    sample fitted, the rest placed by the workers; no alignment there).
    """
    method = method_for(request)
    started = time.perf_counter()
    data = embedding.vectors()
    info: dict[str, Any] = {"method": request.method, "n_points": int(data.shape[0]),
                            "device": backend.device}
    vectors = on_cluster(cluster, data)
    if vectors is not None and method.runs_on_cluster:
        assert cluster is not None
        info["cluster"] = cluster.address
        if reporter is not None:
            reporter.step(None, 0.0)
        coordinates, details = method.run_on_cluster(embedding, vectors, cluster, reporter)
        info.update(details)
        if isinstance(coordinates, StoredCoordinates):
            return stored(coordinates, info, started)
        return finished(coordinates, info, started)
    coordinates, details = method.run(RunContext(embedding, data, backend, reporter or Silent(),
                                                 reference))
    info.update(details)
    coordinates = np.asarray(coordinates, np.float32)
    if reference is not None:
        # A wider reference (PCA's 10 columns) is matched on the columns this result has.
        from projector_core.kernels.align import procrustes_align  # scipy: on first use

        aligned = procrustes_align(reference[:, :coordinates.shape[1]], coordinates)
        coordinates = aligned.coordinates
        info["alignment"] = {"scale": aligned.scale, "residual": aligned.residual,
                             "initialised": method.starts_from_layout}
    return finished(coordinates, info, started)


def finished(coordinates: np.ndarray, info: dict[str, Any], started: float) -> ProjectionResult:
    """The result as every method (and every place it ran) answers it: a point missing any
    value is unplaced (all NaN), and the info says the dims, the unplaced rows and the time."""
    coordinates = np.asarray(coordinates, np.float32)
    placeable = np.isfinite(coordinates).all(axis=1)
    if not placeable.all():  # one missing value leaves the whole point unplaced
        coordinates[~placeable] = np.nan
    info["dims"] = int(coordinates.shape[1])
    info["invalid_rows"] = int(coordinates.shape[0] - placeable.sum())
    info["seconds"] = round(time.perf_counter() - started, 3)
    return ProjectionResult(coordinates, info)


def stored(coordinates: StoredCoordinates, info: dict[str, Any], started: float
           ) -> ProjectionResult:
    """A result the workers wrote to disk (the server keeps a path and a few numbers, never
    the N x c array); its tiles are built by them next (``tiles/sharded_build.py``)."""
    n, columns = coordinates.shape
    info.update({"dims": columns, "invalid_rows": n - coordinates.stats.finite,
                 "seconds": round(time.perf_counter() - started, 3)})
    return ProjectionResult(coordinates, info)  # type: ignore[arg-type]  # read by rows


def check_reference(reference: np.ndarray, request: ProjectionRequest, rows: int) -> None:
    """A reference layout must cover the same rows (and, to start from, the output dims)."""
    if reference.shape[0] != rows:
        raise ValueError(f"the reference job's layout has {reference.shape[0]} rows; this "
                         f"embedding has {rows}: a reference pairs rows")
    if method_for(request).starts_from_layout and reference.shape[1] < request.dims:
        raise ValueError(f"the reference job's layout has {reference.shape[1]} columns; a "
                         f"{request.dims}-D start needs as many")
