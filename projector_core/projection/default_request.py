"""The request a fresh view of an embedding makes: the parameter table's ``default_request``
for its data (each method class declares its dims and parameters: ``view_dims``,
``view_params``).

The page reads the same entry of the same table (``GET /api/projections/methods``;
``projecting.js`` ``requestFor``), so the default view prepared ahead, an export and a
rendered picture ask what the page asks, and share its job and its cached result.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from projector_core.data.model import Embedding
from projector_core.projection.methods import METHODS, parameter_table
from projector_core.projection.params import ProjectionRequest

# Methods a view opens with no parameter given (the others need the user's: custom, precomputed).
WITH_DEFAULTS = tuple(name for name, method in METHODS.items() if method.view_dims is not None)

_REQUEST: TypeAdapter[ProjectionRequest] = TypeAdapter(ProjectionRequest)


def default_request(embedding: Embedding, method: str) -> dict[str, Any]:
    """``method``'s dims and params as the page asks them for ``embedding``: the table's
    defaults for its data, each within its bounds. ValueError for a method with none."""
    if method not in WITH_DEFAULTS:
        raise ValueError(f"unknown projection {method!r}: choose from {', '.join(WITH_DEFAULTS)}")
    request: dict[str, Any] = parameter_table(embedding.shape or (0, 0))["methods"][method][
        "default_request"]
    return request


def projection_request(embedding: Embedding, method: str,
                       asked: dict[str, Any] | None = None) -> ProjectionRequest:
    """``method``'s validated request for ``embedding``: ``asked`` (its dims and params), else
    :func:`default_request`'s."""
    return _REQUEST.validate_python({"run": embedding.run, "embedding": embedding.name,
                                     "method": method,
                                     **(asked or default_request(embedding, method))})
