"""t-SNE with openTSNE, observable at every iteration.

openTSNE's optimiser takes the gradient function as a parameter (``negative_gradient_method``
may be a callable). We hand it its own Barnes-Hut or FFT gradient wrapped in a hook that sees
the embedding before each step, so one ``optimize`` call per phase runs exactly the iterations
``openTSNE.TSNE.fit`` runs, and the hook streams frames, pauses, and cancels by raising. The
two obvious alternatives cost more: openTSNE callbacks evaluate the KL divergence whenever
they fire, and chunked ``optimize`` calls add a full gradient evaluation per chunk.

The neighbour search before the first step (Annoy, a large share of the time on big data) is
openTSNE's own too, with its index wrapped so the hook also runs every thousand points: it
reports progress and a cancel stops it there instead of after the search.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openTSNE
from openTSNE import affinity, initialization
from openTSNE.nearest_neighbors import Annoy, KNNIndex, PrecomputedNeighbors
from openTSNE.tsne import kl_divergence_bh, kl_divergence_fft

from projector_core.jobs.phases import enter_phase
from projector_core.kernels.perplexity import default_perplexity
from projector_core.kernels.supervision import supervise_affinities

StepCallback = Callable[[int, float, "np.ndarray | None"], None]
"""``(iteration, progress 0..1, embedding)``: the embedding is live, copy what you keep; it
is None while the neighbours are searched (progress only). May raise to stop the run, or
block to pause it."""

MAX_EARLY_EXAGGERATION_ITER = 250
FFT_MIN_POINTS = 10_000  # openTSNE's own switch from Barnes-Hut to FFT
AFFINITY_SHARE = 0.25  # progress reported once the affinities are built
ANNOY_MIN_POINTS = 1000  # openTSNE searches smaller data exactly (scikit-learn)
REPORT_EVERY = 64  # neighbour-search calls between two reports (a query takes ~1 ms)


@dataclass(frozen=True)
class TsneResult:
    coordinates: np.ndarray  # float32 [N, dims]
    kl_divergence: float
    perplexity: float
    gradient_method: str  # "bh" or "fft"
    # openTSNE's embedding, which can place new points (``transform``); not compared or shown.
    embedding: openTSNE.TSNEEmbedding | None = field(default=None, repr=False, compare=False)


def early_exaggeration_iterations(n_iter: int) -> int:
    """openTSNE's 250 of 750 by default; a third of shorter runs."""
    return min(MAX_EARLY_EXAGGERATION_ITER, n_iter // 3)


def gradient_method(n_points: int, dims: int) -> str:
    """FFT interpolation is 2-D only; Barnes-Hut handles 3-D and is faster on small data."""
    return "fft" if dims == 2 and n_points >= FFT_MIN_POINTS else "bh"


def tsne(
    data: np.ndarray,
    dims: int = 2,
    perplexity: float | None = None,
    learning_rate: float | str = "auto",
    n_iter: int = 750,
    early_exaggeration: float = 12.0,
    seed: int = 0,
    neighbors: tuple[np.ndarray, np.ndarray] | None = None,
    n_jobs: int = -1,
    on_step: StepCallback | None = None,
    init: np.ndarray | None = None,
    supervision: tuple[np.ndarray, float] | None = None,
    gradient: str | None = None,
) -> TsneResult:
    """Embed the rows of ``data`` (all finite) in ``dims`` dimensions.

    The data must fit the parameters (at least 4 rows, perplexity at most (N - 1) / 3):
    :class:`projector_core.projection.methods.tsne.Tsne` checks that before a fit.
    ``neighbors`` optionally gives precomputed (indices, distances) of each row's
    ``3 x perplexity`` nearest other rows (e.g. exact ones from a GPU); otherwise openTSNE
    finds them (exact on small data, Annoy on large). ``on_step`` first receives the PCA
    initialisation (iteration 0), then progress without an embedding during an Annoy search,
    then the embedding before every optimisation step. ``supervision``: (label codes per
    row, weight 0..1) reweighting the affinities (:mod:`kernels.supervision`). ``gradient``:
    "bh" or "fft" instead of :func:`gradient_method`'s choice by size (the tests run the FFT
    path, which real data only takes from 10k points, on small data).
    """
    n = data.shape[0]
    if dims not in (2, 3):
        raise ValueError(f"t-SNE makes 2-D or 3-D embeddings, not {dims}-D")
    if perplexity is None:
        perplexity = default_perplexity(n)

    if init is None:  # else a given start layout [n, dims] (the comparison view's steps)
        init = initialization.pca(data, n_components=dims, random_state=seed)
    if on_step is not None:
        on_step(0, 0.0, init)
    k = min(n - 1, int(3 * perplexity))  # openTSNE's neighbour count for this perplexity
    if neighbors is not None:
        knn: KNNIndex | None = PrecomputedNeighbors(*neighbors)
        enter_phase("affinities")
    elif on_step is not None and n >= ANNOY_MIN_POINTS:
        enter_phase("neighbours", 0.0)

        def searched(done: float) -> None:
            enter_phase("neighbours", done)
            on_step(0, AFFINITY_SHARE * done, None)

        knn = _ObservedAnnoy(data, k, n_jobs=n_jobs, random_state=seed, on_progress=searched)
    else:
        knn = None
        enter_phase("neighbours")  # an exact search, then the affinities, in one call
    if knn is None:
        affinities = affinity.PerplexityBasedNN(data, perplexity=perplexity, n_jobs=n_jobs,
                                                random_state=seed)
    else:
        affinities = affinity.PerplexityBasedNN(knn_index=knn, perplexity=perplexity,
                                                n_jobs=n_jobs)
    if supervision is not None and supervision[1] > 0:
        affinities.P = supervise_affinities(affinities.P, *supervision)

    method = gradient_method(n, dims) if gradient is None else gradient
    if method not in ("bh", "fft") or (method == "fft" and dims != 2):
        raise ValueError(f"gradient {method!r}: use 'bh', or 'fft' for 2-D")
    objective = kl_divergence_fft if method == "fft" else kl_divergence_bh
    early = early_exaggeration_iterations(n_iter)
    phases = [(early, early_exaggeration), (n_iter - early, None)]
    embedding = openTSNE.TSNEEmbedding(
        init, affinities, learning_rate=learning_rate, n_jobs=n_jobs, random_state=seed
    )
    done = 0
    for length, exaggeration in phases:
        if length == 0:
            continue
        hook = _Observed(objective, done, n_iter, length, on_step)
        embedding.optimize(
            length, exaggeration=exaggeration, momentum=0.8, inplace=True, negative_gradient_method=hook
        )
        done += length
    return TsneResult(
        coordinates=np.asarray(embedding, dtype=np.float32),
        kl_divergence=float(embedding.kl_divergence),
        perplexity=float(perplexity),
        gradient_method=method,
        embedding=embedding,
    )


class _Observed:
    """A gradient function that reports the embedding it is evaluated at.

    openTSNE calls it once before each of the phase's ``length`` steps and once more after
    the last one (to report the final KL divergence); the calls are counted to give the
    overall iteration number.
    """

    def __init__(
        self, gradient: Callable[..., Any], offset: int, total: int, length: int, on_step: StepCallback | None
    ) -> None:
        self.gradient = gradient
        self.offset = offset
        self.total = total
        self.length = length
        self.on_step = on_step
        self.calls = 0

    def __call__(self, embedding: np.ndarray, P: Any, **kwargs: Any) -> Any:
        if self.on_step is not None:
            iteration = self.offset + min(self.calls, self.length)
            progress = AFFINITY_SHARE + (1 - AFFINITY_SHARE) * iteration / self.total
            enter_phase("optimisation", iteration / self.total)
            self.on_step(iteration, progress, embedding)
        self.calls += 1
        return self.gradient(embedding, P, **kwargs)


class _ObservedAnnoy(Annoy):  # type: ignore[misc]  # openTSNE is untyped: Annoy is Any
    """openTSNE's Annoy neighbour search, unchanged, reporting as it goes.

    ``Annoy.build`` adds each point to an index, builds the index's trees, then asks it for
    each point's neighbours, one call per point (most of the time). The index it stores is
    wrapped so that these calls are counted and every ``REPORT_EVERY`` of them
    ``on_progress(fraction of the points queried)`` runs. Only the tree building, a few
    seconds on large data, goes by without a report.
    """

    def __init__(self, *args: Any, on_progress: Callable[[float], None], **kwargs: Any) -> None:
        self._on_progress = on_progress
        super().__init__(*args, **kwargs)

    def build(self) -> Any:
        found = super().build()
        enter_phase("affinities")  # openTSNE calibrates the perplexity next
        return found

    @property
    def index(self) -> Any:
        return self._index

    @index.setter
    def index(self, value: Any) -> None:
        self._index = None if value is None else _CountedIndex(value, self.n_samples,
                                                                self._on_progress)


class _CountedIndex:
    """An Annoy index whose item additions and queries call back now and then."""

    def __init__(self, index: Any, n_points: int, on_progress: Callable[[float], None]) -> None:
        self._index = index
        self._n_points = n_points
        self._on_progress = on_progress
        self._added = self._queried = 0

    def add_item(self, *args: Any) -> Any:
        self._added += 1
        if self._added % REPORT_EVERY == 0:
            self._on_progress(0.0)
        return self._index.add_item(*args)

    def get_nns_by_item(self, *args: Any, **kwargs: Any) -> Any:
        self._queried += 1
        if self._queried % REPORT_EVERY == 0:
            self._on_progress(min(1.0, self._queried / self._n_points))
        return self._index.get_nns_by_item(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)
