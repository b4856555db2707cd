"""The quality kernel above the exact budget: a value for every point, from approximate
neighbours whose error the answer states truthfully; progress, phases and cancel.

A tiny ``exact_budget`` sends a few thousand points down the path a million take, so the
answer can be checked against scikit-learn's exact neighbours and trustworthiness.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.manifold import trustworthiness
from sklearn.neighbors import NearestNeighbors

from projector_core.jobs import phases
from projector_core.kernels.quality import projection_quality

K = 10


@pytest.fixture(scope="module")
def picture() -> tuple[np.ndarray, np.ndarray]:
    """4,000 points in 12 clusters of a 24-dim space, and their 2-D PCA."""
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(12, 24)) * 4
    data = (centres[rng.integers(0, 12, 4000)] + rng.normal(size=(4000, 24))).astype(np.float32)
    return data, PCA(2, random_state=0).fit_transform(data)


def _exact_values(data: np.ndarray, coords: np.ndarray, metric: str) -> np.ndarray:
    near_x = NearestNeighbors(n_neighbors=K, algorithm="brute", metric=metric).fit(
        data.astype(np.float64)).kneighbors(return_distance=False)
    near_y = NearestNeighbors(n_neighbors=K).fit(coords).kneighbors(return_distance=False)
    return np.array([len(set(a) & set(b)) / K for a, b in zip(near_x, near_y, strict=True)])


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_above_the_budget_every_point_has_a_value_and_the_stated_error_is_true(picture, metric):
    data, coords = picture
    found = projection_quality(data, coords, K, metric, exact_budget=1000, sample_size=400)
    exact = _exact_values(data, coords, metric)
    assert found.neighbors == "approximate" and found.sample_size == 400
    assert np.isfinite(found.per_point).all()
    wrong = np.abs(found.per_point - exact)
    # Sampled rows hold their exact values; the rest are off by about the stated error.
    assert (wrong == 0).sum() >= 400
    assert found.per_point_error is not None and found.recall is not None
    assert wrong.mean() <= found.per_point_error + 0.01
    assert 0.9 <= found.recall <= 1.0
    assert found.mean == pytest.approx(found.per_point.mean(), abs=1e-12)
    # Trustworthiness and continuity from the sample's exact ranks: sklearn's, to sampling error.
    x = data.astype(np.float64)
    assert found.trustworthiness == pytest.approx(
        trustworthiness(x, coords, n_neighbors=K, metric=metric), abs=0.01)
    if metric == "euclidean":
        assert found.continuity == pytest.approx(trustworthiness(coords, x, n_neighbors=K),
                                                 abs=0.01)


def test_within_the_budget_the_answer_is_exact_and_says_so(picture):
    data, coords = picture
    found = projection_quality(data, coords, K, "euclidean")
    assert (found.neighbors, found.recall, found.per_point_error, found.sample_size) == (
        "exact", None, None, None)
    np.testing.assert_array_equal(found.per_point, _exact_values(data, coords, "euclidean"))


def test_rows_without_finite_values_are_left_out_everywhere(picture):
    data, coords = picture
    data = data.copy()
    coords = coords.copy()
    data[3, 0] = np.nan
    coords[7, 1] = np.inf
    found = projection_quality(data, coords, K, "euclidean", exact_budget=1000, sample_size=300)
    assert found.excluded_rows == 2
    assert np.flatnonzero(np.isnan(found.per_point)).tolist() == [3, 7]


class _Phases:
    def __init__(self) -> None:
        self.names: list[str] = []

    def set_phase(self, name: str, fraction: float | None) -> None:
        if not self.names or self.names[-1] != name:
            self.names.append(name)


def test_progress_rises_to_one_through_named_phases(picture):
    data, coords = picture
    seen: list[float] = []
    sink = _Phases()
    with phases.phases_of(sink):
        projection_quality(data, coords, K, "euclidean", exact_budget=1000, sample_size=300,
                           progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0)
    assert sink.names == ["neighbours in the picture", "neighbours in the data",
                          "trustworthiness", "continuity"]


class Stop(Exception):
    pass


@pytest.mark.parametrize("phase", ["neighbours in the data", "trustworthiness"])
def test_a_raising_progress_stops_the_work_at_that_checkpoint(picture, phase):
    """A cancelled job's ``ctx.step`` raises: the kernel lets it through and does no more."""
    data, coords = picture
    sink = _Phases()
    calls_after: list[float] = []

    def progress(fraction: float) -> None:
        if calls_after or sink.names[-1:] == [phase]:
            calls_after.append(fraction)
            raise Stop

    with phases.phases_of(sink), pytest.raises(Stop):
        projection_quality(data, coords, K, "euclidean", exact_budget=1000, sample_size=300,
                           progress=progress)
    assert len(calls_after) == 1 and sink.names[-1] == phase
