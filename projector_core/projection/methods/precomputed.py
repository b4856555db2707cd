"""Precomputed: numeric metadata columns, or data of at most 3 dimensions, as they are."""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.kernels.precomputed import check_columns, precomputed
from projector_core.projection.limits import Limit, data_dimensions
from projector_core.projection.methods.base import ProjectionMethod, RunContext
from projector_core.projection.params import PrecomputedParams


class Precomputed(ProjectionMethod[PrecomputedParams]):
    name = "precomputed"
    title = "Precomputed"
    params_model = PrecomputedParams
    runs_on_cluster = False  # columns and data of at most 3 dimensions: nothing to spread

    @classmethod
    def limits(cls, n_points: int, dim: int) -> dict[str, Limit]:
        return {"dimensions": data_dimensions()}  # without columns

    def check(self, embedding: Embedding) -> None:
        """Named columns must be numeric; without them the data must have at most 3 dims."""
        super().check(embedding)
        if self.params.columns:
            check_columns(embedding.metadata(), self.params.columns)
        else:
            data_dimensions().check((embedding.shape or (0, 0))[1])

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        if not self.params.columns:  # checked again: the file may have changed since
            data_dimensions().check(ctx.data.shape[1])
        result = precomputed(ctx.data, ctx.embedding.metadata(), self.params.columns)
        return result.coordinates, {"columns": result.source}
