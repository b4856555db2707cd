"""Each point's k nearest neighbours in the original space, written in row chunks, so that a
page with no server lists a clicked point's neighbours from one small file.

The lists come from the index ``GET /api/neighbors`` asks (``neighbor_index_for``), so a
shared site lists what the server would; a sampled export asks an index over its own rows.
Chunk file: ``rows x k`` int32 neighbour rows (-1 where fewer exist), then ``rows x k``
float32 distances (NaN there), nearest first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from projector_core.distributed.dispatch import neighbor_index_for
from projector_core.export.files import SiteFiles
from projector_core.fingerprint import fingerprint
from projector_core.kernels.ann import neighbor_index
from projector_core.kernels.backend import get_backend
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.model import Embedding

CHUNK_ROWS = 1024  # rows per file: 240 KB at k = 30, one request per click


def index_over(embedding: Embedding, rows: np.ndarray | None, metric: Metric,
               device: str) -> NeighborIndex:
    """The server's index for the whole embedding; for a sample, one over its rows."""
    backend = get_backend(device)
    if rows is None:
        return neighbor_index_for(None, embedding, metric, backend)
    vectors = np.ascontiguousarray(embedding.vectors()[rows], np.float32)
    key = fingerprint(embedding.fingerprint, rows.tobytes())
    return neighbor_index(key, lambda: vectors, metric, backend)


def write_neighbors(files: SiteFiles, folder: str, index: NeighborIndex, k: int,
                    metric: Metric, progress: Callable[[float], None]) -> list[str]:
    """The chunk files of every row's ``k`` neighbours by ``metric``; their names in order."""
    n = index.n
    finite = np.asarray(index.finite)
    names = []
    for start in range(0, n, CHUNK_ROWS):
        rows = np.arange(start, min(n, start + CHUNK_ROWS))
        found = np.full((rows.size, k), -1, np.int32)
        distances = np.full((rows.size, k), np.nan, np.float32)
        ok = rows[finite[rows]]
        if ok.size and k:
            indices, dist = index.neighbors_of(ok, k, metric)
            width = min(k, indices.shape[1])
            found[ok - start, :width] = indices[:, :width]
            distances[ok - start, :width] = dist[:, :width]
            distances[found < 0] = np.nan
        body = found.astype("<i4").tobytes() + distances.astype("<f4").tobytes()
        names.append(files.binary(f"{folder}/{start // CHUNK_ROWS:05d}.bin", body))
        progress(min(1.0, (start + rows.size) / max(1, n)))
    return names
