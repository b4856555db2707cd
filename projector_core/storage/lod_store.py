"""Level-of-detail answers of done projections: orders, bounds and tiles, each computed once.

The routes (``server/routes/lod.py``, ``tiles.py``) read them; the default view's preparation
(``default_view.py``) fills them as soon as a tensor is loaded, so a page's first requests find
them ready. Kept per (job, axes) for the few most recent projections: at 10M points an order is
40 MB and a tile set 40 MB of row ids.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from projector_core.jobs.engine import Job
from projector_core.kernels.lod import lod_order
from projector_core.kernels.lod_tiles import TILE_BUDGET, TileSet, build_tiles
from projector_core.projection.jobs import projection_result

CACHED = 4  # answers of each kind kept


class _Recent:
    """A few recent answers, computed once even when requests race (one lock per key)."""

    def __init__(self) -> None:
        self.items: OrderedDict[tuple, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.computing: dict[tuple, threading.Lock] = {}

    def peek(self, key: tuple) -> Any:
        """The answer if it is there now, else None (never waits for one being computed)."""
        with self.lock:
            return self.items.get(key)

    def get(self, key: tuple, compute: Callable[[], Any]) -> Any:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            guard = self.computing.setdefault(key, threading.Lock())
        with guard:  # a second asker of the same key waits; other keys go on
            with self.lock:
                if key in self.items:
                    return self.items[key]
            value = compute()
            with self.lock:
                self.items[key] = value
                self.computing.pop(key, None)
                while len(self.items) > CACHED:
                    self.items.popitem(last=False)
            return value


class LodStore:
    """Orders, bounds and tile sets of done projection jobs over chosen axes."""

    def __init__(self, budget: int = TILE_BUDGET) -> None:
        self.budget = budget  # points a tile holds at most
        self._orders = _Recent()
        self._bounds = _Recent()
        self._tiles = _Recent()

    def peek_order(self, job: Job, axes: list[int]) -> np.ndarray | None:
        return self._orders.peek((job.id, tuple(axes)))

    def order(self, job: Job, axes: list[int]) -> np.ndarray:
        """The LOD order (int32 permutation) of the job's coordinates over ``axes``."""
        coordinates = projection_result(job).coordinates
        return self._orders.get((job.id, tuple(axes)), lambda: lod_order(coordinates[:, axes]))

    def bounds(self, job: Job, axes: list[int]) -> dict[str, list[float]]:
        """Per-axis min and max over the points finite on every chosen axis."""
        def compute() -> dict[str, list[float]]:
            columns = [projection_result(job).coordinates[:, a] for a in axes]  # views
            finite = np.logical_and.reduce([np.isfinite(c) for c in columns])
            if not finite.any():
                return {"lo": [0.0] * len(axes), "hi": [0.0] * len(axes)}
            whole = finite.all()  # then no copy of a column is made
            return {"lo": [float((c if whole else c[finite]).min()) for c in columns],
                    "hi": [float((c if whole else c[finite]).max()) for c in columns]}
        return self._bounds.get((job.id, tuple(axes)), compute)

    def peek_tiles(self, job: Job, axes: list[int]) -> TileSet | None:
        return self._tiles.peek((job.id, tuple(axes)))

    def tiles(self, job: Job, axes: list[int]) -> TileSet:
        """The tiles of the job's coordinates over ``axes`` (the quadtree over the first two)."""
        coordinates = projection_result(job).coordinates
        return self._tiles.get((job.id, tuple(axes)),
                               lambda: build_tiles(coordinates[:, axes], self.order(job, axes),
                                                   self.budget))

    def prepare(self, job: Job, axes: list[int]) -> None:
        """What a first visit over ``axes`` asks for, computed now: the bounds (early tiles)
        and the order (the whole set's draw order). The tiles themselves are built when
        first asked for: at 10M points their build held the interpreter for seconds while
        the page loaded, and a first picture's early tiles do not need them."""
        self.bounds(job, axes)
        self.order(job, axes)
