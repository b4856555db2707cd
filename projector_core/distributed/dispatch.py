"""The one place that picks a kernel: single-machine, sharded in-process, or on the cluster.

Routes call these three functions with the app's cluster (None without ``--dask``). A chunked
embedding (zarr, ``.npy`` shards) is answered shard by shard: on the workers when there is a
cluster, which read the shards from the same path, in this process otherwise. Embeddings in
memory (TSV, ``.npy``, checkpoints) keep the single-machine kernels: their data is here, not
where the workers are.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.coords_store import StoredCoordinates
from projector_core.distributed.knn import ShardedIndex
from projector_core.formats.chunked import ChunkedVectors
from projector_core.kernels.ann import EXACT_BUDGET, neighbor_index
from projector_core.kernels.backend import Backend
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.projection.compute import ProjectionResult, check, compute, finished
from projector_core.projection.methods import method_for
from projector_core.projection.methods.base import Reporter
from projector_core.projection.params import ProjectionRequest
from projector_core.tiles.sharded_build import build_tile_store

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster


def _on_cluster(cluster: Cluster | None, embedding: Embedding) -> ChunkedVectors | None:
    """The embedding's chunked vectors when the cluster should compute on them."""
    vectors = embedding.vectors()
    if cluster is None or not isinstance(vectors, ChunkedVectors):
        return None
    cluster.check()  # a 503 now rather than a failed job later
    return vectors


def neighbor_index_for(cluster: Cluster | None, embedding: Embedding, metric: Metric,
                       backend: Backend) -> NeighborIndex:
    """What answers a neighbour query on ``embedding``."""
    vectors = embedding.vectors()
    if isinstance(vectors, ChunkedVectors):
        if _on_cluster(cluster, embedding) is None:
            return ShardedIndex(vectors)
        # As kernels/ann.py decides: scan exactly up to EXACT_BUDGET values, above it ask
        # each shard's HNSW graph for candidates (re-scored exactly).
        return ShardedIndex(vectors, cluster, approximate=vectors.shape[0] * vectors.shape[1]
                            > EXACT_BUDGET)
    return neighbor_index(embedding.fingerprint, embedding.vectors, metric, backend)


def check_projection(request: ProjectionRequest, embedding: Embedding,
                     cluster: Cluster | None) -> None:
    """ValueError (422) for a request the data cannot satisfy, ClusterUnavailable (503)."""
    check(request, embedding)
    _on_cluster(cluster, embedding)


def compute_projection(request: ProjectionRequest, embedding: Embedding, backend: Backend,
                       reporter: Reporter | None, cluster: Cluster | None,
                       reference: np.ndarray | None = None) -> ProjectionResult:
    """Projections of a chunked embedding on the cluster (t-SNE and UMAP: a sample fitted,
    the rest placed by the workers); precomputed ones, and all without a cluster, as before
    (``reference``: see :func:`projections.compute`; the cluster path does not align)."""
    vectors = _on_cluster(cluster, embedding)
    method = method_for(request)
    if vectors is None or not method.runs_on_cluster:
        return compute(request, embedding, backend, reporter, reference)
    assert cluster is not None
    started = time.perf_counter()
    info: dict[str, Any] = {"method": request.method, "n_points": vectors.shape[0],
                            "device": backend.device, "cluster": cluster.address}
    if reporter is not None:
        reporter.step(None, 0.0)
    coordinates, details = method.run_on_cluster(embedding, vectors, cluster, reporter)
    info.update(details)
    if isinstance(coordinates, StoredCoordinates):
        coded = {name: (stored.path, stored.dictionary)
                 for name, stored in embedding.stored_columns().items()}
        return stored_result(coordinates, cluster, vectors, coded, info, started)
    return finished(coordinates, info, started)


def stored_result(coordinates: StoredCoordinates, cluster: Cluster, vectors: ChunkedVectors,
                  coded: dict[str, tuple[str, list[str]]], info: dict[str, Any],
                  started: float) -> ProjectionResult:
    """A result the workers wrote to disk, with its tiles over the first two axes built by
    them too, carrying ``coded``: name -> (path, dictionary) of the categorical columns
    stored beside the embedding (``formats/code_columns.py``; the tiles' dictionary is the
    column's, as the counts route answers it). The server keeps a path and a few numbers,
    never the N x c array."""
    n, columns = coordinates.shape
    shards = vectors.shards()
    axes = list(range(min(columns, 2)))
    projected = time.perf_counter()
    coordinates.tiles = build_tile_store(coordinates, shards[0].stop - shards[0].start, axes,
                                         cluster, coded)
    info.update({"dims": columns, "invalid_rows": n - coordinates.stats.finite,
                 "tiles_seconds": round(time.perf_counter() - projected, 3),
                 "tile_columns": sorted(coded),
                 "seconds": round(time.perf_counter() - started, 3),
                 "stored": {"coordinates": coordinates.path, "tiles": coordinates.tiles}})
    return ProjectionResult(coordinates, info)  # type: ignore[arg-type]
