"""The method registry's data limits: what check() refuses is exactly past what the API
declares, and the front end gets the same numbers in /api/runs and /api/projections/methods."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from projector_core.data.memory import memory_embedding
from projector_core.projection.methods import METHODS, data_limits, method_for
from projector_core.projection.params import (
    PrecomputedRequest,
    TsneParams,
    TsneRequest,
    UmapParams,
    UmapRequest,
)

NAMES = {"run": "r", "embedding": "e"}


def _embedding(n: int, dim: int = 5):
    return memory_embedding("r", "e", np.random.default_rng(0).normal(size=(n, dim)))


def test_every_method_of_the_api_has_a_class():
    assert set(METHODS) == {"pca", "tsne", "umap", "custom", "precomputed"}
    assert all(method.name == name for name, method in METHODS.items())


@pytest.mark.parametrize("n", [40, 301])
def test_the_declared_maximum_passes_and_just_above_it_is_refused(n):
    embedding = _embedding(n)
    limits = data_limits(n, 5)["projections"]
    top = limits["tsne"]["perplexity"]["maximum"]
    assert top == pytest.approx((n - 1) / 3)
    method_for(TsneRequest(method="tsne", **NAMES, params=TsneParams(perplexity=top))).check(
        embedding)
    with pytest.raises(ValueError, match=f"perplexity .* is too large for {n} points"):
        method_for(TsneRequest(method="tsne", **NAMES,
                               params=TsneParams(perplexity=top + 0.01))).check(embedding)
    most = limits["umap"]["n_neighbors"]["maximum"]
    assert most == min(n - 1, 200)  # the parameter model's own bound narrows the data's
    method_for(UmapRequest(method="umap", **NAMES, params=UmapParams(n_neighbors=most))).check(
        embedding)
    if most == n - 1:
        with pytest.raises(ValueError, match=f"n_neighbors {n} must be smaller than the "
                                             f"number of points \\({n}\\)"):
            method_for(UmapRequest(method="umap", **NAMES,
                                   params=UmapParams(n_neighbors=n))).check(embedding)
    assert data_limits(n, 5)["neighbors"]["k"] == {"minimum": 1, "maximum": n - 1}


def test_a_sampled_fit_is_limited_by_the_sample():
    limits = data_limits(200_001, 5)["projections"]  # a sample of 100,000 is fitted
    assert limits["tsne"]["perplexity"] == {"minimum": 2, "maximum": 1000}  # the model's bound
    with pytest.raises(ValueError, match="too small"):
        method_for(TsneRequest(method="tsne", **NAMES, params=TsneParams(mode="sample"))).check(
            _embedding(150))


def test_too_few_points_and_too_many_dimensions_are_refused():
    with pytest.raises(ValueError, match="t-SNE needs at least 4 points; this embedding has 3"):
        method_for(TsneRequest(method="tsne", **NAMES)).check(_embedding(3))
    with pytest.raises(ValueError, match="the data has 5 dimensions"):
        method_for(PrecomputedRequest(method="precomputed", **NAMES)).check(_embedding(10))
    method_for(PrecomputedRequest(method="precomputed", **NAMES)).check(_embedding(10, 3))


def test_the_api_sends_the_limits_with_each_embedding(serve, sample_logdir):
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as client:
        runs = client.get("/api/runs").json()
        digits = next(e for r in runs if r["name"] == "digits" for e in r["embeddings"]
                      if e["name"] == "digits")
        answer = client.get("/api/projections/methods",
                            params={"run": "digits", "embedding": "digits"})
        assert answer.status_code == 200
        table = answer.json()
        limits = {"projections": table["projections"], "neighbors": table["neighbors"]}
        assert limits == digits["limits"] == data_limits(1797, 64)
        assert digits["limits"]["projections"]["tsne"]["perplexity"]["maximum"] == pytest.approx(
            1796 / 3)
        assert digits["limits"]["neighbors"]["k"]["maximum"] == 1796
        assert client.get("/api/projections/methods",
                          params={"run": "digits", "embedding": "nope"}).status_code == 404
