"""t-SNE (openTSNE, imported on first run): full fit, sampled fit, or supervised by labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.data.model import Embedding
from projector_core.distributed.sample_fit import TsneFit
from projector_core.jobs.reporter import Reporter
from projector_core.kernels.perplexity import default_perplexity
from projector_core.kernels.precomputed import check_columns
from projector_core.kernels.sampling import sampled_tsne
from projector_core.kernels.supervision import label_codes
from projector_core.projection.limits import Limit, perplexity, tsne_points
from projector_core.projection.methods.base import RunContext
from projector_core.projection.methods.fitting import (
    KERNEL_THREADS,
    LayoutFit,
    fit_neighbors,
    sampled,
    streamed,
)
from projector_core.projection.params import TsneParams

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.formats.chunked import ChunkedVectors


class Tsne(LayoutFit[TsneParams]):
    name = "tsne"
    title = "t-SNE"
    params_model = TsneParams
    view_dims = 2
    view_params = ("perplexity", "learning_rate", "n_iter")
    keeps_start_scale = True

    @classmethod
    def fit_limits(cls, n_points: int, points: str = "points") -> dict[str, Limit]:
        return {"points": tsne_points(n_points, points),
                "perplexity": perplexity(n_points, points)}

    @classmethod
    def fitted_defaults(cls, n_points: int) -> dict[str, Any]:
        return {"perplexity": default_perplexity(n_points)}

    def limited_values(self, n_points: int) -> dict[str, float | None]:
        return {"points": n_points, "perplexity": self.params.perplexity}

    def check(self, embedding: Embedding) -> None:
        super().check(embedding)
        if self.params.supervise_column is not None:
            check_columns(embedding.metadata_of([self.params.supervise_column]),
                          [self.params.supervise_column], numeric=False)

    def fit(self, data: np.ndarray, valid: np.ndarray, ctx: RunContext, init: np.ndarray | None,
            sample: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        from projector_core.kernels.tsne import tsne  # openTSNE: on first use

        params = self.params
        if sample is not None:  # the sample fit is unsupervised (said in info)
            fitted, details = sampled(valid, ctx.reporter, lambda on_step: sampled_tsne(
                data, sample, self.dims, params.perplexity, params.learning_rate, params.n_iter,
                params.early_exaggeration, params.seed, KERNEL_THREADS, on_step))
            return fitted, {**details, "supervised": False}
        labels = self._labels(ctx.embedding, valid)
        k = min(data.shape[0] - 1, int(3 * (params.perplexity or default_perplexity(
            data.shape[0]))))  # openTSNE's neighbour count for this perplexity
        found = fit_neighbors(data, k, ctx.backend)
        neighbors = None if found is None else (found[0], found[1].astype(np.float64))
        # A start layout is already organised: no early exaggeration to tear it apart.
        exaggeration = params.early_exaggeration if init is None else 1.0
        result = tsne(data, self.dims, params.perplexity, params.learning_rate, params.n_iter,
                      exaggeration, params.seed, neighbors=neighbors,
                      n_jobs=KERNEL_THREADS, on_step=streamed(valid, ctx.reporter), init=init,
                      supervision=None if labels is None else (labels, params.supervise_weight))
        return result.coordinates, {
            "supervised": labels is not None,
            "perplexity": result.perplexity, "kl_divergence": result.kl_divergence,
            "gradient_method": result.gradient_method, "iterations": params.n_iter,
            "neighbors": "exact" if neighbors is not None else "openTSNE",
            "mode": "full", "sample_size": int(data.shape[0]),
        }

    def sample_fit(self) -> TsneFit:
        params = self.params
        return TsneFit(self.dims, params.perplexity, params.learning_rate, params.n_iter,
                       params.early_exaggeration, params.seed)

    def run_on_cluster(self, embedding: Embedding, vectors: ChunkedVectors, cluster: Cluster,
                       reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
        coordinates, details = super().run_on_cluster(embedding, vectors, cluster, reporter)
        return coordinates, {**details, "supervised": False}  # the sample fit reads no labels

    def _labels(self, embedding: Embedding, valid: np.ndarray) -> np.ndarray | None:
        """Label codes of the fitted rows when the request supervises, else None."""
        params = self.params
        if params.supervise_column is None or params.supervise_weight <= 0:
            return None
        metadata = embedding.metadata_of([params.supervise_column])  # an annotation's too
        check_columns(metadata, [params.supervise_column], numeric=False)
        assert metadata is not None
        codes = label_codes(metadata.arrays[params.supervise_column])
        if codes.shape[0] != valid.shape[0]:
            raise ValueError(f"metadata has {codes.shape[0]} rows for {valid.shape[0]} points: "
                             "supervision needs one label per point")
        return np.asarray(codes[valid])
