"""The projection service: what every door asks, answered one way.

Every door (the REST routes, ``projector export`` and ``render``, the MCP tools, the notebook
widget) asks :class:`ProjectionService` and nothing beside it: one object over the catalogue
and the job engine that holds each decision a request needs. The doors only turn its answers
and its errors into their protocol: ValueError (DataError included) is the request's or the
data's fault (a 422), :class:`UnknownName` an unknown run,
embedding or job (a 404), :class:`NotDone` a job still running (a 409); both are named here
for the doors.

A file per idea behind this one object:

- ``names.py``: runs, embeddings and jobs looked up once, with one sentence for an unknown one;
- ``projections.py``: a request checked (every bound at once), run to its end for an export;
- ``neighbors.py``: nearest neighbours of a row, a vector or several rows;
- ``done_projections.py``: what a done projection answers (the service's base): its
  coordinates, ``structure.py``'s clusters and quality, ``tile_questions.py``'s axes,
  level-of-detail orders, tiles and their early samples, points picked, selected, searched;
- ``comparisons.py``: two embeddings compared, or as a job;
- ``site_exports.py``: a site export as a queued job, its result a zip;
- ``default_view.py``: what a first visit asks, prepared once the data is loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from projector_core.annotations.serving import serve_annotations
from projector_core.comparison.compare import compare_embeddings
from projector_core.comparison.pairs import Pair, comparable_pairs
from projector_core.data.catalog import Catalog
from projector_core.data.model import Embedding, Run
from projector_core.distributed.dispatch import neighbor_index
from projector_core.errors import UnknownName, unknown_column
from projector_core.export.embedding_data import Progress
from projector_core.export.render import AUTO, projection_picture, save_picture
from projector_core.export.site import ExportOptions, ExportSummary, SitePage, chosen_embeddings, export_site
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job
from projector_core.jobs.priority import Priority
from projector_core.kernels.backend import Backend, get_backend
from projector_core.kernels.neighbor_index import Metric, NeighborIndex
from projector_core.kernels.search import search
from projector_core.projection.compute import ProjectionResult, check
from projector_core.projection.jobs import NotDone, ProjectionJobs
from projector_core.projection.methods import parameter_table
from projector_core.projection.params import ProjectionRequest
from projector_core.semantic.models import Models
from projector_core.semantic.search import MeaningAnswer, search_meaning
from projector_core.service import comparisons, default_view, site_exports
from projector_core.service.done_projections import DoneProjections
from projector_core.service.names import describe, find_embedding, find_job
from projector_core.service.neighbors import Found as Neighbors
from projector_core.service.neighbors import nearest
from projector_core.service.projections import request_problems, run_to_end
from projector_core.session import check_view
from projector_core.storage.result_cache import ResultCache
from projector_core.tiles.sharded_build import with_stored_tiles
from projector_core.tiles.store import LodStore

if TYPE_CHECKING:
    from PIL.Image import Image

    from projector_core.distributed.cluster import Cluster

__all__ = ["NotDone", "ProjectionService", "UnknownName"]


class ProjectionService(DoneProjections):
    """Every question a door asks, over one catalogue and one job engine (what a done
    projection answers: :class:`DoneProjections`)."""

    def __init__(self, catalog: Catalog, projection_jobs: ProjectionJobs, device: str = "cpu",
                 cluster: Cluster | None = None, lod: LodStore | None = None,
                 models: Mapping[tuple[str, str], str] | None = None,
                 annotations: str | Path | None = None) -> None:
        """``models``: (run, embedding or tag) -> the model that made it, as the command
        line declares (``semantic/declarations.py``); the data's own declarations are read
        with the data. ``annotations``: the annotation store (``--annotations PATH|off``;
        None: ``$PROJECTOR_ANNOTATIONS`` or the user's data directory), held here for every
        door (``annotations/serving.py``)."""
        super().__init__(projection_jobs.jobs, lod)
        self.catalog = catalog
        self.projection_jobs = projection_jobs
        self.device = device
        self.cluster = cluster
        self.models = Models(self.jobs, models, prepare=lambda e: self.neighbor_index(e, "cosine"))
        self.annotations = serve_annotations(catalog, annotations, self.embedding)

    @classmethod
    def standalone(cls, catalog: Catalog, device: str = "cpu", *, workers: int | None = None,
                   cluster: Cluster | None = None,
                   models: Mapping[tuple[str, str], str] | None = None,
                   annotations: str | Path | None = None) -> ProjectionService:
        """A service with its own job engine (``workers`` threads: an export's one runs its
        projections in turn) over the catalogue's result cache: the server's, the MCP
        server's without ``--server``, an export's."""
        jobs = JobManager() if workers is None else JobManager(workers=workers)
        return cls(catalog, ProjectionJobs(jobs, ResultCache(catalog.cache.directory)), device,
                   cluster, models=models, annotations=annotations)

    def stop(self, wait: bool = False) -> None:
        """Cancel every job (an open wait for one answers at once) and end the workers;
        ``wait``: until a running kernel has stopped at its next step (before Python exits)."""
        self.jobs.shutdown(wait=wait)

    # -- names -----------------------------------------------------------------------------------
    def runs(self) -> list[Run]:
        return self.catalog.runs()

    def logdir_name(self) -> str | None:
        """The LOGDIR's own folder name (None without one): the page shows it beside the run
        ".", TensorBoard's name for the LOGDIR itself."""
        return self.catalog.logdir.name if self.catalog.logdir is not None else None

    def run(self, name: str) -> Run:
        """The run, or :class:`UnknownName` listing the known ones."""
        return self.catalog.run(name)

    def embedding(self, run: str, name: str) -> Embedding:
        """The embedding (``UnknownName`` naming the known ones; ``StillLoading`` while read)."""
        return find_embedding(self.catalog, run, name)

    def listed_embedding(self, run: str, name: str) -> Embedding | None:
        """The embedding as ``GET /api/runs`` lists it (loading or not); None when gone."""
        try:
            return self.catalog.embedding(run, name)
        except KeyError:
            return None

    def shown_embedding(self, run: str | None, name: str | None) -> Embedding:
        """The embedding a view names, else the first of its run (or of the first run): what
        the page then shows."""
        found = self.run(run) if run else self.runs()[0]
        return self.embedding(found.name, name) if name else found.embeddings[0]

    def check_view(self, current: dict[str, Any], changes: dict[str, Any]) -> None:
        """ValueError for a shared view naming what does not exist (``session.py``)."""
        check_view(self.catalog, current, changes)

    def job(self, job_id: str) -> Job:
        return find_job(self.jobs, job_id)

    def list_jobs(self) -> list[dict[str, Any]]:
        """Every job still known, oldest first, with what it computes."""
        return [describe(job) for job in self.jobs.all()]

    def backend(self, device: str | None = None) -> Backend:
        return get_backend(device or self.device)

    def comparable_pairs(self) -> list[Pair]:
        """Pairs worth comparing: consecutive steps of each tag, one tensor name in two runs."""
        return comparable_pairs(self.runs())

    def search_metadata(self, embedding: Embedding, column: str, query: str,
                        regex: bool = False) -> list[int]:
        """Rows whose ``column`` matches (case-insensitive; a regular expression with
        ``regex``): stored codes searched by their dictionary, else the metadata's values
        (an embedding without metadata has one column, ``index``). UnknownColumn naming the
        columns; ValueError for a bad expression."""
        stored = embedding.code_column(column)
        if stored is not None:  # the dictionary searched, the codes read by chunks
            wanted = np.zeros(len(stored.dictionary), bool)
            wanted[search(stored.dictionary, query, regex)] = True
            return [int(i) for i in stored.rows_with(wanted)]
        metadata = embedding.metadata_or_index()  # DataError: a 422 naming the file
        if column not in metadata.names:
            raise unknown_column(column, metadata.names)
        return search(metadata.column(column), query, regex)

    def parameter_table(self, run: str | None = None, name: str | None = None) -> dict[str, Any]:
        """The parameter table; for an embedding (both names given) its data's bounds and
        defaults, its default requests and data limits (``projection/methods``)."""
        if (run is None) != (name is None):
            raise ValueError("give both run and embedding, or neither")
        shape = None
        if run is not None and name is not None:
            shape = self.embedding(run, name).shape
        return parameter_table(shape)

    # -- projections -------------------------------------------------------------------------------
    def request_problems(self, raw: object) -> list[dict[str, Any]] | None:
        """A raw request body that breaks a model's fixed bound *and* a data limit: every
        problem at once (pydantic's error shape), else None (``projections.py``)."""
        return request_problems(self.catalog, raw)

    def check(self, request: ProjectionRequest, embedding: Embedding) -> np.ndarray | None:
        """ValueError for a request the data cannot satisfy (before any job is queued); the
        reference layout ``init_from_job``/``align_to_job`` names, checked."""
        self.backend(request.device)
        check(request, embedding, self.cluster)
        return self.projection_jobs.reference(request, embedding)

    def start(self, request: ProjectionRequest, embedding: Embedding,
              reference: np.ndarray | None = None,
              priority: Priority = Priority.REQUESTED) -> Job:
        """The job answering a checked request: running, done, cached or new (``priority``:
        who waits for it, ``jobs/priority.py``)."""
        return self.projection_jobs.start(request, embedding, self.backend(request.device),
                                          self.cluster, reference, finish=with_stored_tiles,
                                          priority=priority)

    def project(self, request: ProjectionRequest) -> Job:
        """check + start, from the names in the request."""
        embedding = self.embedding(request.run, request.embedding)
        return self.start(request, embedding, self.check(request, embedding))

    def computed(self, embedding: Embedding, method: str, asked: dict[str, Any] | None = None,
                 progress: Progress | None = None) -> ProjectionResult:
        """``method``'s result for ``embedding``, waited for (an export's, a picture's): the
        view's default request unless ``asked`` gives dims and params. Computed here, never
        on a cluster (its coordinates are written or drawn whole)."""
        return run_to_end(self.projection_jobs, self.backend(), embedding, method, asked, progress)

    # -- neighbours ------------------------------------------------------------------------------
    def neighbors(self, embedding: Embedding, k: int, metric: Metric, *, index: int | None = None,
                  vector: np.ndarray | None = None,
                  rows: Sequence[int] | None = None) -> Neighbors:
        """The ``k`` nearest rows to row ``index``, to ``vector`` or to the centroid of
        ``rows`` (``neighbors.py``): (indices, distances), nearest first."""
        return nearest(self.neighbor_index, embedding, k, metric, index=index,
                                 vector=vector, rows=rows)

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

    # -- comparisons (comparisons.py) -------------------------------------------------------------
    def compare(self, a: Embedding, b: Embedding, k: int, metric: Metric,
                top: int = 100) -> dict[str, Any]:
        """How much each point's k-neighbourhood changed from ``a`` to ``b``."""
        return comparisons.comparison_answer(
            compare_embeddings(a, b, k, metric, self.backend(), top))

    def compare_job(self, a: Embedding, b: Embedding, k: int, metric: Metric, top: int) -> Job:
        """The comparison as a job, with progress (its result [N, 2], the summary in info)."""
        return comparisons.comparison_job(self.jobs, self.backend(), a, b, k, metric, top)

    # -- sharing without a server (projector_core/export/) ----------------------------------------
    def chosen_embeddings(self, run: str | None, name: str | None) -> list[Embedding]:
        """The readable embeddings ``run`` and ``name`` choose (all by default)."""
        return chosen_embeddings(self.catalog, ExportOptions(run=run, embedding=name))

    def export_site(self, out: Path, page: SitePage, options: ExportOptions,
                    progress: Progress) -> ExportSummary:
        """A static site of the chosen views in ``out``, its projections this service's (on
        its device, its cache's sprite pages)."""
        options = replace(options, device=self.device, cache_dir=self.catalog.cache.directory)
        return export_site(self.catalog, out, page, options, self.computed, progress)

    def export_site_job(self, page: SitePage, options: ExportOptions) -> Job:
        """The site export as a queued job on this engine's workers, its projections run on
        its worker, its result a zip (``site_exports.py``)."""
        options = replace(options, device=self.device, cache_dir=self.catalog.cache.directory)

        def project(embedding: Embedding, method: str, asked: dict[str, Any] | None,
                    progress: Progress) -> ProjectionResult:
            return run_to_end(self.projection_jobs, self.backend(), embedding, method, asked,
                              progress, run_here=self.jobs.run_here)

        return site_exports.site_export_job(
            self.jobs, lambda out, progress: export_site(self.catalog, out, page, options,
                                                         project, progress),
            {"run": options.run, "embedding": options.embedding},
            f"{options.embedding}-site.zip".replace("/", "_"))

    def site_zip(self, job: Job) -> site_exports.SiteZip:
        """A done export job's zip (``site_exports.site_zip``)."""
        return site_exports.site_zip(job)

    def render(self, embedding: Embedding, method: str, path: Path, width: int,
               color_by: str | None = AUTO, progress: Progress | None = None,
               **options: Any) -> Image:
        """``method``'s view of ``embedding`` drawn as a picture at ``path`` (``color_by``:
        a column, None for one colour, AUTO for the page's choice); ``options``: height,
        point_size, legend."""
        result = self.computed(embedding, method, progress=progress)
        if progress is not None:
            progress("drawing", None)
        image = projection_picture(embedding, result.coordinates, width, color_by, **options)
        save_picture(image, path)
        return image

    # -- the default view (default_view.py) --------------------------------------------------------
    def prepare_default_view(self) -> None:
        """What a first visit asks for, computed once the catalogue is loaded (blocks)."""
        default_view.prepare_default_view(
            self.catalog, lambda request, embedding, priority: self.start(
                request, embedding, self.check(request, embedding), priority),
            self.lod, self.projection_jobs.jobs.background)

    def start_preparing(self) -> threading.Thread:
        """:meth:`prepare_default_view` on a daemon thread (the server answers meanwhile)."""
        thread = threading.Thread(target=self.prepare_default_view,
                                  name="projector-default-view", daemon=True)
        thread.start()
        return thread
