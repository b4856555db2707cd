"""t-SNE and UMAP on a cluster: fit a sample on one worker, place the rest in parallel.

Neither method's fit scales past one machine's memory, but both place new points on a
fitted map (openTSNE's ``TSNEEmbedding.transform``, umap-learn's ``UMAP.transform``). So the
workers gather a random sample of the finite rows to one worker (never through the server),
which fits it; the fitted model goes to every worker (once: a Dask future every placing task
reads), each places the shards it holds and writes their rows to the projection's
``coords`` store (``coords_store.py``), as PCA does, so the N x 2 coordinates never reach the
server; the job's progress counts the shards placed, and while the result is small enough
to read whole the browser gets a frame of the store as shards finish; above that, each task
sends back its rows at multiples of a stride, a thin frame (at most ``EARLY_POINTS`` rows)
that the early tiles read, so a 100M-point layout fills in as its shards finish.
t-SNE uses openTSNE directly, with the parameters its method hands over (:class:`TsneFit`;
nothing here reads a request). UMAP is the single-machine sampled fit's
(:class:`~kernels.sampling.UmapMap`): the sample's neighbours and each placed point's come
from one HNSW index over the sample, not umap-learn's NN-descent, so a cluster draws the same
map as one machine given the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

import numpy as np

from projector_core.distributed.coords_store import (
    WHOLE_BYTES,
    ShardStats,
    StoredCoordinates,
    combine,
    create_coords,
    new_store,
    write_rows,
)
from projector_core.distributed.shard_tasks import HeldShard, held
from projector_core.formats.chunked import ChunkedVectors, Shard
from projector_core.jobs.reporter import Reporter, Silent
from projector_core.kernels.sampling import PLACE_BATCH, UmapMap

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

SAMPLE_ROWS = 20_000  # fitted on one worker: t-SNE/UMAP of this many take well under a minute
FIT_SHARE = 0.3  # progress reported once the sample is fitted
EARLY_POINTS = 1 << 20  # rows of a thin frame at most (8 MB at 2-D): early tiles' picture
# Rows a placing task places (8 batches, a few minutes on a loaded core): the progress steps
# and the balance between workers when each holds few shards (10M x 8: 5 shards of 2M rows).
PLACE_ROWS = 8 * PLACE_BATCH


def take_rows(item: HeldShard | Shard, rows: np.ndarray) -> np.ndarray:
    """The shard's finite rows among ``rows`` (shard-local): its part of the sample."""
    x = held(item).index.host[rows]
    return np.asarray(x[np.isfinite(x).all(axis=1)])


@dataclass
class FittedMap:
    """The fitted model, boxed: Dask would ship openTSNE's ndarray subclass as a bare array."""

    model: Any
    iterations: int | None = None  # t-SNE: optimisation steps when placing new points


@dataclass(frozen=True)
class TsneFit:
    """A t-SNE as the method hands it to the cluster: its width and parameters."""

    dims: int
    perplexity: float | None
    learning_rate: float | Literal["auto"]
    n_iter: int
    early_exaggeration: float
    seed: int
    name: ClassVar[str] = "tsne"


@dataclass(frozen=True)
class UmapFit:
    """A UMAP as the method hands it to the cluster: its width and parameters."""

    dims: int
    n_neighbors: int
    min_dist: float
    n_epochs: int | None
    seed: int
    name: ClassVar[str] = "umap"


def fit_sample(parts: list[np.ndarray], fit: TsneFit | UmapFit) -> FittedMap:
    """Fit the layout on the gathered sample; the model stays on this worker until placed."""
    sample = np.ascontiguousarray(np.concatenate(parts), np.float32)
    if isinstance(fit, TsneFit):
        return _fit_tsne(sample, fit)
    from projector_core.kernels.sampling import fit_umap_map

    fitted, _ = fit_umap_map(sample, fit.dims, fit.n_neighbors, fit.min_dist, fit.n_epochs,
                             fit.seed)
    return FittedMap(fitted)


def _fit_tsne(sample: np.ndarray, fit: TsneFit) -> FittedMap:
    """As the single machine's sampled t-SNE (``kernels.sampling.sampled_tsne``): one HNSW
    index over the sample for the fit's neighbours and each placed point's, its PCA start,
    and its placement steps; the index ships with the map to every worker."""
    from openTSNE.initialization import pca as pca_layout

    from projector_core.kernels.perplexity import default_perplexity
    from projector_core.kernels.sample_index import SampleIndex
    from projector_core.kernels.sampling import TSNE_PLACE_ITERATIONS
    from projector_core.kernels.tsne import tsne

    m = sample.shape[0]
    perplexity = fit.perplexity or default_perplexity(m)
    index = SampleIndex(sample)
    fitted = tsne(sample, fit.dims, perplexity, fit.learning_rate, fit.n_iter,
                  fit.early_exaggeration, fit.seed,
                  neighbors=index.self_neighbors(min(m - 1, int(3 * perplexity))), n_jobs=1,
                  init=pca_layout(sample, n_components=fit.dims, random_state=fit.seed))
    reference = fitted.embedding
    assert reference is not None
    reference.affinities.knn_index = index  # transform's neighbour search: batched
    reference.gradient_descent_params["negative_gradient_method"] = \
        "fft" if fit.dims == 2 else "bh"  # as one machine: not Barnes-Hut for a last batch
    return FittedMap(reference, TSNE_PLACE_ITERATIONS)


def sample_coordinates(fitted: FittedMap) -> np.ndarray:
    """The fitted sample's own coordinates."""
    if isinstance(fitted.model, UmapMap):
        return fitted.model.layout
    return np.asarray(fitted.model, np.float32)


