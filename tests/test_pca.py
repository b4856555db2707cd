"""PCA over all points: equal to scikit-learn, spherize as TensorBoard, NaN rows, torch."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from projector_core.kernels import pca as pca_module
from projector_core.kernels.backend import get_backend
from projector_core.kernels.pca import pca


@pytest.fixture(scope="module")
def digits() -> np.ndarray:
    return load_digits().data


def spherized(x: np.ndarray) -> np.ndarray:
    centred = x - x.mean(axis=0)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    return centred / np.where(norms > 0, norms, 1)


def test_ratios_and_coordinates_equal_sklearn(digits):
    reference = PCA(n_components=10).fit(digits)
    result = pca(digits.astype(np.float32))
    np.testing.assert_allclose(
        result.explained_variance_ratio, reference.explained_variance_ratio_, atol=1e-4, rtol=0
    )
    assert result.coordinates.dtype == np.float32 and result.coordinates.shape == (1797, 10)
    # Same sign convention as scikit-learn, so the coordinates match too.
    scale = np.abs(reference.transform(digits)).max()
    np.testing.assert_allclose(result.coordinates, reference.transform(digits), atol=1e-5 * scale)
    assert result.excluded_rows == 0


def test_spherize_centres_and_scales_rows_to_unit_length(digits):
    reference = PCA(n_components=10).fit(spherized(digits))
    result = pca(digits.astype(np.float32), spherize=True)
    np.testing.assert_allclose(
        result.explained_variance_ratio, reference.explained_variance_ratio_, atol=1e-4, rtol=0
    )
    np.testing.assert_allclose(result.coordinates, reference.transform(spherized(digits)), atol=1e-5)


def test_non_finite_rows_are_left_out_and_get_nan(digits):
    data = digits.astype(np.float32)
    data[[4, 100]] = np.nan
    data[7, 3] = -np.inf
    keep = np.ones(len(data), bool)
    keep[[4, 7, 100]] = False
    reference = PCA(n_components=10).fit(digits[keep])
    result = pca(data)
    assert result.excluded_rows == 3
    assert np.isnan(result.coordinates[~keep]).all()
    assert np.isfinite(result.coordinates[keep]).all()
    np.testing.assert_allclose(
        result.explained_variance_ratio, reference.explained_variance_ratio_, atol=1e-4, rtol=0
    )


def test_components_limited_by_dimension():
    data = np.random.default_rng(0).normal(size=(200, 3)).astype(np.float32)
    result = pca(data)
    assert result.coordinates.shape == (200, 3)
    assert sum(result.explained_variance_ratio) == pytest.approx(1.0)


def test_randomized_solver_for_wide_data_equals_sklearn(digits, monkeypatch):
    monkeypatch.setattr(pca_module, "_EXACT_MAX_DIM", 16)  # digits (64 dims) counts as wide
    reference = PCA(n_components=10).fit(digits)
    result = pca(digits.astype(np.float32))
    np.testing.assert_allclose(
        result.explained_variance_ratio, reference.explained_variance_ratio_, atol=1e-4, rtol=0
    )
    # The leading components are pinned down tightly; later ones to plotting accuracy.
    leading = reference.transform(digits)[:, :4]
    np.testing.assert_allclose(result.coordinates[:, :4], leading, atol=1e-4 * np.abs(leading).max())


def test_torch_backend_equals_numpy(digits):
    ours = pca(digits.astype(np.float32))
    torched = pca(digits.astype(np.float32), backend=get_backend("torch"))
    np.testing.assert_allclose(torched.explained_variance_ratio, ours.explained_variance_ratio, atol=1e-6)
    np.testing.assert_allclose(torched.coordinates, ours.coordinates, atol=1e-3)


def test_chunked_passes_equal_one_chunk(digits, monkeypatch):
    whole = pca(digits.astype(np.float32))
    monkeypatch.setattr(pca_module, "_CHUNK_BYTES", 64 * 4 * 50)  # 50 rows per chunk
    chunked = pca(digits.astype(np.float32))
    np.testing.assert_allclose(chunked.explained_variance_ratio, whole.explained_variance_ratio, atol=1e-7)
    np.testing.assert_allclose(chunked.coordinates, whole.coordinates, atol=1e-4)


def test_all_rows_non_finite_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one row"):
        pca(np.full((4, 3), np.nan, np.float32))
