"""PCA over a chunked embedding's shards: distributed covariance, one eigh here.

Two passes over the shards (in worker memory with a cluster): the finite rows' mean, then
the D x D Gram matrix of the rows centred on it (plus, when spherizing, of the centred unit
rows), each added up on the workers in a tree so the server receives one D x D matrix.
Centring before the product keeps float64 accuracy, as kernels/pca.py does, so the explained
variance ratios equal scikit-learn's to 1e-6. A third pass projects each shard; on a cluster the workers
write the N x c coordinates to a store (``coords_store.py``), without one they come
back. The D x D matrix bounds D (768: 4.7 MB; 4096: 134 MB).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from projector_core.distributed.coords_store import project_on_workers
from projector_core.distributed.knn import map_shards
from projector_core.distributed.shard_tasks import (
    add_parts,
    shard_covariance,
    shard_finite_mean,
    shard_project,
)
from projector_core.formats.chunked import ChunkedVectors
from projector_core.kernels.pca import PcaResult

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster


def _reduce(vectors: ChunkedVectors, cluster: Cluster | None,
            function: Callable[..., tuple[Any, ...]], *args: Any) -> tuple[Any, ...]:
    if cluster is not None:
        return cluster.reduce(function, cluster.held(vectors), *args)
    return add_parts(*map_shards(vectors, None, function, *args))


def sharded_pca(vectors: ChunkedVectors, cluster: Cluster | None, n_components: int = 10,
                spherize: bool = False) -> PcaResult:
    """Top ``min(n_components, D)`` components of the finite rows, as kernels.pca.pca."""
    n, dim = vectors.shape
    n_comp = min(n_components, dim)
    count, total = _reduce(vectors, cluster, shard_finite_mean)
    if count == 0:
        raise ValueError("PCA needs at least one row without NaN or Inf values")
    mean = total / count
    rows, sums, gram = _reduce(vectors, cluster, shard_covariance, mean, spherize)
    moved_mean = sums / rows
    covariance = gram / rows - np.outer(moved_mean, moved_mean)
    eigvals, eigvecs = np.linalg.eigh(covariance)
    order = np.arange(dim)[::-1][:n_comp]
    components = _flip_signs(eigvecs[:, order])
    variances = np.clip(eigvals[order], 0.0, None)
    total_variance = float(np.trace(covariance))
    ratios = variances / total_variance if total_variance > 0 else np.zeros_like(variances)
    shift = moved_mean if spherize else None
    offset = mean @ components
    if cluster is not None:  # written by the workers, never gathered here
        stored = project_on_workers(cluster, vectors, "pca", components, offset, mean,
                                    spherize, shift)  # StoredCoordinates: read by rows like an array
        return PcaResult(cast(np.ndarray, stored), [float(r) for r in ratios], n - count)
    parts = map_shards(vectors, None, shard_project, components, offset, mean, spherize, shift)
    coordinates = np.concatenate(parts) if parts else np.zeros((0, n_comp), np.float32)
    return PcaResult(coordinates, [float(r) for r in ratios], n - count)


def _flip_signs(components: np.ndarray) -> np.ndarray:
    """Each column's largest-magnitude entry positive (scikit-learn's svd_flip, as pca.py)."""
    rows = np.argmax(np.abs(components), axis=0)
    picked = components[rows, np.arange(components.shape[1])]
    return components * np.where(picked < 0, -1.0, 1.0)
