"""Limits that the data puts on parameters, declared once and checked by one function.

A parameter model (:mod:`projector_core.projection.params`) bounds what any request may ask
(perplexity 2 to 1000); the data bounds it further (perplexity at most (N - 1) / 3 for N
points). As in scikit-learn's declared ``_parameter_constraints``, each such limit is a value,
a :class:`Limit`, made from the number of points by the method that needs it
(:mod:`projector_core.projection.methods`), checked by :meth:`Limit.check`, and sent to the
front end (``limits`` in ``GET /api/runs``, ``GET /api/projections/methods``) so that it
clamps its sliders to the same numbers instead of working them out again.

No numpy, no compute library: the server reads these before any of them is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotated_types import Ge, Gt, Le
from pydantic import BaseModel

from projector_core.kernels.perplexity import max_perplexity

MIN_TSNE_POINTS = 4  # openTSNE's smallest data set: 3 x perplexity neighbours, perplexity >= 1
# Rows one query by example averages and leaves out of its answer: an even sample of 10,000
# rows puts the centroid of any selection within sampling noise of the whole one, and leaving
# them out asks the index for k + 10,000 candidates, not for the whole set.
MAX_EXAMPLES = 10_000


@dataclass(frozen=True)
class Limit:
    """The range one parameter may take for this data, and what to say when it is out.

    ``message`` is formatted with ``value``, ``minimum``, ``maximum``, ``n`` (the points the
    limit was made for) and ``points`` (what they are: "points", "finite points").
    """

    minimum: float | None = None
    maximum: float | None = None
    message: str = "{value} is out of range"
    n: int = 0
    points: str = "points"

    def check(self, value: float | None) -> None:
        """ValueError when ``value`` is outside the range; None (a default) always fits."""
        if value is None:
            return
        if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum):
            raise ValueError(self.message.format(value=value, minimum=self.minimum,
                                                 maximum=self.maximum, n=self.n,
                                                 points=self.points))

    def within(self, model: type[BaseModel], name: str) -> Limit:
        """This limit narrowed to the model's own bounds on field ``name`` (for the API)."""
        low, high = field_bounds(model, name)
        lows = [b for b in (self.minimum, low) if b is not None]
        highs = [b for b in (self.maximum, high) if b is not None]
        return Limit(max(lows, default=None), min(highs, default=None), self.message, self.n,
                     self.points)

    def to_json(self) -> dict[str, Any]:
        return {"minimum": self.minimum, "maximum": self.maximum}


def field_bounds(model: type[BaseModel], name: str) -> tuple[float | None, float | None]:
    """The ``ge``/``gt`` and ``le`` bounds pydantic declares on a field (an optional one too)."""
    low = high = None
    for bound in model.model_fields[name].metadata:
        if isinstance(bound, Ge | Gt):
            low = bound.ge if isinstance(bound, Ge) else bound.gt
        elif isinstance(bound, Le):
            high = bound.le
    return low, high  # type: ignore[return-value]


def tsne_points(n_points: int, points: str = "points") -> Limit:
    return Limit(minimum=MIN_TSNE_POINTS, n=n_points, points=points,
                 message="t-SNE needs at least {minimum} points; this embedding has {n}")


def perplexity(n_points: int, points: str = "points") -> Limit:
    return Limit(maximum=max_perplexity(n_points), n=n_points, points=points,
                 message="perplexity {value:g} is too large for {n} {points}: it must be at "
                         "most (N - 1) / 3 = {maximum:.4g}")


def umap_neighbors(n_points: int, points: str = "points") -> Limit:
    """umap-learn counts the point itself among its neighbours: fewer than N of them."""
    return Limit(maximum=n_points - 1, n=n_points, points=points,
                 message="n_neighbors {value} must be smaller than the number of {points} ({n})")


def neighbor_count(others: int) -> Limit:
    """``k`` of a neighbour query: at most the other points (more is refused, not clamped)."""
    return Limit(minimum=1, maximum=others, n=others,
                 message="k {value} is more than the {maximum} other points of the embedding")


def example_rows(n_points: int) -> Limit:
    """The rows a query by example ("more like these") averages into its query vector: at
    most :data:`MAX_EXAMPLES`, and fewer than the points (some are left to find)."""
    return Limit(minimum=1, maximum=min(MAX_EXAMPLES, max(1, n_points - 1)), n=n_points,
                 message="{value} example rows: a query by example averages 1 to {maximum} of "
                         "the {n} points (give an even sample of a larger selection)")


def data_dimensions() -> Limit:
    """Data plotted as it is (the precomputed method without columns): up to 3 dimensions."""
    return Limit(maximum=3, message="the data has {value} dimensions; plotting it as it is "
                                    "needs at most 3 (or name 2-3 numeric metadata columns in "
                                    "'columns')")
