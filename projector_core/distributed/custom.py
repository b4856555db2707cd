"""TensorBoard's custom projection over a chunked embedding's shards.

The metadata search runs here (the metadata is in this process); each shard adds up its
finite rows and the rows each side matched, the sums are combined here (a few D-vectors per
shard), and each shard projects its rows on the two axes. The arithmetic is
kernels/custom.py's, so the coordinates equal the single-machine ones to float rounding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from projector_core.distributed.coords_store import project_on_workers
from projector_core.distributed.knn import map_shards
from projector_core.distributed.shard_tasks import add_parts, shard_project, shard_side_sums
from projector_core.formats.chunked import ChunkedVectors
from projector_core.kernels.custom import SIDES, CustomResult, fallback_centroids
from projector_core.kernels.search import search

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster


def sharded_custom_projection(vectors: ChunkedVectors, cluster: Cluster | None, values: list[str],
                              left: str, right: str, up: str, down: str, regex: bool = False,
                              seed: int = 0) -> CustomResult:
    """As kernels.custom.custom_projection, over the shards."""
    n, dim = vectors.shape
    if len(values) != n:
        raise ValueError(f"the metadata column has {len(values)} values for {n} points")
    matched = [np.asarray(search(values, query, regex), np.int64)
               for query in (left, right, up, down)]
    shards = vectors.shards()
    members = [[rows[(rows >= s.start) & (rows < s.stop)] - s.start for rows in matched]
               for s in shards]
    if cluster is not None:
        parts = cluster.map_each(shard_side_sums, cluster.held(vectors), members)
    else:
        parts = [shard_side_sums(shard, part) for shard, part in zip(shards, members, strict=True)]
    n_valid, total, sums, counts = add_parts(*parts)
    if n_valid == 0:
        raise ValueError("custom projection needs at least one row without NaN or Inf values")
    mean = total / n_valid
    fallback = fallback_centroids(dim, seed)
    centroids = {side: sums[i] / counts[i] if counts[i] else fallback[side]
                 for i, side in enumerate(SIDES)}
    axes = np.stack([centroids["right"] - centroids["left"],
                     centroids["up"] - centroids["down"]], axis=1)
    offset = mean @ axes
    matches = {side: int(counts[i]) for i, side in enumerate(SIDES)}
    if cluster is not None:  # written by the workers, never gathered here
        stored = project_on_workers(cluster, vectors, "custom", axes, offset, mean, False, None)
        return CustomResult(cast(np.ndarray, stored), matches)  # StoredCoordinates: read by rows
    parts = map_shards(vectors, None, shard_project, axes, offset, mean, False, None)
    return CustomResult(np.concatenate(parts), matches)

