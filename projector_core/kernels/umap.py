"""UMAP with umap-learn, streamed epoch by epoch.

umap-learn has no per-epoch callback, so this module runs the steps of
``umap.umap_.simplicial_set_embedding`` itself (fuzzy graph, pruning, spectral
initialisation, edge sampling rates; densMAP and non-euclidean outputs left out) and drives
the epoch loop of ``umap.layouts.optimize_layout_euclidean`` itself, calling umap-learn's
compiled single-epoch kernel once per epoch. Between epochs we read the layout (a frame),
pause, or stop by raising. The result is umap-learn's to the bit (``tests/test_umap.py``
compares it with ``umap.UMAP``, which also guards the private kernel's signature, tested
with umap-learn 0.5.12).

Rejected: reading epochs from umap-learn's tqdm progress bar (its ``tqdm_kwds``). It works for
progress, but stopping means raising inside tqdm's display, which leaves tqdm's process-wide
lock held and hangs every later progress bar in other threads; pausing would hold that lock.

Small data (under 4,096 points, as umap-learn decides) or precomputed neighbours use exact
neighbours; larger data use our approximate index (``kernels/ann.py``, exact distances of
HNSW candidates), never umap-learn's NN-descent: pynndescent is not even imported
(``kernels/umap_learn.py``), which spares a fresh install about 12 s of numba compiling.
The PCA preview (our own numpy PCA) is sent before scikit-learn and umap-learn are imported
(seconds on a fresh start), so a job's first frame comes at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from projector_core.jobs.phases import enter_phase
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.pca import pca

if TYPE_CHECKING:
    from projector_core.kernels.tsne import StepCallback

SMALL_DATA = 4096  # umap-learn's threshold for exact neighbours
GRAPH_SHARE = 0.2  # progress reported once the fuzzy graph and initialisation are built
INT32_MIN, INT32_MAX = -(2**31) + 1, 2**31 - 1
NEGATIVE_SAMPLE_RATE = 5  # umap-learn's defaults for the layout optimisation
REPULSION_STRENGTH = 1.0
LEARNING_RATE = 1.0


@dataclass(frozen=True)
class UmapResult:
    coordinates: np.ndarray  # float32 [N, dims]
    n_epochs: int
    neighbors: str  # "exact" or "approximate"


def default_epochs(n_points: int) -> int:
    """umap-learn's default: more epochs for small data."""
    return 500 if n_points <= 10_000 else 200


