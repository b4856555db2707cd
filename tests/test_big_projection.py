"""t-SNE and UMAP over a sample, then placing the rest: mode choice, quality, streaming, API."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import openTSNE
import pytest
from sklearn.datasets import make_blobs
from sklearn.manifold import trustworthiness
from websockets.sync.client import connect

from projector_core.kernels import sampling
from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sampling import even_order, sample_size, sampled_tsne, sampled_umap
from projector_core.kernels.umap import place, transform_epochs

DIGITS = {"run": "digits", "embedding": "digits"}


@pytest.fixture(scope="module")
def blobs() -> np.ndarray:
    data, _ = make_blobs(4000, 20, centers=12, cluster_std=2.0, random_state=0)
    return data.astype(np.float32)


@pytest.fixture
def client(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as http:
        yield http


def test_mode_selects_a_sample_only_when_asked_or_above_the_threshold():
    assert sample_size(100_000, "auto", 100_000, None) is None
    assert sample_size(100_001, "auto", 100_000, None) == 50_000  # at most half the points
    assert sample_size(1_000_000, "auto", 100_000, None) == 100_000
    assert sample_size(1_000_000, "full", 100_000, None) is None
    assert sample_size(5_000, "sample", 100_000, None) == 2_500
    assert sample_size(5_000, "sample", 100_000, 4_000) == 4_000
    assert sample_size(5_000, "auto", 100_000, 4_000) is None  # below the threshold: full
    with pytest.raises(ValueError, match=r"sample_size 5000 must be smaller than the number of "
                                         r"points \(5000\)"):
        sample_size(5_000, "sample", 100_000, 5_000)
    with pytest.raises(ValueError, match="too small"):
        sample_size(150, "sample", 100_000, None)


def test_even_order_is_a_seeded_permutation():
    order = even_order(10_000, 3)
    assert order.dtype == np.int32 and np.array_equal(np.sort(order), np.arange(10_000))
    assert np.array_equal(order, even_order(10_000, 3))
    assert not np.array_equal(order, even_order(10_000, 4))


def _quality_gap(data: np.ndarray, coordinates: np.ndarray, reference_fit) -> float:
    """Trustworthiness (k=10) on a subset: a full fit of the subset minus ours there."""
    subset = np.random.default_rng(1).choice(data.shape[0], 1000, replace=False)
    ours = trustworthiness(data[subset], coordinates[subset], n_neighbors=10)
    full = trustworthiness(data[subset], reference_fit(data[subset]), n_neighbors=10)
    return full - ours


@pytest.mark.slow
def test_sampled_tsne_streams_the_sample_first_and_is_as_trustworthy(blobs, monkeypatch):
    monkeypatch.setattr(sampling, "PLACE_BATCH", 1000)  # several placement frames
    placed_counts: list[int] = []

    def on_step(iteration, progress, live):
        if live is not None:
            placed_counts.append(int(np.isfinite(live[:, 0]).sum()))

    result = sampled_tsne(blobs, 1000, 2, None, "auto", 300, 12.0, 0, 1, on_step)
    assert result.coordinates.shape == (4000, 2) and np.isfinite(result.coordinates).all()
    assert result.sample_size == 1000 and result.details["neighbors"] == "usearch"
    # The sample is shown (every fitting step) before anything else is placed, then each batch.
    assert placed_counts[0] == 1000 and placed_counts.count(1000) >= 300
    assert placed_counts[-4:] == [1000, 2000, 3000, 4000]
    gap = _quality_gap(blobs, result.coordinates, lambda x: np.asarray(openTSNE.TSNE(
        n_iter=200, early_exaggeration_iter=100, n_jobs=1, random_state=0).fit(x)))
    assert gap <= 0.02, gap


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sampled_umap_streams_the_sample_first_and_is_as_trustworthy(blobs, monkeypatch):
    import umap as umap_learn

    monkeypatch.setattr(sampling, "PLACE_BATCH", 1500)
    placed: list[tuple[int, int]] = []

    def on_step(epoch, progress, live):
        if live is not None:
            placed.append((epoch, int(np.isfinite(live[:, 0]).sum())))

    result = sampled_umap(blobs, 1000, 2, 15, 0.1, 60, 0, on_step)
    assert result.coordinates.shape == (4000, 2) and np.isfinite(result.coordinates).all()
    assert result.details == {"n_epochs": 60, "neighbors": "usearch"}
    assert placed[0] == (0, 1000)  # the sample's principal components, before the graph
    assert placed[-3:] == [(60, 1000), (60, 2500), (60, 4000)]
    gap = _quality_gap(blobs, result.coordinates, lambda x: umap_learn.UMAP(
        n_epochs=60, random_state=0).fit_transform(x))
    assert gap <= 0.02, gap


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_place_is_umap_learns_transform(blobs):
    """Our placement steps are umap-learn's transform, to the bit given its distances (the
    layout optimisation is chaotic: distances differing by float rounding move a few points).
    Guards the private functions used, tested with umap-learn 0.5.12."""
    import umap as umap_learn
    from sklearn.metrics import pairwise_distances

    train, new = blobs[:1500], blobs[1500:1800]
    fitted = umap_learn.UMAP(n_neighbors=10, n_epochs=60, random_state=1, transform_seed=7).fit(
        train)
    expected = fitted.transform(new)
    # umap-learn's own exact neighbours of small data, as its transform finds them.
    distances = pairwise_distances(new, train, metric=fitted._input_distance_func)
    indices = np.argsort(distances, axis=1)[:, :10]
    ours = place(fitted.embedding_, indices, np.take_along_axis(distances, indices, axis=1),
                 10, 0.1, 60, seed=7)
    np.testing.assert_array_equal(ours, expected)
    assert np.array_equal(ExactIndex(train).query(new, 10, "euclidean")[0], indices)
    assert transform_epochs(300, 60) == 20 and transform_epochs(20_000, None) == 30


def _follow(base_url: str, job: str) -> tuple[list[np.ndarray], dict]:
    """The job's streamed frames and its final status message."""
    frames: list[np.ndarray] = []
    header: dict = {}
    with connect(base_url.replace("http", "ws", 1) + f"/api/jobs/{job}/stream",
                 max_size=None) as socket:
        for message in socket:
            if isinstance(message, str):
                header = json.loads(message)
            else:
                frames.append(np.frombuffer(message, "<f4").reshape(header["shape"]).copy())
    return frames, header


