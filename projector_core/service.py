"""The projection service: what every door (REST routes, MCP tools) asks, answered one way.

One object over the catalogue and the job engine holds each decision a request needs: the
backend, the projection job (shared by identical requests, answered from the result cache;
a cluster's stored result gets its tiles built by the workers), the neighbour index
(``distributed.dispatch``), the ``k`` limit, the clusters and quality of a finished projection,
and comparisons. The doors only turn its answers and its errors into their protocol:
ValueError (DataError included) is the request's or the data's fault (a 422), ``LookupError``
an unknown name (a 404), :class:`NotDone` a job still running (a 409).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from projector_core.annotations.serving import serve_annotations
from projector_core.comparison.compare import check_comparable, compare_embeddings
from projector_core.data.catalog import Catalog
from projector_core.data.label_column import default_label_column
from projector_core.data.model import Embedding
from projector_core.data.steps import split_name
from projector_core.distributed.dispatch import neighbor_index
from projector_core.jobs.engine import Job, JobContext, JobManager, JobStatus
from projector_core.kernels.backend import Backend, get_backend
from projector_core.kernels.compare import Comparison
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.projection.compute import ProjectionResult, check
from projector_core.projection.jobs import (
    NotDone,
    ProjectionJobs,
    layout_of,
    projection_result,
)
from projector_core.projection.limits import neighbor_count
from projector_core.projection.params import ProjectionRequest
from projector_core.semantic.models import Models
from projector_core.semantic.search import MeaningAnswer, search_meaning
from projector_core.storage.recent import Recent
from projector_core.storage.result_cache import ResultCache
from projector_core.tiles.queries import (
    Found,
    Pick,
    Region,
    UnknownColumn,
    inside,
    pick,
    search_column,
    select,
)
from projector_core.tiles.sharded_build import with_stored_tiles
from projector_core.tiles.source import MemoryTiles, TileSource
from projector_core.tiles.store import LodStore
from projector_core.tiles.stored import stored_tile_source
from projector_core.tiles.view import chosen_axes

if TYPE_CHECKING:
    from projector_core.distributed.cluster import Cluster

KEEP_ANSWERS = 8  # clusters/quality answers kept: a map asks again when the user comes back
Space = Literal["projection", "original"]


class UnknownName(LookupError):
    """An unknown run, embedding or job; the message names it (and what is known)."""

    def __str__(self) -> str:
        return str(self.args[0])


def label_column(embedding: Embedding) -> str | None:
    """The column that names the embedding's points (see :mod:`~projector_core.data.label_column`)."""
    if "metadata" in embedding.errors or embedding.loading is not None:
        return None
    return default_label_column(embedding.metadata_columns(), embedding.is_numeric)


def describe(job: Job) -> dict[str, Any]:
    """A job's status and what it computes: kind, method, run, embedding."""
    return {**job.snapshot(), **(job.about or {"kind": "unknown"})}


