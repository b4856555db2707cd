"""The kNN graph of every row at once, by k-means cells: rows compared block by block.

A comparison needs the k nearest neighbours of every row, of two embeddings. An HNSW graph
answers one query at a time: at 1M x 128 on two cores it takes minutes to build and as
long again to query every row (bench/bench_compare.py). Here the rows are grouped into
k-means cells of about ``CELL_ROWS`` rows, and the rows of each cell are compared at once,
by one matrix product, with the rows of the ``PROBES`` cells whose centres are nearest its
own centre. The product runs in a principal subspace (:mod:`coarse_projection`: a few dozen
dimensions for most embeddings) and only picks a shortlist of ``2k`` rows per row, whose
distances are then computed in full: the graph is ranked by exact float32 distances. All the
work is matrix products, one pass of minima and small top-k selections.
Approximate: a neighbour in a cell not probed, or pushed off the shortlist, is missed, so
callers report recall on a sample against the exact index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from projector_core.kernels.backend import Array, Backend, DeviceUnavailableError, get_backend
from projector_core.kernels.coarse_projection import CoarseProjection, choose_projection
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.neighbor_index import METRICS, Metric, Progress, pad_columns

# Cell size and probes: at 1M x 128 (200 clusters of a 32-dim manifold) 4 probes of ~1,000
# rows found 91 % of the true 10 neighbours, 8 found 99.8 %, 6 98.7 %, 5 96.7 %. Probes by
# shared boundary (sample rows' next-nearest centres) instead of centre distance: 98.4 %.
CELL_ROWS = 1024
PROBES = 6
_TRAIN_PER_CELL = 32  # k-means is fitted on a sample of this many rows per cell
_CHECK_ROWS = 65_536  # rows sampled to choose the subspace
_KMEANS_ITERATIONS = 10
_BLOCK_ROWS = 65_536  # rows projected at once
_SCORE_BYTES = 2 * 2**20  # bound on one block of row-to-centre scores (larger: fresh pages)
_WORKERS = 2  # threads scanning cells
_SHORTLIST = 2  # rows rescored in full per neighbour wanted
# Selection: a top-k over ~6,000 scores a row costs more than the product in 32 dims. Columns
# j, j + B, ... (B = columns / _BIN_WIDTH) share a bin; a bin's minimum is one elementwise
# pass, and the shortlist is the best row of each of the best bins. Two true neighbours in one
# bin lose one: about (k - 1) / 2B of recall, so bins are used only where B is large. At 1M
# recall@10 was 0.990 without bins, 0.985 with 8 to a bin, 0.971 with 32.
_BIN_WIDTH = 8
_BINS_PER_PLACE = 32  # bins at least this many times the shortlist
_ROW_BLOCK = 256  # a cell's rows scored at once: temporaries of a few MB stay in the heap
_PARTITION_SHARE = 0.2  # of build progress: subspace, k-means and assignment, before the scans


@dataclass(frozen=True)
class _Cells:
    """Finite rows sorted by cell, in the coarse subspace."""

    rows: np.ndarray  # int64 [M]: embedding row of each sorted position
    starts: list[int]  # C + 1 offsets of each cell in the sorted order
    probes: np.ndarray  # int64 [C, P]: cells scanned for each cell's rows, its own first
    projection: CoarseProjection
    centres: np.ndarray  # float32 [C, d]: the k-means centres, in the subspace
    coarse: Array  # float32 [M, d + 1] on the search backend, sorted: rows, then |row|^2
    device_rows: Array  # int64 [M]: ``rows`` on the search backend


class CellIndex:
    """Approximate neighbours of an embedding's rows from k-means cells (a
    :class:`~projector_core.kernels.neighbor_index.NeighborIndex`; the cells are made per
    metric, on first use)."""

    approximate = True
    metrics = METRICS

    def __init__(self, exact: ExactIndex, cell_rows: int = CELL_ROWS, probes: int = PROBES,
                 seed: int = 0) -> None:
        self.backend = _search_backend(exact.backend)
        self.exact = exact.on(self.backend)
        self.n, self.dim = exact.n, exact.dim
        self.cell_rows, self.probe_count, self.seed = cell_rows, probes, seed
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

        # Not kept: the sorted subspace copy is a graph's worth of memory, built once.
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
        scores = _centre_scores(cells.projection(_prepared(q, metric)), cells.centres)
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
        """A subspace and k-means on a sample, every finite row projected and assigned to its
        nearest centre, rows sorted by cell."""
        be, xp = self.backend, self.backend.xp
        finite = np.flatnonzero(self.finite)
        count = max(1, min(finite.size, round(finite.size / self.cell_rows)))
        rng = np.random.default_rng(self.seed)
        train_size = min(finite.size, _TRAIN_PER_CELL * count)
        sample = rng.choice(finite, min(finite.size, max(train_size, _CHECK_ROWS)), replace=False)
        prepared = _prepared(self.exact.host[np.sort(sample)], metric)
        projection = choose_projection(prepared)
        train = projection(prepared[rng.permutation(prepared.shape[0])[:train_size]])
        centres = self._kmeans(train, count, rng)
        progress(0.2)
        full = _FullRows(self.exact, be, metric)
        coarse = xp.empty((finite.size, projection.dim + 1), dtype=xp.float32, device=full.device)
        labels = np.empty(finite.size, np.int64)
        augmented = be.asarray(_augmented(centres))
        step = _BLOCK_ROWS
        every = finite.size == self.n
        for start in range(0, finite.size, step):
            stop = min(finite.size, start + step)
            rows = slice(start, stop) if every else be.asarray(finite[start:stop])
            block = coarse[start:stop]
            block[:, :-1] = full.projected(rows, projection)
            block[:, -1] = xp.sum(block[:, :-1] * block[:, :-1], axis=1)
            labels[start:stop] = self._nearest_centre(block[:, :-1], augmented)
            progress(0.2 + 0.75 * stop / finite.size)
        order = np.argsort(labels, kind="stable")
        sorted_rows = finite[order]
        starts = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=count))]).tolist()
        between = _centre_scores(centres, centres)
        np.fill_diagonal(between, -np.inf)  # each cell scans itself first
        probes = np.argsort(between, axis=1)[:, :min(count, self.probe_count)]
        coarse = xp.take(coarse, be.asarray(order), axis=0)
        progress(1.0)
        return _Cells(sorted_rows, starts, probes, projection, centres, coarse,
                      be.asarray(sorted_rows))

    def _kmeans(self, train: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
        """Lloyd's k-means of ``train`` [S, d] from ``count`` of its rows: the assignment that
        places every row, run on the sample (scikit-learn's import alone would cost ~1.8 s on
        the first comparison). A centre left without rows stays where it was."""
        centres = train[rng.choice(train.shape[0], count, replace=False)]
        device_train = self.backend.asarray(train)
        for _ in range(_KMEANS_ITERATIONS):
            labels = self._nearest_centre(device_train, self.backend.asarray(_augmented(centres)))
            sizes = np.bincount(labels, minlength=count)
            held = np.flatnonzero(sizes)
            starts = np.concatenate([[0], np.cumsum(sizes)])[held]
            sums = np.add.reduceat(train[np.argsort(labels, kind="stable")], starts, axis=0)
            centres = centres.copy()
            centres[held] = sums / sizes[held, None]
        return centres

    def _nearest_centre(self, rows: Array, augmented: Array) -> np.ndarray:
        """Index of the nearest centre to each row [R, d], the centres given as [c, |c|^2];
        in blocks of rows whose scores stay small (a large block is fresh pages: ~2x slower)."""
        xp = self.backend.xp
        step = max(1, _SCORE_BYTES // (4 * augmented.shape[0]))
        nearest = np.empty(rows.shape[0], np.int64)
        for start in range(0, rows.shape[0], step):
            block = rows[start:start + step]
            queries = xp.concat([block * -2.0, xp.ones((block.shape[0], 1), dtype=block.dtype,
                                                       device=block.device)], axis=1)
            scores = xp.matmul(queries, xp.matrix_transpose(augmented))  # |c|^2 - 2 z.c
            nearest[start:start + step] = self.backend.smallest_columns(scores)
        return nearest

    def _scan(self, cells: _Cells, k: int, metric: Metric, progress: Progress) -> np.ndarray:
        """Every cell's rows against the rows of its probe cells: the graph by sorted
        position, holding embedding rows. Cells go to ``_WORKERS`` threads (the products
        release the GIL), so a core that the machine takes away stalls one cell, not all.
        When ``progress`` raises (a cancelled job), the cells not started are dropped: the
        pool then waits for the two being scanned only."""
        graph = np.full((cells.rows.size, k), -1, np.int64)
        full = _FullRows(self.exact, self.backend, metric)
        with self.backend.worker_pool(_WORKERS, "cells") as pool:
            done = pool.map(lambda cell: self._scan_cell(cells, full, cell, k),
                            range(len(cells.starts) - 1))
            try:
                for first, last, found in done:
                    graph[first:last, :found.shape[1]] = found
                    progress(last / max(1, cells.rows.size))
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
        return graph

    def _scan_cell(self, cells: _Cells, full: _FullRows, cell: int, k: int
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
        places = min(_SHORTLIST * k, positions.size - 1)
        bin_width = max(1, min(_BIN_WIDTH, positions.size // (_BINS_PER_PLACE * places)))
        bins = -(-positions.size // bin_width)
        padding = bins * bin_width - positions.size  # columns that score +inf
        pad = xp.zeros((padding, cells.coarse.shape[1]), dtype=cells.coarse.dtype,
                       device=cells.coarse.device)
        pad[:, -1] = xp.inf
        candidates = xp.concat([cells.coarse[a:b] for a, b in spans] + [pad])
        rows = xp.take(cells.device_rows, be.asarray(positions), axis=0)
        rows = xp.concat([rows, xp.zeros((padding,), dtype=rows.dtype, device=rows.device)])
        found = []
        for lo in range(first, last, _ROW_BLOCK):
            hi = min(last, lo + _ROW_BLOCK)
            picked, shut = self._shortlist(cells, candidates, first, (lo - first, hi - first),
                                           (places, bin_width, bins))
            picked = xp.take(rows, xp.reshape(picked, (-1,)), axis=0)
            picked = xp.reshape(picked, shut.shape)  # embedding rows [rows, places]
            ranks = xp.where(shut, xp.inf, full.ranks(cells.device_rows[lo:hi], picked))
            found.append(_nearest_first(be.to_numpy(ranks), be.to_numpy(picked), width))
        return first, last, np.concatenate(found)

    def _shortlist(self, cells: _Cells, candidates: Array, first: int, span: tuple[int, int],
                   shape: tuple[int, int, int]) -> tuple[Array, Array]:
        """Columns of ``candidates`` nearest in the subspace to the rows ``span`` of the cell
        starting at ``first`` (its own rows are the first columns), and where that column is no
        row. ``shape``: places per row, bin width, bins."""
        be, xp = self.backend, self.backend.xp
        (lo, hi), (places, bin_width, bins) = span, shape
        count = hi - lo
        coarse = cells.coarse[first + lo:first + hi]
        ones = xp.ones((count, 1), dtype=coarse.dtype, device=coarse.device)
        queries = xp.concat([coarse[:, :-1] * -2.0, ones], axis=1)  # . [c, |c|^2] = |c|^2 - 2 q.c
        scores = xp.matmul(queries, xp.matrix_transpose(candidates))
        own = xp.arange(count, device=scores.device)
        scores[own, own + lo] = xp.inf  # a row is not its own neighbour
        if be.is_numpy or be.device == "cpu":
            from projector_core.kernels.cell_selection import binned_smallest  # numba: on first use

            columns, values = np.empty((count, places), np.int64), np.empty((count, places), np.float32)
            binned_smallest(be.to_numpy(scores), bins, places, columns, values)
            return be.shared(columns), ~xp.isfinite(be.shared(values))
        if bin_width > 1:
            binned = xp.min(xp.reshape(scores, (count, bin_width, bins)), axis=1)
            _, chosen = be.smallest_k(binned, places)
            members = chosen[:, :, None] + bins * xp.arange(bin_width, device=scores.device)
            at = members + xp.reshape(own * scores.shape[1], (count, 1, 1))  # flat: 3x take_along
            member_scores = xp.reshape(xp.take(xp.reshape(scores, (-1,)), xp.reshape(at, (-1,)),
                                               axis=0), members.shape)
            columns = chosen + bins * xp.argmin(member_scores, axis=2)  # the best member
            values = xp.min(member_scores, axis=2)
        else:
            values, columns = be.smallest_k(scores, places)
        return columns, ~xp.isfinite(values)


def _nearest_first(ranks: np.ndarray, rows: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` rows of least rank of each row, in order (ties by shortlist place), -1
    for places that held no row."""
    order = np.argsort(ranks, axis=1, kind="stable")[:, :width]
    found = np.take_along_axis(rows, order, axis=1)
    return np.where(np.isfinite(np.take_along_axis(ranks, order, axis=1)), found, -1)


