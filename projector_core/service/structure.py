"""The structure of a finished projection: its HDBSCAN clusters (named from a metadata
column) and its quality (how much of each point's neighbourhood it keeps), as every door
answers them (``GET /api/jobs/ID/clusters`` and ``/quality``, the MCP tools)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from projector_core.data.model import Embedding
from projector_core.errors import unknown_column
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobContext
from projector_core.kernels.finite import finite_or_none
from projector_core.kernels.neighbor_index import Metric, Progress
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.jobs import layout_of
from projector_core.storage.recent import Recent

Space = Literal["projection", "original"]
Answer = dict[str, Any]
Answers = Recent[tuple[Any, ...], Answer]  # the last few answers, by question


def clusters(answers: Answers, job: Job, min_cluster_size: int | None,
             label_column: str | None, space: Space) -> Answer:
    """HDBSCAN clusters (with sub-clusters) of the projection as the map shows it, named
    from ``label_column`` when given (computed once per question, kept in ``answers``).
    ValueError for an unknown column or a comparison job."""
    from projector_core.kernels.cluster_labels import cluster_labels, column_kind
    from projector_core.kernels.clusters import cluster_points, default_min_cluster_size

    picture = _picture(layout_of(job, "clusters"))
    metadata = None
    if label_column is not None:
        metadata = source(job, "a label column").metadata_with_added()
        if metadata is None or label_column not in metadata.names:
            raise unknown_column(label_column, metadata.names if metadata is not None else [])
    size = min_cluster_size or default_min_cluster_size(picture.shape[0])

    def compute() -> Answer:
        data = (source(job, "clustering the original space").vectors()
                if space == "original" else picture)
        found = cluster_points(data, picture, size)
        groups = [c.members for c in found.clusters]
        labels = (cluster_labels(metadata, label_column, groups, picture)
                  if metadata and label_column else [f"cluster {c.id}" for c in found.clusters])
        return {
            "label_kind": (column_kind(metadata, label_column)
                           if metadata and label_column else None),
            "hint": None if found.clusters else _no_clusters_hint(data, space, size),
            "assignment": found.assignment.tolist(),
            "clusters": [{"id": c.id, "size": int(c.members.size), "label": label,
                          "centroid": c.centroid, "parent": c.parent, "point": c.point}
                         for c, label in zip(found.clusters, labels, strict=True)],
            "min_cluster_size": size,
            "sampled": found.sampled,
        }

    return answers.get_or_compute(("clusters", job.id, size, label_column, space), compute)


def quality(answers: Answers, job: Job, k: int, metric: Metric,
            progress: Progress | None = None) -> Answer:
    """Per-point neighbourhood preservation, trustworthiness and continuity of the
    projection against its embedding (computed once per question, kept in ``answers``)."""
    from projector_core.kernels.quality import projection_quality

    picture = _picture(layout_of(job, "quality"))
    embedding = source(job, "quality")

    def compute() -> Answer:
        found = projection_quality(embedding.vectors(), picture, k, metric, progress=progress)
        return {"per_point": finite_or_none(found.per_point), "mean": found.mean,
                "trustworthiness": found.trustworthiness, "continuity": found.continuity,
                "k": found.k, "metric": metric, "excluded_rows": found.excluded_rows,
                "sample_size": found.sample_size, "neighbors": found.neighbors,
                "recall": found.recall, "per_point_error": found.per_point_error}

    return answers.get_or_compute(("quality", job.id, k, metric), compute)


def quality_job(jobs: JobManager, answers: Answers, job: Job, k: int, metric: Metric) -> Job:
    """:func:`quality` as a job, as a comparison is one (progress, cancel; one per
    question): its result is ``per_point`` [N, 1] with the rest of the answer in ``info``,
    and the answer is kept in ``answers``, so the same question asked plainly answers at
    once. NotDone / ValueError at once for a job that has no layout to judge."""
    layout_of(job, "quality")
    embedding = source(job, "quality")
    key = f"quality:{job.id}:{k}:{metric}"
    found = jobs.find(key)
    if found is None:
        def work(ctx: JobContext) -> ProjectionResult:
            answer = quality(answers, job, k, metric, lambda done: ctx.step(None, done))
            per_point = np.array([np.nan if v is None else v for v in answer["per_point"]],
                                 np.float32)
            return ProjectionResult(per_point[:, None], {
                "method": "quality", **{key: v for key, v in answer.items() if key != "per_point"}})
        found = jobs.submit(work, key=key)
    found.about = {"kind": "quality", "method": "quality", "run": embedding.run,
                   "embedding": embedding.name, "of": job.id}
    return found


def _picture(result: ProjectionResult) -> np.ndarray:
    """The coordinates the map shows: PCA's first two components, every column otherwise."""
    coordinates = result.coordinates
    return coordinates[:, :2] if result.info.get("method") == "pca" else coordinates


def source(job: Job, need: str) -> Embedding:
    """The embedding ``job`` projects; ValueError naming ``need`` when it does not know it."""
    if not isinstance(job.source, Embedding):
        raise ValueError(f"job {job.id} does not know its data, so {need} is not available")
    return job.source



def _no_clusters_hint(data: np.ndarray, space: Space, size: int) -> str:
    """Why HDBSCAN may have found nothing, and what to try instead."""
    if space == "original" and data.shape[1] > 10:
        return (f"No dense groups of at least {size} points in the original "
                f"{data.shape[1]}-dimensional space: distances there are nearly all alike. "
                "Cluster the projected points instead, or lower Min size.")
    return (f"No dense groups of at least {size} points: every point counts as noise. "
            "Lower Min size, or run t-SNE or UMAP, whose pictures separate groups more than PCA.")
