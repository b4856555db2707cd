"""Level-of-detail answers of done projections: orders, bounds and tiles, each computed once.

The routes (``server/routes/lod.py``, ``tiles.py``) read them; the default view's preparation
(``default_view.py``) fills them as soon as a tensor is loaded, so a page's first requests find
them ready. Kept per (job, axes) for the few most recent projections: at 10M points an order is
40 MB and a tile set 40 MB of row ids.
"""

from __future__ import annotations

import numpy as np

from projector_core.jobs.job import Job
from projector_core.jobs.priority import yield_point
from projector_core.projection.jobs import projection_result
from projector_core.storage.recent import Recent
from projector_core.tiles.build import TILE_BUDGET, TileSet, build_tiles
from projector_core.tiles.order import lod_order

CACHED = 4  # answers of each kind kept
Key = tuple[str, tuple[int, ...]]  # (job id, axes)


class LodStore:
    """Orders, bounds and tile sets of done projection jobs over chosen axes."""

    def __init__(self, budget: int = TILE_BUDGET) -> None:
        self.budget = budget  # points a tile holds at most
        self._orders: Recent[Key, np.ndarray] = Recent(CACHED)
        self._bounds: Recent[Key, dict[str, list[float]]] = Recent(CACHED)
        self._tiles: Recent[Key, TileSet] = Recent(CACHED)

    def peek_order(self, job: Job, axes: list[int]) -> np.ndarray | None:
        return self._orders.peek((job.id, tuple(axes)))

    def order(self, job: Job, axes: list[int]) -> np.ndarray:
        """The LOD order (int32 permutation) of the job's coordinates over ``axes``."""
        coordinates = projection_result(job).coordinates
        return self._orders.get_or_compute((job.id, tuple(axes)),
                                           lambda: lod_order(coordinates[:, axes]))

    def bounds(self, job: Job, axes: list[int]) -> dict[str, list[float]]:
        """Per-axis min and max over the points finite on every chosen axis."""
        return self._bounds.get_or_compute(
            (job.id, tuple(axes)), lambda: finite_bounds(projection_result(job).coordinates, axes))

    def peek_tiles(self, job: Job, axes: list[int]) -> TileSet | None:
        return self._tiles.peek((job.id, tuple(axes)))

    def tiles(self, job: Job, axes: list[int]) -> TileSet:
        """The tiles of the job's coordinates over ``axes`` (the quadtree over the first two)."""
        coordinates = projection_result(job).coordinates
        return self._tiles.get_or_compute((job.id, tuple(axes)),
                                          lambda: build_tiles(coordinates[:, axes], self.order(job, axes),
                                                              self.budget))

    def prepare(self, job: Job, axes: list[int], tiles: bool = True) -> None:
        """What a first visit over ``axes`` asks for, computed now, in the order it asks:
        the bounds (the early tiles a page draws while the rest is still to come), then the
        order (a page showing the whole set draws in it) and, with ``tiles``, the tiles
        (about 3 s of one core at 10M points, done before a page that opens after the
        tensor loaded asks for them). Background work gives way between the steps."""
        self.bounds(job, axes)
        yield_point()
        if tiles:
            self.tiles(job, axes)
        else:
            self.order(job, axes)


def finite_bounds(coordinates: np.ndarray, axes: list[int]) -> dict[str, list[float]]:
    """Per-axis min and max over the rows finite on every chosen axis (0 when none is)."""
    columns = [coordinates[:, a] for a in axes]  # views
    finite = np.logical_and.reduce([np.isfinite(c) for c in columns])
    if not finite.any():
        return {"lo": [0.0] * len(axes), "hi": [0.0] * len(axes)}
    whole = finite.all()  # then no copy of a column is made
    return {"lo": [float((c if whole else c[finite]).min()) for c in columns],
            "hi": [float((c if whole else c[finite]).max()) for c in columns]}
