"""Two embeddings of the same points compared (``comparison/compare.py``), answered as every
door sends it (``GET /api/compare``, the MCP ``compare`` tool), or as a job with progress."""

from __future__ import annotations

from typing import Any

import numpy as np

from projector_core.comparison.compare import check_comparable, compare_embeddings
from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobContext
from projector_core.kernels.backend import Backend
from projector_core.kernels.compare import Comparison
from projector_core.kernels.finite import finite_or_none
from projector_core.kernels.neighbor_index import Metric
from projector_core.projection.compute import ProjectionResult


def comparison_answer(found: Comparison) -> dict[str, Any]:
    """The comparison as plain values: per point (null for a row with NaN/Inf in either),
    their mean, the most changed rows, the neighbours' kind and recall."""
    usable = found.per_point[np.isfinite(found.per_point)]
    return {"per_point": finite_or_none(found.per_point),
            "mean": float(usable.mean()) if usable.size else None,
            "k": found.k, "most_changed": found.most_changed.tolist(),
            "former_rank": finite_or_none(found.former_rank),
            "rank_displacement": finite_or_none(found.rank_displacement),
            "neighbors": found.neighbors, "recall": found.recall,
            "rows": int(found.per_point.shape[0])}


def comparison_job(jobs: JobManager, backend: Backend, a: Embedding, b: Embedding, k: int,
                   metric: Metric, top: int) -> Job:
    """The comparison as a job (one per question): its progress is the job's, its result
    [N, 2] (overlap, rank displacement) with the summary in ``info``."""
    check_comparable(a, b, k)
    key = f"compare:{a.fingerprint}:{b.fingerprint}:{k}:{metric}:{top}:{backend.device}"
    job = jobs.find(key)
    if job is None:
        def work(ctx: JobContext) -> ProjectionResult:
            found = compare_embeddings(a, b, k, metric, backend, top,
                                       progress=lambda done: ctx.step(None, done))
            values = np.column_stack([found.per_point, found.rank_displacement])
            return ProjectionResult(values.astype(np.float32), {
                "method": "compare", "k": found.k,
                "most_changed": found.most_changed.tolist(),
                "former_rank": finite_or_none(found.former_rank),
                "neighbors": found.neighbors, "recall": found.recall})
        job = jobs.submit(work, key=key)
    job.about = {"kind": "compare", "method": "compare", "run": a.run, "embedding": a.name,
                 "other_run": b.run, "other_embedding": b.name}
    return job

