"""t-SNE and UMAP over millions of points: fit an even sample, stream it, place the rest.

A full t-SNE or UMAP fit over a million points takes hours on two cores with nothing to look
at. Above a size threshold we fit a random sample instead (streamed as the full fit is), then
place the other points in batches with the methods' own out-of-sample steps (openTSNE's
``TSNEEmbedding.transform``, umap-learn's ``transform`` steps), a frame after each batch.

The sample is uniformly random with a fixed seed: every region keeps its share of points, so
the sample's picture has the data's density and cluster proportions, and choosing it costs
O(N) with no distances. Farthest-point or k-means++ samples are more "spread out" but
over-represent sparse regions and outliers (the density is what t-SNE and UMAP show) and cost
O(N x sample x D). The remaining points are placed in the same random order, so each batch is
again an even sample and the growing picture keeps its proportions.

Points not yet placed are NaN in the frames: the front end hides such points, so what shows
at every moment is an even sample of the data at its fitted positions. Putting them at a
neighbour's position plus jitter would need every point's neighbour before the first frame
(the search the sample exists to avoid) and would show positions that were never computed.

Memory: besides the data (read in batches, memory-mapped when on disk) one N x dims float32
array of coordinates; the sample's neighbour graph is sample x k; each batch's graph is
batch x k. Nothing is N x N or N x k.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.jobs.phases import enter_phase

if TYPE_CHECKING:
    from projector_core.kernels.sample_index import SampleIndex
    from projector_core.kernels.tsne import StepCallback


FIT_SHARE = 0.5  # progress reported when the sample is fitted; placement takes the rest
PLACE_BATCH = 16_384  # points placed per batch: a frame every few seconds, bounded memory
# openTSNE's transform runs 250 iterations by default; 100 placed 10k points in 3.2 s instead
# of 5.7 s (a 5k reference, shared machine) and keeps trustworthiness within 0.02 of a full
# fit (tests/test_big_projection.py, bench/bench_big_projection.py).
TSNE_PLACE_ITERATIONS = 100
MIN_SAMPLE = 100
# The sample's UMAP runs umap-learn's own epochs for its size (200 above 10,000 points, None
# here) unless the request says. Issue 25 raised them to 500 to close a gap to a 5k subset's own fit (on 293k
# word embeddings, bench/bench_sampled_quality.py: trustworthiness 0.768 -> 0.778 for 155 s
# instead of 101 s in all), a gap no variant closed: not even a fit of all 293k points (0.754;
# umap-learn's 0.739). Issue 38 holds a sampled fit to the full fit it replaces instead
# (trustworthiness at least the full fit's, in at most half umap-learn's time: 198 s there),
# which 200 epochs meet and 500 do not (the sample's epochs then cost as much as umap-learn's
# epochs over all points). Measured for issue 25 and left out: 1,000 epochs, more placement
# epochs (100, 300: nothing), exact placement neighbours (+0.003), a whole-set refinement
# (-0.008), samples of 25,000 (+0.003), 10,000 (-0.018) and 5,000 (-0.034), a spread sample
# (equal shares of 2,000 k-means cells: -0.009, better full-scale recall), and a sample fit
# started from a smaller fit placed into it (+0.001 at best).
SAMPLE_FIT_EPOCHS: int | None = None


@dataclass(frozen=True)
class SampledResult:
    coordinates: np.ndarray  # float32 [N, dims], every point placed
    sample_size: int
    details: dict[str, Any]  # the method's own fields for the job's info


def sample_size(n_points: int, mode: str, threshold: int, size: int | None) -> int | None:
    """How many points to fit first, or None for a full fit.

    "auto" samples above ``threshold`` points; the default size is the threshold, and at most
    half the points (a sample that is most of the data saves little and places few).
    """
    if mode == "full" or (mode == "auto" and n_points <= threshold):
        return None
    chosen = size if size is not None else min(threshold, n_points // 2)
    if chosen >= n_points:
        raise ValueError(f"sample_size {chosen} must be smaller than the number of points "
                         f"({n_points})")
    if chosen < MIN_SAMPLE:
        raise ValueError(f"a sample of {chosen} points is too small to fit: "
                         f"there must be at least {2 * MIN_SAMPLE} points to sample")
    return chosen


def even_order(n_points: int, seed: int) -> np.ndarray:
    """A random permutation of the rows: the first ``m`` are the sample, the rest the order
    in which they are placed. int32 halves its memory below 2**31 rows."""
    dtype = np.int32 if n_points < 2**31 else np.int64
    return np.random.default_rng(seed).permutation(n_points).astype(dtype, copy=False)


class _Canvas:
    """The N x dims coordinates being filled in, and the frames drawn from them."""

    def __init__(self, n_points: int, dims: int, on_step: StepCallback | None) -> None:
        self.coordinates = np.full((n_points, dims), np.nan, np.float32)
        self.on_step = on_step

    def show(self, rows: np.ndarray, positions: np.ndarray, iteration: int,
             progress: float) -> None:
        self.coordinates[rows] = positions
        if self.on_step is not None:
            self.on_step(iteration, progress, self.coordinates)

    def report(self, iteration: int, progress: float) -> None:
        if self.on_step is not None:
            self.on_step(iteration, progress, None)


def place_in_batches(data: np.ndarray, order: np.ndarray, m: int, canvas: _Canvas,
                     place: Callable[[np.ndarray], np.ndarray], iteration: int) -> None:
    """Place rows ``order[m:]`` batch by batch with ``place(rows' data)``, a frame each."""
    rest = order.shape[0] - m
    enter_phase("placement", 0.0)
    for start in range(m, order.shape[0], PLACE_BATCH):
        rows = np.sort(order[start:start + PLACE_BATCH])  # sorted: sequential reads
        positions = place(np.ascontiguousarray(data[rows], dtype=np.float32))
        done = start + rows.shape[0] - m
        enter_phase("placement", done / rest)
        canvas.show(rows, positions, iteration, FIT_SHARE + (1 - FIT_SHARE) * done / rest)


def sampled_tsne(data: np.ndarray, m: int, dims: int, perplexity: float | None,
                 learning_rate: float | str, n_iter: int, early_exaggeration: float, seed: int,
                 n_jobs: int, on_step: StepCallback | None = None) -> SampledResult:
    """t-SNE of a random sample of ``m`` rows, then openTSNE's ``transform`` for the rest.

    The first frame is the sample's PCA layout (the fit's own initialisation), shown before
    any neighbour is searched. One :class:`SampleIndex` over the sample then gives both the
    fit's neighbours and, installed as the fitted embedding's index, each placed point's
    neighbours among the sample, a whole batch per call.
    """
    from openTSNE.initialization import pca as pca_layout

    from projector_core.kernels.perplexity import default_perplexity
    from projector_core.kernels.sample_index import SampleIndex
    from projector_core.kernels.tsne import AFFINITY_SHARE, tsne  # openTSNE: on first use

    order = even_order(data.shape[0], seed)
    sample_rows = np.sort(order[:m])
    sample = np.ascontiguousarray(data[sample_rows], dtype=np.float32)
    canvas = _Canvas(data.shape[0], dims, on_step)
    init = pca_layout(sample, n_components=dims, random_state=seed)
    canvas.show(sample_rows, init, 0, 0.0)

    enter_phase("neighbours", 0.0)
    index = SampleIndex(sample)
    canvas.report(0, 0.0)  # a cancel during the index build stops here
    perplexity = default_perplexity(m) if perplexity is None else perplexity

    def searched(done: float) -> None:
        enter_phase("neighbours", done)
        canvas.report(0, FIT_SHARE * AFFINITY_SHARE * done)

    neighbors = index.self_neighbors(  # progress as openTSNE's own search reports it
        min(m - 1, int(3 * perplexity)), searched)

    def on_sample_step(iteration: int, progress: float, live: np.ndarray | None) -> None:
        if live is None:
            canvas.report(iteration, FIT_SHARE * progress)
        else:
            canvas.show(sample_rows, live, iteration, FIT_SHARE * progress)

    fitted = tsne(sample, dims, perplexity, learning_rate, n_iter, early_exaggeration, seed,
                  neighbors=neighbors, n_jobs=n_jobs, on_step=on_sample_step, init=init)
    reference = fitted.embedding
    assert reference is not None
    reference.affinities.knn_index = index  # transform's neighbour search: batched
    # openTSNE picks Barnes-Hut for a partial embedding of under 10k points (a last batch),
    # 10x slower per step there than the interpolation grid it keeps for the reference.
    reference.gradient_descent_params["negative_gradient_method"] = "fft" if dims == 2 else "bh"

    def place(batch: np.ndarray) -> np.ndarray:
        placed = reference.transform(batch, n_iter=TSNE_PLACE_ITERATIONS)
        # transform centres the reference embedding (once): keep the sample in step.
        canvas.coordinates[sample_rows] = np.asarray(reference, np.float32)
        return np.asarray(placed, np.float32)

    place_in_batches(data, order, m, canvas, place, n_iter)
    return SampledResult(canvas.coordinates, m, {
        "perplexity": fitted.perplexity, "kl_divergence": fitted.kl_divergence,
        "gradient_method": fitted.gradient_method, "iterations": n_iter,
        "neighbors": "usearch", "place_iterations": TSNE_PLACE_ITERATIONS,
    })


@dataclass
class UmapMap:
    """A UMAP fitted on a sample, with the sample's index: places new points on its layout.

    It pickles (the index with it), so the Dask path fits it on one worker and every worker
    places its own shards with it, as :func:`sampled_umap` does in one process.
    """

    index: SampleIndex
    layout: np.ndarray  # float32 [sample, dims], the fitted sample
    n_neighbors: int
    min_dist: float
    n_epochs: int | None  # the request's: placement runs a third of them, or umap-learn's 30
    seed: int
    to_place: int | None = None  # points placed in all, in batches (None: each batch alone)

    def place(self, batch: np.ndarray) -> np.ndarray:
        """float32 positions of ``batch``'s rows among their nearest sample points."""
        from projector_core.kernels.umap import place as umap_place

        indices, distances = self.index.query(batch, self.n_neighbors)
        placed = umap_place(self.layout, indices, distances, self.n_neighbors, self.min_dist,
                            self.n_epochs, self.seed, self.to_place)
        # umap-learn's transform starts a point with no surviving membership at NaN, and NaN
        # coordinates came out of 2 of about 6 sampled runs over the 293k words (bench):
        # such a point goes to its nearest sample point.
        lost = np.flatnonzero(~np.isfinite(placed).all(axis=1))
        placed[lost] = self.layout[indices[lost, 0]]
        return placed


def fit_umap_map(sample: np.ndarray, dims: int, n_neighbors: int, min_dist: float,
                 n_epochs: int | None, seed: int,
                 on_step: StepCallback | None = None,
                 on_search: Callable[[float], None] | None = None) -> tuple[UmapMap, int]:
    """UMAP of ``sample`` over its :class:`SampleIndex` neighbours (never NN-descent), for
    ``n_epochs`` (else :data:`SAMPLE_FIT_EPOCHS`, else umap-learn's for the sample's size): the
    map, and the epochs the fit ran.
    ``on_search(fraction)`` follows the neighbour search."""
    from projector_core.kernels.sample_index import SampleIndex
    from projector_core.kernels.umap import umap

    index = SampleIndex(sample)
    if on_search is not None:
        on_search(0.0)  # a cancel during the index build stops here
    neighbors = index.self_neighbors(n_neighbors - 1, on_search)
    fitted = umap(sample, dims, n_neighbors, min_dist, n_epochs or SAMPLE_FIT_EPOCHS, seed,
                  neighbors=neighbors, on_step=on_step, preview=False)
    return UmapMap(index, fitted.coordinates, n_neighbors, min_dist, n_epochs,
                   seed), fitted.n_epochs


def sampled_umap(data: np.ndarray, m: int, dims: int, n_neighbors: int, min_dist: float,
                 n_epochs: int | None, seed: int,
                 on_step: StepCallback | None = None) -> SampledResult:
    """UMAP of a random sample of ``m`` rows, then umap-learn's transform for the rest.

    The first frame shows the sample's first principal components (before the index is
    built: a picture at once). One :class:`SampleIndex` over the sample finds both the
    sample's neighbours for the fit and the new points' neighbours among it: faster than
    umap-learn's NN-descent (whose first use also compiles for minutes) on the bench data,
    and one index instead of two. Its build cannot be interrupted: a cancel takes effect
    when it ends.
    """
    from openTSNE.initialization import pca as pca_layout

    order = even_order(data.shape[0], seed)
    sample_rows = np.sort(order[:m])
    sample = np.ascontiguousarray(data[sample_rows], dtype=np.float32)
    canvas = _Canvas(data.shape[0], dims, on_step)
    canvas.show(sample_rows, pca_layout(sample, n_components=dims, random_state=seed), 0, 0.0)

    def searched(done: float) -> None:
        enter_phase("neighbours", done)
        canvas.report(0, 0.0)

    def on_sample_step(epoch: int, progress: float, live: np.ndarray | None) -> None:
        assert live is not None  # UMAP's every step carries its layout
        canvas.show(sample_rows, live, epoch, FIT_SHARE * progress)

    enter_phase("neighbours")
    fitted, epochs = fit_umap_map(sample, dims, n_neighbors, min_dist, n_epochs, seed,
                                  on_sample_step, searched)
    fitted.to_place = data.shape[0] - m  # every batch runs the epochs of one transform of all
    place_in_batches(data, order, m, canvas, fitted.place, epochs)
    return SampledResult(canvas.coordinates, m, {"n_epochs": epochs, "neighbors": "usearch"})
