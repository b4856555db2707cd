"""The request a fresh view of an embedding makes: the parameter table's defaults for its data.

The page reads the same table (``GET /api/projections/methods``; ``projecting.js``
``requestFor``), so the default view prepared ahead (``default_view.py``), an export and a
rendered picture ask what the page asks, and share its job and its cached result.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from projector_core.data.model import Embedding
from projector_core.projection.methods import parameter_table
from projector_core.projection.params import ProjectionRequest

WITH_DEFAULTS = ("pca", "tsne", "umap")  # methods a view opens with no parameter given

_REQUEST: TypeAdapter[ProjectionRequest] = TypeAdapter(ProjectionRequest)


def default_request(embedding: Embedding, method: str) -> dict[str, Any]:
    """``method``'s dims and params as the page asks them for ``embedding``: the table's
    defaults for its data, each within its bounds. ValueError for a method with none."""
    if method not in WITH_DEFAULTS:
        raise ValueError(f"unknown projection {method!r}: choose from {', '.join(WITH_DEFAULTS)}")
    params = parameter_table(embedding.shape or (0, 0))["methods"][method]["params"]

    def default(name: str) -> Any:
        param = params[name]
        value = param["default"]
        for bound, pick in (("maximum", min), ("minimum", max)):
            if param[bound] is not None and type(value) in (int, float):
                value = pick(value, param[bound])
        return value

    if method == "pca":
        return {"dims": 3, "params": {"spherize": default("spherize")}}
    if method == "tsne":
        return {"dims": 2, "params": {"perplexity": default("perplexity"),
                                      "learning_rate": default("learning_rate"),
                                      "n_iter": default("n_iter")}}
    return {"dims": 2, "params": {"n_neighbors": default("n_neighbors"),
                                  "min_dist": default("min_dist")}}


def projection_request(embedding: Embedding, method: str,
                       asked: dict[str, Any] | None = None) -> ProjectionRequest:
    """``method``'s validated request for ``embedding``: ``asked`` (its dims and params), else
    :func:`default_request`'s."""
    return _REQUEST.validate_python({"run": embedding.run, "embedding": embedding.name,
                                     "method": method,
                                     **(asked or default_request(embedding, method))})