class ProjectionService:
    """check / start / result / neighbours / clusters / quality / compare over one catalogue."""

    def __init__(self, catalog: Catalog, projection_jobs: ProjectionJobs, device: str = "cpu",
                 cluster: Cluster | None = None, lod: LodStore | None = None,
                 models: Mapping[tuple[str, str], str] | None = None,
                 annotations: str | Path | None = None) -> None:
        """``models``: (run, embedding or tag) -> the model that made it, as the command
        line declares (``semantic/declarations.py``); the data's own declarations are read
        with the data. ``annotations``: the annotation store (``--annotations PATH|off``;
        None: ``$PROJECTOR_ANNOTATIONS`` or the user's data directory), held here for every
        door (``annotations/serving.py``)."""
        self.catalog = catalog
        self.projection_jobs = projection_jobs
        self.jobs: JobManager = projection_jobs.jobs
        self.device = device
        self.cluster = cluster
        self._answers: Recent[tuple[Any, ...], Any] = Recent(KEEP_ANSWERS)
        self.lod = lod if lod is not None else LodStore()  # the tiles of done projections
        self.models = Models(self.jobs, models, prepare=lambda e: self.neighbor_index(e, "cosine"))
        self.annotations = serve_annotations(catalog, annotations, self.embedding)

    @classmethod
    def standalone(cls, catalog: Catalog, device: str = "cpu") -> ProjectionService:
        """A service with its own job engine and the catalogue's result cache (the MCP server)."""
        jobs = JobManager()
        return cls(catalog, ProjectionJobs(jobs, ResultCache(catalog.cache.directory)), device)

    # -- names -----------------------------------------------------------------------------------
    def embedding(self, run: str, name: str) -> Embedding:
        """The embedding, or :class:`UnknownName` listing the known ones."""
        try:
            return self.catalog.embedding(run, name)
        except KeyError:
            known = [f"{r.name}/{e.name}" for r in self.catalog.runs() for e in r.embeddings]
            raise UnknownName(f"unknown embedding {run}/{name}; known: {', '.join(known)}") from None

    def job(self, job_id: str) -> Job:
        try:
            return self.jobs.get(job_id)
        except KeyError:
            raise UnknownName(f"unknown job {job_id!r} (finished jobs are kept for a while, "
                              "then forgotten)") from None

    def list_jobs(self) -> list[dict[str, Any]]:
        """Every job still known, oldest first, with what it computes."""
        return [describe(job) for job in self.jobs.all()]

    def backend(self, device: str | None = None) -> Backend:
        return get_backend(device or self.device)

    # -- projections -------------------------------------------------------------------------------
    def check(self, request: ProjectionRequest, embedding: Embedding) -> np.ndarray | None:
        """ValueError for a request the data cannot satisfy (before any job is queued); the
        reference layout ``init_from_job``/``align_to_job`` names, checked."""
        self.backend(request.device)
        check(request, embedding, self.cluster)
        return self.projection_jobs.reference(request, embedding)

    def start(self, request: ProjectionRequest, embedding: Embedding,
              reference: np.ndarray | None = None) -> Job:
        """The job answering a checked request: running, done, cached or new."""
        return self.projection_jobs.start(request, embedding, self.backend(request.device),
                                          self.cluster, reference, finish=with_stored_tiles)

    def project(self, request: ProjectionRequest) -> Job:
        """check + start, from the names in the request."""
        embedding = self.embedding(request.run, request.embedding)
        return self.start(request, embedding, self.check(request, embedding))

    def result(self, job: Job) -> ProjectionResult:
        """A done job's coordinates; :class:`NotDone` before."""
        if job.status is not JobStatus.DONE:
            raise NotDone(job)
        return projection_result(job)

    # -- neighbours ------------------------------------------------------------------------------
    def neighbors(self, embedding: Embedding, k: int, metric: Metric, *, index: int | None = None,
                  vector: np.ndarray | None = None,
                  exclude: tuple[int, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest rows to row ``index`` (itself excluded) or to ``vector`` (the
        rows ``exclude`` left out): (indices, distances), nearest first. ValueError for an
        index past N or a ``k`` over the other points."""
        if embedding.shape is None:
            embedding.vectors()  # DataError naming the unreadable file
        n = (embedding.shape or (0, 0))[0]
        if index is not None:
            if not 0 <= index < n:
                raise ValueError(f"index {index} out of range: the embedding has {n} points")
            neighbor_count(n - 1).check(k)
        else:
            neighbor_count(n - len(exclude)).check(k)
        found = self.neighbor_index(embedding, metric)
        if index is not None:
            return found.neighbors_of([index], k, metric)
        assert vector is not None
        indices, distances = found.query(np.asarray(vector, np.float64), k + len(exclude), metric)
        if not exclude:
            return indices, distances
        keep = ~np.isin(indices[0], exclude) & (indices[0] >= 0)
        return indices[:, keep][:, :k], distances[:, keep][:, :k]

    def neighbor_index(self, embedding: Embedding, metric: Metric) -> NeighborIndex:
        """The index that answers neighbour queries on ``embedding`` now (``dispatch.py``)."""
        return neighbor_index(embedding.fingerprint, embedding.vectors, metric, self.backend(),
                              self.cluster)

    # -- search by meaning (projector_core/semantic/) --------------------------------------------
    def search_meaning(self, embedding: Embedding, texts: list[str], k: int,
                       job: Job | None = None) -> MeaningAnswer:
        """Each phrase embedded by the embedding's model: its ``k`` nearest rows with their
        similarities and the index that found them, and with a finished projection ``job``
        its marker on that map. ``ModelLoading`` (a 503) until the model is ready."""
        return search_meaning(self.models, self.neighbor_index, embedding, texts, k, job)

    def start_models(self) -> None:
        """Make every declared model ready in the background (the server's start): for the
        embeddings loaded now at once, for those still loading once they are."""
        def start_loaded() -> bool:
            embeddings = [e for run in self.catalog.runs() for e in run.embeddings]
            for embedding in embeddings:
                self.models.start(embedding)
            return any(e.loading is not None for e in embeddings)

        def after_loading() -> None:
            self.catalog.wait_loaded()
            start_loaded()

        if start_loaded():
            threading.Thread(target=after_loading, name="model-start", daemon=True).start()

    # -- structure of a finished projection ------------------------------------------------------
    def clusters(self, job: Job, min_cluster_size: int | None = None,
                 label_column: str | None = None, space: Space = "projection") -> dict[str, Any]:
        """HDBSCAN clusters (with sub-clusters) of the projection as the map shows it, named
        from ``label_column`` when given (``GET /api/jobs/ID/clusters``)."""
        from projector_core.kernels.cluster_labels import cluster_labels, column_kind
        from projector_core.kernels.clusters import cluster_points, default_min_cluster_size

        picture = _picture(layout_of(job, "clusters"))
        metadata = None
        if label_column is not None:
            metadata = _source(job, "a label column").metadata_with_added()
            if metadata is None or label_column not in metadata.names:
                known = ", ".join(metadata.names) if metadata is not None else "none"
                raise ValueError(f"unknown metadata column {label_column!r} (columns: {known})")
        size = min_cluster_size or default_min_cluster_size(picture.shape[0])

        def compute() -> dict[str, Any]:
            data = (_source(job, "clustering the original space").vectors()
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

        return self._answers.get_or_compute(("clusters", job.id, size, label_column, space), compute)

    def quality(self, job: Job, k: int = 10, metric: Metric = "cosine") -> dict[str, Any]:
        """Per-point neighbourhood preservation, trustworthiness and continuity."""
        from projector_core.kernels.quality import projection_quality

        picture = _picture(layout_of(job, "quality"))
        embedding = _source(job, "quality")

        def compute() -> dict[str, Any]:
            found = projection_quality(embedding.vectors(), picture, k, metric)
            return {"per_point": _floats(found.per_point), "mean": found.mean,
                    "trustworthiness": found.trustworthiness, "continuity": found.continuity,
                    "k": found.k, "metric": metric, "excluded_rows": found.excluded_rows,
                    "sample_size": found.sample_size}

        return self._answers.get_or_compute(("quality", job.id, k, metric), compute)

    # -- questions over every point of a tiled projection -----------------------------------------
    def tile_source(self, job: Job, axes: list[int]) -> TileSource:
        """The job's tiles over ``axes`` (1 to 3 coordinate columns; the quadtree is over the
        first two): :class:`NotDone` before the job is done, ValueError for a comparison or
        axes the result lacks."""
        coordinates = layout_of(job, "tiles").coordinates
        axes = chosen_axes(axes, coordinates.shape[1], tiles=True)
        # A cluster's result stays on disk with the tiles its workers wrote: served from there.
        stored = stored_tile_source(coordinates, axes)
        return stored if stored is not None else MemoryTiles(self.lod, job, axes)

    def pick(self, job: Job, axes: list[int], x: float, y: float, radius: float) -> Pick:
        """The point nearest (x, y) within ``radius`` over all points (hover, click)."""
        return pick(self.tile_source(job, axes), x, y, radius)

    def select(self, job: Job, axes: list[int], region: Region, limit: int,
               column: str | None = None) -> Found:
        """The points inside a box or polygon: count, first rows, counts of ``column``."""
        return select(self.tile_source(job, axes), region, limit, column)

    def search_points(self, job: Job, axes: list[int], column: str, query: str, regex: bool,
                      limit: int) -> Found:
        """Points of the job whose ``column`` matches ``query``: matching codes, count, first
        rows (the embedding's column answers; the job and axes are checked as tiles')."""
        self.tile_source(job, axes)
        embedding = job.source
        try:
            if embedding is None:
                raise KeyError(f"unknown metadata column {column!r} (columns: none)")
            dictionary, counts = embedding.column_counts(column)
        except KeyError as error:
            raise UnknownColumn(error.args[0]) from None
        return search_column(dictionary, counts, embedding.code_blocks(column), query, regex,
                             limit)

    def rows_inside(self, job: Job, axes: list[int], region: Region,
                    embedding: Embedding) -> np.ndarray:
        """Every row of ``embedding`` inside ``region`` of ``job``'s map (a label applied to
        a region of a view shown from tiles): ValueError when the job maps other points."""
        source = job.source

        def points(e: Embedding) -> tuple[str, str, int | None]:
            return e.run, split_name(e.name)[0], e.shape[0] if e.shape else None

        if not isinstance(source, Embedding) or points(source) != points(embedding):
            raise ValueError(f"job {job.id} is not a projection of {embedding.run}/"
                             f"{embedding.name}'s points")
        return inside(self.tile_source(job, axes), region)

    # -- comparisons -------------------------------------------------------------------------------
    def compare(self, a: Embedding, b: Embedding, k: int, metric: Metric,
                top: int = 100) -> Comparison:
        return compare_embeddings(a, b, k, metric, self.backend(), top)

    def compare_job(self, a: Embedding, b: Embedding, k: int, metric: Metric, top: int) -> Job:
        """The comparison as a job (one per question): its progress is the job's, its result
        [N, 2] (overlap, rank displacement) with the summary in ``info``."""
        check_comparable(a, b, k)
        backend = self.backend()
        key = f"compare:{a.fingerprint}:{b.fingerprint}:{k}:{metric}:{top}:{backend.device}"
        job = self.jobs.find(key)
        if job is None:
            def work(ctx: JobContext) -> ProjectionResult:
                found = compare_embeddings(a, b, k, metric, backend, top,
                                           progress=lambda done: ctx.step(None, done))
                values = np.column_stack([found.per_point, found.rank_displacement])
                return ProjectionResult(values.astype(np.float32), {
                    "method": "compare", "k": found.k,
                    "most_changed": found.most_changed.tolist(),
                    "neighbors": found.neighbors, "recall": found.recall})
            job = self.jobs.submit(work, key=key)
        job.about = {"kind": "compare", "method": "compare", "run": a.run, "embedding": a.name,
                     "other_run": b.run, "other_embedding": b.name}
        return job


def _picture(result: ProjectionResult) -> np.ndarray:
    """The coordinates the map shows: PCA's first two components, every column otherwise."""
    coordinates = result.coordinates
    return coordinates[:, :2] if result.info.get("method") == "pca" else coordinates


def _source(job: Job, need: str) -> Embedding:
    if not isinstance(job.source, Embedding):
        raise ValueError(f"job {job.id} does not know its data, so {need} is not available")
    return job.source


def _floats(values: np.ndarray) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in values.tolist()]


def _no_clusters_hint(data: np.ndarray, space: Space, size: int) -> str:
    """Why HDBSCAN may have found nothing, and what to try instead."""
    if space == "original" and data.shape[1] > 10:
        return (f"No dense groups of at least {size} points in the original "
                f"{data.shape[1]}-dimensional space: distances there are nearly all alike. "
                "Cluster the projected points instead, or lower Min size.")
    return (f"No dense groups of at least {size} points: every point counts as noise. "
            "Lower Min size, or run t-SNE or UMAP, whose pictures separate groups more than PCA.")
