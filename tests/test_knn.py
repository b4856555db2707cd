"""Exact and approximate kNN: equal to scikit-learn's brute force, edge cases, torch backend."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.neighbors import NearestNeighbors

from projector_core.distributed.dispatch import neighbor_index
from projector_core.kernels import knn as knn_module
from projector_core.kernels.ann import ApproximateIndex, approximate_indexes
from projector_core.kernels.backend import DeviceUnavailableError, get_backend
from projector_core.kernels.knn import ExactIndex, exact_index, knn

METRICS = ("cosine", "euclidean")


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return load_digits().data  # float64 integers 0..16, so float32 holds them exactly


def assert_same_neighbors(ours_i, ours_d, ref_i, ref_d) -> None:
    """Distances equal to 1e-5; indices equal wherever the distance is not tied."""
    np.testing.assert_allclose(ours_d, ref_d, rtol=1e-5, atol=1e-5)
    for row in range(ref_i.shape[0]):
        for col in range(ref_i.shape[1]):
            tied = np.isclose(ref_d[row], ref_d[row, col], rtol=1e-9, atol=1e-9).sum() > 1
            last_group = np.isclose(ref_d[row, col], ref_d[row, -1], rtol=1e-9, atol=1e-9)
            if not tied and not last_group:
                assert ours_i[row, col] == ref_i[row, col], (row, col)
        # A tie across the k boundary may pick either member; all picked must be at that distance.
        assert len(set(ours_i[row])) == ours_i.shape[1]


@pytest.mark.parametrize("metric", METRICS)
def test_neighbors_of_every_point_equal_sklearn_brute_force(digits, metric):
    ref_d, ref_i = NearestNeighbors(n_neighbors=10, algorithm="brute", metric=metric).fit(digits).kneighbors()
    index = ExactIndex(digits.astype(np.float32))
    ours_i, ours_d = index.neighbors_of(np.arange(len(digits)), 10, metric)
    assert ours_i.dtype == np.int64 and ours_d.dtype == np.float32
    assert ours_i.shape == (len(digits), 10)
    assert_same_neighbors(ours_i, ours_d, ref_i, ref_d)
    assert not (ours_i == np.arange(len(digits))[:, None]).any()  # the point itself excluded


@pytest.mark.parametrize("metric", METRICS)
def test_vector_queries_equal_sklearn(digits, metric):
    rng = np.random.default_rng(1)
    queries = rng.uniform(0, 16, size=(25, digits.shape[1]))
    ref_d, ref_i = (
        NearestNeighbors(n_neighbors=30, algorithm="brute", metric=metric).fit(digits).kneighbors(queries)
    )
    ours_i, ours_d = knn(digits.astype(np.float32), queries, 30, metric)
    assert_same_neighbors(ours_i, ours_d, ref_i, ref_d)
    assert (np.diff(ours_d, axis=1) >= 0).all()


@pytest.mark.parametrize("metric", METRICS)
def test_chunked_scan_equals_one_pass(digits, metric, monkeypatch):
    data = digits.astype(np.float32)
    whole = ExactIndex(data).neighbors_of(np.arange(300), 12, metric)
    monkeypatch.setattr(knn_module, "_SCORE_BYTES", 4 * 97 * 64)  # ~97 rows per chunk
    monkeypatch.setattr(knn_module, "_QUERY_BATCH", 64)
    monkeypatch.setattr(knn_module, "_REFINE_BYTES", 8 * 64 * 5)  # 5 candidates per block
    chunked = ExactIndex(data).neighbors_of(np.arange(300), 12, metric)
    np.testing.assert_array_equal(chunked[0], whole[0])
    np.testing.assert_array_equal(chunked[1], whole[1])


@pytest.mark.parametrize("metric", METRICS)
def test_torch_backend_equals_numpy(digits, metric):
    data = digits.astype(np.float32)
    rows = np.arange(0, len(data), 7)
    ours = ExactIndex(data).neighbors_of(rows, 15, metric)
    torched = ExactIndex(data, get_backend("torch")).neighbors_of(rows, 15, metric)
    np.testing.assert_allclose(torched[1], ours[1], rtol=1e-6, atol=1e-6)
    ties = np.isclose(ours[1][:, :, None], ours[1][:, None, :]).sum(axis=2) > 1
    assert (torched[0] == ours[0])[~ties].all()


@pytest.mark.parametrize("metric", METRICS)
def test_an_index_moved_to_torch_shares_the_host_memory_and_answers_alike(digits, metric):
    pytest.importorskip("torch")
    data = np.ascontiguousarray(digits, np.float32)
    index = ExactIndex(data)
    torched = index.on(get_backend("torch"))
    assert torched.vectors.data_ptr() == index.vectors.ctypes.data  # no copy of the data
    assert index.on(index.backend) is index and torched.backend.name == "torch"
    rows = np.arange(0, len(data), 11)
    ours, theirs = index.neighbors_of(rows, 10, metric), torched.neighbors_of(rows, 10, metric)
    np.testing.assert_allclose(theirs[1], ours[1], rtol=1e-6, atol=1e-6)
    ties = np.isclose(ours[1][:, :, None], ours[1][:, None, :]).sum(axis=2) > 1
    assert (theirs[0] == ours[0])[~ties].all()


def test_worker_threads_run_torch_on_one_core_and_leave_the_setting_as_it_was():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    with get_backend("torch").worker_pool(2, "test") as pool:
        inside = list(pool.map(lambda _: torch.get_num_threads(), range(4)))
    assert inside == [1, 1, 1, 1] and torch.get_num_threads() == before


def test_zero_vectors_are_at_cosine_distance_one():
    data = np.array([[0, 0], [1, 0], [0, 2], [0, 0], [-3, 0]], np.float32)
    idx, dist = knn(data, np.array([1.0, 1.0]), 5, "cosine")
    assert dict(zip(idx[0].tolist(), dist[0].tolist(), strict=True))[0] == pytest.approx(1.0)
    assert dict(zip(idx[0].tolist(), dist[0].tolist(), strict=True))[3] == pytest.approx(1.0)
    # A zero query is orthogonal to everything: every distance is 1, order by index.
    idx, dist = knn(data, np.zeros(2), 5, "cosine")
    np.testing.assert_allclose(dist[0], 1.0)
    assert idx[0].tolist() == [0, 1, 2, 3, 4]
    # The neighbours of a zero row: all at 1.
    idx, dist = ExactIndex(data).neighbors_of([0], 10, "cosine")
    assert idx[0].tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(dist[0], 1.0)
    # Opposite directions are at distance 2, never more.
    idx, dist = ExactIndex(data).neighbors_of([1], 4, "cosine")
    assert idx[0, -1] == 4 and dist[0, -1] == pytest.approx(2.0)


def test_k_at_least_n_is_clamped():
    data = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    idx, dist = ExactIndex(data).neighbors_of([2], 100, "euclidean")
    assert idx.shape == (1, 5) and 2 not in idx[0]
    assert sorted(idx[0].tolist()) == [0, 1, 3, 4, 5]
    idx, _ = knn(data, data[2], 100, "euclidean")
    assert idx.shape == (1, 6) and idx[0, 0] == 2
    idx, dist = ExactIndex(data[:1]).neighbors_of([0], 5, "cosine")
    assert idx.shape == (1, 0) and dist.shape == (1, 0)


@pytest.mark.parametrize("metric", METRICS)
def test_non_finite_rows_are_never_neighbors(metric):
    data = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    data[[3, 17]] = np.nan
    data[20, 1] = np.inf
    index = ExactIndex(data)
    assert index.n_valid == 47
    idx, dist = index.neighbors_of(np.arange(10)[np.arange(10) != 3], 100, metric)
    assert idx.shape == (9, 46)
    assert not np.isin(idx, [3, 17, 20]).any()
    assert np.isfinite(dist).all()
    with pytest.raises(ValueError, match="row 3 holds NaN"):
        index.neighbors_of([3], 5, metric)
    with pytest.raises(ValueError, match="NaN or Inf"):
        index.query(np.array([0, np.nan, 0, 0]), 5, metric)


def test_bad_arguments_are_clear_errors():
    index = ExactIndex(np.eye(4, dtype=np.float32))
    with pytest.raises(ValueError, match="unknown metric"):
        index.query(np.ones(4), 2, "manhattan")
    with pytest.raises(ValueError, match="k must be positive"):
        index.query(np.ones(4), 0)
    with pytest.raises(ValueError, match="query has 3 values; the embedding has 4"):
        index.query(np.ones(3), 2)
    with pytest.raises(ValueError, match="out of range"):
        index.neighbors_of([4], 2)


def test_an_unknown_device_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match="unknown device"):
        get_backend("tpu")


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(_has_cuda(), reason="this host has a CUDA GPU")
def test_cuda_on_a_host_without_a_gpu_is_a_clear_error():
    with pytest.raises(DeviceUnavailableError, match="not available"):
        get_backend("cuda")


@pytest.mark.may_skip_on_ci(reason="CI runners have no CUDA GPU")
@pytest.mark.skipif(not _has_cuda(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("metric", METRICS)
def test_on_a_gpu_host_cuda_answers_as_numpy_does(digits, metric):
    backend = get_backend("cuda")
    assert backend.name in ("torch", "cupy") and "cuda" in str(backend.device)
    data = np.ascontiguousarray(digits, np.float32)
    rows = np.arange(0, len(data), 7)
    ours = ExactIndex(data).neighbors_of(rows, 15, metric)
    on_gpu = ExactIndex(data, backend).neighbors_of(rows, 15, metric)
    np.testing.assert_allclose(on_gpu[1], ours[1], rtol=1e-5, atol=1e-5)
    ties = np.isclose(ours[1][:, :, None], ours[1][:, None, :], atol=1e-5).sum(axis=2) > 1
    assert (on_gpu[0] == ours[0])[~ties].all()


def test_exact_index_is_cached_per_fingerprint():
    data = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    loads = []

    def load() -> np.ndarray:
        loads.append(1)
        return data

    first = exact_index("fp-cache-test", load)
    assert exact_index("fp-cache-test", load) is first
    assert len(loads) == 1


def clustered(n: int, d: int, seed: int) -> np.ndarray:
    """Clusters on a low-dimensional manifold: the neighbour structure of real embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, 8)) * 3
    low = centres[rng.integers(0, 40, n)] + rng.normal(size=(n, 8))
    return (low @ rng.normal(size=(8, d)) + 0.05 * rng.normal(size=(n, d))).astype(np.float32)


