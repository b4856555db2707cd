"""Custom: axes between metadata queries (TensorBoard's "Custom" tab)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.custom import sharded_custom_projection
from projector_core.jobs.reporter import Reporter
from projector_core.kernels.custom import custom_projection
from projector_core.kernels.precomputed import check_columns
from projector_core.kernels.search import search
from projector_core.projection.methods.base import ProjectionMethod, RunContext
from projector_core.projection.params import CustomParams

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.formats.chunked import ChunkedVectors


class Custom(ProjectionMethod[CustomParams]):
    name = "custom"
    title = "Custom"
    output_dims = (2,)  # two axes between the four queries
    params_model = CustomParams

    def check(self, embedding: Embedding) -> None:
        """The column must exist; regular expressions must compile."""
        super().check(embedding)
        params = self.params
        check_columns(embedding.metadata_of([params.column]), [params.column], numeric=False)
        if params.regex:
            for query in (params.left, params.right, params.up, params.down):
                search([], query, regex=True)  # raises ValueError for a bad pattern

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        params = self.params
        result = custom_projection(ctx.data, self._values(ctx.embedding), params.left,
                                   params.right, params.up, params.down, params.regex,
                                   backend=ctx.backend)
        return result.coordinates, {"matches": result.matches}

    def run_on_cluster(self, embedding: Embedding, vectors: ChunkedVectors, cluster: Cluster,
                       reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
        params = self.params
        result = sharded_custom_projection(vectors, cluster, self._values(embedding),
                                           params.left, params.right, params.up, params.down,
                                           params.regex)
        return result.coordinates, {"matches": result.matches}

    def _values(self, embedding: Embedding) -> list[str]:
        """The searched column's values (checked again: the file may have changed)."""
        metadata = embedding.metadata_of([self.params.column])  # an annotation's too
        check_columns(metadata, [self.params.column], numeric=False)
        assert metadata is not None
        return metadata.column(self.params.column)
