"""Custom: axes between metadata queries (TensorBoard's "Custom" tab)."""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.kernels.custom import custom_projection
from projector_core.kernels.precomputed import check_columns
from projector_core.kernels.search import search
from projector_core.methods.base import ProjectionMethod, RunContext
from projector_core.model import Embedding
from projector_core.projection_params import CustomParams


class Custom(ProjectionMethod[CustomParams]):
    name = "custom"
    params_model = CustomParams

    def check(self, embedding: Embedding) -> None:
        """The column must exist; regular expressions must compile."""
        super().check(embedding)
        params = self.params
        check_columns(embedding.metadata(), [params.column], numeric=False)
        if params.regex:
            for query in (params.left, params.right, params.up, params.down):
                search([], query, regex=True)  # raises ValueError for a bad pattern

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        params = self.params
        metadata = ctx.embedding.metadata()
        check_columns(metadata, [params.column], numeric=False)  # the file may have changed
        assert metadata is not None
        result = custom_projection(ctx.data, metadata.column(params.column), params.left,
                                   params.right, params.up, params.down, params.regex,
                                   backend=ctx.backend)
        return result.coordinates, {"matches": result.matches}