@pytest.mark.parametrize("metric", METRICS)
def test_approximate_index_recall_and_exact_distances(metric):
    data = clustered(4000, 24, seed=2)
    data[7] = np.nan
    data[8] = 0.0
    exact = ExactIndex(data)
    approx = ApproximateIndex(exact, metric)
    rows = np.arange(0, 4000, 10)[1:]
    true_i, _ = exact.neighbors_of(rows, 10, metric)
    found_i, found_d = approx.neighbors_of(rows, 10, metric)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found_i, true_i, strict=True)])
    assert recall >= 0.95
    assert not (found_i == rows[:, None]).any() and 7 not in found_i
    # The distances are exact for the rows returned.
    check = knn_module.exact_distances(
        np, data[found_i].astype(np.float64), data[rows][:, None, :].astype(np.float64), metric
    )
    np.testing.assert_allclose(found_d, check, rtol=1e-6, atol=1e-6)
    assert (np.diff(found_d, axis=1) >= 0).all()
    # One point's neighbours (what GET /api/neighbors asks): the same answer as in a batch.
    for row in rows[:5]:
        one_i, one_d = approx.neighbors_of([row], 10, metric)
        position = int(np.flatnonzero(rows == row)[0])
        assert one_i.shape == (1, 10)
        np.testing.assert_array_equal(one_i[0], found_i[position])
        np.testing.assert_allclose(one_d[0], found_d[position], rtol=1e-6)


def test_large_embeddings_switch_to_the_approximate_index_once_built():
    data = clustered(3000, 16, seed=3)
    first = neighbor_index("fp-ann-switch", lambda: data, "cosine", exact_budget=1000)
    assert isinstance(first, ExactIndex)  # answered exactly while the index builds
    approximate_indexes.wait("fp-ann-switch", "cosine", timeout=60)
    later = neighbor_index("fp-ann-switch", lambda: data, "cosine", exact_budget=1000)
    assert isinstance(later, ApproximateIndex)
    small = neighbor_index("fp-ann-small", lambda: data, "cosine")
    assert isinstance(small, ExactIndex)