def approximate_neighbors(data: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`exact_neighbors` from an HNSW graph (distances still exact), for large data."""
    from projector_core.kernels.ann import ApproximateIndex

    return ApproximateIndex(ExactIndex(data), "euclidean").neighbors_of(
        np.arange(data.shape[0]), k, "euclidean")


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
    preview: bool = True,
    init: np.ndarray | None = None,
) -> UmapResult:
    """Embed the rows of ``data`` (all finite) in ``dims`` dimensions.

    ``n_neighbors`` must be below the number of rows (:class:`projector_core.projection.methods.umap.Umap`
    checks that before a fit). ``neighbors`` optionally gives precomputed (indices, distances)
    of each row's ``n_neighbors - 1`` nearest other rows; ``on_step`` receives a ``preview`` (the first
    principal components, a picture at once: the neighbour graph may take minutes), the
    initial layout (both epoch 0) and the layout after every epoch.
    """
    n = data.shape[0]
    if dims not in (2, 3):
        raise ValueError(f"UMAP makes 2-D or 3-D embeddings, not {dims}-D")
    epochs = n_epochs or default_epochs(n)
    if on_step is not None and preview:
        components = pca(data, n_components=dims, seed=seed).coordinates  # fewer when D < dims
        on_step(0, 0.0, np.pad(components, ((0, 0), (0, dims - components.shape[1]))))

    from projector_core.kernels.umap_learn import umap_module

    umap_ = umap_module()  # umap-learn, after the preview: its import takes a second or two
    random_state = umap_.check_random_state(seed)  # scikit-learn's, as umap-learn calls it
    from umap.layouts import _get_optimize_layout_euclidean_single_epoch_fn
    from umap.spectral import spectral_layout

    method = "exact"
    if neighbors is None:
        enter_phase("neighbours")
        small = n < SMALL_DATA
        neighbors = (exact_neighbors if small else approximate_neighbors)(data, n_neighbors - 1)
        method = "exact" if small else "approximate"
    # umap-learn's neighbour lists start with the point itself at distance 0.
    indices, distances = neighbors
    own = np.arange(n)[:, None]
    knn_indices = np.hstack([own, indices]).astype(np.int32)
    knn_dists = np.hstack([np.zeros((n, 1), np.float32), distances]).astype(np.float32)
    enter_phase("affinities")
    graph, _, _ = umap_.fuzzy_simplicial_set(
        data, n_neighbors, random_state, "euclidean", knn_indices=knn_indices, knn_dists=knn_dists
    )

    graph = graph.tocoo()
    graph.sum_duplicates()
    # Edges too weak to be sampled even once in the whole run are dropped (as umap-learn).
    cutoff_epochs = epochs if epochs > 10 else default_epochs(n)
    graph.data[graph.data < graph.data.max() / float(cutoff_epochs)] = 0.0
    graph.eliminate_zeros()

    # A given start layout [n, dims] (the comparison view's steps) replaces the spectral one.
    enter_phase("initial layout")
    layout = spectral_layout(data, graph, dims, random_state) if init is None else init
    layout = umap_.noisy_scale_coords(layout, random_state, max_coord=10, noise=0.0001)
    span = np.max(layout, 0) - np.min(layout, 0)
    layout = (10.0 * (layout - np.min(layout, 0)) / np.where(span > 0, span, 1.0)).astype(
        np.float32, order="C"
    )
    if on_step is not None:
        on_step(0, GRAPH_SHARE, layout)

    a, b = umap_.find_ab_params(1.0, min_dist)
    rng_state = random_state.randint(INT32_MIN, INT32_MAX, 3).astype(np.int64)
    # optimize_layout_euclidean's loop (move_other=True, no densMAP), one epoch at a time.
    epoch_kernel = _get_optimize_layout_euclidean_single_epoch_fn(False)
    epochs_per_sample = umap_.make_epochs_per_sample(graph.data, epochs)
    epochs_per_negative_sample = epochs_per_sample / NEGATIVE_SAMPLE_RATE
    next_negative_sample = epochs_per_negative_sample.copy()
    next_sample = epochs_per_sample.copy()
    rng_per_sample = np.full((n, len(rng_state)), rng_state, dtype=np.int64) + layout[
        :, 0].astype(np.float64).view(np.int64).reshape(-1, 1)
    no_density = np.zeros(1, dtype=np.float32)
    alpha = LEARNING_RATE
    for epoch in range(epochs):
        epoch_kernel(
            layout, layout, graph.row, graph.col, graph.shape[1], epochs_per_sample, a, b,
            rng_per_sample, REPULSION_STRENGTH, dims, True, alpha, epochs_per_negative_sample,
            next_negative_sample, next_sample, epoch,
            False, no_density, no_density, 0, 0, 0, 0, no_density, no_density, 0)
        alpha = LEARNING_RATE * (1.0 - epoch / epochs)
        enter_phase("optimisation", (epoch + 1) / epochs)
        if on_step is not None:
            on_step(epoch + 1, GRAPH_SHARE + (1 - GRAPH_SHARE) * (epoch + 1) / epochs, layout)
    return UmapResult(layout.astype(np.float32), epochs, method)


def transform_epochs(n_new: int, n_epochs: int | None) -> int:
    """umap-learn's transform: a third of the fit's epochs, or 100 (30 above 10,000 points)."""
    if n_epochs is not None:
        return max(1, n_epochs // 3)
    return 100 if n_new <= 10_000 else 30


def place(
    reference: np.ndarray,
    indices: np.ndarray,
    distances: np.ndarray,
    n_neighbors: int,
    min_dist: float = 0.1,
    n_epochs: int | None = None,
    seed: int = 0,
    n_new: int | None = None,
) -> np.ndarray:
    """New points placed into a fitted layout, as ``umap.UMAP.transform`` does.

    ``n_new``: the points placed in all when these are one batch of them (umap-learn's epochs
    depend on how many a transform places: a last, smaller batch would run 100, not 30).

    ``reference`` is the fitted layout; ``indices``/``distances`` give each new point's
    ``n_neighbors`` nearest fitted points. The steps are umap-learn's transform (euclidean):
    fuzzy memberships to the fitted points, the membership-weighted mean as the start, then
    the layout optimised with the fitted points held still (:func:`transform_epochs`), at a
    quarter of the fit's learning rate.
    """
    import scipy.sparse

    from projector_core.kernels.umap_learn import umap_module

    umap_module()  # without pynndescent, before the imports below
    from sklearn.utils import check_random_state
    from umap.layouts import optimize_layout_euclidean
    from umap.umap_ import (
        compute_membership_strengths,
        find_ab_params,
        init_graph_transform,
        make_epochs_per_sample,
        smooth_knn_dist,
    )

    dists = np.ascontiguousarray(distances, dtype=np.float32)
    sigmas, rhos = smooth_knn_dist(dists, float(n_neighbors), local_connectivity=0.0)
    rows, cols, vals, _ = compute_membership_strengths(
        np.ascontiguousarray(indices, dtype=np.int32), dists, sigmas, rhos, bipartite=True)
    graph = scipy.sparse.coo_matrix((vals, (rows, cols)),
                                    shape=(indices.shape[0], reference.shape[0]))
    csr = graph.tocsr()
    csr.eliminate_zeros()
    layout = init_graph_transform(csr, reference)
    epochs = transform_epochs(n_new or graph.shape[0], n_epochs)
    graph.data[graph.data < graph.data.max() / float(epochs)] = 0.0
    graph.eliminate_zeros()
    a, b = find_ab_params(1.0, min_dist)
    rng_state = check_random_state(seed).randint(INT32_MIN, INT32_MAX, 3).astype(np.int64)
    layout = optimize_layout_euclidean(
        np.asarray(layout, np.float32, order="C"), reference.astype(np.float32, copy=True),
        graph.row, graph.col, epochs, graph.shape[1], make_epochs_per_sample(graph.data, epochs),
        a, b, rng_state, REPULSION_STRENGTH, LEARNING_RATE / 4.0, NEGATIVE_SAMPLE_RATE, False)
    return np.asarray(layout, np.float32)
