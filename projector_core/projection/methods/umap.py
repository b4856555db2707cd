"""UMAP (umap-learn, imported on first run): full fit or sampled fit."""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.distributed.sample_fit import UmapFit
from projector_core.kernels.sampling import sampled_umap
from projector_core.kernels.umap import default_epochs
from projector_core.projection.limits import Limit, umap_neighbors
from projector_core.projection.methods.base import RunContext
from projector_core.projection.methods.fitting import LayoutFit, fit_neighbors, sampled, streamed
from projector_core.projection.params import UmapParams


class Umap(LayoutFit[UmapParams]):
    name = "umap"
    title = "UMAP"
    params_model = UmapParams
    view_dims = 2
    view_params = ("n_neighbors", "min_dist")

    @classmethod
    def fit_limits(cls, n_points: int, points: str = "points") -> dict[str, Limit]:
        return {"n_neighbors": umap_neighbors(n_points, points)}

    @classmethod
    def fitted_defaults(cls, n_points: int) -> dict[str, Any]:
        return {"n_epochs": default_epochs(n_points)}

    def limited_values(self, n_points: int) -> dict[str, float | None]:
        return {"n_neighbors": self.params.n_neighbors}

    def sample_fit(self) -> UmapFit:
        params = self.params
        return UmapFit(self.dims, params.n_neighbors, params.min_dist, params.n_epochs,
                       params.seed)

    def fit(self, data: np.ndarray, valid: np.ndarray, ctx: RunContext, init: np.ndarray | None,
            sample: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        from projector_core.kernels.umap import umap  # numba: on first use

        params = self.params
        if sample is not None:
            return sampled(valid, ctx.reporter, lambda on_step: sampled_umap(
                data, sample, self.dims, params.n_neighbors, params.min_dist, params.n_epochs,
                params.seed, on_step))
        neighbors = fit_neighbors(data, params.n_neighbors - 1, ctx.backend)
        result = umap(data, self.dims, params.n_neighbors, params.min_dist, params.n_epochs,
                      params.seed, neighbors=neighbors, on_step=streamed(valid, ctx.reporter),
                      init=init)
        return result.coordinates, {"n_epochs": result.n_epochs, "neighbors": result.neighbors,
                                    "mode": "full", "sample_size": int(data.shape[0])}
