"""t-SNE and UMAP on a cluster: fit a sample on one worker, place the rest in parallel.

Neither method's fit scales past one machine's memory, but both place new points on a
fitted map (openTSNE's ``TSNEEmbedding.transform``, umap-learn's ``UMAP.transform``). So the
workers gather a random sample of the finite rows to one worker (never through the server),
which fits it; the fitted model goes to every worker (once: a Dask future every placing task
reads), each places the shards it holds and writes their rows to the projection's
``coords`` store (``coords_store.py``), as PCA does, so the N x 2 coordinates never reach the
server; the job's progress counts the shards placed, and while the result is small enough
to read whole the browser gets a frame of the store as shards finish.
t-SNE uses openTSNE directly, with the request's parameters. UMAP is the single-machine
sampled fit's (:class:`~kernels.sampling.UmapMap`): the sample's neighbours and each placed
point's come from one HNSW index over the sample, not umap-learn's NN-descent, so a cluster
draws the same map as one machine given the same sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

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
from projector_core.kernels.sampling import PLACE_BATCH, UmapMap
from projector_core.projection.params import TsneRequest, UmapRequest

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.projection.methods.base import Reporter

SAMPLE_ROWS = 20_000  # fitted on one worker: t-SNE/UMAP of this many take well under a minute
FIT_SHARE = 0.3  # progress reported once the sample is fitted


def take_rows(item: HeldShard | Shard, rows: np.ndarray) -> np.ndarray:
    """The shard's finite rows among ``rows`` (shard-local): its part of the sample."""
    x = held(item).index.host[rows]
    return x[np.isfinite(x).all(axis=1)]


@dataclass
class FittedMap:
    """The fitted model, boxed: Dask would ship openTSNE's ndarray subclass as a bare array."""

    model: Any
    iterations: int | None = None  # t-SNE: optimisation steps when placing new points


def fit_sample(parts: list[np.ndarray], request: TsneRequest | UmapRequest) -> FittedMap:
    """Fit the method on the gathered sample; the model stays on this worker until placed."""
    sample = np.ascontiguousarray(np.concatenate(parts), np.float32)
    if isinstance(request, TsneRequest):
        params = request.params
        import openTSNE

        from projector_core.kernels.tsne import default_perplexity, early_exaggeration_iterations

        perplexity = params.perplexity or default_perplexity(sample.shape[0])
        return FittedMap(openTSNE.TSNE(
            n_components=request.dims, perplexity=perplexity, learning_rate=params.learning_rate,
            early_exaggeration=params.early_exaggeration, n_iter=params.n_iter,
            early_exaggeration_iter=early_exaggeration_iterations(params.n_iter),
            negative_gradient_method="fft" if request.dims == 2 else "bh",
            random_state=params.seed, n_jobs=1).fit(sample), min(params.n_iter, 250))
    from projector_core.kernels.sampling import fit_umap_map

    assert isinstance(request, UmapRequest)  # t-SNE returned above
    fit = request.params
    fitted, _ = fit_umap_map(sample, request.dims, fit.n_neighbors, fit.min_dist,
                             fit.n_epochs, fit.seed)
    return FittedMap(fitted)


def sample_coordinates(fitted: FittedMap) -> np.ndarray:
    """The fitted sample's own coordinates."""
    if isinstance(fitted.model, UmapMap):
        return fitted.model.layout
    return np.asarray(fitted.model, np.float32)


def place_shard(item: HeldShard | Shard, fitted: FittedMap) -> np.ndarray:
    """float32 coordinates of a shard's rows on the fitted map; NaN where not finite.

    t-SNE optimises the new points for as many iterations as the fit had, at most openTSNE's
    default 250 for ``transform``."""
    x = held(item).index.host
    ok = np.isfinite(x).all(axis=1)
    out = np.full((x.shape[0], sample_coordinates(fitted).shape[1]), np.nan, np.float32)
    if ok.any():
        rows = np.flatnonzero(ok)
        for start in range(0, rows.size, PLACE_BATCH):  # bounds the placement's memory
            batch = rows[start:start + PLACE_BATCH]
            points = np.ascontiguousarray(x[batch], np.float32)
            placed = (fitted.model.place(points) if isinstance(fitted.model, UmapMap)
                      else fitted.model.transform(points, n_iter=fitted.iterations))
            out[batch] = np.asarray(placed, np.float32)
    return out


def place_into(item: HeldShard | Shard, fitted: FittedMap, path: str) -> ShardStats:
    """:func:`place_shard`, written to the store where the shard lies; its stats back."""
    return write_rows(path, held(item).start, place_shard(item, fitted))


def sample_size(fitted: FittedMap) -> int:
    """Rows the map was fitted on (the finite rows of the sample)."""
    return int(sample_coordinates(fitted).shape[0])


class _Quiet:
    def step(self, *args: Any) -> None:
        return None


def sampled_embedding(request: TsneRequest | UmapRequest, vectors: ChunkedVectors,
                      cluster: Cluster, reporter: Reporter | None
                      ) -> tuple[np.ndarray, dict[str, Any]]:
    """(coordinates [N, dims] in a store the workers wrote, info) of ``request`` over the
    shards held by the workers."""
    if reporter is None:
        reporter = _Quiet()
    n = vectors.shape[0]
    shards = vectors.shards()
    size = min(n, SAMPLE_ROWS)
    chosen = np.sort(np.random.default_rng(request.params.seed).choice(n, size, replace=False))
    local = [chosen[(chosen >= s.start) & (chosen < s.stop)] - s.start for s in shards]
    holding = cluster.held(vectors)
    parts = cluster.submit_each(take_rows, holding, local)
    model = cluster.submit(fit_sample, parts, request)
    reporter.step(None, 0.0)
    fitted = cluster.result(cluster.submit(sample_size, model), timeout_factor=10)
    path = create_coords(new_store(cluster.store_dir, request.method), n, request.dims,
                         shards[0].stop - shards[0].start)
    unplaced = ShardStats(0, np.full(request.dims, np.inf), np.full(request.dims, -np.inf))
    stored = StoredCoordinates(path, (n, request.dims), unplaced)
    # A frame is the whole N x dims array: sent while it is small, else the tiles show it.
    frame = (lambda: np.asarray(stored)) if stored.nbytes <= WHOLE_BYTES else None
    reporter.step(0, FIT_SHARE, frame)
    stats = []
    placing = cluster.map_unordered(place_into, holding, model, path, timeout_factor=10)
    for placed, (_number, shard) in enumerate(placing, start=1):
        stats.append(shard)
        reporter.step(placed, FIT_SHARE + (1 - FIT_SHARE) * placed / len(shards), frame)
    stored.stats = combine(stats)
    info = {"sample_rows": fitted, "placed_by": "transform", "shards": len(shards)}
    return cast(np.ndarray, stored), info  # StoredCoordinates: read by rows, as PCA's
