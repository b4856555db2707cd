"""UMAP kernel: umap-learn's own result, streamed epoch by epoch, stoppable."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.manifold import trustworthiness

from projector_core.kernels.umap import default_epochs, umap
from projector_core.projection.methods.umap import Umap
from projector_core.projection.params import UmapRequest


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return load_digits().data.astype(np.float32)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:n_jobs value 1 overridden")
def test_identical_to_umap_learn(digits):
    """Driving the epochs ourselves changes nothing: umap.UMAP gives the same array."""
    import umap as umap_learn

    data = digits[:500]
    ours = umap(data, 2, n_neighbors=10, min_dist=0.2, n_epochs=60, seed=1)
    reference = umap_learn.UMAP(n_neighbors=10, min_dist=0.2, n_epochs=60,
                                random_state=1).fit_transform(data)
    np.testing.assert_array_equal(ours.coordinates, reference)
    assert ours.neighbors == "exact"


def test_digits_trustworthy_and_every_epoch_streamed(digits):
    frames: list[tuple[int, float, np.ndarray]] = []
    result = umap(digits, 2, n_epochs=150,
                  on_step=lambda epoch, progress, live: frames.append(
                      (epoch, progress, live.copy())))
    assert result.coordinates.shape == (1797, 2)
    assert trustworthiness(digits, result.coordinates, n_neighbors=10) >= 0.95
    epochs = [epoch for epoch, _, _ in frames]
    assert set(range(151)) <= set(epochs) and epochs[-1] == 150
    assert [p for _, p, _ in frames] == sorted(p for _, p, _ in frames)
    # The frames are the layout moving: the first differs from the last, the last is the result.
    assert not np.allclose(frames[0][2], frames[-1][2])
    np.testing.assert_array_equal(frames[-1][2], result.coordinates)


def test_3d_and_stop_from_the_callback(digits):
    class Stop(Exception):
        pass

    def on_step(epoch, progress, live):
        assert live.shape == (300, 3)
        if epoch == 5:
            raise Stop

    with pytest.raises(Stop):
        umap(digits[:300], 3, n_epochs=200, on_step=on_step)


def test_a_stopped_run_leaves_nothing_locked_for_other_threads(digits):
    """Stopping by raising must not leave any global lock held (tqdm's did, see umap.py)."""
    class Stop(Exception):
        pass

    def stop_at_3(epoch, progress, live):
        if epoch == 3:
            raise Stop

    with pytest.raises(Stop):
        umap(digits[:300], 2, n_epochs=50, on_step=stop_at_3)
    results = []
    worker = threading.Thread(target=lambda: results.append(
        umap(digits[:300], 2, n_epochs=20, on_step=lambda *_: None)))
    worker.start()
    worker.join(60)
    assert not worker.is_alive() and results[0].coordinates.shape == (300, 2)


def test_precomputed_neighbors_and_limits(digits):
    data = digits[:200]
    distances = np.linalg.norm(data[:, None, :] - data[None, :, :], axis=2)
    np.fill_diagonal(distances, np.inf)
    indices = np.argsort(distances, axis=1)[:, :14]
    result = umap(data, 2, n_neighbors=15, n_epochs=50,
                  neighbors=(indices, np.take_along_axis(distances, indices, axis=1)))
    assert result.coordinates.shape == (200, 2) and result.neighbors == "exact"
    with pytest.raises(ValueError, match="n_neighbors 15 must be smaller than the number of "
                                         r"points \(10\)"):
        Umap(UmapRequest(method="umap", run="r", embedding="e")).check_fit(data[:10].shape[0])
    assert default_epochs(10_000) == 500 and default_epochs(10_001) == 200


def test_started_from_a_layout_its_first_frame_is_that_layout(digits):
    """A training step after the one on screen starts from its layout: the first frame is
    that layout (as the fit scales it), not a PCA preview that would jump away and back."""
    start = umap(digits[:300], 2, n_epochs=20).coordinates
    frames: list[tuple[int, np.ndarray]] = []
    umap(digits[:300] + 0.01, 2, n_epochs=20, init=start,
         on_step=lambda epoch, progress, live: frames.append((epoch, live.copy())))
    epoch, first = frames[0]
    span = np.ptp(start, axis=0)
    expected = 10 * (start - start.min(axis=0)) / span
    assert epoch == 0 and np.abs(first - expected).max() < 0.01