def place_rows(item: HeldShard | Shard, fitted: FittedMap, lo: int, hi: int) -> np.ndarray:
    """float32 coordinates of the shard's rows ``lo:hi`` on the fitted map; NaN where not
    finite. Batches of ``PLACE_BATCH`` bound the placement's memory."""
    x = held(item).index.host[lo:hi]
    ok = np.isfinite(x).all(axis=1)
    out = np.full((x.shape[0], sample_coordinates(fitted).shape[1]), np.nan, np.float32)
    rows = np.flatnonzero(ok)
    for start in range(0, rows.size, PLACE_BATCH):
        batch = rows[start:start + PLACE_BATCH]
        points = np.ascontiguousarray(x[batch], np.float32)
        placed = (fitted.model.place(points) if isinstance(fitted.model, UmapMap)
                  else fitted.model.transform(points, n_iter=fitted.iterations))
        out[batch] = np.asarray(placed, np.float32)
    return out


@dataclass
class Placed:
    """What a placing task sends back: its rows' stats and, for a thin frame, the rows it
    placed at multiples of the frame's stride (a few KB), never its coordinates."""

    stats: ShardStats
    start: int  # the first row it placed
    thin: np.ndarray | None


class ThinFrame:
    """Every ``stride``-th row of a layout too large to send whole (``WHOLE_BYTES``), NaN
    until placed: at most ``EARLY_POINTS`` rows, filled in as placing tasks end, so the early
    tiles of a running 100M-point t-SNE/UMAP show the shards placed so far."""

    def __init__(self, rows: int, dims: int) -> None:
        self.stride = -(-rows // EARLY_POINTS)
        self.coordinates = np.full((-(-rows // self.stride), dims), np.nan, np.float32)

    def add(self, placed: Placed) -> None:
        if placed.thin is not None:
            first = -(-placed.start // self.stride)  # the first multiple of stride it placed
            self.coordinates[first:first + placed.thin.shape[0]] = placed.thin


def place_into(item: HeldShard | Shard, fitted: FittedMap, path: str, lo: int, hi: int,
               stride: int) -> Placed:
    """:func:`place_rows`, written to the store by the worker holding the shard; stats back,
    and with a ``stride`` (0: none) its rows at multiples of it."""
    start = held(item).start + lo
    placed = place_rows(item, fitted, lo, hi)
    stats = write_rows(path, start, placed)
    return Placed(stats, start, placed[(-start) % stride::stride] if stride else None)


def piece_rows(shard_rows: int) -> int:
    """Rows one placing task places: ``shard_rows`` cut into equal pieces of at most
    ``PLACE_ROWS``, so no two tasks write one chunk of the store; a whole shard when no such
    cut is near (a shard of a prime number of rows)."""
    fewest = -(-shard_rows // PLACE_ROWS)
    for count in range(fewest, 4 * fewest + 1):
        if shard_rows % count == 0:
            return shard_rows // count
    return shard_rows


def sample_size(fitted: FittedMap) -> int:
    """Rows the map was fitted on (the finite rows of the sample)."""
    return int(sample_coordinates(fitted).shape[0])


def sampled_embedding(fit: TsneFit | UmapFit, vectors: ChunkedVectors, cluster: Cluster,
                      reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
    """(coordinates [N, dims] in a store the workers wrote, info) of ``fit`` over the shards
    held by the workers."""
    if reporter is None:
        reporter = Silent()
    n = vectors.shape[0]
    shards = vectors.shards()
    size = min(n, SAMPLE_ROWS)
    chosen = np.sort(np.random.default_rng(fit.seed).choice(n, size, replace=False))
    local = [chosen[(chosen >= s.start) & (chosen < s.stop)] - s.start for s in shards]
    holding = cluster.held(vectors)
    parts = cluster.submit_each(take_rows, holding, local)
    model = cluster.submit(fit_sample, parts, fit)
    reporter.step(None, 0.0)
    fitted = cluster.result(cluster.submit(sample_size, model), timeout_factor=10)
    shard_rows = shards[0].stop - shards[0].start
    piece = piece_rows(shard_rows)
    path = create_coords(new_store(cluster.store_dir, fit.name), n, fit.dims, piece)
    unplaced = ShardStats(0, np.full(fit.dims, np.inf), np.full(fit.dims, -np.inf))
    stored = StoredCoordinates(path, (n, fit.dims), unplaced)
    # A frame is the whole N x dims array while it is small; else a thin one for early tiles.
    thin = None if stored.nbytes <= WHOLE_BYTES else ThinFrame(n, fit.dims)
    stride = thin.stride if thin is not None else 1

    def frame() -> np.ndarray:
        return np.asarray(stored) if thin is None else thin.coordinates.copy()

    reporter.step(0, FIT_SHARE, frame, stride)
    tasks = [(future, model, path, lo, min(lo + piece, shard.stop - shard.start),
              0 if thin is None else stride)
             for future, shard in zip(holding, shards, strict=True)
             for lo in range(0, shard.stop - shard.start, piece)]
    stats = []
    placing = cluster.each_unordered(place_into, tasks, timeout_factor=10)
    for placed, (_number, part) in enumerate(placing, start=1):
        stats.append(part.stats)
        if thin is not None:
            thin.add(part)
        reporter.step(placed, FIT_SHARE + (1 - FIT_SHARE) * placed / len(tasks), frame, stride)
    stored.stats = combine(stats)
    info = {"sample_rows": fitted, "placed_by": "transform", "shards": len(shards),
            "placing_tasks": len(tasks)}
    return cast(np.ndarray, stored), info  # StoredCoordinates: read by rows, as PCA's
