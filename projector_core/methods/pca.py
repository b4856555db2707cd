"""PCA: the first principal components of the finite rows (TensorBoard's default view)."""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.kernels.pca import pca
from projector_core.methods.base import ProjectionMethod, RunContext
from projector_core.projection_params import PcaParams

PCA_COMPONENTS = 10  # the front end picks any two or three of them as axes


class Pca(ProjectionMethod[PcaParams]):
    name = "pca"
    params_model = PcaParams

    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        result = pca(ctx.data, PCA_COMPONENTS, self.params.spherize, ctx.backend)
        return result.coordinates, {"explained_variance_ratio": result.explained_variance_ratio}
