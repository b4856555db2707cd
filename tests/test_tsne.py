"""t-SNE kernel: quality on digits, the very computation openTSNE.TSNE does, streaming, stop."""

from __future__ import annotations

import numpy as np
import openTSNE
import pytest
from sklearn.datasets import load_digits
from sklearn.manifold import trustworthiness

from projector_core.kernels.perplexity import max_perplexity
from projector_core.kernels.tsne import (
    default_perplexity,
    early_exaggeration_iterations,
    gradient_method,
    tsne,
)
from projector_core.projection.methods.tsne import Tsne
from projector_core.projection.params import TsneParams, TsneRequest


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return load_digits().data.astype(np.float32)


def test_digits_2d_is_trustworthy_and_streams_every_iteration(digits):
    steps: list[tuple[int, float]] = []
    result = tsne(digits, 2, n_iter=300, n_jobs=1,
                  on_step=lambda i, progress, live: steps.append((i, progress)))
    assert result.coordinates.shape == (1797, 2) and result.coordinates.dtype == np.float32
    assert trustworthiness(digits, result.coordinates, n_neighbors=10) >= 0.95
    iterations = [i for i, _ in steps]
    assert iterations[0] == 0 and iterations[-1] == 300
    assert set(range(301)) <= set(iterations)
    progress = [p for _, p in steps]
    assert progress == sorted(progress) and progress[-1] == pytest.approx(1.0)
    assert result.gradient_method == "bh" and result.perplexity == 30


def test_same_embedding_as_opentsne_fit(digits):
    """Our phases and hook change nothing: openTSNE.TSNE with the same settings agrees."""
    searching = []
    ours = tsne(digits, 2, perplexity=20, n_iter=150, early_exaggeration=8, seed=3, n_jobs=1,
                on_step=lambda i, progress, live: searching.append(live is None))
    assert any(searching)  # the observed Annoy search ran, and found the same neighbours
    reference = openTSNE.TSNE(
        perplexity=20, n_iter=100, early_exaggeration_iter=50, early_exaggeration=8,
        random_state=3, n_jobs=1, neighbors="annoy", initialization="pca",
    ).fit(digits)
    np.testing.assert_allclose(ours.coordinates, np.asarray(reference), rtol=0, atol=1e-3)


def test_3d_uses_barnes_hut(digits):
    result = tsne(digits[:600], 3, n_iter=200, n_jobs=1)
    assert result.coordinates.shape == (600, 3)
    assert result.gradient_method == "bh"
    assert trustworthiness(digits[:600], result.coordinates, n_neighbors=10) >= 0.9


def test_precomputed_neighbors_are_used(digits):
    data = digits[:400]
    k = 3 * 10  # 3 x perplexity
    distances = np.linalg.norm(data[:, None, :] - data[None, :, :], axis=2)
    np.fill_diagonal(distances, np.inf)
    indices = np.argsort(distances, axis=1)[:, :k]
    nearest = np.take_along_axis(distances, indices, axis=1)
    result = tsne(data, 2, perplexity=10, n_iter=200, n_jobs=1, neighbors=(indices, nearest))
    assert trustworthiness(data, result.coordinates, n_neighbors=10) >= 0.9


def test_raising_from_the_hook_stops_at_once(digits):
    seen = []

    class Stop(Exception):
        pass

    def on_step(iteration, progress, live):
        seen.append(iteration)
        if iteration == 20:
            raise Stop

    with pytest.raises(Stop):
        tsne(digits, 2, n_iter=300, n_jobs=1, on_step=on_step)
    assert max(seen) == 20


def test_raising_during_the_neighbour_search_stops_it(digits):
    calls = []

    class Stop(Exception):
        pass

    def on_step(iteration, progress, live):
        calls.append(progress)
        if live is None:
            raise Stop

    with pytest.raises(Stop):
        tsne(digits, 2, n_jobs=1, on_step=on_step)
    assert calls == [0.0, 0.0]  # the PCA start, then the first report (adding points)


def _method(**params) -> Tsne:
    """The registry's t-SNE for these parameters: it holds the limits the data puts on them."""
    return Tsne(TsneRequest(method="tsne", run="r", embedding="e", params=TsneParams(**params)))


def test_perplexity_limits():
    assert max_perplexity(91) == 30
    assert default_perplexity(1000) == 30 and default_perplexity(31) == 10
    data = np.random.default_rng(0).normal(size=(40, 5)).astype(np.float32)
    with pytest.raises(ValueError, match=r"perplexity 20 is too large for 40 points"):
        _method(perplexity=20).check_fit(data.shape[0])
    with pytest.raises(ValueError, match="at least 4 points"):
        _method().check_fit(data[:3].shape[0])
    assert tsne(data, n_iter=30, n_jobs=1).coordinates.shape == (40, 2)  # default fits N


def test_phase_lengths_and_gradient_choice():
    assert early_exaggeration_iterations(750) == 250
    assert early_exaggeration_iterations(300) == 100
    assert early_exaggeration_iterations(2) == 0
    assert gradient_method(9_999, 2) == "bh"
    assert gradient_method(10_000, 2) == "fft"
    assert gradient_method(100_000, 3) == "bh"


def test_the_fft_gradient_is_the_very_computation_opentsne_does(digits):
    """The FFT interpolation path every 2-D fit of 10k points or more takes, forced here on
    digits: the same embedding as openTSNE.TSNE with negative_gradient_method="fft", streamed."""
    steps = []
    ours = tsne(digits, 2, perplexity=20, n_iter=150, early_exaggeration=8, seed=3, n_jobs=1,
                gradient="fft", on_step=lambda i, progress, live: steps.append(i))
    assert ours.gradient_method == "fft" and steps[-1] == 150
    reference = openTSNE.TSNE(
        perplexity=20, n_iter=100, early_exaggeration_iter=50, early_exaggeration=8,
        random_state=3, n_jobs=1, neighbors="annoy", initialization="pca",
        negative_gradient_method="fft",
    ).fit(digits)
    np.testing.assert_allclose(ours.coordinates, np.asarray(reference), rtol=0, atol=1e-3)
    assert ours.kl_divergence == pytest.approx(reference.kl_divergence, rel=1e-3)
    # And it differs from the Barnes-Hut run: the path taken is the one asked for.
    bh = tsne(digits, 2, perplexity=20, n_iter=150, early_exaggeration=8, seed=3, n_jobs=1,
              gradient="bh")
    assert not np.allclose(bh.coordinates, ours.coordinates, atol=1e-3)
    with pytest.raises(ValueError, match="'fft' for 2-D"):
        tsne(digits[:100], 3, n_iter=10, gradient="fft")
