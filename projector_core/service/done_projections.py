"""What a done projection answers, whichever door asks: its coordinates, its clusters and
quality (``structure.py``), its level-of-detail order and tiles, and the questions answered
from them: a point picked, a region's points, a column searched (``tile_questions.py``).

:class:`DoneProjections` holds what these answers need (the job engine, the tiles of done
projections, the structure answers kept); :class:`ProjectionService` is one, and adds
everything asked of the catalogue and of the job engine before a projection is done.
"""

from __future__ import annotations

import numpy as np

from projector_core.data.model import Embedding
from projector_core.jobs.engine import JobManager
from projector_core.jobs.job import Job, JobStatus
from projector_core.kernels.neighbor_index import Metric
from projector_core.projection.compute import ProjectionResult
from projector_core.projection.jobs import NotDone, projection_result
from projector_core.service import structure, tile_questions
from projector_core.service.tile_questions import Axes, OrderSlice, TileAnswer
from projector_core.storage.recent import Recent
from projector_core.tiles.queries import Found, Pick, Region, inside, pick, select
from projector_core.tiles.source import TileSource
from projector_core.tiles.store import LodStore

KEEP_ANSWERS = 8  # clusters/quality answers kept: a map asks again when the user comes back


class DoneProjections:
    """Every question about a done projection, over one job engine and its tiles."""

    def __init__(self, jobs: JobManager, lod: LodStore | None = None) -> None:
        self.jobs = jobs
        self.lod = lod if lod is not None else LodStore()  # the tiles of done projections
        self._answers: structure.Answers = Recent(KEEP_ANSWERS)

    def result(self, job: Job) -> ProjectionResult:
        """A done job's coordinates; :class:`NotDone` before."""
        if job.status is not JobStatus.DONE:
            raise NotDone(job)
        return projection_result(job)

    # -- structure of a finished projection ------------------------------------------------------
    def clusters(self, job: Job, min_cluster_size: int | None = None,
                 label_column: str | None = None,
                 space: structure.Space = "projection") -> structure.Answer:
        """HDBSCAN clusters (with sub-clusters) of the projection as the map shows it, named from
        ``label_column`` when given (``GET /api/jobs/ID/clusters``)."""
        return structure.clusters(self._answers, job, min_cluster_size, label_column, space)

    def quality(self, job: Job, k: int = 10, metric: Metric = "cosine") -> structure.Answer:
        """Per-point neighbourhood preservation, trustworthiness and continuity."""
        return structure.quality(self._answers, job, k, metric)

    def quality_job(self, job: Job, k: int = 10, metric: Metric = "cosine") -> Job:
        """:meth:`quality` as a job with progress (``GET /api/jobs/ID/quality?background=
        true``); once it is done, :meth:`quality` answers at once."""
        return structure.quality_job(self.jobs, self._answers, job, k, metric)

    # -- a done projection by level of detail (tile_questions.py) -----------------------------------
    def axes(self, job: Job, asked: Axes) -> list[int]:
        """The result columns ``asked`` names of the done ``job`` (default the first three)."""
        return tile_questions.axes_over(self.result(job).coordinates.shape[1], asked)

    def lod_order(self, job: Job, asked: Axes) -> np.ndarray:
        """The done job's level-of-detail order (int32 permutation) over ``asked``;
        ValueError for a comparison (it has no layout)."""
        return tile_questions.order(self.lod, job, asked)

    def order_slice(self, job: Job, asked: Axes, offset: int, count: int | None,
                    early: bool) -> OrderSlice:
        return tile_questions.order_slice(self.lod, job, asked, offset, count, early)

    def tile_source(self, job: Job, axes: Axes) -> TileSource:
        """The job's tiles over ``axes`` (1 to 3 coordinate columns, the quadtree over the
        first two): :class:`NotDone` before the job is done, ValueError for a comparison or
        axes the result lacks."""
        return tile_questions.tile_source(self.lod, job, axes)

    def answers_early(self, job: Job, early: bool) -> bool:
        """Whether an ``early`` tile of ``job`` comes at once from its latest frame (a
        running t-SNE or UMAP); the others wait for the job."""
        return tile_questions.answers_early(job, early)

    def tile(self, job: Job, z: int, x: int, y: int, axes: Axes, column: str | None,
             early: bool) -> TileAnswer:
        """Tile (z, x, y) of the job over ``axes``, with ``column``'s codes; ``early``: at
        once (a running layout's points placed so far, or a sample of the cell)."""
        source: TileSource = (tile_questions.placed_so_far(self.lod, job, axes)
                              if self.answers_early(job, early) else self.tile_source(job, axes))
        return tile_questions.tile_answer(source, z, x, y, column, early)

    def edited(self, job: Job, column: str | None) -> bool:
        """Whether ``column``'s codes change while the job stays (an annotation column): its
        tiles are then not immutable."""
        return column is not None and isinstance(job.source, Embedding) and \
            column in job.source.added_columns()

    def pick(self, job: Job, axes: Axes, x: float, y: float, radius: float) -> Pick:
        """The point nearest (x, y) within ``radius`` over all points (hover, click)."""
        return pick(self.tile_source(job, axes), x, y, radius)

    def select(self, job: Job, axes: Axes, region: Region, limit: int,
               column: str | None = None) -> Found:
        """The points inside a box or polygon: count, first rows, counts of ``column``."""
        return select(self.tile_source(job, axes), region, limit, column)

    def rows_inside(self, job: Job, axes: Axes, region: Region,
                    embedding: Embedding) -> np.ndarray:
        """Every row of ``embedding`` inside ``region`` of ``job``'s map (a label applied to
        a region of a view shown from tiles): ValueError when the job maps other points."""
        tile_questions.check_maps(job, embedding)
        return inside(self.tile_source(job, axes), region)

    def search_points(self, job: Job, axes: Axes, column: str, query: str, regex: bool,
                      limit: int) -> Found:
        """Points of the job whose ``column`` matches ``query``: matching codes, count, first
        rows (the embedding's column answers; the job and axes are checked as tiles')."""
        self.tile_source(job, axes)
        return tile_questions.search_points(job, column, query, regex, limit)
