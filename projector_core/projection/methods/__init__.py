"""The projection method registry: one class per method, found by the request's ``method``.

Adding a method is a new module with a
:class:`~projector_core.projection.methods.base.ProjectionMethod` subclass, its request model
in :mod:`projector_core.projection.params`, and one line below.
"""

from __future__ import annotations

from typing import Any

from projector_core.projection.limits import neighbor_count
from projector_core.projection.methods.base import ProjectionMethod
from projector_core.projection.methods.custom import Custom
from projector_core.projection.methods.pca import Pca
from projector_core.projection.methods.precomputed import Precomputed
from projector_core.projection.methods.table import method_entry
from projector_core.projection.methods.tsne import Tsne
from projector_core.projection.methods.umap import Umap

METHODS: dict[str, type[ProjectionMethod[Any]]] = {
    method.name: method for method in (Pca, Tsne, Umap, Custom, Precomputed)}


def method_for(request: Any) -> ProjectionMethod[Any]:
    """The method object for a validated request (its ``method`` names the class)."""
    return METHODS[request.method](request)


def data_limits(n_points: int, dim: int) -> dict[str, Any]:
    """Every limit the data puts on a request, as JSON: each method's under its name, and
    ``neighbors.k`` (a neighbour query of one of the points)."""
    return {
        "projections": {name: {field: limit.to_json()
                               for field, limit in method.limits(n_points, dim).items()}
                        for name, method in METHODS.items()},
        "neighbors": {"k": neighbor_count(max(0, n_points - 1)).to_json()},
    }


def parameter_table(shape: tuple[int, int] | None = None) -> dict[str, Any]:
    """Every method's parameters (type, default, bounds, description) and capabilities; with
    an embedding's ``shape`` (N, D) the data's limits and defaults applied, the data limits
    of :func:`data_limits` beside them, and ``k`` of a neighbour query."""
    table: dict[str, Any] = {
        "data": None if shape is None else {"n": shape[0], "dim": shape[1]},
        "methods": {name: method_entry(method, shape) for name, method in METHODS.items()},
    }
    if shape is not None:
        table.update(data_limits(*shape))
    return table