@pytest.mark.parametrize("method, params", [
    ("tsne", {"n_iter": 250, "sample_threshold": 1000}),
    ("umap", {"n_epochs": 60, "sample_threshold": 1000}),
])
def test_api_samples_above_the_threshold_and_says_so(client, method, params):
    response = client.post("/api/projections", json={**DIGITS, "method": method,
                                                      "params": params})
    assert response.status_code == 202, response.text
    frames, status = _follow(str(client.base_url), response.json()["job"])
    assert status["status"] == "done", status
    info = status["info"]
    assert info["mode"] == "sample" and info["sample_size"] == 898  # min(1000, 1797 // 2)
    assert info["n_points"] == 1797 and info["invalid_rows"] == 0
    placed = [int(np.isfinite(frame[:, 0]).sum()) for frame in frames]
    assert placed[0] == 898 and placed[-1] == 1797  # the sample streams before the rest
    assert np.isfinite(frames[-1]).all()


def test_api_full_mode_and_small_data_fit_everything(client):
    response = client.post("/api/projections", json={**DIGITS, "method": "tsne", "params": {
        "n_iter": 30, "mode": "full", "sample_threshold": 1000}})
    _, status = _follow(str(client.base_url), response.json()["job"])
    assert status["info"]["mode"] == "full" and status["info"]["sample_size"] == 1797


@pytest.mark.parametrize("params, message", [
    ({"mode": "some"}, "mode"),
    ({"sample_threshold": 10}, "sample_threshold"),
    ({"sample_size": 5}, "sample_size"),
    ({"mode": "sample", "sample_size": 1797}, "sample_size 1797 must be smaller"),
    ({"mode": "sample", "sample_size": 1000, "perplexity": 400}, "perplexity 400 is too large"),
])
def test_api_rejects_bad_sampling_params(client, params, message):
    for method in ("tsne", "umap"):
        if "perplexity" in params and method == "umap":
            continue
        response = client.post("/api/projections", json={**DIGITS, "method": method,
                                                          "params": params})
        assert response.status_code == 422, response.text
        assert message in response.text


@pytest.fixture(scope="module")
def threshold_logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of 4-D blobs: one point over the default threshold of 100,000, and exactly at it."""
    root = tmp_path_factory.mktemp("threshold")
    data, _ = make_blobs(100_001, 4, centers=6, random_state=1)
    for run, rows in (("over", 100_001), ("at", 100_000)):
        np.save(root / f"{run}.npy", data[:rows].astype(np.float32))
    return root


@pytest.mark.slow
@pytest.mark.parametrize("method, params", [("tsne", {"n_iter": 2}), ("umap", {"n_epochs": 2})])
def test_the_default_threshold_samples_100_001_points_but_not_100_000(
        serve, threshold_logdir, method, params):
    """Default mode ("auto"), threshold and sample size; only the iterations are cut short."""
    with httpx.Client(base_url=serve(threshold_logdir), timeout=120) as http:
        over = http.post("/api/projections", json={"run": ".", "embedding": "over",
                                                   "method": method, "params": params})
        assert over.status_code == 202, over.text
        frames, status = _follow(str(http.base_url), over.json()["job"])
        assert status["status"] == "done", status
        info = status["info"]
        assert (info["mode"], info["sample_size"], info["n_points"]) == ("sample", 50_000, 100_001)
        placed = [int(np.isfinite(frame[:, 0]).sum()) for frame in frames]
        assert placed[0] == 50_000 and placed[-1] == 100_001
        # At the threshold itself: everything is fitted; cancelled once that shows.
        at = http.post("/api/projections", json={"run": ".", "embedding": "at",
                                                 "method": method, "params": params}).json()["job"]
        url = str(http.base_url).replace("http", "ws", 1) + f"/api/jobs/{at}/stream"
        with connect(url, max_size=None) as socket:
            header = json.loads(socket.recv(timeout=120))
            while not isinstance(first := socket.recv(timeout=300), bytes):
                header = json.loads(first)
        frame = np.frombuffer(first, "<f4").reshape(header["shape"])
        assert np.isfinite(frame).all() and frame.shape[0] == 100_000
        http.delete(f"/api/jobs/{at}")
