"""t-SNE with openTSNE, observable at every iteration.

openTSNE's optimiser takes the gradient function as a parameter (``negative_gradient_method``
may be a callable). We hand it its own Barnes-Hut or FFT gradient wrapped in a hook that sees
the embedding before each step, so one ``optimize`` call per phase runs exactly the iterations
``openTSNE.TSNE.fit`` runs, and the hook streams frames, pauses, and cancels by raising. The
two obvious alternatives cost more: openTSNE callbacks evaluate the KL divergence whenever
they fire, and chunked ``optimize`` calls add a full gradient evaluation per chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import openTSNE
from openTSNE import affinity, initialization
from openTSNE.nearest_neighbors import PrecomputedNeighbors
from openTSNE.tsne import kl_divergence_bh, kl_divergence_fft

StepCallback = Callable[[int, float, np.ndarray], None]
"""``(iteration, progress 0..1, embedding)``: the embedding is live, copy what you keep.
May raise to stop the run, or block to pause it."""

DEFAULT_PERPLEXITY = 30.0
MAX_EARLY_EXAGGERATION_ITER = 250
FFT_MIN_POINTS = 10_000  # openTSNE's own switch from Barnes-Hut to FFT
AFFINITY_SHARE = 0.1  # progress reported once the affinities are built


@dataclass(frozen=True)
class TsneResult:
    coordinates: np.ndarray  # float32 [N, dims]
    kl_divergence: float
    perplexity: float
    gradient_method: str  # "bh" or "fft"


def max_perplexity(n_points: int) -> float:
    """openTSNE uses 3 x perplexity neighbours, so it needs N - 1 >= 3 x perplexity."""
    return (n_points - 1) / 3


def default_perplexity(n_points: int) -> float:
    return min(DEFAULT_PERPLEXITY, max_perplexity(n_points))


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
) -> TsneResult:
    """Embed the rows of ``data`` (all finite) in ``dims`` dimensions.

    ``neighbors`` optionally gives precomputed (indices, distances) of each row's
    ``3 x perplexity`` nearest other rows (e.g. exact ones from a GPU); otherwise openTSNE
    finds them (exact on small data, Annoy on large). ``on_step`` first receives the PCA
    initialisation (iteration 0), then the embedding before every optimisation step.
    """
    n = data.shape[0]
    if dims not in (2, 3):
        raise ValueError(f"t-SNE makes 2-D or 3-D embeddings, not {dims}-D")
    if n < 4:
        raise ValueError(f"t-SNE needs at least 4 points, got {n}")
    if perplexity is None:
        perplexity = default_perplexity(n)
    if perplexity > max_perplexity(n):
        raise ValueError(
            f"perplexity {perplexity:g} is too large for {n} points: "
            f"it must be at most (N - 1) / 3 = {max_perplexity(n):.4g}"
        )

    init = initialization.pca(data, n_components=dims, random_state=seed)
    if on_step is not None:
        on_step(0, 0.0, init)
    if neighbors is None:
        affinities = affinity.PerplexityBasedNN(data, perplexity=perplexity, n_jobs=n_jobs, random_state=seed)
    else:
        affinities = affinity.PerplexityBasedNN(
            knn_index=PrecomputedNeighbors(*neighbors), perplexity=perplexity, n_jobs=n_jobs
        )

    method = gradient_method(n, dims)
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
    )


class _Observed:
    """A gradient function that reports the embedding it is evaluated at.

    openTSNE calls it once before each of the phase's ``length`` steps and once more after
    the last one (to report the final KL divergence); the calls are counted to give the
    overall iteration number.
    """

    def __init__(
        self, gradient: Callable, offset: int, total: int, length: int, on_step: StepCallback | None
    ) -> None:
        self.gradient = gradient
        self.offset = offset
        self.total = total
        self.length = length
        self.on_step = on_step
        self.calls = 0

    def __call__(self, embedding: np.ndarray, P, **kwargs):
        if self.on_step is not None:
            iteration = self.offset + min(self.calls, self.length)
            progress = AFFINITY_SHARE + (1 - AFFINITY_SHARE) * iteration / self.total
            self.on_step(iteration, progress, embedding)
        self.calls += 1
        return self.gradient(embedding, P, **kwargs)
