"""A sampled UMAP keeps its quality on structured data, not only on blobs."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.manifold import trustworthiness

from projector_core.kernels.sampling import sampled_umap


@pytest.fixture(scope="module")
def tree() -> np.ndarray:
    """6,000 noisy points along a tree of 60 random walks in 50-D, each branching off a point
    of an earlier one: continuous, nested and branching as word embeddings are, not blobs."""
    rng = np.random.default_rng(0)
    branches = [np.cumsum(rng.normal(size=(100, 50)), axis=0)]
    for _ in range(59):
        fork = branches[rng.integers(len(branches))][rng.integers(100)]
        branches.append(fork + np.cumsum(rng.normal(size=(100, 50)), axis=0))
    points = np.concatenate(branches)
    picked = points[rng.integers(points.shape[0], size=6000)]
    return (picked + rng.normal(scale=3.0, size=picked.shape)).astype(np.float32)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_sampled_umap_of_a_tree_is_as_trustworthy_as_a_subset_fit(tree):
    import umap as umap_learn

    result = sampled_umap(tree, 2400, 2, 15, 0.1, None, 0)  # default epochs, 3,600 placed
    assert np.isfinite(result.coordinates).all()
    # The measure: trustworthiness (k = 10) on a random subset, against umap-learn
    # fitted on that subset alone, in the same run.
    subset = np.random.default_rng(1).choice(tree.shape[0], 1500, replace=False)
    reference = umap_learn.UMAP(random_state=0).fit_transform(tree[subset])
    ours = trustworthiness(tree[subset], result.coordinates[subset], n_neighbors=10)
    theirs = trustworthiness(tree[subset], reference, n_neighbors=10)
    assert theirs - ours <= 0.02, (ours, theirs)
