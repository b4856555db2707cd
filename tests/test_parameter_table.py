"""The parameter table (GET /api/projections/methods): every parameter of every method with
its type, default, bounds and description, each method's capabilities, and for an embedding
its data limits and defaults; what it publishes is exactly what a request may ask."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from projector import Client
from projector_core.data.memory import memory_embedding
from projector_core.projection.methods import METHODS, data_limits, method_for, parameter_table
from projector_core.projection.params import ProjectionRequest

N, DIM = 40, 5
NAMES = {"run": "r", "embedding": "e"}
REQUEST = TypeAdapter(ProjectionRequest)
BASE = {"custom": {"column": "label"}}  # a custom request needs its column


def _embedding():
    return memory_embedding("r", "e", np.random.default_rng(0).normal(size=(N, DIM)),
                            metadata={"label": [str(i % 3) for i in range(N)]})


def _check(method: str, name: str, value) -> None:
    """Validates a request with one parameter set, then the data's check: raises if refused."""
    request = REQUEST.validate_python({**NAMES, "method": method,
                                       "params": {**BASE.get(method, {}), name: value}})
    method_for(request).check(_embedding())


def _numeric(table):
    for method, entry in table["methods"].items():
        for name, param in entry["params"].items():
            if param["type"] in ("number", "integer"):
                yield method, name, param


def _past(param, bound: str) -> float:
    """The first value beyond a published bound: one step for an integer, a hair for a number."""
    value, sign = param[bound], (1 if bound == "maximum" else -1)
    if param["type"] == "integer":
        return value + sign
    return value + sign * max(1e-6, abs(value) * 1e-6)


def test_every_method_publishes_every_parameter_with_capabilities():
    table = parameter_table()
    assert table["data"] is None and set(table["methods"]) == set(METHODS)
    for name, entry in table["methods"].items():
        assert set(entry["params"]) == set(METHODS[name].params_model.model_fields)
        for param in entry["params"].values():
            assert param["description"], f"{name}: a parameter without a description"
            assert param["type"] in ("number", "integer", "boolean", "string", "array")
    methods = table["methods"]
    assert [m for m in methods if methods[m]["quick"]] == ["pca", "custom", "precomputed"]
    assert [m for m in methods if methods[m]["starts_from_layout"]] == ["tsne", "umap"]
    assert [m for m in methods if methods[m]["streams_frames"]] == ["tsne", "umap"]
    assert not methods["custom"]["supports_3d"] and methods["tsne"]["dims"] == [2, 3]
    n_iter = {key: value for key, value in methods["tsne"]["params"]["n_iter"].items()
              if value is not None and key != "description"}
    assert n_iter == {"type": "integer", "default": 750, "minimum": 1, "maximum": 100_000,
                      "exclusive_minimum": False, "nullable": False, "required": False}
    rate = methods["tsne"]["params"]["learning_rate"]
    assert (rate["default"], rate["choices"], rate["exclusive_minimum"]) == ("auto", ["auto"], True)
    assert methods["tsne"]["params"]["mode"]["choices"] == ["auto", "full", "sample"]
    assert methods["custom"]["params"]["column"]["required"]
    assert methods["tsne"]["params"]["perplexity"]["default"] is None  # the data decides


def test_an_embeddings_table_has_its_limits_and_defaults():
    table = parameter_table((N, DIM))
    tsne, umap = table["methods"]["tsne"]["params"], table["methods"]["umap"]["params"]
    assert tsne["perplexity"]["maximum"] == pytest.approx((N - 1) / 3)
    assert tsne["perplexity"]["default"] == pytest.approx((N - 1) / 3)  # 30, lowered to fit
    assert parameter_table((1000, 5))["methods"]["tsne"]["params"]["perplexity"]["default"] == 30
    assert umap["n_neighbors"]["maximum"] == N - 1 and umap["n_epochs"]["default"] == 500
    assert parameter_table((20_000, 5))["methods"]["umap"]["params"]["n_epochs"]["default"] == 200
    assert table["methods"]["tsne"]["limits"] == {"points": {"minimum": 4, "maximum": None}}
    assert table["methods"]["precomputed"]["limits"] == {"dimensions": {"minimum": None,
                                                                        "maximum": 3}}
    assert table["neighbors"]["k"] == {"minimum": 1, "maximum": N - 1}
    assert table["projections"] == data_limits(N, DIM)["projections"]


