"""The Dask path's sampled UMAP is the single-machine one: our sample index, not NN-descent."""

from __future__ import annotations

import pickle

import numpy as np
from sklearn.datasets import make_blobs

from projector_core.distributed.sample_fit import (
    PLACE_ROWS,
    UmapFit,
    fit_sample,
    piece_rows,
    sample_coordinates,
)
from projector_core.kernels.sampling import UmapMap


def test_a_worker_fits_the_same_map_as_one_machine_and_ships_it_whole():
    data, _ = make_blobs(1400, 16, centers=5, random_state=4)
    data = data.astype(np.float32)
    sample, rest = data[:1000], data[1000:]
    fit = UmapFit(dims=2, n_neighbors=12, min_dist=0.1, n_epochs=40, seed=3)
    # A worker fits from the shards' parts of the sample, in order.
    fitted = fit_sample([sample[:400], sample[400:]], fit)
    assert isinstance(fitted.model, UmapMap)  # kernels.sampling's map, as one machine fits it
    assert fitted.model.index.n_samples == 1000 and fitted.model.n_neighbors == 12
    layout = sample_coordinates(fitted)
    assert layout.shape == (1000, 2) and layout.dtype == np.float32
    # Dask pickles the map to every worker placing shards: the index travels with it and
    # answers as the one it was built as.
    shipped = pickle.loads(pickle.dumps(fitted))
    placed = shipped.model.place(rest)
    np.testing.assert_array_equal(placed, fitted.model.place(rest))
    assert placed.dtype == np.float32 and np.isfinite(placed).all()
    # Each placed point lands among the sample points of its own blob.
    _, blob = make_blobs(1400, 16, centers=5, random_state=4)
    centres = np.stack([layout[blob[:1000] == b].mean(axis=0) for b in range(5)])
    nearest = np.argmin(np.linalg.norm(placed[:, None] - centres[None], axis=2), axis=1)
    assert (nearest == blob[1000:]).mean() > 0.95


def test_a_shard_is_placed_in_equal_pieces_that_never_share_a_chunk():
    assert piece_rows(1000) == 1000  # a small shard is one task
    assert piece_rows(2**21) == PLACE_ROWS == 2**17  # 10M x 8's shards: 16 tasks each
    assert piece_rows(3 * PLACE_ROWS - 3) == PLACE_ROWS - 1
    assert piece_rows(1_000_003) == 1_000_003  # prime: no cut near, the whole shard
