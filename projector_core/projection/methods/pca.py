"""PCA: the first principal components of the finite rows (TensorBoard's default view)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.pca import sharded_pca
from projector_core.jobs.reporter import Reporter
from projector_core.kernels.pca import pca
from projector_core.projection.methods.base import ProjectionMethod, RunContext
from projector_core.projection.params import PcaParams

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.formats.chunked import ChunkedVectors


class Pca(ProjectionMethod[PcaParams]):
    name = "pca"
    title = "PCA"
    params_model = PcaParams
    view_dims = 3
    view_params = ("spherize", "components")
    view_values: ClassVar[dict[str, Any]] = {"components": 10}  # the page picks its axes among 10

    @property
    def width(self) -> int:
        """The columns returned (fewer when D is smaller): ``params.components`` when asked,
        else ``dims``, as scikit-learn's ``PCA(n_components=dims)``."""
        components: int | None = self.params.components
        return self.dims if components is None else components

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        result = pca(ctx.data, self.width, self.params.spherize, ctx.backend)
        return result.coordinates, {"explained_variance_ratio": result.explained_variance_ratio}

    def run_on_cluster(self, embedding: Embedding, vectors: ChunkedVectors, cluster: Cluster,
                       reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
        result = sharded_pca(vectors, cluster, self.width, self.params.spherize)
        return result.coordinates, {"explained_variance_ratio": result.explained_variance_ratio}
