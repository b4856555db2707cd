"""Each point's k nearest neighbours in the original space, written in row chunks, so that a
page with no server lists a clicked point's neighbours from one small file.

The lists come from the index ``GET /api/neighbors`` asks (``distributed/dispatch.py``
``neighbor_index``), so a shared site lists what the server would; a sampled export asks the
same choice for an index over its own rows. Above ``ALL_EXACT_ROWS`` rows the lists come
from the k-means cells graph instead (``kernels/cells.py``, what a comparison uses: every
row's neighbours at once, about 99 % of the true ones), ranked by exact distances: exact lists
of every row cost N² distances, hours at a million rows. Chunk file: ``rows x k`` int32
neighbour rows (-1 where fewer exist), then ``rows x k`` float32 distances (NaN there),
nearest first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.dispatch import neighbor_index
from projector_core.export.files import SiteFiles
from projector_core.kernels.backend import get_backend
from projector_core.kernels.cells import CellIndex
from projector_core.kernels.knn import ExactIndex, exact_distances
from projector_core.kernels.neighbor_index import Metric, NeighborIndex, pad_columns
from projector_core.storage.fingerprint import fingerprint

CHUNK_ROWS = 1024  # rows per file: 240 KB at k = 30, one request per click
ALL_EXACT_ROWS = 50_000  # above: the cells graph (2.5e9 exact distances take minutes here)


def index_over(embedding: Embedding, rows: np.ndarray | None, metric: Metric,
               device: str) -> NeighborIndex:
    """The server's index for the whole embedding; for a sample, one over its rows."""
    backend = get_backend(device)
    if rows is None:
        return neighbor_index(embedding.fingerprint, embedding.vectors, metric, backend)
    vectors = np.ascontiguousarray(embedding.vectors()[rows], np.float32)
    key = fingerprint(embedding.fingerprint, rows.tobytes())
    return neighbor_index(key, lambda: vectors, metric, backend)


def _cells_graph(index: NeighborIndex, k: int, metric: Metric,
                 progress: Callable[[float], None]) -> np.ndarray:
    """Every row's ``k`` neighbours from the cells graph (-1 for a non-finite row)."""
    exact = index.exact
    assert isinstance(exact, ExactIndex)
    finite = np.flatnonzero(np.asarray(index.finite))
    graph = np.full((index.n, k), -1, np.int64)
    graph[finite] = pad_columns(CellIndex(exact).build(k, metric, finite, progress), k)
    return graph


def write_neighbors(files: SiteFiles, folder: str, index: NeighborIndex, k: int,
                    metric: Metric, progress: Callable[[float], None]) -> list[str]:
    """The chunk files of every row's ``k`` neighbours by ``metric``; their names in order."""
    n = index.n
    finite = np.asarray(index.finite)
    graph = None
    if n > ALL_EXACT_ROWS and k and isinstance(index.exact, ExactIndex):
        graph = _cells_graph(index, k, metric, lambda f: progress(0.8 * f))
        vectors = np.asarray(index.exact.host)
    names = []
    for start in range(0, n, CHUNK_ROWS):
        rows = np.arange(start, min(n, start + CHUNK_ROWS))
        found = np.full((rows.size, k), -1, np.int32)
        distances = np.full((rows.size, k), np.nan, np.float32)
        ok = rows[finite[rows]]
        if ok.size and k and graph is not None:
            nbrs = graph[ok]
            found[ok - start] = nbrs
            pairs = vectors[np.maximum(nbrs, 0)].astype(np.float32)
            dist = exact_distances(np, pairs, vectors[ok][:, None, :].astype(np.float32), metric)
            distances[ok - start] = dist
        elif ok.size and k:
            indices, dist = index.neighbors_of(ok, k, metric)
            width = min(k, indices.shape[1])
            found[ok - start, :width] = indices[:, :width]
            distances[ok - start, :width] = dist[:, :width]
        distances[found < 0] = np.nan
        body = found.astype("<i4").tobytes() + distances.astype("<f4").tobytes()
        names.append(files.binary(f"{folder}/{start // CHUNK_ROWS:05d}.bin", body))
        done = (start + rows.size) / max(1, n)
        progress(min(1.0, done if graph is None else 0.8 + 0.2 * done))
    return names
