"""Every neighbour index takes one shape (``NeighborIndex``): the exact scan, the HNSW graph,
the k-means cells and the sharded scan; and the cells' all-points graph is the exact one
where every cell is probed, with recall >= 0.95 where they are not."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from projector_core.distributed.knn import ShardedIndex
from projector_core.formats.chunked import ChunkedVectors, open_chunked
from projector_core.formats.chunked_writer import write_zarr
from projector_core.kernels.ann import ApproximateIndex
from projector_core.kernels.backend import get_backend
from projector_core.kernels.cells import CellIndex
from projector_core.kernels.coarse_projection import choose_projection
from projector_core.kernels.compare import compare
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.neighbor_index import NeighborIndex
from tests.builders import vectors


def clustered(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Gaussian clusters in an 8-dim subspace: neighbour structure an index can find."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, 8)) * 3
    low = centres[rng.integers(0, 20, n)] + rng.standard_normal((n, 8))
    rotation, _ = np.linalg.qr(rng.standard_normal((d, 8)))
    return (low @ rotation.T + 0.05 * rng.standard_normal((n, d))).astype(np.float32)


def sharded(tmp_path: Path, data: np.ndarray) -> ChunkedVectors:
    pytest.importorskip("zarr")
    return open_chunked(write_zarr(tmp_path / "vectors.zarr", data, chunk_rows=64), "vectors")


def test_every_index_is_a_neighbor_index_and_builds_the_exact_graph(tmp_path: Path) -> None:
    data = vectors(300, 12, seed=3)
    exact = ExactIndex(data)
    truth = exact.build(5, "euclidean")
    indexes = [exact, CellIndex(exact, cell_rows=64, probes=100),
               ApproximateIndex(exact, "euclidean"), ShardedIndex(sharded(tmp_path, data))]
    for index in indexes:
        assert isinstance(index, NeighborIndex)
        assert "euclidean" in index.metrics and index.n == 300 and index.dim == 12
        assert index.finite.all() and index.exact.approximate is False
        graph = index.build(5, "euclidean")
        assert graph.shape == (300, 5)
        if index.approximate:  # HNSW's answers vary with thread scheduling: judged by recall
            recall = np.mean([np.intersect1d(t, g).size / 5 for t, g in zip(truth, graph, strict=True)])
            assert recall > 0.95, type(index).__name__
        else:
            assert (graph == truth).mean() > 0.99, type(index).__name__
    assert (ShardedIndex(sharded(tmp_path, data)).build(5, "euclidean") == truth).all()


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_cells_graph_recall_and_progress(metric: str) -> None:
    data = clustered(6000, 32)
    exact = ExactIndex(data)
    cells = CellIndex(exact, cell_rows=256, probes=6)  # 23 cells, 6 probed: approximate
    seen: list[float] = []
    graph = cells.build(10, metric, progress=seen.append)
    truth = exact.build(10, metric)
    recall = np.mean([np.intersect1d(t, g).size / 10 for t, g in zip(truth, graph, strict=True)])
    assert recall >= 0.95
    assert (graph != np.arange(6000)[:, None]).all()  # no row is its own neighbour
    # progress moves while the cells are made and while they are scanned, and ends at 1
    assert seen == sorted(seen) and seen[-1] == 1 and len({round(v, 1) for v in seen}) >= 5
    found, distances = cells.neighbors_of([0, 1], 10, metric)
    expected, _ = exact.neighbors_of([0, 1], 10, metric)
    assert np.mean([np.intersect1d(a, b).size / 10 for a, b in zip(found, expected, strict=True)]) >= 0.9
    assert (np.diff(distances, axis=1) >= 0).all()


class Cancelled(Exception):
    pass


def test_a_raising_progress_drops_the_cells_not_yet_scanned(monkeypatch) -> None:
    """A cancelled comparison or quality (its ``ctx.step`` raises in ``progress``) stops
    after the cells being scanned, not after all of them."""
    cells = CellIndex(ExactIndex(clustered(3000, 16)), cell_rows=64)  # 47 cells
    scanned: list[int] = []
    raised = threading.Event()
    scan = cells._scan_cell

    def held(found, full, cell, k):  # every cell after the first waits for the cancel
        scanned.append(cell)
        if cell:
            raised.wait(60)
        return scan(found, full, cell, k)

    def progress(done: float) -> None:
        if done > 0.2:  # the first cell scanned (the cells are made in [0, 0.2])
            raised.set()
            raise Cancelled

    monkeypatch.setattr(cells, "_scan_cell", held)
    with pytest.raises(Cancelled):
        cells.build(10, "euclidean", progress=progress)
    assert 0 in scanned and len(scanned) <= 4  # the first, the two held by the workers


def test_cells_skip_non_finite_rows_and_compare_reports_recall() -> None:
    a = clustered(3000, 16, seed=1)
    b = a + 0.01 * np.random.default_rng(2).standard_normal(a.shape).astype(np.float32)
    b[7] = np.nan
    exact = compare(ExactIndex(a), ExactIndex(b), 10, "cosine")
    cells = compare(CellIndex(ExactIndex(a), cell_rows=200, probes=5),
                    CellIndex(ExactIndex(b), cell_rows=200, probes=5), 10, "cosine")
    assert cells.neighbors == "approximate" and cells.recall >= 0.95
    assert np.isnan(cells.per_point[7]) and 7 not in cells.most_changed
    assert np.nanmean(np.abs(cells.per_point - exact.per_point)) < 0.05


def test_cells_give_the_same_graph_with_numpy_as_with_torch() -> None:
    pytest.importorskip("torch")
    data = clustered(2000, 16, seed=4)
    graphs = []
    for device in ("cpu", "torch"):
        cells = CellIndex(ExactIndex(data), cell_rows=100, probes=4)
        cells.backend = get_backend(device)  # the search backend; torch by default when installed
        graphs.append(cells.build(10, "euclidean"))
    assert (graphs[0] == graphs[1]).mean() > 0.99  # float32 sums in another order may swap ties


def test_the_coarse_subspace_is_small_for_low_rank_data_and_whole_for_a_flat_spectrum() -> None:
    """Cells rank candidates in the smallest principal subspace holding the differences between
    neighbours; distances there never exceed the full ones (a projection contracts)."""
    low_rank = clustered(4000, 64)  # 8 dimensions hold the variance
    projection = choose_projection(low_rank)
    assert projection.basis is not None and projection.dim <= 16
    z, pairs = projection(low_rank), np.random.default_rng(0).integers(0, 4000, (500, 2))
    full = np.linalg.norm(low_rank[pairs[:, 0]] - low_rank[pairs[:, 1]], axis=1)
    assert (np.linalg.norm(z[pairs[:, 0]] - z[pairs[:, 1]], axis=1) <= full + 1e-4).all()
    flat = np.random.default_rng(1).standard_normal((4000, 64)).astype(np.float32)
    assert choose_projection(flat).basis is None  # no subspace keeps neighbours


def test_cells_on_a_flat_spectrum_keep_their_recall() -> None:
    data = np.random.default_rng(2).standard_normal((3000, 24)).astype(np.float32)
    exact = ExactIndex(data)
    graph = CellIndex(exact, cell_rows=100, probes=30).build(5, "euclidean")
    truth = exact.build(5, "euclidean")
    assert np.mean([np.intersect1d(t, g).size / 5 for t, g in zip(truth, graph, strict=True)]) > 0.9
