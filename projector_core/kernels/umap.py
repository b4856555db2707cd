"""UMAP with umap-learn, streamed epoch by epoch.

umap-learn has no per-epoch callback, so this module runs the steps of
``umap.umap_.simplicial_set_embedding`` itself (fuzzy graph, pruning, spectral
initialisation, edge sampling rates; densMAP and non-euclidean outputs left out) and then
calls umap-learn's own ``optimize_layout_euclidean`` on an embedding array we hold. That
function mutates the array in place and reports each epoch to a tqdm progress bar, whose
``tqdm_kwds`` it exposes: a file object given to tqdm with a bar format of just ``{n}``
receives the epoch number after every epoch, on the optimising thread, between epochs. There
we read the array (a frame), and pause or cancel (by raising). The epochs themselves are
umap-learn's, unchanged.

Small data (under 4,096 points, as umap-learn decides) or precomputed neighbours use exact
neighbours; larger data use umap-learn's NN-descent.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.tsne import StepCallback

SMALL_DATA = 4096  # umap-learn's threshold for exact neighbours
GRAPH_SHARE = 0.2  # progress reported once the fuzzy graph and initialisation are built
INT32_MIN, INT32_MAX = -(2**31) + 1, 2**31 - 1


@dataclass(frozen=True)
class UmapResult:
    coordinates: np.ndarray  # float32 [N, dims]
    n_epochs: int
    neighbors: str  # "exact" or "nndescent"


def default_epochs(n_points: int) -> int:
    """umap-learn's default: more epochs for small data."""
    return 500 if n_points <= 10_000 else 200


def exact_neighbors(
    data: np.ndarray, k: int, index: ExactIndex | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``k`` nearest other rows, euclidean: (indices int64, distances float32)."""
    index = index or ExactIndex(data)
    return index.neighbors_of(np.arange(data.shape[0]), k, "euclidean")


def umap(
    data: np.ndarray,
    dims: int = 2,
    n_neighbors: int = 15,
    min_dist: float = 0.1,
    n_epochs: int | None = None,
    seed: int = 0,
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
    on_step: StepCallback | None = None,
) -> UmapResult:
    """Embed the rows of ``data`` (all finite) in ``dims`` dimensions.

    ``neighbors`` optionally gives precomputed (indices, distances) of each row's
    ``n_neighbors - 1`` nearest other rows; ``on_step`` receives the initial layout
    (epoch 0) and the layout after every epoch.
    """
    from umap.layouts import optimize_layout_euclidean
    from umap.spectral import spectral_layout
    from umap.umap_ import (
        find_ab_params,
        fuzzy_simplicial_set,
        make_epochs_per_sample,
        nearest_neighbors,
        noisy_scale_coords,
    )

    n = data.shape[0]
    if dims not in (2, 3):
        raise ValueError(f"UMAP makes 2-D or 3-D embeddings, not {dims}-D")
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors {n_neighbors} must be smaller than the number of points ({n})")
    epochs = n_epochs or default_epochs(n)
    random_state = check_random_state(seed)

    if neighbors is None and n < SMALL_DATA:
        neighbors = exact_neighbors(data, n_neighbors - 1)
    if neighbors is not None:
        # umap-learn's neighbour lists start with the point itself at distance 0.
        indices, distances = neighbors
        own = np.arange(n)[:, None]
        knn_indices = np.hstack([own, indices]).astype(np.int32)
        knn_dists = np.hstack([np.zeros((n, 1), np.float32), distances]).astype(np.float32)
        method = "exact"
    else:
        knn_indices, knn_dists, _ = nearest_neighbors(
            data, n_neighbors, "euclidean", {}, False, random_state, n_jobs=1
        )
        method = "nndescent"
    graph, _, _ = fuzzy_simplicial_set(
        data, n_neighbors, random_state, "euclidean", knn_indices=knn_indices, knn_dists=knn_dists
    )

    graph = graph.tocoo()
    graph.sum_duplicates()
    # Edges too weak to be sampled even once in the whole run are dropped (as umap-learn).
    cutoff_epochs = epochs if epochs > 10 else default_epochs(n)
    graph.data[graph.data < graph.data.max() / float(cutoff_epochs)] = 0.0
    graph.eliminate_zeros()

    layout = spectral_layout(data, graph, dims, random_state)
    layout = noisy_scale_coords(layout, random_state, max_coord=10, noise=0.0001)
    span = np.max(layout, 0) - np.min(layout, 0)
    layout = (10.0 * (layout - np.min(layout, 0)) / np.where(span > 0, span, 1.0)).astype(
        np.float32, order="C"
    )
    if on_step is not None:
        on_step(0, GRAPH_SHARE, layout)

    a, b = find_ab_params(1.0, min_dist)
    rng_state = random_state.randint(INT32_MIN, INT32_MAX, 3).astype(np.int64)
    optimize_layout_euclidean(
        layout,
        layout,
        graph.row,
        graph.col,
        epochs,
        graph.shape[1],
        make_epochs_per_sample(graph.data, epochs),
        a,
        b,
        rng_state,
        gamma=1.0,
        initial_alpha=1.0,
        negative_sample_rate=5,
        parallel=False,
        tqdm_kwds=_epoch_reporter(layout, epochs, on_step),
        move_other=True,
    )
    return UmapResult(layout.astype(np.float32), epochs, method)


def _epoch_reporter(layout: np.ndarray, epochs: int, on_step: StepCallback | None) -> dict:
    """tqdm options that turn its progress bar into a per-epoch call of ``on_step``."""
    if on_step is None:
        return {"disable": True}

    class EpochSink(io.TextIOBase):
        def write(self, text: str) -> int:
            digits = text.strip()
            if digits.isdigit():
                epoch = int(digits)
                on_step(epoch, GRAPH_SHARE + (1 - GRAPH_SHARE) * epoch / epochs, layout)
            return len(text)

    return {
        "disable": False,
        "file": EpochSink(),
        "bar_format": "{n}",
        "mininterval": 0,
        "miniters": 1,
        "delay": 0,
        "leave": False,
    }