class _FullRows:
    """The embedding's rows on the search backend (shared with the host where it is the
    CPU), for exact ranking of shortlists."""

    def __init__(self, exact: ExactIndex, backend: Backend, metric: Metric) -> None:
        exact = exact.on(backend)
        self.backend, self.xp, self.metric = backend, backend.xp, metric
        self.vectors = exact.vectors
        self.weights = exact.inv_norms if metric == "cosine" else exact.sq_norms
        self.device = self.vectors.device

    def projected(self, rows: slice | Array, projection: CoarseProjection) -> Array:
        """float32 [R, d]: the rows (a slice or indices), prepared as the metric measures
        (unit for cosine) and projected: (x w - m) V = (x V) w - m V, no prepared copy."""
        xp = self.xp
        block = self.vectors[rows] if isinstance(rows, slice) else xp.take(self.vectors, rows, axis=0)
        block = xp.astype(block, xp.float32, copy=False)
        if projection.basis is not None:
            block = xp.matmul(block, self.backend.asarray(projection.basis))
        if self.metric == "cosine":
            weights = self.weights[rows] if isinstance(rows, slice) else xp.take(self.weights, rows, axis=0)
            block = block * weights[:, None]
        if projection.basis is not None:
            block = block - self.backend.asarray(projection.mean @ projection.basis)
        return block

    def ranks(self, queries: Array, candidates: Array) -> Array:
        """[Q, C]: a value per candidate row of each query row, ordered as the distance:
        -cos (cosine) or |c|^2 - 2 q.c (euclidean)."""
        xp = self.xp
        rows = xp.reshape(xp.take(self.vectors, xp.reshape(candidates, (-1,)), axis=0),
                          (*candidates.shape, self.vectors.shape[1]))
        dots = xp.sum(rows * xp.take(self.vectors, queries, axis=0)[:, None, :], axis=2)  # 4x bmm
        weights = xp.reshape(xp.take(self.weights, xp.reshape(candidates, (-1,)), axis=0), dots.shape)
        return -dots * weights if self.metric == "cosine" else weights - 2.0 * dots


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


def _augmented(centres: np.ndarray) -> np.ndarray:
    """float32 [C, d + 1]: each centre and its squared norm, so one product with [-2 z, 1]
    gives |c|^2 - 2 z.c, the rank of the centre for z."""
    norms = np.einsum("ij,ij->i", centres, centres)[:, None]
    return np.concatenate([centres, norms], axis=1).astype(np.float32)


def _centre_scores(rows: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """Rank of each centre for each prepared row, smaller nearer: squared euclidean distance
    less |row|^2, k-means' own rule (rows are unit for cosine, so it ranks by angle there)."""
    return np.asarray(np.einsum("ij,ij->i", centres, centres)[None, :] - 2.0 * (rows @ centres.T))
