"""Where a computation over an embedding's vectors runs, and which index answers its neighbours.

A chunked embedding (zarr, ``.npy`` shards) is answered shard by shard: on the workers when
there is a cluster (``--dask``), which read the shards from the same path, in this process
otherwise. Vectors in memory (TSV, ``.npy``, checkpoints) keep the single-machine kernels:
their data is here, not where the workers are. A projection asks :func:`on_cluster` whether
its method runs on the workers (``projection/compute.py``); every neighbour query, the
service's and an export's, gets its index from :func:`neighbor_index`. Nothing here knows what
a projection is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from projector_core.distributed.knn import ShardedIndex
from projector_core.formats.chunked import ChunkedVectors
from projector_core.kernels.ann import approximate_indexes
from projector_core.kernels.backend import Backend, get_backend
from projector_core.kernels.knn import exact_index
from projector_core.kernels.neighbor_index import Metric, NeighborIndex

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

# N x D above which a CPU query switches to the approximate index: 2**27 float32 values are
# 512 MiB, an exact scan of about 50 ms at the ~10 GB/s two cores read: the most a phrase
# search may spend searching at 1M x 384 (issue 37, bench/bench_meaning_search.py). Above it
# the graph answers in milliseconds with exact re-scoring; it was 2**30 (4 GiB, a scan of
# 0.3-0.4 s at 1M x 384 on two busy cores).
EXACT_BUDGET = 2**27


def on_cluster(cluster: Cluster | None, vectors: np.ndarray | ChunkedVectors
               ) -> ChunkedVectors | None:
    """The chunked vectors when the cluster should compute on them; None when this process
    does. ClusterUnavailable (a 503) now, when the cluster is down, rather than a failed job
    later."""
    if cluster is None or not isinstance(vectors, ChunkedVectors):
        return None
    cluster.check()
    return vectors


def neighbor_index(key: str, load: Callable[[], np.ndarray | ChunkedVectors], metric: Metric,
                   backend: Backend | None = None, cluster: Cluster | None = None,
                   exact_budget: int | None = None) -> NeighborIndex:
    """The one choice of what answers neighbour queries over the vectors ``load`` gives
    (``key``: their fingerprint).

    Chunked vectors are scanned shard by shard (exactly; on the cluster's workers when there
    is one, where above ``EXACT_BUDGET`` values each shard's HNSW graph proposes candidates,
    re-scored exactly). Vectors in memory are scanned exactly up to ``EXACT_BUDGET`` values
    (N x D) or on a GPU; above it the HNSW graph answers once built in the background, the
    exact scan meanwhile.
    """
    budget = EXACT_BUDGET if exact_budget is None else exact_budget
    vectors = load()
    if isinstance(vectors, ChunkedVectors):
        if on_cluster(cluster, vectors) is None:
            return ShardedIndex(vectors)
        return ShardedIndex(vectors, cluster,
                            approximate=vectors.shape[0] * vectors.shape[1] > budget)
    be = backend or get_backend("cpu")
    exact = exact_index(key, lambda: vectors, be)
    if not be.is_numpy or exact.n * exact.dim <= budget:
        return exact
    return approximate_indexes.ready(key, exact, metric) or exact
