"""The kNN graph of every row at once, by k-means cells: rows compared block by block.

A comparison needs the k nearest neighbours of every row, of two embeddings. An HNSW graph
answers one query at a time: at 1M x 128 on two cores it takes minutes to build and as
long again to query every row (bench/bench_compare.py). Here the rows are grouped into
k-means cells of about ``CELL_ROWS`` rows, and the rows of each cell are compared at once,
by one matrix product, with the rows of the ``PROBES`` cells whose centres are nearest its
own centre; the top k are kept. All the work is matrix products and top-k selections, the
two operations a CPU (or GPU) does best. With torch on a CPU the products run in bfloat16
(a quarter of float32's time on an AVX-512 core) and only pick a shortlist of ``2k`` rows,
whose distances are then computed in float32: the graph is ranked by exact distances.
Approximate: a neighbour in a cell not probed is missed, so callers report recall on a
sample against the exact index.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from projector_core.kernels.backend import Array, Backend, DeviceUnavailableError, get_backend
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.neighbor_index import METRICS, Metric, Progress, pad_columns

# Cell size and probes: at 1M x 128 (200 clusters of a 32-dim manifold) 4 probes of ~1,000
# rows found 91 % of the true 10 neighbours, 8 found 99.8 %; with 6, recall@10 was 0.99 and
# a comparison of two such embeddings took 175 CPU-seconds in float32; with the bfloat16
# shortlist, 0.981 and 113 CPU-seconds (67 s at load 2), of which ~14 per side make the
# cells: 9 assign rows, 4 sort them, 2 fit k-means (bench/bench_compare.py --previous).
CELL_ROWS = 1024
PROBES = 6
_TRAIN_PER_CELL = 32  # k-means is fitted on a sample of this many rows per cell
_KMEANS_ITERATIONS = 10
_ASSIGN_BYTES = 64 * 2**20  # bound on one block of row-to-centre scores
_WORKERS = 2  # threads scanning cells
# Cells are scored in bfloat16 where torch runs on the CPU (4x float32's products on an
# AVX-512 core); this many candidates per neighbour wanted are then rescored in float32.
_SHORTLIST = 2
_PARTITION_SHARE = 0.15  # of build progress: k-means and assignment, before the cell scans


@dataclass(frozen=True)
class _Cells:
    """Finite rows sorted by cell, prepared for scoring (unit rows for cosine)."""

    rows: np.ndarray  # int64 [M]: embedding row of each sorted position
    starts: list[int]  # C + 1 offsets of each cell in the sorted order
    probes: np.ndarray  # int64 [C, P]: cells scanned for each cell's rows, its own first
    centres: np.ndarray  # float32 [C, D]: the k-means centres, in prepared space
    vectors: Array  # float32 [M, D] on the search backend, sorted
    sq_norms: Array  # float32 [M]: squared norms (euclidean ranking)
    coarse: Array  # [M, D] the vectors as the cells are scored: bfloat16, or ``vectors``


class CellIndex:
    """Approximate neighbours of an embedding's rows from k-means cells (a
    :class:`~projector_core.kernels.neighbor_index.NeighborIndex`; the cells are made per
    metric, on first use)."""

    approximate = True
    metrics = METRICS

    def __init__(self, exact: ExactIndex, cell_rows: int = CELL_ROWS, probes: int = PROBES,
                 seed: int = 0) -> None:
        self.exact = exact
        self.n, self.dim = exact.n, exact.dim
        self.cell_rows, self.probe_count, self.seed = cell_rows, probes, seed
        self.backend = _search_backend(exact.backend)
        self._cells: dict[str, _Cells] = {}

    @property
    def finite(self) -> np.ndarray:
        return self.exact.valid_host

    def build(self, k: int, metric: Metric, rows: np.ndarray | None = None,
              progress: Progress | None = None) -> np.ndarray:
        """The kNN graph of ``rows`` (default: every finite row), nearest first, -1 where
        fewer than ``k`` rows were scanned."""
        self.exact.validated(np.zeros((1, self.dim), np.float32), k, metric, None)
        rows = np.flatnonzero(self.finite) if rows is None else np.asarray(rows, np.int64).reshape(-1)
        self.exact.check_rows(rows)

        def part(share: float, offset: float) -> Progress:
            return lambda done: progress(offset + share * done) if progress else None

        # Not kept: the sorted copy is as large as the embedding, and a graph is built once.
        cells = self._cells.get(metric) or self._partition(metric, part(_PARTITION_SHARE, 0.0))
        graph = self._scan(cells, k, metric, part(1 - _PARTITION_SHARE, _PARTITION_SHARE))
        position = np.empty(self.n, np.int64)
        position[cells.rows] = np.arange(cells.rows.size)
        return graph[position[rows]]

    def query(self, queries: np.ndarray, k: int, metric: Metric = "cosine",
              exclude: np.ndarray | Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """As :meth:`ExactIndex.query` over the rows of each query's nearest cells, with exact
        distances: for a few queries (the scan per query is ``PROBES`` cells)."""
        q, k, excluded = self.exact.validated(queries, k, metric, exclude)
        if k == 0 or q.shape[0] == 0:
            return np.zeros((q.shape[0], k), np.int64), np.zeros((q.shape[0], k), np.float32)
        cells = self._cells_for(metric)
        scores = _centre_scores(_prepared(q, metric), cells.centres)
        nearest = np.argsort(scores, axis=1)[:, :cells.probes.shape[1]]
        indices, distances = [], []
        for i, near in enumerate(nearest):
            candidates = np.concatenate([cells.rows[cells.starts[c]:cells.starts[c + 1]] for c in near])
            ex = None if excluded is None else excluded[i:i + 1]
            found, dist = self.exact.rescore(q[i:i + 1], self.exact.backend.asarray(candidates[None, :]),
                                             k, metric, ex)
            indices.append(pad_columns(found, k))
            distances.append(np.pad(dist, ((0, 0), (0, k - dist.shape[1])), constant_values=np.inf))
        return np.concatenate(indices), np.concatenate(distances)

    def neighbors_of(self, rows: Sequence[int] | np.ndarray, k: int,
                     metric: Metric = "cosine") -> tuple[np.ndarray, np.ndarray]:
        """Nearest rows to the given rows of the data, each row excluded from its own list."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self.exact.check_rows(rows)
        return self.query(np.asarray(self.exact.host[rows]), k, metric, exclude=rows)

    def _cells_for(self, metric: Metric) -> _Cells:
        """The cells for ``metric``, made on first use and kept for further queries."""
        if metric not in self._cells:
            self._cells[metric] = self._partition(metric, lambda done: None)
        return self._cells[metric]

    def _partition(self, metric: Metric, progress: Progress) -> _Cells:
        """k-means on a sample, every finite row assigned to its nearest centre, rows sorted
        by cell."""
        from sklearn.cluster import KMeans

        finite = np.flatnonzero(self.finite)
        count = max(1, min(finite.size, round(finite.size / self.cell_rows)))
        rng = np.random.default_rng(self.seed)
        sample = np.sort(rng.choice(finite, min(finite.size, _TRAIN_PER_CELL * count), replace=False))
        train = _prepared(self.exact.host[sample], metric)
        centres = KMeans(count, init="random", n_init=1, max_iter=_KMEANS_ITERATIONS,
                         random_state=self.seed).fit(train).cluster_centers_.astype(np.float32)
        progress(0.2)
        labels = np.empty(finite.size, np.int64)
        step = max(1, _ASSIGN_BYTES // (4 * max(count, self.dim)))
        for start in range(0, finite.size, step):
            block = _prepared(self.exact.host[finite[start:start + step]], metric)
            labels[start:start + step] = _centre_scores(block, centres).argmin(axis=1)
            progress(0.2 + 0.7 * min(1.0, (start + step) / finite.size))
        order = np.argsort(labels, kind="stable")
        sorted_rows = finite[order]
        starts = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=count))]).tolist()
        between = _centre_scores(centres, centres)
        np.fill_diagonal(between, -np.inf)  # each cell scans itself first
        probes = np.argsort(between, axis=1)[:, :min(count, self.probe_count)]
        vectors = np.empty((finite.size, self.dim), np.float32)
        for start in range(0, finite.size, step):
            vectors[start:start + step] = _prepared(self.exact.host[sorted_rows[start:start + step]], metric)
        sq_norms = np.einsum("ij,ij->i", vectors, vectors)
        be = self.backend
        on_device = be.asarray(vectors)
        coarse = on_device.bfloat16() if be.name == "torch" and be.device == "cpu" else on_device
        return _Cells(sorted_rows, starts, probes, centres, on_device, be.asarray(sq_norms), coarse)

    def _scan(self, cells: _Cells, k: int, metric: Metric, progress: Progress) -> np.ndarray:
        """Every cell's rows against the rows of its probe cells: the graph by sorted
        position, holding embedding rows. Cells go to ``_WORKERS`` threads (the products
        release the GIL), so a core that the machine takes away stalls one cell, not all."""
        graph = np.full((cells.rows.size, k), -1, np.int64)
        with ThreadPoolExecutor(_WORKERS, thread_name_prefix="cells") as pool:
            done = pool.map(lambda cell: self._scan_cell(cells, cell, k, metric),
                            range(len(cells.starts) - 1))
            for first, last, found in done:
                graph[first:last, :found.shape[1]] = found
                progress(last / max(1, cells.rows.size))
        return graph

    def _scan_cell(self, cells: _Cells, cell: int, k: int, metric: Metric
                   ) -> tuple[int, int, np.ndarray]:
        """(first, last, the k nearest embedding rows of sorted positions [first, last))."""
        be, xp = self.backend, self.backend.xp
        starts = cells.starts
        first, last = starts[cell], starts[cell + 1]
        spans = [(starts[c], starts[c + 1]) for c in cells.probes[cell].tolist()]
        positions = np.concatenate([np.arange(a, b) for a, b in spans])
        width = min(k, positions.size - 1)
        if last == first or width <= 0:
            return first, last, np.empty((last - first, 0), np.int64)
        # Scores written once by the product: -dot (cosine), |c|^2 - 2 q.c (euclidean).
        scale = -1.0 if metric == "cosine" else -2.0
        candidates = xp.concat([cells.coarse[a:b] for a, b in spans])
        scores = xp.matmul(cells.coarse[first:last] * scale, xp.matrix_transpose(candidates))
        if metric == "euclidean":
            scores = scores + xp.concat([cells.sq_norms[a:b] for a, b in spans])[None, :]
        own = xp.arange(last - first, device=cells.vectors.device)
        scores[own, own] = xp.inf  # a row is not its own neighbour; its cell comes first
        picked = be.asarray(positions)
        if cells.coarse is not cells.vectors:  # bfloat16 scores: a shortlist, rescored exactly
            _, columns = be.smallest_k(scores, min(_SHORTLIST * k, positions.size - 1))
            picked = picked[columns]  # sorted positions [rows, shortlist]
            shortlist = xp.reshape(xp.take(cells.vectors, xp.reshape(picked, (-1,)), axis=0),
                                   (*picked.shape, self.dim))  # take: ~2x a 2-D index
            scores = xp.matmul(shortlist, cells.vectors[first:last, :, None] * scale)[..., 0]
            if metric == "euclidean":
                scores = scores + cells.sq_norms[picked]
        values, columns = be.smallest_k(scores, width)
        found = picked[columns] if picked.ndim == 1 else xp.take_along_axis(picked, columns, axis=1)
        values, found = be.to_numpy(values), be.to_numpy(found)
        order = np.argsort(values, axis=1, kind="stable")
        return first, last, cells.rows[np.take_along_axis(found, order, axis=1)]


def _search_backend(backend: Backend) -> Backend:
    """The exact index's device when it is a GPU; on the CPU torch when installed, whose
    top-k selection is ~5x numpy's argpartition here (the scan is half selection)."""
    if not backend.is_numpy:
        return backend
    try:
        return get_backend("torch")
    except DeviceUnavailableError:
        return backend


def _prepared(rows: np.ndarray, metric: Metric) -> np.ndarray:
    """float32 rows as scored: unit length for cosine (zero rows stay zero)."""
    out = np.array(rows, np.float32)
    if metric == "cosine":
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
    return out


def _centre_scores(rows: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Rank of each centre for each prepared row, smaller nearer: squared euclidean distance
    less |row|^2, k-means' own rule (rows are unit for cosine, so it ranks by angle there)."""
    return np.einsum("ij,ij->i", centres, centres)[None, :] - 2.0 * (rows @ centres.T)
