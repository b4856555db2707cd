"""What every projection method is: its parameter model, its data limits, its run.

A method is a class (one per module, found in :mod:`projector_core.projection.methods`'s registry),
made from a validated request as a scikit-learn estimator is made from its parameters.
``check(embedding)`` holds every limit the data puts on the request, before a job is queued;
``run(ctx)`` computes. The data-dependent limits are declared by ``limits(n, dim)`` and the
same values go to the front end, so nothing recomputes them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from projector_core.data.model import Embedding
from projector_core.jobs.reporter import Reporter
from projector_core.kernels.backend import Backend
from projector_core.projection.limits import Limit

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster
    from projector_core.formats.chunked import ChunkedVectors

Params = TypeVar("Params", bound=BaseModel)


@dataclass(frozen=True)
class RunContext:
    """What a run reads: the embedding and its vectors, where to compute, whom to tell.

    ``reference``: the layout of the job named by ``init_from_job`` / ``align_to_job`` (same
    rows), or None.
    """

    embedding: Embedding
    data: np.ndarray
    backend: Backend
    reporter: Reporter
    reference: np.ndarray | None = None


class ProjectionMethod(ABC, Generic[Params]):
    """One projection method, made from a request (``request.params`` is a ``params_model``)."""

    name: ClassVar[str]
    params_model: ClassVar[type[BaseModel]]
    title: ClassVar[str]  # the name a person reads ("t-SNE")
    # Capabilities, published in the parameter table (GET /api/projections/methods) so that
    # no door restates them: answered by one blocking request (the rest are followed frame
    # by frame); ``init_from_job`` is a start layout (else ``align_to_job`` turns the result
    # onto a layout); live frames stream while it runs; the dimensions it can give.
    quick: ClassVar[bool] = True
    starts_from_layout: ClassVar[bool] = False
    streams_frames: ClassVar[bool] = False
    output_dims: ClassVar[tuple[int, ...]] = (2, 3)
    # The request a fresh view makes (the page's, the default view prepared ahead, an
    # export's, a rendered picture's): these dims and these parameters at the table's
    # defaults for the data, or at ``view_values`` where a view asks another value (PCA's
    # components); None: no view opens with this method unasked (its parameters are the
    # user's: custom's queries, precomputed's columns).
    view_dims: ClassVar[int | None] = None
    view_params: ClassVar[tuple[str, ...]] = ()
    view_values: ClassVar[dict[str, Any]] = {}
    runs_on_cluster: ClassVar[bool] = True  # over a chunked embedding's shards, with --dask

    def __init__(self, request: Any) -> None:
        self.request = request
        self.params: Params = request.params
        self.dims: int = request.dims

    @classmethod
    def limits(cls, n_points: int, dim: int) -> dict[str, Limit]:
        """Limits on parameters for data of ``n_points`` x ``dim`` under default parameters,
        narrowed to the model's own bounds: what ``GET /api/runs`` sends the front end."""
        return {}

    @classmethod
    def data_defaults(cls, n_points: int, dim: int) -> dict[str, Any]:
        """Defaults that depend on the data (a parameter whose model default is None, filled
        in by the run): what the table publishes for ``n_points`` x ``dim``."""
        return {}

    def check(self, embedding: Embedding) -> None:
        """Raise ValueError (a 422) for a request this embedding cannot satisfy; DataError
        when its tensor is broken. Runs before the job is queued."""
        embedding.vectors()

    @abstractmethod
    def run(self, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        """Coordinates (one row per point, NaN where none) and the method's info fields."""

    def run_on_cluster(self, embedding: Embedding, vectors: ChunkedVectors, cluster: Cluster,
                       reporter: Reporter | None) -> tuple[np.ndarray, dict[str, Any]]:
        """As :meth:`run`, over the shards on the cluster's workers (``runs_on_cluster``)."""
        raise NotImplementedError(f"{self.name} runs in the server's process")
