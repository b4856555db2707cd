"""Custom projection: TensorBoard's centroid axes on metadata queries."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from projector_core.kernels.backend import get_backend
from projector_core.kernels.custom import custom_projection


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, list[str]]:
    bunch = load_digits()
    return bunch.data.astype(np.float32), [f"digit {t}" for t in bunch.target]


def test_axes_are_centroid_differences(digits):
    data, labels = digits
    target = np.array([int(v.split()[1]) for v in labels])
    result = custom_projection(data, labels, left="3", right="8", up="0", down="1")
    x = data[target == 8].mean(0) - data[target == 3].mean(0)
    y = data[target == 0].mean(0) - data[target == 1].mean(0)
    expected = (data - data.mean(0)) @ np.stack([x, y], axis=1)
    np.testing.assert_allclose(result.coordinates, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    assert result.matches == {
        "left": (target == 3).sum(),
        "right": (target == 8).sum(),
        "up": (target == 0).sum(),
        "down": (target == 1).sum(),
    }
    # The picture separates what the user asked for.
    assert result.coordinates[target == 8, 0].mean() > result.coordinates[target == 3, 0].mean()
    assert result.coordinates[target == 0, 1].mean() > result.coordinates[target == 1, 1].mean()


def test_regex_queries_and_case(digits):
    data, labels = digits
    result = custom_projection(
        data, labels, left="^DIGIT [0-4]$", right="[5-9]$", up="0", down="1", regex=True
    )
    target = np.array([int(v.split()[1]) for v in labels])
    assert result.matches["left"] == (target <= 4).sum()
    assert result.matches["right"] == (target >= 5).sum()


def test_a_side_matching_nothing_gets_a_seeded_random_axis(digits):
    data, labels = digits
    first = custom_projection(data, labels, left="nothing", right="8", up="", down="1", seed=3)
    assert first.matches["left"] == 0 and first.matches["up"] == 0
    again = custom_projection(data, labels, left="nothing", right="8", up="", down="1", seed=3)
    np.testing.assert_array_equal(first.coordinates, again.coordinates)
    other = custom_projection(data, labels, left="nothing", right="8", up="", down="1", seed=4)
    assert not np.allclose(first.coordinates, other.coordinates)
    assert np.isfinite(first.coordinates).all()


def test_non_finite_rows_get_nan_and_stay_out_of_centroids():
    data = np.array([[1, 0], [3, 0], [np.nan, 5], [0, 2], [0, 4]], np.float32)
    labels = ["a", "a", "a", "b", "b"]
    result = custom_projection(data, labels, left="a", right="b", up="b", down="a")
    assert result.matches == {"left": 2, "right": 2, "up": 2, "down": 2}
    assert np.isnan(result.coordinates[2]).all()
    axis = np.array([0, 3]) - np.array([2, 0])  # centroid(b) - centroid(a), NaN row left out
    mean = data[[0, 1, 3, 4]].mean(0)
    np.testing.assert_allclose(
        result.coordinates[[0, 1, 3, 4], 0], (data[[0, 1, 3, 4]] - mean) @ axis, rtol=1e-6
    )


def test_torch_backend_equals_numpy(digits):
    data, labels = digits
    ours = custom_projection(data, labels, "3", "8", "0", "1")
    torched = custom_projection(data, labels, "3", "8", "0", "1", backend=get_backend("torch"))
    np.testing.assert_allclose(torched.coordinates, ours.coordinates, rtol=1e-5, atol=1e-2)


def test_bad_input_is_a_clear_error(digits):
    data, labels = digits
    with pytest.raises(ValueError, match="1796 values for 1797 points"):
        custom_projection(data, labels[:-1], "3", "8", "0", "1")
    with pytest.raises(ValueError, match="invalid regular expression"):
        custom_projection(data, labels, "(", "8", "0", "1", regex=True)