@pytest.mark.parametrize("bound", ["maximum", "minimum"])
def test_the_published_bound_is_accepted_and_one_past_it_refused(bound):
    table = parameter_table((N, DIM))
    checked = 0
    for method, name, param in _numeric(table):
        if param[bound] is None or param["choices"]:
            continue
        if not param["exclusive_minimum"] or bound == "maximum":
            _check(method, name, param[bound])
        with pytest.raises((ValidationError, ValueError)):
            _check(method, name, _past(param, bound))
        checked += 1
    assert checked >= 10


def test_the_data_default_is_accepted():
    for method, name, param in _numeric(parameter_table((N, DIM))):
        if param["default"] is not None:
            _check(method, name, param["default"])


def test_the_api_publishes_the_table(serve, sample_logdir):
    url = serve(sample_logdir)
    with httpx.Client(base_url=url, timeout=60) as client:
        plain = client.get("/api/projections/methods")
        assert plain.status_code == 200 and plain.json()["data"] is None
        assert plain.json()["methods"] == parameter_table()["methods"]
        digits = client.get("/api/projections/methods",
                            params={"run": "digits", "embedding": "digits"}).json()
        assert digits["data"] == {"n": 1797, "dim": 64}
        assert digits["methods"]["tsne"]["params"]["perplexity"]["maximum"] == pytest.approx(
            1796 / 3)
        assert digits["methods"]["tsne"]["params"]["perplexity"]["default"] == 30
        n_iter = digits["methods"]["tsne"]["params"]["n_iter"]
        assert type(n_iter["maximum"]) is int and type(digits["neighbors"]["k"]["maximum"]) is int
        assert client.get("/api/projections/methods",
                          params={"run": "digits"}).status_code == 422
        schema = client.get("/openapi.json").json()["components"]["schemas"]
        assert "MethodTableOut" in schema and "ParameterOut" in schema
    python = Client(url)  # the Python client reads the same table
    assert python.methods()["methods"] == plain.json()["methods"]
    assert python.methods("digits", "digits") == digits == python.limits("digits", "digits")


def test_the_page_tests_read_the_current_table():
    """frontend/tests/limits.test.js clamps against this copy of iris's table: it must be the
    table the server publishes (rewrite it with parameter_table((150, 4)) when it changes)."""
    fixture = Path(__file__).parents[1] / "frontend/tests/fixtures/method_table_iris.json"
    assert json.loads(fixture.read_text("utf-8")) == json.loads(json.dumps(
        parameter_table((150, 4))))


def test_the_api_refuses_one_past_the_published_bounds(serve, sample_logdir):
    """Through POST /api/projections: what the iris table publishes is the border of a 422."""
    iris = {"run": "iris", "embedding": "iris"}
    with httpx.Client(base_url=serve(sample_logdir), timeout=60) as client:
        table = client.get("/api/projections/methods", params=iris).json()["methods"]

        def post(method: str, **params):
            return client.post("/api/projections?wait=true",
                               json={**iris, "method": method, "params": params})

        for method, name in [("tsne", "n_iter"), ("tsne", "perplexity"), ("umap", "n_neighbors"),
                             ("umap", "min_dist"), ("pca", "components")]:
            param = table[method]["params"][name]
            answer = post(method, **{name: _past(param, "maximum")})
            assert answer.status_code == 422, (method, name, answer.text)
        most = table["pca"]["params"]["components"]["maximum"]
        assert post("pca", components=most).status_code == 200
