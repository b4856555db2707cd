"""The sampled fits' neighbour index: the sample's own neighbours and placed points' ones."""

from __future__ import annotations

import numpy as np
from sklearn.datasets import make_blobs

from projector_core.kernels.knn import ExactIndex
from projector_core.kernels.sample_index import SampleIndex


def _recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / len(b)
                          for a, b in zip(found, exact, strict=True)]))


def test_neighbours_of_new_points_match_an_exact_search():
    data, _ = make_blobs(3000, 20, centers=8, cluster_std=2.0, random_state=0)
    data = data.astype(np.float32)
    index = SampleIndex(data[:2500])
    indices, distances = index.query(data[2500:], 15)
    exact, exact_distances = ExactIndex(data[:2500]).query(data[2500:], 15, "euclidean")
    assert indices.shape == (500, 15) and indices.dtype == np.int64
    assert distances.dtype == np.float32 and (np.diff(distances, axis=1) >= 0).all()
    assert _recall(indices, exact) > 0.9
    # The distances are euclidean (not squared), those of the rows returned.
    true = np.linalg.norm(data[:2500][indices] - data[2500:, None], axis=2)
    np.testing.assert_allclose(distances, true, rtol=1e-3, atol=1e-3)
    # HNSW misses a nearest row now and then (1 point in 500 in some runs: its insertion order
    # follows thread scheduling); where it finds it, the distance is the exact one.
    same = indices[:, 0] == exact[:, 0]
    assert same.mean() >= 0.99
    np.testing.assert_allclose(distances[same, 0], exact_distances[same, 0], rtol=1e-3, atol=1e-3)


def test_a_sample_rows_neighbours_leave_out_the_row_itself():
    data, _ = make_blobs(2000, 10, centers=5, random_state=1)
    index = SampleIndex(data)
    indices, distances = index.self_neighbors(30)
    assert indices.shape == (2000, 30)
    assert not (indices == np.arange(2000)[:, None]).any()
    exact, _ = ExactIndex(data.astype(np.float32)).neighbors_of(np.arange(2000), 30, "euclidean")
    assert _recall(indices, exact) > 0.9
    # More neighbours than there are other rows: every other row, nearest first.
    tiny = SampleIndex(data[:6])
    indices, distances = tiny.self_neighbors(10)
    assert indices.shape == (6, 5)
    assert all(set(row) == set(range(6)) - {i} for i, row in enumerate(indices))
    assert (np.diff(distances, axis=1) >= 0).all()


def test_one_new_point_is_placed_like_a_batch_of_them():
    """usearch answers a batch of one query with a single Matches (no counts): placing one
    point once raised AttributeError."""
    data, _ = make_blobs(600, 8, centers=4, random_state=2)
    index = SampleIndex(data[:500])
    one_indices, one_distances = index.query(data[500:501], 10)
    indices, distances = index.query(data[500:502], 10)
    assert one_indices.shape == (1, 10)
    np.testing.assert_array_equal(one_indices[0], indices[0])
    np.testing.assert_allclose(one_distances[0], distances[0], rtol=1e-5)


def test_the_index_pickles_with_its_graph_so_workers_can_share_it():
    import pickle

    data, _ = make_blobs(1500, 12, centers=4, random_state=2)
    data = data.astype(np.float32)
    index = SampleIndex(data[:1000])
    copy = pickle.loads(pickle.dumps(index))
    assert copy.n_samples == 1000
    np.testing.assert_array_equal(copy.sample, index.sample)
    for ours, theirs in zip(index.query(data[1000:], 10), copy.query(data[1000:], 10), strict=True):
        np.testing.assert_array_equal(ours, theirs)
